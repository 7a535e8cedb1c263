#pragma once

// The Pareto front of a model's deployments: for a workload (prompt and output lengths), sweep GPU x
// TP x PP x EP x attention DP x weight format x KV format x speculation x batch, time each feasible
// point with plan's closed form, and keep the points no other point beats in both tokens/s per GPU
// and tokens/s per user. docs/llm.md (section 9) and docs/deployment-modes.md say how to read it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/llm/plan.hpp"
#include "roofline/llm/speculative.hpp"

namespace roofline {

struct ParetoSpace {
  // GPUs, prices (empty: no cost; else one per GPU), weight and KV formats, TP, PP and EP degrees,
  // attention DP, the base deployment and how ops are timed (calibration_by_gpu included). Its
  // max_batch and keep_* are plan --rps's and not read here: the batches are `batches`.
  PlanSpace plan;
  // Concurrent requests per replica tried, each a point.
  std::vector<std::int64_t> batches{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  // Tried beside no speculation, each a point (MTP or a draft model, as in `llm --speculate`).
  std::vector<Speculation> speculation;
  // Service-level targets as filters: a point that misses one is rejected (ttft, tpot).
  std::optional<double> tpot_s;
  std::optional<double> ttft_s;
  // Dominated points kept for the chart, an even stride over them in sweep order.
  std::size_t keep_dominated = 200;
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
  [[nodiscard]] int gpus() const { return tp * pp; }
};

struct ParetoPoint {
  ParetoDeployment deployment;
  std::int64_t max_batch = 0;        // requests that fit at prompt + output tokens (beside a drafter)
  double ttft_s = 0;                 // prefill of one prompt
  double step_s = 0;                 // one decode step, or one verify cycle (verify + K draft passes)
  double tokens_per_step = 1;        // per sequence: 1, or the expected tokens per verify step
  double tpot_s = 0;                 // step / tokens per step + batch x TTFT / output
  double tokens_per_s_per_user = 0;  // 1 / TPOT
  double tokens_per_s_per_gpu = 0;   // batch / TPOT / (TP x PP)
  std::optional<double> usd_per_million_output_tokens;  // with a price: price / (tokens/s per GPU x 3600) x 1e6
  std::string_view bottleneck;                          // of the decode (or verify) step
};

struct ParetoResult {
  std::vector<ParetoPoint> front;      // tokens/s per user ascending (tokens/s per GPU descending)
  std::size_t chosen = 0;              // index into front (pick_chosen)
  std::vector<ParetoPoint> dominated;  // a sample (ParetoSpace::keep_dominated), sweep order
  std::int64_t swept = 0;              // points: configurations x batches
  std::int64_t feasible = 0;
  std::int64_t configurations = 0;         // GPU x TP x PP x EP x attention DP x formats x speculation
  std::int64_t decode_evaluations = 0;     // steps timed (one per feasible batch, one more at a TPOT miss)
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
// range, a target that is not positive, a price missing for a GPU (when any is given), and "no
// feasible point" (with the count per reason and an example).
[[nodiscard]] ParetoResult sweep_pareto(const ModelSpec& model, std::int64_t prompt, std::int64_t output,
                                        const ParetoSpace& space);

// "h200 TP 8 PP 1 EP 8 DP bf16/fp8 MTP 3 batch 64".
[[nodiscard]] std::string describe(const ParetoDeployment& deployment);

}  // namespace roofline
