#include "roofline/model/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline {
namespace {

constexpr double two_to_63 = 9223372036854775808.0;

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t minimum) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr != end || ec != std::errc()) {
    // Not a plain integer: accept a real literal that is a whole number (1e6), nothing else.
    const auto real = parse_double(text);
    if (!real || !std::isfinite(*real) || std::trunc(*real) != *real) {
      if (ec == std::errc::result_out_of_range) {
        throw InputError(fmt::format("{}: '{}' is too large (at most 2^63 - 1)", flag, text));
      }
      throw InputError(fmt::format("{}: '{}' is not an integer", flag, text));
    }
    if (*real >= two_to_63 || *real < -two_to_63) {
      throw InputError(fmt::format("{}: '{}' is too large (at most 2^63 - 1)", flag, text));
    }
    value = static_cast<std::int64_t>(*real);
  }
  if (value < minimum) throw InputError(fmt::format("{}: '{}' must be at least {}", flag, text, minimum));
  return value;
}

double parse_real(std::string_view flag, std::string_view text, double minimum) {
  const auto value = parse_double(text);
  if (!value || !std::isfinite(*value)) throw InputError(fmt::format("{}: '{}' is not a finite number", flag, text));
  if (*value < minimum) throw InputError(fmt::format("{}: '{}' must be at least {}", flag, text, minimum));
  return *value;
}

void check_count(std::string_view flag, std::size_t count) {
  if (count > max_sweep_values) {
    throw InputError(fmt::format("{}: more than {} values; narrow the range", flag, max_sweep_values));
  }
}

struct RangeText {
  std::string start;
  std::string stop;
  std::string step;  // empty: +1
  bool geometric = false;
};

// Splits "start:stop[:step]"; the step's x, * or + prefix decides the kind.
RangeText split_range(std::string_view flag, const std::string& item) {
  const std::vector<std::string> parts = split(item, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    throw InputError(fmt::format("{}: '{}' is not a range (start:stop[:step], e.g. 1024:32768:x2)", flag, item));
  }
  RangeText range{parts[0], parts[1], "", false};
  if (parts.size() == 3) {
    std::string step = parts[2];
    if (!step.empty() && (step[0] == 'x' || step[0] == 'X' || step[0] == '*')) {
      range.geometric = true;
      step.erase(0, 1);
    } else if (!step.empty() && step[0] == '+') {
      step.erase(0, 1);
    }
    if (step.empty()) throw InputError(fmt::format("{}: '{}' has an empty step", flag, item));
    range.step = step;
  }
  return range;
}

}  // namespace

std::vector<std::int64_t> parse_int_sweep(std::string_view flag, std::string_view text, std::int64_t minimum) {
  std::vector<std::int64_t> values;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw InputError(fmt::format("{}: empty value in '{}'", flag, text));
    if (item.find(':') == std::string::npos) {
      values.push_back(parse_int(flag, item, minimum));
      check_count(flag, values.size());
      continue;
    }
    const RangeText range = split_range(flag, item);
    const std::int64_t start = parse_int(flag, range.start, minimum);
    const std::int64_t stop = parse_int(flag, range.stop, minimum);
    if (start > stop) throw InputError(fmt::format("{}: range '{}' is empty (start > stop)", flag, item));
    if (range.geometric) {
      const std::int64_t factor = parse_int(flag, range.step, 2);
      if (start < 1) throw InputError(fmt::format("{}: geometric range '{}' must start at 1 or more", flag, item));
      for (std::int64_t v = start;;) {
        values.push_back(v);
        check_count(flag, values.size());
        if (v > stop / factor) break;
        v *= factor;
        if (v > stop) break;
      }
    } else {
      const std::int64_t step = range.step.empty() ? 1 : parse_int(flag, range.step, 1);
      // (stop - start) cannot overflow: both are >= minimum >= the smallest int64 flag value.
      const std::uint64_t span = static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start);
      const std::uint64_t count = span / static_cast<std::uint64_t>(step) + 1;
      check_count(flag, values.size() + static_cast<std::size_t>(std::min<std::uint64_t>(count, max_sweep_values + 1)));
      for (std::uint64_t i = 0; i < count; ++i) values.push_back(start + static_cast<std::int64_t>(i) * step);
    }
  }
  return values;
}

std::vector<double> parse_real_sweep(std::string_view flag, std::string_view text, double minimum) {
  std::vector<double> values;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw InputError(fmt::format("{}: empty value in '{}'", flag, text));
    if (item.find(':') == std::string::npos) {
      values.push_back(parse_real(flag, item, minimum));
      check_count(flag, values.size());
      continue;
    }
    const RangeText range = split_range(flag, item);
    const double start = parse_real(flag, range.start, minimum);
    const double stop = parse_real(flag, range.stop, minimum);
    if (start > stop) throw InputError(fmt::format("{}: range '{}' is empty (start > stop)", flag, item));
    // Ranges of reals end at stop within rounding: 0.1:0.3:+0.1 gives three values.
    const double limit = stop + std::abs(stop) * 1e-12;
    if (range.geometric) {
      const double factor = parse_real(flag, range.step, 0);
      if (!(factor > 1)) throw InputError(fmt::format("{}: range '{}' needs a factor above 1", flag, item));
      if (!(start > 0)) throw InputError(fmt::format("{}: geometric range '{}' must start above 0", flag, item));
      for (double v = start; v <= limit; v *= factor) {
        values.push_back(v);
        check_count(flag, values.size());
      }
    } else {
      const double step = range.step.empty() ? 1.0 : parse_real(flag, range.step, 0);
      if (!(step > 0)) throw InputError(fmt::format("{}: range '{}' needs a step above 0", flag, item));
      for (std::size_t i = 0;; ++i) {
        const double v = start + static_cast<double>(i) * step;
        if (v > limit) break;
        values.push_back(v);
        check_count(flag, values.size());
      }
    }
  }
  return values;
}

std::uint64_t sweep_point_count(std::span<const std::size_t> axis_sizes) {
  std::uint64_t points = 1;
  constexpr std::uint64_t limit = std::uint64_t{1} << 63;
  for (std::size_t size : axis_sizes) {
    if (size != 0 && points > limit / size) {
      throw InputError("the sweep has more than 2^63 points; narrow the ranges");
    }
    points *= size;
  }
  return points;
}

}  // namespace roofline
