// A simulation's throughput and latency figures (roofline/serve/metrics.hpp).
#include "roofline/serve/metrics.hpp"

namespace roofline {
namespace {

LatencyStats stats(Distribution& d) {
  return {d.count(), d.mean(), d.percentile(50), d.percentile(90), d.percentile(99), d.max()};
}

}  // namespace

ServeMetrics measure(Simulation& sim, const Slo& slo) {
  ServeMetrics m;
  Distribution ttft, tpot, e2e, queue;
  double user_speed_sum = 0;
  std::int64_t user_speed_count = 0;
  for (const RequestRecord& r : sim.requests) {
    ttft.add(r.ttft_s());
    e2e.add(r.e2e_s());
    queue.add(r.queue_s());
    m.output_tokens += r.spec.output;
    m.prompt_tokens += r.spec.prompt;
    const std::optional<double> t = r.tpot_s();
    if (t) {
      tpot.add(*t);
      if (*t > 0) {
        user_speed_sum += 1.0 / *t;
        ++user_speed_count;
      }
    }
    const bool ttft_ok = !slo.ttft_s || r.ttft_s() <= *slo.ttft_s;
    const bool tpot_ok = !slo.tpot_s || !t || *t <= *slo.tpot_s;
    if (ttft_ok && tpot_ok) ++m.good_requests;
  }
  m.requests = static_cast<std::int64_t>(sim.requests.size());
  m.duration_s = sim.end_s - sim.start_s;
  if (m.duration_s > 0) {
    m.output_tokens_per_s = static_cast<double>(m.output_tokens) / m.duration_s;
    m.total_tokens_per_s = static_cast<double>(m.prompt_tokens + m.output_tokens) / m.duration_s;
    m.requests_per_s = static_cast<double>(m.requests) / m.duration_s;
  }
  m.user_tokens_per_s = user_speed_count > 0 ? user_speed_sum / static_cast<double>(user_speed_count) : 0.0;
  m.ttft = stats(ttft);
  m.tpot = stats(tpot);
  m.itl = stats(sim.itl_s);
  m.e2e = stats(e2e);
  m.queue = stats(queue);
  return m;
}

}  // namespace roofline
