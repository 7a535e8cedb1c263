// roofline: how fast can this run on that GPU, and why?
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "build_info.hpp"
#include "cli_tree.hpp"
#include "commands/commands.hpp"
#include "common.hpp"
#include "config.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/core/version.hpp"
#include "roofline/report/output_file.hpp"

namespace {

// "lmm" for "llm": CLI11 says only "A subcommand is required".
std::optional<std::string> misspelt_command(std::string_view first) {
  if (first.empty() || first.starts_with('-')) return std::nullopt;
  std::vector<std::string> names;
  for (const roofline::cli::CommandSetup& command : roofline::cli::command_setups) names.emplace_back(command.name);
  if (std::find(names.begin(), names.end(), first) != names.end()) return std::nullopt;
  const auto guess = roofline::closest_match(first, names);
  return fmt::format("'{}' is not a command{} (see --help)", first,
                     guess ? fmt::format(" (did you mean '{}'?)", *guess) : std::string());
}

// Whatever reached std::cout or stdio without a report sink (--help, bench's progress lines)
// must have been written too.
int check_stdout(int code) {
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
    std::cerr << "roofline: stdout: write failed (" << std::strerror(errno) << ")\n";
    return code == 0 ? static_cast<int>(roofline::ExitCode::bad_input) : code;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  roofline::guard_standard_streams();
  CLI::App app{
      "roofline: GPU roofline analysis and performance modelling.\n"
      "Bandwidth counts bytes read + bytes written; 1 TB/s = 1e12 B/s; peaks are dense.",
      "roofline"};
  app.set_version_flag("--version", [] { return roofline::cli::version_text(); });
  app.require_subcommand(1);
  // Only the command named first is set up when there is one: setting up all thirteen, with their
  // hundreds of options, cost as much CPU as answering a what-if query. Anything else (--help,
  // --version, completion, man, a misspelt command) gets them all, so that help, errors, the
  // completion scripts and the man page list every command.
  const std::string_view first = argc > 1 ? argv[1] : "";
  const auto* named = std::find_if(roofline::cli::command_setups.begin(), roofline::cli::command_setups.end(),
                                   [&](const roofline::cli::CommandSetup& c) { return c.name == first; });
  if (named != roofline::cli::command_setups.end()) {
    named->setup(app);
  } else {
    for (const roofline::cli::CommandSetup& command : roofline::cli::command_setups) command.setup(app);
    roofline::cli::setup_completion_commands(app);
  }
  roofline::cli::add_config_options(app);
  roofline::cli::require_decimal_numbers(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse plan.modle" for a key that is no flag of the command.
    std::cerr << "roofline: --config: " << e.what() << " (no such flag of the command; see --help)\n";
    return static_cast<int>(roofline::ExitCode::bad_input);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return check_stdout(app.exit(e));  // --help or --version, printed to stdout
    if (const auto message = misspelt_command(first)) {
      std::cerr << "roofline: " << *message << '\n';
      return static_cast<int>(roofline::ExitCode::bad_input);
    }
    // A flag error is bad input like any other: one line on stderr.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << "roofline: " << message << " (see --help)\n";
    return static_cast<int>(roofline::ExitCode::bad_input);
  } catch (const roofline::Error& e) {
    std::cerr << "roofline: " << e.what() << '\n';
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "roofline: internal error: " << e.what() << '\n';
    return 70;
  }
  return check_stdout(0);
}
