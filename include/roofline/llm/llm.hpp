#pragma once

// One LLM deployment on GPUs, the time side: one decode step and one prefill, op by op: the ops of
// the step's description (decoder_step.hpp) timed on the GPU's roofs, by a calibration's tables
// where given, and the collectives (comm.hpp); and the TP all-reduce over the scale-up link
// against the scale-out network. docs/llm.md derives it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/model/ops.hpp"

namespace roofline {

struct Calibration;

// How a calibration (roofline/calibration.hpp) set an op's expected time: through a table, or
// not (and why: another GPU, no table for the format, an operation no benchmark measures).
struct OpCalibration {
  bool applied = false;
  std::string table;      // the best-implementation table looked up
  double efficiency = 0;  // roofline time / expected time
  bool clamped = false;   // outside the measured range of the table
  std::string detail;     // where the lookup lay (applied) or why the roofline was kept
};

struct StepOp {
  std::string_view name;  // qkv_proj, attention, ffn_down, tp_allreduce, ...
  std::string_view op;    // the model used: gemv, gemm, attention, latent_attention, norm, ...
  std::string shape;      // its shape, for people (empty unless asked for)
  OpCost cost;            // one GPU (HBM traffic; zero for transfers between GPUs)
  double link_bytes = 0;  // bytes one GPU sends over a link (collectives, pipeline transfers)
  OpRole role = OpRole::weights;
  std::string_view bound;                    // memory, compute or link
  double time_s = 0;                         // expected: calibrated where a table covers the op, else roofline_s
  double roofline_s = 0;                     // the roofline bound (scaled by TimeOptions::efficiency)
  std::optional<OpCalibration> calibration;  // set when TimeOptions::calibration is
};

struct LayerGroup {
  std::string_view name;   // layer, dense layer, moe layer, embedding + head, pipeline
  std::int64_t count = 0;  // instances per step on the path through all stages
  std::vector<StepOp> ops;
  [[nodiscard]] double time_s() const;      // one instance
  [[nodiscard]] double roofline_s() const;  // one instance, roofline times
};

struct StepTime {
  std::vector<LayerGroup> groups;
  double time_s = 0;      // sum over groups of count x time: one step through every stage
  double roofline_s = 0;  // the same sum of the ops' roofline times (equal to time_s without a calibration)
  // Seconds per step by what they are spent on; compute-bound ops count as compute.
  double weights_s = 0;
  double kv_cache_s = 0;
  double activations_s = 0;
  double compute_s = 0;
  double tp_comm_s = 0;
  double pp_comm_s = 0;
  double ep_comm_s = 0;                               // the MoE's all-to-all dispatch and combine (expert_parallel.hpp)
  double flops = 0;                                   // one GPU per stage, summed over the stages
  double bytes = 0;                                   // HBM traffic, same
  [[nodiscard]] std::string_view bottleneck() const;  // the largest of the parts above
  [[nodiscard]] double bottleneck_share() const;
};

struct TimeOptions {
  Efficiency efficiency;  // 1 = the roofline bound at datasheet peaks
  bool describe = true;   // format each op's shape (the planner skips it)
  // Measured efficiency tables: each op's expected time becomes its roofline time on the GPU's
  // roofs over the efficiency its best-implementation table gives (calibrated_time, the lookup
  // `op --calibration` makes); ops no table covers keep the roofline. Not owned; may be null.
  const Calibration* calibration = nullptr;
  // Which kernel family's table costs an op: a table looked up in place of another (names from
  // calibration_tables.hpp), the op's own cost and roofs kept, e.g. an FP8 GEMM at the efficiency
  // the bf16 GEMM table measured. Empty: every op in its own table.
  std::map<std::string, std::string, std::less<>> table_in_place_of;
};

// One decode step: `batch` requests, each with `context` tokens in its cache (the new token
// included), produce one token each. Attention reads the cache of the whole (windowed) context.
[[nodiscard]] StepTime decode_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                   const DeploymentConfig& config, std::int64_t batch, std::int64_t context,
                                   const TimeOptions& options = {});
// A speculative verify step (speculative.hpp): `batch` sequences of `queries` tokens each (the
// last accepted token and the drafts), each sequence's queries over its cache and the drafts.
[[nodiscard]] StepTime verify_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                   const DeploymentConfig& config, std::int64_t batch, std::int64_t queries,
                                   std::int64_t context, const TimeOptions& options = {});
// The ops of a described step (or any list of layers of described ops) timed as decode_step times them.
[[nodiscard]] StepTime time_layers(const std::vector<DecoderLayer>& layers, const GpuSpec& gpu,
                                   const Sharding& sharding, const DeploymentConfig& config,
                                   const TimeOptions& options = {});
// Prefill of one request of `prompt` tokens (causal attention), up to its first output token.
[[nodiscard]] StepTime prefill(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                               const DeploymentConfig& config, std::int64_t prompt, const TimeOptions& options = {});

// The link a group of `ranks` GPUs talks over: the scale-up link within the scale-up domain,
// the scale-out network beyond it.
[[nodiscard]] LinkSpec group_link(const GpuSpec& gpu, const DeploymentConfig& config, int ranks);

// The TP all-reduce after attention and after the feed-forward layer (2 per layer): message =
// tokens x hidden x activation bytes, over the scale-up link and over the scale-out network.
struct AllReduceCompare {
  double message_bytes = 0;
  double scale_up_s = 0;  // one all-reduce
  double scale_out_s = 0;
  int per_layer = 2;
};
[[nodiscard]] AllReduceCompare tp_allreduce(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                            const DeploymentConfig& config, std::int64_t tokens);

}  // namespace roofline
