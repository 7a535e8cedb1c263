#pragma once

#include <filesystem>
#include <string_view>

namespace roofline {

// Writes `contents` to `path` through a temporary file in the same directory and a rename, so
// that an interrupted or failed run never leaves a half-written file. Throws InputError naming
// the path when it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace roofline
