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
};

// Sorts the simulation's inter-token gaps (hence not const).
[[nodiscard]] ServeMetrics measure(Simulation& simulation, const Slo& slo = {});

}  // namespace roofline
