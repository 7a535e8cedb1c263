// The layer suite's FP8 cases: their ids, formats and the stage tables validate predicts them from.
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "roofline/bench/layer_suite.hpp"

using namespace roofline;
namespace layer = bench::layer;

namespace {

const layer::Case& case_named(std::string_view id) {
  const layer::Case* c = layer::find_case(id);
  REQUIRE(c != nullptr);
  return *c;
}

std::vector<std::string> names_of(const std::vector<layer::StagePlan>& stages) {
  std::vector<std::string> names;
  for (const layer::StagePlan& s : stages) names.emplace_back(s.name);
  return names;
}

const layer::StagePlan& stage_named(const std::vector<layer::StagePlan>& stages, std::string_view name) {
  for (const layer::StagePlan& s : stages) {
    if (s.name == name) return s;
  }
  FAIL("no stage " << name);
  return stages.front();
}

}  // namespace

TEST_CASE("FP8 layer cases: decode batches 1-64 at 1k and 4k, prefill 512-8192, both linear implementations") {
  std::set<std::string> fp8;
  std::set<std::string> all;
  for (const layer::Case& c : layer::cases) {
    CHECK(all.insert(layer::case_id(c)).second);
    if (c.formats.fp8()) fp8.insert(layer::case_id(c));
  }
  // 2 implementations x (4 batches x 2 contexts + 5 prompt lengths).
  CHECK(fp8.size() == 2 * (4 * 2 + 5));
  CHECK(fp8.contains("layer.decode.fp8.b1.ctx4096.roofline"));
  CHECK(fp8.contains("layer.decode.fp8.b64.ctx1024.cublas"));
  CHECK(fp8.contains("layer.prefill.fp8.n8192.roofline"));
  // The bf16 ids are the ones every committed run recorded.
  CHECK(all.contains("layer.decode.b1.ctx4096.roofline"));
  CHECK(all.size() == 26 + fp8.size());
  // The formats are data of the case: e4m3 weights and cache, bf16 activations; prefill keeps the
  // prompt's K and V in bf16 (the project's prefill attention reads 16-bit K/V).
  const layer::Case& decode = case_named("layer.decode.fp8.b4.ctx1024.roofline");
  CHECK(decode.formats.weights == DType::fp8_e4m3);
  CHECK(decode.formats.kv == DType::fp8_e4m3);
  CHECK(decode.formats.activations == DType::bf16);
  CHECK(case_named("layer.prefill.fp8.n2048.cublas").formats.kv == DType::bf16);
  // A few run with --quick: the GEMV at batch 1, cuBLASLt at batch 16, both at 512 tokens.
  std::set<std::string> quick;
  for (const layer::Case& c : layer::cases) {
    if (c.quick && c.formats.fp8()) quick.insert(layer::case_id(c));
  }
  CHECK(quick == std::set<std::string>{"layer.decode.fp8.b1.ctx1024.roofline", "layer.decode.fp8.b16.ctx1024.cublas",
                                       "layer.prefill.fp8.n512.roofline", "layer.prefill.fp8.n512.cublas"});
}

TEST_CASE("an FP8 decode case on the GEMV: W8A16 projections, the e4m3 cache, each stage's table") {
  const layer::Case& c = case_named("layer.decode.fp8.b1.ctx4096.roofline");
  CHECK_FALSE(layer::quantized_linears(c));
  const std::vector<layer::StagePlan> s = layer::stages(c);
  CHECK(names_of(s) == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "o_proj",
                                                "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down"});
  // qkv_proj: [10240 x 8192] e4m3 weights (10240 = (64 + 2 x 8) x 128), one bf16 row in and out:
  // 10240 x 8192 + 8192 x 2 bytes read, 10240 x 2 written.
  const layer::StagePlan& qkv = stage_named(s, "qkv_proj");
  CHECK(qkv.cost.bytes_read == 10240.0 * 8192 + 8192 * 2);
  CHECK(qkv.cost.bytes_written == 10240.0 * 2);
  CHECK(qkv.basis.best_table == "gemv.bf16.wfp8_e4m3");
  CHECK(layer::implementation_table(c, qkv, "stag") == "gemv.bf16.wfp8_e4m3.stag");
  // kv_append: the new key and value, 2 x 8 x 128 = 2048 elements, read in bf16, written in e4m3.
  const layer::StagePlan& append = stage_named(s, "kv_append");
  CHECK(append.cost.bytes_read == 2048.0 * 2);
  CHECK(append.cost.bytes_written == 2048.0);
  // Decode attention over the e4m3 cache: K and V of 4096 positions x 8 KV heads x 128, 1 byte
  // each (8388608 B, half the bf16 cache's), the 64 query heads' q read and o written in bf16
  // (16384 B each); the memory suite's table of that cache format.
  const layer::StagePlan& attention = stage_named(s, "attention");
  CHECK(attention.cost.bytes_read == 2.0 * 4096 * 8 * 128 + 64 * 128 * 2);
  CHECK(attention.cost.bytes_written == 64.0 * 128 * 2);
  CHECK(attention.basis.best_table == "attention.decode.bf16.kvfp8_e4m3.d128");
  // The norms write bf16 for the GEMVs.
  CHECK(stage_named(s, "attn_norm").op.writes == DType::bf16);
}

TEST_CASE("an FP8 decode case on cuBLASLt: W8A8 GEMMs, quantising norms and SwiGLU, attn_quant") {
  const layer::Case& c = case_named("layer.decode.fp8.b16.ctx1024.cublas");
  CHECK(layer::quantized_linears(c));
  const std::vector<layer::StagePlan> s = layer::stages(c);
  CHECK(names_of(s) == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "attn_quant",
                                                "o_proj", "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down"});
  // ffn_gate_up: [16 x 8192] e4m3 . [8192 x 57344] e4m3, bf16 out: 16 x 8192 + 8192 x 57344 bytes
  // read, 16 x 57344 x 2 written.
  const layer::StagePlan& gate_up = stage_named(s, "ffn_gate_up");
  CHECK(gate_up.model == "gemm_cost");
  CHECK(gate_up.cost.bytes_read == 16.0 * 8192 + 8192.0 * 57344);
  CHECK(gate_up.cost.bytes_written == 16.0 * 57344 * 2);
  CHECK(gate_up.basis.best_table == "gemm.fp8_e4m3");
  CHECK(layer::implementation_table(c, gate_up, "cublaslt") == "gemm.fp8_e4m3.cublaslt");
  // attn_quant: 16 x 64 x 128 attention outputs, bf16 in, e4m3 out; calibrated as a 1:1 stream.
  const layer::StagePlan& quant = stage_named(s, "attn_quant");
  CHECK(quant.cost.bytes_read == 16.0 * 8192 * 2);
  CHECK(quant.cost.bytes_written == 16.0 * 8192);
  CHECK(quant.basis.best_table == "stream.r1w1");
  CHECK(layer::stage_id(c, "attn_quant") == "layer.decode.fp8.b16.ctx1024.cublas.attnquant");
  // ffn_norm: 16 rows of 8192, x and the residual read, gamma read; the stream in bf16, the
  // normalised rows in e4m3.
  const layer::StagePlan& norm = stage_named(s, "ffn_norm");
  CHECK(norm.cost.bytes_read == 2.0 * 16 * 8192 * 2 + 8192 * 2);
  CHECK(norm.cost.bytes_written == 16.0 * 8192 * 2 + 16.0 * 8192);
  CHECK(norm.basis.cost.bytes() == norm.cost.bytes());
  // The batch above the GEMV's runs the FP8 GEMM on the roofline side too.
  CHECK(layer::quantized_linears(case_named("layer.decode.fp8.b64.ctx4096.roofline")));
  CHECK_FALSE(layer::quantized_linears(case_named("layer.decode.fp8.b16.ctx4096.roofline")));
}

TEST_CASE("an FP8 prefill case: attn_merge quantises for o_proj, the flash kernel reads bf16 K/V") {
  const layer::Case& c = case_named("layer.prefill.fp8.n1024.roofline");
  const std::vector<layer::StagePlan> s = layer::stages(c);
  CHECK(names_of(s) == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "attn_merge",
                                                "o_proj", "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down"});
  // attn_merge: 1024 x 64 x 128 outputs read head-major in bf16, written token-major in e4m3.
  const layer::StagePlan& merge = stage_named(s, "attn_merge");
  CHECK(merge.op.writes == DType::fp8_e4m3);
  CHECK(merge.cost.bytes_read == 1024.0 * 8192 * 2);
  CHECK(merge.cost.bytes_written == 1024.0 * 8192);
  // o_proj: [1024 x 8192] e4m3 . [8192 x 8192] e4m3, bf16 out.
  const layer::StagePlan& o = stage_named(s, "o_proj");
  CHECK(o.cost.bytes_read == 1024.0 * 8192 + 8192.0 * 8192);
  CHECK(o.cost.bytes_written == 1024.0 * 8192 * 2);
  CHECK(layer::implementation_table(c, o, "wgmma") == "gemm.fp8_e4m3.wgmma");
  CHECK(layer::implementation_table(c, stage_named(s, "attention"), "flashwgmma") ==
        "attention.flashwgmma.bf16.d128.causal");
  // ffn_act: SwiGLU of 1024 x 28672, gate and up read in bf16, the product written in e4m3.
  const layer::StagePlan& act = stage_named(s, "ffn_act");
  CHECK(act.cost.bytes_read == 2.0 * 1024 * 28672 * 2);
  CHECK(act.cost.bytes_written == 1024.0 * 28672);
}

TEST_CASE("FP8 layer ids name their cases, and a recorded stage finds its operation") {
  for (const layer::Case& c : layer::cases) {
    INFO(layer::case_id(c));
    CHECK(layer::find_case(layer::case_id(c)) == &c);
  }
  // What validate predicts a recorded FP8 stage from: the description's op under its word.
  const layer::Case& c = case_named("layer.prefill.fp8.n4096.cublas");
  const std::optional<layer::StageOperation> down = layer::stage_operation(c, "down");
  REQUIRE(down.has_value());
  CHECK(down->name == "ffn_down");
  CHECK(down->basis.best_table == "gemm.fp8_e4m3");
  // [4096 x 28672] e4m3 . [28672 x 8192] e4m3, bf16 out.
  CHECK(down->basis.cost.bytes() == 4096.0 * 28672 + 28672.0 * 8192 + 4096.0 * 8192 * 2);
  const std::optional<layer::StageOperation> quant =
      layer::stage_operation(case_named("layer.decode.fp8.b64.ctx4096.roofline"), "attnquant");
  REQUIRE(quant.has_value());
  CHECK(quant->basis.cost.bytes() == 64.0 * 8192 * (2 + 1));
}
