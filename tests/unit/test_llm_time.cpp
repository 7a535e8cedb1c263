// Decode step, prefill, latent attention, experts and the planner, against values derived by
// hand in each test (H100: 3.35 TB/s, 989.4 TFLOP/s bf16, 1978.9 fp8; NVLink 450 GB/s per way).
#include <algorithm>
#include <cmath>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/plan.hpp"

using namespace roofline;
using namespace roofline::llm_fixture;
using Catch::Matchers::Contains;

namespace {

DeploymentConfig fp8_tp8() {
  DeploymentConfig c;
  c.tp = 8;
  c.weights = DType::fp8_e4m3;
  c.kv = DType::fp8_e4m3;
  return c;
}

}  // namespace

TEST_CASE("decode of Llama 3 70B, fp8, TP 8, batch 1, 4096 tokens: op by op") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  const DeploymentConfig c = fp8_tp8();
  const StepTime step = decode_step(m, h100, shard(m, 8, 1), c, 1, 4096);

  // QKV: a GEMV with 8 query + 2 x 1 KV heads of 128 = 1280 rows of 8192. FLOPs 2 x 1280 x 8192
  // = 20,971,520; bytes: weights 10,485,760 (fp8) + x 16,384 + y 2,560 (bf16) = 10,504,704.
  // Memory-bound: 10,504,704 / 3.35e12 = 3.136 us.
  const StepOp& qkv = find_op(step, "layer", "qkv_proj");
  CHECK(qkv.cost.flops == 20971520.0);
  CHECK(qkv.cost.bytes() == 10504704.0);
  CHECK(qkv.bound == "memory");
  CHECK(qkv.time_s == Approx(10504704.0 / 3.35e12));

  // Attention reads the whole cache: K and V of one KV head, 2 x 4096 x 128 x 1 B = 1,048,576,
  // plus Q read and O written, 8 heads x 128 x 2 B each: 1,052,672 B. FLOPs 4 x 128 x 4096 x 8.
  const StepOp& attention = find_op(step, "layer", "attention");
  CHECK(attention.cost.bytes() == 1052672.0);
  CHECK(attention.cost.flops == 4.0 * 128 * 4096 * 8);
  CHECK(attention.role == OpRole::kv_cache);

  // The all-reduce of 8192 x 2 B over 8 GPUs: 14 steps x 1 us + 2 x 7/8 x 16,384 B / 450e9 B/s.
  const StepOp& allreduce = find_op(step, "layer", "attn_allreduce");
  CHECK(allreduce.time_s == Approx(14e-6 + 28672.0 / 450e9));
  CHECK(allreduce.bound == "link");

  // The step is the sum over 80 layers and the head; at batch 1 the weights dominate.
  double sum = 0;
  for (const LayerGroup& g : step.groups) sum += static_cast<double>(g.count) * g.time_s();
  CHECK(step.time_s == Approx(sum));
  CHECK(step.time_s == Approx(step.weights_s + step.kv_cache_s + step.activations_s + step.compute_s + step.tp_comm_s +
                              step.pp_comm_s));
  CHECK(step.bottleneck() == "weight reads");
  // Weights streamed per step: 8.556e9 B of matrices + 0.263e9 B of head (bf16) in ~2.63 ms; the
  // 160 all-reduces add 2.25 ms.
  CHECK(step.weights_s == Approx((8556380160.0 + 262668288.0) / 3.35e12).epsilon(0.01));
  CHECK(step.tp_comm_s == Approx(160 * (14e-6 + 28672.0 / 450e9) + (7e-6 + 7.0 / 8 * 128256 * 2 / 450e9)));
}

TEST_CASE("decode at a large batch is bound by the KV cache, prefill by compute and the all-reduces") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  const DeploymentConfig c = fp8_tp8();
  const StepTime big = decode_step(m, h100, shard(m, 8, 1), c, 785, 4096);
  CHECK(big.bottleneck() == "KV-cache reads");
  // 785 requests x 1,048,576 B of cache per layer = 823 MB per layer and GPU.
  CHECK(find_op(big, "layer", "attention").cost.bytes_read > 785 * 1048576.0);

  const StepTime first = prefill(m, h100, shard(m, 8, 1), c, 4096);
  // The QKV GEMM of 4096 tokens: 2 x 4096 x 1280 x 8192 = 85.9 GFLOP, compute-bound at the fp8 rate:
  // 85,899,345,920 / 1978.9e12 = 43.41 us.
  const StepOp& qkv = find_op(first, "layer", "qkv_proj");
  CHECK(qkv.cost.flops == 85899345920.0);
  CHECK(qkv.bound == "compute");
  CHECK(qkv.time_s == Approx(85899345920.0 / 1978.9e12));
  // Causal attention: 4096 x 4097 / 2 pairs x 8 heads x 4 x 128 FLOPs, on the bf16 rate.
  const StepOp& attention = find_op(first, "layer", "attention");
  CHECK(attention.cost.flops == Approx(4096.0 * 4097 / 2 * 8 * 4 * 128));
  // Only the last position reaches the head: a GEMV of 1 x 8192 x 16032.
  CHECK(find_op(first, "embedding + head", "lm_head").cost.flops == 2.0 * 8192 * 16032);
}

TEST_CASE("the scale-out network instead of NVLink, and PP transfers") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  DeploymentConfig c = fp8_tp8();
  const AllReduceCompare a = tp_allreduce(m, h100, shard(m, 8, 1), c, 1);
  CHECK(a.message_bytes == 16384.0);
  CHECK(a.scale_up_s == Approx(14e-6 + 28672.0 / 450e9));
  // 50 GB/s per direction and 5 us per step: 14 x 5 us + 28,672 / 50e9 = 70.57 us.
  CHECK(a.scale_out_s == Approx(70e-6 + 28672.0 / 50e9));
  // TP 16 spans two 8-GPU boxes: its all-reduces go over the scale-out network.
  c.tp = 16;
  CHECK(group_link(h100, c, 16).bandwidth_bytes_per_s == 50e9);
  // PP 2: one transfer of 8192 x 2 B per token between the stages.
  c.tp = 4;
  c.pp = 2;
  const StepTime step = decode_step(m, h100, shard(m, 4, 2), c, 1, 4096);
  const StepOp& send = find_op(step, "pipeline", "pp_send");
  CHECK(send.time_s == Approx(1e-6 + 16384.0 / 450e9));
}

TEST_CASE("Mixtral reads only the experts its tokens reach") {
  const ModelSpec& m = models().find("mixtral");
  const GpuSpec& h100 = gpus().find("h100");
  DeploymentConfig c;  // bf16, TP 1
  // Batch 1: 2 token-expert pairs on 2 experts. Each expert's gate/up: 2 x 14336 x 4096 x 2 B =
  // 234,881,024 B of weights + x 8,192 B + y 57,344 B: 2 x 234,946,560 = 469,893,120 B.
  const StepTime one = decode_step(m, h100, shard(m, 1, 1), c, 1, 1024);
  CHECK(find_op(one, "moe layer", "experts_gate_up").cost.bytes() == 469893120.0);
  // Batch 4: 8 pairs reach 8 (1 - (3/4)^4) = 5.46875 experts on average: 5.46875 experts' weights,
  // 8 pairs' activations and FLOPs (2 x 4096 x 28672 each).
  const StepTime four = decode_step(m, h100, shard(m, 1, 1), c, 4, 1024);
  const StepOp& up = find_op(four, "moe layer", "experts_gate_up");
  CHECK(up.cost.bytes() == Approx(5.46875 * 234881024.0 + 8 * 65536.0));
  CHECK(up.cost.flops == Approx(8 * 2.0 * 4096 * 28672));
}

TEST_CASE("latent attention reads the 576-wide cache once for all heads") {
  LatentAttentionShape s;
  s.heads = 16;
  s.kv_seq = 4096;
  s.kv = DType::fp8_e4m3;
  // Absorbed decode, one request: 4096 pairs x 16 heads x 2 x (576 + 512) = 142,606,336 FLOPs.
  // Bytes: Q 16 x 576 x 2 = 18,432; latent 4096 x 576 x 1 = 2,359,296; O 16 x 512 x 2 = 16,384.
  const OpCost decode = latent_attention_cost(s);
  CHECK(decode.flops == 142606336.0);
  CHECK(decode.bytes() == 18432.0 + 2359296.0 + 16384.0);
  // Expanded prefill of 1024 tokens: 1024 x 1025 / 2 causal pairs x 16 heads x 2 x (192 + 128);
  // Q, K (192 wide) and V, O (128 wide) per head in bf16.
  s.seq = 1024;
  s.kv_seq = 1024;
  s.causal = true;
  s.absorbed = false;
  const OpCost pre = latent_attention_cost(s);
  CHECK(pre.flops == Approx(1024.0 * 1025 / 2 * 16 * 2 * 320));
  CHECK(pre.bytes() == Approx(1024.0 * 16 * (192 + 192 + 128 + 128) * 2));
  s.kv_seq = 0;
  CHECK_THROWS_AS(latent_attention_cost(s), InputError);
}

TEST_CASE("the planner: rejections with reasons, the cheapest feasible first, and the throughput model") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  PlanSpace space;
  space.gpus = {gpus().find("h100"), gpus().find("a100-sxm4-80gb")};
  space.usd_per_gpu_hour = {{"h100-sxm", 2.5}, {"a100-sxm4-80gb", 1.5}};
  const Workload w{5.0, 2048, 256, 0.05, 2.0};
  const PlanResult r = plan_deployment(m, w, space);
  CHECK(r.configurations == 2 * 4 * 3 * 4 * 2);
  CHECK(r.ranked.size() + r.rejected.size() == static_cast<std::size_t>(r.configurations));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK(std::is_sorted(r.ranked.begin(), r.ranked.end(), [](const PlanCandidate& a, const PlanCandidate& b) {
    return a.usd_per_million_output_tokens < b.usd_per_million_output_tokens;
  }));
  for (const PlanCandidate& c : r.ranked) {
    INFO(c.gpu << " TP " << c.tp << " PP " << c.pp << " " << name_of(c.weights));
    // B / (O x step + B x TTFT) requests/s per replica; TPOT = step + B x TTFT / O.
    const auto b = static_cast<double>(c.batch);
    CHECK(c.requests_per_s_per_replica == Approx(b / (256 * c.step_s + b * c.ttft_s)));
    CHECK(c.tpot_s == Approx(c.step_s + b * c.ttft_s / 256));
    CHECK(c.tpot_s <= 0.05);
    CHECK(c.replicas == static_cast<std::int64_t>(std::ceil(5.0 / c.requests_per_s_per_replica - 1e-9)));
    // $/hour / (5 req/s x 256 tokens x 3600 s) x 1e6.
    CHECK(c.usd_per_million_output_tokens == Approx(c.usd_per_hour / (5.0 * 256 * 3600) * 1e6));
    CHECK(c.batch <= c.max_batch);
  }
  const auto rejected = [&](std::string_view gpu, int tp, int pp, DType weights) {
    for (const PlanCandidate& c : r.rejected) {
      if (c.gpu == gpu && c.tp == tp && c.pp == pp && c.weights == weights) return c;
    }
    FAIL("not rejected: " << gpu << " TP " << tp << " PP " << pp);
    return PlanCandidate{};
  };
  // 141 GB of bf16 weights on one 80 GB GPU.
  CHECK(rejected("h100-sxm", 1, 1, DType::bf16).rejection == Rejection::memory);
  // No fp8 tensor rate on A100, no fp4 on H100.
  CHECK(rejected("a100-sxm4-80gb", 8, 1, DType::fp8_e4m3).rejection == Rejection::format);
  CHECK_THAT(rejected("h100-sxm", 8, 1, DType::nvfp4).reason, Contains("no nvfp4 tensor rate"));

  space.usd_per_gpu_hour.erase("a100-sxm4-80gb");
  CHECK_THROWS_WITH(plan_deployment(m, w, space), Contains("no price for a100-sxm4-80gb"));
}
