// Fuzzes `roofline serve ...` end to end: its flags (CLI11), length distributions, rates, SLOs,
// engine settings, the simulated engine and the JSON printer. The input is split on newlines into
// arguments after "roofline serve"; flags that name files are left out (the trace reader has its
// own harness, serve_trace), and --requests is fixed at 16 so that one input stays a short run.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/commands.hpp"
#include "roofline/core/error.hpp"

namespace {

// Reports go to stdout; the fuzzer does not need them.
const bool stdout_silenced = [] {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, STDOUT_FILENO);
  return true;
}();

bool names_a_file_or_the_size(std::string_view arg) {
  constexpr std::array<std::string_view, 12> refused{
      "-o",          "--format",       "--hardware-dir", "--models-dir",
      "--trace",     "--requests-csv", "--timeline-svg", "--fit-step-overhead",
      "--hf-config", "--calibration",  "--requests",     "--config"};
  for (std::string_view flag : refused) {
    if (arg.starts_with(flag)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)stdout_silenced;
  std::vector<std::string> args{"roofline", "serve"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) args.push_back(current);
  if (args.size() > 40) return 0;
  for (const std::string& arg : args) {
    if (names_a_file_or_the_size(arg)) return 0;
  }
  for (const char* tail : {"--requests", "16", "--format", "json"}) args.emplace_back(tail);

  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  CLI::App app{"fuzz", "roofline"};
  app.require_subcommand(1);
  roofline::cli::setup_serve_command(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
    // Rejected flags are an expected outcome.
  } catch (const roofline::Error&) {
    // So is bad input the model refuses.
  }
  return 0;
}
