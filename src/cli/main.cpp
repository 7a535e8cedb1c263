// roofline: how fast can this run on that GPU, and why?
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <iostream>
#include <string>

#include "commands/commands.hpp"
#include "roofline/error.hpp"
#include "roofline/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "roofline: GPU roofline analysis and performance modelling.\n"
      "Bandwidth counts bytes read + bytes written; 1 TB/s = 1e12 B/s; peaks are dense.",
      "roofline"};
  app.set_version_flag("--version", roofline::tool_version);
  app.require_subcommand(1);
  for (const auto& setup : roofline::cli::command_setups) setup(app);

  try {
    app.parse(argc, argv);
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
