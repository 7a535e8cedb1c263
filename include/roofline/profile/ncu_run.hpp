#pragma once

// Running Nsight Compute for `roofline profile`: where its executable is, and a program run with
// its output captured (ncu prints the metric table on stdout, its notes on stderr).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline::ncu {

// The file execvp(3) would run for `program`: the program itself when its name holds a '/', else
// the first executable file of that name in PATH's directories (an empty entry is the current
// directory; without PATH, the system's default path); nullopt when there is none.
[[nodiscard]] std::optional<std::filesystem::path> find_program(const std::string& program);

// `flag` when given (NoDeviceError unless it is an executable file), else ncu on PATH, then
// /usr/local/cuda/bin/ncu; NoDeviceError when there is none.
[[nodiscard]] std::string find_ncu(const std::optional<std::string>& flag);

struct ProcessResult {
  int exit_code = -1;  // 128 + the signal when one ended it
  std::string out;
  std::string err;
};
// Runs argv (argv[0] a path) with stdout and stderr captured in temporary files; stdin is
// inherited. NoDeviceError when it cannot start.
[[nodiscard]] ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace roofline::ncu
