#include "catch.hpp"
#include "commands/attainable.hpp"
#include "commands/hw.hpp"
#include "commands/ridge.hpp"
#include "deployment_options.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"

using namespace roofline;
using namespace roofline::cli;
using Catch::Matchers::Contains;

namespace {
nlohmann::json results(const Report& report) {
  return to_json(report).at("results");
}
}  // namespace

TEST_CASE("ridge --gpu h100 --dtype bf16 is 295.3 FLOP/byte") {
  RidgeOptions options;
  options.gpus = "h100";
  options.dtype = "bf16";
  const auto rows = results(run_ridge(options, fixture::gpus())).at("ridge");
  REQUIRE(rows.size() == 1);
  // 989.4 TFLOP/s / 3.35 TB/s = 295.343 FLOP/B.
  CHECK(rows[0].at("ridge_flop_per_byte").get<double>() == Approx(295.343).epsilon(1e-5));
}

TEST_CASE("ridge without --dtype lists every stated peak") {
  RidgeOptions options;
  options.gpus = "h100";
  const auto rows = results(run_ridge(options, fixture::gpus())).at("ridge");
  // H100 states fp64, fp64_tensor, fp32, tf32, fp16, bf16, fp8, int8.
  CHECK(rows.size() == 8);
  // fp64 vector: 34 / 3.35 = 10.149 FLOP/B.
  CHECK(rows[0].at("peak_class") == "fp64");
  CHECK(rows[0].at("ridge_flop_per_byte").get<double>() == Approx(10.149).epsilon(1e-4));
}

TEST_CASE("ridge --gpu all is the memory wall, oldest first") {
  RidgeOptions options;
  options.gpus = "all";
  const auto rows = results(run_ridge(options, fixture::gpus())).at("memory_wall");
  REQUIRE(rows.size() == fixture::gpus().all().size());
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
  CHECK(results(run_ridge(options, fixture::gpus())).at("ridge")[0].at("ridge_flop_per_byte").get<double>() ==
        Approx(123.675));
}

TEST_CASE("attainable: one row per GPU and intensity") {
  AttainableOptions options;
  options.gpus = "h100";
  options.intensities = "1,1365";
  const auto rows = results(run_attainable(options, fixture::gpus())).at("attainable");
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
    CHECK_THROWS_AS(run_attainable(options, fixture::gpus()), InputError);
  }
  options.intensities = "10";
  options.dtype = "nvfp4";
  CHECK_THROWS_WITH(run_attainable(options, fixture::gpus()), Contains("h100-sxm states no peak rate"));
}

TEST_CASE("hw check passes on every bundled file (warnings allowed)") {
  HwCheckOptions options;
  const HwCheckResult result = run_hw_check(options, fixture::gpus());
  CHECK_FALSE(result.any_invalid);
  CHECK(to_json(result.report).at("results").at("summary").at("checked") == fixture::gpus().all().size());
}

TEST_CASE("hw show lists every figure with its source title") {
  HwShowOptions options;
  options.gpu = "h100";
  const auto json = to_json(run_hw_show(options, fixture::gpus()));
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

TEST_CASE("deployment flags: GPUs, TP and PP make the replicas") {
  DeploymentConfig config;
  // 16 GPUs in groups of TP 4 x PP 2 = 8: two replicas.
  CHECK(apply_parallelism_flags({"h100", 16, 4, 2}, config) == 16);
  CHECK(config.tp == 4);
  CHECK(config.pp == 2);
  CHECK(config.replicas == 2);
  // No --gpus: one replica of TP x PP.
  CHECK(apply_parallelism_flags({"h100", 0, 2, 1}, config) == 2);
  CHECK(config.replicas == 1);
  CHECK_THROWS_WITH(apply_parallelism_flags({"h100", 12, 8, 1}, config),
                    Contains("--gpus 12 is not a multiple of --tp 8 x --pp 1"));
}

TEST_CASE("deployment flags: formats default to the GPU's 16-bit activation format") {
  DeploymentConfig config;
  apply_format_flags({std::string("fp8"), std::nullopt, std::nullopt}, fixture::gpus().find("h100"), config);
  CHECK(config.activations == DType::bf16);
  CHECK(config.weights == DType::fp8_e4m3);
  CHECK(config.kv == DType::bf16);
  CHECK(config.embeddings == DType::bf16);
  // The V100 states no bf16 rate: everything unset is fp16.
  apply_format_flags({}, fixture::gpus().find("v100"), config);
  CHECK(config.activations == DType::fp16);
  CHECK(config.weights == DType::fp16);
  CHECK_THROWS_WITH(
      apply_format_flags({std::nullopt, std::string("tf32"), std::nullopt}, fixture::gpus().find("h100"), config),
      Contains("--kv tf32: tf32 is a math mode, not a storage format"));
}

TEST_CASE("deployment flags: memory and links in SI units, each bad value naming its flag") {
  DeploymentFlags flags;
  flags.reserve_gb = 4;
  flags.scale_out_gbps = 100;
  flags.scale_out_latency_us = 8;
  DeploymentConfig config;
  const GpuSpec& h200 = fixture::gpus().find("h200");
  CHECK_FALSE(apply_deployment_flags(flags, config, h200, fixture::gpus()));  // no --calibration
  CHECK(config.reserve_bytes == 4e9);
  CHECK(config.workspace_bytes == 2e9);  // the default 2 GB
  CHECK(config.scale_out.name == "scale-out 100 GB/s");
  CHECK(config.scale_out.bandwidth_bytes_per_s == 100e9);
  CHECK(config.scale_out.latency_s == Approx(8e-6));

  DeploymentFlags negative;
  negative.workspace_gb = -1;
  CHECK_THROWS_WITH(apply_deployment_flags(negative, config, h200, fixture::gpus()),
                    Contains("--workspace-gb -1: must be a number >= 0"));
  DeploymentFlags no_network;
  no_network.scale_out_gbps = 0;
  CHECK_THROWS_WITH(apply_deployment_flags(no_network, config, h200, fixture::gpus()),
                    Contains("--scale-out-gbps 0: must be a positive"));
  DeploymentFlags no_domain;
  no_domain.scale_up_domain = 0;
  CHECK_THROWS_WITH(apply_deployment_flags(no_domain, config, h200, fixture::gpus()),
                    Contains("--scale-up-domain 0: must be at least 1"));

  // --efficiency and --calibration both set the expected time: refused before the calibration is
  // resolved, and again where the time flags are applied.
  DeploymentFlags calibrated;
  calibrated.calibration = std::string(ROOFLINE_SOURCE_DIR) + "/docs/results/2026-11-30-h200-run3/calibration.json";
  const std::optional<CalibrationChoice> choice = apply_deployment_flags(calibrated, config, h200, fixture::gpus());
  REQUIRE(choice);
  REQUIRE(choice->calibration);
  CHECK(choice->kind == "measured");
  CHECK(config.collectives_gpu == choice->calibration->gpu_id);
  DeploymentFlags both = calibrated;
  both.efficiency = "compute=0.7,memory=0.8";
  CHECK_THROWS_WITH(apply_deployment_flags(both, config, h200, fixture::gpus()), Contains("give one of them"));
  TimeOptions time;
  CHECK_THROWS_WITH(apply_time_flags(both, choice->calibration, time), Contains("give one of them"));
}
