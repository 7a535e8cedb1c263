// Speculative decoding: drafts, the verify step and the expected tokens (roofline/llm/speculative.hpp).
#include "roofline/llm/speculative.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "roofline/core/error.hpp"
#include "roofline/model/attention.hpp"

namespace roofline {
namespace {

// Drafts beyond this gain nothing at any published acceptance (0.9^17 < 0.17) and only add cost.
constexpr int max_draft_tokens = 16;

bool is_attention(OpKind kind) {
  return kind == OpKind::attention || kind == OpKind::latent_attention;
}

}  // namespace

void check_speculation(const Speculation& s) {
  if (s.draft_tokens < 1 || s.draft_tokens > max_draft_tokens) {
    throw InputError(
        fmt::format("--speculate {}: draft tokens must be from 1 to {}", s.draft_tokens, max_draft_tokens));
  }
  if (s.acceptance.empty()) throw InputError("--acceptance: give a rate in [0, 1] (or one per draft position)");
  if (s.acceptance.size() > static_cast<std::size_t>(s.draft_tokens)) {
    throw InputError(fmt::format("--acceptance: {} rates for {} draft positions", s.acceptance.size(), s.draft_tokens));
  }
  for (double a : s.acceptance) {
    if (!(a >= 0 && a <= 1)) throw InputError(fmt::format("--acceptance {}: must be a rate in [0, 1]", a));
  }
  if (s.acceptance.size() > 1 && s.acceptance.size() != static_cast<std::size_t>(s.draft_tokens)) {
    throw InputError(fmt::format("--acceptance: give one rate, or one per draft position ({}), not {}", s.draft_tokens,
                                 s.acceptance.size()));
  }
}

double expected_tokens_per_verify(const Speculation& s) {
  double tokens = 1;  // the target's own token at the first rejection (or after the last draft)
  double reached = 1;
  for (int i = 0; i < s.draft_tokens; ++i) {
    reached *= s.acceptance.size() == 1 ? s.acceptance.front() : s.acceptance[static_cast<std::size_t>(i)];
    tokens += reached;
  }
  return tokens;
}

void spread_verify_queries(std::vector<DecoderLayer>& layers, std::int64_t queries) {
  for (DecoderLayer& layer : layers) {
    for (DecoderOp& op : layer.ops) {
      if (!is_attention(op.kind)) continue;
      // Each sequence's K + 1 queries are the last positions of its cache (the drafts appended):
      // causal over the cached context and the drafts before them.
      if (auto* flash = std::get_if<AttentionShape>(&op.shape)) {
        flash->batch /= queries;
        flash->seq = queries;
        flash->kv_seq += queries - 1;
        flash->causal = true;
        // HBM traffic does not depend on the tiles (they set the re-reads only).
        op.cost = flash_attention_cost(*flash, FlashTiling{}).hbm;
      } else if (auto* latent = std::get_if<LatentAttentionShape>(&op.shape)) {
        latent->batch /= queries;
        latent->seq = queries;
        latent->kv_seq += queries - 1;
        latent->causal = true;
        op.cost = latent_attention_cost(*latent);
      }
      if (!op.shape_text.empty()) op.shape_text += fmt::format(", {} queries per sequence (verify)", queries);
    }
  }
}

std::vector<DecoderLayer> describe_mtp_pass(const ModelSpec& model, const Sharding& sharding,
                                            const StepFormats& formats, std::int64_t batch, std::int64_t context,
                                            const DescribeOptions& options) {
  const StepShape step{StepPhase::decode, batch, context};
  std::vector<DecoderLayer> pass;
  // eh_proj: [normalised embedding, hidden state] (2h) to h, on each GPU's own rows, replicated.
  const std::int64_t rows =
      sharding.attention_dp > 1 ? (batch + sharding.attention_dp - 1) / sharding.attention_dp : batch;
  const GemvShape proj{model.hidden, 2 * model.hidden, rows, formats.weights, formats.activations, std::nullopt};
  DecoderOp eh;
  eh.name = "mtp_eh_proj";
  eh.kind = OpKind::linear;
  eh.model = "gemv";
  if (options.text)
    eh.shape_text = fmt::format("{} x [{} x {}] {}", rows, 2 * model.hidden, model.hidden, name_of(formats.weights));
  eh.shape = proj;
  eh.weights = formats.weights;
  eh.activations = formats.activations;
  eh.writes = formats.activations;
  eh.unit = MathUnit::matrix;
  eh.cost = gemv_cost(proj);
  eh.role = OpRole::weights;
  std::vector<DecoderOp> layer{eh};
  const std::vector<DecoderOp> body = describe_layer(model, sharding, formats, step, model.moe.has_value(), options);
  layer.insert(layer.end(), body.begin(), body.end());
  // The MTP layer's attention is the one describe_layer gave its body.
  pass.push_back({"mtp layer", 1, std::move(layer), model.attention_of(model.moe ? model.dense_layers() : 0)});
  for (DecoderLayer& group : describe_step(model, sharding, formats, step, options)) {
    const bool head = std::any_of(group.ops.begin(), group.ops.end(),
                                  [](const DecoderOp& op) { return op.kind == OpKind::embedding; });
    if (head) pass.push_back(std::move(group));
  }
  return pass;
}

SpeculativeDecode speculative_decode(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                                     const DeploymentConfig& config, std::int64_t batch, std::int64_t context,
                                     const Speculation& speculation, const TimeOptions& options) {
  check_speculation(speculation);
  SpeculativeDecode out;
  const int k = speculation.draft_tokens;
  out.draft_passes = k;
  out.verify = verify_step(model, gpu, sharding, config, batch, k + 1, context, options);
  const StepFormats formats = StepFormats::of(config, gpu);
  if (speculation.draft_model) {
    const ModelSpec& draft = *speculation.draft_model;
    const Sharding draft_sharding = shard(draft, config.tp, config.pp);
    out.draft = decode_step(draft, gpu, draft_sharding, config, batch, context, options);
    const MemoryPlan memory = plan_memory(draft, gpu, draft_sharding, config, context);
    out.draft_weight_bytes = memory.heaviest().weights.total();
    out.draft_kv_bytes_per_request = memory.heaviest().kv_bytes_per_request;
  } else {
    DescribeOptions describe;
    describe.text = options.describe;
    if (gpu.smem_per_unit_kb) describe.kernels.smem_per_unit_bytes = *gpu.smem_per_unit_kb * 1024.0;
    out.draft = time_layers(describe_mtp_pass(model, sharding, formats, batch, context, describe), gpu, sharding,
                            config, options);
    const LayerElements layer = layer_elements(model, sharding, model.moe.has_value());
    out.draft_weight_bytes =
        (layer.attention + layer.ffn) * bytes_per_element(config.weights) +
        2.0 * static_cast<double>(model.hidden * model.hidden) * bytes_per_element(config.weights) +
        layer.small * bytes_per_element(config.activations);
    out.draft_kv_bytes_per_request =
        kv_bytes_per_token_layer_gpu(model, sharding, config.kv) * static_cast<double>(model.cached_tokens(context));
  }
  out.cycle_s = out.verify.time_s + static_cast<double>(k) * out.draft.time_s;
  out.tokens_per_verify = expected_tokens_per_verify(speculation);
  out.tpot_s = out.cycle_s / out.tokens_per_verify;
  return out;
}

std::int64_t max_requests_with_draft(const MemoryPlan& memory, const Sharding& sharding,
                                     const SpeculativeDecode& draft) {
  const StageMemory& stage = memory.heaviest();
  const double free = stage.free_bytes - draft.draft_weight_bytes;
  if (free <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(free / (stage.kv_bytes_per_request + draft.draft_kv_bytes_per_request))) *
         sharding.attention_dp;
}

}  // namespace roofline
