// A benchmark result's rates, how results relate to their ceiling and reference, and targets.
#include <map>

#include "roofline/bench/bench.hpp"

namespace roofline::bench {

const BenchmarkResult* find_result(std::span<const BenchmarkResult> results, std::string_view id) {
  for (const BenchmarkResult& r : results) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Cell BenchmarkResult::parameter(std::string_view key) const {
  for (const Parameter& p : parameters) {
    if (p.key == key) return p.value;
  }
  return Cell{};
}

std::optional<double> BenchmarkResult::bandwidth() const {
  if (!timing || timing->seconds.median <= 0) return std::nullopt;
  return cost.bytes() / timing->seconds.median;
}

std::optional<double> BenchmarkResult::best_bandwidth() const {
  if (!timing || timing->seconds.min <= 0) return std::nullopt;
  return cost.bytes() / timing->seconds.min;
}

std::optional<double> BenchmarkResult::flop_rate() const {
  if (!timing || timing->seconds.median <= 0 || cost.flops <= 0) return std::nullopt;
  return cost.flops / timing->seconds.median;
}

std::optional<double> BenchmarkResult::rate(Metric metric) const {
  return metric == Metric::bandwidth ? bandwidth() : flop_rate();
}

std::optional<double> BenchmarkResult::sector_bandwidth() const {
  if (!timing || !sectors || timing->seconds.median <= 0) return std::nullopt;
  return sectors->moved_bytes() / timing->seconds.median;
}

void relate(std::vector<BenchmarkResult>& results) {
  std::map<std::string, const BenchmarkResult*> by_id;
  for (const BenchmarkResult& r : results) by_id[r.id] = &r;
  // Computed first and assigned after: a result may be another's ceiling or reference.
  std::vector<std::pair<std::optional<double>, std::optional<double>>> related(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BenchmarkResult& r = results[i];
    const std::optional<double> own = r.rate(r.ceiling_metric);
    if (!own || !r.timing) continue;
    if (auto it = by_id.find(r.ceiling_id); it != by_id.end()) {
      if (const std::optional<double> ceiling = it->second->rate(r.ceiling_metric); ceiling && *ceiling > 0) {
        related[i].first = *own / *ceiling;
      }
    }
    if (auto it = by_id.find(r.reference_id); it != by_id.end() && it->second->timing) {
      related[i].second = it->second->timing->seconds.median / r.timing->seconds.median;
    }
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].ceiling_fraction = related[i].first;
    results[i].reference_speedup = related[i].second;
  }
}

std::vector<TargetResult> evaluate_targets(std::span<const Target> targets, std::span<const BenchmarkResult> results) {
  std::vector<TargetResult> out;
  for (const Target& target : targets) {
    TargetResult t;
    t.description = std::string(target.description);
    t.metric = target.metric;
    const bool absolute = target.reference.empty();
    t.reference = absolute ? "fixed" : std::string(target.reference);
    t.required = absolute ? 1.0 : target.required;
    for (std::string_view id : target.candidates) {
      if (id.empty()) continue;
      const BenchmarkResult* r = find_result(results, id);
      if (r == nullptr || r->disposition != Disposition::passed) continue;
      const std::optional<double> rate = r->rate(target.metric);
      if (rate && (!t.candidate_rate || *rate > *t.candidate_rate)) {
        t.candidate = r->id;
        t.candidate_rate = rate;
      }
    }
    if (absolute) {
      t.reference_rate = target.required;
    } else if (const BenchmarkResult* reference = find_result(results, target.reference);
               reference != nullptr && reference->disposition == Disposition::passed) {
      t.reference_rate = reference->rate(target.metric);
    }
    if (t.candidate_rate && t.reference_rate && *t.reference_rate > 0) {
      t.ratio = *t.candidate_rate / *t.reference_rate;
      t.met = *t.ratio >= t.required;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> failed_ids(const BenchRun& run) {
  std::vector<std::string> ids;
  for (const BenchmarkResult& r : run.results) {
    if (r.disposition == Disposition::failed) ids.push_back(r.id);
  }
  return ids;
}

}  // namespace roofline::bench
