// plan --pareto end to end: the real binary, its JSON front, its SVG chart, and its bad input
// (docs/llm.md section 9, docs/deployment-modes.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
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

TEST_CASE("plan --pareto --disaggregate: pools in the JSON, the table and the chart, their GPUs and TTFT adding up") {
  const auto dir = scratch("pareto-disaggregated");
  const std::string svg_path = (dir / "front.svg").string();
  const json r = json_report(
      "plan --pareto --disaggregate --model llama-3.1-8b --gpus h100 --prompt-tokens 2048 --output-tokens "
      "256 --tp 1,2 --pp 1 --weights bf16 --kv bf16 --price h100=2 --svg " +
      svg_path);
  const json& results = r.at("results");
  const json& counts = results.at("counts");
  // 2 configurations x 11 batches x 2 modes.
  CHECK(counts.at("configurations") == 2);
  CHECK(counts.at("modes") == 2);
  CHECK(counts.at("swept") == 44);
  CHECK(counts.at("prefill_pools") == 2);
  CHECK(r.at("inputs").at("sweep").at("disaggregated") == true);
  CHECK(r.at("inputs").at("sweep").at("pool_ratios") == "auto");
  std::size_t pools = 0;
  for (const json* list : {&results.at("front"), &results.at("dominated_sample")}) {
    for (const json& p : *list) {
      if (p.at("mode") == "aggregated") {
        CHECK(p.at("prefill_pool").is_null());
        CHECK(p.at("gpus") == p.at("tp").get<int>() * p.at("pp").get<int>());
        continue;
      }
      REQUIRE(p.at("mode") == "disaggregated");
      ++pools;
      // "TP t PP p EP e": the prefill replica's GPUs are t x p.
      int tp = 0;
      int pp = 0;
      int ep = 0;
      REQUIRE(std::sscanf(p.at("prefill_pool").get<std::string>().c_str(), "TP %d PP %d EP %d", &tp, &pp, &ep) == 3);
      const std::int64_t gpus =
          p.at("prefill_replicas").get<std::int64_t>() * tp * pp +
          p.at("decode_replicas").get<std::int64_t>() * p.at("tp").get<int>() * p.at("pp").get<int>();
      CHECK(p.at("gpus") == gpus);
      // $2 per GPU-hour over the tokens/s per GPU of both pools together.
      CHECK(p.at("usd_per_million_output_tokens").get<double>() ==
            Approx(2.0 / (p.at("tokens_per_s_per_gpu").get<double>() * 3600) * 1e6));
      CHECK(p.at("kv_transfer_ms").get<double>() > 0);
      CHECK(p.at("ttft_ms").get<double>() > p.at("kv_transfer_ms").get<double>());
    }
  }
  CHECK(pools > 0);
  // The chosen point's pools, structured; the decode pool's first step is its step.
  const json& chosen = results.at("chosen");
  if (chosen.at("mode") == "disaggregated") {
    const json& p = chosen.at("pools");
    CHECK(chosen.at("ttft_ms").get<double>() ==
          Approx(p.at("prefill").at("prefill_ms").get<double>() + p.at("kv_transfer_ms").get<double>() +
                 p.at("decode").at("first_step_ms").get<double>()));
  } else {
    CHECK(chosen.at("pools").is_null());
  }
  // Disaggregated points are diamonds in the chart (their own series where they reach the front).
  std::ifstream in(svg_path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string svg = text.str();
  CHECK(svg.find("<path d=\"M") != std::string::npos);
  bool pools_on_front = false;
  for (const json& p : results.at("front")) pools_on_front = pools_on_front || p.at("mode") == "disaggregated";
  if (pools_on_front) CHECK(svg.find("data-series=\"front, disaggregated prefill/decode pools\"") != std::string::npos);
}

TEST_CASE("plan --pareto --disaggregate --pool-ratios: only the ratios given, and bad ratios exit 2 with one line") {
  const std::string base =
      "plan --pareto --model llama-3.1-8b --gpus h100 --prompt-tokens 512 --output-tokens 64 --tp 1 --pp 1 "
      "--weights bf16 --kv bf16 --batches 1,8 ";
  const json r = json_report(base + "--disaggregate --pool-ratios 1:3,2:3");
  CHECK(r.at("inputs").at("sweep").at("pool_ratios") == json::array({"1:3", "2:3"}));
  CHECK(r.at("results").at("counts").at("pool_pairings") == 4);  // 2 decode points x 1 prefill pool x 2 ratios
  for (const json& p : r.at("results").at("front")) {
    if (p.at("mode") != "disaggregated") continue;
    CHECK(p.at("decode_replicas") == 3);
  }
  expect_bad_input(roofline(base + "--disaggregate --pool-ratios 0:2"), "--pool-ratios 0:2: each pool needs 1 to 64");
  expect_bad_input(roofline(base + "--disaggregate --pool-ratios 3"), "--pool-ratios '3': expected PREFILL:DECODE");
  expect_bad_input(roofline(base + "--disaggregate --pool-ratios 1:x"),
                   "--pool-ratios '1:x': 'x' is not a whole number");
  expect_bad_input(roofline(base + "--pool-ratios 1:2"), "--pool-ratios: sizes disaggregated pools");
  expect_bad_input(roofline(base + "--disaggregate --max-pool-replicas 65"), "--max-pool-replicas 65: must be 1 to 64");
  expect_bad_input(roofline(base + "--disaggregate --pool-ratios 1:2 --max-pool-replicas 4"),
                   "--max-pool-replicas: bounds --pool-ratios auto");
  expect_bad_input(roofline("plan --model llama-3.1-8b --gpus h100 --prompt-tokens 512 --output-tokens 64 --rps 1 "
                            "--tpot-ms 50 --ttft-ms 2000 --price all=2 --disaggregate --pool-ratios 1:2"),
                   "--pool-ratios: only with plan --pareto");
}

TEST_CASE("plan --pareto: a draft model that does not split over a TP degree rejects those points, not the sweep") {
  // The drafter has Qwen2.5-1.5B's shape (12 query heads, 2 KV heads), which TP 8 cannot split, while
  // LLaMA-3.1-70B can (64 heads); TP 1, 2 and 4 split both. Every speculating TP-8 point is a
  // sharding rejection naming the drafter, and the sweep still reports its front, TP 8 without
  // speculation among the configurations.
  const auto dir = scratch("pareto-drafter");
  std::filesystem::create_directories(dir / "drafter");
  std::ofstream(dir / "drafter" / "config.json")
      << R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 1536,
             "intermediate_size": 8960, "num_attention_heads": 12, "num_key_value_heads": 2,
             "num_hidden_layers": 28, "vocab_size": 151936, "max_position_embeddings": 32768,
             "torch_dtype": "bfloat16", "tie_word_embeddings": true, "rms_norm_eps": 1e-6})";
  const json r = json_report(
      "plan --pareto --model llama-3.1-70b --gpus h100-sxm --prompt-tokens 1024 --output-tokens 256 --tp 1,2,4,8 "
      "--pp 1 --weights fp8 --speculate 3 --acceptance 0.7 --draft-model " +
      (dir / "drafter").string());
  const json& results = r.at("results");
  REQUIRE_FALSE(results.at("front").empty());
  std::int64_t sharding = 0;
  for (const json& rejection : results.at("rejection_summary")) {
    if (rejection.at("reason") != "sharding") continue;
    sharding = rejection.at("count").get<std::int64_t>();
    CHECK(rejection.at("example").get<std::string>().find("--tp 8 does not divide the 12 attention heads") !=
          std::string::npos);
  }
  // 4 TP degrees x 2 KV formats (bf16, fp8: the default) x (no speculation, speculate 3) = 16
  // configurations; the speculating TP-8 ones, 2 x 11 default batches = 22 points, are rejected.
  CHECK(results.at("counts").at("configurations") == 16);
  CHECK(sharding == 22);
}
