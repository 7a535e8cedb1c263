// Fuzzes the trace reader of serve (--trace FILE: CSV with a header, or JSON Lines), then the
// arrivals it feeds. The first byte picks the format (even: .csv, odd: .jsonl); the rest is the
// file, written to a scratch file because the reader takes a path and chooses by its extension.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "roofline/core/error.hpp"
#include "roofline/serve/workload.hpp"

namespace {

std::filesystem::path scratch(bool jsonl) {
  return std::filesystem::temp_directory_path() /
         ("fuzz-serve-trace-" + std::to_string(::getpid()) + (jsonl ? ".jsonl" : ".csv"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::filesystem::path path = scratch((data[0] & 1U) != 0);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    std::vector<roofline::RequestSpec> requests = roofline::read_trace(path);
    roofline::Random random(1);
    roofline::apply_arrivals(requests, {.kind = roofline::Arrivals::Kind::trace}, random);
  } catch (const roofline::Error&) {
    // A trace the reader refuses is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
