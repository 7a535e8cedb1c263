// Expert parallelism, data-parallel attention and speculative decoding (docs/deployment-modes.md),
// against values derived by hand in each test (H100: 3.35 TB/s; NVLink 450 GB/s per direction,
// 1 us per message step by default).
#include <cmath>
#include <numbers>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/expert_parallel.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/speculative.hpp"

using namespace roofline;
using namespace roofline::llm_fixture;
using Catch::Matchers::Contains;

namespace {

DeploymentConfig tp2(ExpertLayout layout) {
  DeploymentConfig c;
  c.tp = 2;
  c.experts = layout;
  return c;
}

// By value: callers pass describe_step's temporary layers.
DecoderOp op_named(const std::vector<DecoderLayer>& layers, std::string_view group, std::string_view name) {
  for (const DecoderLayer& layer : layers) {
    if (layer.name != group) continue;
    for (const DecoderOp& op : layer.ops) {
      if (op.name == name) return op;
    }
  }
  FAIL("no op " << name << " in " << group);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("expected maximum of standard normals") {
  CHECK(expected_max_standard_normal(1) == 0.0);
  // E[max of 2] = 1/sqrt(pi); of 4: 1.0294 (tables of normal order statistics).
  CHECK(expected_max_standard_normal(2) == Approx(std::numbers::inv_sqrtpi).epsilon(1e-6));
  CHECK(expected_max_standard_normal(4) == Approx(1.0294).epsilon(1e-4));
}

TEST_CASE("uniform routing: the busiest of 2 EP ranks of Mixtral over 8 tokens") {
  const ModelSpec& m = models().find("mixtral-8x7b");
  // E = 8, k = 2, ep = 2: mean 8 x 2 / 2 = 8 pairs per rank; variance 8 x 2 x 1/2 x 1/2 x 6/7 =
  // 3.428571 (sd 1.851640); busiest = 1 + 0.564190 x 1.851640 / 8 = 1.130584.
  CHECK(uniform_routing_imbalance(*m.moe, 2, 8) == Approx(1.130584).epsilon(1e-5));
  CHECK(uniform_routing_imbalance(*m.moe, 1, 8) == 1.0);
  // One token: its 2 experts land on one rank at most twice its mean share: the cap 2 x min(2, 4) / 2.
  CHECK(uniform_routing_imbalance(*m.moe, 2, 1) <= 2.0);
}

TEST_CASE("imbalance 1.0 is uniform routing: the mean rank's experts and pairs") {
  const ModelSpec& m = models().find("mixtral-8x7b");
  const Sharding one = shard(m, tp2({}));
  const Sharding ep2 = shard(m, tp2({2, false, 1.0}));
  CHECK(ep2.local_experts == 4);
  CHECK(ep2.expert_ffn == 14336);  // TP / EP = 1: each expert whole
  // No EP: all 8 experts, 8 x 2 = 16 pairs, 8 (1 - (6/8)^8) = 7.199094 experts reached.
  const ExpertLoad all = busiest_rank_load(*m.moe, one, 8);
  CHECK(all.pairs == 16.0);
  CHECK(all.touched == Approx(8.0 * (1.0 - std::pow(0.75, 8))));
  // EP 2 at imbalance 1: half the pairs and half the experts reached, on experts of twice the width.
  const ExpertLoad half = busiest_rank_load(*m.moe, ep2, 8);
  CHECK(half.imbalance == 1.0);
  CHECK(half.pairs == 8.0);
  CHECK(half.touched == Approx(4.0 * (1.0 - std::pow(0.75, 8))));
  // The routed GEMV of the step reads the reached experts' [4096 x 28672] gate_up weights (bf16).
  const StepFormats formats;
  const DecoderOp gate_up =
      op_named(describe_step(m, ep2, formats, {StepPhase::decode, 8, 1024}), "moe layer", "experts_gate_up");
  const auto& routed = std::get<RoutedShape>(gate_up.shape);
  CHECK(routed.pairs == 8.0);
  CHECK(routed.touched == Approx(half.touched));
  CHECK(routed.n == 2 * 14336);
}

TEST_CASE("all-to-all of Mixtral with EP 2 and attention DP: bytes and time by hand") {
  const ModelSpec& m = models().find("mixtral-8x7b");
  const Sharding s = shard(m, tp2({2, true, 1.0}));
  // A token's 2 of 8 experts miss the other rank's 4 with probability C(4,2)/C(8,2) = 6/28.
  CHECK(remote_ranks_per_token(*m.moe, 2) == Approx(1.0 - 6.0 / 28.0));
  // 8 requests over 2 GPUs: 4 tokens each, x 22/28 remote ranks x 4096 x 2 B = 25,746.29 B.
  const double bytes = 4.0 * (22.0 / 28.0) * 4096 * 2;
  CHECK(all_to_all_bytes(m, s, 4, DType::bf16, 1.0) == Approx(bytes));
  const GpuSpec& h100 = gpus().find("h100");
  DeploymentConfig c = tp2({2, true, 1.0});
  const StepTime step = decode_step(m, h100, s, c, 8, 1024);
  // One message step of 1 us plus the bytes over 450 GB/s, dispatch and combine in each of 32 layers.
  const StepOp& dispatch = find_op(step, "moe layer", "moe_dispatch");
  CHECK(dispatch.time_s == Approx(1e-6 + bytes / 450e9));
  CHECK(find_op(step, "moe layer", "moe_combine").time_s == Approx(dispatch.time_s));
  CHECK(step.ep_comm_s == Approx(32 * 2 * (1e-6 + bytes / 450e9)));
  // Attention DP: no TP all-reduce, no logits gather; the head is whole on every GPU.
  CHECK(step.tp_comm_s == 0.0);
  CHECK(s.vocab == m.vocab);
}

TEST_CASE("attention DP halves the per-GPU KV cache of a 2-way split") {
  const ModelSpec& m = models().find("deepseek-v3");
  DeploymentConfig tp = tp2({});
  tp.weights = DType::fp8_e4m3;
  tp.kv = DType::fp8_e4m3;
  DeploymentConfig dp = tp;
  dp.experts = {2, true, std::nullopt};
  const Sharding s_tp = shard(m, tp);
  const Sharding s_dp = shard(m, dp);
  // MLA over TP 2: both GPUs cache every request's latent; attention DP: each its own half.
  CHECK(s_tp.kv_replication == 2.0);
  CHECK(s_dp.kv_replication == 1.0);
  StepFormats f;  // FP8 weights and cache, bf16 activations
  f.weights = DType::fp8_e4m3;
  f.kv = DType::fp8_e4m3;
  const auto cache_read = [&](const Sharding& s) {
    const DecoderOp a = op_named(describe_step(m, s, f, {StepPhase::decode, 8, 1024}), "moe layer", "attention");
    const auto& shape = std::get<LatentAttentionShape>(a.shape);
    return static_cast<double>(shape.batch * shape.kv_seq) * (512 + 64) * 1.0;  // fp8 latents read
  };
  // 8 requests x 1024 x 576 B per layer on each TP GPU, 4 x 1024 x 576 with attention DP.
  CHECK(cache_read(s_tp) == 8.0 * 1024 * 576);
  CHECK(cache_read(s_dp) == 4.0 * 1024 * 576);
  // On 8 H200 the group of 8 attention-DP GPUs holds 8 times the requests that fit one GPU's memory.
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig dp8 = dp;
  dp8.tp = 8;
  dp8.experts = {8, true, std::nullopt};
  const MemoryPlan plan = plan_memory(m, h200, shard(m, dp8), dp8, 3072);
  const StageMemory& stage = plan.heaviest();
  REQUIRE(stage.free_bytes > 0);
  CHECK(plan.max_requests() ==
        8 * static_cast<std::int64_t>(std::floor(stage.free_bytes / stage.kv_bytes_per_request)));
}

TEST_CASE("EP and attention DP: bad layouts are refused, naming the flag") {
  const ModelSpec& mixtral = models().find("mixtral-8x7b");
  const ModelSpec& llama = models().find("llama-3.1-8b");
  CHECK_THROWS_WITH(shard(llama, tp2({2, false, {}})), Contains("--ep 2") && Contains("no experts"));
  DeploymentConfig c16;
  c16.tp = 16;
  c16.experts = {16, false, {}};
  CHECK_THROWS_WITH(shard(mixtral, c16), Contains("--ep 16 does not divide the 8 routed experts"));
  DeploymentConfig c8;
  c8.tp = 8;
  c8.experts = {3, false, {}};
  CHECK_THROWS_WITH(shard(mixtral, c8), Contains("--ep 3 does not divide --tp 8"));
  c8.experts = {4, true, {}};
  CHECK_THROWS_WITH(shard(mixtral, c8), Contains("--attention-dp needs --ep equal to --tp"));
  CHECK_THROWS_WITH(shard(mixtral, tp2({2, false, 2.5})), Contains("--expert-imbalance 2.5"));
  CHECK_THROWS_WITH(shard(mixtral, tp2({2, false, 0.5})), Contains("--expert-imbalance 0.5"));
}

TEST_CASE("speculation: expected tokens per verify step") {
  Speculation s;
  s.draft_tokens = 3;
  s.acceptance = {0.0};
  CHECK(expected_tokens_per_verify(s) == 1.0);
  s.acceptance = {1.0};
  CHECK(expected_tokens_per_verify(s) == 4.0);  // K + 1
  // 1 + 0.9 + 0.9 x 0.8 + 0.9 x 0.8 x 0.5 = 2.98.
  s.acceptance = {0.9, 0.8, 0.5};
  CHECK(expected_tokens_per_verify(s) == Approx(2.98));
  s.acceptance = {1.2};
  CHECK_THROWS_WITH(check_speculation(s), Contains("--acceptance 1.2"));
  s.acceptance = {0.5, 0.5};
  CHECK_THROWS_WITH(check_speculation(s), Contains("one per draft position"));
  s.draft_tokens = 0;
  CHECK_THROWS_WITH(check_speculation(s), Contains("--speculate 0"));
}

TEST_CASE("speculation: acceptance 0 costs more than none, acceptance 1 gives K + 1 tokens per step") {
  const ModelSpec& m = models().find("deepseek-v3");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c;
  c.tp = 8;
  c.weights = DType::fp8_e4m3;
  c.kv = DType::fp8_e4m3;
  c.experts = {4, false, std::nullopt};
  const Sharding s = shard(m, c);
  const StepTime plain = decode_step(m, h200, s, c, 1, 2048);
  Speculation spec;
  spec.draft_tokens = 3;
  spec.acceptance = {0.0};
  const SpeculativeDecode none = speculative_decode(m, h200, s, c, 1, 2048, spec);
  CHECK(none.tokens_per_verify == 1.0);
  CHECK(none.tpot_s > plain.time_s);
  CHECK(none.cycle_s == Approx(none.verify.time_s + 3 * none.draft.time_s));
  spec.acceptance = {1.0};
  const SpeculativeDecode all = speculative_decode(m, h200, s, c, 1, 2048, spec);
  CHECK(all.tokens_per_verify == 4.0);
  CHECK(all.tpot_s == Approx(all.cycle_s / 4.0));
  // The verify step's latent attention: 1 sequence of 4 queries, causal over the 2048 cached
  // tokens and the 3 drafts.
  const DecoderOp attention = op_named(describe_step(m, s, StepFormats::of(c, h200), {StepPhase::decode, 4, 2048, 4}),
                                       "moe layer", "attention");
  const auto& shape = std::get<LatentAttentionShape>(attention.shape);
  CHECK(shape.batch == 1);
  CHECK(shape.seq == 4);
  CHECK(shape.kv_seq == 2051);
  CHECK(shape.causal);
  // The MTP layer of the draft pass holds one MoE layer's weights on this GPU and the 2h x h projection.
  CHECK(all.draft_weight_bytes > 2.0 * 7168 * 7168);
}
