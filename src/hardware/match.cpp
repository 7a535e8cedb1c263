// Matching the device name the driver reports to a hardware file (see match_hardware()).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "roofline/hardware/hardware.hpp"

namespace roofline {
namespace {

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::set<std::string> spec_words(const GpuSpec& spec) {
  std::set<std::string> words;
  const auto add = [&words](std::string_view text) {
    for (std::string& w : words_of(text)) words.insert(std::move(w));
  };
  add(spec.id);
  for (const std::string& alias : spec.aliases) add(alias);
  add(spec.name);
  add(spec.memory_type);
  words.insert(fmt::format("{}gb", static_cast<long long>(std::lround(spec.memory_capacity_gb))));
  return words;
}

}  // namespace

HardwareMatch match_hardware(std::string_view device_name, const HardwareRegistry& registry) {
  std::vector<std::string> wanted = words_of(device_name);
  std::erase(wanted, "nvidia");
  if (wanted.empty()) return {nullptr, fmt::format("device name '{}' names no model", device_name)};
  // The model word: the first one with a digit ("h200", "a100", "4090").
  std::string model;
  for (const std::string& w : wanted) {
    if (std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      model = w;
      break;
    }
  }
  std::vector<const GpuSpec*> candidates;
  for (const GpuSpec& spec : registry.all()) {
    const std::set<std::string> words = spec_words(spec);
    if (std::all_of(wanted.begin(), wanted.end(), [&words](const std::string& w) { return words.contains(w); })) {
      candidates.push_back(&spec);
    }
  }
  if (candidates.empty()) {
    return {nullptr, fmt::format("no hardware file matches '{}': add one with --hardware-dir or name it with --gpu",
                                 device_name)};
  }
  if (candidates.size() == 1) {
    return {candidates.front(), fmt::format("'{}' matches {}", device_name, candidates.front()->id)};
  }
  std::vector<std::string> ids;
  for (const GpuSpec* spec : candidates) {
    ids.push_back(spec->id);
    if (!model.empty() && std::find(spec->aliases.begin(), spec->aliases.end(), model) != spec->aliases.end()) {
      return {spec, fmt::format("'{}' matches {} (alias '{}')", device_name, spec->id, model)};
    }
  }
  return {nullptr, fmt::format("'{}' matches several hardware files ({}): name one with --gpu", device_name,
                               fmt::join(ids, ", "))};
}

}  // namespace roofline
