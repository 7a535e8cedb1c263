#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/core/error.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

TEST_CASE("bytes per element include block scales") {
  CHECK(bytes_per_element(DType::fp64) == 8.0);
  CHECK(bytes_per_element(DType::bf16) == 2.0);
  CHECK(bytes_per_element(DType::fp8_e4m3) == 1.0);
  CHECK(bytes_per_element(DType::int4) == 0.5);
  // NVFP4: 4-bit E2M1 + one 8-bit E4M3 scale per 16 elements = 4 + 8/16 = 4.5 bits = 0.5625 B.
  CHECK(bytes_per_element(DType::nvfp4) == 0.5625);
  // MXFP4: 4 bits + one 8-bit E8M0 scale per 32 = 4.25 bits = 0.53125 B.
  CHECK(bytes_per_element(DType::mxfp4) == 0.53125);
  // MXFP6: 6 + 8/32 = 6.25 bits = 0.78125 B.
  CHECK(bytes_per_element(DType::mxfp6) == 0.78125);
  // MXFP8: 8 + 8/32 = 8.25 bits = 1.03125 B.
  CHECK(bytes_per_element(DType::mxfp8) == 1.03125);
  // int4 g128, symmetric (no zero point): 4 bits + one 16-bit scale / 128 = 4.125 bits = 0.515625 B.
  CHECK(bytes_per_element(DType::int4_g128) == 0.515625);
}

TEST_CASE("data types parse by name and alias, case-insensitively") {
  CHECK(parse_dtype("BF16") == DType::bf16);
  CHECK(parse_dtype("fp8") == DType::fp8_e4m3);
  CHECK(parse_dtype("e5m2") == DType::fp8_e5m2);
  CHECK(parse_dtype("awq") == DType::int4_g128);
  CHECK(parse_dtype("NVFP4") == DType::nvfp4);
}

TEST_CASE("an unknown data type is bad input with a suggestion") {
  CHECK_THROWS_AS(parse_dtype("bf61"), InputError);
  CHECK_THROWS_WITH(parse_dtype("nvfp5", "--weights"), Contains("--weights") && Contains("did you mean 'nvfp4'"));
}

TEST_CASE("fp64 matrix math prefers the tensor-core peak") {
  const auto& peaks = info(DType::fp64).matrix_peaks;
  CHECK(peaks[0] == PeakClass::fp64_tensor);
  CHECK(peaks[1] == PeakClass::fp64);
}

TEST_CASE("peak classes match the keys of peak_tflops in hardware/schema.json") {
  std::ifstream in(ROOFLINE_SOURCE_DIR "/hardware/schema.json");
  const auto schema = nlohmann::json::parse(in);
  std::vector<std::string> keys;
  for (const auto& [key, unused] : schema.at("properties").at("peak_tflops").at("properties").items()) {
    keys.push_back(key);
  }
  std::vector<std::string> names(peak_class_names.begin(), peak_class_names.end());
  std::sort(keys.begin(), keys.end());
  std::sort(names.begin(), names.end());
  CHECK(keys == names);
}
