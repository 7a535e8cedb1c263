// Fuzzes the Hugging Face config.json reader (`--hf-config`) and the parameter counts of whatever
// it accepts.
#include "roofline/llm/hf_config.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "roofline/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const roofline::ModelSpec model = roofline::parse_hf_config(text, "config.json");
    (void)roofline::count_parameters(model);
    (void)model.cached_tokens(roofline::max_tokens);
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
