#pragma once

#include <stdexcept>
#include <string>

namespace roofline {

// The process exit codes every command shares (see DESIGN.md).
enum class ExitCode : int {
  ok = 0,
  check_failed = 1,  // hw check found an invalid file, validate found a regression
  bad_input = 2,     // unknown GPU, malformed file, bad flag value
  no_device = 3,     // a GPU or a CUDA build is needed and missing
};

// Base of the errors that end a command with a message and an exit code other than 0.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad input from the user: a flag value, a file, a name. Exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(ExitCode::bad_input, message) {}
};

// A requested check failed (an invalid hardware file, a regression). Exit code 1.
class CheckFailed : public Error {
 public:
  explicit CheckFailed(const std::string& message) : Error(ExitCode::check_failed, message) {}
};

// A GPU or a CUDA build is required and absent. Exit code 3.
class NoDeviceError : public Error {
 public:
  explicit NoDeviceError(const std::string& message) : Error(ExitCode::no_device, message) {}
};

}  // namespace roofline
