// run_benchmarks(): detects the device, picks the cases, runs each suite's runner and gathers
// the results. A new suite adds its runner to `runners` below.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <exception>

#include "harness.hpp"
#include "memory_runner.hpp"
#include "roofline/bench_runner.hpp"
#include "roofline/error.hpp"
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

std::vector<const memory::Case*> memory_cases(const RunOptions& options) {
  std::vector<const memory::Case*> selected;
  for (const memory::Case& c : memory::cases) {
    if ((!options.quick || c.quick) && selected_by_filters(memory::case_id(c), options.filters)) {
      selected.push_back(&c);
    }
  }
  return selected;
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

  // Which cases run, decided before the GPU is touched.
  std::vector<const memory::Case*> memory_selected;
  std::size_t total = 0;
  for (const SuiteInfo* suite : options.suites) {
    run.suites.emplace_back(suite->name);
    if (suite->name == memory::suite().name) {
      memory_selected = memory_cases(options);
      total += memory_selected.size();
    }
  }
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
  fmt::print(stderr, "roofline bench: {} cases, {} samples each, seed {}{}\n", total, run.policy.samples, run.seed,
             options.quick ? " (--quick)" : "");

  cuda::Recorder recorder(run.results, total);
  std::optional<std::string> hang;  // the message of a hang: the first case without a result hung
  try {
    if (!memory_selected.empty()) {
      cuda::run_memory_suite(ctx, memory_selected, options.quick, run.seed, recorder, run.notes);
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
  // Cases the run never reached (after a hang) are listed as not run.
  if (run.results.size() < total) {
    for (const memory::Case* c : memory_selected) {
      const std::string id = memory::case_id(*c);
      const bool done =
          std::any_of(run.results.begin(), run.results.end(), [&id](const BenchmarkResult& r) { return r.id == id; });
      if (!done) {
        BenchmarkResult r = memory::make_result(*c, memory::plan_sizes(d.l2_bytes, d.sms, options.quick));
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
