#pragma once

// The benchmark framework's host side: what a benchmark result is, how results become a
// Report, how targets are judged, and which GPU spec file a detected device matches. No CUDA
// here: the same code formats results on machines without a GPU (tests, --list) and the
// CUDA runner (bench_runner.hpp) fills the structures on the GPU machine.
//
// A suite (memory, compute, layer) contributes:
//   - a constexpr table of cases (benchmarks described as data),
//   - for each case, its FLOPs and bytes from the model's own functions (roofline/ops.hpp,
//     roofline/attention.hpp),
//   - its result tables (GroupLayout: columns per table), tables derived from several results
//     (e.g. attention by sequence length), and its targets,
//   - a runner in the CUDA part that times and verifies each case.

#include <algorithm>
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/basis/basis.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/model/access.hpp"
#include "roofline/model/ops.hpp"
#include "roofline/report/report.hpp"

namespace roofline::bench {

// What happened to a benchmark (the CUTLASS profiler's dispositions): passed = verified and
// timed; failed = its output did not match the reference (never timed); not_run = skipped
// (memory, an earlier fatal error); not_supported = the kernel cannot run this shape.
enum class Disposition : std::uint8_t { passed, failed, not_run, not_supported };
inline constexpr std::array<std::string_view, 4> disposition_names{"passed", "failed", "not_run", "not_supported"};
[[nodiscard]] constexpr std::string_view name_of(Disposition d) {
  return disposition_names[static_cast<std::size_t>(d)];
}

// What a result is judged by: bytes moved per second (memory-bound work) or FLOPs per second.
enum class Metric : std::uint8_t { bandwidth, flop_rate };
inline constexpr std::array<std::string_view, 2> metric_names{"bandwidth", "flop_rate"};
[[nodiscard]] constexpr std::string_view name_of(Metric m) {
  return metric_names[static_cast<std::size_t>(m)];
}

// A named parameter of a benchmark (shape, stride, width...), shown as a table column.
struct Parameter {
  std::string_view key;  // a string literal: the column key
  Cell value;
};

// How the timed launches went: per-launch seconds over `count` samples, each sample the
// average of `launches_per_sample` back-to-back launches (replayed as one CUDA graph if
// `graph`).
struct Timing {
  Summary seconds;
  int launches_per_sample = 1;
  bool graph = false;
};

struct BenchmarkResult {
  std::string suite;           // "memory"
  std::string group;           // the table it belongs to ("stream", "gemv", ...)
  std::string id;              // unique and stable across runs: "stream.triad.16B.tile"
  std::string implementation;  // "roofline", "cublas", "cuda-runtime"
  std::vector<Parameter> parameters;
  OpCost cost;                                // per launch, from the model (ops.hpp)
  std::optional<SectorTraffic> sectors;       // per launch, access patterns only (access.hpp)
  std::string ceiling_id;                     // the in-run ceiling it is compared with ("memcpy.d2d"); may be empty
  Metric ceiling_metric = Metric::bandwidth;  // how: bandwidth (memcpy) or FLOP rate (peak probes)
  std::string reference_id;                   // another implementation of the same problem (cuBLAS); may be empty

  Disposition disposition = Disposition::not_run;
  std::string detail;            // why it failed or was not run; what the check compared when it passed
  std::optional<Timing> timing;  // set only when passed

  // Filled by relate(): this result against its ceiling and its reference.
  std::optional<double> ceiling_fraction;   // bandwidth (or FLOP rate) / the ceiling's
  std::optional<double> reference_speedup;  // reference's median time / this median time

  [[nodiscard]] Cell parameter(std::string_view key) const;
  // Model bytes / median time, in B/s (nullopt unless timed).
  [[nodiscard]] std::optional<double> bandwidth() const;
  // Model bytes / fastest time.
  [[nodiscard]] std::optional<double> best_bandwidth() const;
  [[nodiscard]] std::optional<double> flop_rate() const;
  // bandwidth() or flop_rate().
  [[nodiscard]] std::optional<double> rate(Metric metric) const;
  // Sectors moved (model) x 32 B / median time.
  [[nodiscard]] std::optional<double> sector_bandwidth() const;
};

// The result with this id, or null.
[[nodiscard]] const BenchmarkResult* find_result(std::span<const BenchmarkResult> results, std::string_view id);

// Fills ceiling_fraction and reference_speedup from the other results of the run.
void relate(std::vector<BenchmarkResult>& results);

// A performance target of a suite. Relative: the fastest passed candidate's rate (bandwidth or
// FLOP rate, `metric`) over the reference's must reach `required`. Absolute (no reference): the
// candidate's rate must reach `required` itself, in B/s or FLOP/s.
struct Target {
  std::string_view description;
  std::array<std::string_view, 6> candidates;  // ids; empty entries unused
  std::string_view reference;                  // id; empty for an absolute target
  double required = 1.0;
  Metric metric = Metric::bandwidth;
};

struct TargetResult {
  std::string description;
  Metric metric = Metric::bandwidth;
  std::optional<std::string> candidate;  // the fastest passed candidate
  std::optional<double> candidate_rate;  // B/s or FLOP/s
  std::string reference;                 // an id, or "fixed" for an absolute target
  std::optional<double> reference_rate;  // the reference's rate, or the absolute requirement
  std::optional<double> ratio;           // candidate / reference (absolute: candidate / requirement)
  double required = 1.0;                 // the ratio needed (1 for an absolute target)
  std::optional<bool> met;               // nullopt: not evaluated (a result is missing or failed)
};

[[nodiscard]] std::vector<TargetResult> evaluate_targets(std::span<const Target> targets,
                                                         std::span<const BenchmarkResult> results);

// One result table: which results go in it and which columns it shows.
struct GroupLayout {
  std::string_view name;  // the group, and the JSON key under "results"
  std::string_view title;
  std::span<const ColumnOf<BenchmarkResult>> columns;
};

// A case as --list shows it (no GPU needed).
struct CaseInfo {
  std::string suite;
  std::string group;
  std::string id;
  std::string implementation;
  bool quick = false;
};

// A result as a run recorded it: what its suite rebuilds the model's basis from (never from
// today's case table, whose sizes and shapes may have moved on since the run).
struct RecordedResult {
  std::string_view group;
  std::string_view id;
  std::string_view kernel;               // the last word of the id: the implementation that ran
  const nlohmann::json& parameters;      // the result table's parameter columns, by key
  std::optional<double> recorded_bytes;  // the model bytes the run counted, where it recorded them
  std::string_view where;                // "FILE /results/gemv/3", for messages

  [[nodiscard]] bool has(std::string_view key) const;
  // The parameter as a whole non-negative number, a text, a storage format, or a flag (true/false
  // or 1/0); InputError naming `where`, the id and the key when the run did not record it so.
  [[nodiscard]] std::int64_t whole(std::string_view key) const;
  [[nodiscard]] std::string text(std::string_view key) const;
  [[nodiscard]] DType dtype(std::string_view key) const;
  [[nodiscard]] bool flag(std::string_view key) const;
};

struct SuiteInfo {
  std::string_view name;
  std::string_view description;
  std::span<const GroupLayout> groups;
  std::span<const Target> targets;
  std::vector<CaseInfo> (*cases)();  // every case, in run order
  // Tables built from several results at once (e.g. attention by sequence length); may be null.
  std::vector<Table> (*derived_tables)(std::span<const BenchmarkResult> results) = nullptr;
  // The model's basis of a result of this suite, rebuilt from what the run recorded.
  BasisOrReason (*basis)(const RecordedResult& recorded) = nullptr;
  // Why calibrate learns no table from this suite's results; empty where it does.
  std::string_view not_learnt = {};
};

// Every suite the tool knows, in the order `--suite all` runs them (src/bench/suites.cpp: one
// line per suite; the CUDA runners register under the same names in src/bench/cuda/runner.cpp).
[[nodiscard]] std::span<const SuiteInfo> suites();
// A suite by name, or InputError naming --suite.
[[nodiscard]] const SuiteInfo& find_suite(std::string_view name);
// "memory" -> {memory}; "all" -> every suite; a comma-separated list is accepted too.
[[nodiscard]] std::vector<const SuiteInfo*> select_suites(std::string_view list);

// The cell of the parameter named K, for a column (which holds a plain function pointer):
// {{"m", "m", 0}, &param<"m">}.
template <std::size_t N>
struct ParameterKey {
  std::array<char, N> text{};
  constexpr ParameterKey(const char (&s)[N]) {  // NOLINT(google-explicit-constructor): a literal becomes a key
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};
template <ParameterKey K>
Cell param(const BenchmarkResult& r) {
  return r.parameter(std::string_view(K.text.data(), K.text.size() - 1));
}

// Columns every result table can use; suites compose their layouts from these and add their
// own parameter columns. The cell functions are defined in src/bench/columns.cpp.
namespace cells {
Cell id(const BenchmarkResult& r);
Cell implementation(const BenchmarkResult& r);
Cell status(const BenchmarkResult& r);
Cell model_bytes(const BenchmarkResult& r);
Cell median_us(const BenchmarkResult& r);
Cell min_us(const BenchmarkResult& r);
Cell max_us(const BenchmarkResult& r);
Cell spread_pct(const BenchmarkResult& r);
Cell samples(const BenchmarkResult& r);
Cell launches_per_sample(const BenchmarkResult& r);
Cell graph(const BenchmarkResult& r);
Cell bandwidth_tbps(const BenchmarkResult& r);
Cell best_bandwidth_tbps(const BenchmarkResult& r);
Cell tflops(const BenchmarkResult& r);
Cell model_flops(const BenchmarkResult& r);
Cell pct_of_ceiling(const BenchmarkResult& r);
Cell reference_speedup(const BenchmarkResult& r);
Cell pct_of_reference(const BenchmarkResult& r);
Cell moved_bytes(const BenchmarkResult& r);
Cell sector_bandwidth_tbps(const BenchmarkResult& r);
Cell sector_efficiency(const BenchmarkResult& r);
Cell detail(const BenchmarkResult& r);
}  // namespace cells

namespace columns {
using C = ColumnOf<BenchmarkResult>;
inline constexpr C id{{"id", "benchmark", 0}, &cells::id};
inline constexpr C implementation{{"implementation", "impl", 0}, &cells::implementation};
inline constexpr C status{{"status", "status", 0}, &cells::status};
inline constexpr C model_bytes{{"model_bytes", "bytes (model)", 0}, &cells::model_bytes};
inline constexpr C median_us{{"median_us", "median [us]", 2}, &cells::median_us};
inline constexpr C min_us{{"min_us", "min [us]", 2}, &cells::min_us};
inline constexpr C max_us{{"max_us", "max [us]", 2}, &cells::max_us};
inline constexpr C spread_pct{{"spread_pct", "spread %", 1}, &cells::spread_pct};
inline constexpr C samples{{"samples", "samples", 0}, &cells::samples};
inline constexpr C launches_per_sample{{"launches_per_sample", "launches", 0}, &cells::launches_per_sample};
inline constexpr C graph{{"graph", "graph", 0}, &cells::graph};
inline constexpr C bandwidth_tbps{{"bandwidth_tbps", "TB/s", 3}, &cells::bandwidth_tbps};
inline constexpr C best_bandwidth_tbps{{"best_bandwidth_tbps", "best TB/s", 3}, &cells::best_bandwidth_tbps};
inline constexpr C tflops{{"tflops", "TFLOP/s", 2}, &cells::tflops};
inline constexpr C model_flops{{"model_flops", "FLOPs (model)", 0}, &cells::model_flops};
inline constexpr C pct_of_ceiling{{"pct_of_memcpy", "% memcpy", 1}, &cells::pct_of_ceiling};
inline constexpr C pct_of_peak{{"pct_of_peak", "% peak", 1}, &cells::pct_of_ceiling};
inline constexpr C reference_speedup{{"speedup_vs_reference", "x ref", 2}, &cells::reference_speedup};
inline constexpr C moved_bytes{{"moved_bytes", "moved bytes (model)", 0}, &cells::moved_bytes};
inline constexpr C sector_bandwidth_tbps{{"sector_bandwidth_tbps", "moved TB/s", 3}, &cells::sector_bandwidth_tbps};
inline constexpr C sector_efficiency{{"sector_efficiency", "useful/moved", 3}, &cells::sector_efficiency};
inline constexpr C detail{{"detail", "detail", 0}, &cells::detail};

// How the timed launches went, in the order every result table shows them.
inline constexpr std::array<C, 7> timing{median_us, min_us, max_us, spread_pct, samples, launches_per_sample, graph};

// A column table composed of parts: join(std::to_array<C>({id, ...}), timing, std::to_array<C>({...})).
template <std::size_t... N>
constexpr std::array<C, (N + ...)> join(const std::array<C, N>&... parts) {
  std::array<C, (N + ...)> out{};
  std::size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(at)), at += N), ...);
  return out;
}
}  // namespace columns

// How the harness times a case.
struct TimingPolicy {
  int samples = 30;                // timed samples (each a batch of launches)
  int min_warmup_launches = 10;    // at least this many untimed launches first ...
  double min_warmup_s = 0.025;     // ... and at least this long
  double target_sample_s = 0.002;  // a sample lasts about this long (launches are batched)
  int max_launches_per_sample = 1000;
  // Long launches (a naive GEMM of 8192^3 takes a second) get fewer warm-up launches and samples:
  // a case's timing stays near this many seconds, with at least min_samples samples.
  double max_case_s = 2.0;
  int min_samples = 3;
  double timeout_s = 60;  // any single wait for the GPU longer than this is a hang
  // Check every case and run each of its rotating input sets once, but time nothing (for
  // compute-sanitizer, which slows kernels down too much for timing and checks accesses only).
  bool check_only = false;
};
[[nodiscard]] TimingPolicy timing_policy(bool quick, std::optional<int> samples);

// The harness's arithmetic, from the first launch's time: warm-up launches (at least
// min_warmup_launches and min_warmup_s, within a quarter of max_case_s, at least one) ...
[[nodiscard]] int warmup_launches(const TimingPolicy& policy, double first_launch_s);
// ... and, from the warm-up's time per launch, the launches per sample (about target_sample_s,
// whole rotations of the input sets) and the samples (policy.samples, fewer -- down to
// min_samples -- when they would take past three quarters of max_case_s).
struct SamplePlan {
  int batch = 1;
  int samples = 1;
};
[[nodiscard]] SamplePlan sample_plan(const TimingPolicy& policy, double launch_s, int rotation);

// The device as detected at run time.
struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_major = 0;
  int compute_minor = 0;
  int sms = 0;
  double sm_clock_max_mhz = 0;
  double memory_clock_max_mhz = 0;
  int memory_bus_bits = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t smem_per_sm_bytes = 0;
  bool ecc = false;
  int driver_version = 0;   // CUDA driver API version, e.g. 13000
  int runtime_version = 0;  // CUDA runtime version
  int cublas_version = 0;
  // Current clocks read through NVML before and after the run (absent where NVML is not).
  std::optional<double> sm_clock_start_mhz, sm_clock_end_mhz, memory_clock_start_mhz, memory_clock_end_mhz;

  // DDR: two transfers per clock on each pin of the bus.
  [[nodiscard]] double memory_bandwidth_from_clocks() const {
    return 2.0 * memory_clock_max_mhz * 1e6 * memory_bus_bits / 8.0;
  }
};

// Everything a run produced.
struct BenchRun {
  DeviceInfo device;
  std::optional<std::string> hardware_id;
  std::string hardware_origin;
  std::string hardware_detail;
  std::optional<double> hardware_bandwidth_tbps;  // the matched file's memory bandwidth
  std::string started_utc;                        // ISO 8601
  double duration_s = 0;
  std::uint64_t seed = 0;
  bool quick = false;
  TimingPolicy policy;
  std::vector<std::string> suites;
  std::vector<BenchmarkResult> results;
  std::vector<std::string> notes;
  bool context_lost = false;  // a fatal CUDA error or hang stopped the run early
};

// The report of a run (kind "bench"): a table for the device, one for the run, one per result
// group of each suite that produced results, and the targets.
[[nodiscard]] Report make_report(const BenchRun& run, const nlohmann::json& inputs);

// The report of --list (kind "bench-cases").
[[nodiscard]] Report make_case_list(std::span<const SuiteInfo* const> selected, bool quick,
                                    const nlohmann::json& inputs);

// Ids of the results that failed verification.
[[nodiscard]] std::vector<std::string> failed_ids(const BenchRun& run);

}  // namespace roofline::bench
