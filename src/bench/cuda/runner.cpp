// run_benchmarks(): detects the device, picks the cases, runs each suite's runner and gathers
// the results. A new suite adds its SuiteRun and one line in cuda_suites below.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <exception>
#include <memory>
#include <set>

#include "collectives_runner.hpp"
#include "compute_runner.hpp"
#include "harness.hpp"
#include "layer_runner.hpp"
#include "memory_runner.hpp"
#include "roofline/bench/bench_runner.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/bench/memory_suite.hpp"
#include "roofline/core/error.hpp"

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

bool wanted(const RunOptions& options, bool quick_case, const std::string& id) {
  return (!options.quick || quick_case) && selected_by_filters(id, options.filters);
}

// What a suite's part of a run needs from the run: the device, the policy and where results go.
struct SuiteContext {
  const RunOptions& options;
  const BenchRun& run;  // device, policy, seed
  int ranks = 1;        // GPUs a collective spans
  std::optional<LinkSpec> link;
};

// One suite's part of a run: its cases, chosen before the GPU is touched.
class SuiteRun {
 public:
  SuiteRun() = default;
  SuiteRun(const SuiteRun&) = delete;
  SuiteRun& operator=(const SuiteRun&) = delete;
  virtual ~SuiteRun() = default;
  // The results its cases record (a layer case records the layer and each of its stages).
  [[nodiscard]] virtual std::size_t results() const = 0;
  // Whether it needs several GPUs (the collectives); a run of such suites alone checks them first.
  [[nodiscard]] virtual bool spans_gpus() const { return false; }
  virtual void run(cuda::Context& ctx, const SuiteContext& s, cuda::Recorder& recorder,
                   std::vector<std::string>& notes) const = 0;
  // Every result its cases record, not yet run: the run fills in what it never reached.
  [[nodiscard]] virtual std::vector<BenchmarkResult> planned(const SuiteContext& s) const = 0;
};

class MemoryRun final : public SuiteRun {
 public:
  explicit MemoryRun(const RunOptions& options) {
    for (const memory::Case& c : memory::cases) {
      if (wanted(options, c.quick, memory::case_id(c))) cases_.push_back(&c);
    }
  }
  [[nodiscard]] std::size_t results() const override { return cases_.size(); }
  void run(cuda::Context& ctx, const SuiteContext& s, cuda::Recorder& recorder,
           std::vector<std::string>& notes) const override {
    cuda::run_memory_suite(ctx, cases_, s.options.quick, s.run.seed, recorder, notes);
  }
  [[nodiscard]] std::vector<BenchmarkResult> planned(const SuiteContext& s) const override {
    const memory::Sizes sizes = memory::plan_sizes(s.run.device.l2_bytes, s.run.device.sms, s.options.quick);
    std::vector<BenchmarkResult> out;
    for (const memory::Case* c : cases_) out.push_back(memory::make_result(*c, sizes));
    return out;
  }

 private:
  std::vector<const memory::Case*> cases_;
};

class ComputeRun final : public SuiteRun {
 public:
  explicit ComputeRun(const RunOptions& options) {
    for (const compute::PeakCase& c : compute::peak_cases) {
      if (wanted(options, c.quick, compute::case_id(c.impl))) selection_.peaks.push_back(&c);
    }
    for (const compute::GemmCase& c : compute::all_gemm_cases()) {
      if (wanted(options, c.quick, compute::case_id(c))) selection_.gemms.push_back(&c);
    }
    for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
      if (wanted(options, c.quick, compute::case_id(c))) selection_.grouped.push_back(&c);
    }
    for (const compute::AttentionCase& c : compute::attention_cases) {
      if (wanted(options, c.quick, compute::case_id(c))) selection_.attention.push_back(&c);
    }
  }
  [[nodiscard]] std::size_t results() const override { return selection_.size(); }
  void run(cuda::Context& ctx, const SuiteContext& s, cuda::Recorder& recorder,
           std::vector<std::string>& notes) const override {
    cuda::run_compute_suite(ctx, selection_, s.options.quick, s.run.seed, recorder, notes);
  }
  [[nodiscard]] std::vector<BenchmarkResult> planned(const SuiteContext& s) const override {
    std::vector<BenchmarkResult> out;
    for (const compute::PeakCase* c : selection_.peaks) {
      out.push_back(compute::make_result(c->impl, cuda::peak_cost(c->impl, s.run.device.sms, s.options.quick)));
    }
    for (const compute::GemmCase* c : selection_.gemms) out.push_back(compute::make_result(*c));
    for (const compute::GroupedGemmCase* c : selection_.grouped) out.push_back(compute::make_result(*c));
    for (const compute::AttentionCase* c : selection_.attention) out.push_back(compute::make_result(*c));
    return out;
  }

 private:
  cuda::ComputeSelection selection_;
};

class LayerRun final : public SuiteRun {
 public:
  explicit LayerRun(const RunOptions& options) {
    for (const layer::Case& c : layer::cases) {
      if (wanted(options, c.quick, layer::case_id(c))) {
        cases_.push_back(&c);
        results_ += 1 + layer::stages(c).size();
      }
    }
  }
  [[nodiscard]] std::size_t results() const override { return results_; }
  void run(cuda::Context& ctx, const SuiteContext& s, cuda::Recorder& recorder,
           std::vector<std::string>& notes) const override {
    cuda::run_layer_suite(ctx, cases_, s.options.quick, s.run.seed, recorder, notes);
  }
  [[nodiscard]] std::vector<BenchmarkResult> planned(const SuiteContext& /*s*/) const override {
    std::vector<BenchmarkResult> out;
    for (const layer::Case* c : cases_) {
      for (BenchmarkResult& r : layer::make_results(*c)) out.push_back(std::move(r));
    }
    return out;
  }

 private:
  std::vector<const layer::Case*> cases_;
  std::size_t results_ = 0;
};

class CollectivesRun final : public SuiteRun {
 public:
  explicit CollectivesRun(const RunOptions& options) {
    for (const collectives::Case& c : collectives::cases) {
      if (wanted(options, c.quick, collectives::case_id(c))) cases_.push_back(&c);
    }
  }
  [[nodiscard]] std::size_t results() const override { return cases_.size(); }
  [[nodiscard]] bool spans_gpus() const override { return true; }
  void run(cuda::Context& /*ctx*/, const SuiteContext& s, cuda::Recorder& recorder,
           std::vector<std::string>& notes) const override {
    if (cuda::collectives_built()) {
      cuda::run_collectives_suite(cases_, s.run.policy, s.options.mpi, s.run.device.index, s.link, recorder, notes);
      return;
    }
    for (BenchmarkResult& r : planned(s)) {
      r.disposition = Disposition::not_supported;
      r.detail = cuda::collectives_missing();
      recorder.record(std::move(r));
    }
  }
  [[nodiscard]] std::vector<BenchmarkResult> planned(const SuiteContext& s) const override {
    std::vector<BenchmarkResult> out;
    for (const collectives::Case* c : cases_) out.push_back(collectives::make_result(*c, s.ranks, s.link));
    return out;
  }

 private:
  std::vector<const collectives::Case*> cases_;
};

// The CUDA runners, one line per suite, under the names of the registry (src/bench/suites.cpp).
struct CudaSuite {
  std::string_view name;
  std::unique_ptr<SuiteRun> (*select)(const RunOptions& options);
};
template <typename Run>
std::unique_ptr<SuiteRun> select(const RunOptions& options) {
  return std::make_unique<Run>(options);
}
constexpr std::array<CudaSuite, 4> cuda_suites{{
    {"memory", &select<MemoryRun>},
    {"compute", &select<ComputeRun>},
    {"layer", &select<LayerRun>},
    {"collectives", &select<CollectivesRun>},
}};

// The selected suites' runs, in the registry's order (whatever order --suite named them in).
std::vector<std::unique_ptr<SuiteRun>> select_cases(const RunOptions& options, std::vector<std::string>& suite_names) {
  for (const SuiteInfo* suite : options.suites) {
    suite_names.emplace_back(suite->name);
    if (std::none_of(cuda_suites.begin(), cuda_suites.end(),
                     [suite](const CudaSuite& c) { return c.name == suite->name; })) {
      throw InputError(fmt::format("--suite: suite '{}' has no CUDA runner in this build", suite->name));
    }
  }
  std::vector<std::unique_ptr<SuiteRun>> selected;
  for (const CudaSuite& c : cuda_suites) {
    if (std::any_of(options.suites.begin(), options.suites.end(),
                    [&c](const SuiteInfo* suite) { return suite->name == c.name; })) {
      selected.push_back(c.select(options));
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
  run.policy = timing_policy(options.quick, options.timing);
  run.policy.timeout_s = options.timeout_s;
  run.policy.check_only = options.check_only;
  run.seed =
      options.seed.value_or(static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()));

  const std::vector<std::unique_ptr<SuiteRun>> selection = select_cases(options, run.suites);
  std::size_t total = 0;
  std::size_t spanning = 0;  // results of suites that need several GPUs
  for (const auto& suite : selection) {
    total += suite->results();
    if (suite->spans_gpus()) spanning += suite->results();
  }
  if (total == 0) throw InputError("--filter: no benchmark case matches (see roofline bench --list)");

  const bool only_collectives = total == spanning;
  if (only_collectives && !cuda::collectives_built()) {
    throw NoDeviceError(cuda::collectives_missing());  // before any GPU is touched
  }
  run.device = detect_this_device(options);
  const int ranks = spanning == 0 ? 1 : cuda::collective_ranks(options.mpi);
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
  const SuiteContext context{options, run, ranks, link};
  std::optional<std::string> hang;  // the message of a hang: the first case without a result hung
  try {
    for (const auto& suite : selection) {
      if (suite->results() > 0) suite->run(ctx, context, recorder, run.notes);
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
    std::vector<BenchmarkResult> planned;
    for (const auto& suite : selection) {
      for (BenchmarkResult& r : suite->planned(context)) planned.push_back(std::move(r));
    }
    for (BenchmarkResult& r : planned) {
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
