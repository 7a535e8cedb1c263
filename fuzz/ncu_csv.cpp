// Fuzzes the reader of `ncu --page raw --csv` output: the table, its units row, the kernels and
// their FLOPs and bytes, and kernel-name shortening.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "roofline/core/error.hpp"
#include "roofline/profile/ncu.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)roofline::ncu::short_kernel_name(text);
  try {
    const roofline::ncu::RawCsv csv = roofline::ncu::parse_raw_csv(text, "ncu.csv");
    for (const roofline::ncu::Kernel& kernel : roofline::ncu::kernels(csv, "ncu.csv")) (void)kernel.flops();
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
