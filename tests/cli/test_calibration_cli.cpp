// --calibration auto end to end (the bundled calibration measured on the GPU, one transferred from
// the nearest of its architecture, or the roofline with a note), calibrate's provenance and error
// band, and bad calibration input. docs/calibration.md.
#include <filesystem>
#include <string>

#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::filesystem::path source = ROOFLINE_SOURCE_DIR;
const std::string llm_70b_fp8 = "llm --model llama-3.1-70b --tp 8 --weights fp8 --kv fp8 --context 4096 ";

}  // namespace

TEST_CASE("llm --calibration auto on the H200: the bundled calibration measured on it, with its band") {
  const json r = json_report(llm_70b_fp8 + "--gpu h200-sxm --calibration auto");
  const json& c = r.at("results").at("calibration");
  CHECK(c.at("kind") == "measured");
  CHECK(c.at("file") == "bundled:calibrations/h200-sxm.json");
  CHECK(c.at("from_gpu") == "h200-sxm");
  // The layer check of the FP8-flash run (docs/results/2026-12-03-h200-flash-fp8: 52 of the 52 bf16
  // and FP8 layers within 10% since the flash tables of 2026-12-04 16:30, the worst at +9.9% since the
  // skinny GEMM run of 2026-12-05), written into the file by calibrate --layer-check (docs/calibration.md).
  CHECK(c.at("band") == "layers within 10% out of sample, 52/52 (worst -9.1%)");
  CHECK(c.at("decode_ops_calibrated").get<int>() > 0);
  CHECK_THAT(c.at("sources").dump(), Contains("driver 13.0, CUDA 13.0, cuBLAS 13.1.0"));
  CHECK(r.at("results").at("tpot_ms").get<double>() > r.at("results").at("tpot_roofline_ms").get<double>());
  CHECK_THAT(r.at("notes").dump(), Contains("calibrated with bundled:calibrations/h200-sxm.json"));
}

TEST_CASE("llm --calibration auto on the H100: transferred from the H200, and the report says so") {
  const json r = json_report(llm_70b_fp8 + "--gpu h100-sxm --calibration auto");
  const json& c = r.at("results").at("calibration");
  CHECK(c.at("kind") == "transferred");
  CHECK(c.at("gpu") == "h100-sxm");
  CHECK(c.at("from_gpu") == "h200-sxm");
  CHECK(c.at("transfer").at("points").get<int>() > 0);
  CHECK_THAT(c.at("band").get<std::string>(), Contains("vs TensorRT-LLM's H100 FP8 max-throughput rows: -17% to +9%"));
  CHECK(c.at("decode_ops_calibrated").get<int>() > 0);
  CHECK(r.at("results").at("tpot_ms").get<double>() > r.at("results").at("tpot_roofline_ms").get<double>());
  // The table names it as well.
  const CommandResult table = roofline(llm_70b_fp8 + "--gpu h100-sxm --calibration auto");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("transferred to h100-sxm from h200-sxm"));
}

TEST_CASE("llm --calibration auto on Blackwell: the roofline, said on stderr and in the JSON, exit 0") {
  const CommandResult r = roofline(llm_70b_fp8 + "--gpu b200 --calibration auto --format json");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Contains("no bundled calibration was measured on the Blackwell architecture"));
  const json report = json::parse(r.out);
  const json& c = report.at("results").at("calibration");
  CHECK(c.at("kind") == "none");
  CHECK(c.at("file").is_null());
  CHECK(c.at("decode_ops_calibrated") == 0);
  CHECK_THAT(c.at("note").get<std::string>(), Contains("b200 keeps the roofline times"));
  CHECK_FALSE(report.at("results").contains("tpot_roofline_ms"));  // nothing calibrated: one set of times
}

TEST_CASE("plan and op --calibration auto: each GPU its own calibration") {
  const json p = json_report(
      "plan --model llama-3.1-8b --gpus h100,h200,b200 --rps 5 --prompt 2048 --output 256 --tpot-ms 50 "
      "--ttft-ms 2000 --price all=2.5 --top 200 --calibration auto");
  const json& blocks = p.at("results").at("calibration");
  REQUIRE(blocks.size() == 3);
  CHECK(blocks.at(0).at("kind") == "transferred");
  CHECK(blocks.at(1).at("kind") == "measured");
  CHECK(blocks.at(2).at("kind") == "none");
  // Calibrated candidates are slower than their roofline; b200's keep the roofline.
  bool h100_calibrated = false;
  for (const json& c : p.at("results").at("runners_up")) {
    if (c.at("gpu") == "h100-sxm" && c.at("tpot_ms").get<double>() > c.at("tpot_roofline_ms").get<double>()) {
      h100_calibrated = true;
    }
    if (c.at("gpu") == "b200") CHECK(c.at("tpot_ms").get<double>() == c.at("tpot_roofline_ms").get<double>());
  }
  CHECK(h100_calibrated);

  // A compute-bound GEMM: the same tensor peak on both, so the same efficiency at the same problem.
  const json o = json_report("op gemm --m 4096 --n 4096 --k 4096 --gpu h200,h100 --calibration auto");
  const json& rows = o.at("results").at("gemm");
  CHECK(rows.at(0).at("calibration_efficiency").get<double>() ==
        Approx(rows.at(1).at("calibration_efficiency").get<double>()));
  CHECK(o.at("results").at("calibration").at(1).at("kind") == "transferred");
}

TEST_CASE("calibrate writes provenance and, with --layer-check, the error band") {
  const auto dir = scratch("calibrate-band");
  const std::string run = (source / "docs/results/2026-12-01-h200-refactor").string();
  const std::string out = (dir / "cal.json").string();
  const CommandResult r = roofline("calibrate --measured " + run + "/bench-memory.json --measured " + run +
                                   "/bench-compute.json --layer-check " + run + "/bench-layer.json -o " + out);
  REQUIRE(r.exit_code == 0);
  const json cal = json::parse(slurp(out));
  CHECK(cal.at("validation").at("within") == 25);
  CHECK(cal.at("validation").at("layers") == 26);
  const json& p = cal.at("sources").at(0).at("provenance");
  CHECK(p.at("gpu_name") == "NVIDIA H200");
  CHECK(p.at("cublas_version") == "13.1.0");
  CHECK(p.at("sm_clock_start_mhz") == 1980.0);
  CHECK(p.at("sm_clock_end_mhz") == 1965.0);
  CHECK(p.at("tool_commit") == "not recorded");  // the run predates run.tool_commit

  // A layer run that is not there: bad input, and no calibration file.
  const std::string missing = (dir / "missing.json").string();
  expect_bad_input(roofline("calibrate --measured " + run + "/bench-memory.json --layer-check " + missing + " -o " +
                            (dir / "no.json").string()),
                   "missing.json");
  CHECK_FALSE(std::filesystem::exists(dir / "no.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibration flag: a missing or corrupt file is bad input, one line, exit 2") {
  const auto dir = scratch("calibration-bad");
  expect_bad_input(roofline(llm_70b_fp8 + "--gpu h200 --calibration nosuchfile"), "nosuchfile");
  const std::string corrupt = (dir / "corrupt.json").string();
  write_file(corrupt, "{\"schema\": \"roofline.calibration.v1\", ");
  expect_bad_input(roofline(llm_70b_fp8 + "--gpu h200 --calibration " + corrupt), "corrupt.json: not valid JSON");
  expect_bad_input(roofline("op gemm --m 8 --n 8 --k 8 --gpu h200 --calibration " + corrupt), "not valid JSON");
  // auto sets the expected time as a file does, even where it falls back to the roofline.
  expect_bad_input(roofline(llm_70b_fp8 + "--gpu b200 --calibration auto --efficiency compute=0.7,memory=0.8"),
                   "give one of them");
  std::filesystem::remove_all(dir);
}
