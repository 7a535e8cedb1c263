#pragma once

// What the harnesses that run a whole command share: the fuzz input as a command line, and one
// run of the command through CLI11, as main runs it.

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"

namespace roofline::fuzz {

// Reports go to stdout; the fuzzer does not need them. Called once, from a harness's static
// initialiser.
inline bool silence_stdout() {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, STDOUT_FILENO);
  return true;
}

// `words` (the program and its command, e.g. "roofline", "op"), then the input split on newlines
// into one argument each; a last argument without a newline counts too.
inline std::vector<std::string> command_line(std::vector<std::string> words, const std::uint8_t* data,
                                             std::size_t size) {
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      words.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) words.push_back(current);
  return words;
}

// Parses and runs `args` on an app that `setup` gave its command. Rejected flags (CLI::Error) and
// bad input the commands refuse (roofline::Error) are the expected outcomes; anything else
// escapes and is a finding.
inline void run_command(std::vector<std::string> args, const std::function<void(CLI::App&)>& setup) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  CLI::App app{"fuzz", "roofline"};
  app.require_subcommand(1);
  setup(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
  } catch (const roofline::Error&) {
  }
}

}  // namespace roofline::fuzz
