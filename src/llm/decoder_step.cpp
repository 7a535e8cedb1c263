// One decoder step as a list of operations with their shapes (roofline/decoder_step.hpp).
#include "roofline/llm/decoder_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/llm/expert_parallel.hpp"
#include "roofline/llm/speculative.hpp"

namespace roofline {
namespace {

constexpr std::string_view no_link_table = "a transfer between GPUs: the link model is kept";

OpCost scaled(const OpCost& c, double factor) {
  return {c.flops * factor, c.bytes_read * factor, c.bytes_written * factor};
}

OpCost sum(const OpCost& a, const OpCost& b) {
  return {a.flops + b.flops, a.bytes_read + b.bytes_read, a.bytes_written + b.bytes_written};
}

// An op that writes `elements` of its result in `to` instead of the activation format `from`.
OpCost written_in(OpCost cost, std::int64_t elements, DType from, DType to) {
  cost.bytes_written -= static_cast<double>(elements) * (bytes_per_element(from) - bytes_per_element(to));
  return cost;
}

// Builds the ops of one step on one GPU of the TP group. `tokens` is the number of query rows
// the step processes: the batch for decode, the prompt for prefill.
class Describer {
 public:
  Describer(const ModelSpec& model, const Sharding& sharding, const StepFormats& formats, const StepShape& step,
            const DescribeOptions& options)
      : m_(model),
        s_(sharding),
        f_(formats),
        o_(options),
        decode_(step.decode()),
        tokens_(local_tokens(sharding, step)),
        group_tokens_(moe_rows(sharding, step)),
        context_(step.context),
        act_(formats.activations),
        quantized_(formats.matmul != formats.activations &&
                   (!step.decode() || options.kernels.quantized_decode_linears || tokens_ > w8a16_gemv_max_batch)) {}

  // --- models (issue 19): `attention` is this layer's window or chunk (the per-layer pattern).
  std::vector<DecoderOp> layer(bool moe_layer, const LayerAttention& attention) const {
    std::vector<DecoderOp> ops;
    const std::int64_t h = m_.hidden;
    norm(ops, "attn_norm", tokens_, h, block_input());
    if (m_.attention.kind == AttentionKind::gqa) {
      gqa_attention(ops, attention);
    } else {
      latent_attention(ops);
    }
    allreduce(ops, "attn_allreduce");
    norm(ops, "ffn_norm", tokens_, h, moe_layer ? act_ : block_input());
    if (moe_layer) {
      experts(ops);
    } else {
      dense_ffn(ops, "ffn", s_.ffn, block_input());
    }
    allreduce(ops, "ffn_allreduce");
    return ops;
  }

  // Embedding lookup, final norm, output head (decode: every request's token; prefill: the last
  // position only) and the gather of the vocabulary-split logits.
  std::vector<DecoderOp> head() const {
    std::vector<DecoderOp> ops;
    const std::int64_t out_rows = decode_ ? tokens_ : 1;
    const ElementwiseFnInfo& copy = info(ElementwiseFn::copy);
    const ElementwiseShape lookup{tokens_ * m_.hidden, copy.inputs, copy.outputs, copy.flops_per_element, act_};
    push(ops, "embedding", OpKind::embedding, "elementwise", text("{} rows x {}", tokens_, m_.hidden), lookup,
         elementwise_cost(lookup), OpRole::activations);
    norm(ops, "final_norm", out_rows, m_.hidden, act_);
    linear(ops, "lm_head", out_rows, s_.vocab, m_.hidden, f_.embeddings, act_);
    if (s_.tp > 1 && s_.attention_dp == 1) {
      const double total = static_cast<double>(out_rows * m_.vocab) * bytes_per_element(act_);
      transfer(ops, "logits_gather", OpKind::all_gather,
               text("{} rows x {} vocab over {} GPUs", out_rows, m_.vocab, s_.tp), {total, s_.tp, s_.tp},
               OpRole::tp_comm);
    }
    return ops;
  }

  std::vector<DecoderOp> pipeline_send() const {
    std::vector<DecoderOp> ops;
    const double bytes = static_cast<double>(tokens_ * m_.hidden) * bytes_per_element(act_);
    transfer(ops, "pp_send", OpKind::send, text("{} x {} activations", tokens_, m_.hidden), {bytes, 2, s_.tp * s_.pp},
             OpRole::pp_comm);
    return ops;
  }

 private:
  // The rows the MoE layers see: every rank's (serve's lockstep total, or this rank's times the
  // ranks), or under llm's view the step's own.
  static std::int64_t moe_rows(const Sharding& s, const StepShape& step) {
    if (!step.ranks_alike) return step.tokens;
    return step.group_tokens > 0 ? step.group_tokens : step.tokens * s.attention_dp;
  }

  // The rows this GPU processes: with attention DP, a decode step's requests spread over the GPUs
  // (the busiest holds the rounded-up share) and a prefill's prompt stays on one.
  static std::int64_t local_tokens(const Sharding& s, const StepShape& step) {
    if (step.ranks_alike || !step.decode() || s.attention_dp == 1) return step.tokens;
    const std::int64_t sequences = step.tokens / step.queries;
    return (sequences + s.attention_dp - 1) / s.attention_dp * step.queries;
  }

  template <typename... Args>
  std::string text(fmt::format_string<Args...> format, Args&&... args) const {
    if (!o_.text) return {};
    return fmt::format(format, std::forward<Args>(args)...);
  }

  // An op on the vector units (weights = activations) or, with `weights`, on the matrix units.
  void push(std::vector<DecoderOp>& ops, std::string_view name, OpKind kind, std::string_view model,
            std::string shape_text, OpShape shape, const OpCost& cost, OpRole role, DType act,
            std::optional<DType> weights = std::nullopt) const {
    DecoderOp op;
    op.name = name;
    op.kind = kind;
    op.model = model;
    op.shape_text = std::move(shape_text);
    op.shape = std::move(shape);
    op.activations = act;
    op.weights = weights.value_or(act);
    op.writes = act_;
    op.unit = weights ? MathUnit::matrix : MathUnit::vector;
    op.cost = cost;
    op.role = role;
    ops.push_back(std::move(op));
  }

  void push(std::vector<DecoderOp>& ops, std::string_view name, OpKind kind, std::string_view model,
            std::string shape_text, OpShape shape, const OpCost& cost, OpRole role) const {
    push(ops, name, kind, model, std::move(shape_text), std::move(shape), cost, role, act_);
  }

  static void transfer(std::vector<DecoderOp>& ops, std::string_view name, OpKind kind, std::string shape_text,
                       const TransferShape& shape, OpRole role) {
    DecoderOp op;
    op.name = name;
    op.kind = kind;
    op.model = name_of(kind);
    op.shape_text = std::move(shape_text);
    op.shape = shape;
    op.unit = MathUnit::link;
    op.role = role;
    ops.push_back(std::move(op));
  }

  // The format the projections of the attention block and of a dense FFN read their input in: the
  // matmul format where they run W8A8 (the op before them writes it), else the activations'.
  [[nodiscard]] DType block_input() const { return quantized_ ? f_.matmul : act_; }

  // The op writes its result in `writes`: where that is not the activation format, it quantises for
  // the W8A8 GEMM after it (its `elements` outputs counted in that format).
  void writing(std::vector<DecoderOp>& ops, std::int64_t elements, DType writes) const {
    if (writes == act_) return;
    DecoderOp& op = ops.back();
    op.writes = writes;
    op.cost = written_in(op.cost, elements, act_, writes);
    if (o_.text) op.shape_text += fmt::format(" -> {}", name_of(writes));
  }

  // y[tokens x n] = x[tokens x k] W[k x n]: a GEMV per weight matrix in decode (the weights read
  // once for all requests), a GEMM in prefill; `input` the format x is read in (W8A8: the weights').
  // A W8A8 GEMV does not occur: quantised decode projections are GEMMs.
  [[nodiscard]] OpShape linear_shape(std::int64_t tokens, std::int64_t n, std::int64_t k, DType weights,
                                     DType input) const {
    if (decode_ && input == act_) return GemvShape{n, k, tokens, weights, act_, std::nullopt};
    return GemmShape{tokens, n, k, 1, input, weights, act_};
  }

  [[nodiscard]] OpCost linear_cost(std::int64_t tokens, std::int64_t n, std::int64_t k, DType weights,
                                   DType input) const {
    if (decode_ && input == act_) return gemv_cost({n, k, tokens, weights, act_, std::nullopt});
    return gemm_cost({tokens, n, k, 1, input, weights, act_});
  }

  void linear(std::vector<DecoderOp>& ops, std::string_view name, std::int64_t tokens, std::int64_t n, std::int64_t k,
              DType weights, DType input) const {
    OpShape shape = linear_shape(tokens, n, k, weights, input);
    const bool gemv = std::holds_alternative<GemvShape>(shape);
    push(ops, name, OpKind::linear, gemv ? "gemv" : "gemm",
         text("{} x [{} x {}] {}{}", tokens, k, n, name_of(weights),
              input == act_ ? std::string() : fmt::format(", {} inputs", name_of(input))),
         std::move(shape), linear_cost(tokens, n, k, weights, input), OpRole::weights, input, weights);
  }

  // A projection of the attention block: weights in the weight format, the input in block_input().
  void linear(std::vector<DecoderOp>& ops, std::string_view name, std::int64_t tokens, std::int64_t n,
              std::int64_t k) const {
    linear(ops, name, tokens, n, k, f_.weights, block_input());
  }

  // Where the projections run W8A8: `elements` outputs of a kernel that writes the activation format
  // only (attention; a norm whose output is also cached), quantised by a kernel of their own.
  void quantize_for_block(std::vector<DecoderOp>& ops, std::string_view name, std::int64_t elements) const {
    if (block_input() == act_) return;
    const QuantizeShape quant{elements, act_, block_input()};
    push(ops, name, OpKind::quantize, "elementwise", text("{} elements -> {}", elements, name_of(quant.to)), quant,
         quantize_cost(quant), OpRole::activations);
    ops.back().writes = quant.to;
  }

  void norm(std::vector<DecoderOp>& ops, std::string_view name, std::int64_t rows, std::int64_t width,
            DType writes) const {
    // Residual add fused into the norm (vLLM's and TensorRT-LLM's fused add + RMSNorm), and where
    // `writes` is narrower, the quantisation of the normalised rows (the new residual stream stays).
    const NormShape shape{rows, width, m_.norm, true, act_};
    push(ops, name, OpKind::norm, "norm", text("{} x {} {}", rows, width, name_of(m_.norm)), shape, norm_cost(shape),
         OpRole::activations);
    writing(ops, rows * width, writes);
  }

  void activation(std::vector<DecoderOp>& ops, std::string_view name, std::int64_t elements, ElementwiseFn fn,
                  DType writes) const {
    const ElementwiseFnInfo& f = info(fn);
    const ElementwiseShape shape{elements, f.inputs, f.outputs, f.flops_per_element, act_};
    push(ops, name, OpKind::activation, "elementwise", text("{} x {}", elements, f.name), shape,
         elementwise_cost(shape), OpRole::activations);
    writing(ops, elements * f.outputs, writes);
  }

  // Rotary embedding on the query and key heads: x' = x cos - y sin per element (2 multiplies and
  // an add); the cos/sin values are computed or come from a small table that stays in cache.
  void rope(std::vector<DecoderOp>& ops, std::int64_t elements) const {
    const ElementwiseShape shape{elements, 1, 1, 3.0, act_};
    push(ops, "rope", OpKind::rope, "elementwise", text("{} elements", elements), shape, elementwise_cost(shape),
         OpRole::activations);
  }

  void kv_append(std::vector<DecoderOp>& ops, std::int64_t elements) const {
    const KvAppendShape shape{elements, act_, f_.kv};
    push(ops, "kv_append", OpKind::kv_append, "elementwise", text("{} elements -> {}", elements, name_of(f_.kv)), shape,
         kv_append_cost(shape), OpRole::kv_cache);
  }

  // Decode: the keys the new token attends to (the whole context, the window, or its chunk so far).
  [[nodiscard]] std::int64_t kv_seq(const LayerAttention& attention) const { return attention.decode_keys(context_); }

  [[nodiscard]] FlashTiling tiling(const AttentionShape& shape) const {
    const std::optional<FlashTiling>& fixed = decode_ ? o_.kernels.decode_tiles : o_.kernels.prefill_tiles;
    if (fixed) return *fixed;
    if (o_.kernels.smem_per_unit_bytes > 0) return default_flash_tiling(shape, o_.kernels.smem_per_unit_bytes);
    return FlashTiling{};
  }

  [[nodiscard]] bool head_major() const { return !decode_ && o_.kernels.head_major_prefill; }

  void gqa_attention(std::vector<DecoderOp>& ops, const LayerAttention& attention) const {
    const AttentionSpec& a = m_.attention;
    const std::int64_t d = a.head_dim;
    linear(ops, "qkv_proj", tokens_, (s_.q_heads + 2 * s_.kv_heads) * d, m_.hidden);
    // --- models (issue 19): a NoPE layer (Llama 4) rotates nothing.
    if (attention.rope) rope(ops, tokens_ * (s_.q_heads + s_.kv_heads) * d);
    kv_append(ops, tokens_ * 2 * s_.kv_heads * d);
    AttentionShape shape;
    shape.batch = decode_ ? tokens_ : 1;
    shape.heads = s_.q_heads;
    shape.kv_heads = s_.kv_heads;
    shape.head_dim = d;
    shape.seq = decode_ ? 1 : tokens_;
    shape.kv_seq = decode_ ? kv_seq(attention) : tokens_;
    shape.causal = !decode_;
    // Prefill over an FP8 cache runs FP8 attention (StepFormats::prefill_attention): Q, K, V and
    // the math in that format, the calibration's attention.flash.fp8_e4m3 tables.
    const DType math = decode_ ? act_ : f_.prefill_attention;
    shape.act = math;
    shape.kv = f_.kv;
    OpCost cost = flash_attention_cost(shape, tiling(shape)).hbm;
    if (!decode_ && attention.scope != AttentionScope::full) {
      // A windowed or chunked prefill evaluates only the pairs its mask keeps; Q, K and V are
      // still read once each.
      cost.flops *= attention.prefill_pairs(tokens_) / attention_pairs(shape);
    }
    push(ops, "attention", OpKind::attention, "attention",
         text("flash, {} x {} heads ({} KV) x {}, q {} kv {}{}{}{}", shape.batch, shape.heads, shape.kv_heads, d,
              shape.seq, shape.kv_seq, shape.causal ? " causal" : "",
              attention.scope == AttentionScope::full ? std::string() : ", " + attention.describe(),
              a.sinks ? ", sink logits (not costed)" : ""),
         shape, cost, decode_ ? OpRole::kv_cache : OpRole::activations, math, math);
    const std::int64_t outputs = tokens_ * s_.q_heads * d;
    if (head_major()) {
      // The move back to token-major quantises for a W8A8 o_proj as it goes.
      const ElementwiseShape move{outputs, 1, 1, 0.0, act_};
      push(ops, "attn_merge", OpKind::attn_merge, "elementwise",
           text("{} x {} heads x {}, head-major to token-major", tokens_, s_.q_heads, d), move, elementwise_cost(move),
           OpRole::activations);
      writing(ops, outputs, block_input());
    } else {
      quantize_for_block(ops, "attn_quant", outputs);
    }
    linear(ops, "o_proj", tokens_, m_.hidden, s_.q_heads * d);
  }

  // DeepSeek-V3's projections (q_down, q_up, kv_down, kv_up, o_proj) are FP8 linears like the dense
  // ones: W8A8 where those are (block_input). The absorbed per-head products of decode (q_absorb,
  // v_up) stay 16-bit.
  void latent_attention(std::vector<DecoderOp>& ops) const {
    const AttentionSpec& a = m_.attention;
    const std::int64_t hq = s_.q_heads;
    if (a.q_lora_rank > 0) {
      linear(ops, "q_down", tokens_, a.q_lora_rank, m_.hidden);
      norm(ops, "q_norm", tokens_, a.q_lora_rank, block_input());
      linear(ops, "q_up", tokens_, hq * a.qk_head_dim(), a.q_lora_rank);
    } else {
      linear(ops, "q_proj", tokens_, hq * a.qk_head_dim(), m_.hidden);
    }
    linear(ops, "kv_down", tokens_, a.kv_lora_rank + a.qk_rope_head_dim, m_.hidden);
    norm(ops, "kv_norm", tokens_, a.kv_lora_rank, act_);
    rope(ops, tokens_ * (hq + 1) * a.qk_rope_head_dim);
    kv_append(ops, tokens_ * (a.kv_lora_rank + a.qk_rope_head_dim));
    LatentAttentionShape shape;
    shape.batch = decode_ ? tokens_ : 1;
    shape.heads = hq;
    shape.seq = decode_ ? 1 : tokens_;
    shape.kv_seq = decode_ ? kv_seq(LayerAttention{}) : tokens_;
    shape.causal = !decode_;
    shape.absorbed = decode_;
    shape.kv_lora_rank = a.kv_lora_rank;
    shape.qk_nope_head_dim = a.qk_nope_head_dim;
    shape.qk_rope_head_dim = a.qk_rope_head_dim;
    shape.v_head_dim = a.v_head_dim;
    shape.act = act_;
    shape.kv = f_.kv;
    std::string core = text("{} x {} heads, q {} kv {}{}", shape.batch, hq, shape.seq, shape.kv_seq,
                            decode_ ? ", absorbed over the latent" : ", expanded, causal");
    if (decode_) {
      // Queries move into the latent space (q_nope W_UK) and outputs out of it (W_UV), per head.
      const GemmShape absorb{tokens_, a.kv_lora_rank, a.qk_nope_head_dim, hq, act_, f_.weights, act_};
      push(ops, "q_absorb", OpKind::linear, "gemm",
           text("{} heads x {} x [{} x {}]", hq, tokens_, a.qk_nope_head_dim, a.kv_lora_rank), absorb,
           gemm_cost(absorb), OpRole::weights, act_, f_.weights);
      push(ops, "attention", OpKind::latent_attention, "latent_attention", std::move(core), shape,
           latent_attention_cost(shape), OpRole::kv_cache, act_, act_);
      const GemmShape up{tokens_, a.v_head_dim, a.kv_lora_rank, hq, act_, f_.weights, act_};
      push(ops, "v_up", OpKind::linear, "gemm",
           text("{} heads x {} x [{} x {}]", hq, tokens_, a.kv_lora_rank, a.v_head_dim), up, gemm_cost(up),
           OpRole::weights, act_, f_.weights);
    } else {
      // kv_norm's output is also the cached latent (kv_append reads it in 16 bits).
      quantize_for_block(ops, "kv_quant", tokens_ * a.kv_lora_rank);
      linear(ops, "kv_up", tokens_, hq * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank);
      push(ops, "attention", OpKind::latent_attention, "latent_attention", std::move(core), shape,
           latent_attention_cost(shape), OpRole::activations, act_, act_);
    }
    quantize_for_block(ops, "attn_quant", tokens_ * hq * a.v_head_dim);
    linear(ops, "o_proj", tokens_, m_.hidden, hq * a.v_head_dim);
  }

  // `input`: the format the FFN's matrices read (the norm before it writes it for the first, the
  // activation for the second).
  void dense_ffn(std::vector<DecoderOp>& ops, std::string_view prefix, std::int64_t width, DType input) const {
    const bool shared = prefix == "shared";
    if (m_.ffn.kind == FfnKind::gated) {
      linear(ops, shared ? "shared_gate_up" : "ffn_gate_up", tokens_, 2 * width, m_.hidden, f_.weights, input);
      activation(ops, shared ? "shared_act" : "ffn_act", tokens_ * width, ElementwiseFn::swiglu, input);
    } else {
      linear(ops, shared ? "shared_up" : "ffn_up", tokens_, width, m_.hidden, f_.weights, input);
      activation(ops, shared ? "shared_act" : "ffn_act", tokens_ * width, plain_activation(), input);
    }
    linear(ops, shared ? "shared_down" : "ffn_down", tokens_, m_.hidden, width, f_.weights, input);
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
  void experts(std::vector<DecoderOp>& ops) const {
    const MoeSpec& e = *m_.moe;
    linear(ops, "router", tokens_, e.experts, m_.hidden, act_, act_);
    const SoftmaxShape gate{tokens_, e.experts, act_};
    push(ops, "router_softmax", OpKind::softmax, "softmax", text("{} x {}", tokens_, e.experts), gate,
         softmax_cost(gate), OpRole::activations);
    // Expert parallelism: the busiest GPU's experts and pairs (expert_parallel.hpp; with one EP rank,
    // all experts and tokens x k pairs).
    const ExpertLoad load = busiest_rank_load(e, s_, group_tokens_);
    const double pairs = load.pairs;
    const double touched = load.touched;
    const DType weights = f_.expert_weights();  // --- models (issue 19): the checkpoint's expert format
    const double dispatched = all_to_all_bytes(m_, s_, tokens_, act_, load.imbalance);
    if (s_.attention_dp > 1) {
      transfer(ops, "moe_dispatch", OpKind::all_to_all,
               text("{} tokens x {:.2f} remote GPUs x {} x imbalance {:.2f}", tokens_, remote_ranks_per_token(e, s_.ep),
                    m_.hidden, load.imbalance),
               {dispatched, s_.ep, s_.ep}, OpRole::ep_comm);
    }
    // The routed experts run W8A8 wherever their weights are in the matmul format, at every row
    // count: the engines' FP8 MoE kernels quantise the activations per token group whatever the
    // batch (DeepGEMM's masked grouped GEMM at decode, vLLM's fused_moe after
    // per_token_group_quant_fp8, TensorRT-LLM's FP8 block-scale MoE), and no W8A16 grouped kernel
    // runs an FP8 checkpoint on Hopper (none is measured here either: such an op would keep the
    // bare roofline). The shared experts follow the block's projections (W8A16 GEMVs up to
    // w8a16_gemv_max_batch rows). Their inputs are quantised once: ffn_norm also feeds the 16-bit
    // router.
    const DType input = f_.matmul != act_ && weights == f_.matmul ? f_.matmul : act_;
    const DType shared_input = e.shared_experts > 0 ? block_input() : act_;
    if (input != act_ || shared_input != act_) {
      const QuantizeShape quant{tokens_ * m_.hidden, act_, f_.matmul};
      push(ops, "experts_quant", OpKind::quantize, "elementwise",
           text("{} x {} -> {}", tokens_, m_.hidden, name_of(quant.to)), quant, quantize_cost(quant),
           OpRole::activations);
      ops.back().writes = quant.to;
    }
    const auto routed = [&](std::int64_t n, std::int64_t kk) {
      const OpCost one = linear_cost(1, n, kk, weights, input);
      const OpCost two = linear_cost(2, n, kk, weights, input);
      const OpCost per_token{two.flops - one.flops, two.bytes_read - one.bytes_read,
                             two.bytes_written - one.bytes_written};
      return sum(scaled(one, touched), scaled(per_token, pairs - touched));
    };
    const std::int64_t w = s_.expert_ffn;
    const bool gated = m_.ffn.kind == FfnKind::gated;
    const std::int64_t up_width = (gated ? 2 : 1) * w;
    push(ops, gated ? "experts_gate_up" : "experts_up", OpKind::routed_linear, decode_ ? "gemv" : "gemm",
         text("{:.1f} of {} experts, {:.0f} token-expert pairs, [{} x {}] {}", touched, s_.local_experts, pairs,
              m_.hidden, up_width, name_of(weights)),
         RoutedShape{touched, pairs, up_width, m_.hidden, weights, input, decode_}, routed(up_width, m_.hidden),
         OpRole::weights, input, weights);
    activation(ops, "experts_act", std::llround(pairs) * w, gated ? ElementwiseFn::swiglu : plain_activation(), input);
    push(ops, "experts_down", OpKind::routed_linear, decode_ ? "gemv" : "gemm",
         text("{:.1f} of {} experts, [{} x {}] {}", touched, s_.local_experts, w, m_.hidden, name_of(weights)),
         RoutedShape{touched, pairs, m_.hidden, w, weights, input, decode_}, routed(m_.hidden, w), OpRole::weights,
         input, weights);
    if (s_.attention_dp > 1) {
      transfer(ops, "moe_combine", OpKind::all_to_all,
               text("the expert outputs of {} tokens back, as dispatched", tokens_), {dispatched, s_.ep, s_.ep},
               OpRole::ep_comm);
    }
    if (e.shared_experts > 0) dense_ffn(ops, "shared", e.shared_experts * s_.shared_expert_ffn, shared_input);
  }

  void allreduce(std::vector<DecoderOp>& ops, std::string_view name) const {
    // With attention DP every sub-layer is whole on its GPU (the MoE's all-to-all sums the experts).
    if (s_.tp == 1 || s_.attention_dp > 1) return;
    const double message = static_cast<double>(tokens_ * m_.hidden) * bytes_per_element(act_);
    transfer(ops, name, OpKind::all_reduce, text("{} x {} over {} GPUs", tokens_, m_.hidden, s_.tp),
             {message, s_.tp, s_.tp}, OpRole::tp_comm);
  }

  const ModelSpec& m_;
  const Sharding& s_;
  StepFormats f_;
  const DescribeOptions& o_;
  bool decode_;
  std::int64_t tokens_;        // rows on this GPU
  std::int64_t group_tokens_;  // rows of the TP group (the MoE layers' tokens)
  std::int64_t context_;       // decode: tokens in each request's cache
  DType act_;
  bool quantized_;  // the block's projections run W8A8 in f_.matmul
};

// --- models (issue 19): a group's name, its attention named where the layers' attention differs.
std::string_view group_name(int kind, std::optional<AttentionScope> scope) {
  static constexpr std::array<std::array<std::string_view, 4>, 3> names{{
      {"layer", "layer, full attention", "layer, sliding window", "layer, chunked attention"},
      {"dense layer", "dense layer, full attention", "dense layer, sliding window", "dense layer, chunked attention"},
      {"moe layer", "moe layer, full attention", "moe layer, sliding window", "moe layer, chunked attention"},
  }};
  const std::size_t column = scope ? 1 + static_cast<std::size_t>(*scope) : 0;
  return names.at(static_cast<std::size_t>(kind)).at(column);
}

void check_step(const StepShape& step) {
  const std::string_view what = step.decode() ? "decode" : "prefill";
  if (step.tokens < 1) throw InputError(fmt::format("{}: needs at least one token", what));
  if (step.queries < 1 || step.tokens % step.queries != 0) {
    throw InputError(fmt::format("{}: {} tokens are not sequences of {}", what, step.tokens, step.queries));
  }
  if (step.tokens > (step.decode() ? max_batch : max_tokens) || step.context > max_tokens) {
    throw InputError(
        fmt::format("{}: {} tokens with {} cached is more than roofline models", what, step.tokens, step.context));
  }
}

}  // namespace

std::string_view name_of(OpRole role) {
  switch (role) {
    case OpRole::weights: return "weights";
    case OpRole::kv_cache: return "kv_cache";
    case OpRole::activations: return "activations";
    case OpRole::tp_comm: return "tp_comm";
    case OpRole::pp_comm: return "pp_comm";
    case OpRole::ep_comm: return "ep_comm";
  }
  return "weights";
}

std::string_view name_of(OpKind kind) {
  switch (kind) {
    case OpKind::norm: return "norm";
    case OpKind::linear: return "linear";
    case OpKind::routed_linear: return "routed_linear";
    case OpKind::rope: return "rope";
    case OpKind::kv_append: return "kv_append";
    case OpKind::attention: return "attention";
    case OpKind::latent_attention: return "latent_attention";
    case OpKind::activation: return "activation";
    case OpKind::softmax: return "softmax";
    case OpKind::embedding: return "embedding";
    case OpKind::attn_merge: return "attn_merge";
    case OpKind::quantize: return "quantize";
    case OpKind::all_reduce: return "all_reduce";
    case OpKind::all_gather: return "all_gather";
    case OpKind::send: return "send";
    case OpKind::all_to_all: return "all_to_all";
  }
  return "?";
}

StepFormats StepFormats::of(const DeploymentConfig& config, const GpuSpec& gpu) {
  StepFormats f;
  f.weights = config.weights;
  f.embeddings = config.embeddings;
  f.activations = config.activations;
  f.kv = config.kv;
  f.matmul = matmul_dtype(gpu, config.weights, config.activations);
  f.experts = config.expert_weights;
  const bool fp8_kv = config.kv == DType::fp8_e4m3 || config.kv == DType::fp8_e5m2;
  f.prefill_attention = fp8_kv && gpu.matrix_peak_class(config.kv) ? config.kv : config.activations;
  return f;
}

OpCost quantize_cost(const QuantizeShape& shape) {
  return sum(elementwise_cost({shape.elements, 1, 0, 0.0, shape.from}),
             elementwise_cost({shape.elements, 0, 1, 0.0, shape.to}));
}

OpCost kv_append_cost(const KvAppendShape& shape) {
  return quantize_cost({shape.elements, shape.from, shape.to});
}

BasisOrReason basis_of(const DecoderOp& op) {
  switch (op.kind) {
    case OpKind::routed_linear: {
      // The experts reached, each a GEMM (a GEMV at decode) over its tokens: what the compute
      // suite's grouped GEMM measures (gemm_grouped), at the op's own cost.
      const auto& s = std::get<RoutedShape>(op.shape);
      Basis b = grouped_gemm_lookup(s.act, s.weights, s.k);
      b.cost = op.cost;
      b.roof_bytes = b.cost.bytes();
      b.model = fmt::format("routed experts: {:.1f} experts reached, {:.0f} token-expert pairs, [{} x {}] {}",
                            s.touched, s.pairs, s.k, s.n, name_of(s.weights));
      return b;
    }
    case OpKind::latent_attention: {
      // Decode (absorbed) is what the memory suite's latent-attention benchmark measures; prefill
      // runs the expanded form, flash attention with Q and K 192 wide and V 128 (the compute suite's
      // attn.*.d192v128 cases).
      const auto& s = std::get<LatentAttentionShape>(op.shape);
      if (s.absorbed) return latent_decode_basis(s, op.cost);
      Basis b = attention_basis(expanded_attention_shape(s), AttentionImpl::flash);
      b.cost = op.cost;
      b.roof_bytes = op.cost.bytes();
      return b;
    }
    case OpKind::all_reduce:
    case OpKind::all_gather:
    case OpKind::all_to_all:
    case OpKind::send: return NoBasis{std::string(no_link_table)};
    case OpKind::kv_append: {
      const auto& s = std::get<KvAppendShape>(op.shape);
      return vector_basis(op.cost, 1, 1, s.from,
                          fmt::format("kv_append{{{} elements -> {}}}", s.elements, name_of(s.to)));
    }
    case OpKind::quantize: {
      const auto& s = std::get<QuantizeShape>(op.shape);
      return vector_basis(op.cost, 1, 1, s.from,
                          fmt::format("quantize{{{} elements -> {}}}", s.elements, name_of(s.to)));
    }
    case OpKind::attention: return flash_step_basis(std::get<AttentionShape>(op.shape), op.cost);
    default: break;
  }
  // An op that quantises its result for the GEMM after it writes fewer bytes than its shape's cost
  // function counts: the basis takes the op's own count.
  const auto quantizing = [&op](Basis b) {
    if (op.writes != op.activations) {
      b.cost = op.cost;
      b.roof_bytes = op.cost.bytes();
      b.model += fmt::format(", written in {}", name_of(op.writes));
    }
    return b;
  };
  if (const auto* s = std::get_if<GemvShape>(&op.shape)) return gemv_basis(*s);
  if (const auto* s = std::get_if<GemmShape>(&op.shape)) return gemm_basis(*s);
  if (const auto* s = std::get_if<NormShape>(&op.shape)) return quantizing(norm_basis(*s));
  if (const auto* s = std::get_if<ElementwiseShape>(&op.shape)) return quantizing(elementwise_basis(*s));
  if (const auto* s = std::get_if<SoftmaxShape>(&op.shape)) return softmax_basis(*s);
  return NoBasis{fmt::format("{}: no benchmark measures it, the roofline is kept", op.name)};
}

std::vector<DecoderOp> describe_layer(const ModelSpec& model, const Sharding& sharding, const StepFormats& formats,
                                      const StepShape& step, bool moe_layer, const DescribeOptions& options) {
  check_step(step);
  // --- models (issue 19): the attention of the first layer of that kind.
  return Describer(model, sharding, formats, step, options)
      .layer(moe_layer, model.attention_of(std::min(model.first_layer(moe_layer), model.layers - 1)));
}

std::vector<DecoderLayer> describe_step(const ModelSpec& model, const Sharding& sharding, const StepFormats& formats,
                                        const StepShape& step, const DescribeOptions& options) {
  check_step(step);
  const Describer describer(model, sharding, formats, step, options);
  std::vector<DecoderLayer> layers;
  // --- models (issue 19): one group per kind of feed-forward layer (dense ones first) and per
  // attention of the pattern, in the order the layers first use them.
  for (std::int64_t i = 0; i < model.layers; ++i) {
    const bool moe_layer = model.moe_layer(i);
    const LayerAttention attention = model.attention_of(i);
    const std::string_view name =
        group_name(moe_layer ? 2 : (model.moe ? 1 : 0),
                   model.layer_attention.empty() ? std::nullopt : std::optional(attention.scope));
    const auto same = std::find_if(layers.begin(), layers.end(), [&](const DecoderLayer& group) {
      return group.name == name && group.attention == attention;
    });
    if (same != layers.end()) {
      ++same->count;
    } else {
      layers.push_back({name, 1, describer.layer(moe_layer, attention), attention});
    }
  }
  // --- end models
  layers.push_back({"embedding + head", 1, describer.head(), {}});
  if (sharding.pp > 1) layers.push_back({"pipeline", sharding.pp - 1, describer.pipeline_send(), {}});
  if (step.decode() && step.queries > 1) spread_verify_queries(layers, step.queries);
  return layers;
}

}  // namespace roofline
