// Running Nsight Compute: finding the executable, and a child process with its output captured.
#include "roofline/profile/ncu_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

extern char** environ;

namespace roofline::ncu {
namespace {

bool executable(const std::filesystem::path& path) {
  return ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
}

std::string slurp_and_remove(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return text.str();
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    return executable(program) ? std::optional<std::filesystem::path>(program) : std::nullopt;
  }
  std::string search;
  if (const char* path = std::getenv("PATH")) {
    search = path;
  } else {
    // No PATH: execvp(3) searches the system's default path.
    search.resize(::confstr(_CS_PATH, nullptr, 0));
    if (!search.empty()) {
      (void)::confstr(_CS_PATH, search.data(), search.size());
      search.pop_back();  // confstr's terminating NUL
    }
  }
  for (const std::string& dir : split(search, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string find_ncu(const std::optional<std::string>& flag) {
  if (flag) {
    if (!executable(*flag)) throw NoDeviceError(fmt::format("--ncu {}: not an executable file", *flag));
    return *flag;
  }
  if (const char* path = std::getenv("PATH")) {
    for (const std::string& dir : split(path, ':')) {
      if (!dir.empty() && executable(std::filesystem::path(dir) / "ncu"))
        return (std::filesystem::path(dir) / "ncu").string();
    }
  }
  if (executable("/usr/local/cuda/bin/ncu")) return "/usr/local/cuda/bin/ncu";
  throw NoDeviceError(
      "profile: Nsight Compute (ncu) is not on PATH nor in /usr/local/cuda/bin: install it, or name it with --ncu");
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out_path = dir / fmt::format("roofline-ncu-{}.out", ::getpid());
  const auto err_path = dir / fmt::format("roofline-ncu-{}.err", ::getpid());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ProcessResult result;
  if (spawned != 0) {
    throw NoDeviceError(fmt::format("profile: cannot run {}: {}", argv.front(), std::strerror(spawned)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  result.out = slurp_and_remove(out_path);
  result.err = slurp_and_remove(err_path);
  return result;
}

}  // namespace roofline::ncu
