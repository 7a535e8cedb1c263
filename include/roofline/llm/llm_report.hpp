#pragma once

// What `roofline llm` reports about one deployment, as figures: memory per GPU, the batch that
// fits, a decode step and a prefill op by op, TPOT, TTFT, throughput, the TP all-reduce over
// each link, and what every other weight/KV format would give at the same deployment (the
// levers). The command renders it; docs/llm.md derives each quantity.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/llm/deployment.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/model/comm.hpp"

namespace roofline {

struct LlmQuery {
  std::int64_t context = 0;  // tokens per request in the KV cache
  std::int64_t prompt = 0;   // tokens of the prefill timed for the first token
  std::int64_t batch = 0;    // concurrent requests; 0: as many as fit
  bool levers = true;        // also time the other weight/KV formats
};

// One weight x KV format at the same deployment and batch (the batch capped by what fits).
struct FormatLever {
  DType weights = DType::bf16;
  DType kv = DType::bf16;
  double weight_bytes_per_gpu = 0;  // the heaviest stage
  std::int64_t max_requests = 0;
  // Unset when the weights or a single request do not fit (the bottleneck says which).
  std::optional<std::int64_t> batch;
  std::optional<double> tpot_s;
  std::optional<double> tokens_per_s_per_gpu;
  std::string bottleneck;  // of the decode step, with the math format where it is not the weights'
};

struct LlmReport {
  Sharding sharding;
  MemoryPlan memory;
  double kv_bytes_per_token_gpu = 0;  // the heaviest stage's share: all layers of the model on one GPU of TP
  std::int64_t max_requests = 0;
  std::int64_t batch = 0;
  StepTime decode;          // one step at the batch, every request at the context
  StepTime prefill;         // one prompt
  double tokens_per_s = 0;  // the deployment (replicas x batch / TPOT)
  double tokens_per_s_roofline = 0;
  LinkSpec scale_up;  // the link the TP all-reduce is compared on, with the config's scale_out
  AllReduceCompare allreduce_decode;
  AllReduceCompare allreduce_prefill;
  std::vector<FormatLever> levers;  // empty unless asked for
};

// Throws InputError (naming the flag to change) when the weights do not fit, not one request
// fits, or the batch asked for is more than fit.
[[nodiscard]] LlmReport llm_report(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                   const DeploymentConfig& config, const LlmQuery& query, const TimeOptions& time);

// The ops of a step, and those a calibration table set the time of.
[[nodiscard]] std::int64_t op_count(const StepTime& step);
[[nodiscard]] std::int64_t calibrated_op_count(const StepTime& step);

}  // namespace roofline
