#pragma once

#include <CLI/CLI.hpp>

namespace roofline::cli {

// --config FILE and --print-config on the root app, for every command (fallthrough passes them
// up from the command: `roofline plan --config plan.toml`). The file is CLI11's TOML: a
// command's flags under its section ([plan], [op.gemm]), named as the long flags without the
// dashes; a key no flag has is bad input, not ignored. --print-config writes the flags given on
// the command line and in the file as such a file, and runs nothing. Call after every command
// is set up.
void add_config_options(CLI::App& app);

}  // namespace roofline::cli
