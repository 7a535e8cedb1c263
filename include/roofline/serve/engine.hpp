#pragma once

// A serving engine simulated step by step (docs/serve.md): requests arrive, wait, are admitted
// when KV blocks are free, are prefilled in chunks that share steps with other requests' decode
// tokens, are preempted (by recompute) when the blocks run out, and finish. The scheduler follows
// vLLM's V1 scheduler (vllm/v1/core/sched/scheduler.py): running requests first, in order, each
// its remaining tokens within the step's token budget, the most recently admitted preempted when
// a running request cannot get its blocks; then waiting requests, first come first served, while
// the batch, the budget and the free blocks allow, and only in a step that preempted none.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "roofline/serve/step_cost.hpp"
#include "roofline/serve/workload.hpp"

namespace roofline {

// When a request may be admitted, in TensorRT-LLM's names (CapacitySchedulerPolicy):
// max_utilization, when the blocks of its first chunk are free (vLLM's rule; running requests
// that later find no block preempt others, by recompute); guaranteed_no_evict, when the blocks of
// its whole life (prompt + output - 1 tokens) are free, reserved at admission: never a preemption.
enum class CapacityPolicy : std::uint8_t { max_utilization, guaranteed_no_evict };

// The engine's settings, named after vLLM's and TensorRT-LLM's (docs/serve.md gives the sources
// of the defaults).
struct EngineConfig {
  std::int64_t max_batch = 256;        // sequences in one step (vLLM max_num_seqs)
  std::int64_t max_num_tokens = 8192;  // token budget of one step (max_num_batched_tokens, TRT-LLM max_num_tokens)
  bool chunked_prefill = true;
  std::int64_t block_size = 16;  // tokens per KV block
  std::int64_t kv_blocks = 0;    // blocks in the cache (kv_cache_blocks)
  double step_overhead_s = 0;    // added to every step: scheduler, sampling, launch gaps
  CapacityPolicy policy = CapacityPolicy::max_utilization;
  // Speculative decoding: every decode step of a request is a verify step of 1 + draft_tokens
  // tokens (the coster's), which yields accepted_per_verify tokens in expectation
  // (expected_tokens_per_verify); each request accumulates them and emits the whole ones, so over
  // its life it emits that many per step, deterministically. Its KV grows by the tokens accepted;
  // the drafts need cache slots during the step. 0 drafts: plain decode.
  int draft_tokens = 0;
  double accepted_per_verify = 1;
  // Closed loop: this many requests in flight; each finished one is replaced at once by the next
  // (the workload's arrival times are then unused). Unset: the requests' own arrival times.
  std::optional<std::int64_t> concurrency;
};

// The KV cache of a deployment: blocks that fit in `fraction` of what each GPU has left after
// weights, reserve and workspace (plan_memory), the stage with the fewest setting the number.
// Under attention DP these are one rank's blocks, for its own requests (the group holds
// attention_dp times as many). With speculation the drafter's weights come off every stage's
// free memory and its cache per token joins the model's (speculative_decode's figures).
struct KvCache {
  std::int64_t blocks = 0;
  double bytes_per_block = 0;     // one GPU of the bounding stage
  double free_bytes = 0;          // that GPU: capacity - weights - reserve - workspace (- drafter weights)
  double draft_weight_bytes = 0;  // per GPU
};
[[nodiscard]] KvCache kv_cache(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config,
                               std::int64_t block_size, double fraction,
                               const std::optional<Speculation>& speculation = std::nullopt);

// What happened to one request (times in seconds from the start).
struct RequestRecord {
  RequestSpec spec;
  double scheduled_s = 0;    // the start of the step that first scheduled it
  double first_token_s = 0;  // the end of the step that produced its first token
  double finish_s = 0;
  std::int64_t preemptions = 0;
  [[nodiscard]] double queue_s() const { return scheduled_s - spec.arrival_s; }
  [[nodiscard]] double ttft_s() const { return first_token_s - spec.arrival_s; }
  [[nodiscard]] double e2e_s() const { return finish_s - spec.arrival_s; }
  // (E2E - TTFT) / (output - 1), vLLM's benchmark_serving definition; none for one output token.
  [[nodiscard]] std::optional<double> tpot_s() const;
};

// A sample of values, kept as (value, count) runs: the gaps between tokens of one step are one
// value for every request in it. Percentiles interpolate linearly between order statistics, as
// numpy.percentile does (what benchmark_serving reports). Memory is bounded whatever the run's
// length: past exact_runs runs, every value is rounded to the nearest of 1024 steps per octave
// (a relative error of at most 2^(1/2048) - 1 = 0.034%) and equal values merge, which a
// latency's range holds to a few tens of thousands of runs; the count, mean and maximum stay exact.
class Distribution {
 public:
  static constexpr std::size_t exact_runs = std::size_t{1} << 18;
  static constexpr double steps_per_octave = 1024;

  void add(double value, std::int64_t count = 1);
  // Every value of `other` added (as its runs: rounded where either is).
  void merge(const Distribution& other);
  [[nodiscard]] std::int64_t count() const { return count_; }
  [[nodiscard]] double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }
  [[nodiscard]] double max() const { return max_; }
  // p in [0, 100]; 0 for an empty sample.
  [[nodiscard]] double percentile(double p);
  // Whether the values are rounded (more than exact_runs runs were added).
  [[nodiscard]] bool rounded() const { return rounded_; }
  [[nodiscard]] std::size_t runs() const { return runs_.size(); }

 private:
  void sort_and_merge();
  std::vector<std::pair<double, std::int64_t>> runs_;
  bool sorted_ = true;
  bool rounded_ = false;
  std::size_t merge_at_ = exact_runs;  // the run count at which the runs are next merged
  std::int64_t count_ = 0;
  double sum_ = 0;
  double max_ = 0;
};

// One point of the timeline: the steps between the previous point and this one.
struct TimelinePoint {
  double time_s = 0;  // end of the last step of the point
  double span_s = 0;
  std::int64_t steps = 0;
  double running = 0;  // mean over the span (time-weighted): requests in the batch
  double waiting = 0;  // requests arrived and not running
  double kv_blocks = 0;
  std::int64_t output_tokens = 0;
  std::int64_t prefill_tokens = 0;
};

struct EngineStats {
  std::int64_t steps = 0;
  std::int64_t batch_max = 0;  // sequences in one step
  double batch_mean = 0;
  std::int64_t tokens_max = 0;  // tokens in one step
  double tokens_mean = 0;
  std::int64_t prefill_tokens = 0;  // all steps (recomputed tokens included)
  std::int64_t decode_tokens = 0;
  std::int64_t kv_blocks_peak = 0;
  double kv_blocks_mean = 0;  // over steps
  std::int64_t preemptions = 0;
  double busy_s = 0;  // time in steps
  // Attention DP in lockstep: the group's steps in which this engine scheduled nothing and ran a
  // dummy pass (not in `steps` or `busy_s`).
  std::int64_t dummy_steps = 0;
};

// What the engine reports of a run, whatever its length: memory bounded by the requests in
// flight (in_flight_peak) and the steps (the inter-token gaps, one (value, count) run per step
// and request group; the timeline is folded).
struct EngineRun {
  Distribution itl_s;  // every gap between two tokens of a request
  EngineStats engine;
  std::vector<TimelinePoint> timeline;  // at most about 2 x timeline_points points
  double start_s = 0;                   // the first arrival
  double end_s = 0;                     // the last finish
  std::int64_t finished = 0;            // requests
  std::int64_t in_flight_peak = 0;      // requests arrived and not finished, at most at once
};

// A run and the record of every request, in the workload's order (O(requests): for tests, the
// per-request CSV and the overhead fit).
struct Simulation : EngineRun {
  std::vector<RequestRecord> requests;
};

inline constexpr std::size_t timeline_points = 256;

// Called once per request as it finishes (in the order they finish), with its index in the
// workload's order.
using FinishedRequest = std::function<void(std::size_t index, const RequestRecord& record)>;

// Runs the requests of `source` through the engine, taking each when the clock reaches its
// arrival (closed loop: when a slot frees), and handing each to `on_finish` when it is done.
// InputError when the requests arrive out of order (without concurrency), when a request cannot
// fit the KV cache alone or the model's context, or, without chunked prefill, the token budget;
// and when the source has none.
[[nodiscard]] EngineRun simulate(RequestSource& source, const EngineConfig& engine, StepCoster& coster,
                                 const ModelSpec& model, const FinishedRequest& on_finish);

// One attention-DP rank of a group: its requests (it may be dealt none), its settings, and where
// its finished requests go (their index in its own stream).
struct LockstepRank {
  RequestSource* source = nullptr;
  EngineConfig engine;
  FinishedRequest on_finish;
};

struct LockstepRun {
  std::vector<EngineRun> ranks;  // each rank's own figures, in the group's order
  std::int64_t steps = 0;        // the group's
};

// The ranks of one attention-DP group stepped together, as the engines run them (vLLM's *Data
// Parallel Deployment*: "expert layers across all ranks are required to synchronize during every
// forward pass"; a rank with no request runs a dummy pass): at every step each rank schedules its
// own batch from its own requests and blocks; the step lasts as long as the slowest rank's (the
// coster's time of its batch, with the MoE layers over every rank's tokens, plus its overhead), and
// every rank advances by it; a rank that scheduled nothing counts a dummy step. While no rank has
// work the group waits for the next arrival. One rank is simulate()'s engine. InputError as
// simulate() says, and when no rank has a request.
[[nodiscard]] LockstepRun simulate_lockstep(const std::vector<LockstepRank>& ranks, StepCoster& coster,
                                            const ModelSpec& model);

// The same over a vector, keeping every request's record. `requests` must be sorted by arrival
// (without concurrency).
[[nodiscard]] Simulation simulate(const std::vector<RequestSpec>& requests, const EngineConfig& engine,
                                  StepCoster& coster, const ModelSpec& model);

}  // namespace roofline
