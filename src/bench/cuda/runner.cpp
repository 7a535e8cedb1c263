// run_benchmarks(): detects the device, picks the cases, runs each suite's runner and gathers
// the results. A new suite adds its selection and runner below.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <exception>
#include <set>

#include "collectives_runner.hpp"
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

// The device this process benchmarks: --device, or under MPI local_rank % devices. Under MPI the
// ranks first agree that every one of them has a GPU, so that none waits in NCCL's bootstrap
// for a rank that has already given up.
DeviceInfo detect_this_device(const RunOptions& options) {
  if (options.mpi == nullptr) return cuda::detect_device(options.device);
  const mpi::Session& world = *options.mpi;
  std::optional<DeviceInfo> device;
  std::string why;
  try {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      (void)cuda::detect_device(0);  // throws the message that says why
    }
    if (world.local_size() > count) {
      throw NoDeviceError(
          fmt::format("{} ranks on host {} but {} GPU(s): one rank per GPU", world.local_size(), world.host(), count));
    }
    device = cuda::detect_device(world.local_rank() % count);
  } catch (const std::exception& e) {
    why = e.what();
  }
  const std::int64_t missing = world.sum(device ? 0 : 1);
  if (missing == 0) return *device;
  if (!device) {
    throw NoDeviceError(fmt::format("no GPU on rank {} of {} ({}): {}", world.rank(), world.size(), world.host(), why));
  }
  throw NoDeviceError(fmt::format("{} of {} ranks found no GPU", missing, world.size()));
}

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
  std::vector<const collectives::Case*> collectives;

  [[nodiscard]] std::size_t results() const {
    return memory.size() + compute.size() + layer_results + collectives.size();
  }
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
    } else if (suite->name == collectives::suite().name) {
      for (const collectives::Case& c : collectives::cases) {
        if (wanted(options, c.quick, collectives::case_id(c))) s.collectives.push_back(&c);
      }
    }
  }
  return s;
}

// Every result the selection records, not yet run: the run fills in what it never reached.
std::vector<BenchmarkResult> planned_results(const Selection& s, const DeviceInfo& d, bool quick, int ranks,
                                             const std::optional<LinkSpec>& link) {
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
  for (const collectives::Case* c : s.collectives) planned.push_back(collectives::make_result(*c, ranks, link));
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

  const bool only_collectives = selection.results() == selection.collectives.size();
  if (only_collectives && !cuda::collectives_built()) {
    throw NoDeviceError(cuda::collectives_missing());  // before any GPU is touched
  }
  run.device = detect_this_device(options);
  const int ranks = selection.collectives.empty() ? 1 : cuda::collective_ranks(options.mpi);
  if (only_collectives && ranks < 2) {
    throw NoDeviceError(fmt::format(
        "the collectives suite needs at least 2 GPUs: this host has {} (across hosts: one GPU per rank under mpirun, "
        "see docs/collectives.md)",
        ranks));
  }
  const GpuSpec* spec = options.hardware;
  if (options.hardware != nullptr) {
    run.hardware_id = options.hardware->id;
    run.hardware_origin = options.hardware->origin;
    run.hardware_detail = fmt::format("{} as named by --gpu", options.hardware->id);
    run.hardware_bandwidth_tbps = options.hardware->memory_bandwidth_tbps;
  } else {
    const HardwareMatch match = match_hardware(run.device.name, registry);
    run.hardware_detail = match.detail;
    spec = match.spec;
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

  const bool quiet = options.mpi != nullptr && options.mpi->rank() != 0;
  const std::optional<LinkSpec> link =
      spec != nullptr ? std::optional<LinkSpec>(collectives::model_link(*spec)) : std::nullopt;
  cuda::Recorder recorder(run.results, total, quiet);
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
    if (!selection.collectives.empty()) {
      if (cuda::collectives_built()) {
        cuda::run_collectives_suite(selection.collectives, run.policy, options.mpi, run.device.index, link, recorder,
                                    run.notes);
      } else {
        for (const collectives::Case* c : selection.collectives) {
          BenchmarkResult r = collectives::make_result(*c, ranks, link);
          r.disposition = Disposition::not_supported;
          r.detail = cuda::collectives_missing();
          recorder.record(std::move(r));
        }
      }
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
    for (BenchmarkResult& r : planned_results(selection, d, options.quick, ranks, link)) {
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
