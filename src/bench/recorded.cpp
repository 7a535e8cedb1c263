// The parameters of a recorded result, as the suites rebuild their bases from them, and how it
// was measured.
#include <fmt/format.h>

#include <cmath>
#include <type_traits>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {

bool RecordedResult::has(std::string_view key) const {
  const auto it = parameters.find(std::string(key));
  return it != parameters.end() && !it->is_null();
}

std::int64_t RecordedResult::whole(std::string_view key) const {
  const auto it = parameters.find(std::string(key));
  if (it == parameters.end() || !it->is_number() || it->get<double>() != std::floor(it->get<double>()) ||
      it->get<double>() < 0) {
    throw InputError(fmt::format("{}: benchmark {} has no whole-number parameter '{}'", where, id, key));
  }
  return static_cast<std::int64_t>(it->get<double>());
}

std::string RecordedResult::text(std::string_view key) const {
  const auto it = parameters.find(std::string(key));
  if (it == parameters.end() || !it->is_string()) {
    throw InputError(fmt::format("{}: benchmark {} has no text parameter '{}'", where, id, key));
  }
  return it->get<std::string>();
}

DType RecordedResult::dtype(std::string_view key) const {
  return parse_dtype(text(key), fmt::format("{}: benchmark {} {}", where, id, key));
}

bool RecordedResult::flag(std::string_view key) const {
  const auto it = parameters.find(std::string(key));
  if (it != parameters.end() && it->is_boolean()) return it->get<bool>();
  return whole(key) != 0;
}

namespace {

// The field at `key`: absent or null gives nullopt; a value of another type is bad input.
template <typename T>
std::optional<T> optional_field(const nlohmann::json& row, std::string_view key, std::string_view where) {
  const auto it = row.find(std::string(key));
  if (it == row.end() || it->is_null()) return std::nullopt;
  const bool fits = std::is_same_v<T, bool>          ? it->is_boolean()
                    : std::is_same_v<T, std::string> ? it->is_string()
                    : std::is_integral_v<T>          ? it->is_number_integer()
                                                     : it->is_number();
  if (!fits) throw InputError(fmt::format("{}/{}: has the wrong type", where, key));
  return it->get<T>();
}

}  // namespace

RecordedMeasurement recorded_measurement(const nlohmann::json& row, std::string_view where) {
  RecordedMeasurement m;
  m.sm_clock_mhz = optional_field<double>(row, "sm_clock_mhz", where);
  m.sm_clock_min_mhz = optional_field<double>(row, "sm_clock_min_mhz", where);
  m.mem_clock_mhz = optional_field<double>(row, "mem_clock_mhz", where);
  m.power_w = optional_field<double>(row, "power_w", where);
  m.noise_pct = optional_field<double>(row, "noise_pct", where);
  m.throttled = optional_field<bool>(row, "throttled", where);
  m.retaken_samples = optional_field<std::int64_t>(row, "retaken_samples", where);
  m.throttle_reasons = optional_field<std::string>(row, "throttle_reasons", where);
  m.stopped_on = optional_field<std::string>(row, "stopped_on", where);
  m.cold_l2 = optional_field<std::string>(row, "cold_l2", where);
  return m;
}

}  // namespace roofline::bench
