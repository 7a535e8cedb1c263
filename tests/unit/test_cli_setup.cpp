// main() sets up only the command named first (src/cli/main.cpp): each entry of command_setups
// must register exactly the subcommand of its name.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "commands/commands.hpp"

TEST_CASE("each command setup registers the subcommand it is named after, and only that") {
  for (const roofline::cli::CommandSetup& command : roofline::cli::command_setups) {
    INFO(command.name);
    CLI::App app;
    command.setup(app);
    const CLI::App& set_up = app;
    const std::vector<const CLI::App*> registered = set_up.get_subcommands(nullptr);
    REQUIRE(registered.size() == 1);
    CHECK(registered.front()->get_name() == std::string(command.name));
  }
}
