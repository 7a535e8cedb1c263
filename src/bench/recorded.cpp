// The parameters of a recorded result, as the suites rebuild their bases from them.
#include <fmt/format.h>

#include <cmath>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {

bool RecordedResult::has(std::string_view key) const {
  return parameters.contains(std::string(key));
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

}  // namespace roofline::bench
