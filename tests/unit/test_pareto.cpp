// plan --pareto's library part (roofline/llm/pareto.hpp): the front of hand-made points, the rule
// that picks the chosen one, and the sweep's counts and closed form on small spaces.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/pareto.hpp"

using namespace roofline;
using namespace roofline::llm_fixture;
using Catch::Matchers::Contains;

namespace {

ParetoPoint point(std::string gpu, double per_user, double per_gpu) {
  ParetoPoint p;
  p.deployment.gpu = std::move(gpu);
  p.tokens_per_s_per_user = per_user;
  p.tokens_per_s_per_gpu = per_gpu;
  return p;
}

// One GPU, one TP/PP/format: the sweep varies what a test sets.
ParetoSpace one_gpu(const std::string& gpu) {
  ParetoSpace space;
  space.plan.gpus = {gpus().find(gpu)};
  space.plan.tp = {1};
  space.plan.pp = {1};
  space.plan.weights = {DType::bf16};
  space.plan.kv = {DType::bf16};
  return space;
}

}  // namespace

TEST_CASE("pareto: of three points the dominated one goes, equal points both stay, sorted by per-user speed") {
  // a (10, 100) and b (20, 50) trade one axis for the other; c (15, 40) is beaten by b in both
  // (20 > 15, 50 > 40); d equals a (neither beats the other); e (20, 30) ties b per user and is
  // slower per GPU, so b dominates it.
  const std::vector<ParetoPoint> front = pareto_front(
      {point("a", 10, 100), point("b", 20, 50), point("c", 15, 40), point("d", 10, 100), point("e", 20, 30)});
  REQUIRE(front.size() == 3);
  CHECK(front[0].tokens_per_s_per_user == 10);
  CHECK(front[1].tokens_per_s_per_user == 10);
  CHECK(front[2].deployment.gpu == "b");
  const std::string first_two = front[0].deployment.gpu + front[1].deployment.gpu;
  CHECK((first_two == "ad" || first_two == "da"));
}

TEST_CASE("pareto: the chosen point is the knee on log axes, or the fastest per GPU under a TPOT target") {
  // x = log10 per user over [1, 3]: 0, 0.5, 1; y = log10 per GPU over [1, 3]: 1,
  // (log10 800 - 1) / 2 = 0.9515, 0. Sums 1, 1.4515, 1: the middle point is the knee.
  const std::vector<ParetoPoint> front{point("slow", 10, 1000), point("knee", 100, 800), point("fast", 1000, 10)};
  CHECK(pick_chosen(front, false) == 1);
  CHECK(pick_chosen(front, true) == 0);
  // One point: itself (the normalised axes have no span).
  CHECK(pick_chosen({point("only", 5, 5)}, false) == 0);
}

TEST_CASE("pareto: the sweep counts configurations x batches and keeps tokens/s per GPU = batch / TPOT / GPUs") {
  const ModelSpec& model = models().find("llama-3.1-8b");
  ParetoSpace space = one_gpu("h100");
  space.plan.tp = {1, 2};
  space.batches = {1, 4, 16};
  const ParetoResult r = sweep_pareto(model, 512, 128, space);
  // A dense model: EP 1 only, no attention DP; 2 TP x 1 PP x 1 x 1 formats = 2 configurations.
  CHECK(r.configurations == 2);
  CHECK(r.swept == 6);
  CHECK(r.feasible == 6);  // 8B in bf16 fits one H100 with room for 16 requests of 640 tokens
  REQUIRE(!r.front.empty());
  CHECK(r.front.size() + r.dominated.size() == 6);
  for (std::size_t i = 0; i < r.front.size(); ++i) {
    const ParetoPoint& p = r.front[i];
    CHECK(p.tokens_per_s_per_user == Approx(1 / p.tpot_s));
    CHECK(p.tokens_per_s_per_gpu == Approx(static_cast<double>(p.deployment.batch) / p.tpot_s / p.deployment.gpus()));
    // TPOT = step + batch x TTFT / output (no speculation: one token per step).
    CHECK(p.tpot_s == Approx(p.step_s + static_cast<double>(p.deployment.batch) * p.ttft_s / 128.0));
    CHECK(!p.usd_per_million_output_tokens);
    if (i > 0) {
      CHECK(p.tokens_per_s_per_user >= r.front[i - 1].tokens_per_s_per_user);
      CHECK(p.tokens_per_s_per_gpu <= r.front[i - 1].tokens_per_s_per_gpu);
    }
  }
  // No dominated point beats a front point in both.
  for (const ParetoPoint& d : r.dominated) {
    for (const ParetoPoint& f : r.front) {
      CHECK_FALSE(
          (d.tokens_per_s_per_user >= f.tokens_per_s_per_user && d.tokens_per_s_per_gpu >= f.tokens_per_s_per_gpu &&
           (d.tokens_per_s_per_user > f.tokens_per_s_per_user || d.tokens_per_s_per_gpu > f.tokens_per_s_per_gpu)));
    }
  }
}

TEST_CASE("pareto: EP auto tries the divisors of the experts that divide TP, and attention DP at EP = TP") {
  // Mixtral, 8 experts, TP 8: EP 1, 2, 4, 8 and EP 8 with attention DP = 5 configurations; TP 4:
  // EP 1, 2, 4 and EP 4 with attention DP = 4.
  const ModelSpec& model = models().find("mixtral-8x7b");
  ParetoSpace space = one_gpu("h200");
  space.batches = {1};
  space.plan.tp = {8};
  CHECK(sweep_pareto(model, 256, 64, space).configurations == 5);
  space.plan.tp = {4};
  CHECK(sweep_pareto(model, 256, 64, space).configurations == 4);
  space.plan.attention_dp = false;
  CHECK(sweep_pareto(model, 256, 64, space).configurations == 3);
}

TEST_CASE("pareto: speculation with acceptance 1 yields K + 1 tokens per step and a price gives the cost") {
  const ModelSpec& model = models().find("deepseek-v3");
  ParetoSpace space = one_gpu("h200");
  space.plan.tp = {8};
  space.plan.weights = {DType::fp8_e4m3};
  space.plan.ep = {8};
  space.plan.attention_dp = false;
  space.batches = {1};
  space.plan.speculation = {Speculation{2, {1.0}, std::nullopt}};
  space.plan.usd_per_gpu_hour = {{"h200-sxm", 3.6}};
  const ParetoResult r = sweep_pareto(model, 1024, 1024, space);
  CHECK(r.configurations == 2);  // without and with speculation
  bool speculated = false;
  for (const std::vector<ParetoPoint>* list : {&r.front, &r.dominated}) {
    for (const ParetoPoint& p : *list) {
      REQUIRE(p.usd_per_million_output_tokens);
      // $3.60 per GPU-hour = $0.001 per GPU-second: 1e6 tokens cost 1e3 / (tokens/s per GPU) dollars.
      CHECK(*p.usd_per_million_output_tokens == Approx(1e3 / p.tokens_per_s_per_gpu));
      if (p.deployment.draft_tokens == 2) {
        speculated = true;
        CHECK(p.tokens_per_step == 3.0);
      }
    }
  }
  CHECK(speculated);
}

TEST_CASE("pareto: bad spaces and targets are input errors naming the flag") {
  const ModelSpec& model = models().find("llama-3.1-8b");
  ParetoSpace space = one_gpu("h100");
  space.batches = {};
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("--batches"));
  space = one_gpu("h100");
  space.plan.usd_per_gpu_hour = {{"h200-sxm", 3}};
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("no price for h100-sxm"));
  space = one_gpu("h100");
  space.tpot_s = 0;
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("--tpot-ms"));
  // A target nothing meets: no feasible point, counted by reason.
  space = one_gpu("h100");
  space.tpot_s = 1e-6;
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("tpot"));
  CHECK_THROWS_AS(pick_chosen({}, false), std::logic_error);
}

// ---- Disaggregated prefill/decode points (ParetoSpace::disaggregate; roofline/llm/disaggregation.hpp)

TEST_CASE("pareto: the best pool ratio, derived by hand from the pools' rates") {
  // A prefill replica serves 10 requests/s on 2 GPUs, a decode replica 4 requests/s on 4 GPUs, 100
  // output tokens each. Balance: 4 / 10 = 0.4 prefill replicas per decode replica. Np:Nd serves
  // min(10 Np, 4 Nd) requests/s on 2 Np + 4 Nd GPUs:
  //   1:1  min(10, 4) = 4 on 6 GPUs   = 0.667 requests/s per GPU
  //   1:2  min(10, 8) = 8 on 10       = 0.800
  //   1:3  min(10, 12) = 10 on 14     = 0.714
  //   2:3  min(20, 12) = 12 on 16     = 0.750
  //   1:4  10 on 18 = 0.556; 2:4 16 on 20 = 0.800 (as 1:2, on more GPUs)
  //   2:5  min(20, 20) = 20 on 24     = 0.833: balanced exactly
  // With at most 4 per pool the best is 1:2 (80 tokens/s per GPU); with 5, 2:5 (83.3).
  PoolRates rates;
  rates.prefill_requests_per_s = 10;
  rates.decode_requests_per_s = 4;
  rates.prefill_gpus = 2;
  rates.decode_gpus = 4;
  CHECK(rates.balance() == Approx(0.4));
  std::int64_t tried = 0;
  CHECK(best_pool_ratio(rates, 100, 4, &tried) == PoolRatio{1, 2});
  // Nd = 1, 2: 0.4 and 0.8 lie between 0 and 1, raised to 1 (one ratio each); Nd = 3, 4: 1.2 and 1.6
  // lie between 1 and 2 (two each): 6 ratios.
  CHECK(tried == 6);
  CHECK(pools_throughput(rates, {1, 2}, 100).output_tokens_per_s_per_gpu == Approx(80));
  CHECK(best_pool_ratio(rates, 100, 5) == PoolRatio{2, 5});
  const PoolsThroughput balanced = pools_throughput(rates, {2, 5}, 100);
  CHECK(balanced.requests_per_s == Approx(20));
  CHECK(balanced.gpus == 24);
  CHECK(balanced.output_tokens_per_s_per_gpu == Approx(2000.0 / 24));
  // Given ratios: the best of them (1:3 over 1:1).
  CHECK(best_pool_ratio(rates, 100, std::vector<PoolRatio>{{1, 1}, {1, 3}}) == PoolRatio{1, 3});
}

TEST_CASE("pareto: serve's default KV link, derived by hand") {
  // Llama-3.1-8B, bf16 KV: 2 (K, V) x 8 KV heads x 128 x 2 bytes x 32 layers = 131,072 bytes per token.
  // TP 2 on H100: two 50 GB/s scale-out NICs = 100 GB/s; 512 tokens = 67,108,864 bytes in 0.671 ms,
  // + 5 us of latency.
  const ModelSpec& model = models().find("llama-3.1-8b");
  DeploymentConfig config;
  config.tp = 2;
  const KvLink link = default_kv_link(model, gpus().find("h100"), config);
  CHECK(link.kv_bytes_per_token == 131072.0);
  CHECK(link.bytes_per_s == Approx(100e9));
  CHECK(link.transfer_s(512) == Approx(67108864.0 / 100e9 + 5e-6));
}

TEST_CASE("pareto: a disaggregated point pairs its decode pool with the best prefill pool and ratio of the grid") {
  const ModelSpec& model = models().find("llama-3.1-8b");
  ParetoSpace space = one_gpu("h100");
  space.plan.tp = {1, 2};
  space.batches = {1, 4, 16};
  space.disaggregate = true;
  space.max_pool_replicas = 8;
  space.keep_dominated = 1000;  // every point, for the check below
  const std::int64_t prompt = 512;
  const std::int64_t output = 128;
  const ParetoResult r = sweep_pareto(model, prompt, output, space);
  CHECK(r.configurations == 2);
  CHECK(r.modes == 2);
  CHECK(r.swept == 12);  // 2 configurations x 3 batches x 2 modes
  CHECK(r.feasible == 12);
  CHECK(r.prefill_pools == 2);  // TP 1 and TP 2 both hold one prompt
  // The prefill of one prompt per layout, read off the aggregated points (their TTFT).
  std::map<int, double> prefill_s;
  std::vector<const ParetoPoint*> pairs;
  for (const std::vector<ParetoPoint>* list : {&r.front, &r.dominated}) {
    for (const ParetoPoint& p : *list) {
      if (p.deployment.pools) {
        pairs.push_back(&p);
      } else {
        prefill_s[p.deployment.tp] = p.ttft_s;
      }
    }
  }
  REQUIRE(prefill_s.size() == 2);
  REQUIRE(pairs.size() == 6);
  for (const ParetoPoint* p : pairs) {
    const ParetoDeployment& d = p->deployment;
    const ReplicaLayout& pool = d.pools->prefill;
    CHECK(p->prefill_s == Approx(prefill_s.at(pool.tp)));
    // 131,072 bytes per token x 512 over 50 GB/s per prefill GPU, + 5 us.
    CHECK(p->kv_transfer_s == Approx(131072.0 * 512 / (50e9 * pool.gpus()) + 5e-6));
    // TTFT = prefill + transfer + the decode pool's first step; TPOT = its step (no prefill stalls).
    CHECK(p->ttft_s == Approx(p->prefill_s + p->kv_transfer_s + p->step_s));
    CHECK(p->tpot_s == Approx(p->step_s));
    CHECK(d.deployment_gpus() == d.pools->ratio.prefill * pool.gpus() + d.pools->ratio.decode * d.gpus());
    // No prefill layout at any ratio of the 8 x 8 grid does better (the sweep tries 2 x 8 per pool).
    const auto b = static_cast<double>(d.batch);
    double best = 0;
    for (const auto& [tp, t] : prefill_s) {
      for (int np = 1; np <= 8; ++np) {
        for (int nd = 1; nd <= 8; ++nd) {
          const double requests = std::min(np / t, nd * b / (static_cast<double>(output) * p->tpot_s));
          best = std::max(best, requests * static_cast<double>(output) / (np * tp + nd * d.gpus()));
        }
      }
    }
    CHECK(p->tokens_per_s_per_gpu == Approx(best));
    CHECK(p->pool_balance == Approx(b / (output * p->tpot_s) * p->prefill_s));
  }
}

TEST_CASE("pareto: disaggregated pool bounds are input errors naming the flag") {
  const ModelSpec& model = models().find("llama-3.1-8b");
  ParetoSpace space = one_gpu("h100");
  space.disaggregate = true;
  space.pool_ratios = {{0, 1}};
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("--pool-ratios 0:1"));
  space.pool_ratios = {{1, 65}};
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("1 to 64 replicas"));
  space.pool_ratios = {};
  space.max_pool_replicas = 0;
  CHECK_THROWS_WITH(sweep_pareto(model, 512, 128, space), Contains("--max-pool-replicas 0"));
}
