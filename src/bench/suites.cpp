// The registry of benchmark suites: the one place that lists them, in the order `--suite all`
// runs them. A new suite adds one line here and its CUDA runner one line in
// src/bench/cuda/runner.cpp, under the same name.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/bench/bench.hpp"
#include "roofline/bench/bench_runner.hpp"
#include "roofline/bench/collectives_suite.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "roofline/bench/layer_registration.hpp"
#include "roofline/bench/memory_suite.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"

namespace roofline::bench {

std::span<const SuiteInfo> suites() {
  static const std::array all{
      memory::suite(),
      compute::suite(),
      layer_suite_registration(),
      collectives::suite(),
  };
  return all;
}

const SuiteInfo& find_suite(std::string_view name) {
  std::vector<std::string> names;
  for (const SuiteInfo& s : suites()) {
    if (s.name == to_lower(name)) return s;
    names.emplace_back(s.name);
  }
  throw InputError(fmt::format("--suite: unknown suite '{}' (known: {}, all)", name, fmt::join(names, ", ")));
}

std::vector<const SuiteInfo*> select_suites(std::string_view list) {
  std::vector<const SuiteInfo*> selected;
  const auto add = [&selected](const SuiteInfo* s) {
    if (std::find(selected.begin(), selected.end(), s) == selected.end()) selected.push_back(s);
  };
  for (const std::string& name : split(list, ',')) {
    if (to_lower(name) == "all") {
      for (const SuiteInfo& s : suites()) add(&s);
    } else if (name.empty()) {
      throw InputError("--suite: empty suite name in the list");
    } else {
      add(&find_suite(name));
    }
  }
  return selected;
}

bool selected_by_filters(std::string_view id, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  return std::any_of(filters.begin(), filters.end(),
                     [id](const std::string& f) { return id.find(f) != std::string_view::npos; });
}

}  // namespace roofline::bench
