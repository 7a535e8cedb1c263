#pragma once

// Capacity planning: for a model and a workload (requests per second, prompt and output lengths,
// latency targets), enumerate GPU type x TP x PP x EP x attention DP x weight format x KV format
// x speculation x batch, drop what does not fit or misses a target, and rank the rest by cost per
// million output tokens.
// docs/llm.md derives the throughput model.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/llm/deployment.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/speculative.hpp"

namespace roofline {

struct Workload {
  double requests_per_s = 0;
  std::int64_t prompt = 0;  // tokens per request
  std::int64_t output = 0;  // tokens generated per request
  double tpot_s = 0;        // target time per output token
  double ttft_s = 0;        // target time to first token
};

// Time options that format no op's shape (the planner times thousands of steps).
[[nodiscard]] inline TimeOptions quiet_time() {
  TimeOptions t;
  t.describe = false;
  return t;
}

struct PlanSpace {
  std::vector<GpuSpec> gpus;
  std::map<std::string, double> usd_per_gpu_hour;  // by GPU id; every GPU needs one
  std::vector<DType> weights{DType::bf16, DType::fp8_e4m3, DType::int4_g128, DType::nvfp4};
  std::vector<DType> kv{DType::bf16, DType::fp8_e4m3};
  std::vector<int> tp{1, 2, 4, 8};
  std::vector<int> pp{1, 2, 4};
  // Expert-parallel degrees; empty: expert_parallel_degrees (every divisor of the routed experts
  // that divides TP on a MoE model, 1 for a dense one). A degree that does not divide TP or the
  // experts is a rejected candidate (sharding), as any layout shard() refuses.
  std::vector<int> ep;
  // Also try data-parallel attention where it applies (a MoE model, EP = TP > 1).
  bool attention_dp = true;
  // Speculative decoding tried beside none, each a candidate (MTP or a draft model, as in `llm
  // --speculate`); the draft token counts K differ.
  std::vector<Speculation> speculation;
  std::int64_t max_batch = 1024;    // concurrent requests per replica
  DeploymentConfig base;            // reserve, workspace, links (tp/pp/formats are enumerated)
  TimeOptions time = quiet_time();  // with a calibration, candidates are timed and ranked by calibrated times
  // By GPU id, the calibration (not owned) a GPU's candidates are timed with and whose measured
  // collectives they charge, in place of time.calibration and base.collectives: --calibration
  // auto resolves one per GPU.
  std::map<std::string, const Calibration*> calibration_by_gpu;
  // What a search keeps, whatever its size (memory bounded by what is reported): the cheapest
  // feasible candidates of each speculation setting (so that the simulation can compare a candidate
  // with and without speculation) and the first rejected ones; counts by reason cover every candidate.
  std::size_t keep_ranked = 1024;
  std::size_t keep_rejected = 1024;
};

// Why a candidate was dropped.
enum class Rejection : std::uint8_t { none, sharding, format, memory, ttft, tpot };
[[nodiscard]] std::string_view name_of(Rejection reason);

// The parallel layout of one replica: TP x PP GPUs, the routed experts over EP of them, attention
// replicated per rank or not.
struct ReplicaLayout {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  bool attention_dp = false;
  [[nodiscard]] int gpus() const { return tp * pp; }
};

struct PlanCandidate {
  std::string gpu;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  bool attention_dp = false;  // attention, dense layers and the head whole on every GPU, over its own requests
  DType weights = DType::bf16;
  DType kv = DType::bf16;
  int draft_tokens = 0;  // K of the space's Speculation tried (speculation_of); 0: no speculation
  Rejection rejection = Rejection::none;
  std::string reason;  // empty when feasible

  std::int64_t batch = 0;      // chosen concurrent requests per replica (0 when rejected before)
  std::int64_t max_batch = 0;  // requests that fit in memory at prompt + output tokens
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_request_per_gpu = 0;
  double ttft_s = 0;  // prefill of one prompt
  double step_s = 0;  // one decode step (or verify cycle: verify + K drafts) at the batch, at the longest context
  double tokens_per_step = 1;  // per sequence: 1, or the expected tokens per verify step
  double tpot_s = 0;           // step_s / tokens_per_step plus the prefills interleaved with it
  // The same three at the roofline bound (equal to the above without a calibration).
  double ttft_roofline_s = 0;
  double step_roofline_s = 0;
  double tpot_roofline_s = 0;
  double requests_per_s_per_replica = 0;
  std::int64_t replicas = 0;
  std::int64_t gpus_total = 0;
  double usd_per_hour = 0;
  double usd_per_million_output_tokens = 0;
  double utilization = 0;  // load / capacity of the replicas bought
  std::string bottleneck;  // of the decode step
};

// The candidate of `layout` on `gpu` in these formats, not yet evaluated (no speculation).
[[nodiscard]] PlanCandidate candidate_of(const GpuSpec& gpu, const ReplicaLayout& layout, DType weights, DType kv);

// The rejected candidates of a plan by reason: how many, and the first one as an example
// ("h100 TP 3 PP 1 bf16/bf16: --tp 3 does not divide ...").
struct RejectionCount {
  std::string reason;  // name_of(Rejection)
  std::int64_t count = 0;
  std::string example;
};

struct PlanResult {
  // Feasible, cheapest first: the space's keep_ranked cheapest of each speculation setting.
  std::vector<PlanCandidate> ranked;
  std::vector<PlanCandidate> rejected;  // in enumeration order: the first keep_rejected
  std::int64_t configurations = 0;      // GPU x TP x PP x EP x attention DP x weights x KV x speculation
  std::int64_t feasible = 0;            // all of them, kept or not
  std::int64_t rejected_total = 0;
  std::int64_t decode_evaluations = 0;     // decode steps modelled (one per batch tried)
  std::vector<RejectionCount> rejections;  // every rejected candidate by reason (RejectionTally)
};

// The expert-parallel degrees tried at a TP degree: every divisor of the routed experts that
// divides TP on a MoE model, 1 for a dense one.
[[nodiscard]] std::vector<int> expert_parallel_degrees(const ModelSpec& model, int tp);
// The expert-parallel degrees a search over `space` tries at a TP degree: space.ep where it lists
// them, else expert_parallel_degrees.
[[nodiscard]] std::vector<int> expert_parallel_degrees(const ModelSpec& model, const PlanSpace& space, int tp);
// Whether a search over `space` also tries data-parallel attention at (tp, ep): where the space
// allows it, on a MoE model with EP = TP > 1.
[[nodiscard]] bool attention_dp_applies(const ModelSpec& model, const PlanSpace& space, int tp, int ep);

// Calls `visit` with every layout a search over `space` tries, in the order every search ranks ties
// by: each TP, each PP, each of expert_parallel_degrees, without and (where attention_dp_applies)
// with attention DP. plan --rps, the Pareto sweep and its prefill pools all walk this one space.
void for_each_layout(const ModelSpec& model, const PlanSpace& space,
                     const std::function<void(const ReplicaLayout&)>& visit);

// The space's speculation of `draft_tokens` drafts: nullptr for 0; std::logic_error where the space
// has none of that K.
[[nodiscard]] const Speculation* speculation_of(const PlanSpace& space, int draft_tokens);

// The deployment a candidate describes, and how its ops are timed: the space's base with the
// candidate's TP, PP, EP, attention DP and formats (activations and embeddings in the GPU's default activation
// format); with a calibration for its GPU in calibration_by_gpu, that calibration's tables and
// measured collectives.
struct CandidateDeployment {
  DeploymentConfig config;
  TimeOptions time;
};
[[nodiscard]] CandidateDeployment candidate_deployment(const PlanSpace& space, const GpuSpec& gpu,
                                                       const PlanCandidate& candidate);

// Whether the GPU can multiply in this weight format: 16-bit formats need their tensor rate;
// compute formats (fp8, int8, fp4 families) need theirs (there is no production kernel that
// widens them on older GPUs); weight-only int4 formats are widened to 16 bits anywhere.
[[nodiscard]] bool format_supported(const GpuSpec& gpu, DType weights, DType activations);

// Throws InputError for a workload that is not positive or a GPU without a price.
[[nodiscard]] PlanResult plan_deployment(const ModelSpec& model, const Workload& workload, const PlanSpace& space);

// Counts rejected candidates by reason as they come, keeping the first of each as its example.
class RejectionTally {
 public:
  void add(const PlanCandidate& rejected);
  [[nodiscard]] std::vector<RejectionCount> counts() const;  // in the order of the reasons' names

 private:
  std::map<std::string, RejectionCount, std::less<>> by_reason_;
};

// The tally of result.rejected (the candidates kept).
[[nodiscard]] std::vector<RejectionCount> rejection_summary(const PlanResult& result);

}  // namespace roofline
