// roofline bench: runs the microbenchmarks on the local GPU, checks every kernel's output, and
// reports measured bandwidth next to the model's byte counts (see docs/bench.md).
#include "bench.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "plot.hpp"
#include "roofline/bench/bench_runner.hpp"
#include "roofline/bench/mpi.hpp"
#include "roofline/core/error.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {
namespace {

// The command line as the process received it (Linux), for the report's provenance.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  std::string arg;
  const auto flush = [&] {
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\"'\\$") == std::string::npos;
    line += plain ? arg : "'" + arg + "'";
    arg.clear();
  };
  for (char ch : raw) {
    if (ch == '\0') {
      flush();
    } else {
      arg += ch;
    }
  }
  if (!arg.empty()) flush();
  return line;
}

std::vector<std::string> split_filters(const std::vector<std::string>& values) {
  std::vector<std::string> filters;
  for (const std::string& value : values) {
    std::stringstream in(value);
    std::string piece;
    while (std::getline(in, piece, ',')) {
      if (piece.empty()) throw InputError("--filter: empty pattern");
      filters.push_back(piece);
    }
  }
  return filters;
}

// Under MPI every rank runs the suite and gets the same results; rank 0 alone reports. The ranks
// agree on the outcome first, so that a failure on one rank ends all of them with one message
// (from rank 0) and one exit code, and none is left waiting.
[[noreturn]] void finish_mpi_rank(std::optional<mpi::Session>& session, int code) {
  session.reset();  // MPI_Finalize
  std::cout.flush();
  std::exit(code);
}

std::optional<bench::BenchRun> run_agreed(const bench::RunOptions& run_options, const HardwareRegistry& registry,
                                          std::optional<mpi::Session>& session) {
  std::int64_t code = 0;
  std::string message;
  std::optional<bench::BenchRun> run;
  try {
    run = bench::run_benchmarks(run_options, registry);
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    message = e.what();
  } catch (const std::exception& e) {
    code = 70;
    message = e.what();
  }
  const std::int64_t agreed = session->max(code);
  if (agreed == 0) return run;
  // Rank 0 prints before any rank exits: mpirun ends the job at the first non-zero exit.
  if (session->rank() == 0) {
    if (code == 0) message = "another rank failed (its message is in its own output)";
    std::cerr << "roofline: " << (agreed == 70 ? "internal error: " : "") << message << std::endl;
  }
  session->barrier();
  finish_mpi_rank(session, static_cast<int>(agreed));
  return std::nullopt;
}

void run_bench(const BenchOptions& options) {
  const std::vector<const bench::SuiteInfo*> suites = bench::select_suites(options.suite);
  if (options.list) {
    emit(run_bench_list(options), options.common);
    return;
  }
  if (options.mpi_selftest) {
    const mpi::Session session;
    const std::string line = mpi::selftest(session);
    if (!line.empty()) std::cout << line << '\n';
    return;
  }
  const bool use_mpi = options.mpi || (mpi::launched() && options.suite == "collectives");
  if (use_mpi && options.suite != "collectives") {
    throw InputError("--mpi: only --suite collectives runs one rank per GPU");
  }
  (void)bench::timing_policy(options.quick, options.timing);  // flag errors before touching the GPU
  if (!(options.timeout_s >= 1 && options.timeout_s <= 86400)) {
    throw InputError("--timeout: must be between 1 and 86400 seconds");
  }
  const HardwareRegistry registry = load_registry(options.common);
  bench::RunOptions run_options;
  run_options.suites = suites;
  run_options.quick = options.quick;
  run_options.filters = split_filters(options.filters);
  run_options.timing = options.timing;
  run_options.seed = options.seed;
  run_options.device = options.device;
  run_options.timeout_s = options.timeout_s;
  run_options.check_only = options.check_only;
  if (options.gpu) run_options.hardware = &registry.find(*options.gpu);

  std::optional<mpi::Session> session;
  if (use_mpi) {
    session.emplace();
    run_options.mpi = &*session;
    // Every rank draws the same inputs and records the same seed.
    std::uint64_t seed = run_options.seed.value_or(
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()));
    session->broadcast(&seed, sizeof seed);
    run_options.seed = seed;
  }
  const bench::BenchRun run =
      session ? *run_agreed(run_options, registry, session) : bench::run_benchmarks(run_options, registry);
  if (session && session->rank() != 0) {
    finish_mpi_rank(session, bench::failed_ids(run).empty() && !run.context_lost ? 0 : 1);
  }
  nlohmann::json inputs = bench_inputs(options);
  inputs["seed"] = run.seed;
  inputs["mpi_ranks"] = session ? nlohmann::json(session->size()) : nlohmann::json(nullptr);
  const Report report = bench::make_report(run, inputs);
  Report shown = parse_format(options.common.format) == Format::table ? bench::readable(report) : report;
  if (draws_figures(options.common)) shown.figures = bench_figures(to_json(report), registry);
  emit(shown, options.common);
  if (options.json_path) write_file_atomically(*options.json_path, to_json(report).dump(2) + "\n", "--json");

  const std::vector<std::string> failed = bench::failed_ids(run);
  if (run.context_lost) {
    // A stuck or broken device can block the CUDA runtime's own teardown at exit: leave now,
    // with the report written.
    std::cerr << "roofline: the run stopped early (see the notes); exiting without CUDA teardown\n";
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(static_cast<int>(ExitCode::check_failed));
  }
  if (!failed.empty()) {
    throw CheckFailed(fmt::format("{} benchmark{} failed verification: {}", failed.size(),
                                  failed.size() == 1 ? "" : "s", fmt::join(failed, ", ")));
  }
}

}  // namespace

nlohmann::json bench_inputs(const BenchOptions& options) {
  return {
      {"suite", options.suite},
      {"quick", options.quick},
      {"filter", options.filters},
      {"samples", options.timing.samples ? nlohmann::json(*options.timing.samples) : nlohmann::json(nullptr)},
      {"min_samples",
       options.timing.min_samples ? nlohmann::json(*options.timing.min_samples) : nlohmann::json(nullptr)},
      {"min_time_s", options.timing.min_time_s ? nlohmann::json(*options.timing.min_time_s) : nlohmann::json(nullptr)},
      {"max_noise_pct",
       options.timing.max_noise_pct ? nlohmann::json(*options.timing.max_noise_pct) : nlohmann::json(nullptr)},
      {"keep_throttled", options.timing.keep_throttled},
      {"seed", options.seed ? nlohmann::json(*options.seed) : nlohmann::json(nullptr)},
      {"check_only", options.check_only},
      {"device", options.device},
      {"gpu", options.gpu ? nlohmann::json(*options.gpu) : nlohmann::json(nullptr)},
      {"mpi", options.mpi},
      {"command_line", command_line()}};
}

Report run_bench_list(const BenchOptions& options) {
  const std::vector<const bench::SuiteInfo*> suites = bench::select_suites(options.suite);
  const std::vector<std::string> filters = split_filters(options.filters);
  Report report = bench::make_case_list(suites, options.quick, bench_inputs(options));
  if (!filters.empty()) {
    std::erase_if(report.tables.front().rows, [&filters](const std::vector<Cell>& row) {
      return !bench::selected_by_filters(std::get<std::string>(row[2]), filters);
    });
  }
  return report;
}

void setup_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "Run the microbenchmarks on this machine's GPU: every kernel is checked against a host reference, then timed "
      "(bandwidth = bytes read + bytes written per second; 1 TB/s = 1e12 B/s). Exit code 3 without a GPU or CUDA "
      "build, "
      "1 if a check failed");
  std::vector<std::string> suite_names;
  for (const bench::SuiteInfo& s : bench::suites()) suite_names.emplace_back(s.name);
  command->add_option(
      "--suite", options->suite,
      fmt::format("Suites to run: {} or all (a comma-separated list works too)", fmt::join(suite_names, ", ")));
  command->add_flag("--quick", options->quick,
                    "Small buffers, a subset of cases and few samples: checks every kernel in about a minute");
  command->add_flag("--list", options->list, "List the cases (with --quick, --filter: those selected); needs no GPU");
  command->add_flag("--check-only", options->check_only,
                    "Check every case (and run each rotating input set once) but time nothing: for compute-sanitizer");
  command->add_option("--filter", options->filters,
                      "Run only cases whose id contains one of these comma-separated texts (e.g. gemv.bf16.8192x8192)");
  command->add_option("--samples", options->timing.samples,
                      "The most timed samples per case (default 30; with --quick a fixed 5)");
  command->add_option("--min-samples", options->timing.min_samples,
                      "Samples before sampling may stop on noise (default 10, at most --samples)");
  command->add_option("--min-time", options->timing.min_time_s,
                      "Seconds of sampled time before sampling may stop on noise (default 0.02)");
  command->add_option("--max-noise", options->timing.max_noise_pct,
                      "Stop sampling once the relative standard deviation of the samples is at most PCT percent "
                      "(default 0.5; --quick: a fixed count unless given)");
  command->add_flag("--keep-throttled", options->timing.keep_throttled,
                    "Keep samples taken below 75% of the default SM clock (flagged) instead of taking them again");
  command->add_option("--seed", options->seed,
                      "Seed of the random inputs (default: from the clock; the report records it)");
  command->add_option("--device", options->device, "CUDA device index (default 0)");
  command->add_option("--timeout", options->timeout_s,
                      "Seconds any single wait for the GPU may take before the run is stopped as hung (default 60)");
  command->add_option("--gpu", options->gpu, "Hardware file to report against (default: matched by the device's name)");
  command->add_option("--json", options->json_path, "Also write the JSON report to FILE (atomically)");
  command->add_flag("--mpi", options->mpi,
                    "Collectives across hosts: one rank per GPU under mpirun (GPU = local rank % devices), NCCL "
                    "bootstrapped through MPI; rank 0 writes the report. On by itself under mpirun with --suite "
                    "collectives. Keep NCCL_NVLS_ENABLE=0 (roofline sets it when unset; docs/collectives.md)");
  command->add_flag("--mpi-selftest", options->mpi_selftest,
                    "Only check the MPI bootstrap: rank 0 broadcasts a token and prints how many ranks received it "
                    "(needs no GPU)");
  add_common_options(*command, options->common);
  command->callback([options] { run_bench(*options); });
}

}  // namespace roofline::cli
