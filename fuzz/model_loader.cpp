// Fuzzes the model-file loader (models/schema.json plus the rules the schema cannot state) and the
// parameter counts and KV-cache sizes of whatever loads.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "roofline/core/error.hpp"
#include "roofline/llm/model_presets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const roofline::ModelSpec model = roofline::load_model_document(text, "fuzz.json");
    (void)roofline::count_parameters(model);
    (void)model.cached_tokens(roofline::max_tokens);
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
