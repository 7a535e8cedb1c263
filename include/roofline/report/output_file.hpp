#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace roofline {

// Writes `contents` to `path` ("-": stdout) through a temporary file in the same directory and a rename, so
// that an interrupted or failed run never leaves a half-written file. Throws InputError naming
// the flag and the path when it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents, std::string_view flag = "-o");

// The same for output produced as it goes (a CSV sweep of millions of rows): `write` streams into
// the temporary file, which replaces `path` only when `write` returned and every byte reached the
// disk. When `write` throws, or writing fails, the temporary file is removed and `path` is left as
// it was; the first failed write stops `write` (std::ios_base::failure from `out`, reported as
// "<flag> FILE: write failed (reason)"). A link is followed (its target is replaced or, for a
// dangling link, created; the link stays); a file replaced keeps its permissions; a device or pipe
// such as /dev/null or /dev/stdout is written in place, since there is nothing to replace; a file
// this run read as input (read_input_file) is refused. The temporary file is named
// ".<name>.roofline-<pid>-<n>.tmp" and is removed on SIGINT, SIGTERM, SIGHUP and SIGPIPE too
// (the signal then ends the process as it would have); only a process killed outright (SIGKILL,
// power loss) can leave one behind, never a partial `path`.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           std::string_view flag = "-o");

// Writes to stdout, stopping at the first failed write: InputError "stdout: write failed
// (reason)" (a full disk, a closed stdout). A closed pipe still ends the process by SIGPIPE, as
// for any other tool, unless SIGPIPE is ignored (then the write fails with EPIPE).
void write_to_stdout(const std::function<void(std::ostream&)>& write);
void write_to_stdout(std::string_view contents);

// Called first in main: opens /dev/null on a closed stdin, stdout or stderr, so that no file the
// run opens takes descriptor 0, 1 or 2 (diagnostics would land in a report). stdout is opened
// read-only, so that a report written to it fails instead of vanishing.
void guard_standard_streams();

}  // namespace roofline
