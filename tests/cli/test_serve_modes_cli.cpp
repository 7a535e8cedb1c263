// End-to-end tests of serve's deployment modes (issue 18): expert parallelism, attention DP,
// speculation and disaggregated prefill/decode; the real binary, its JSON and its bad input.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string v3_h200 = "serve --model deepseek-v3 --gpu h200 --tp 8 --weights fp8 --kv fp8 ";
const std::string small = "serve --model llama-3.1-8b --gpu h100 --weights fp8 --kv fp8 ";

}  // namespace

TEST_CASE("serve --attention-dp holds more DeepSeek-V3 requests on 8 H200 in FP8 than TP 8 alone") {
  // 512 requests of 2048 + 1024 tokens at once. TP 8 alone replicates the MLA cache on every GPU:
  // its blocks hold fewer than 512 such requests; under attention DP each of the 8 ranks caches
  // only its own 64 (512 dealt round-robin), and all of them run at once.
  const std::string load = "--prompt-tokens 2048 --output-tokens 64 --requests 512 --max-batch 512 --rate inf ";
  const json tp = json_report(v3_h200 + load);
  const json dp = json_report(v3_h200 + load + "--ep 8 --attention-dp");
  const std::int64_t tp_peak = tp.at("results").at("engine").at("batch_max").get<std::int64_t>();
  const json& ranks = dp.at("results").at("attention_dp");
  CHECK(ranks.at("ranks") == 8);
  CHECK(tp_peak < 512);
  CHECK(ranks.at("running_peak").get<std::int64_t>() == 512);
  CHECK(ranks.at("kv_blocks_all_ranks").get<std::int64_t>() == 8 * ranks.at("kv_blocks_per_rank").get<std::int64_t>());
  CHECK(dp.at("inputs").at("expert_layout").at("attention_dp") == true);
  CHECK(dp.at("results").at("requests") == 512);
}

TEST_CASE("serve --attention-dp steps the ranks in lockstep: ranks dealt no request run dummy steps") {
  // 4 requests of 256 + 16 tokens over 8 ranks: ranks 0-3 get one each and run, in phase, 1 prefill
  // and 15 decode steps; ranks 4-7 get none and idle through all 16: 64 of 128 rank steps.
  const json r = json_report(v3_h200 + "--ep 8 --attention-dp --prompt-tokens 256 --output-tokens 16 --requests 4");
  const json& ranks = r.at("results").at("attention_dp");
  CHECK(ranks.at("lockstep_steps") == 16);
  CHECK(ranks.at("dummy_steps") == 64);
  CHECK(ranks.at("idle_share").get<double>() == 0.5);
  CHECK(r.at("results").at("engine").at("steps") == 64);
}

TEST_CASE("plan --rps searches EP and attention DP for a MoE model, and --ep and --no-attention-dp narrow it") {
  // DeepSeek-V3 on 8 H200: EP 1, 2, 4, 8 (the divisors of 256 experts that divide TP 8) and attention
  // DP at EP 8: 5 candidates, all feasible at these loose targets; --ep 8 --no-attention-dp leaves one.
  // (--speculate none: without it, DeepSeek-V3's MTP layer doubles the candidates.)
  const std::string plan =
      "plan --model deepseek-v3 --gpus h200 --tp 8 --pp 1 --weights fp8 --kv bf16 --rps 2 --prompt-tokens 1024 "
      "--output-tokens 256 --tpot-ms 100 --ttft-ms 5000 --price all=1 --sim-requests 50 --speculate none ";
  const json all = json_report(plan);
  CHECK(all.at("inputs").at("search").at("ep") == "auto");
  CHECK(all.at("inputs").at("search").at("attention_dp") == true);
  const json& ranked = all.at("results").at("ranked");
  REQUIRE(ranked.size() == 5);
  int dp = 0;
  for (const json& c : ranked) dp += c.at("attention_dp").get<bool>() ? 1 : 0;
  CHECK(dp == 1);
  const json one = json_report(plan + "--ep 8 --no-attention-dp");
  REQUIRE(one.at("results").at("ranked").size() == 1);
  CHECK(one.at("results").at("ranked").at(0).at("ep") == 8);
  CHECK(one.at("results").at("ranked").at(0).at("attention_dp") == false);
}

TEST_CASE("serve --speculate with acceptance 1 gives K + 1 tokens per verify step") {
  // Output 1 + 4 x 10: the prefill's token, then 10 verify steps of 4 accepted tokens each.
  const json r = json_report(v3_h200 +
                             "--ep 8 --prompt-tokens 256 --output-tokens 41 --requests 4 --rate inf "
                             "--speculate 3 --acceptance 1");
  const json& s = r.at("results").at("speculation");
  CHECK(s.at("expected_tokens_per_verify").get<double>() == 4.0);
  CHECK(s.at("tokens_per_verify").get<double>() == 4.0);
  CHECK(s.at("verify_steps") == 40);  // 4 requests x 10
  CHECK(r.at("results").at("engine").at("steps") == 11);
  CHECK(r.at("inputs").at("speculation").at("drafter") == "mtp");
}

TEST_CASE("serve --disaggregate: with an instant link the decode pool's TPOT is the aggregated engine's") {
  // One request: its decode steps are the aggregated engine's own (its first at the last prompt
  // token, the rest at the same contexts); TTFT adds that first step to the prefill.
  const std::string one = "--prompt-tokens 512 --output-tokens 32 --requests 1 ";
  const json agg = json_report(small + one);
  const json dis = json_report(small + one +
                               "--disaggregate --prefill-pool tp=1,count=1 --decode-pool tp=1,count=1 "
                               "--kv-link-gbps inf --kv-link-latency-us 0");
  const json& d = dis.at("results");
  CHECK(d.at("tpot_ms").at("mean").get<double>() ==
        Approx(agg.at("results").at("tpot_ms").at("mean").get<double>()).epsilon(1e-12));
  CHECK(d.at("disaggregation").at("transfer_ms").at("max").get<double>() == 0.0);
  CHECK(d.at("disaggregation").at("prefill_ms").at("max").get<double>() ==
        Approx(agg.at("results").at("ttft_ms").at("max").get<double>()).epsilon(1e-12));
  CHECK(d.at("ttft_ms").at("max").get<double>() > agg.at("results").at("ttft_ms").at("max").get<double>());
  CHECK(d.at("output_tokens_per_s_per_gpu").get<double>() == Approx(d.at("output_tokens_per_s").get<double>() / 2));
  CHECK(d.at("disaggregation").at("decode_pool").at("steps") == 32);
  CHECK(d.at("disaggregation").at("prefill_pool").at("steps") == 1);
}

TEST_CASE("serve --disaggregate: the default link moves KV bytes x prompt over the prefill GPUs' NICs") {
  // llama-3.1-8b: 131,072 B of KV per token (bf16 cache) x 1,000 tokens = 131.072 MB over 2 x 50
  // GB/s (TP 2 prefill, each GPU its own NIC) = 1.31072 ms, plus the scale-out latency of 5 us.
  const json r = json_report(
      "serve --model llama-3.1-8b --gpu h100 --prompt-tokens 1000 --output-tokens 4 --requests 3 --rate 2 "
      "--disaggregate --prefill-pool tp=2 --decode-pool tp=1,count=2");
  const json& d = r.at("results").at("disaggregation");
  CHECK(d.at("kv_bytes_per_token").get<double>() == 131072.0);
  CHECK(d.at("transfer_ms").at("mean").get<double>() == Approx(1.31072 + 0.005).epsilon(1e-9));
  CHECK(d.at("decode_pool").at("engines") == 2);
  CHECK(r.at("results").at("requests") == 3);
  CHECK(r.at("inputs").at("disaggregation").at("kv_link_gbps").get<double>() == 100.0);
}

TEST_CASE("serve: bad deployment-mode and pool flags exit 2 with one line") {
  const std::string load = "--prompt-tokens 128 --output-tokens 8 --requests 2 ";
  expect_bad_input(roofline(v3_h200 + load + "--ep 3"), "--ep 3");
  expect_bad_input(roofline("serve --model mixtral --gpu h200 --tp 16 --ep 16 " + load),
                   "--ep 16 does not divide the 8 routed experts");
  expect_bad_input(roofline(v3_h200 + load + "--ep 8 --speculate 3 --acceptance 1.5"), "--acceptance 1.5");
  // A pool too small for one request: DeepSeek-V3's FP8 weights on one H100.
  expect_bad_input(roofline("serve --model deepseek-v3 --gpu h200 --weights fp8 " + load +
                            "--disaggregate --prefill-pool tp=8 --decode-pool gpu=h100,tp=1"),
                   "--decode-pool gpu=h100,tp=1");
  // A decode pool whose cache cannot hold one request of 100,000 tokens (70B in FP8 on one H100).
  expect_bad_input(roofline("serve --model llama-3.1-70b --gpu h100 --weights fp8 --prompt-tokens 100000 "
                            "--output-tokens 8 --requests 1 --disaggregate --prefill-pool tp=8 "
                            "--decode-pool tp=1"),
                   "decode pool");
  expect_bad_input(roofline(small + load + "--disaggregate --prefill-pool tp=0 --decode-pool tp=1"),
                   "--prefill-pool 'tp=0'");
  expect_bad_input(roofline(small + load + "--disaggregate --prefill-pool tp=1"), "--decode-pool");
  expect_bad_input(roofline(small + load + "--decode-pool tp=1"), "only with --disaggregate");
  expect_bad_input(roofline(small + load + "--concurrency 2 --disaggregate --prefill-pool tp=1 --decode-pool tp=1"),
                   "--concurrency with --disaggregate");
}

TEST_CASE("plan --rps --disaggregate: the best aggregated and disaggregated deployments, and the choice") {
  const std::string args =
      "plan --model llama-3.1-8b --gpus h100 --rps 4 --prompt-tokens 1024 --output-tokens 64 --tpot-ms 30 "
      "--ttft-ms 500 --price h100=2 --weights fp8 --kv fp8 --tp 1 --pp 1 --sim-requests 200 --disaggregate";
  const json r = json_report(args);
  const json& d = r.at("results").at("disaggregation");
  const json& best = d.at("disaggregated");
  CHECK(best.at("meets") == true);
  // Both pools hold replicas of the one feasible layout (1 GPU each): GPUs = prefill + decode replicas.
  CHECK(best.at("gpus_total").get<std::int64_t>() ==
        best.at("prefill_replicas").get<std::int64_t>() + best.at("decode_replicas").get<std::int64_t>());
  CHECK(best.at("usd_per_hour").get<double>() == Approx(2.0 * best.at("gpus_total").get<double>()));
  CHECK(best.at("ttft_ms").get<double>() <= 500);
  CHECK(best.at("tpot_ms").get<double>() <= 30);
  // Aggregated unless the pools cost less; a tie keeps the aggregated deployment.
  const double aggregated = d.at("aggregated").at("usd_per_hour").get<double>();
  CHECK(d.at("chosen") == (best.at("usd_per_hour").get<double>() < aggregated ? "disaggregated" : "aggregated"));
  CHECK_THAT(d.at("why").get<std::string>(), Contains("disaggregated"));
  expect_bad_input(roofline(args + " --closed-form"), "--disaggregate: needs the simulated ranking");
}
