#pragma once
// Reading input files (hardware, model, calibration, measured results, ncu CSV) with the checks
// every loader shares, so that a missing file, a folder, a huge file or absurdly nested JSON is
// bad input (exit 2) with one line naming the file, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "roofline/core/error.hpp"

namespace roofline {

// Spec files (hardware, models, calibration, Hugging Face configs) are a few kilobytes; 16 MiB is
// far beyond any real one and keeps a wrong path (a weights file, a log) from being read whole.
inline constexpr std::uintmax_t max_spec_file_bytes = std::uintmax_t{16} << 20;
// Measured results and ncu CSV grow with the run; a long profile stays well below 1 GiB.
inline constexpr std::uintmax_t max_data_file_bytes = std::uintmax_t{1} << 30;
// Measured runs are JSON, which takes about 20 bytes of memory per byte of text once parsed (an
// 800 MB file used 15.8 GB before it was refused). The largest recorded run
// (docs/results/2026-12-01-h200-fp8/bench-compute-fp8.json) is 1.0 MB; 32 MiB is 30 times that
// and bounds parsing at about 650 MB.
inline constexpr std::uintmax_t max_measured_file_bytes = std::uintmax_t{32} << 20;
// No file of ours nests deeper than about 8 levels. Deeper JSON is refused before it is parsed:
// copying, comparing or printing a parsed document recurses once per level.
inline constexpr std::size_t max_json_depth = 256;

// The whole contents of `path`, a regular file (a link to one is followed). Throws InputError
// "<path>: no such file", "<path>: is a directory, not a file", "<path>: is a FIFO, not a
// regular file" (likewise a device or a socket, which would block or never end), "<path>: N
// bytes, more than the M a ... file may have" or "<path>: cannot be read (reason)". The file is
// remembered as an input of this run (input_file_at).
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path,
                                          std::uintmax_t max_bytes = max_spec_file_bytes);

// The name under which read_input_file read the file with this device and inode number, if it
// did: an output file must never replace an input of the same run.
[[nodiscard]] std::optional<std::string> input_file_at(std::uint64_t device, std::uint64_t inode);

// Forgets the inputs read so far. A process that runs several commands (the Python module) calls it
// before each, so that "an input of this run" means this command's inputs: a file an earlier
// command read may be written by a later one, and an inode the system reused after a read file was
// deleted is not mistaken for it.
void forget_inputs();

// Throws InputError "<origin>: JSON nested deeper than 256 levels" when arrays and objects in
// `text` (strings skipped) nest deeper than max_json_depth. Runs in one pass without recursion.
void check_json_depth(std::string_view text, const std::string& origin);

// A key given twice in one JSON object: parsers keep the last one without a word, so a file that
// states a figure twice would silently mean its second value. The message is "<origin>:
// <pointer of the object>: key '<key>' is given twice (...)".
class DuplicateKeyError : public InputError {
 public:
  DuplicateKeyError(const std::string& origin, std::string pointer, std::string key);
  std::string pointer;  // of the object ("" is the document)
  std::string key;
};

// nlohmann::json::parse(text), refusing a key given twice in one object (DuplicateKeyError);
// malformed text throws nlohmann::json::exception as the parser does.
[[nodiscard]] nlohmann::json parse_json_unique(std::string_view text, const std::string& origin);

// `text` parsed as JSON after check_json_depth, keys unique (parse_json_unique); throws InputError "<origin>: malformed
// JSON: <what the parser says, without its exception code>".
[[nodiscard]] nlohmann::json parse_json_document(std::string_view text, const std::string& origin);

}  // namespace roofline
