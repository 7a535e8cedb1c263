// run_benchmarks(): detects the device, picks the cases, runs each suite's runner and gathers
// the results. A new suite adds its selection and runner below.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <exception>
#include <set>

#include "compute_runner.hpp"
#include "harness.hpp"
#include "layer_runner.hpp"
#include "memory_runner.hpp"
#include "roofline/bench_runner.hpp"
#include "roofline/compute_suite.hpp"
#include "roofline/error.hpp"
#include "roofline/layer_suite.hpp"
#include "roofline/memory_suite.hpp"

namespace roofline::bench {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

// The cases each suite will run, decided before the GPU is touched.
struct Selection {
  std::vector<const memory::Case*> memory;
  cuda::ComputeSelection compute;
  std::vector<const layer::Case*> layers;
  std::size_t layer_results = 0;  // a layer case records the layer and each of its stages

  [[nodiscard]] std::size_t results() const { return memory.size() + compute.size() + layer_results; }
};

bool wanted(const RunOptions& options, bool quick_case, const std::string& id) {
  return (!options.quick || quick_case) && selected_by_filters(id, options.filters);
}

Selection select_cases(const RunOptions& options, std::vector<std::string>& suite_names) {
  Selection s;
  for (const SuiteInfo* suite : options.suites) {
    suite_names.emplace_back(suite->name);
    if (suite->name == memory::suite().name) {
      for (const memory::Case& c : memory::cases) {
        if (wanted(options, c.quick, memory::case_id(c))) s.memory.push_back(&c);
      }
    } else if (suite->name == compute::suite().name) {
      for (const compute::PeakCase& c : compute::peak_cases) {
        if (wanted(options, c.quick, compute::case_id(c.impl))) s.compute.peaks.push_back(&c);
      }
      for (const compute::GemmCase& c : compute::gemm_cases) {
        if (wanted(options, c.quick, compute::case_id(c))) s.compute.gemms.push_back(&c);
      }
      for (const compute::AttentionCase& c : compute::attention_cases) {
        if (wanted(options, c.quick, compute::case_id(c))) s.compute.attention.push_back(&c);
      }
    } else if (suite->name == layer::suite().name) {
      for (const layer::Case& c : layer::cases) {
        if (wanted(options, c.quick, layer::case_id(c))) {
          s.layers.push_back(&c);
          s.layer_results += 1 + layer::stages(c).size();
        }
      }
    }
  }
  return s;
}

// Every result the selection records, not yet run: the run fills in what it never reached.
std::vector<BenchmarkResult> planned_results(const Selection& s, const DeviceInfo& d, bool quick) {
  std::vector<BenchmarkResult> planned;
  const memory::Sizes sizes = memory::plan_sizes(d.l2_bytes, d.sms, quick);
  for (const memory::Case* c : s.memory) planned.push_back(memory::make_result(*c, sizes));
  for (const compute::PeakCase* c : s.compute.peaks) {
    planned.push_back(compute::make_result(c->impl, cuda::peak_cost(c->impl, d.sms, quick)));
  }
  for (const compute::GemmCase* c : s.compute.gemms) planned.push_back(compute::make_result(*c));
  for (const compute::AttentionCase* c : s.compute.attention) planned.push_back(compute::make_result(*c));
  for (const layer::Case* c : s.layers) {
    for (BenchmarkResult& r : layer::make_results(*c)) planned.push_back(std::move(r));
  }
  return planned;
}

}  // namespace

bool cuda_benchmarks_built() {
  return true;
}

BenchRun run_benchmarks(const RunOptions& options, const HardwareRegistry& registry) {
  const auto started = std::chrono::steady_clock::now();
  BenchRun run;
  run.started_utc = utc_now();
  run.quick = options.quick;
  run.policy = timing_policy(options.quick, options.samples);
  run.policy.timeout_s = options.timeout_s;
  run.policy.check_only = options.check_only;
  run.seed =
      options.seed.value_or(static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()));

  const Selection selection = select_cases(options, run.suites);
  const std::size_t total = selection.results();
  if (total == 0) throw InputError("--filter: no benchmark case matches (see roofline bench --list)");

  run.device = cuda::detect_device(options.device);
  if (options.hardware != nullptr) {
    run.hardware_id = options.hardware->id;
    run.hardware_origin = options.hardware->origin;
    run.hardware_detail = fmt::format("{} as named by --gpu", options.hardware->id);
    run.hardware_bandwidth_tbps = options.hardware->memory_bandwidth_tbps;
  } else {
    const HardwareMatch match = match_hardware(run.device.name, registry);
    run.hardware_detail = match.detail;
    if (match.spec != nullptr) {
      run.hardware_id = match.spec->id;
      run.hardware_origin = match.spec->origin;
      run.hardware_bandwidth_tbps = match.spec->memory_bandwidth_tbps;
    }
  }

  cuda::Context ctx(run.device, run.policy);
  try {
    run.device.cublas_version = ctx.cublas().version;
  } catch (const cuda::CudaError& e) {
    run.notes.push_back(fmt::format("cuBLAS unavailable, its cases will fail: {}", e.what()));
    fmt::print(stderr, "roofline bench: {}\n", e.what());
  }
  const DeviceInfo& d = run.device;
  fmt::print(stderr,
             "roofline bench: {} (sm_{}{}, {} SMs, L2 {:.0f} MiB, {:.0f} GiB, bus {} bit, driver API {}, runtime {}, "
             "cuBLAS {}); {}\n",
             d.name, d.compute_major, d.compute_minor, d.sms, static_cast<double>(d.l2_bytes) / (1 << 20),
             static_cast<double>(d.memory_bytes) / (1 << 30), d.memory_bus_bits, d.driver_version, d.runtime_version,
             d.cublas_version, run.hardware_detail);
  fmt::print(stderr, "roofline bench: {} results from {} suites, {} samples each, seed {}{}\n", total,
             run.suites.size(), run.policy.samples, run.seed, options.quick ? " (--quick)" : "");

  cuda::Recorder recorder(run.results, total);
  std::optional<std::string> hang;  // the message of a hang: the first case without a result hung
  try {
    if (!selection.memory.empty()) {
      cuda::run_memory_suite(ctx, selection.memory, options.quick, run.seed, recorder, run.notes);
    }
    if (selection.compute.size() > 0) {
      cuda::run_compute_suite(ctx, selection.compute, options.quick, run.seed, recorder, run.notes);
    }
    if (!selection.layers.empty()) {
      cuda::run_layer_suite(ctx, selection.layers, options.quick, run.seed, recorder, run.notes);
    }
  } catch (const cuda::GpuHang& e) {
    run.context_lost = true;
    hang = e.what();
    run.notes.push_back(fmt::format("stopped early: {}", e.what()));
  }
  if (ctx.health().lost) {
    run.context_lost = true;
    run.notes.push_back("stopped early: a CUDA error left the device unusable; later cases were not run");
  }
  // Results the run never reached (after a hang) are listed: the first as failed by the hang.
  if (run.results.size() < total) {
    std::set<std::string> done;
    for (const BenchmarkResult& r : run.results) done.insert(r.id);
    for (BenchmarkResult& r : planned_results(selection, d, options.quick)) {
      if (done.contains(r.id)) continue;
      if (hang) {
        r.disposition = Disposition::failed;
        r.detail = *hang;
        hang.reset();
      } else {
        r.disposition = Disposition::not_run;
        r.detail = "the run stopped before this case";
      }
      run.results.push_back(std::move(r));
    }
  }

  if (!ctx.health().hung) {
    const cuda::Clocks clocks = cuda::current_clocks(run.device.pci_bus_id);
    run.device.sm_clock_end_mhz = clocks.sm_mhz;
    run.device.memory_clock_end_mhz = clocks.memory_mhz;
  }
  relate(run.results);
  run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace roofline::bench
