// Fuzzes `roofline op ...` end to end: flag parsing (CLI11), sweep lists and ranges, data types,
// efficiencies, fusion chains, the cost model and the JSON printer. The input is split on
// newlines into arguments after "roofline op"; "--format json" is appended so that reports stay
// bounded (table and JSON refuse more than 100,000 rows).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "commands/commands.hpp"

namespace {

const bool stdout_silenced = roofline::fuzz::silence_stdout();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)stdout_silenced;
  std::vector<std::string> args = roofline::fuzz::command_line({"roofline", "op"}, data, size);
  if (args.size() > 40) return 0;
  for (const std::string& arg : args) {
    if (arg == "-o" || arg.starts_with("--output") || arg == "--format" || arg.starts_with("--hardware-dir")) return 0;
  }
  args.emplace_back("--format");
  args.emplace_back("json");
  roofline::fuzz::run_command(std::move(args), roofline::cli::setup_op_command);
  return 0;
}
