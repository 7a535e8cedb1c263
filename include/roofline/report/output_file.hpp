#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace roofline {

// Writes `contents` to `path` through a temporary file in the same directory and a rename, so
// that an interrupted or failed run never leaves a half-written file. Throws InputError naming
// the flag and the path when it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents, std::string_view flag = "-o");

// The same for output produced as it goes (a CSV sweep of millions of rows): `write` streams into
// the temporary file, which replaces `path` only when `write` returned and every byte reached the
// disk. When `write` throws, or writing fails, the temporary file is removed and `path` is left as
// it was. A link is followed (its target is replaced); a device or pipe such as /dev/null or
// /dev/stdout is written in place, since there is nothing to replace. The temporary file is named
// ".<name>.roofline-<pid>-<n>.tmp"; only a process killed outright (SIGKILL, power loss) can leave one behind, never a
// partial `path`.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           std::string_view flag = "-o");

}  // namespace roofline
