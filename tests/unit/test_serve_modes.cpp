// serve's deployment modes (issue 18): speculation in the engine, attention-DP ranks in lockstep,
// and disaggregated prefill/decode pools, against what follows by hand from the step times of the
// coster (itself checked against llm's op model in test_serve.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/serve/engine.hpp"
#include "roofline/serve/metrics.hpp"
#include "roofline/serve/plan_simulation.hpp"
#include "roofline/serve/pools.hpp"
#include "roofline/serve/step_cost.hpp"

using namespace roofline;
using namespace roofline::llm_fixture;

namespace {

DeploymentConfig fp8_h100() {
  DeploymentConfig c;
  c.weights = DType::fp8_e4m3;
  c.kv = DType::fp8_e4m3;
  return c;
}

EngineConfig roomy() {
  EngineConfig e;
  e.kv_blocks = 1'000'000;
  return e;
}

Speculation mtp(int k, double acceptance) {
  Speculation s;
  s.draft_tokens = k;
  s.acceptance = {acceptance};
  return s;
}

// One decode request's step at `kv` cached tokens (the new one included).
MixedBatch decode_at(std::int64_t kv, std::int64_t queries = 1) {
  MixedBatch b;
  b.decode_requests = 1;
  b.decode_kv_tokens = kv;
  b.decode_queries = queries;
  return b;
}

}  // namespace

TEST_CASE("serve speculation: acceptance 1 gives K + 1 tokens per verify step, each step a verify of K + 1") {
  // DeepSeek-V3 has an MTP module; on 8 H200 in FP8 it fits. One request of 128 + 21 tokens, K = 3
  // at acceptance 1: the prefill yields token 1, then each verify step yields 1 + 1 + 1 + 1 = 4
  // (expected_tokens_per_verify), so the other 20 take 5 verify steps: 6 steps in all.
  const ModelSpec& m = models().find("deepseek-v3");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c = fp8_h100();
  c.tp = 8;
  const Speculation s = mtp(3, 1.0);
  StepCoster coster(m, h200, c, {}, 8192, s);
  EngineConfig e = roomy();
  e.draft_tokens = 3;
  e.accepted_per_verify = expected_tokens_per_verify(s);
  REQUIRE(e.accepted_per_verify == 4.0);
  Simulation sim = simulate(std::vector<RequestSpec>{{0.0, 128, 21}}, e, coster, m);
  CHECK(sim.engine.steps == 6);
  // The cache grows by the 4 accepted tokens a step: verify steps at 129, 133, 137, 141, 145 cached
  // (the last one's token and its 3 drafts attend over them).
  const std::vector<PrefillChunk> prompt{{128, 0}};
  MixedBatch prefill;
  prefill.chunks = prompt;
  double decode = 0;
  for (const std::int64_t kv : {129, 133, 137, 141, 145}) decode += coster.time_s(decode_at(kv, 4));
  const RequestRecord& r = sim.requests.at(0);
  CHECK(r.ttft_s() == Approx(coster.time_s(prefill)).epsilon(1e-12));
  CHECK(r.e2e_s() == Approx(coster.time_s(prefill) + decode).epsilon(1e-12));
  // TPOT = 5 verify steps / 20 tokens.
  CHECK(*r.tpot_s() == Approx(decode / 20).epsilon(1e-12));
  // A verify step is the target's 4 tokens and the drafter's 3 MTP passes; the target's part alone
  // costs more than a decode step's one token.
  CHECK(coster.draft_s(1, 129) > 0);
  CHECK(coster.time_s(decode_at(129, 4)) - coster.draft_s(1, 129) > coster.time_s(decode_at(129)));
}

TEST_CASE("serve speculation: acceptance 0 takes a verify step per token, each dearer than plain decode") {
  const ModelSpec& m = models().find("deepseek-v3");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c = fp8_h100();
  c.tp = 8;
  const Speculation s = mtp(2, 0.0);
  StepCoster spec(m, h200, c, {}, 8192, s);
  StepCoster plain(m, h200, c, {}, 8192);
  EngineConfig e = roomy();
  e.draft_tokens = 2;
  e.accepted_per_verify = expected_tokens_per_verify(s);  // 1: the target's own token only
  Simulation with = simulate(std::vector<RequestSpec>{{0.0, 64, 9}}, e, spec, m);
  Simulation without = simulate(std::vector<RequestSpec>{{0.0, 64, 9}}, roomy(), plain, m);
  CHECK(with.engine.steps == without.engine.steps);  // 1 prefill + 8 steps of one token each
  CHECK(*with.requests.at(0).tpot_s() > *without.requests.at(0).tpot_s());
}

TEST_CASE("serve disaggregated: with an instant link, the pools' own times") {
  // One request of 512 + 8 tokens. The prefill pool's engine prefills the prompt in one step; the
  // decode pool's engine receives its cache (511 tokens) at once and runs the last prompt token,
  // which yields token 1, at 512 cached; then tokens 2..8 at 513..519, as an aggregated engine
  // decodes them after its own prefill. So TTFT = prefill + decode(512), E2E = TTFT + the 7 steps,
  // and TPOT is the aggregated engine's.
  const ModelSpec& m = models().find("llama-3.1-8b");
  const GpuSpec& h100 = gpus().find("h100");
  const DeploymentConfig c = fp8_h100();
  StepCoster prefill_coster(m, h100, c, {}, 8192);
  StepCoster decode_coster(m, h100, c, {}, 8192);
  StepCoster aggregated_coster(m, h100, c, {}, 8192);
  const std::vector<RequestSpec> one{{0.0, 512, 8}};
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(one); };
  KvLink instant;
  instant.bytes_per_s = std::numeric_limits<double>::infinity();
  instant.kv_bytes_per_token = 131072;
  std::vector<RequestRecord> client;
  DisaggregatedRun run =
      simulate_disaggregated(source, {roomy(), &prefill_coster, &m, 1}, {roomy(), &decode_coster, &m, 1}, instant,
                             [&](std::size_t, const RequestRecord& r) { client.push_back(r); });
  REQUIRE(client.size() == 1);
  const std::vector<PrefillChunk> prompt{{512, 0}};
  MixedBatch prefill;
  prefill.chunks = prompt;
  const double prefill_s = prefill_coster.time_s(prefill);
  double rest = 0;
  for (std::int64_t kv = 513; kv <= 519; ++kv) rest += decode_coster.time_s(decode_at(kv));
  CHECK(run.transfer_s.max() == 0);
  CHECK(run.prefill_s.max() == Approx(prefill_s).epsilon(1e-12));
  CHECK(client[0].ttft_s() == Approx(prefill_s + decode_coster.time_s(decode_at(512))).epsilon(1e-12));
  CHECK(client[0].e2e_s() == Approx(client[0].ttft_s() + rest).epsilon(1e-12));
  Simulation aggregated = simulate(one, roomy(), aggregated_coster, m);
  CHECK(*client[0].tpot_s() == Approx(*aggregated.requests.at(0).tpot_s()).epsilon(1e-12));
  CHECK(run.prefill.engine.steps == 1);
  CHECK(run.decode.engine.steps == 8);
}

TEST_CASE("serve disaggregated: a link of B bytes/s adds KV bytes x prompt / B + latency to TTFT") {
  // 131,072 B per token (llama-3.1-8b: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B) x 1000
  // tokens = 131.072 MB over 10 GB/s = 13.1072 ms, plus 5 us.
  const ModelSpec& m = models().find("llama-3.1-8b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster prefill_coster(m, h100, fp8_h100(), {}, 8192);
  StepCoster decode_coster(m, h100, fp8_h100(), {}, 8192);
  const std::vector<RequestSpec> one{{0.0, 1000, 4}};
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(one); };
  KvLink link{10e9, 5e-6, 131072};
  KvLink instant{std::numeric_limits<double>::infinity(), 0, 131072};
  DisaggregatedRun slow = simulate_disaggregated(source, {roomy(), &prefill_coster, &m, 1},
                                                 {roomy(), &decode_coster, &m, 1}, link, nullptr);
  DisaggregatedRun fast = simulate_disaggregated(source, {roomy(), &prefill_coster, &m, 1},
                                                 {roomy(), &decode_coster, &m, 1}, instant, nullptr);
  CHECK(slow.transfer_s.max() == Approx(13.1072e-3 + 5e-6).epsilon(1e-12));
  CHECK(slow.overall.end_s - fast.overall.end_s == Approx(13.1072e-3 + 5e-6).epsilon(1e-9));
}

TEST_CASE("serve pools: requests dealt round-robin over the engines and a pool of 2 at rate inf halves the batch") {
  // 8 identical requests over 2 engines: each gets 4, all prefilled in one step and decoded
  // together: each engine's run is that of 4 requests alone.
  const ModelSpec& m = models().find("llama-3.1-8b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster coster(m, h100, fp8_h100(), {}, 8192);
  const std::vector<RequestSpec> eight(8, RequestSpec{0.0, 128, 16});
  const std::vector<RequestSpec> four(4, RequestSpec{0.0, 128, 16});
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(eight); };
  std::vector<std::size_t> seen;
  PoolRun pool = simulate_pool(source, {roomy(), &coster, &m, 2},
                               [&](std::size_t index, const RequestRecord&) { seen.push_back(index); });
  Simulation alone = simulate(four, roomy(), coster, m);
  CHECK(pool.engine.batch_max == 4);
  CHECK(pool.running_peak == 8);
  CHECK(pool.engine.steps == 2 * alone.engine.steps);
  CHECK(pool.end_s == Approx(alone.end_s).epsilon(1e-12));
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("serve step cost: attention DP costs one rank's own requests, the MoE over every rank's tokens") {
  // DeepSeek-V3 on 8 H200, EP 8 with attention DP: one rank's step of 16 decode requests is the
  // MoE of 8 x 16 = 128 tokens with its all-to-all, and attention, the dense layers and the head
  // over its own 16: the step llm describes for a batch of 128 spread over the 8 ranks.
  const ModelSpec& m = models().find("deepseek-v3");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c = fp8_h100();
  c.tp = 8;
  c.experts.ep = 8;
  c.experts.attention_dp = true;
  StepCoster coster(m, h200, c, {}, 8192);
  const Sharding s = shard(m, c);
  CHECK(s.attention_dp == 8);
  const double llm = decode_step(m, h200, s, c, 128, 3000).time_s;
  MixedBatch rank;
  rank.decode_requests = 16;
  rank.decode_kv_tokens = 16 * 3000;
  CHECK(coster.time_s(rank) == Approx(llm).epsilon(1e-9));
}

namespace {

// Mixtral-8x7B on 2 H100 in FP8, TP 2 with EP 2 and attention DP: two ranks, each attention and
// KV whole on its GPU, the 8 experts 4 to a GPU.
DeploymentConfig mixtral_dp2() {
  DeploymentConfig c = fp8_h100();
  c.tp = 2;
  c.experts.ep = 2;
  c.experts.attention_dp = true;
  return c;
}

MixedBatch prefill_of(const PrefillChunk& chunk, std::int64_t group_tokens = 0) {
  MixedBatch b;
  b.chunks = std::span<const PrefillChunk>(&chunk, 1);
  b.group_tokens = group_tokens;
  return b;
}

}  // namespace

TEST_CASE("serve lockstep: two attention-DP ranks' step lasts as long as the longer prefill, MoE over both") {
  // Request 0 (2,048 prompt tokens) goes to rank 0, request 1 (128) to rank 1; both prefill in one
  // step (budget 8,192) and emit their only token at its end. The ranks step together: the step
  // is rank 0's, its experts over the 2,048 + 128 = 2,176 tokens of both ranks, so both finish at
  // that time; rank 1's own step (the same experts, 128 tokens of attention and projections) is
  // shorter, and rank 0's alike-ranks cost (experts over 2 x 2,048) longer.
  const ModelSpec& m = models().find("mixtral-8x7b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster coster(m, h100, mixtral_dp2(), {}, 8192);
  REQUIRE(coster.sharding().attention_dp == 2);
  const std::vector<RequestSpec> requests{{0.0, 2048, 1}, {0.0, 128, 1}};
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(requests); };
  std::vector<RequestRecord> records(2);
  PoolRun pool = simulate_pool(source, {roomy(), &coster, &m, 2, 2},
                               [&](std::size_t index, const RequestRecord& r) { records.at(index) = r; });
  const PrefillChunk long_prompt{2048, 0};
  const PrefillChunk short_prompt{128, 0};
  const double rank0 = coster.time_s(prefill_of(long_prompt, 2176));
  const double rank1 = coster.time_s(prefill_of(short_prompt, 2176));
  CHECK(rank1 < rank0);
  CHECK(rank0 < coster.time_s(prefill_of(long_prompt)));
  CHECK(records[0].finish_s == Approx(rank0).epsilon(1e-12));
  CHECK(records[1].finish_s == Approx(rank0).epsilon(1e-12));
  CHECK(pool.lockstep_steps == 1);
  CHECK(pool.engine.steps == 2);
  CHECK(pool.engine.dummy_steps == 0);
}

TEST_CASE("serve lockstep: a rank with nothing scheduled runs a dummy step through each of the group's steps") {
  // Rank 0 gets a request of 128 + 16 tokens (1 prefill step and 15 decode steps), rank 1 one of
  // 128 + 4 (1 + 3): rank 1 is done after 4 steps and idles through the other 12. With a single
  // request, rank 1 is dealt none and idles through all 16.
  const ModelSpec& m = models().find("mixtral-8x7b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster coster(m, h100, mixtral_dp2(), {}, 8192);
  const std::vector<RequestSpec> two{{0.0, 128, 16}, {0.0, 128, 4}};
  const std::vector<RequestSpec> one{{0.0, 128, 16}};
  const SourceFactory source_two = [&] { return std::make_unique<VectorSource>(two); };
  const SourceFactory source_one = [&] { return std::make_unique<VectorSource>(one); };
  PoolRun both = simulate_pool(source_two, {roomy(), &coster, &m, 2, 2}, nullptr);
  CHECK(both.lockstep_steps == 16);
  CHECK(both.engine.steps == 16 + 4);
  CHECK(both.engine.dummy_steps == 12);
  PoolRun alone = simulate_pool(source_one, {roomy(), &coster, &m, 2, 2}, nullptr);
  CHECK(alone.lockstep_steps == 16);
  CHECK(alone.engine.steps == 16);
  CHECK(alone.engine.dummy_steps == 16);
  CHECK(alone.finished == 1);
}

TEST_CASE("serve lockstep: the group waits for the next arrival at any rank when none has work") {
  // Request 0 (rank 0) at t = 0 and request 1 (rank 1) at t = 10 s, 128 + 2 tokens each: rank 0
  // runs its 2 steps while rank 1 idles, both wait until 10 s, then rank 1 runs its 2 while rank 0
  // idles: 4 steps of the group, 2 dummy steps each, and request 1 scheduled at its arrival.
  const ModelSpec& m = models().find("mixtral-8x7b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster coster(m, h100, mixtral_dp2(), {}, 8192);
  const std::vector<RequestSpec> requests{{0.0, 128, 2}, {10.0, 128, 2}};
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(requests); };
  std::vector<RequestRecord> records(2);
  PoolRun pool = simulate_pool(source, {roomy(), &coster, &m, 2, 2},
                               [&](std::size_t index, const RequestRecord& r) { records.at(index) = r; });
  CHECK(pool.lockstep_steps == 4);
  CHECK(pool.engine.dummy_steps == 4);
  CHECK(records[1].scheduled_s == 10.0);
  CHECK(records[1].queue_s() == 0.0);
  CHECK(records[1].e2e_s() == Approx(records[0].e2e_s()).epsilon(1e-12));
}

TEST_CASE("serve lockstep: ranks in phase step as each alone with every rank alike, and one rank is the engine") {
  // 4 identical requests over 2 ranks: each rank runs 2, in phase, so the group's tokens are twice
  // each rank's, which is the coster's alike-ranks cost of one rank's batch: each rank's run is
  // that of its 2 requests alone.
  const ModelSpec& m = models().find("mixtral-8x7b");
  const GpuSpec& h100 = gpus().find("h100");
  StepCoster coster(m, h100, mixtral_dp2(), {}, 8192);
  const std::vector<RequestSpec> four(4, RequestSpec{0.0, 256, 32});
  const std::vector<RequestSpec> two(2, RequestSpec{0.0, 256, 32});
  const SourceFactory source = [&] { return std::make_unique<VectorSource>(four); };
  PoolRun pool = simulate_pool(source, {roomy(), &coster, &m, 2, 2}, nullptr);
  Simulation alone = simulate(two, roomy(), coster, m);
  CHECK(pool.lockstep_steps == alone.engine.steps);
  CHECK(pool.engine.steps == 2 * alone.engine.steps);
  CHECK(pool.engine.dummy_steps == 0);
  CHECK(pool.end_s == Approx(alone.end_s).epsilon(1e-12));
  // One rank: simulate_lockstep is the engine of simulate().
  VectorSource one_rank(two);
  LockstepRun lockstep = simulate_lockstep({{&one_rank, roomy(), nullptr}}, coster, m);
  REQUIRE(lockstep.ranks.size() == 1);
  CHECK(lockstep.steps == alone.engine.steps);
  CHECK(lockstep.ranks.front().end_s == alone.end_s);
  CHECK(lockstep.ranks.front().engine.busy_s == alone.engine.busy_s);
}

TEST_CASE("plan --rps searches EP and attention DP on a MoE model, the attention-DP candidate simulated in lockstep") {
  // DeepSeek-V3 (256 routed experts) on 8 H200, FP8 weights, bf16 KV: EP 1, 2, 4 and 8 divide both
  // TP 8 and the experts, and attention DP applies at EP 8: 5 candidates. Under attention DP each
  // GPU caches only its own requests' MLA latents (TP alone replicates them on all 8), so it holds
  // more than 4 times as many requests, its weights per GPU (attention whole on every GPU) aside.
  const ModelSpec& m = models().find("deepseek-v3");
  PlanSpace space;
  space.gpus = {gpus().find("h200")};
  space.usd_per_gpu_hour = {{"h200-sxm", 1.0}};
  space.weights = {DType::fp8_e4m3};
  space.kv = {DType::bf16};
  space.tp = {8};
  space.pp = {1};
  // Requests 1,000 s apart on average: each runs alone (the seed's 8 arrivals never overlap).
  const Workload w{1e-3, 1024, 16, 0.1, 5.0};
  const PlanResult plan = plan_deployment(m, w, space);
  CHECK(plan.configurations == 5);
  REQUIRE(plan.feasible == 5);
  const auto find = [&](int ep, bool dp) {
    const auto it = std::find_if(plan.ranked.begin(), plan.ranked.end(),
                                 [&](const PlanCandidate& c) { return c.ep == ep && c.attention_dp == dp; });
    REQUIRE(it != plan.ranked.end());
    return *it;
  };
  const PlanCandidate ep8 = find(8, false);
  const PlanCandidate dp = find(8, true);
  CHECK(dp.max_batch > 4 * ep8.max_batch);
  // Simulated as serve runs it: 8 ranks in lockstep, a request alone on its rank while the other 7
  // idle, so its TTFT is its own prefill with the routed experts over its 1,024 tokens (not the
  // alike-ranks 8 x 1,024).
  PlanResult only_dp;
  only_dp.ranked = {dp};
  PlanSimulationOptions o;
  o.requests = 8;
  const PlanSimulation sim = simulate_candidates(m, w, space, only_dp, o);
  REQUIRE(sim.simulated == 1);
  const std::vector<SimulatedCandidate>& ran = sim.meeting.empty() ? sim.missing : sim.meeting;
  REQUIRE(ran.size() == 1);
  const CandidateDeployment deployment = candidate_deployment(space, space.gpus.front(), dp);
  StepCoster coster(m, space.gpus.front(), deployment.config, deployment.time, 8192);
  const PrefillChunk prompt{1024, 0};
  const double alone = coster.time_s(prefill_of(prompt, 1024));
  CHECK(alone < coster.time_s(prefill_of(prompt)));
  CHECK(ran.front().ttft.samples == 8);
  // (TTFT = first token - arrival, both some 1,000 s from the start: equal to about 1e-13 s.)
  CHECK(ran.front().ttft.p50 == Approx(alone).epsilon(1e-9));
  CHECK(ran.front().ttft.max == Approx(alone).epsilon(1e-9));
  // Disaggregated, the same replica in both pools (8 ranks in lockstep each): one of each meets
  // these loose targets, 2 x 8 GPUs.
  const std::vector<DisaggregatedCandidate> pools = simulate_disaggregated_candidates(m, w, space, only_dp, o);
  REQUIRE(pools.size() == 1);
  CHECK(pools.front().meets);
  CHECK(pools.front().prefill_replicas == 1);
  CHECK(pools.front().decode_replicas == 1);
  CHECK(pools.front().gpus_total == 16);
}

TEST_CASE(
    "llm step: FP8 routed experts run W8A8 at every decode batch, the shared experts as the block's projections") {
  // DeepSeek-V3 in FP8 on 8 H200. The routed experts' inputs are FP8 at 64 decode rows and at 8
  // (the engines' FP8 MoE kernels quantise per token group at every batch; no W8A16 grouped kernel
  // exists to cost them), so the calibration's gemm_grouped.fp8_e4m3 table costs both. The shared
  // experts follow the dense projections' rule: W8A8 GEMMs above 16 rows, W8A16 GEMVs (bf16 inputs)
  // up to 16.
  const ModelSpec& m = models().find("deepseek-v3");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c = fp8_h100();
  c.kv = DType::bf16;
  c.tp = 8;
  const Sharding s = shard(m, c);
  const StepFormats f = StepFormats::of(c, h200);
  const auto input_of = [&](std::int64_t rows, std::string_view name) {
    for (const DecoderLayer& layer : describe_step(m, s, f, {StepPhase::decode, rows, 1024})) {
      for (const DecoderOp& op : layer.ops) {
        if (op.name == name) return op.activations;
      }
    }
    FAIL("no op " << name);
    return DType::bf16;
  };
  CHECK(input_of(64, "experts_gate_up") == DType::fp8_e4m3);
  CHECK(input_of(8, "experts_gate_up") == DType::fp8_e4m3);
  CHECK(input_of(8, "experts_down") == DType::fp8_e4m3);
  CHECK(input_of(64, "shared_gate_up") == DType::fp8_e4m3);
  CHECK(input_of(8, "shared_gate_up") == DType::bf16);
}

TEST_CASE("plan --rps with speculation: candidates with and without it, each simulated as serve --speculate runs it") {
  // DeepSeek-V3 on 8 H200 (EP 8, FP8 weights, bf16 KV) without speculation and with 2 MTP drafts at
  // acceptance 1: 2 candidates. Closed form: a verify cycle yields 1 + 1 + 1 = 3 tokens per sequence,
  // so TPOT = cycle / 3 + batch x TTFT / output, the cycle that of llm --speculate at the last token.
  const ModelSpec& m = models().find("deepseek-v3");
  PlanSpace space;
  space.gpus = {gpus().find("h200")};
  space.usd_per_gpu_hour = {{"h200-sxm", 1.0}};
  space.weights = {DType::fp8_e4m3};
  space.kv = {DType::bf16};
  space.tp = {8};
  space.pp = {1};
  space.ep = {8};
  space.attention_dp = false;
  space.speculation = {mtp(2, 1.0)};
  space.keep_ranked = 1;  // still one of each kind (so that the simulation can compare them)
  // Requests 1,000 s apart on average: each runs alone. 7 output tokens: the prefill yields the
  // first, then 2 verify steps of 3 tokens each.
  const Workload w{1e-3, 1024, 7, 0.1, 5.0};
  const PlanResult plan = plan_deployment(m, w, space);
  CHECK(plan.configurations == 2);
  REQUIRE(plan.feasible == 2);
  REQUIRE(plan.ranked.size() == 2);
  const auto find = [&](int k) {
    const auto it = std::find_if(plan.ranked.begin(), plan.ranked.end(),
                                 [&](const PlanCandidate& c) { return c.draft_tokens == k; });
    REQUIRE(it != plan.ranked.end());
    return *it;
  };
  const PlanCandidate plain = find(0);
  const PlanCandidate spec = find(2);
  CHECK(plain.tokens_per_step == 1.0);
  CHECK(spec.tokens_per_step == 3.0);
  const CandidateDeployment deployment = candidate_deployment(space, space.gpus.front(), spec);
  const Sharding sharding = shard(m, deployment.config);
  const SpeculativeDecode cycle = speculative_decode(m, space.gpus.front(), sharding, deployment.config, spec.batch,
                                                     1024 + 7, space.speculation.front(), deployment.time);
  CHECK(spec.step_s == Approx(cycle.cycle_s).epsilon(1e-12));
  CHECK(spec.tpot_s == Approx(cycle.cycle_s / 3 + static_cast<double>(spec.batch) * spec.ttft_s / 7).epsilon(1e-12));
  // The drafter's weights and cache take memory: fewer requests fit.
  const MemoryPlan memory = plan_memory(m, space.gpus.front(), sharding, deployment.config, 1024 + 7);
  CHECK(spec.max_batch == max_requests_with_draft(memory, sharding, cycle));
  CHECK(spec.max_batch < plain.max_batch);

  // Simulated: past the first that meets the (loose) targets, until one of each kind has.
  PlanSimulationOptions o;
  o.requests = 4;
  o.wanted = 1;
  const PlanSimulation sim = simulate_candidates(m, w, space, plan, o);
  CHECK(sim.simulated == 2);
  REQUIRE(sim.meeting.size() == 2);
  const auto simulated = [&](int k) {
    for (const SimulatedCandidate& c : sim.meeting) {
      if (c.candidate.draft_tokens == k) return c;
    }
    FAIL("not simulated");
    return sim.meeting.front();
  };
  // Alone, the speculating request's two verify steps run 3 queries over 1,025 and then 1,028
  // cached tokens (prompt + the tokens emitted so far), each with the drafter's 2 MTP passes.
  StepCoster coster(m, space.gpus.front(), deployment.config, deployment.time, 8192 * 3, space.speculation.front());
  const double verify = coster.time_s(decode_at(1025, 3)) + coster.time_s(decode_at(1028, 3));
  const std::vector<PrefillChunk> chunk{{1024, 0}};
  MixedBatch prompt;
  prompt.chunks = chunk;
  const SimulatedCandidate s = simulated(2);
  CHECK(s.tpot.samples == 4);
  CHECK(s.tpot.p50 == Approx(verify / 6).epsilon(1e-9));
  CHECK(s.ttft.p50 == Approx(coster.time_s(prompt)).epsilon(1e-9));
  // Plain decode takes a step per token: the 6 tokens after the first cost more than 2 verify cycles.
  CHECK(simulated(0).tpot.p50 > s.tpot.p50);
}
