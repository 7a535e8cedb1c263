// Fuzzes a config file read through the command line: CLI11's own TOML/INI reader (the reader of
// --config FILE, issue 20) in front of the ridge, op and llm commands, with every
// value it finds going through the commands' own flag checks. The first byte picks the command
// (ridge, op gemm, llm); the rest is the file, written to a scratch file as the reader takes a
// path (removed after each input). The harness sets up the config option itself, as main does,
// so that it stands without the flag's own code.
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "commands/commands.hpp"

namespace {

const bool stdout_silenced = roofline::fuzz::silence_stdout();

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
  // Unreadable config text is a CLI::Error too.
  roofline::fuzz::run_command(std::move(args), [&](CLI::App& app) {
    app.set_config("--config");
    command.setup(app);
  });
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // one scratch file per input, none left behind
  return 0;
}
