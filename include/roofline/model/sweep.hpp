#pragma once

// Sweeps: a numeric flag takes one value, a list, a range, or a list of those, and a command
// evaluates the cartesian product of its flags' values, one result row per point.
//
//   4096                 one value
//   1024,2048,4096       a list (kept in the order given, repeats kept)
//   1024:32768:x2        geometric range: start, then times 2 while <= stop (also *2)
//   1024:4096:+1024      arithmetic range: start, then plus 1024 while <= stop (also :1024)
//   1:8                  arithmetic range with step 1
//   1,2,4:64:x2          lists may mix values and ranges
//
// Integer flags take integers (1e6 is accepted when it is a whole number); a geometric factor
// on an integer flag must be a whole number >= 2.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace roofline {

// One flag expands to at most this many values (a typo such as 1:1e12 fails fast).
inline constexpr std::size_t max_sweep_values = 1'000'000;

// Values of an integer flag, each >= `minimum`. Throws InputError naming `flag`.
[[nodiscard]] std::vector<std::int64_t> parse_int_sweep(std::string_view flag, std::string_view text,
                                                        std::int64_t minimum = 1);
// Values of a real flag, each >= `minimum` and finite. Throws InputError naming `flag`.
[[nodiscard]] std::vector<double> parse_real_sweep(std::string_view flag, std::string_view text, double minimum = 0);

// Points of the cartesian product of axes of these sizes; throws InputError if it exceeds 2^63.
[[nodiscard]] std::uint64_t sweep_point_count(std::span<const std::size_t> axis_sizes);

// Walks the cartesian product like an odometer, the last axis fastest. An axis of size 0 is
// not allowed (every parsed flag has at least one value).
class SweepCursor {
 public:
  explicit SweepCursor(std::span<const std::size_t> axis_sizes) : sizes_(axis_sizes), index_(axis_sizes.size(), 0) {}
  [[nodiscard]] std::size_t operator[](std::size_t axis) const { return index_[axis]; }
  // Moves to the next point; false after the last one (the cursor is then back at the first).
  bool next() {
    for (std::size_t axis = sizes_.size(); axis-- > 0;) {
      if (++index_[axis] < sizes_[axis]) return true;
      index_[axis] = 0;
    }
    return false;
  }

 private:
  std::span<const std::size_t> sizes_;
  std::vector<std::size_t> index_;
};

}  // namespace roofline
