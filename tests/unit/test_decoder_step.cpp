// The one description of a decoder step: what llm times is what the layer benchmark runs.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/validate/layer_check.hpp"
#include "roofline/validate/validate.hpp"

using namespace roofline;
using llm_fixture::gpus;
using llm_fixture::models;
namespace layer = bench::layer;

namespace {

const LayerGroup& group_named(const StepTime& step, std::string_view name) {
  for (const LayerGroup& g : step.groups) {
    if (g.name == name) return g;
  }
  FAIL("no group " << name);
  return step.groups.front();
}

}  // namespace

TEST_CASE("every layer case runs the ops llm predicts for LLaMA-3-70B on one GPU, name for name") {
  const ModelSpec& model = models().find("llama-3.1-70b");
  const GpuSpec& h200 = gpus().find("h200");
  const Sharding sharding = shard(model, 1, 1);
  for (const layer::Case& c : layer::cases) {
    INFO(layer::case_id(c));
    // Decode projections that a GEMM runs on quantised inputs are the layer's kernels' choice, not
    // what llm describes for a deployment (W8A16 GEMVs): the next test covers those cases.
    if (c.phase == layer::Phase::decode && layer::quantized_linears(c)) continue;
    DeploymentConfig config;  // TP 1, the case's formats
    config.weights = c.formats.weights;
    config.kv = c.formats.kv;
    config.activations = c.formats.activations;
    const StepTime step = c.phase == layer::Phase::decode
                              ? decode_step(model, h200, sharding, config, c.batch, c.context)
                              : prefill(model, h200, sharding, config, c.seq);
    const std::vector<StepOp>& predicted = group_named(step, "layer").ops;
    const std::vector<layer::StagePlan> stages = layer::stages(c);
    // The project's flash kernel reads and writes head-major tensors: at prefill the suite runs one
    // op more than an engine does, the move of the outputs back to token-major, right after attention.
    // Ahead of a W8A8 o_proj that move quantises too: it stands for llm's attn_quant, byte for byte.
    std::vector<std::string> stage_names;
    std::size_t p = 0;
    for (const layer::StagePlan& s : stages) {
      stage_names.emplace_back(s.name);
      if (s.op.kind == OpKind::attn_merge) {
        CHECK(c.phase == layer::Phase::prefill);
        if (p < predicted.size() && predicted[p].name == "attn_quant") {
          CHECK(s.cost.bytes_read == predicted[p].cost.bytes_read);
          CHECK(s.cost.bytes_written == predicted[p].cost.bytes_written);
          ++p;
        }
        continue;
      }
      REQUIRE(p < predicted.size());
      const StepOp& op = predicted[p++];
      CHECK(s.name == op.name);
      CHECK(s.cost.flops == op.cost.flops);
      CHECK(s.cost.bytes_read == op.cost.bytes_read);
      CHECK(s.cost.bytes_written == op.cost.bytes_written);
    }
    CHECK(p == predicted.size());
    // The results the runner records are those stages, in that order.
    const std::vector<bench::BenchmarkResult> results = layer::make_results(c);
    REQUIRE(results.size() == stages.size() + 1);
    for (std::size_t i = 0; i < stages.size(); ++i) {
      CHECK(results[i + 1].id == layer::stage_id(c, stages[i].name));
      CHECK(results[i + 1].cost.bytes() == stages[i].cost.bytes());
    }
  }
}

TEST_CASE("FP8 decode cases on a GEMM: llm's step above the GEMV batches, its W8A16 step with quantised inputs below") {
  const ModelSpec& model = models().find("llama-3.1-70b");
  const GpuSpec& h200 = gpus().find("h200");
  for (const layer::Case& c : layer::cases) {
    if (c.phase != layer::Phase::decode || !layer::quantized_linears(c)) continue;
    INFO(layer::case_id(c));
    DeploymentConfig config;
    config.weights = c.formats.weights;
    config.kv = c.formats.kv;
    const StepTime step = decode_step(model, h200, shard(model, 1, 1), config, c.batch, c.context);
    const std::vector<StepOp>& predicted = group_named(step, "layer").ops;
    // Above 16 tokens llm's step is W8A8 too (w8a16_gemv_max_batch): the very ops of the case.
    const bool same_step = c.batch > w8a16_gemv_max_batch;
    std::size_t p = 0;
    for (const layer::StagePlan& s : layer::stages(c)) {
      if (!same_step && s.op.kind == OpKind::quantize) continue;  // the attention output quantised for o_proj
      REQUIRE(p < predicted.size());
      const StepOp& op = predicted[p++];
      CHECK(s.name == op.name);
      CHECK(s.cost.flops == op.cost.flops);
      if (same_step) {
        CHECK(s.cost.bytes() == op.cost.bytes());
      } else if (s.op.kind == OpKind::linear) {
        // The same weight bytes and output; the input read in 1 byte instead of 2.
        const auto& gemm = std::get<GemmShape>(s.op.shape);
        CHECK(gemm.a == DType::fp8_e4m3);
        CHECK(s.cost.bytes_read == op.cost.bytes_read - static_cast<double>(gemm.m * gemm.k));
        CHECK(s.cost.bytes_written == op.cost.bytes_written);
      } else if (s.op.writes != s.op.activations) {
        CHECK(s.cost.bytes_written < op.cost.bytes_written);
      } else {
        CHECK(s.cost.bytes() == op.cost.bytes());
      }
    }
    CHECK(p == predicted.size());
  }
}

TEST_CASE("routed experts are looked up in the grouped GEMM tables, at the op's own cost and depth") {
  // Mixtral 8x7B (hidden 4096, 8 experts, top 2, expert FFN 14336, SwiGLU), bf16, TP 1, decode of one
  // token: 8 x (1 - (1 - 2/8)^1) = 2 experts reached, 2 token-expert pairs; experts_gate_up is
  // [4096 x 28672] per expert: 2 x 2 x 28672 x 4096 FLOPs.
  const ModelSpec& model = models().find("mixtral-8x7b");
  const StepFormats bf16 = StepFormats::of(DeploymentConfig{}, gpus().find("h200"));
  const std::vector<DecoderOp> ops =
      describe_layer(model, shard(model, 1, 1), bf16, StepShape{StepPhase::decode, 1, 1024}, true);
  const auto up =
      std::find_if(ops.begin(), ops.end(), [](const DecoderOp& op) { return op.name == "experts_gate_up"; });
  REQUIRE(up != ops.end());
  CHECK(up->cost.flops == 2.0 * 2 * 28672 * 4096);
  const Basis basis = std::get<Basis>(basis_of(*up));
  CHECK(basis.pattern == "gemm_grouped");
  CHECK(basis.best_table == "gemm_grouped.bf16");
  CHECK(basis.cost.flops == up->cost.flops);
  CHECK(basis.cost.bytes() == up->cost.bytes());
  // Its depth k = 4096 (the hidden size) is the grouped tables' optional axis, as for the compute
  // suite's grouped cases: a table learnt with k reads this op at k = 4096.
  CHECK(basis.series == 4096.0);
  CHECK(basis.series_name == "k");
  CHECK(basis.series_optional);
}

TEST_CASE("an FP8 step: W8A8 prefill projections fed by quantising ops where the GPU multiplies e4m3") {
  // LLaMA-3.1-8B (hidden 4096, 32 query heads, 8 KV heads of 128, SwiGLU 14336), TP 1, a prompt of
  // 512 tokens, FP8 weights, bf16 activations and KV.
  const ModelSpec& model = models().find("llama-3.1-8b");
  DeploymentConfig config;
  config.weights = DType::fp8_e4m3;
  const StepFormats h200 = StepFormats::of(config, gpus().find("h200"));
  CHECK(h200.matmul == DType::fp8_e4m3);
  const StepShape prompt{StepPhase::prefill, 512, 512};
  const std::vector<DecoderOp> ops = describe_layer(model, shard(model, 1, 1), h200, prompt, false);
  std::vector<std::string> names;
  for (const DecoderOp& op : ops) names.emplace_back(op.name);
  CHECK(names == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "attn_quant",
                                          "o_proj", "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down"});
  // attn_norm: x and the residual read (512 x 4096 x 2 B each) and gamma (4096 x 2 B); the new
  // residual stream written in bf16 (512 x 4096 x 2 B) and the normalised rows in e4m3 (x 1 B).
  const DecoderOp& norm = ops[0];
  CHECK(norm.writes == DType::fp8_e4m3);
  CHECK(norm.cost.bytes_read == 2.0 * 512 * 4096 * 2 + 4096 * 2);
  CHECK(norm.cost.bytes_written == 512.0 * 4096 * 2 + 512.0 * 4096);
  // Its basis counts the same bytes (not the bf16 output its shape alone would give).
  CHECK(std::get<Basis>(basis_of(norm)).cost.bytes() == norm.cost.bytes());
  // qkv_proj: [512 x 4096] e4m3 . [4096 x 6144] e4m3 ((32 + 2 x 8) x 128 = 6144), bf16 out:
  // 512 x 4096 + 4096 x 6144 bytes read, 512 x 6144 x 2 written, 2 x 512 x 6144 x 4096 FLOPs.
  const DecoderOp& qkv = ops[1];
  const auto& gemm = std::get<GemmShape>(qkv.shape);
  CHECK(gemm.a == DType::fp8_e4m3);
  CHECK(gemm.b == DType::fp8_e4m3);
  CHECK(gemm.c == DType::bf16);
  CHECK(qkv.cost.bytes_read == 512.0 * 4096 + 4096.0 * 6144);
  CHECK(qkv.cost.bytes_written == 512.0 * 6144 * 2);
  CHECK(qkv.cost.flops == 2.0 * 512 * 6144 * 4096);
  CHECK(std::get<Basis>(basis_of(qkv)).best_table == "gemm.fp8_e4m3");
  // attn_quant: the 512 x 32 x 128 attention outputs read in bf16, written in e4m3.
  CHECK(ops[5].kind == OpKind::quantize);
  CHECK(ops[5].cost.bytes_read == 512.0 * 32 * 128 * 2);
  CHECK(ops[5].cost.bytes_written == 512.0 * 32 * 128);
  CHECK(std::get<Basis>(basis_of(ops[5])).best_table == "stream.r1w1");
  // ffn_act: SwiGLU reads gate and up (2 x 512 x 14336 x 2 B) and writes e4m3 (512 x 14336 x 1 B).
  CHECK(ops[9].cost.bytes_read == 2.0 * 512 * 14336 * 2);
  CHECK(ops[9].cost.bytes_written == 512.0 * 14336);
  // Decode keeps W8A16 GEMVs: e4m3 weights, bf16 activations, and norms writing bf16.
  const std::vector<DecoderOp> decode =
      describe_layer(model, shard(model, 1, 1), h200, {StepPhase::decode, 4, 1000}, false);
  CHECK(std::get<GemvShape>(decode[1].shape).weight == DType::fp8_e4m3);
  CHECK(std::get<GemvShape>(decode[1].shape).activation == DType::bf16);
  CHECK(decode[0].writes == DType::bf16);
  CHECK(decode.size() == 10);
  // A GPU without an FP8 tensor rate (A100) widens the weights: W8A16 GEMMs, no quantising ops.
  const StepFormats a100 = StepFormats::of(config, gpus().find("a100-80gb"));
  CHECK(a100.matmul == DType::bf16);
  const std::vector<DecoderOp> widened = describe_layer(model, shard(model, 1, 1), a100, prompt, false);
  CHECK(widened.size() == 10);
  CHECK(std::get<GemmShape>(widened[1].shape).a == DType::bf16);
  CHECK(widened[0].writes == DType::bf16);
}

TEST_CASE("prefill attention over an FP8 cache runs FP8 attention where the GPU multiplies e4m3") {
  // LLaMA-3.1-8B, a 512-token prompt at TP 1: 32 heads of 128 over 8 KV heads, causal, 512 x 513 / 2
  // = 131,328 query-key pairs per head, 4 x 128 FLOPs each.
  const ModelSpec& model = models().find("llama-3.1-8b");
  DeploymentConfig config;
  config.weights = DType::fp8_e4m3;
  config.kv = DType::fp8_e4m3;
  const StepShape prompt{StepPhase::prefill, 512, 512};
  const auto attention_of = [&](const StepFormats& formats, const StepShape& step) {
    for (const DecoderOp& op : describe_layer(model, shard(model, 1, 1), formats, step, false)) {
      if (op.kind == OpKind::attention) return op;
    }
    throw std::logic_error("no attention op");
  };
  const StepFormats h200 = StepFormats::of(config, gpus().find("h200"));
  CHECK(h200.prefill_attention == DType::fp8_e4m3);
  const DecoderOp fp8 = attention_of(h200, prompt);
  CHECK(fp8.weights == DType::fp8_e4m3);
  CHECK(fp8.unit == MathUnit::matrix);
  CHECK(fp8.cost.flops == 4.0 * 32 * 131328 * 128);
  const Basis basis = std::get<Basis>(basis_of(fp8));
  CHECK(basis.best_table == "attention.flash.fp8_e4m3.d128.causal");
  CHECK(basis.math.type == DType::fp8_e4m3);
  // Decode reads the FP8 cache and multiplies in bf16 (the decode-attention tables' kvfp8 rows).
  const DecoderOp decode = attention_of(h200, {StepPhase::decode, 4, 1000});
  CHECK(decode.weights == DType::bf16);
  CHECK(std::get<Basis>(basis_of(decode)).best_table == "attention.decode.bf16.kvfp8_e4m3.d128");
  // A bf16 cache, or a GPU without an FP8 tensor rate (A100), keeps bf16 prefill attention.
  config.kv = DType::bf16;
  CHECK(StepFormats::of(config, gpus().find("h200")).prefill_attention == DType::bf16);
  config.kv = DType::fp8_e4m3;
  const StepFormats a100 = StepFormats::of(config, gpus().find("a100-80gb"));
  CHECK(a100.prefill_attention == DType::bf16);
  CHECK(std::get<Basis>(basis_of(attention_of(a100, prompt))).best_table ==
        "attention.flash.bf16.kvfp8_e4m3.d128.causal");
}

TEST_CASE("every op kind of the layer has a kernel in the runner's table") {
  for (const layer::Case& c : layer::cases) {
    for (const layer::StagePlan& s : layer::stages(c)) {
      INFO(layer::case_id(c) << " " << s.name);
      CHECK(layer::layer_kernel_of(s.op.kind).has_value());
    }
  }
  // The runner's launchers are indexed by LayerKernel: each kernel once, in the enum's order.
  std::set<OpKind> kinds;
  for (std::size_t i = 0; i < layer::layer_kernels.size(); ++i) {
    CHECK(static_cast<std::size_t>(layer::layer_kernels[i].kernel) == i);
    CHECK(kinds.insert(layer::layer_kernels[i].kind).second);
  }
  // Transfers between GPUs and the MoE/MLA ops have no layer kernel: the suite runs one dense GPU.
  CHECK_FALSE(layer::layer_kernel_of(OpKind::all_reduce));
  CHECK_FALSE(layer::layer_kernel_of(OpKind::latent_attention));
}

TEST_CASE("the description of a dense decode layer: fused norms, rope, the cache append") {
  // LLaMA-3.1-8B (hidden 4096, 32 query heads, 8 KV heads of 128, FFN 14336), TP 2, decode of 4
  // requests with 1000 tokens each; bf16 activations, fp8 KV.
  const ModelSpec& model = models().find("llama-3.1-8b");
  StepFormats formats;
  formats.kv = DType::fp8_e4m3;
  const std::vector<DecoderOp> ops =
      describe_layer(model, shard(model, 2, 1), formats, {StepPhase::decode, 4, 1000}, false);
  std::vector<std::string> names;
  for (const DecoderOp& op : ops) names.emplace_back(op.name);
  CHECK(names == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "o_proj",
                                          "attn_allreduce", "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down",
                                          "ffn_allreduce"});
  // Per GPU 16 query and 4 KV heads: rope on 4 x (16 + 4) x 128 = 10240 elements, 3 FLOPs each,
  // read and written in bf16.
  CHECK(ops[2].kind == OpKind::rope);
  CHECK(ops[2].cost.flops == 3.0 * 10240);
  CHECK(ops[2].cost.bytes() == 2.0 * 10240 * 2);
  // The append: 4 x 2 x 4 x 128 = 4096 elements read in bf16 (2 B) and written in fp8 (1 B).
  CHECK(ops[3].kind == OpKind::kv_append);
  CHECK(ops[3].cost.bytes_read == 4096.0 * 2);
  CHECK(ops[3].cost.bytes_written == 4096.0);
  CHECK(ops[3].role == OpRole::kv_cache);
  // The norm fuses the residual add: rows 4 x 4096 read twice and written twice, gamma once.
  CHECK(ops[0].cost.bytes() == 4.0 * 4096 * 2 * 4 + 4096 * 2);
  // The all-reduce of 4 x 4096 bf16 is a transfer: no HBM cost, its message recorded.
  CHECK(ops[6].unit == MathUnit::link);
  CHECK(ops[6].cost.bytes() == 0);
  CHECK(std::get<TransferShape>(ops[6].shape).bytes == 4.0 * 4096 * 2);
  // A prefill with head-major attention kernels adds the output move, and only then.
  const StepShape prompt{StepPhase::prefill, 512, 512};
  DescribeOptions head_major;
  head_major.kernels.head_major_prefill = true;
  const std::vector<DecoderOp> plain = describe_layer(model, shard(model, 1, 1), {}, prompt, false);
  const std::vector<DecoderOp> moved = describe_layer(model, shard(model, 1, 1), {}, prompt, false, head_major);
  REQUIRE(moved.size() == plain.size() + 1);
  CHECK(moved[5].kind == OpKind::attn_merge);
  // 512 tokens x 32 heads x 128, read and written in bf16.
  CHECK(moved[5].cost.bytes() == 512.0 * 32 * 128 * 2 * 2);
}

TEST_CASE("stages of runs recorded before the layer ran the description keep their bases") {
  // Run 3 (2026-11-30) timed RMSNorm without the residual and the residual adds on their own; a
  // stage that stayed (qkv) is the description's op under its recorded word.
  const auto stage = [](std::string word) {
    Measurement m;
    m.suite = "layer";
    m.group = "layer_stages";
    m.id = "layer.decode.b1.ctx4096.roofline." + word;
    m.parameters = {{"layer", "layer.decode.b1.ctx4096.roofline"}};
    return benchmark_basis(m);
  };
  // Residual add of 8192 bf16 elements: 2 read, 1 written, 1 FLOP each.
  const BasisOrReason add = stage("residual1");
  REQUIRE(std::holds_alternative<Basis>(add));
  CHECK(std::get<Basis>(add).cost.flops == 8192);
  CHECK(std::get<Basis>(add).cost.bytes() == 3 * 16384.0);
  CHECK(std::get<Basis>(add).pattern == "layer.stream");
  // RMSNorm of one row without the residual: 4 FLOPs an element + 3; the row and gamma read, the row written.
  const BasisOrReason norm = stage("rmsnorm2");
  REQUIRE(std::holds_alternative<Basis>(norm));
  CHECK(std::get<Basis>(norm).cost.flops == 4.0 * 8192 + 3);
  CHECK(std::get<Basis>(norm).cost.bytes() == 3 * 16384.0);
  // The QKV GEMV: 10240 x 8192 bf16 weights, x and y.
  const BasisOrReason qkv = stage("qkv");
  REQUIRE(std::holds_alternative<Basis>(qkv));
  CHECK(std::get<Basis>(qkv).cost.bytes() == 167772160.0 + 16384 + 20480);
  CHECK(std::holds_alternative<NoBasis>(stage("nosuchstage")));
}

TEST_CASE("an FP8 MLA step: the latent projections and shared experts run W8A8 where the dense ones do") {
  // DeepSeek-V3 (hidden 7168, q_lora_rank 1536, kv_lora_rank 512, 128 heads of 128 (v) / 128 + 64
  // (qk), one shared expert of 2048) in FP8 on H200, TP 8: 16 heads a GPU. DeepSeek's reference
  // inference quantises every FP8 linear's input (act_quant, then fp8_gemm), SGLang and vLLM too
  // (per_token_group_quant_fp8 in apply_w8a8_block_fp8_linear); as for the dense projections, the
  // description keeps W8A16 GEMVs up to 16 decode rows, but not for the routed experts.
  const ModelSpec& model = models().find("deepseek-v3");
  DeploymentConfig config;
  config.weights = DType::fp8_e4m3;
  const StepFormats h200 = StepFormats::of(config, gpus().find("h200"));
  const Sharding tp8 = shard(model, 8, 1);
  const auto op_named = [](const std::vector<DecoderOp>& ops, std::string_view name) -> const DecoderOp& {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const DecoderOp& op) { return op.name == name; });
    REQUIRE(it != ops.end());
    return *it;
  };
  const std::vector<DecoderOp> rows64 = describe_layer(model, tp8, h200, {StepPhase::decode, 64, 1024}, true);
  std::vector<std::string> names;
  for (const DecoderOp& op : rows64) names.emplace_back(op.name);
  CHECK(names == std::vector<std::string>{"attn_norm",
                                          "q_down",
                                          "q_norm",
                                          "q_up",
                                          "kv_down",
                                          "kv_norm",
                                          "rope",
                                          "kv_append",
                                          "q_absorb",
                                          "attention",
                                          "v_up",
                                          "attn_quant",
                                          "o_proj",
                                          "attn_allreduce",
                                          "ffn_norm",
                                          "router",
                                          "router_softmax",
                                          "experts_quant",
                                          "experts_gate_up",
                                          "experts_act",
                                          "experts_down",
                                          "shared_gate_up",
                                          "shared_act",
                                          "shared_down",
                                          "ffn_allreduce"});
  CHECK(rows64[0].writes == DType::fp8_e4m3);  // attn_norm quantises for q_down and kv_down
  CHECK(rows64[2].writes == DType::fp8_e4m3);  // q_norm for q_up
  CHECK(rows64[5].writes == DType::bf16);      // kv_norm: the cached latent
  // q_down: [64 x 7168] e4m3 . [7168 x 1536] e4m3, bf16 out: 458,752 + 11,010,048 B read,
  // 64 x 1536 x 2 = 196,608 written.
  const DecoderOp& q_down = rows64[1];
  CHECK(std::get<GemmShape>(q_down.shape).a == DType::fp8_e4m3);
  CHECK(q_down.cost.bytes_read == 64.0 * 7168 + 7168.0 * 1536);
  CHECK(q_down.cost.bytes_written == 64.0 * 1536 * 2);
  CHECK(std::get<Basis>(basis_of(q_down)).best_table == "gemm.fp8_e4m3");
  // attn_quant: v_up's 64 x 16 heads x 128 bf16 outputs read (2 B), written in e4m3 (1 B).
  CHECK(rows64[11].cost.bytes_read == 64.0 * 16 * 128 * 2);
  CHECK(rows64[11].cost.bytes_written == 64.0 * 16 * 128);
  // o_proj: [64 x 2048] e4m3 . [2048 x 7168] e4m3.
  CHECK(rows64[12].cost.bytes_read == 64.0 * 2048 + 2048.0 * 7168);
  // The absorbed per-head products stay 16-bit.
  CHECK(std::get<GemmShape>(rows64[8].shape).a == DType::bf16);
  // experts_quant: ffn_norm's 64 x 7168 rows (it also feeds the bf16 router) once, for the routed
  // and the shared experts: 917,504 B read, 458,752 written.
  const DecoderOp& quant = op_named(rows64, "experts_quant");
  CHECK(quant.kind == OpKind::quantize);
  CHECK(quant.cost.bytes_read == 64.0 * 7168 * 2);
  CHECK(quant.cost.bytes_written == 64.0 * 7168);
  // The shared expert, split over TP 8 (2048 / 8 = 256 wide): gate_up [64 x 7168] e4m3 .
  // [7168 x 512] e4m3; its SwiGLU writes e4m3 for shared_down (64 x 256 x 1 B).
  const DecoderOp& shared_up = op_named(rows64, "shared_gate_up");
  CHECK(std::get<GemmShape>(shared_up.shape).a == DType::fp8_e4m3);
  CHECK(shared_up.cost.bytes_read == 64.0 * 7168 + 7168.0 * 512);
  CHECK(op_named(rows64, "shared_act").cost.bytes_written == 64.0 * 256);
  CHECK(std::get<GemmShape>(op_named(rows64, "shared_down").shape).a == DType::fp8_e4m3);
  // The routed experts' SwiGLU also writes e4m3 for experts_down.
  CHECK(op_named(rows64, "experts_act").writes == DType::fp8_e4m3);

  // At 8 rows every dense projection is a W8A16 GEMV, and only the routed experts quantise: they
  // run W8A8 at every batch (the engines' FP8 MoE kernels), on ffn_norm's 8 x 7168 rows quantised
  // once (114,688 B read, 57,344 written), their SwiGLU writing e4m3 for experts_down.
  const std::vector<DecoderOp> rows8 = describe_layer(model, tp8, h200, {StepPhase::decode, 8, 1024}, true);
  for (const DecoderOp& op : rows8) {
    INFO(op.name);
    const bool routed = op.name == "experts_quant" || op.name == "experts_act";
    CHECK((op.kind == OpKind::quantize) == (op.name == "experts_quant"));
    CHECK(op.writes == (routed ? DType::fp8_e4m3 : DType::bf16));
  }
  CHECK(op_named(rows8, "experts_quant").cost.bytes_read == 8.0 * 7168 * 2);
  CHECK(op_named(rows8, "experts_quant").cost.bytes_written == 8.0 * 7168);
  CHECK(op_named(rows8, "experts_gate_up").activations == DType::fp8_e4m3);
  CHECK(std::get<GemvShape>(op_named(rows8, "q_down").shape).activation == DType::bf16);
  CHECK(std::get<GemvShape>(op_named(rows8, "shared_gate_up").shape).activation == DType::bf16);

  // Prefill: kv_up reads the latent in e4m3, quantised by its own kernel (kv_quant: 512 x 512).
  const std::vector<DecoderOp> prompt = describe_layer(model, tp8, h200, {StepPhase::prefill, 512, 512}, true);
  const DecoderOp& kv_quant = op_named(prompt, "kv_quant");
  CHECK(kv_quant.cost.bytes_read == 512.0 * 512 * 2);
  CHECK(kv_quant.cost.bytes_written == 512.0 * 512);
  CHECK(std::get<GemmShape>(op_named(prompt, "kv_up").shape).a == DType::fp8_e4m3);

  // Latent attention at decode is what the memory suite's latent-attention benchmark measures: its
  // table, at 16 query rows per cached row (TP 8's heads); the expanded prefill form is flash attention
  // with 192-wide Q and K and 128-wide V, the compute suite's attn.*.d192v128 cases.
  const Basis decode_attention = std::get<Basis>(basis_of(op_named(rows8, "attention")));
  CHECK(decode_attention.best_table == "attention.latent_decode.bf16.d576");
  CHECK(decode_attention.series == 16.0);
  CHECK(decode_attention.cost.bytes() == op_named(rows8, "attention").cost.bytes());
  const Basis prefill_attention = std::get<Basis>(basis_of(op_named(prompt, "attention")));
  CHECK(prefill_attention.best_table == "attention.flash.bf16.d192v128.causal");
  CHECK(prefill_attention.cost.bytes() == op_named(prompt, "attention").cost.bytes());
  CHECK(prefill_attention.cost.flops == op_named(prompt, "attention").cost.flops);
}
