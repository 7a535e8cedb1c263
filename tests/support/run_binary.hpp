#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

// Runs a shell command line and captures its exit code, stdout and stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline CommandResult run_command(const std::string& command_line) {
  const auto err_path =
      std::filesystem::temp_directory_path() / ("roofline-cli-stderr-" + std::to_string(::getpid()) + ".txt");
  const std::string full = command_line + " 2>" + err_path.string();
  CommandResult result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = slurp(err_path);
  std::filesystem::remove(err_path);
  // Under the asan preset a sanitizer report in the child fails the test that ran it, whatever
  // the test checks (a leak report alone would otherwise pass a test that ignores the exit code).
  for (const char* report : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"}) {
    if (result.err.find(report) != std::string::npos) {
      throw std::runtime_error("sanitizer report from `" + command_line + "`:\n" + result.err);
    }
  }
  return result;
}
