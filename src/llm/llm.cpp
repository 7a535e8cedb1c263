#include "roofline/llm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "roofline/attention.hpp"
#include "roofline/basis.hpp"
#include "roofline/calibration.hpp"
#include "roofline/error.hpp"

namespace roofline {
namespace {

constexpr std::string_view no_latent_table =
    "multi-head latent attention: no benchmark measures it, the roofline is kept";
constexpr std::string_view no_expert_table =
    "routed experts (many small GEMVs/GEMMs over the experts reached): no benchmark measures them, the roofline is "
    "kept";
constexpr std::string_view no_link_table = "a transfer between GPUs: the link model is kept";
constexpr std::string_view measured_link =
    "a transfer between GPUs: timed by the calibration's measured collectives (not by op tables)";

OpCost scaled(const OpCost& c, double factor) {
  return {c.flops * factor, c.bytes_read * factor, c.bytes_written * factor};
}

OpCost sum(const OpCost& a, const OpCost& b) {
  return {a.flops + b.flops, a.bytes_read + b.bytes_read, a.bytes_written + b.bytes_written};
}

double required_peak(const GpuSpec& gpu, std::optional<double> peak, std::string_view what) {
  if (!peak) throw InputError(fmt::format("{} states no {} rate", gpu.id, what));
  return *peak;
}

// Builds the ops of one step on one GPU of the TP group. `tokens` is the number of query rows
// the step processes: the batch for decode, the prompt for prefill.
class StepBuilder {
 public:
  StepBuilder(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding, const DeploymentConfig& config,
              const TimeOptions& options, bool decode, std::int64_t tokens, std::int64_t context)
      : m_(model),
        gpu_(gpu),
        s_(sharding),
        c_(config),
        o_(options),
        decode_(decode),
        tokens_(tokens),
        context_(context),
        act_(config.activations),
        bandwidth_(gpu.memory_bandwidth_bytes_per_s()),
        weight_peak_(required_peak(gpu, gpu.matrix_peak_flops(matmul_dtype(gpu, config.weights, act_)),
                                   name_of(matmul_dtype(gpu, config.weights, act_)))),
        head_peak_(required_peak(gpu, gpu.matrix_peak_flops(matmul_dtype(gpu, config.embeddings, act_)),
                                 name_of(matmul_dtype(gpu, config.embeddings, act_)))),
        act_peak_(required_peak(gpu, gpu.matrix_peak_flops(act_), name_of(act_))),
        vector_peak_(required_peak(gpu, gpu.peak_flops(vector_peak_class(act_)), "vector")),
        tp_link_(group_link(gpu, config, sharding.tp)),
        measured_(config.collectives && config.collectives_gpu == gpu.id ? config.collectives.get() : nullptr),
        roofs_(options.calibration != nullptr ? Roofs::of(gpu) : Roofs{}) {}

  std::vector<StepOp> layer(bool moe_layer) {
    std::vector<StepOp> ops;
    const std::int64_t h = m_.hidden;
    norm(ops, "attn_norm", tokens_, h);
    if (m_.attention.kind == AttentionKind::gqa) {
      gqa_attention(ops);
    } else {
      latent_attention(ops);
    }
    allreduce(ops, "attn_allreduce", tokens_);
    norm(ops, "ffn_norm", tokens_, h);
    if (moe_layer) {
      experts(ops);
    } else {
      dense_ffn(ops, "ffn", s_.ffn, tokens_);
    }
    allreduce(ops, "ffn_allreduce", tokens_);
    return ops;
  }

  // Embedding lookup, final norm, output head (decode: every request's token; prefill: the last
  // position only) and the gather of the vocabulary-split logits.
  std::vector<StepOp> head() {
    std::vector<StepOp> ops;
    const std::int64_t out_rows = decode_ ? tokens_ : 1;
    const ElementwiseFnInfo& copy = info(ElementwiseFn::copy);
    const ElementwiseShape lookup{tokens_ * m_.hidden, copy.inputs, copy.outputs, copy.flops_per_element, act_};
    add(ops, "embedding", "elementwise", describe("{} rows x {}", tokens_, m_.hidden), elementwise_cost(lookup),
        OpRole::activations, vector_peak_, [&] { return elementwise_basis(lookup); });
    norm(ops, "final_norm", out_rows, m_.hidden);
    linear(ops, "lm_head", out_rows, s_.vocab, m_.hidden, c_.embeddings, head_peak_);
    if (s_.tp > 1) {
      const double total = static_cast<double>(out_rows * m_.vocab) * bytes_per_element(act_);
      StepOp op;
      op.name = "logits_gather";
      op.op = "all_gather";
      const CollectiveCost cost = communication(Collective::all_gather, total, s_.tp, tp_link_);
      op.shape = describe("{} rows x {} vocab over {} GPUs, {}", out_rows, m_.vocab, s_.tp, cost.detail);
      op.link_bytes = total * bus_factor(Collective::all_gather, s_.tp);
      op.role = OpRole::tp_comm;
      op.bound = "link";
      op.time_s = cost.time_s;
      mark_measured(op, cost);
      ops.push_back(op);
    }
    return ops;
  }

  std::vector<StepOp> pipeline_send() {
    std::vector<StepOp> ops;
    const LinkSpec link = group_link(gpu_, c_, s_.tp * s_.pp);
    const double bytes = static_cast<double>(tokens_ * m_.hidden) * bytes_per_element(act_);
    StepOp op;
    op.name = "pp_send";
    op.op = "send";
    op.link_bytes = bytes;
    op.role = OpRole::pp_comm;
    op.bound = "link";
    op.time_s = point_to_point_time(bytes, link);
    std::string how = link.name;
    // A measured two-rank all-gather of 2 x bytes is one step in which each GPU sends `bytes` to
    // the other: the transfer the pipeline makes, measured.
    const CollectiveCost pair = communication(Collective::all_gather, 2 * bytes, 2, link, s_.tp * s_.pp);
    if (pair.measured) {
      op.time_s = pair.time_s;
      how = pair.detail + " (one step: a transfer of the bytes)";
      mark_measured(op, pair);
    }
    op.shape = describe("{} x {} activations, {}", tokens_, m_.hidden, how);
    ops.push_back(op);
    return ops;
  }

 private:
  template <typename... Args>
  std::string describe(fmt::format_string<Args...> format, Args&&... args) const {
    if (!o_.describe) return {};
    return fmt::format(format, std::forward<Args>(args)...);
  }

  // `basis` names the op to the calibration (its tables, roofs and series); it is built only when
  // a calibration is given. Its cost is replaced by `cost`, so that the lookup sees exactly the
  // work this model charges. No basis: no benchmark measures such an op, `uncalibrated` says why.
  void add(std::vector<StepOp>& ops, std::string_view name, std::string_view op, std::string shape, OpCost cost,
           OpRole role, double peak, const std::function<Basis()>& basis, std::string_view uncalibrated = {}) const {
    const OpTime t = roofline_time(cost, peak, bandwidth_);
    StepOp row;
    row.name = name;
    row.op = op;
    row.shape = std::move(shape);
    row.cost = cost;
    row.role = role;
    row.bound = name_of(t.bound);
    row.roofline_s = expected_time_s(t, o_.efficiency);
    row.time_s = row.roofline_s;
    if (o_.calibration != nullptr) row.calibration = calibrate(row, basis, uncalibrated);
    ops.push_back(std::move(row));
  }

  OpCalibration calibrate(StepOp& row, const std::function<Basis()>& make_basis, std::string_view uncalibrated) const {
    OpCalibration out;
    if (!make_basis) {
      out.detail = std::string(uncalibrated);
      return out;
    }
    Basis basis = make_basis();
    basis.cost = row.cost;
    basis.roof_bytes = row.cost.bytes();
    CalibratedOrNot found = calibrated_time(*o_.calibration, basis, roofs_);
    if (const NotCalibrated* none = std::get_if<NotCalibrated>(&found)) {
      out.detail = none->reason;
      return out;
    }
    const CalibratedTime& t = std::get<CalibratedTime>(found);
    out.applied = true;
    out.table = t.table;
    out.efficiency = t.efficiency;
    out.clamped = t.clamped;
    out.detail = basis.note.empty() ? t.detail : fmt::format("{}; {}", t.detail, basis.note);
    row.time_s = t.time_s;
    return out;
  }

  // y[tokens x n] = x[tokens x k] W[k x n]: a GEMV per weight matrix in decode (the weights read
  // once for all requests), a GEMM in prefill.
  [[nodiscard]] OpCost linear_cost(std::int64_t tokens, std::int64_t n, std::int64_t k, DType weights) const {
    if (decode_) return gemv_cost({n, k, tokens, weights, act_});
    return gemm_cost({tokens, n, k, 1, act_, weights, act_});
  }

  [[nodiscard]] Basis linear_basis(std::int64_t tokens, std::int64_t n, std::int64_t k, DType weights) const {
    if (decode_) return gemv_basis({n, k, tokens, weights, act_});
    return gemm_basis({tokens, n, k, 1, act_, weights, act_});
  }

  void linear(std::vector<StepOp>& ops, std::string_view name, std::int64_t tokens, std::int64_t n, std::int64_t k,
              DType weights, double peak) const {
    add(ops, name, decode_ ? "gemv" : "gemm", describe("{} x [{} x {}] {}", tokens, k, n, name_of(weights)),
        linear_cost(tokens, n, k, weights), OpRole::weights, peak,
        [=, this] { return linear_basis(tokens, n, k, weights); });
  }

  void linear(std::vector<StepOp>& ops, std::string_view name, std::int64_t tokens, std::int64_t n,
              std::int64_t k) const {
    linear(ops, name, tokens, n, k, c_.weights, weight_peak_);
  }

  void norm(std::vector<StepOp>& ops, std::string_view name, std::int64_t rows, std::int64_t width) const {
    // Residual add fused into the norm (vLLM's and TensorRT-LLM's fused add + RMSNorm).
    const NormShape shape{rows, width, m_.norm, true, act_};
    add(ops, name, "norm", describe("{} x {} {}", rows, width, name_of(m_.norm)), norm_cost(shape), OpRole::activations,
        vector_peak_, [&] { return norm_basis(shape); });
  }

  void elementwise(std::vector<StepOp>& ops, std::string_view name, std::int64_t elements, ElementwiseFn fn) const {
    const ElementwiseFnInfo& f = info(fn);
    const ElementwiseShape shape{elements, f.inputs, f.outputs, f.flops_per_element, act_};
    add(ops, name, "elementwise", describe("{} x {}", elements, f.name), elementwise_cost(shape), OpRole::activations,
        vector_peak_, [&] { return elementwise_basis(shape); });
  }

  // Rotary embedding on the query and key heads: x' = x cos - y sin per element (2 multiplies and
  // an add), in place; the cos/sin table is small and stays in cache.
  void rope(std::vector<StepOp>& ops, std::int64_t elements) const {
    const ElementwiseShape shape{elements, 1, 1, 3.0, act_};
    add(ops, "rope", "elementwise", describe("{} elements", elements), elementwise_cost(shape), OpRole::activations,
        vector_peak_, [&] { return elementwise_basis(shape); });
  }

  // The new tokens' keys and values (or latents) read in the activation format and written into
  // the cache in the KV format.
  void kv_append(std::vector<StepOp>& ops, std::int64_t elements) const {
    const OpCost read = elementwise_cost({elements, 1, 0, 0.0, act_});
    const OpCost write = elementwise_cost({elements, 0, 1, 0.0, c_.kv});
    const OpCost both = sum(read, write);
    add(ops, "kv_append", "elementwise", describe("{} elements -> {}", elements, name_of(c_.kv)), both,
        OpRole::kv_cache, vector_peak_, [&] {
          return vector_basis(both, 1, 1, act_,
                              fmt::format("kv_append{{{} elements -> {}}}", elements, name_of(c_.kv)));
        });
  }

  [[nodiscard]] std::int64_t kv_seq() const { return m_.cached_tokens(context_); }

  void gqa_attention(std::vector<StepOp>& ops) const {
    const AttentionSpec& a = m_.attention;
    const std::int64_t d = a.head_dim;
    linear(ops, "qkv_proj", tokens_, (s_.q_heads + 2 * s_.kv_heads) * d, m_.hidden);
    rope(ops, tokens_ * (s_.q_heads + s_.kv_heads) * d);
    kv_append(ops, tokens_ * 2 * s_.kv_heads * d);
    AttentionShape shape;
    shape.batch = decode_ ? tokens_ : 1;
    shape.heads = s_.q_heads;
    shape.kv_heads = s_.kv_heads;
    shape.head_dim = d;
    shape.seq = decode_ ? 1 : tokens_;
    shape.kv_seq = decode_ ? kv_seq() : tokens_;
    shape.causal = !decode_;
    shape.act = act_;
    shape.kv = c_.kv;
    const FlashTiling tiling =
        gpu_.smem_per_unit_kb ? default_flash_tiling(shape, *gpu_.smem_per_unit_kb * 1024.0) : FlashTiling{};
    const OpCost cost = flash_attention_cost(shape, tiling).hbm;
    add(ops, "attention", "attention",
        describe("flash, {} x {} heads ({} KV) x {}, q {} kv {}{}", shape.batch, shape.heads, shape.kv_heads, d,
                 shape.seq, shape.kv_seq, shape.causal ? " causal" : ""),
        cost, decode_ ? OpRole::kv_cache : OpRole::activations, act_peak_,
        [&] { return flash_step_basis(shape, cost); });
    linear(ops, "o_proj", tokens_, m_.hidden, s_.q_heads * d);
  }

  void latent_attention(std::vector<StepOp>& ops) const {
    const AttentionSpec& a = m_.attention;
    const std::int64_t hq = s_.q_heads;
    if (a.q_lora_rank > 0) {
      linear(ops, "q_down", tokens_, a.q_lora_rank, m_.hidden);
      norm(ops, "q_norm", tokens_, a.q_lora_rank);
      linear(ops, "q_up", tokens_, hq * a.qk_head_dim(), a.q_lora_rank);
    } else {
      linear(ops, "q_proj", tokens_, hq * a.qk_head_dim(), m_.hidden);
    }
    linear(ops, "kv_down", tokens_, a.kv_lora_rank + a.qk_rope_head_dim, m_.hidden);
    norm(ops, "kv_norm", tokens_, a.kv_lora_rank);
    rope(ops, tokens_ * (hq + 1) * a.qk_rope_head_dim);
    kv_append(ops, tokens_ * (a.kv_lora_rank + a.qk_rope_head_dim));
    LatentAttentionShape shape;
    shape.batch = decode_ ? tokens_ : 1;
    shape.heads = hq;
    shape.seq = decode_ ? 1 : tokens_;
    shape.kv_seq = decode_ ? kv_seq() : tokens_;
    shape.causal = !decode_;
    shape.absorbed = decode_;
    shape.kv_lora_rank = a.kv_lora_rank;
    shape.qk_nope_head_dim = a.qk_nope_head_dim;
    shape.qk_rope_head_dim = a.qk_rope_head_dim;
    shape.v_head_dim = a.v_head_dim;
    shape.act = act_;
    shape.kv = c_.kv;
    const std::string text = describe("{} x {} heads, q {} kv {}{}", shape.batch, hq, shape.seq, shape.kv_seq,
                                      decode_ ? ", absorbed over the latent" : ", expanded, causal");
    if (decode_) {
      // Queries move into the latent space (q_nope W_UK) and outputs out of it (W_UV), per head.
      const GemmShape absorb{tokens_, a.kv_lora_rank, a.qk_nope_head_dim, hq, act_, c_.weights, act_};
      add(ops, "q_absorb", "gemm",
          describe("{} heads x {} x [{} x {}]", hq, tokens_, a.qk_nope_head_dim, a.kv_lora_rank), gemm_cost(absorb),
          OpRole::weights, weight_peak_, [&] { return gemm_basis(absorb); });
      add(ops, "attention", "latent_attention", text, latent_attention_cost(shape), OpRole::kv_cache, act_peak_, {},
          no_latent_table);
      const GemmShape up{tokens_, a.v_head_dim, a.kv_lora_rank, hq, act_, c_.weights, act_};
      add(ops, "v_up", "gemm", describe("{} heads x {} x [{} x {}]", hq, tokens_, a.kv_lora_rank, a.v_head_dim),
          gemm_cost(up), OpRole::weights, weight_peak_, [&] { return gemm_basis(up); });
    } else {
      linear(ops, "kv_up", tokens_, hq * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank);
      add(ops, "attention", "latent_attention", text, latent_attention_cost(shape), OpRole::activations, act_peak_, {},
          no_latent_table);
    }
    linear(ops, "o_proj", tokens_, m_.hidden, hq * a.v_head_dim);
  }

  void dense_ffn(std::vector<StepOp>& ops, std::string_view prefix, std::int64_t width, std::int64_t tokens) const {
    const bool shared = prefix == "shared";
    if (m_.ffn.kind == FfnKind::gated) {
      linear(ops, shared ? "shared_gate_up" : "ffn_gate_up", tokens, 2 * width, m_.hidden);
      elementwise(ops, shared ? "shared_act" : "ffn_act", tokens * width, ElementwiseFn::swiglu);
    } else {
      linear(ops, shared ? "shared_up" : "ffn_up", tokens, width, m_.hidden);
      elementwise(ops, shared ? "shared_act" : "ffn_act", tokens * width, plain_activation());
    }
    linear(ops, shared ? "shared_down" : "ffn_down", tokens, m_.hidden, width);
  }

  [[nodiscard]] ElementwiseFn plain_activation() const {
    if (m_.ffn.activation == "relu") return ElementwiseFn::relu;
    if (m_.ffn.activation == "silu") return ElementwiseFn::silu;
    return ElementwiseFn::gelu;
  }

  // Routed experts. `tokens` x experts_per_token token-expert pairs land on the experts; with
  // uniform routing an expert receives at least one with probability 1 - (1 - k/E)^tokens, and
  // only those experts' weights are read. The op model is affine in the token count (weights
  // once, activations and FLOPs per token), so the cost over the touched experts is
  // touched x cost(1 token) + (pairs - touched) x (cost(2) - cost(1)).
  void experts(std::vector<StepOp>& ops) const {
    const MoeSpec& e = *m_.moe;
    const auto E = static_cast<double>(e.experts);
    const auto k = static_cast<double>(e.experts_per_token);
    linear(ops, "router", tokens_, e.experts, m_.hidden, act_, act_peak_);
    const SoftmaxShape gate{tokens_, e.experts, act_};
    add(ops, "router_softmax", "softmax", describe("{} x {}", tokens_, e.experts), softmax_cost(gate),
        OpRole::activations, vector_peak_, [&] { return softmax_basis(gate); });
    const double pairs = static_cast<double>(tokens_) * k;
    const double touched = E * (1.0 - std::pow(1.0 - k / E, static_cast<double>(tokens_)));
    const auto routed = [&](std::int64_t n, std::int64_t kk) {
      const OpCost one = linear_cost(1, n, kk, c_.weights);
      const OpCost two = linear_cost(2, n, kk, c_.weights);
      const OpCost per_token{two.flops - one.flops, two.bytes_read - one.bytes_read,
                             two.bytes_written - one.bytes_written};
      return sum(scaled(one, touched), scaled(per_token, pairs - touched));
    };
    const std::int64_t w = s_.expert_ffn;
    const bool gated = m_.ffn.kind == FfnKind::gated;
    const std::string text = describe("{:.1f} of {} experts, {:.0f} token-expert pairs, [{} x {}] {}", touched,
                                      e.experts, pairs, m_.hidden, (gated ? 2 : 1) * w, name_of(c_.weights));
    add(ops, gated ? "experts_gate_up" : "experts_up", decode_ ? "gemv" : "gemm", text,
        routed((gated ? 2 : 1) * w, m_.hidden), OpRole::weights, weight_peak_, {}, no_expert_table);
    elementwise(ops, "experts_act", static_cast<std::int64_t>(pairs) * w,
                gated ? ElementwiseFn::swiglu : plain_activation());
    add(ops, "experts_down", decode_ ? "gemv" : "gemm",
        describe("{:.1f} of {} experts, [{} x {}] {}", touched, e.experts, w, m_.hidden, name_of(c_.weights)),
        routed(m_.hidden, w), OpRole::weights, weight_peak_, {}, no_expert_table);
    if (e.shared_experts > 0) dense_ffn(ops, "shared", e.shared_experts * w, tokens_);
  }

  void allreduce(std::vector<StepOp>& ops, std::string_view name, std::int64_t tokens) const {
    if (s_.tp == 1) return;
    const double message = static_cast<double>(tokens * m_.hidden) * bytes_per_element(act_);
    StepOp op;
    op.name = name;
    op.op = "all_reduce";
    const CollectiveCost cost = communication(Collective::all_reduce, message, s_.tp, tp_link_);
    op.shape = describe("{} x {} over {} GPUs, {}", tokens, m_.hidden, s_.tp, cost.detail);
    op.link_bytes = ring_allreduce_bytes_per_rank(message, s_.tp);
    op.role = OpRole::tp_comm;
    op.bound = "link";
    op.time_s = cost.time_s;
    mark_measured(op, cost);
    ops.push_back(op);
  }

  // A transfer timed by a measured collectives table says so where a calibration is reported.
  void mark_measured(StepOp& op, const CollectiveCost& cost) const {
    if (cost.measured && o_.calibration != nullptr) {
      op.calibration = OpCalibration{false, {}, 0, false, std::string(measured_link)};
    }
  }

  // The measured table where one covers the collective and the group (of `group_gpus`) stays
  // within the scale-up domain the tables were measured in; else the ring over `link`.
  [[nodiscard]] CollectiveCost communication(Collective op, double bytes, int ranks, const LinkSpec& link,
                                             int group_gpus = 0) const {
    const int gpus = group_gpus > 0 ? group_gpus : ranks;
    return collective_cost(op, bytes, ranks, link, measured_, gpus <= c_.scale_up_domain);
  }

  const ModelSpec& m_;
  const GpuSpec& gpu_;
  const Sharding& s_;
  const DeploymentConfig& c_;
  const TimeOptions& o_;
  bool decode_;
  std::int64_t tokens_;
  std::int64_t context_;  // decode: tokens in each request's cache
  DType act_;
  double bandwidth_;
  double weight_peak_;
  double head_peak_;
  double act_peak_;
  double vector_peak_;
  LinkSpec tp_link_;
  const CollectiveTables* measured_;
  Roofs roofs_;  // the GPU's roofs, for calibrated times
};

void account(StepTime& step) {
  step.time_s = 0;
  step.roofline_s = 0;
  for (const LayerGroup& group : step.groups) {
    const auto count = static_cast<double>(group.count);
    for (const StepOp& op : group.ops) {
      const double t = op.time_s * count;
      step.time_s += t;
      step.roofline_s += op.roofline_s * count;
      step.flops += op.cost.flops * count;
      step.bytes += op.cost.bytes() * count;
      if (op.role == OpRole::tp_comm) {
        step.tp_comm_s += t;
      } else if (op.role == OpRole::pp_comm) {
        step.pp_comm_s += t;
      } else if (op.bound == "compute") {
        step.compute_s += t;
      } else if (op.role == OpRole::weights) {
        step.weights_s += t;
      } else if (op.role == OpRole::kv_cache) {
        step.kv_cache_s += t;
      } else {
        step.activations_s += t;
      }
    }
  }
}

StepTime run_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding, const DeploymentConfig& config,
                  const TimeOptions& options, bool decode, std::int64_t tokens, std::int64_t context) {
  const std::string_view what = decode ? "decode" : "prefill";
  if (tokens < 1) throw InputError(fmt::format("{}: needs at least one token", what));
  if (tokens > (decode ? max_batch : max_tokens) || context > max_tokens) {
    throw InputError(fmt::format("{}: {} tokens with {} cached is more than roofline models", what, tokens, context));
  }
  StepBuilder builder(model, gpu, sharding, config, options, decode, tokens, context);
  StepTime step;
  if (model.dense_layers() > 0) {
    step.groups.push_back({model.moe ? "dense layer" : "layer", model.dense_layers(), builder.layer(false)});
  }
  if (model.moe_layers() > 0) step.groups.push_back({"moe layer", model.moe_layers(), builder.layer(true)});
  step.groups.push_back({"embedding + head", 1, builder.head()});
  if (sharding.pp > 1) step.groups.push_back({"pipeline", sharding.pp - 1, builder.pipeline_send()});
  for (LayerGroup& group : step.groups) {
    for (StepOp& op : group.ops) {
      // Transfers between GPUs are timed by the link model or the measured collectives; the op
      // tables of a calibration do not apply to them.
      if (op.role != OpRole::tp_comm && op.role != OpRole::pp_comm) continue;
      op.roofline_s = op.time_s;
      if (options.calibration != nullptr && !op.calibration)
        op.calibration = OpCalibration{false, {}, 0, false, std::string(no_link_table)};
    }
  }
  account(step);
  return step;
}

}  // namespace

std::string_view name_of(OpRole role) {
  switch (role) {
    case OpRole::weights: return "weights";
    case OpRole::kv_cache: return "kv_cache";
    case OpRole::activations: return "activations";
    case OpRole::tp_comm: return "tp_comm";
    case OpRole::pp_comm: return "pp_comm";
  }
  return "weights";
}

double LayerGroup::time_s() const {
  double t = 0;
  for (const StepOp& op : ops) t += op.time_s;
  return t;
}

double LayerGroup::roofline_s() const {
  double t = 0;
  for (const StepOp& op : ops) t += op.roofline_s;
  return t;
}

std::string_view StepTime::bottleneck() const {
  const std::array<std::pair<std::string_view, double>, 6> parts{{{"weight reads", weights_s},
                                                                  {"KV-cache reads", kv_cache_s},
                                                                  {"activation traffic", activations_s},
                                                                  {"compute", compute_s},
                                                                  {"TP all-reduce", tp_comm_s},
                                                                  {"PP transfers", pp_comm_s}}};
  return std::max_element(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

double StepTime::bottleneck_share() const {
  const double largest = std::max({weights_s, kv_cache_s, activations_s, compute_s, tp_comm_s, pp_comm_s});
  return time_s > 0 ? largest / time_s : 0.0;
}

StepTime decode_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                     const DeploymentConfig& config, std::int64_t batch, std::int64_t context,
                     const TimeOptions& options) {
  if (context < 1) throw InputError("--context: must be at least 1 token");
  return run_step(model, gpu, sharding, config, options, true, batch, context);
}

StepTime prefill(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding, const DeploymentConfig& config,
                 std::int64_t prompt, const TimeOptions& options) {
  return run_step(model, gpu, sharding, config, options, false, prompt, prompt);
}

LinkSpec group_link(const GpuSpec& gpu, const DeploymentConfig& config, int ranks) {
  if (ranks <= config.scale_up_domain) return scale_up_link(gpu, config.scale_up_latency_s);
  return config.scale_out;
}

AllReduceCompare tp_allreduce(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                              const DeploymentConfig& config, std::int64_t tokens) {
  AllReduceCompare out;
  out.message_bytes = static_cast<double>(tokens * model.hidden) * bytes_per_element(config.activations);
  const int ranks = std::max(sharding.tp, 2);  // a TP of 1 has no all-reduce; show what 2 would cost
  out.scale_up_s = ring_allreduce_time(out.message_bytes, ranks, scale_up_link(gpu, config.scale_up_latency_s));
  out.scale_out_s = ring_allreduce_time(out.message_bytes, ranks, config.scale_out);
  return out;
}

OpCost latent_attention_cost(const LatentAttentionShape& s) {
  AttentionShape pairs_shape;
  pairs_shape.batch = s.batch;
  pairs_shape.heads = s.heads;
  pairs_shape.kv_heads = 1;
  pairs_shape.head_dim = s.kv_lora_rank + s.qk_rope_head_dim;
  pairs_shape.seq = s.seq;
  pairs_shape.kv_seq = s.kv_seq;
  pairs_shape.causal = s.causal;
  pairs_shape.act = s.act;
  pairs_shape.kv = s.kv;
  check_attention_shape(pairs_shape);
  const double pairs = attention_pairs(pairs_shape);  // per (batch, head)
  const auto batch_heads = static_cast<double>(s.batch * s.heads);
  const auto queries = static_cast<double>(s.batch * s.seq * s.heads);
  const double act = bytes_per_element(s.act);
  OpCost cost;
  if (s.absorbed) {
    const auto latent = static_cast<double>(s.kv_lora_rank + s.qk_rope_head_dim);
    const auto values = static_cast<double>(s.kv_lora_rank);
    cost.flops = batch_heads * pairs * 2.0 * (latent + values);
    cost.bytes_read =
        queries * latent * act + static_cast<double>(s.batch * s.kv_seq) * latent * bytes_per_element(s.kv);
    cost.bytes_written = queries * values * act;
  } else {
    const auto qk = static_cast<double>(s.qk_nope_head_dim + s.qk_rope_head_dim);
    const auto v = static_cast<double>(s.v_head_dim);
    const auto keys = static_cast<double>(s.batch * s.kv_seq * s.heads);
    cost.flops = batch_heads * pairs * 2.0 * (qk + v);
    cost.bytes_read = queries * qk * act + keys * (qk + v) * act;
    cost.bytes_written = queries * v * act;
  }
  detail::check_bytes("latent attention", cost.bytes());
  return cost;
}

}  // namespace roofline
