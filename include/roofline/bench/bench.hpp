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
#include <functional>
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

// Why a case's sampling stopped: its relative noise fell under TimingPolicy::max_noise (after
// min_samples and min_time_s), it reached its sample count, or its time budget ran out.
enum class StopReason : std::uint8_t { noise, samples, budget };
inline constexpr std::array<std::string_view, 3> stop_reason_names{"noise", "samples", "budget"};
[[nodiscard]] constexpr std::string_view name_of(StopReason s) {
  return stop_reason_names[static_cast<std::size_t>(s)];
}

// How a case that claims HBM figures kept the L2 cold between samples: its launches rotate
// through input sets spanning at least twice the L2 (each launch evicts what the next set needs
// from L2 before it is read again), or, where they span less, the L2 is flushed before every
// sample (a write of twice its size, outside the timed region) and a sample is one rotation.
// not_claimed: the case makes no HBM claim (cache ceilings, compute, whole layers).
enum class ColdL2 : std::uint8_t { not_claimed, rotation, flush };
inline constexpr std::array<std::string_view, 3> cold_l2_names{"not_claimed", "rotation", "flush"};
[[nodiscard]] constexpr std::string_view name_of(ColdL2 c) {
  return cold_l2_names[static_cast<std::size_t>(c)];
}

// How the timed launches went: per-launch seconds over `count` samples, each sample the
// average of `launches_per_sample` back-to-back launches (replayed as one CUDA graph if
// `graph`), and the state of the GPU while they ran (clocks through NVML: absent where NVML is
// not, never a guess).
struct Timing {
  Summary seconds;
  int launches_per_sample = 1;
  bool graph = false;
  double noise = 0;  // relative standard deviation of the kept samples (nvbench's "stdrel")
  StopReason stopped_on = StopReason::samples;
  ColdL2 cold_l2 = ColdL2::not_claimed;
  int retaken = 0;                                        // samples dropped as throttled and taken again
  std::optional<double> sm_clock_mhz = std::nullopt;      // median SM clock over the kept samples
  std::optional<double> sm_clock_min_mhz = std::nullopt;  // the lowest of them
  std::optional<double> memory_clock_mhz = std::nullopt;  // after the last sample
  std::optional<double> power_w = std::nullopt;           // board power after the last sample
  // NVML's clock-event reasons seen (names, idle excluded); absent where NVML could not say.
  std::optional<std::vector<std::string>> throttle_reasons = std::nullopt;
  bool throttled = false;  // a kept sample ran below throttle_clock_fraction of the default clock
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
  // Whether its bandwidth is an HBM figure: the harness then keeps the L2 cold between samples
  // (ColdL2). Declared by the suite; cache ceilings, compute and layer results make no such claim.
  bool claims_hbm = false;

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

  // Whether the run recorded the parameter with a value (a null cell: no value, as where a column is
  // another row's only).
  [[nodiscard]] bool has(std::string_view key) const;
  // The parameter as a whole non-negative number, a text, a storage format, or a flag (true/false
  // or 1/0); InputError naming `where`, the id and the key when the run did not record it so.
  [[nodiscard]] std::int64_t whole(std::string_view key) const;
  [[nodiscard]] std::string text(std::string_view key) const;
  [[nodiscard]] DType dtype(std::string_view key) const;
  [[nodiscard]] bool flag(std::string_view key) const;
};

// The measurement fields of a result row as a run recorded them (columns::measurement: clocks,
// power, throttling, noise, cold L2); each absent in runs recorded before them, where NVML was
// missing, or where the result was not timed.
struct RecordedMeasurement {
  std::optional<double> sm_clock_mhz, sm_clock_min_mhz, mem_clock_mhz, power_w, noise_pct;
  std::optional<bool> throttled;
  std::optional<std::int64_t> retaken_samples;
  std::optional<std::string> throttle_reasons, stopped_on, cold_l2;
};
// Reads them from a result row; InputError naming `where` and the key for a value of the wrong type.
[[nodiscard]] RecordedMeasurement recorded_measurement(const nlohmann::json& row, std::string_view where);

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
// How the sampling went and the GPU's state while it ran (Timing).
Cell sm_clock_mhz(const BenchmarkResult& r);
Cell sm_clock_min_mhz(const BenchmarkResult& r);
Cell mem_clock_mhz(const BenchmarkResult& r);
Cell power_w(const BenchmarkResult& r);
Cell throttle_reasons(const BenchmarkResult& r);
Cell throttled(const BenchmarkResult& r);
Cell retaken_samples(const BenchmarkResult& r);
Cell noise_pct(const BenchmarkResult& r);
Cell stopped_on(const BenchmarkResult& r);
Cell cold_l2(const BenchmarkResult& r);
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

// How each result was measured: make_report appends these to every result table of every suite.
// The human table shows them as one `clock` column (readable()); JSON and CSV keep them all.
inline constexpr std::array<C, 10> measurement{{
    {{"sm_clock_mhz", "SM MHz", 0}, &cells::sm_clock_mhz},
    {{"sm_clock_min_mhz", "min SM MHz", 0}, &cells::sm_clock_min_mhz},
    {{"mem_clock_mhz", "mem MHz", 0}, &cells::mem_clock_mhz},
    {{"power_w", "power [W]", 0}, &cells::power_w},
    {{"throttle_reasons", "throttle reasons", 0}, &cells::throttle_reasons},
    {{"throttled", "throttled", 0}, &cells::throttled},
    {{"retaken_samples", "retaken", 0}, &cells::retaken_samples},
    {{"noise_pct", "noise %", 2}, &cells::noise_pct},
    {{"stopped_on", "stopped on", 0}, &cells::stopped_on},
    {{"cold_l2", "cold L2", 0}, &cells::cold_l2},
}};

// A column table composed of parts: join(std::to_array<C>({id, ...}), timing, std::to_array<C>({...})).
template <std::size_t... N>
constexpr std::array<C, (N + ...)> join(const std::array<C, N>&... parts) {
  std::array<C, (N + ...)> out{};
  std::size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(at)), at += N), ...);
  return out;
}
}  // namespace columns

// How the harness times a case. Sampling stops on noise (nvbench's criterion): once at least
// min_samples samples and min_time_s of sampled time are in, as soon as the relative standard
// deviation of the samples is at most max_noise; else at `samples` samples or when the case's
// budget (three quarters of max_case_s of sampled time) runs out. With the defaults a case keeps
// at most the fixed 30 samples it took before, and 10 where its noise settles (docs/bench.md).
struct TimingPolicy {
  int samples = 30;                // the most timed samples (each a batch of launches)
  int min_warmup_launches = 10;    // at least this many untimed launches first ...
  double min_warmup_s = 0.025;     // ... and at least this long
  double target_sample_s = 0.002;  // a sample lasts about this long (launches are batched)
  int max_launches_per_sample = 1000;
  // Long launches (a naive GEMM of 8192^3 takes a second) get fewer warm-up launches and samples:
  // a case's timing stays near this many seconds, with at least budget_min_samples samples.
  double max_case_s = 2.0;
  int budget_min_samples = 3;
  // Noise-based stopping; no max_noise: a fixed count of `samples` (--quick).
  int min_samples = 10;
  double min_time_s = 0.02;
  std::optional<double> max_noise = 0.005;
  // A sample that ran below throttle_clock_fraction of the default SM clock is dropped and taken
  // again, at most max_throttle_retakes times per case and within its budget; keep_throttled
  // keeps every sample (the result is flagged either way).
  int max_throttle_retakes = 5;
  bool keep_throttled = false;
  double timeout_s = 60;  // any single wait for the GPU longer than this is a hang
  // Check every case and run each of its rotating input sets once, but time nothing (for
  // compute-sanitizer, which slows kernels down too much for timing and checks accesses only).
  bool check_only = false;
};

// The timing flags of `roofline bench`, each unset where the user did not give it.
struct TimingFlags {
  std::optional<int> samples = std::nullopt;           // --samples
  std::optional<int> min_samples = std::nullopt;       // --min-samples
  std::optional<double> min_time_s = std::nullopt;     // --min-time
  std::optional<double> max_noise_pct = std::nullopt;  // --max-noise, in percent
  bool keep_throttled = false;                         // --keep-throttled
};
// The default policy (or --quick's small fixed plan) with the flags applied; InputError naming
// the flag for a value out of range.
[[nodiscard]] TimingPolicy timing_policy(bool quick, const TimingFlags& flags);
[[nodiscard]] TimingPolicy timing_policy(bool quick, std::optional<int> samples);

// The harness's arithmetic, from the first launch's time: warm-up launches (at least
// min_warmup_launches and min_warmup_s, within a quarter of max_case_s, at least one) ...
[[nodiscard]] int warmup_launches(const TimingPolicy& policy, double first_launch_s);
// ... and, from the warm-up's time per launch, the launches per sample (about target_sample_s,
// whole rotations of the input sets; with an L2 flush before every sample, one rotation, so that
// every launch reads inputs the flush evicted) and the samples at most (policy.samples, fewer --
// down to budget_min_samples -- when they would take past three quarters of max_case_s).
struct SamplePlan {
  int batch = 1;
  int samples = 1;
};
[[nodiscard]] SamplePlan sample_plan(const TimingPolicy& policy, double launch_s, int rotation,
                                     ColdL2 cold_l2 = ColdL2::not_claimed);

// How a case keeps the L2 cold (ColdL2): from its claim, the bytes one launch streams through L2,
// the input sets its launches rotate through and the device's L2.
[[nodiscard]] ColdL2 cold_l2_method(bool claims_hbm, double bytes_per_launch, int rotation, std::int64_t l2_bytes);

// ---- clocks, power and throttling -------------------------------------------------------------

// Below this share of the default SM clock a sample counts as throttled: on the H200 the SM
// clock falls from 1980 MHz to about 1480 MHz under sustained tensor-core load (DESIGN.md).
inline constexpr double throttle_clock_fraction = 0.75;
// Whether a sample at `sm_clock_mhz` ran throttled; never without both clocks.
[[nodiscard]] bool is_throttled(std::optional<double> sm_clock_mhz, std::optional<double> default_sm_clock_mhz);

// NVML's clock-event ("throttle") reasons, bit by bit (nvml.h, nvmlClocksEventReason*), as the
// names the report uses. Idle is no throttling and is left out.
struct ThrottleReason {
  std::uint64_t bit;
  std::string_view name;
};
inline constexpr std::array<ThrottleReason, 8> throttle_reasons{{
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};
inline constexpr std::uint64_t nvml_reason_gpu_idle = 0x1;
// The names of the reasons set in `mask`, in bit order; bits NVML may add later are named
// "reason_0x...", never dropped.
[[nodiscard]] std::vector<std::string> throttle_reason_names(std::uint64_t mask);

// What NVML says about the GPU at one moment; each figure absent where NVML or the call is not.
struct GpuState {
  std::optional<double> sm_clock_mhz = std::nullopt;
  std::optional<double> memory_clock_mhz = std::nullopt;
  std::optional<double> power_w = std::nullopt;
  std::optional<std::uint64_t> throttle_reasons = std::nullopt;  // NVML's bitmask
};

// Reads the GPU's state between samples: NVML in the CUDA runner (nvml_library.hpp); the unit
// tests feed their own clocks.
class GpuMonitor {
 public:
  GpuMonitor() = default;
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;
  virtual ~GpuMonitor() = default;
  // Clocks, power and reasons: before the first and after the last sample of a case.
  [[nodiscard]] virtual GpuState state() = 0;
  // The SM clock and the reasons only: after every sample.
  [[nodiscard]] virtual GpuState sample_state() = 0;
};

// One case's sampling loop: `take_sample` runs one timed sample on the GPU (outside this code:
// launches, events, any L2 flush) and returns its seconds per launch; `monitor` is read
// between samples only, so that no NVML call falls inside a timed region. Throttled samples are
// dropped and re-taken (TimingPolicy), noise decides when to stop (StopReason). Fills every
// field of Timing but launches_per_sample, graph and cold_l2.
[[nodiscard]] Timing take_samples(const TimingPolicy& policy, const SamplePlan& plan,
                                  std::optional<double> default_sm_clock_mhz, GpuMonitor& monitor,
                                  const std::function<double()>& take_sample);

// What a result's detail adds about its sampling: throttled samples it kept (and why), empty
// when there were none.
[[nodiscard]] std::string throttle_note(const Timing& timing, const TimingPolicy& policy,
                                        std::optional<double> default_sm_clock_mhz);

// The relative standard deviation of `values` (sample standard deviation over the mean); 0 for
// fewer than two values.
[[nodiscard]] double relative_noise(std::span<const double> values);

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
  // The SM clock the throttle rule compares with (NVML's default applications clock, else its
  // maximum clock) and where it came from (device.cpp says why).
  std::optional<double> sm_clock_default_mhz;
  std::string sm_clock_default_source;

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

// The report as a person reads it (the table format): in every result table the measurement
// columns give way to one `clock` column, the median SM clock in MHz with a `*` where the result
// ran throttled.
[[nodiscard]] Report readable(Report report);

// The report of --list (kind "bench-cases").
[[nodiscard]] Report make_case_list(std::span<const SuiteInfo* const> selected, bool quick,
                                    const nlohmann::json& inputs);

// Ids of the results that failed verification.
[[nodiscard]] std::vector<std::string> failed_ids(const BenchRun& run);

}  // namespace roofline::bench
