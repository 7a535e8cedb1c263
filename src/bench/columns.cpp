// The columns every result table can use (roofline::bench::columns).
#include <fmt/format.h>

#include "roofline/bench/bench.hpp"

namespace roofline::bench {
namespace {

Cell timing_cell(const BenchmarkResult& r, double Summary::*field) {
  return r.timing ? Cell{r.timing->seconds.*field * 1e6} : Cell{};
}

}  // namespace

namespace cells {
Cell id(const BenchmarkResult& r) {
  return Cell{r.id};
}
Cell implementation(const BenchmarkResult& r) {
  return Cell{r.implementation};
}
Cell status(const BenchmarkResult& r) {
  return Cell{std::string(name_of(r.disposition))};
}
Cell model_bytes(const BenchmarkResult& r) {
  return Cell{r.cost.bytes()};
}
Cell median_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::median);
}
Cell min_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::min);
}
Cell max_us(const BenchmarkResult& r) {
  return timing_cell(r, &Summary::max);
}
Cell spread_pct(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->seconds.spread() * 100} : Cell{};
}
Cell samples(const BenchmarkResult& r) {
  return r.timing ? Cell{static_cast<std::int64_t>(r.timing->seconds.count)} : Cell{};
}
Cell launches_per_sample(const BenchmarkResult& r) {
  return r.timing ? Cell{std::int64_t{r.timing->launches_per_sample}} : Cell{};
}
Cell graph(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->graph} : Cell{};
}
Cell bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.bandwidth(), 1e-12);
}
Cell best_bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.best_bandwidth(), 1e-12);
}
Cell tflops(const BenchmarkResult& r) {
  return optional_cell(r.flop_rate(), 1e-12);
}
Cell model_flops(const BenchmarkResult& r) {
  return Cell{r.cost.flops};
}
Cell pct_of_ceiling(const BenchmarkResult& r) {
  return optional_cell(r.ceiling_fraction, 100.0);
}
Cell reference_speedup(const BenchmarkResult& r) {
  return optional_cell(r.reference_speedup);
}
Cell pct_of_reference(const BenchmarkResult& r) {
  return optional_cell(r.reference_speedup, 100.0);
}
Cell moved_bytes(const BenchmarkResult& r) {
  return r.sectors ? Cell{r.sectors->moved_bytes()} : Cell{};
}
Cell sector_bandwidth_tbps(const BenchmarkResult& r) {
  return optional_cell(r.sector_bandwidth(), 1e-12);
}
Cell sector_efficiency(const BenchmarkResult& r) {
  return r.sectors ? Cell{r.sectors->efficiency()} : Cell{};
}
Cell detail(const BenchmarkResult& r) {
  return Cell{r.detail};
}
Cell sm_clock_mhz(const BenchmarkResult& r) {
  return r.timing ? optional_cell(r.timing->sm_clock_mhz) : Cell{};
}
Cell sm_clock_min_mhz(const BenchmarkResult& r) {
  return r.timing ? optional_cell(r.timing->sm_clock_min_mhz) : Cell{};
}
Cell mem_clock_mhz(const BenchmarkResult& r) {
  return r.timing ? optional_cell(r.timing->memory_clock_mhz) : Cell{};
}
Cell power_w(const BenchmarkResult& r) {
  return r.timing ? optional_cell(r.timing->power_w) : Cell{};
}
Cell throttle_reasons(const BenchmarkResult& r) {
  if (!r.timing || !r.timing->throttle_reasons) return Cell{};
  return Cell{fmt::format("{}", fmt::join(*r.timing->throttle_reasons, ","))};
}
Cell throttled(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->throttled} : Cell{};
}
Cell retaken_samples(const BenchmarkResult& r) {
  return r.timing ? Cell{std::int64_t{r.timing->retaken}} : Cell{};
}
Cell noise_pct(const BenchmarkResult& r) {
  return r.timing ? Cell{r.timing->noise * 100} : Cell{};
}
Cell stopped_on(const BenchmarkResult& r) {
  return r.timing ? Cell{std::string(name_of(r.timing->stopped_on))} : Cell{};
}
Cell cold_l2(const BenchmarkResult& r) {
  return r.timing ? Cell{std::string(name_of(r.timing->cold_l2))} : Cell{};
}
}  // namespace cells
}  // namespace roofline::bench
