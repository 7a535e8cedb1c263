#pragma once
// Reading input files (hardware, model, calibration, measured results, ncu CSV) with the checks
// every loader shares, so that a missing file, a folder, a huge file or absurdly nested JSON is
// bad input (exit 2) with one line naming the file, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace roofline {

// Spec files (hardware, models, calibration, Hugging Face configs) are a few kilobytes; 16 MiB is
// far beyond any real one and keeps a wrong path (a weights file, a log) from being read whole.
inline constexpr std::uintmax_t max_spec_file_bytes = std::uintmax_t{16} << 20;
// Measured results and ncu CSV grow with the run; a long profile stays well below 1 GiB.
inline constexpr std::uintmax_t max_data_file_bytes = std::uintmax_t{1} << 30;
// No file of ours nests deeper than about 8 levels. Deeper JSON is refused before it is parsed:
// copying, comparing or printing a parsed document recurses once per level.
inline constexpr std::size_t max_json_depth = 256;

// The whole contents of `path`. Throws InputError "<path>: no such file", "<path>: is a
// directory, not a file", "<path>: N bytes, more than the M a ... file may have" or
// "<path>: cannot be read (reason)".
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path,
                                          std::uintmax_t max_bytes = max_spec_file_bytes);

// Throws InputError "<origin>: JSON nested deeper than 256 levels" when arrays and objects in
// `text` (strings skipped) nest deeper than max_json_depth. Runs in one pass without recursion.
void check_json_depth(std::string_view text, const std::string& origin);

// `text` parsed as JSON after check_json_depth; throws InputError "<origin>: malformed JSON: <what
// the parser says, without its exception code>".
[[nodiscard]] nlohmann::json parse_json_document(std::string_view text, const std::string& origin);

}  // namespace roofline
