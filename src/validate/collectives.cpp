#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/validate/collective_validation.hpp"

namespace roofline {
namespace {

bool is_collective_group(std::string_view group) {
  return collective_from_name(group).has_value();
}

}  // namespace

std::optional<CollectiveSample> collective_sample(const Measurement& m) {
  if (!is_collective_group(m.group)) return std::nullopt;
  const nlohmann::json& p = m.parameters;
  const auto op_it = p.find("op");
  const auto ranks_it = p.find("ranks");
  if (op_it == p.end() || !op_it->is_string() || ranks_it == p.end() || !ranks_it->is_number_integer() ||
      !m.recorded_bytes) {
    throw InputError(fmt::format("{}: a collective needs op, ranks and model_bytes", m.where));
  }
  const std::optional<Collective> op = collective_from_name(op_it->get<std::string>());
  if (!op) throw InputError(fmt::format("{}/op: unknown collective {}", m.where, op_it->get<std::string>()));
  CollectiveSample s;
  s.op = *op;
  s.ranks = ranks_it->get<int>();
  s.bytes = *m.recorded_bytes;
  const auto dtype = p.find("dtype");
  s.dtype = dtype != p.end() && dtype->is_string() ? dtype->get<std::string>() : "fp32";
  return s;
}

CollectiveTables learn_collective_tables(std::span<const MeasuredRun> runs) {
  CollectiveTables tables;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      const std::optional<CollectiveSample> s = collective_sample(m);
      if (!s || !m.timed() || s->ranks < 2 || !(s->bytes > 0)) continue;
      tables.add(s->op, s->ranks, s->dtype, {s->bytes, m.timing->median_s, m.id});
    }
  }
  return tables;
}

std::vector<CollectiveComparison> compare_collectives(std::span<const MeasuredRun> runs, const LinkSpec& link,
                                                      const CollectiveTables* tables) {
  std::vector<CollectiveComparison> out;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& m : run.results) {
      const std::optional<CollectiveSample> s = collective_sample(m);
      if (!s || !m.timed() || s->ranks < 2 || !(s->bytes > 0)) continue;
      CollectiveComparison c;
      c.measurement = &m;
      c.sample = *s;
      c.measured_s = m.timing->median_s;
      c.busbw = bus_bandwidth(s->op, s->ranks, s->bytes, c.measured_s);
      c.model_s = ring_time(s->op, s->bytes, s->ranks, link);
      if (tables != nullptr) {
        if (auto t = measured_collective(*tables, s->op, s->bytes, s->ranks)) {
          c.calibrated_s = t->time_s;
          c.calibrated_detail = t->detail;
        } else {
          c.calibrated_detail = fmt::format("the calibration has no {} table over {} ranks", name_of(s->op), s->ranks);
        }
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace roofline
