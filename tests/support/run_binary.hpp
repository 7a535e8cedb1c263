#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "files.hpp"

// What the end-to-end tests (tests/cli) share: running a command line, and the binary under test
// (ROOFLINE_BINARY) with its reports and the bad-input answer; files.hpp has the scratch folders and
// file helpers.

// Runs a shell command line and captures its exit code, stdout and stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

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

// The binary under test with `args` (a shell command line: quote what needs it).
inline CommandResult roofline(const std::string& args) {
  return run_command(std::string(ROOFLINE_BINARY) + " " + args);
}

// The JSON report of `args` (--format json is added); fails the test unless it exits 0.
inline nlohmann::json json_report(const std::string& args) {
  const CommandResult r = roofline(args + " --format json");
  INFO(args << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// A valid hardware file to break: the bundled H100 SXM under a new id, without aliases.
inline nlohmann::json user_gpu() {
  nlohmann::json spec =
      nlohmann::json::parse(slurp(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "hardware/h100-sxm.json"));
  spec["id"] = "my-gpu";
  spec["aliases"] = nlohmann::json::array();
  return spec;
}

// Bad input: exit 2, one line on stderr that says `what`, nothing on stdout.
inline void expect_bad_input(const CommandResult& result, const std::string& what) {
  INFO("stderr: " << result.err);
  CHECK(result.exit_code == 2);
  CHECK(result.out.empty());
  CHECK_THAT(result.err, Catch::Matchers::Contains(what));
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
}
