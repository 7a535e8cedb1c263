// roofline: how fast can this run on that GPU, and why?
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <string_view>

#include "build_info.hpp"
#include "cli_tree.hpp"
#include "commands/commands.hpp"
#include "config.hpp"
#include "roofline/core/error.hpp"

int main(int argc, char** argv) {
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse plan.modle" for a key that is no flag of the command.
    std::cerr << "roofline: --config: " << e.what() << " (no such flag of the command; see --help)\n";
    return static_cast<int>(roofline::ExitCode::bad_input);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help or --version, printed to stdout
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
  return 0;
}
