// Fuzzes the calibration loader (schema roofline.calibration.v1 and its meaning), then queries
// every table that loads at a few sizes, with and without a series, and writes it back.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const roofline::Calibration calibration = roofline::parse_calibration(text, "calibration.json");
    for (const auto& entry : calibration.tables) {
      const roofline::CalibrationTable& table = entry.second;
      for (const double ideal_s : {1e-9, 1e-5, 1.0}) {
        (void)roofline::interpolate(table, ideal_s, std::nullopt);
        (void)roofline::interpolate(table, ideal_s, 8.0);
        (void)roofline::interpolate(table, ideal_s, 8.0, std::size_t{0});
      }
    }
    (void)roofline::to_json(calibration).dump();
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
