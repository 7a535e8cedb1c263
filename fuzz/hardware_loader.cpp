// Fuzzes the hardware-file loader: parse, schema validation, source references, and the
// physics check and --set overrides on whatever loads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/hardware/hardware.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const roofline::LoadResult result = roofline::load_hardware_document(text, "fuzz.json");
  if (!result.spec) return 0;
  (void)roofline::check_physics(*result.spec);
  try {
    const std::vector<std::string> what_if{"hbm_bandwidth_tbps=8", "bf16_tflops=1000", "l2_mb=1"};
    (void)roofline::apply_overrides(*result.spec, what_if);
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
