#pragma once

#include <CLI/CLI.hpp>
#include <array>

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
void setup_validate_command(CLI::App& app);
void setup_calibrate_command(CLI::App& app);
void setup_profile_command(CLI::App& app);

inline constexpr std::array command_setups{
    &setup_hw_command,   &setup_ridge_command,    &setup_attainable_command, &setup_op_command,
    &setup_plot_command, &setup_bench_command,    &setup_llm_command,        &setup_train_command,
    &setup_plan_command, &setup_validate_command, &setup_calibrate_command,  &setup_profile_command,
};

}  // namespace roofline::cli
