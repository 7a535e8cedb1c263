#pragma once

// The command line as data, read from CLI11's App tree: what shell completion and the man page
// are generated from, so neither can drift from the flags the binary takes.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace roofline::cli {

struct FlagInfo {
  std::vector<std::string> names;    // "-o", "--output"
  std::string value;                 // the value's type as --help shows it ("TEXT", "INT"); empty for a flag
  std::vector<std::string> choices;  // the accepted values where a validator lists them
  std::string description;
  bool required = false;
};

struct CommandInfo {
  std::string path;  // "" (roofline itself), "llm", "op gemm"
  std::string description;
  std::vector<FlagInfo> flags;
  std::vector<std::string> subcommands;  // names of the commands below this one
  std::vector<std::string> positionals;  // names of positional arguments
};

// Every command of the tree, depth first, the root first; options of the "Config" group and
// --help included, as a user can type them.
[[nodiscard]] std::vector<CommandInfo> describe_commands(const CLI::App& app);

// `roofline completion bash|zsh` and `roofline man`: generated from the app they are added to,
// which must hold every command (main sets them all up for these).
void setup_completion_commands(CLI::App& app);

// The scripts and the page themselves (tested on their own).
[[nodiscard]] std::string bash_completion(const std::vector<CommandInfo>& commands);
[[nodiscard]] std::string zsh_completion(const std::vector<CommandInfo>& commands);
[[nodiscard]] std::string man_page(const std::vector<CommandInfo>& commands);

}  // namespace roofline::cli
