// The time of one engine step from the op model of `llm` (roofline/serve/step_cost.hpp).
#include "roofline/serve/step_cost.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include "roofline/basis/calibration_tables.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/model/attention.hpp"

namespace roofline {
namespace {

bool is_attention(OpKind kind) {
  return kind == OpKind::attention || kind == OpKind::latent_attention;
}

// The group that holds the embedding lookup and the output head.
bool is_head_group(const DecoderLayer& layer) {
  return std::any_of(layer.ops.begin(), layer.ops.end(),
                     [](const DecoderOp& op) { return op.kind == OpKind::embedding; });
}

const DecoderOp& attention_op(const std::vector<DecoderLayer>& layers) {
  for (const DecoderLayer& layer : layers) {
    for (const DecoderOp& op : layer.ops) {
      if (is_attention(op.kind)) return op;
    }
  }
  throw InputError("serve: the model's step has no attention op");
}

OpCost minus(const OpCost& a, const OpCost& b) {
  return {a.flops - b.flops, a.bytes_read - b.bytes_read, a.bytes_written - b.bytes_written};
}

OpCost affine(const OpCost& per_request, double requests, const OpCost& per_token, double tokens) {
  return {per_request.flops * requests + per_token.flops * tokens,
          per_request.bytes_read * requests + per_token.bytes_read * tokens,
          per_request.bytes_written * requests + per_token.bytes_written * tokens};
}

// Sets the batch and lengths of an attention op's shape (flash or latent), whichever it holds.
void reshape(DecoderOp& op, std::int64_t batch, std::int64_t seq, std::int64_t kv_seq) {
  std::visit(
      [&](auto& shape) {
        using Shape = std::decay_t<decltype(shape)>;
        if constexpr (std::is_same_v<Shape, AttentionShape> || std::is_same_v<Shape, LatentAttentionShape>) {
          shape.batch = batch;
          shape.seq = seq;
          shape.kv_seq = kv_seq;
        }
      },
      op.shape);
}

}  // namespace

std::map<std::string, std::string, std::less<>> fp8_tables_as_16_bit(const ModelSpec& model,
                                                                     const DeploymentConfig& config,
                                                                     Fp8AsSixteenBit families) {
  namespace tables = calibration_tables;
  const DType act = config.activations;
  std::map<std::string, std::string, std::less<>> out;
  if (act != DType::bf16 && act != DType::fp16) return out;
  for (const DType fp8 : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    if (families.gemm && config.weights == fp8) {
      out[tables::gemm(fp8, fp8)] = tables::gemm(act, act);
      out[tables::grouped_gemm(fp8, fp8)] = tables::grouped_gemm(act, act);
    }
    if (families.attention && config.kv == fp8 && model.attention.kind == AttentionKind::gqa) {
      const std::int64_t d = model.attention.head_dim;
      out[tables::decode_attention(act, fp8, d)] = tables::decode_attention(act, act, d);
      // Prefill: FP8 attention where the GPU multiplies e4m3 (StepFormats::prefill_attention), else
      // 16-bit attention over the FP8 cache.
      out[tables::attention("flash", fp8, fp8, d, true)] = tables::attention("flash", act, act, d, true);
      out[tables::attention("flash", act, fp8, d, true)] = tables::attention("flash", act, act, d, true);
    }
    if (families.attention && config.kv == fp8 && model.attention.kind == AttentionKind::mla) {
      // MLA at decode over an fp8 latent, which no bundled kernel reads: the bf16 latent kernel's
      // efficiency. (Its prefill runs the expanded form, which keeps the roofline either way.)
      const std::int64_t row = model.attention.kv_lora_rank + model.attention.qk_rope_head_dim;
      out[tables::latent_decode_attention(act, fp8, row)] = tables::latent_decode_attention(act, act, row);
    }
  }
  return out;
}

std::int64_t MixedBatch::tokens() const {
  std::int64_t tokens = decode_requests * decode_queries;
  for (const PrefillChunk& chunk : chunks) tokens += chunk.tokens;
  return tokens;
}

StepCoster::StepCoster(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config,
                       const TimeOptions& options, std::int64_t max_step_tokens,
                       const std::optional<Speculation>& speculation)
    : model_(model),
      sharding_(shard(model, config)),
      formats_(StepFormats::of(config, gpu)),
      timer_(gpu, config, options, config.tp),
      max_tokens_(max_step_tokens),
      speculation_(speculation) {
  describe_.text = false;
  // The tiles llm's steps use (run_step in llm.cpp); they set no HBM figure, only the re-reads.
  if (gpu.smem_per_unit_kb) describe_.kernels.smem_per_unit_bytes = *gpu.smem_per_unit_kb * 1024.0;
  const std::vector<DecoderLayer> one = describe({StepPhase::decode, 1, 1});
  // --- models (issue 19): each group's attention (describe_step keeps one group per attention).
  for (const DecoderLayer& layer : one) {
    if (std::none_of(layer.ops.begin(), layer.ops.end(), [](const DecoderOp& op) { return is_attention(op.kind); })) {
      continue;
    }
    const auto same = std::find_if(attention_groups_.begin(), attention_groups_.end(),
                                   [&](const auto& group) { return group.first == layer.attention; });
    if (same != attention_groups_.end()) {
      same->second += layer.count;
    } else {
      attention_groups_.emplace_back(layer.attention, layer.count);
    }
  }
  // --- end models
  decode_ = decode_attention_of(1);
  prefill_attention_ = attention_op(describe({StepPhase::prefill, 1, 1}));
  // Steps of more tokens than the cache holds are costed each time (a budget beyond 65,536 tokens
  // is rare, and its steps are long anyway): the tables stay below 1.6 MB whatever the flags.
  const auto cached = static_cast<std::size_t>(std::min<std::int64_t>(max_tokens_, std::int64_t{1} << 16)) + 1;
  for (std::vector<double>& cache : token_ops_) cache.assign(cached, -1.0);
  head_.assign(cached, -1.0);
  if (!speculation_) return;
  check_speculation(*speculation_);
  verify_ = decode_attention_of(speculation_->draft_tokens + 1);
  if (speculation_->draft_model) {
    draft_model_ = std::make_unique<const ModelSpec>(*speculation_->draft_model);
    // The draft model is dense and split over the same TP group (speculative_decode's drafter).
    DeploymentConfig draft_config = config;
    draft_config.experts = {};
    draft_ = std::make_unique<StepCoster>(*draft_model_, gpu, draft_config, options, max_step_tokens);
  } else {
    mtp_ops_.assign(cached, -1.0);
  }
}

StepCoster::StepCoster(StepCoster&&) noexcept = default;
StepCoster::~StepCoster() = default;

std::vector<DecoderLayer> StepCoster::describe(const StepShape& shape) const {
  StepShape rank = shape;
  rank.ranks_alike = true;  // under attention DP: this rank's own tokens (no effect without it)
  return describe_step(model_, sharding_, formats_, rank, describe_);
}

StepCoster::DecodeAttention StepCoster::decode_attention_of(std::int64_t queries) const {
  // Decode attention reads each request's queries once and each cached token's K and V (or
  // latent) once: affine in the requests and the cached tokens. Two one-request steps give the
  // coefficients (a verify step's K + 1 queries attend causally over the cache and the drafts).
  DecodeAttention out;
  out.queries = queries;
  out.op = attention_op(describe({StepPhase::decode, queries, 1, queries}));
  const OpCost at_one = out.op.cost;
  const OpCost at_two = attention_op(describe({StepPhase::decode, queries, 2, queries})).cost;
  const std::int64_t keys_one = model_.cached_tokens(1);
  const std::int64_t keys_two = model_.cached_tokens(2);
  out.per_kv_token = keys_two > keys_one ? minus(at_two, at_one) : OpCost{};
  out.per_request = minus(at_one, out.per_kv_token);
  return out;
}

double StepCoster::token_ops_s(std::int64_t tokens, StepPhase phase, std::int64_t group_tokens) {
  const auto ops_s = [&] {
    StepShape shape{phase, tokens, tokens};
    shape.group_tokens = group_tokens;
    double seconds = 0;
    for (const DecoderLayer& layer : describe(shape)) {
      const bool head = is_head_group(layer);
      for (const DecoderOp& op : layer.ops) {
        if (is_attention(op.kind) || (head && op.kind != OpKind::embedding)) continue;
        seconds += static_cast<double>(layer.count) * timer_.time(op).time_s;
      }
    }
    return seconds;
  };
  if (group_tokens > 0 && group_tokens != tokens * sharding_.attention_dp) {
    // A lockstep step of unlike ranks: the few (this rank, group) pairs a run meets are kept.
    constexpr std::size_t lockstep_cache_entries = std::size_t{1} << 16;
    const auto key = std::make_tuple(phase, tokens, group_tokens);
    if (const auto found = lockstep_token_ops_.find(key); found != lockstep_token_ops_.end()) return found->second;
    const double seconds = ops_s();
    if (lockstep_token_ops_.size() < lockstep_cache_entries) lockstep_token_ops_.emplace(key, seconds);
    return seconds;
  }
  std::vector<double>& cache = token_ops_[phase == StepPhase::decode ? 0 : 1];
  const auto index = static_cast<std::size_t>(tokens);
  if (index < cache.size() && cache[index] >= 0) return cache[index];
  const double seconds = ops_s();
  if (index < cache.size()) cache[index] = seconds;
  return seconds;
}

double StepCoster::head_s(std::int64_t rows) {
  const auto index = static_cast<std::size_t>(rows);
  if (index < head_.size() && head_[index] >= 0) return head_[index];
  double seconds = 0;
  // The logits of one row per request: the final norm and the head over `rows` rows (a GEMV
  // with `rows` vectors, as in decode_step), and their gather over the TP group.
  for (const DecoderLayer& layer : describe({StepPhase::decode, rows, 1})) {
    if (!is_head_group(layer)) continue;
    for (const DecoderOp& op : layer.ops) {
      if (op.kind != OpKind::embedding) seconds += static_cast<double>(layer.count) * timer_.time(op).time_s;
    }
  }
  if (index < head_.size()) head_[index] = seconds;
  return seconds;
}

double StepCoster::one_layer_s(const DecodeAttention& attention, const LayerAttention& group, std::int64_t requests,
                               std::int64_t kv_tokens) const {
  if (requests == 0) return 0;
  // --- models (issue 19): a windowed or chunked layer reads at most its span per request, so at
  // most min(kv_tokens, span x requests) keys: exact once every request is past the span.
  const std::int64_t keys =
      group.scope == AttentionScope::full ? kv_tokens : std::min(kv_tokens, group.span * requests);
  DecoderOp op = attention.op;
  // The shape names the op to a calibration's table (batch, mean cache); the cost is exact.
  const std::int64_t mean_kv = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::llround(static_cast<double>(keys) / static_cast<double>(requests))));
  reshape(op, requests, attention.queries, mean_kv + attention.queries - 1);
  op.cost =
      affine(attention.per_request, static_cast<double>(requests), attention.per_kv_token, static_cast<double>(keys));
  return timer_.time(op).time_s;
}

double StepCoster::decode_attention_s(std::int64_t requests, std::int64_t kv_tokens, std::int64_t queries) const {
  if (queries != 1 && (!verify_ || verify_->queries != queries)) {
    throw std::logic_error("serve: a verify step of another draft length than the coster's");
  }
  const DecodeAttention& attention = queries == 1 ? decode_ : *verify_;
  double seconds = 0;
  for (const auto& [group, layers] : attention_groups_) {
    seconds += static_cast<double>(layers) * one_layer_s(attention, group, requests, kv_tokens);
  }
  return seconds;
}

double StepCoster::prefill_attention_s(const PrefillChunk& chunk) const {
  double seconds = 0;
  // --- models (issue 19): a windowed or chunked layer reads the keys of its span before the chunk
  // and evaluates the pairs its mask keeps: prefill_pairs(cached + tokens) - prefill_pairs(cached).
  for (const auto& [attention, layers] : attention_groups_) {
    const bool full = attention.scope == AttentionScope::full;
    const std::int64_t before = full ? chunk.cached : std::min(chunk.cached, attention.span);
    DecoderOp op = prefill_attention_;
    reshape(op, 1, chunk.tokens, before + chunk.tokens);
    if (auto* flash = std::get_if<AttentionShape>(&op.shape)) {
      flash->causal = true;
      // HBM traffic and useful FLOPs do not depend on the tiles (they set the re-reads only).
      op.cost = flash_attention_cost(*flash, FlashTiling{}).hbm;
      if (!full) {
        op.cost.flops *=
            (attention.prefill_pairs(chunk.cached + chunk.tokens) - attention.prefill_pairs(chunk.cached)) /
            attention_pairs(*flash);
      }
    } else if (auto* latent = std::get_if<LatentAttentionShape>(&op.shape)) {
      latent->causal = true;
      op.cost = latent_attention_cost(*latent);
    }
    seconds += static_cast<double>(layers) * timer_.time(op).time_s;
  }
  return seconds;
}

double StepCoster::mtp_pass_ops_s(std::int64_t requests) {
  const auto index = static_cast<std::size_t>(requests);
  if (index < mtp_ops_.size() && mtp_ops_[index] >= 0) return mtp_ops_[index];
  double seconds = 0;
  // describe_mtp_pass spreads its batch over the attention-DP ranks (llm's view): this rank's
  // `requests` are attention_dp x requests of the group.
  const std::int64_t group = requests * sharding_.attention_dp;
  for (const DecoderLayer& layer : describe_mtp_pass(model_, sharding_, formats_, group, 1, describe_)) {
    for (const DecoderOp& op : layer.ops) {
      if (!is_attention(op.kind)) seconds += static_cast<double>(layer.count) * timer_.time(op).time_s;
    }
  }
  if (index < mtp_ops_.size()) mtp_ops_[index] = seconds;
  return seconds;
}

double StepCoster::draft_s(std::int64_t requests, std::int64_t kv_tokens) {
  if (!speculation_ || requests == 0) return 0;
  const auto passes = static_cast<double>(speculation_->draft_tokens);
  if (draft_) {
    MixedBatch step;
    step.decode_requests = requests;
    step.decode_kv_tokens = kv_tokens;
    return passes * draft_->time_s(step);
  }
  // The MTP layer's attention is one layer like the model's, over the same caches.
  return passes * (mtp_pass_ops_s(requests) + one_layer_s(decode_, LayerAttention{}, requests, kv_tokens));
}

double StepCoster::time_s(const MixedBatch& batch) {
  const std::int64_t tokens = batch.tokens();
  if (tokens < 1) throw InputError("serve: a step with no tokens");
  const StepPhase phase = batch.chunks.empty() ? StepPhase::decode : StepPhase::prefill;
  double seconds = token_ops_s(tokens, phase, batch.group_tokens) + head_s(batch.rows()) +
                   decode_attention_s(batch.decode_requests, batch.decode_kv_tokens, batch.decode_queries);
  for (const PrefillChunk& chunk : batch.chunks) seconds += prefill_attention_s(chunk);
  if (batch.decode_queries > 1) seconds += draft_s(batch.decode_requests, batch.decode_kv_tokens);
  return seconds;
}

}  // namespace roofline
