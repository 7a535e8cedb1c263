#pragma once

#include <CLI/CLI.hpp>
#include <array>
#include <string_view>

namespace roofline::cli {

// Each subcommand lives in its own file and registers itself on the root app.
void setup_hw_command(CLI::App& app);
void setup_ridge_command(CLI::App& app);
void setup_attainable_command(CLI::App& app);
void setup_op_command(CLI::App& app);
void setup_plot_command(CLI::App& app);
void setup_bench_command(CLI::App& app);
void setup_llm_command(CLI::App& app);
void setup_train_command(CLI::App& app);
void setup_plan_command(CLI::App& app);
void setup_serve_command(CLI::App& app);
void setup_validate_command(CLI::App& app);
void setup_calibrate_command(CLI::App& app);
void setup_profile_command(CLI::App& app);

// Each subcommand's name (as setup_*_command registers it) and its setup.
struct CommandSetup {
  std::string_view name;
  void (*setup)(CLI::App& app);
};

inline constexpr std::array command_setups{
    CommandSetup{"hw", &setup_hw_command},
    CommandSetup{"ridge", &setup_ridge_command},
    CommandSetup{"attainable", &setup_attainable_command},
    CommandSetup{"op", &setup_op_command},
    CommandSetup{"plot", &setup_plot_command},
    CommandSetup{"bench", &setup_bench_command},
    CommandSetup{"llm", &setup_llm_command},
    CommandSetup{"train", &setup_train_command},
    CommandSetup{"plan", &setup_plan_command},
    CommandSetup{"serve", &setup_serve_command},
    CommandSetup{"validate", &setup_validate_command},
    CommandSetup{"calibrate", &setup_calibrate_command},
    CommandSetup{"profile", &setup_profile_command},
};

}  // namespace roofline::cli
