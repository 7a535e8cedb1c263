// Fuzzes a config file read through the command line: CLI11's own TOML/INI reader (the reader of
// --config FILE, issue 20) in front of the ridge, op and llm commands, with every
// value it finds going through the commands' own flag checks. The first byte picks the command
// (ridge, op gemm, llm); the rest is the file, written to a scratch file as the reader takes a
// path. The harness sets up the config option itself, as main does, so that it stands without
// the flag's own code.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "roofline/core/error.hpp"

namespace {

const bool stdout_silenced = [] {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, STDOUT_FILENO);
  return true;
}();

struct Command {
  void (*setup)(CLI::App&);
  std::vector<std::string> words;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)stdout_silenced;
  if (size == 0) return 0;
  const std::array<Command, 3> commands{{{&roofline::cli::setup_ridge_command, {"ridge"}},
                                         {&roofline::cli::setup_op_command, {"op", "gemm"}},
                                         {&roofline::cli::setup_llm_command, {"llm"}}}};
  const Command& command = commands[data[0] % commands.size()];
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz-config-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  std::vector<std::string> args{"roofline", "--config", path.string()};
  for (const std::string& word : command.words) args.push_back(word);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());

  CLI::App app{"fuzz", "roofline"};
  app.set_config("--config");
  app.require_subcommand(1);
  command.setup(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
    // Rejected flags and unreadable config text are expected outcomes.
  } catch (const roofline::Error&) {
    // So is bad input the commands refuse.
  }
  return 0;
}
