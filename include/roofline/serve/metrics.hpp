#pragma once

// What a serving benchmark reports of a simulation, as vLLM's benchmark_serving defines it:
// throughput over the run (first arrival to last finish), and per request TTFT, TPOT = (E2E -
// TTFT) / (output - 1), E2E, queueing time, and every inter-token gap (ITL), each as mean,
// percentiles and maximum; goodput under latency targets.

#include <cstdint>
#include <optional>

#include "roofline/serve/engine.hpp"

namespace roofline {

// Targets a request must meet to count as good (unset: no target). TPOT applies to requests of
// two or more output tokens.
struct Slo {
  std::optional<double> ttft_s;
  std::optional<double> tpot_s;
};

struct LatencyStats {
  std::int64_t samples = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // seconds
};

struct ServeMetrics {
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  double duration_s = 0;
  double output_tokens_per_s = 0;
  double total_tokens_per_s = 0;  // prompt + output
  double requests_per_s = 0;
  double user_tokens_per_s = 0;  // mean over requests of 1 / TPOT (AIPerf's per-user throughput)
  LatencyStats ttft, tpot, itl, e2e, queue;
  std::int64_t good_requests = 0;  // within the Slo (all of them without targets)
  std::int64_t preemptions = 0;
};

// The metrics reduced request by request as they finish (an engine's FinishedRequest): counts
// and sums, and of each latency one sample per request (TTFT, TPOT, E2E and queueing time), exact
// up to Distribution::exact_runs distinct values and rounded to 0.034% past them, so that memory
// stays bounded by the requests in flight and not the workload's length.
class MetricsRecorder {
 public:
  explicit MetricsRecorder(const Slo& slo = {}) : slo_(slo) {}
  void add(const RequestRecord& record);
  // The figures of the run; sorts the samples (hence not const).
  [[nodiscard]] ServeMetrics finish(EngineRun& run);
  // A percentile of the TTFT or TPOT samples, p in [0, 100].
  [[nodiscard]] double ttft_percentile(double p) { return ttft_.percentile(p); }
  [[nodiscard]] double tpot_percentile(double p) { return tpot_.percentile(p); }

 private:
  Slo slo_;
  ServeMetrics m_;
  Distribution ttft_, tpot_, e2e_, queue_;
  double user_speed_sum_ = 0;
  std::int64_t user_speed_count_ = 0;
};

// The metrics of a simulation's records; sorts its inter-token gaps (hence not const).
[[nodiscard]] ServeMetrics measure(Simulation& simulation, const Slo& slo = {});

}  // namespace roofline
