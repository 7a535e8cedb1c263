// Disaggregated prefill/decode: the KV link and the balance of the pools
// (roofline/llm/disaggregation.hpp).
#include "roofline/llm/disaggregation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace roofline {
namespace {

// Whether `a` serves more output tokens/s per GPU than `b`, or as many on fewer GPUs.
bool better(const PoolsThroughput& a, const PoolsThroughput& b) {
  if (a.output_tokens_per_s_per_gpu != b.output_tokens_per_s_per_gpu) {
    return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
  }
  return a.gpus < b.gpus;
}

}  // namespace

double KvLink::transfer_s(std::int64_t prompt) const {
  const double bytes = kv_bytes_per_token * static_cast<double>(prompt);
  return latency_s + (std::isinf(bytes_per_s) ? 0.0 : bytes / bytes_per_s);
}

KvLink default_kv_link(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& prefill) {
  KvLink link;
  link.kv_bytes_per_token = plan_memory(model, gpu, shard(model, prefill), prefill, 1).kv_bytes_per_token_model;
  link.bytes_per_s = prefill.scale_out.bandwidth_bytes_per_s * prefill.tp * prefill.pp;
  link.latency_s = prefill.scale_out.latency_s;
  return link;
}

PoolsThroughput pools_throughput(const PoolRates& rates, PoolRatio ratio, std::int64_t output) {
  PoolsThroughput out;
  out.requests_per_s = std::min(static_cast<double>(ratio.prefill) * rates.prefill_requests_per_s,
                                static_cast<double>(ratio.decode) * rates.decode_requests_per_s);
  out.gpus = ratio.prefill * rates.prefill_gpus + ratio.decode * rates.decode_gpus;
  out.output_tokens_per_s_per_gpu = out.requests_per_s * static_cast<double>(output) / static_cast<double>(out.gpus);
  return out;
}

PoolRatio best_pool_ratio(const PoolRates& rates, std::int64_t output, std::int64_t most, std::int64_t* tried) {
  if (most < 1) throw std::logic_error("best_pool_ratio: no ratio to try");
  const double balance = rates.balance();
  PoolRatio best;
  PoolsThroughput best_throughput = pools_throughput(rates, best, output);
  std::int64_t count = 0;
  for (std::int64_t decode = 1; decode <= most; ++decode) {
    // The whole numbers either side of the balance (one where it is whole), within 1 .. most.
    const double at = balance * static_cast<double>(decode);
    const auto clamp = [most](double v) {
      return static_cast<std::int64_t>(std::clamp(v, 1.0, static_cast<double>(most)));
    };
    const std::int64_t below = clamp(std::floor(at));
    const std::int64_t above = clamp(std::ceil(at));
    for (const std::int64_t prefill : {below, above}) {
      const PoolRatio ratio{prefill, decode};
      ++count;
      const PoolsThroughput t = pools_throughput(rates, ratio, output);
      if (better(t, best_throughput)) {
        best = ratio;
        best_throughput = t;
      }
      if (above == below) break;  // the balance is whole here: one ratio
    }
  }
  if (tried != nullptr) *tried += count;
  return best;
}

PoolRatio best_pool_ratio(const PoolRates& rates, std::int64_t output, const std::vector<PoolRatio>& ratios) {
  if (ratios.empty()) throw std::logic_error("best_pool_ratio: no ratio to try");
  PoolRatio best = ratios.front();
  PoolsThroughput best_throughput = pools_throughput(rates, best, output);
  for (const PoolRatio& ratio : ratios) {
    const PoolsThroughput t = pools_throughput(rates, ratio, output);
    if (better(t, best_throughput)) {
      best = ratio;
      best_throughput = t;
    }
  }
  return best;
}

}  // namespace roofline
