#pragma once

// Disaggregated prefill/decode: a prefill pool and a decode pool of replicas, each request's KV cache
// moved between them over a link. Two users share these rules: serve's engine runs the pools step
// by step (serve/pools.hpp, docs/serve.md section 7) and plan --pareto prices a pair of pools in
// closed form (pareto.hpp, docs/llm.md section 9), so the link, its default and the balance of the
// pools live here, once.

#include <cstdint>
#include <vector>

#include "roofline/hardware/hardware.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/model.hpp"

namespace roofline {

// The KV link between the pools: one request's transfer is its KV bytes (the model's bytes per
// token, every layer, unsharded, x its prompt tokens) over the bandwidth, plus the latency.
// Transfers do not share the link (no contention modelled).
struct KvLink {
  double bytes_per_s = 0;  // inf: instant
  double latency_s = 0;
  double kv_bytes_per_token = 0;  // the model's, every layer (plan_memory's kv_bytes_per_token_model)
  [[nodiscard]] double transfer_s(std::int64_t prompt) const;
};

// serve --disaggregate's default link from a prefill replica laid out as `prefill`: each of its
// TP x PP GPUs sends its part of the cache over its own scale-out NIC (NIXL and Mooncake transfer
// per rank), so the bandwidth is the scale-out link's x TP x PP and the latency the scale-out
// link's; the bytes per token are the model's in the deployment's KV format.
[[nodiscard]] KvLink default_kv_link(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& prefill);

// Replicas of each pool.
struct PoolRatio {
  std::int64_t prefill = 1;
  std::int64_t decode = 1;
  friend bool operator==(const PoolRatio&, const PoolRatio&) = default;
};

// What one replica of each pool sustains, in closed form, and the GPUs it takes.
struct PoolRates {
  double prefill_requests_per_s = 0;  // one prefill replica: 1 / the prefill of one prompt
  double decode_requests_per_s = 0;   // one decode replica: batch / (output x step per output token)
  std::int64_t prefill_gpus = 1;      // TP x PP of a prefill replica
  std::int64_t decode_gpus = 1;
  // Prefill replicas per decode replica at which the pools' rates match: decode rate / prefill rate.
  [[nodiscard]] double balance() const { return decode_requests_per_s / prefill_requests_per_s; }
};

// Np prefill and Nd decode replicas serve min(Np x prefill rate, Nd x decode rate) requests/s (the
// pool with capacity to spare idles), output tokens per request each, on Np x prefill GPUs + Nd x
// decode GPUs.
struct PoolsThroughput {
  double requests_per_s = 0;
  std::int64_t gpus = 0;
  double output_tokens_per_s_per_gpu = 0;
};
[[nodiscard]] PoolsThroughput pools_throughput(const PoolRates& rates, PoolRatio ratio, std::int64_t output);

// The ratio with the most output tokens/s per GPU (ties: fewer GPUs, then the first tried) of those
// with at most `most` replicas in either pool. For a fixed Nd the tokens/s per GPU rise with Np up to
// the balance (Np = balance x Nd: the prefill pool is the bottleneck, and each prefill replica adds
// its rate for its GPUs' share) and fall beyond it (the decode pool is, and a prefill replica only
// adds GPUs), so the best Np for each Nd is one of the two whole numbers either side of balance x
// Nd (within 1 .. most): the 2 x `most` ratios tried give the best of the whole grid. `tried`
// counts them.
[[nodiscard]] PoolRatio best_pool_ratio(const PoolRates& rates, std::int64_t output, std::int64_t most,
                                        std::int64_t* tried = nullptr);
// The best of the ratios given, by the same rule; `ratios` must not be empty.
[[nodiscard]] PoolRatio best_pool_ratio(const PoolRates& rates, std::int64_t output,
                                        const std::vector<PoolRatio>& ratios);

}  // namespace roofline
