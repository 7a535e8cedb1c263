#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/core/embedded_file.hpp"
#include "roofline/core/error.hpp"
#include "roofline/hardware/hardware.hpp"

using namespace roofline;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

json bundled(std::string_view path) {
  for (const EmbeddedFile& file : bundled_hardware_files()) {
    if (file.path == path) return json::parse(file.contents);
  }
  FAIL("not bundled: " << path);
  return {};
}

// The first error of loading a mutated copy of the H100 file, as "key: message".
std::string first_error(const json& document) {
  const LoadResult result = load_hardware_document(document.dump(), "test.json");
  REQUIRE_FALSE(result.spec.has_value());
  REQUIRE_FALSE(result.errors.empty());
  return result.errors.front().key + ": " + result.errors.front().message;
}

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("roofline-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("every bundled hardware file loads and the ids are unique") {
  const HardwareRegistry& registry = fixture::gpus();
  CHECK(registry.all().size() >= 1);
  for (const GpuSpec& gpu : registry.all()) {
    INFO(gpu.id);
    CHECK(gpu.origin == "bundled:hardware/" + gpu.id + ".json");
    CHECK(gpu.memory_bandwidth_tbps > 0);
  }
}

TEST_CASE("the build indexes each bundled file by the id and aliases it states, the schema by none") {
  // hardware/h100-sxm.json: "id": "h100-sxm", "aliases": ["h100", "h100-sxm5", "h100-sxm5-80gb"].
  bool found_h100 = false;
  for (const EmbeddedFile& file : bundled_hardware_files()) {
    INFO(file.path);
    if (file.path == "hardware/schema.json") {
      CHECK(file.id.empty());
      CHECK(file.aliases.empty());
    } else if (file.path == "hardware/h100-sxm.json") {
      found_h100 = true;
      CHECK(file.id == "h100-sxm");
      CHECK(std::vector<std::string_view>(file.aliases.begin(), file.aliases.end()) ==
            std::vector<std::string_view>{"h100", "h100-sxm5", "h100-sxm5-80gb"});
    } else {
      CHECK(file.path == "hardware/" + std::string(file.id) + ".json");
    }
  }
  CHECK(found_h100);
}

TEST_CASE("H100 SXM figures read into SI units") {
  const HardwareRegistry& registry = fixture::gpus();
  const GpuSpec& h100 = registry.find("h100");
  CHECK(h100.id == "h100-sxm");
  CHECK(h100.units == 132);
  CHECK(h100.memory_bandwidth_bytes_per_s() == Approx(3.35e12));
  CHECK(h100.memory_capacity_bytes() == Approx(80e9));
  CHECK(*h100.peak_flops(PeakClass::bf16) == Approx(989.4e12));
  // fp64 matrix math uses the tensor-core rate, 67 TFLOP/s, not the 34 of the vector units.
  CHECK(*h100.matrix_peak_flops(DType::fp64) == Approx(67e12));
  // Block-scaled fp8 uses the fp8 rate; H100 states no fp4 rate.
  CHECK(*h100.matrix_peak_flops(DType::mxfp8) == Approx(1978.9e12));
  CHECK_FALSE(h100.matrix_peak_flops(DType::nvfp4).has_value());
}

TEST_CASE("names resolve by id or alias, case-insensitively, with suggestions") {
  const HardwareRegistry& registry = fixture::gpus();
  CHECK(registry.find("H100").id == "h100-sxm");
  CHECK(registry.find("h100-SXM5").id == "h100-sxm");
  CHECK_THROWS_AS(registry.find("h1000"), InputError);
  CHECK_THROWS_WITH(registry.find("h100-sx"), Contains("did you mean"));
  CHECK_THROWS_WITH(registry.resolve_list("h100,,h100"), Contains("empty name"));
  CHECK(registry.resolve_list("h100,h100-sxm").size() == 1);
  CHECK(registry.resolve_list("ALL").size() == registry.all().size());
}

TEST_CASE("the loader names the key of every kind of bad figure") {
  const json good = bundled("hardware/h100-sxm.json");
  REQUIRE(load_hardware_document(good.dump(), "ok.json").spec.has_value());

  json unknown_key = good;
  unknown_key["memory"]["bandwith_tbps"] = {{"value", 1}, {"source", "datasheet"}};
  CHECK(first_error(unknown_key) == "/memory/bandwith_tbps: is not a known key (did you mean 'bandwidth_tbps'?)");

  json missing = good;
  missing["memory"].erase("bandwidth_tbps");
  CHECK(first_error(missing) == "/memory/bandwidth_tbps: is required but missing");

  json wrong_type = good;
  wrong_type["compute"]["units"]["value"] = "132";
  CHECK(first_error(wrong_type) == "/compute/units/value: must be of type integer, not string");

  json zero = good;
  zero["memory"]["bandwidth_tbps"]["value"] = 0;
  CHECK(first_error(zero) == "/memory/bandwidth_tbps/value: must be greater than 0, not 0");

  json negative = good;
  negative["peak_tflops"]["bf16"]["value"] = -989.4;
  CHECK(first_error(negative) == "/peak_tflops/bf16/value: must be greater than 0, not -989.4");

  // Infinity has no JSON spelling; a number that overflows a double is refused by the parser.
  std::string text = good.dump();
  const std::string needle = "\"capacity_gb\":{\"source\":\"datasheet\",\"value\":80}";
  REQUIRE(text.find(needle) != std::string::npos);
  text.replace(text.find(needle), needle.size(), "\"capacity_gb\":{\"source\":\"datasheet\",\"value\":1e999}");
  const LoadResult overflow = load_hardware_document(text, "inf.json");
  REQUIRE_FALSE(overflow.spec.has_value());
  CHECK_THAT(overflow.errors.front().message, Contains("malformed JSON") && Contains("number overflow"));

  json dangling = good;
  dangling["memory"]["capacity_gb"]["source"] = "brochure";
  CHECK(first_error(dangling) == "/memory/capacity_gb/source: cites 'brochure', which is not a key of \"sources\"");

  json bad_vendor = good;
  bad_vendor["vendor"] = "intel";
  CHECK(first_error(bad_vendor) == "/vendor: must be one of [\"nvidia\",\"amd\"], not \"intel\"");
}

TEST_CASE("malformed JSON (NaN is not JSON) is reported with its position") {
  const LoadResult nan = load_hardware_document(R"({"id": NaN})", "nan.json");
  REQUIRE_FALSE(nan.spec.has_value());
  CHECK_THAT(nan.errors.front().message, Contains("malformed JSON") && Contains("line 1"));
  const LoadResult truncated = load_hardware_document(R"({"id": "x", )", "cut.json");
  CHECK_THAT(truncated.errors.front().message, Contains("malformed JSON"));
}

TEST_CASE("physics check: bandwidth from bus width x pin rate, peak from units x clock x rate") {
  GpuSpec h100 = fixture::gpus().find("h100");
  // 5120 bits x 5.23 Gbit/s / 8 = 3347 GB/s = 3.347 TB/s, within 3% of 3.35: no bandwidth warning.
  // bf16: 132 SMs x 1980 MHz x 4096 = 1070.5 TFLOP/s vs 989.4 stated: +8.2% -> warning.
  // fp32: 132 x 1980 MHz x 256 = 66.9 TFLOP/s vs 67: -0.1% -> no warning.
  const auto findings = check_physics(h100, 0.03);
  std::vector<std::string> keys;
  for (const auto& f : findings) keys.push_back(f.key);
  CHECK(std::find(keys.begin(), keys.end(), "/peak_tflops/bf16") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "/peak_tflops/fp32") == keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "/memory/bandwidth_tbps") == keys.end());
  for (const auto& f : findings) {
    if (f.key == "/peak_tflops/bf16") {
      CHECK(f.level == HardwareFinding::Level::warning);
      CHECK_THAT(f.message, Contains("989.4") && Contains("1071") && Contains("+8.2%"));
    }
  }
  // A wrong bus width: 4096 bits x 5.23 / 8 = 2.678 TB/s vs 3.35 -> -20.1%.
  h100.document["memory"]["bus_width_bits"]["value"] = 4096;
  bool warned = false;
  for (const auto& f : check_physics(h100, 0.03)) {
    if (f.key == "/memory/bandwidth_tbps") {
      warned = true;
      CHECK_THAT(f.message, Contains("2.678") && Contains("-20.1%"));
    }
  }
  CHECK(warned);
}

TEST_CASE("what-if overrides change a figure and are validated") {
  const HardwareRegistry& registry = fixture::gpus();
  const GpuSpec& h100 = registry.find("h100");
  const std::vector<std::string> set{"hbm_bandwidth_tbps=8", "bf16_tflops=2000", "l2_mb=100"};
  const GpuSpec what_if = apply_overrides(h100, set);
  CHECK(what_if.memory_bandwidth_tbps == 8);
  CHECK(*what_if.peak_flops(PeakClass::bf16) == Approx(2000e12));
  CHECK(what_if.l2_mb == 100);
  CHECK_THAT(what_if.origin, Contains("--set hbm_bandwidth_tbps=8"));
  // A peak the file does not state can be added.
  CHECK(*apply_overrides(h100, std::vector<std::string>{"fp4_tflops=4000"}).peak_flops(PeakClass::fp4) ==
        Approx(4000e12));
  // Full paths work too.
  CHECK(apply_overrides(h100, std::vector<std::string>{"memory.capacity_gb=141"}).memory_capacity_gb == 141);

  CHECK_THROWS_WITH(apply_overrides(h100, std::vector<std::string>{"hbm_bandwidth_tbps=-1"}),
                    Contains("not a positive finite number"));
  CHECK_THROWS_WITH(apply_overrides(h100, std::vector<std::string>{"hbm_bandwidth_tbps"}), Contains("KEY=VALUE"));
  CHECK_THROWS_WITH(apply_overrides(h100, std::vector<std::string>{"bandwidth_bidir_gbps=1"}), Contains("ambiguous"));
  CHECK_THROWS_WITH(apply_overrides(h100, std::vector<std::string>{"l2_mbb=1"}), Contains("did you mean"));
  // units must be an integer: the re-validation catches 132.5.
  CHECK_THROWS_WITH(apply_overrides(h100, std::vector<std::string>{"units=132.5"}), Contains("integer"));
}

TEST_CASE("user directories add GPUs and override bundled ones") {
  const auto dir = temp_dir("hwdir");
  json custom = bundled("hardware/h100-sxm.json");
  custom["name"] = "My H100";
  custom["memory"]["bandwidth_tbps"]["value"] = 3.0;
  std::ofstream(dir / "h100-sxm.json") << custom.dump();
  json other = custom;
  other["id"] = "my-gpu";
  other["aliases"] = json::array();
  std::ofstream(dir / "my-gpu.json") << other.dump();

  const HardwareRegistry registry = HardwareRegistry::load(HardwareSearch{{dir}});
  CHECK(registry.find("h100").name == "My H100");
  CHECK(registry.find("h100").origin == (dir / "h100-sxm.json").string());
  CHECK(registry.find("my-gpu").memory_bandwidth_tbps == 3.0);
  REQUIRE(registry.notes().size() == 1);
  CHECK_THAT(registry.notes().front(), Contains("replaces bundled:hardware/h100-sxm.json"));

  // An invalid user file is bad input that names the file and key.
  custom["memory"]["bandwidth_tbps"]["value"] = -1;
  std::ofstream(dir / "h100-sxm.json") << custom.dump();
  CHECK_THROWS_AS(HardwareRegistry::load(HardwareSearch{{dir}}), InputError);
  CHECK_THROWS_WITH(HardwareRegistry::load(HardwareSearch{{dir}}),
                    Contains("h100-sxm.json") && Contains("/memory/bandwidth_tbps/value"));
  // A missing directory too.
  CHECK_THROWS_WITH(HardwareRegistry::load(HardwareSearch{{dir / "nope"}}), Contains("not a readable directory"));
  // An alias that names another GPU.
  custom["memory"]["bandwidth_tbps"]["value"] = 3.0;
  std::ofstream(dir / "h100-sxm.json") << custom.dump();
  other["aliases"] = json::array({"h100"});
  std::ofstream(dir / "my-gpu.json") << other.dump();
  CHECK_THROWS_WITH(HardwareRegistry::load(HardwareSearch{{dir}}), Contains("alias 'h100' already names"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("ROOFLINE_HARDWARE_PATH comes before --hardware-dir") {
  ::setenv("ROOFLINE_HARDWARE_PATH", "/a:/b", 1);
  const HardwareSearch search = HardwareSearch::from_flag_and_environment(std::string("/c"));
  ::unsetenv("ROOFLINE_HARDWARE_PATH");
  CHECK(search.directories == std::vector<std::filesystem::path>{"/a", "/b", "/c"});
}
