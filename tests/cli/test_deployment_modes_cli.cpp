// End-to-end tests of llm's expert parallelism, attention DP and speculative decoding: the real
// binary, its exit codes and its JSON (docs/deployment-modes.md).
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string r1_h200 =
    "llm --model deepseek-r1 --gpu h200 --tp 8 --weights fp8 --kv fp8 --context 3072 "
    "--prompt-tokens 1024 --no-levers ";

}  // namespace

TEST_CASE("llm: attention DP lets 1,024 DeepSeek-R1 requests fit on 8 H200 where TP 8 alone does not") {
  const json tp = json_report(r1_h200 + "--batch max");
  const json dp = json_report(r1_h200 + "--ep 8 --attention-dp --batch 1024");
  const std::int64_t tp_fit = tp.at("results").at("max_requests").get<std::int64_t>();
  const std::int64_t dp_fit = dp.at("results").at("max_requests").get<std::int64_t>();
  CHECK(tp_fit < 1024);
  CHECK(dp_fit >= 1024);
  // Every GPU caches only its own requests: one copy of the latent per request (no replication).
  CHECK(dp.at("results").at("kv_replication").get<double>() == 1.0);
  CHECK(dp.at("inputs").at("expert_layout").at("ep") == 8);
  CHECK(dp.at("inputs").at("expert_layout").at("attention_dp") == true);
  bool dispatch = false;
  for (const json& op : dp.at("results").at("decode")) dispatch = dispatch || op.at("name") == "moe_dispatch";
  CHECK(dispatch);
}

TEST_CASE("llm: MTP speculation at batch 1 reports the verify step, the drafts and the tokens per step") {
  const json r = json_report(r1_h200 + "--ep 4 --batch 1 --speculate 3 --acceptance 1");
  const json& s = r.at("results").at("speculation");
  CHECK(s.at("tokens_per_verify").get<double>() == 4.0);
  CHECK(s.at("tpot_ms").get<double>() == Approx(s.at("cycle_ms").get<double>() / 4.0));
  CHECK(r.at("inputs").at("speculation").at("drafter") == "mtp");
  CHECK(r.at("results").at("verify").size() > 0);
}

TEST_CASE("llm: bad expert and speculation flags exit 2 with one line") {
  expect_bad_input(roofline("llm --model mixtral --gpu h200 --tp 8 --ep 3 --context 1024"),
                   "--ep 3 does not divide --tp 8");
  expect_bad_input(roofline("llm --model mixtral --gpu h200 --tp 16 --ep 16 --context 1024"),
                   "does not divide the 8 routed experts");
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h200 --ep 2 --tp 2 --context 1024"), "no experts");
  expect_bad_input(roofline(r1_h200 + "--speculate 3 --acceptance 1.5"), "--acceptance 1.5");
  expect_bad_input(roofline(r1_h200 + "--acceptance 0.8"), "need --speculate");
}

TEST_CASE("plan --rps --speculate: candidates with and without MTP simulated, the choice and why in the report") {
  const std::string base =
      "plan --model deepseek-r1 --gpus h200 --tp 8 --pp 1 --weights fp8 --kv bf16 --ep 8 --no-attention-dp --rps 2 "
      "--prompt-tokens 1024 --output-tokens 256 --tpot-ms 100 --ttft-ms 5000 --price all=1 --sim-requests 50 ";
  const json r = json_report(base + "--speculate 3 --acceptance 0.92,0.717,0.364 --top 0");
  const json& results = r.at("results");
  CHECK(results.at("counts").at("configurations") == 2);  // without, and with 3 drafts
  CHECK(r.at("inputs").at("search").at("speculation").size() == 1);
  const json& s = results.at("speculation");
  CHECK(s.at("chosen_draft_tokens") == results.at("chosen").at("draft_tokens"));
  const bool speculates = s.at("chosen_draft_tokens").get<int>() > 0;
  CHECK_THAT(s.at("why").get<std::string>(),
             Contains(speculates ? "chosen with speculation" : "chosen without speculation"));
  // Past the one wanted (--top 0), the simulation ran until one of each kind met the targets.
  bool met_with = false;
  bool met_without = false;
  for (const json& c : results.at("simulated")) {
    if (c.at("meets") != "yes") continue;
    (c.at("draft_tokens").get<int>() > 0 ? met_with : met_without) = true;
  }
  CHECK(met_with);
  CHECK(met_without);
  REQUIRE(s.at("best_other").is_object());
  CHECK(s.at("best_other").at("draft_tokens").get<int>() == (speculates ? 0 : 3));
  // A speculating candidate's closed form: 1 + 0.92 + 0.92 x 0.717 + 0.92 x 0.717 x 0.364 = 2.8997
  // tokens per verify cycle.
  const json& spec = speculates ? results.at("chosen") : s.at("best_other");
  CHECK(spec.at("tokens_per_step").get<double>() == Approx(1 + 0.92 + 0.92 * 0.717 + 0.92 * 0.717 * 0.364));
  expect_bad_input(roofline(base + "--speculate 3 --acceptance 1.5"), "--acceptance 1.5");
  expect_bad_input(roofline(base + "--draft-model llama-3.1-8b"), "--draft-model needs --speculate");
  expect_bad_input(roofline(base + "--speculate 0 --acceptance 0.8"), "--speculate: '0' is not a positive integer");
}

TEST_CASE(
    "plan: a model that ships MTP layers is tried with them at its stated acceptance, --speculate none drops it") {
  const std::string base =
      "plan --model deepseek-v3 --gpus h200 --tp 8 --pp 1 --weights fp8 --kv bf16 --ep 8 --no-attention-dp --rps 2 "
      "--prompt-tokens 1024 --output-tokens 256 --tpot-ms 100 --ttft-ms 5000 --price all=1 --closed-form ";
  const auto has_note = [](const json& r, const std::string& text) {
    for (const json& n : r.at("notes")) {
      if (n.get<std::string>().find(text) != std::string::npos) return true;
    }
    return false;
  };
  // DeepSeek-V3's model file: 1 MTP layer at 0.85 (its report's lower end): K = 1 beside none.
  const json r = json_report(base);
  CHECK(r.at("results").at("counts").at("configurations") == 2);
  const json& searched = r.at("inputs").at("search").at("speculation");
  REQUIRE(searched.size() == 1);
  CHECK(searched.at(0).at("draft_tokens") == 1);
  CHECK(searched.at(0).at("acceptance") == json::array({0.85}));
  CHECK(searched.at(0).at("drafter") == "mtp");
  CHECK(r.at("results").contains("speculation"));
  CHECK(has_note(r, "ships 1 MTP layer(s): tried with --speculate 1 at acceptance 0.85"));
  // --acceptance alone sets the rate of the model's K.
  const json rate = json_report(base + "--acceptance 0.6");
  CHECK(rate.at("inputs").at("search").at("speculation").at(0).at("acceptance") == json::array({0.6}));
  // --speculate none: one configuration, no speculation block.
  const json none = json_report(base + "--speculate none");
  CHECK(none.at("results").at("counts").at("configurations") == 1);
  CHECK_FALSE(none.at("results").contains("speculation"));
  expect_bad_input(roofline(base + "--speculate none --acceptance 0.5"), "--speculate none: leave out");
  // The front too: 2 configurations (none, MTP 1) x 1 batch.
  const json front = json_report(
      "plan --pareto --model deepseek-v3 --gpus h200 --tp 8 --pp 1 --weights fp8 --kv bf16 --ep 8 "
      "--no-attention-dp --prompt-tokens 1024 --output-tokens 256 --batches 8");
  CHECK(front.at("results").at("counts").at("configurations") == 2);
}
