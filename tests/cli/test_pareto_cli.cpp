// plan --pareto end to end: the real binary, its JSON front, its SVG chart, and its bad input
// (docs/llm.md section 9, docs/deployment-modes.md).
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.hpp"
#include "run_binary.hpp"

using nlohmann::json;

namespace {

const std::string r1 =
    "plan --pareto --model deepseek-r1 --gpus h200,b200 --prompt-tokens 1024 --output-tokens 2048 --tp 4,8 --pp 1 "
    "--weights fp8,nvfp4 --kv fp8 --speculate 1,3 --acceptance 0.92,0.717,0.364 ";

bool dominates(const json& a, const json& b) {
  const double au = a.at("tokens_per_s_per_user").get<double>();
  const double ag = a.at("tokens_per_s_per_gpu").get<double>();
  const double bu = b.at("tokens_per_s_per_user").get<double>();
  const double bg = b.at("tokens_per_s_per_gpu").get<double>();
  return au >= bu && ag >= bg && (au > bu || ag > bg);
}

}  // namespace

TEST_CASE("plan --pareto: the front is non-dominated, sorted, and its counts add up") {
  const json r = json_report(r1 + "--price h200=3.5,b200=5");
  CHECK(r.at("schema") == "roofline.plan-pareto.v1");
  const json& results = r.at("results");
  const json& front = results.at("front");
  REQUIRE(front.size() >= 2);
  for (std::size_t i = 0; i < front.size(); ++i) {
    for (std::size_t j = 0; j < front.size(); ++j) CHECK_FALSE(dominates(front[i], front[j]));
    for (const json& d : results.at("dominated_sample")) CHECK_FALSE(dominates(d, front[i]));
    if (i > 0) {
      CHECK(front[i].at("tokens_per_s_per_user").get<double>() >=
            front[i - 1].at("tokens_per_s_per_user").get<double>());
    }
    CHECK(front[i].at("usd_per_million_output_tokens").is_number());
  }
  // Every sample point is dominated by some front point.
  for (const json& d : results.at("dominated_sample")) {
    bool beaten = false;
    for (const json& f : front) beaten = beaten || dominates(f, d);
    CHECK(beaten);
  }
  const json& counts = results.at("counts");
  // 11 default batches per configuration.
  CHECK(counts.at("swept").get<std::int64_t>() == 11 * counts.at("configurations").get<std::int64_t>());
  CHECK(counts.at("feasible").get<std::int64_t>() + counts.at("infeasible").get<std::int64_t>() ==
        counts.at("swept").get<std::int64_t>());
  CHECK(counts.at("on_front").get<std::size_t>() == front.size());
  // Speculation and attention DP are swept: 2 GPUs x (TP 4: EP 1, 2, 4, +DP; TP 8: EP 1, 2, 4, 8, +DP)
  // x 2 weight formats x 3 speculation settings = 2 x 9 x 2 x 3 = 108 configurations.
  CHECK(counts.at("configurations") == 108);
  const std::size_t chosen = results.at("chosen_index").get<std::size_t>();
  REQUIRE(chosen < front.size());
  CHECK(front[chosen].at("chosen") == true);
  CHECK(results.at("chosen").at("tokens_per_s_per_gpu") == front[chosen].at("tokens_per_s_per_gpu"));
}

TEST_CASE("plan --pareto: with --tpot-ms every front point meets it and the chosen one is the fastest per GPU") {
  const json r = json_report(r1 + "--tpot-ms 20");
  const json& front = r.at("results").at("front");
  REQUIRE(!front.empty());
  for (const json& p : front) CHECK(p.at("tpot_ms").get<double>() <= 20.0);
  CHECK(r.at("results").at("chosen_index") == 0);
  CHECK(r.at("inputs").at("workload").at("tpot_ms") == 20.0);
  CHECK(r.at("inputs").at("workload").at("ttft_ms").is_null());
}

TEST_CASE("plan --pareto --svg: the chart holds the front and marks the chosen point") {
  const auto dir = scratch("pareto-svg");
  const std::string svg_path = (dir / "front.svg").string();
  const json r = json_report(r1 + "--svg " + svg_path);
  std::ifstream in(svg_path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string svg = text.str();
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("data-series=\"front (runners-up)\"") != std::string::npos);
  CHECK(svg.find("data-series=\"chosen\"") != std::string::npos);
  CHECK(svg.find("<polyline") != std::string::npos);
  // The chosen mark carries the report's numbers.
  const std::size_t chosen = svg.find("data-series=\"chosen\"");
  const double x = r.at("results").at("chosen").at("tokens_per_s_per_user").get<double>();
  CHECK(svg.find(fmt::format("data-x=\"{}\"", x), chosen) != std::string::npos);
}

TEST_CASE("plan --pareto: bad input exits 2 with one line") {
  const std::string base =
      "plan --pareto --model llama-3.1-8b --gpus h100,h200 --prompt-tokens 512 --output-tokens 64 ";
  expect_bad_input(roofline(base + "--batches ''"), "--batches");
  // One batch parser for plan and llm (cli/common.hpp): 1 to 2^20 requests, no "max" in a list.
  expect_bad_input(roofline(base + "--batches 8,max"), "--batches: 'max' is not a batch from 1 to 1048576");
  expect_bad_input(roofline(base + "--price h100=2"), "no price for h200-sxm");
  expect_bad_input(roofline(base + "--rps 5"), "--rps: not used by plan --pareto");
  expect_bad_input(roofline(base + "--tpot-ms 0"), "--tpot-ms");
  expect_bad_input(roofline(base + "--tpot-ms 0.001"), "none of the");
  expect_bad_input(roofline(base + "--acceptance 0.8"), "need --speculate");
  expect_bad_input(roofline("plan --model llama-3.1-8b --gpus h100 --prompt-tokens 512 --output-tokens 64 "
                            "--batches 2"),
                   "--batches: only with plan --pareto");
  expect_bad_input(roofline("plan --model llama-3.1-8b --gpus h100 --prompt-tokens 512 --output-tokens 64 "
                            "--tpot-ms 50 --ttft-ms 2000 --price all=2"),
                   "--rps is required");
}
