#pragma once

// Measured collective tables: what `bench --suite collectives` timed, learnt by `calibrate` into
// the calibration file's "collectives" section, and used by llm and plan in place of the ring
// model (comm.hpp) where a table covers the collective and the group size.
//
// A table holds one collective at one rank count: points of (bytes, median time), sizes as
// nccl-tests size them (comm.hpp). A query interpolates the bus bandwidth linearly in log(bytes)
// between the two nearest measured sizes, and turns it back into a time (bus_factor x bytes /
// busbw). Below the smallest size the time is the smallest size's (a collective never gets
// faster than its latency); above the largest, the largest size's bus bandwidth carries on. Both
// say they were clamped.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/model/comm.hpp"

namespace roofline {

struct CollectivePoint {
  double bytes = 0;       // nccl-tests size convention (comm.hpp)
  double time_s = 0;      // median over samples, the slowest rank of each sample
  std::string benchmark;  // the measured id it came from
};

struct CollectiveTable {
  Collective op = Collective::all_reduce;
  int ranks = 2;
  std::string dtype = "fp32";
  std::vector<CollectivePoint> points;  // ascending bytes, distinct
  [[nodiscard]] double busbw(const CollectivePoint& p) const { return bus_bandwidth(op, ranks, p.bytes, p.time_s); }
};

struct CollectiveTables {
  std::vector<CollectiveTable> tables;
  [[nodiscard]] const CollectiveTable* find(Collective op, int ranks) const;
  [[nodiscard]] bool empty() const { return tables.empty(); }
  // Adds a point (a table per op and rank count, created on first use); a size already present
  // keeps the faster time (several runs of one size).
  void add(Collective op, int ranks, const std::string& dtype, CollectivePoint point);
};

struct MeasuredCollective {
  double time_s = 0;
  double busbw = 0;  // B/s
  bool clamped = false;
  std::string detail;  // "all_reduce x2, 1 MiB between 512 KiB and 2 MiB"
};

// The time of `op` on `bytes` over `ranks` GPUs from the table; nullopt without a table for
// that op and rank count (or a table without points).
[[nodiscard]] std::optional<MeasuredCollective> measured_collective(const CollectiveTables& tables, Collective op,
                                                                    double bytes, int ranks);

// What the model charges a collective: the measured table where one covers it (and the group is
// within one scale-up domain, where the tables were measured), else the ring model on `link`.
struct CollectiveCost {
  double time_s = 0;
  bool measured = false;
  std::string detail;  // the table's interpolation, or "ring model"
};
[[nodiscard]] CollectiveCost collective_cost(Collective op, double bytes, int ranks, const LinkSpec& link,
                                             const CollectiveTables* measured, bool within_scale_up = true);

// The calibration file's "collectives" section (docs/schema/calibration.v1.schema.json): an array
// of {op, ranks, dtype, points: [{bytes, time_us, busbw_gbps, benchmark}]}. from_json expects a
// document the schema has validated; it checks what the schema cannot (ascending sizes, one table
// per op and rank count) and throws InputError naming `where`.
[[nodiscard]] nlohmann::json to_json(const CollectiveTables& tables);
[[nodiscard]] CollectiveTables collective_tables_from_json(const nlohmann::json& section, const std::string& where);

// "8 B", "64 KiB", "8 GiB": a power-of-two size as the collectives suite names it.
[[nodiscard]] std::string size_text(double bytes);

}  // namespace roofline
