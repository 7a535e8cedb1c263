// Fuzzes the measured-results loader: a bench report (one JSON document) or compute selftest
// output (JSON lines), told apart by content.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "roofline/core/error.hpp"
#include "roofline/validate/measured.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const roofline::MeasuredRun run = roofline::parse_measured(text, "measured.json");
    for (const roofline::Measurement& m : run.results) {
      if (m.timing) (void)m.timing->spread();
    }
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
