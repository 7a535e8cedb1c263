#pragma once

// The Pareto front of a model's deployments: for a workload (prompt and output lengths), sweep GPU x
// TP x PP x EP x attention DP x weight format x KV format x speculation x batch, aggregated and (on
// request) disaggregated into a prefill and a decode pool, time each feasible point with plan's
// closed form, and keep the points no other point beats in both tokens/s per GPU and tokens/s per
// user. docs/llm.md (section 9) and docs/deployment-modes.md say how to read it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/llm/disaggregation.hpp"
#include "roofline/llm/plan.hpp"
#include "roofline/llm/speculative.hpp"

namespace roofline {

// The most replicas of one pool a disaggregated point takes (as plan --rps --disaggregate searches).
inline constexpr std::int64_t pool_replicas_limit = 64;

struct ParetoSpace {
  // GPUs, prices (empty: no cost; else one per GPU), weight and KV formats, TP, PP and EP degrees,
  // attention DP, speculation (each a point beside none), the base deployment and how ops are timed
  // (calibration_by_gpu included). Its
  // max_batch and keep_* are plan --rps's and not read here: the batches are `batches`.
  PlanSpace plan;
  // Concurrent requests per replica tried, each a point.
  std::vector<std::int64_t> batches{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  // Service-level targets as filters: a point that misses one is rejected (ttft, tpot).
  std::optional<double> tpot_s;
  std::optional<double> ttft_s;
  // Dominated points kept for the chart, an even stride over them in sweep order.
  std::size_t keep_dominated = 200;
  // Disaggregated points beside the aggregated ones: each decode configuration at each batch is also
  // the decode pool of a pair of pools, with the prefill pool (its own TP, PP, EP and attention DP;
  // the same GPU and formats) and the ratio of replicas that serve the most tokens/s per GPU.
  bool disaggregate = false;
  // The ratios tried; empty: for each decode count Nd from 1 to max_pool_replicas, the prefill
  // counts either side of the balance (best_pool_ratio), which finds the best ratio of that grid.
  std::vector<PoolRatio> pool_ratios;
  std::int64_t max_pool_replicas = 8;
};

struct ParetoDeployment {
  std::string gpu;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  bool attention_dp = false;
  DType weights = DType::bf16;
  DType kv = DType::bf16;
  int draft_tokens = 0;  // K of the Speculation tried; 0: no speculation
  std::int64_t batch = 1;
  // Disaggregated: prefill replicas of their own layout hand every request's KV cache to decode
  // replicas of the layout above (which the batch and speculation are of); unset: aggregated, one
  // replica prefills and decodes.
  struct Pools {
    ReplicaLayout prefill;  // the layout of the prefill replicas
    PoolRatio ratio;
  };
  std::optional<Pools> pools;
  // One replica (with pools: a decode replica).
  [[nodiscard]] int gpus() const { return tp * pp; }
  // The unit the point's tokens/s per GPU divide by: one replica, or both pools at their ratio.
  [[nodiscard]] std::int64_t deployment_gpus() const;
};

struct ParetoPoint {
  ParetoDeployment deployment;
  std::int64_t max_batch = 0;  // requests that fit at prompt + output tokens (beside a drafter)
  // Aggregated: the prefill of one prompt. Disaggregated: the prefill (in the prefill pool) + the KV
  // transfer + the decode pool's first step, which yields the first token (docs/serve.md section 7).
  double ttft_s = 0;
  double step_s = 0;                 // one decode step, or one verify cycle (verify + K draft passes)
  double tokens_per_step = 1;        // per sequence: 1, or the expected tokens per verify step
  double tpot_s = 0;                 // step / tokens per step (+ batch x TTFT / output, aggregated)
  double tokens_per_s_per_user = 0;  // 1 / TPOT
  // Aggregated: batch / TPOT / (TP x PP); disaggregated: pools_throughput's at the ratio.
  double tokens_per_s_per_gpu = 0;
  // Disaggregated only: the prefill of one prompt in the prefill pool, its KV over the link, and the
  // prefill replicas per decode replica that balance the pools' rates (the ratio is the best whole one).
  double prefill_s = 0;
  double kv_transfer_s = 0;
  double pool_balance = 0;
  std::optional<double> usd_per_million_output_tokens;  // with a price: price / (tokens/s per GPU x 3600) x 1e6
  std::string_view bottleneck;                          // of the decode (or verify) step
};

struct ParetoResult {
  std::vector<ParetoPoint> front;      // tokens/s per user ascending (tokens/s per GPU descending)
  std::size_t chosen = 0;              // index into front (pick_chosen)
  std::vector<ParetoPoint> dominated;  // a sample (ParetoSpace::keep_dominated), sweep order
  std::int64_t swept = 0;              // points: configurations x batches x modes
  std::int64_t feasible = 0;
  std::int64_t configurations = 0;      // GPU x TP x PP x EP x attention DP x formats x speculation
  std::int64_t modes = 1;               // aggregated, and disaggregated where asked for
  std::int64_t decode_evaluations = 0;  // steps timed (one per feasible batch, one more at a TPOT miss)
  // Disaggregated: the prefill layouts that can serve as a prefill pool (per GPU and formats), those
  // kept after pruning (another is at least as fast, with no more GPUs and no slower transfer), and
  // the pairings of a decode point with a prefill pool at a ratio priced in closed form.
  std::int64_t prefill_pools = 0;
  std::int64_t prefill_pools_kept = 0;
  std::int64_t pool_pairings = 0;
  std::vector<RejectionCount> rejections;  // every infeasible point by reason, the first as example
};

// The non-dominated subset of `points`: a point stays unless another is at least as fast in both
// tokens/s per user and per GPU and faster in one (equal points all stay). Sorted by tokens/s per
// user ascending, ties by tokens/s per GPU descending.
[[nodiscard]] std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points);

// The point a rule picks on a front sorted as pareto_front sorts it: with a TPOT target, the
// highest tokens/s per GPU (every point on the front meets it: the targets filter the sweep); else
// the knee, the point farthest above the chord between the front's two ends with both axes on a
// log scale normalised to [0, 1] (the largest sum of the normalised logs). Throws std::logic_error
// on an empty front.
[[nodiscard]] std::size_t pick_chosen(const std::vector<ParetoPoint>& front, bool tpot_target);

// Throws InputError: prompt or output out of range, an empty list in the space, a batch out of
// range, a target that is not positive, a price missing for a GPU (when any is given), a pool ratio
// or pool size out of range, and "no feasible point" (with the count per reason and an example).
[[nodiscard]] ParetoResult sweep_pareto(const ModelSpec& model, std::int64_t prompt, std::int64_t output,
                                        const ParetoSpace& space);

// "h200-sxm TP 8 PP 1 EP 8 attention-DP fp8_e4m3/fp8_e4m3 speculate 3 batch 64", disaggregated
// "h200-sxm prefill 1 x TP 8 PP 1 EP 8 : decode 2 x TP 8 PP 1 EP 8 fp8_e4m3/fp8_e4m3 batch 64".
[[nodiscard]] std::string describe(const ParetoDeployment& deployment);

}  // namespace roofline
