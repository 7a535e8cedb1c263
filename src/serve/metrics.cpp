// A simulation's throughput and latency figures (roofline/serve/metrics.hpp).
#include "roofline/serve/metrics.hpp"

namespace roofline {
namespace {

LatencyStats stats(Distribution& d) {
  return {d.count(), d.mean(), d.percentile(50), d.percentile(90), d.percentile(99), d.max()};
}

}  // namespace

void MetricsRecorder::add(const RequestRecord& r) {
  ttft_.add(r.ttft_s());
  e2e_.add(r.e2e_s());
  queue_.add(r.queue_s());
  ++m_.requests;
  m_.output_tokens += r.spec.output;
  m_.prompt_tokens += r.spec.prompt;
  const std::optional<double> t = r.tpot_s();
  if (t) {
    tpot_.add(*t);
    if (*t > 0) {
      user_speed_sum_ += 1.0 / *t;
      ++user_speed_count_;
    }
  }
  const bool ttft_ok = !slo_.ttft_s || r.ttft_s() <= *slo_.ttft_s;
  const bool tpot_ok = !slo_.tpot_s || !t || *t <= *slo_.tpot_s;
  if (ttft_ok && tpot_ok) ++m_.good_requests;
}

ServeMetrics MetricsRecorder::finish(EngineRun& run) {
  ServeMetrics m = m_;
  m.duration_s = run.end_s - run.start_s;
  if (m.duration_s > 0) {
    m.output_tokens_per_s = static_cast<double>(m.output_tokens) / m.duration_s;
    m.total_tokens_per_s = static_cast<double>(m.prompt_tokens + m.output_tokens) / m.duration_s;
    m.requests_per_s = static_cast<double>(m.requests) / m.duration_s;
  }
  m.user_tokens_per_s = user_speed_count_ > 0 ? user_speed_sum_ / static_cast<double>(user_speed_count_) : 0.0;
  m.ttft = stats(ttft_);
  m.tpot = stats(tpot_);
  m.itl = stats(run.itl_s);
  m.e2e = stats(e2e_);
  m.queue = stats(queue_);
  m.preemptions = run.engine.preemptions;
  return m;
}

ServeMetrics measure(Simulation& sim, const Slo& slo) {
  MetricsRecorder recorder(slo);
  for (const RequestRecord& r : sim.requests) recorder.add(r);
  return recorder.finish(sim);
}

}  // namespace roofline
