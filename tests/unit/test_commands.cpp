#include "catch.hpp"
#include "commands/attainable.hpp"
#include "commands/hw.hpp"
#include "commands/ridge.hpp"
#include "roofline/error.hpp"

using namespace roofline;
using namespace roofline::cli;
using Catch::Matchers::Contains;

namespace {
const HardwareRegistry& registry() {
  static const HardwareRegistry r = HardwareRegistry::bundled_only();
  return r;
}
nlohmann::json results(const Report& report) {
  return to_json(report).at("results");
}
}  // namespace

TEST_CASE("ridge --gpu h100 --dtype bf16 is 295.3 FLOP/byte") {
  RidgeOptions options;
  options.gpus = "h100";
  options.dtype = "bf16";
  const auto rows = results(run_ridge(options, registry())).at("ridge");
  REQUIRE(rows.size() == 1);
  // 989.4 TFLOP/s / 3.35 TB/s = 295.343 FLOP/B.
  CHECK(rows[0].at("ridge_flop_per_byte").get<double>() == Approx(295.343).epsilon(1e-5));
}

TEST_CASE("ridge without --dtype lists every stated peak") {
  RidgeOptions options;
  options.gpus = "h100";
  const auto rows = results(run_ridge(options, registry())).at("ridge");
  // H100 states fp64, fp64_tensor, fp32, tf32, fp16, bf16, fp8, int8.
  CHECK(rows.size() == 8);
  // fp64 vector: 34 / 3.35 = 10.149 FLOP/B.
  CHECK(rows[0].at("peak_class") == "fp64");
  CHECK(rows[0].at("ridge_flop_per_byte").get<double>() == Approx(10.149).epsilon(1e-4));
}

TEST_CASE("ridge --gpu all is the memory wall, oldest first") {
  RidgeOptions options;
  options.gpus = "all";
  const auto rows = results(run_ridge(options, registry())).at("memory_wall");
  REQUIRE(rows.size() == registry().all().size());
  for (std::size_t i = 1; i < rows.size(); ++i) CHECK(rows[i - 1].at("year") <= rows[i].at("year"));
  // The first GPU with a peak has growth 1 by definition.
  CHECK(rows[0].at("bandwidth_growth").get<double>() == Approx(1.0));
}

TEST_CASE("ridge with --set answers what-if questions") {
  RidgeOptions options;
  options.gpus = "h100";
  options.dtype = "bf16";
  options.what_if = {"hbm_bandwidth_tbps=8"};
  // 989.4 / 8 = 123.675 FLOP/B.
  CHECK(results(run_ridge(options, registry())).at("ridge")[0].at("ridge_flop_per_byte").get<double>() ==
        Approx(123.675));
}

TEST_CASE("attainable: one row per GPU and intensity") {
  AttainableOptions options;
  options.gpus = "h100";
  options.intensities = "1,1365";
  const auto rows = results(run_attainable(options, registry())).at("attainable");
  REQUIRE(rows.size() == 2);
  // AI 1: 3.35 TFLOP/s, memory-bound. AI 1365: 989.4, compute-bound.
  CHECK(rows[0].at("attainable_tflops").get<double>() == Approx(3.35));
  CHECK(rows[0].at("bound") == "memory");
  CHECK(rows[1].at("attainable_tflops").get<double>() == Approx(989.4));
  CHECK(rows[1].at("bound") == "compute");
}

TEST_CASE("attainable rejects bad intensities and unsupported formats") {
  AttainableOptions options;
  options.gpus = "h100";
  for (const char* bad : {"0", "-1", "abc", "1,,2", "inf", "nan", "1e999"}) {
    options.intensities = bad;
    INFO(bad);
    CHECK_THROWS_AS(run_attainable(options, registry()), InputError);
  }
  options.intensities = "10";
  options.dtype = "nvfp4";
  CHECK_THROWS_WITH(run_attainable(options, registry()), Contains("h100-sxm states no peak rate"));
}

TEST_CASE("hw check passes on every bundled file (warnings allowed)") {
  HwCheckOptions options;
  const HwCheckResult result = run_hw_check(options, registry());
  CHECK_FALSE(result.any_invalid);
  CHECK(to_json(result.report).at("results").at("summary").at("checked") == registry().all().size());
}

TEST_CASE("hw show lists every figure with its source title") {
  HwShowOptions options;
  options.gpu = "h100";
  const auto json = to_json(run_hw_show(options, registry()));
  bool found = false;
  for (const auto& row : json.at("results").at("figures")) {
    if (row.at("key") == "memory.bandwidth_tbps") {
      found = true;
      CHECK(row.at("value") == 3.35);
      CHECK(row.at("source") == "NVIDIA H100 Tensor Core GPU datasheet");
    }
  }
  CHECK(found);
}
