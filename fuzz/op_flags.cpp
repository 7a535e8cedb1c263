// Fuzzes `roofline op ...` end to end: flag parsing (CLI11), sweep lists and ranges, data types,
// efficiencies, fusion chains, the cost model and the JSON printer. The input is split on
// newlines into arguments after "roofline op"; "--format json" is appended so that reports stay
// bounded (table and JSON refuse more than 100,000 rows).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)stdout_silenced;
  std::vector<std::string> args{"roofline", "op"};
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
    if (arg == "-o" || arg.starts_with("--output") || arg == "--format" || arg.starts_with("--hardware-dir")) return 0;
  }
  args.emplace_back("--format");
  args.emplace_back("json");

  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  CLI::App app{"fuzz", "roofline"};
  app.require_subcommand(1);
  roofline::cli::setup_op_command(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
    // Rejected flags are an expected outcome.
  } catch (const roofline::Error&) {
    // So is bad input the model refuses.
  }
  return 0;
}
