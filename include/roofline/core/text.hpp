#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

[[nodiscard]] std::string to_lower(std::string_view text);

// Splits on `separator`, trimming blanks around each piece; empty pieces are kept.
[[nodiscard]] std::vector<std::string> split(std::string_view text, char separator);

// `text` read whole as a decimal number ("12", "-1.5", "2e-3", "+4"), or nullopt. Unlike
// std::stod it refuses hexadecimal ("0x10"), leading blanks and trailing text; "inf" and "nan"
// are read, for the caller to refuse as it says.
[[nodiscard]] std::optional<double> parse_decimal(std::string_view text);

// Levenshtein distance (insertions, deletions, substitutions each cost 1).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
// (distance at most a third of the name's length, and at least 1) or `name` is its prefix.
[[nodiscard]] std::optional<std::string> closest_match(std::string_view name, std::span<const std::string> candidates);

}  // namespace roofline
