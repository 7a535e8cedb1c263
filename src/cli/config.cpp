// --config and --print-config (config.hpp).
#include "config.hpp"

#include <iostream>

namespace roofline::cli {
namespace {

// A file's [section] sets the options of that command. The commands are not CLI11-"configurable":
// that would also run a command's callback where its section ends, a second time.
void take_config(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    sub->allow_config_extras(CLI::config_extras_mode::error);
    sub->fallthrough();
    take_config(*sub);
  }
}

// For writing only: CLI11 writes a configurable command's flags under its [section] header.
void write_sections(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    sub->configurable();
    write_sections(*sub);
  }
}

}  // namespace

void add_config_options(CLI::App& app) {
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.fallthrough();
  app.set_config("--config", "",
                 "Read flags from a TOML file: each command's flags under its [section], e.g. [plan] model = "
                 "\"llama-3.1-70b\" (--print-config writes one)")
      ->group("Config");
  // Runs once parsing is done and before any command's callback: the option's results hold the
  // flags of the command line and the file, which is what the written file must hold.
  app.add_flag_callback(
         "--print-config",
         [&app] {
           write_sections(app);
           std::cout << app.config_to_str(false, true);
           throw CLI::Success();
         },
         "Write the flags given (on the command line and in --config files) as a config file to stdout, and run "
         "nothing")
      ->configurable(false)
      ->group("Config");
  take_config(app);
}

}  // namespace roofline::cli
