#include "roofline/model/collective_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/core/error.hpp"

namespace roofline {

const CollectiveTable* CollectiveTables::find(Collective op, int ranks) const {
  for (const CollectiveTable& t : tables) {
    if (t.op == op && t.ranks == ranks && !t.points.empty()) return &t;
  }
  return nullptr;
}

void CollectiveTables::add(Collective op, int ranks, const std::string& dtype, CollectivePoint point) {
  auto table = std::find_if(tables.begin(), tables.end(),
                            [&](const CollectiveTable& t) { return t.op == op && t.ranks == ranks; });
  if (table == tables.end()) {
    tables.push_back({op, ranks, dtype, {}});
    table = std::prev(tables.end());
  }
  auto& points = table->points;
  const auto at = std::lower_bound(points.begin(), points.end(), point.bytes,
                                   [](const CollectivePoint& p, double bytes) { return p.bytes < bytes; });
  if (at != points.end() && at->bytes == point.bytes) {
    if (point.time_s < at->time_s) *at = std::move(point);
    return;
  }
  points.insert(at, std::move(point));
}

std::string size_text(double bytes) {
  static constexpr std::array<std::string_view, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (unit + 1 < units.size() && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{:g} {}", bytes, units[unit]);
}

std::optional<MeasuredCollective> measured_collective(const CollectiveTables& tables, Collective op, double bytes,
                                                      int ranks) {
  const CollectiveTable* table = tables.find(op, ranks);
  if (table == nullptr) return std::nullopt;
  const auto& p = table->points;
  MeasuredCollective out;
  const std::string head = fmt::format("measured {} x{}, {}", name_of(op), ranks, size_text(bytes));
  const double factor = bus_factor(op, ranks);
  const auto with_busbw = [&](double busbw) {
    out.busbw = busbw;
    out.time_s = busbw > 0 ? factor * bytes / busbw : 0.0;
  };
  if (bytes <= p.front().bytes) {
    out.time_s = p.front().time_s;
    out.busbw = bus_bandwidth(op, ranks, bytes, out.time_s);
    out.clamped = bytes < p.front().bytes;
    out.detail =
        out.clamped ? fmt::format("{} at the smallest measured size's time", head) : fmt::format("{} (measured)", head);
    return out;
  }
  if (bytes >= p.back().bytes) {
    with_busbw(table->busbw(p.back()));
    out.clamped = bytes > p.back().bytes;
    out.detail = out.clamped ? fmt::format("{} at the largest measured size's bus bandwidth", head)
                             : fmt::format("{} (measured)", head);
    if (!out.clamped) out.time_s = p.back().time_s;
    return out;
  }
  const auto hi =
      std::upper_bound(p.begin(), p.end(), bytes, [](double b, const CollectivePoint& q) { return b < q.bytes; });
  const auto lo = std::prev(hi);
  if (lo->bytes == bytes) {
    out.time_s = lo->time_s;
    out.busbw = table->busbw(*lo);
    out.detail = fmt::format("{} (measured)", head);
    return out;
  }
  const double b0 = table->busbw(*lo);
  const double b1 = table->busbw(*hi);
  const double w = (std::log(bytes) - std::log(lo->bytes)) / (std::log(hi->bytes) - std::log(lo->bytes));
  with_busbw(b0 + (b1 - b0) * w);
  out.detail = fmt::format("{} between {} and {}", head, size_text(lo->bytes), size_text(hi->bytes));
  return out;
}

CollectiveCost collective_cost(Collective op, double bytes, int ranks, const LinkSpec& link,
                               const CollectiveTables* measured, bool within_scale_up) {
  if (ranks <= 1) return {0.0, false, "one GPU: nothing to communicate"};
  if (measured != nullptr && within_scale_up) {
    if (auto m = measured_collective(*measured, op, bytes, ranks)) return {m->time_s, true, m->detail};
  }
  return {ring_time(op, bytes, ranks, link), false, fmt::format("ring model over {}", link.name)};
}

nlohmann::json to_json(const CollectiveTables& tables) {
  nlohmann::json out = nlohmann::json::array();
  for (const CollectiveTable& t : tables.tables) {
    nlohmann::json points = nlohmann::json::array();
    for (const CollectivePoint& p : t.points) {
      points.push_back({{"bytes", p.bytes},
                        {"time_us", p.time_s * 1e6},
                        {"busbw_gbps", t.busbw(p) / 1e9},
                        {"benchmark", p.benchmark}});
    }
    out.push_back({{"op", name_of(t.op)}, {"ranks", t.ranks}, {"dtype", t.dtype}, {"points", std::move(points)}});
  }
  return out;
}

CollectiveTables collective_tables_from_json(const nlohmann::json& section, const std::string& where) {
  CollectiveTables out;
  for (std::size_t i = 0; i < section.size(); ++i) {
    const nlohmann::json& t = section[i];
    const std::string op_name = t["op"].get<std::string>();
    const std::optional<Collective> op = collective_from_name(op_name);
    if (!op) throw InputError(fmt::format("{}/{}/op: unknown collective {}", where, i, op_name));
    CollectiveTable table{*op, t["ranks"].get<int>(), t["dtype"].get<std::string>(), {}};
    if (out.find(table.op, table.ranks) != nullptr) {
      throw InputError(fmt::format("{}/{}: a second table of {} over {} ranks", where, i, op_name, table.ranks));
    }
    const nlohmann::json& points = t["points"];
    for (std::size_t j = 0; j < points.size(); ++j) {
      const nlohmann::json& p = points[j];
      CollectivePoint point{p["bytes"].get<double>(), p["time_us"].get<double>() * 1e-6,
                            p["benchmark"].get<std::string>()};
      if (!table.points.empty() && !(point.bytes > table.points.back().bytes)) {
        throw InputError(fmt::format("{}/{}/points/{}/bytes: sizes must ascend", where, i, j));
      }
      table.points.push_back(std::move(point));
    }
    out.tables.push_back(std::move(table));
  }
  return out;
}

}  // namespace roofline
