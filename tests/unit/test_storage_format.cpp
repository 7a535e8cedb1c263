// The host side of the kernels' storage formats (kernels/storage_format.hpp): which model dtypes
// a kernel can store element by element, their sizes, and the format sets launchers publish.
#include <stdexcept>

#include "catch.hpp"
#include "kernels/storage_format.hpp"

using namespace roofline;
using namespace roofline::kernels;

TEST_CASE("storage formats: the dtypes stored element by element, with their sizes") {
  CHECK(storage_format_of(DType::bf16) == StorageFormat::bf16);
  CHECK(storage_format_of(DType::fp16) == StorageFormat::fp16);
  CHECK(storage_format_of(DType::fp8_e4m3) == StorageFormat::fp8_e4m3);
  CHECK(storage_format_of(DType::fp8_e5m2) == StorageFormat::fp8_e5m2);
  // Wider, integer and block-scaled formats have no storage format: a kernel must say it cannot
  // run them rather than pick another instantiation.
  CHECK_FALSE(storage_format_of(DType::fp32).has_value());
  CHECK_FALSE(storage_format_of(DType::int8).has_value());
  CHECK_FALSE(storage_format_of(DType::nvfp4).has_value());
  CHECK_FALSE(storage_format_of(DType::mxfp8).has_value());
  // 16 bits for bf16 and fp16, 8 for both fp8 formats.
  CHECK(bytes_of(StorageFormat::bf16) == 2);
  CHECK(bytes_of(StorageFormat::fp16) == 2);
  CHECK(bytes_of(StorageFormat::fp8_e4m3) == 1);
  CHECK(bytes_of(StorageFormat::fp8_e5m2) == 1);
  CHECK(name_of(StorageFormat::fp8_e4m3) == "fp8_e4m3");
  // int4_g128 weights: 4 bits a value (its group scales apart), two values a byte, so no whole
  // bytes per element.
  CHECK(storage_format_of(DType::int4_g128) == StorageFormat::int4_g128);
  CHECK(bits_of(StorageFormat::int4_g128) == 4);
  CHECK(bits_of(StorageFormat::fp8_e4m3) == 8);
  CHECK_THROWS_AS(bytes_of(StorageFormat::int4_g128), std::logic_error);
}

TEST_CASE("storage formats: int4_g128 W moves the bytes the model counts for it") {
  // The GEMV's W: 4 bits a value and one 16-bit scale per 128 (no zero point), 4 + 16/128 =
  // 4.125 bits = 0.515625 B a weight; the model's int4_g128 must count the same (DESIGN.md: one
  // formula for model and benchmark).
  CHECK(group_of(StorageFormat::int4_g128) == 128);
  CHECK(group_scale_bits_of(StorageFormat::int4_g128) == 16);
  const double stored_bits =
      bits_of(StorageFormat::int4_g128) +
      static_cast<double>(group_scale_bits_of(StorageFormat::int4_g128)) / group_of(StorageFormat::int4_g128);
  CHECK(stored_bits == 4.125);
  CHECK(bytes_per_element(DType::int4_g128) == stored_bits / 8);
  CHECK(group_of(StorageFormat::bf16) == 0);
  CHECK(group_scale_bits_of(StorageFormat::fp8_e4m3) == 0);
}

TEST_CASE("storage formats: a set holds exactly the formats it was built from") {
  constexpr StorageFormats fp8{StorageFormat::fp8_e4m3, StorageFormat::fp8_e5m2};
  CHECK(fp8.contains(StorageFormat::fp8_e4m3));
  CHECK(fp8.contains(StorageFormat::fp8_e5m2));
  CHECK_FALSE(fp8.contains(StorageFormat::bf16));
  CHECK(half16_formats.contains(StorageFormat::bf16));
  CHECK(half16_formats.contains(StorageFormat::fp16));
  CHECK_FALSE(half16_formats.contains(StorageFormat::fp8_e4m3));
  CHECK_FALSE(half16_formats.contains(StorageFormat::fp8_e5m2));
}
