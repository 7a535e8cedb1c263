#pragma once

// A synthetic benchmark run with every disposition and group, built through the real case
// table and result types: the unit tests check its report, and bench_report_sample prints it so
// that the schema test validates a bench report on machines without a GPU.

#include "roofline/bench.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench::sample {

inline constexpr std::int64_t h200_l2_bytes = 62914560;  // 60 MiB, as the H200's driver reports
inline constexpr int h200_sms = 132;

inline const memory::Case& find_case(std::string_view id) {
  for (const memory::Case& c : memory::cases) {
    if (memory::case_id(c) == id) return c;
  }
  throw std::invalid_argument("no case " + std::string(id));
}

inline BenchmarkResult timed(std::string_view id, double median_s, double min_s, double max_s) {
  BenchmarkResult r = memory::make_result(find_case(id), memory::plan_sizes(h200_l2_bytes, h200_sms, false));
  r.disposition = Disposition::passed;
  r.detail = "synthetic";
  r.timing = Timing{Summary{30, median_s, min_s, max_s, median_s}, 4, true};
  return r;
}

inline BenchmarkResult untimed(std::string_view id, Disposition d, std::string detail) {
  BenchmarkResult r = memory::make_result(find_case(id), memory::plan_sizes(h200_l2_bytes, h200_sms, false));
  r.disposition = d;
  r.detail = std::move(detail);
  return r;
}

inline BenchRun sample_run() {
  BenchRun run;
  run.device.name = "NVIDIA H200";
  run.device.pci_bus_id = "00000000:19:00.0";
  run.device.compute_major = 9;
  run.device.compute_minor = 0;
  run.device.sms = h200_sms;
  run.device.sm_clock_max_mhz = 1980;
  run.device.memory_clock_max_mhz = 3201;
  run.device.memory_bus_bits = 6016;
  run.device.l2_bytes = h200_l2_bytes;
  run.device.memory_bytes = 150754820096;
  run.device.smem_per_sm_bytes = 233472;
  run.device.ecc = true;
  run.device.driver_version = 13000;
  run.device.runtime_version = 13000;
  run.device.cublas_version = 130000;
  run.device.sm_clock_start_mhz = 1980;
  run.hardware_id = "h200-sxm";
  run.hardware_origin = "bundled:hardware/h200-sxm.json";
  run.hardware_detail = "'NVIDIA H200' matches h200-sxm";
  run.hardware_bandwidth_tbps = 4.8;
  run.started_utc = "2026-11-30T12:00:00Z";
  run.duration_s = 95.5;
  run.seed = 42;
  run.suites = {"memory"};
  run.policy = timing_policy(false, std::nullopt);
  // memcpy: 2 GiB moved in 0.5 ms = 4.295 TB/s; the copy kernel 1% slower; triad failed.
  run.results.push_back(timed("memcpy.d2d", 0.0005, 0.00049, 0.00052));
  run.results.push_back(timed("stream.copy.16B.tile", 0.000505, 0.0005, 0.00051));
  run.results.push_back(untimed("stream.triad.16B.tile", Disposition::failed, "3 of 268435456 elements wrong"));
  run.results.push_back(timed("access.strided.s8", 0.0004, 0.0004, 0.0004));
  run.results.push_back(timed("access.gather", 0.0001, 0.0001, 0.00011));
  run.results.push_back(timed("gemv.bf16.8192x8192.b1.mma", 0.000037, 0.000036, 0.000038));
  run.results.push_back(timed("gemv.bf16.8192x8192.b1.cublas", 0.000044, 0.000043, 0.000046));
  run.results.push_back(untimed("gemv.bf16.8192x8192.b2.simt", Disposition::not_supported, "synthetic reason"));
  run.results.push_back(untimed("gemv.bf16.8192x8192.b4.simt", Disposition::not_run, "needs 2.00 GiB"));
  run.results.push_back(timed("hierarchy.l2.read", 0.0001, 0.0001, 0.0001));
  run.notes = {"synthetic run"};
  relate(run.results);
  return run;
}

}  // namespace roofline::bench::sample
