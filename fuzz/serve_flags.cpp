// Fuzzes `roofline serve ...` end to end: its flags (CLI11), length distributions, rates, SLOs,
// engine settings, the simulated engine and the JSON printer. The input is split on newlines into
// arguments after "roofline serve"; flags that name files are left out (the trace reader has its
// own harness, serve_trace), and --requests is fixed at 16 so that one input stays a short run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "commands/commands.hpp"

namespace {

const bool stdout_silenced = roofline::fuzz::silence_stdout();

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
  std::vector<std::string> args = roofline::fuzz::command_line({"roofline", "serve"}, data, size);
  if (args.size() > 40) return 0;
  for (const std::string& arg : args) {
    if (names_a_file_or_the_size(arg)) return 0;
  }
  for (const char* tail : {"--requests", "16", "--format", "json"}) args.emplace_back(tail);

  roofline::fuzz::run_command(std::move(args), roofline::cli::setup_serve_command);
  return 0;
}
