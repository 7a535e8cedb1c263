// Sharding, weight and KV-cache bytes, capacity, collectives and training memory, against
// values derived by hand in each test.
#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/train.hpp"
#include "roofline/model/comm.hpp"

using namespace roofline;
using Catch::Matchers::Contains;
using fixture::gpus;
using fixture::models;

namespace {

std::string shard_error(const ModelSpec& m, int tp, int pp = 1) {
  try {
    (void)shard(m, tp, pp);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for tp " << tp);
  return {};
}

}  // namespace

TEST_CASE("TP splits query heads, and KV heads until there are fewer than ranks") {
  const ModelSpec& m = models().find("llama-3.1-70b");  // 64 heads, 8 KV heads
  const Sharding tp8 = shard(m, 8, 1);
  CHECK(tp8.q_heads == 8);
  CHECK(tp8.kv_heads == 1);
  CHECK(tp8.kv_replication == 1.0);
  CHECK(tp8.ffn == 3584);     // 28672 / 8
  CHECK(tp8.vocab == 16032);  // 128256 / 8
  const Sharding tp16 = shard(m, 16, 1);
  CHECK(tp16.kv_heads == 1);  // 8 KV heads over 16 ranks: each kept twice
  CHECK(tp16.kv_replication == 2.0);
  CHECK_THAT(shard_error(m, 3), Contains("--tp 3 does not divide the 64 attention heads"));
  CHECK_THAT(shard_error(m, 1, 81), Contains("--pp 81 is more than the 80 layers"));
  CHECK_THAT(shard_error(models().find("mistral-7b"), 32 * 3), Contains("does not divide the 32 attention heads"));
  // MLA: all 128 heads share one latent, which every rank keeps.
  const Sharding mla = shard(models().find("deepseek-v3"), 8, 1);
  CHECK(mla.q_heads == 16);
  CHECK(mla.kv_replication == 8.0);
}

TEST_CASE("pipeline stages split layers evenly, the first ones taking the remainder") {
  const auto stages = stage_layers(models().find("llama-3.1-70b"), 3);  // 80 = 27 + 27 + 26
  REQUIRE(stages.size() == 3);
  CHECK(stages[0].layers() == 27);
  CHECK(stages[1].first_layer == 27);
  CHECK(stages[2].layers() == 26);
  CHECK(stages[0].holds_embedding);
  CHECK(stages[2].holds_head);
  // DeepSeek-V3: 61 layers over 2 stages = 31 + 30; the 3 dense layers are the first ones.
  const auto ds = stage_layers(models().find("deepseek-v3"), 2);
  CHECK(ds[0].dense == 3);
  CHECK(ds[0].moe == 28);
  CHECK(ds[1].dense == 0);
  CHECK(ds[1].moe == 30);
}

TEST_CASE("KV cache of Llama 3 70B: the book's 1.34 GB per 4096-token request is the whole model in bf16") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  // 2 (K, V) x 8 KV heads x 128 x 2 B = 4,096 B per token and layer; x 80 layers = 327,680 B.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 4096.0);
  // x 4096 tokens = 1,342,177,280 B: the book's "2x80x8x128x4096x2 = 1.3 GB" (bf16, all 8 GPUs).
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) * 80 * 4096 == 1342177280.0);
  // One GPU of TP 8 holds 1 of the 8 KV heads; in fp8: 2 x 1 x 128 x 1 B = 256 B per token and layer.
  CHECK(kv_bytes_per_token_layer_gpu(m, shard(m, 8, 1), DType::fp8_e4m3) == 256.0);
  // TP 16: still one whole KV head per GPU, so no further saving.
  CHECK(kv_bytes_per_token_layer_gpu(m, shard(m, 16, 1), DType::fp8_e4m3) == 256.0);
}

TEST_CASE("KV cache of DeepSeek-V3's latent attention: 576 values per token and layer, on every TP rank") {
  const ModelSpec& m = models().find("deepseek-v3");
  // (512 latent + 64 rotary key) x 2 B = 1,152 B; a GQA layout of 128 heads x (192 + 128) would be
  // 81,920 B, 71x more.
  CHECK(kv_bytes_per_token_layer(m, DType::bf16) == 1152.0);
  CHECK(kv_bytes_per_token_layer_gpu(m, shard(m, 8, 1), DType::bf16) == 1152.0);
}

TEST_CASE("Mistral 7B's sliding window caps the cache at 4096 tokens") {
  const ModelSpec& m = models().find("mistral-7b");
  const GpuSpec& h100 = gpus().find("h100");
  DeploymentConfig c;
  const MemoryPlan plan = plan_memory(m, h100, shard(m, 1, 1), c, 32768);
  CHECK(plan.cached_tokens == 4096);
  // 2 x 8 x 128 x 2 B x 32 layers = 131,072 B per token; x 4096 = 536,870,912 B.
  CHECK(plan.kv_bytes_per_request_model == 536870912.0);
}

TEST_CASE("Llama 3 70B, FP8 weights and KV, TP 8 on H100: weights, memory left and max batch") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  DeploymentConfig c;
  c.tp = 8;
  c.weights = DType::fp8_e4m3;
  c.kv = DType::fp8_e4m3;
  const Sharding s = shard(m, 8, 1);
  const MemoryPlan plan = plan_memory(m, h100, s, c, 4096);
  REQUIRE(plan.stages.size() == 1);
  const StageMemory& g = plan.stages.front();
  // Per layer and GPU: q 8192 x 1024 + k, v 2 x 8192 x 128 + o 1024 x 8192 = 18,874,368 and
  // gate/up/down 3 x 8192 x 3584 = 88,080,384: 106,954,752 x 80 layers x 1 B = 8,556,380,160 B.
  CHECK(g.weights.linear == 8556380160.0);
  // Norms (2 x 8192 x 80 + 8192 final) x 2 B = 2,637,824 B.
  CHECK(g.weights.small == 2637824.0);
  // Embedding and head in bf16: 2 x 16032 x 8192 x 2 B = 525,336,576 B.
  CHECK(g.weights.embedding + g.weights.head == 525336576.0);
  CHECK(g.weights.total() == 9084354560.0);  // 9.08 GB; the book's 8.75 GB is 70e9 / 8 x 1 B
  // Free: 80e9 - 9,084,354,560 - 3e9 reserve - 2e9 workspace = 65,915,645,440 B.
  CHECK(g.free_bytes == Approx(65915645440.0));
  // KV per request per GPU: 256 B x 80 layers x 4096 tokens = 83,886,080 B; 65.9e9 / 83.9e6 = 785.8.
  CHECK(g.kv_bytes_per_request == 83886080.0);
  CHECK(plan.max_requests() == 785);
  // With a bf16 KV cache each request takes twice as much: 392.9 -> 392.
  c.kv = DType::bf16;
  CHECK(plan_memory(m, h100, s, c, 4096).max_requests() == 392);
  // Embeddings in fp8 too: 8,556,380,160 + 2,637,824 + 262,668,288 = 8,821,686,272 B.
  c.embeddings = DType::fp8_e4m3;
  CHECK(plan_memory(m, h100, s, c, 4096).stages.front().weights.total() == 8821686272.0);
}

TEST_CASE("Llama 3.1 405B in bf16 does not fit one 8 x H100 node") {
  const ModelSpec& m = models().find("llama-3.1-405b");
  DeploymentConfig c;
  c.tp = 8;
  // 405.85e9 x 2 B / 8 = 101.5 GB > 80 GB.
  const MemoryPlan plan = plan_memory(m, gpus().find("h100"), shard(m, 8, 1), c, 4096);
  CHECK_FALSE(plan.weights_fit());
  CHECK(plan.stages.front().weights.total() == Approx(101.46e9).epsilon(1e-3));
  CHECK(plan.max_requests() == 0);
}

TEST_CASE("projections multiply in the weight format only where the GPU has its tensor rate") {
  const GpuSpec& h100 = gpus().find("h100");
  const GpuSpec& a100 = gpus().find("a100-sxm4-80gb");
  const GpuSpec& b200 = gpus().find("b200");
  CHECK(matmul_dtype(h100, DType::fp8_e4m3, DType::bf16) == DType::fp8_e4m3);
  CHECK(matmul_dtype(a100, DType::fp8_e4m3, DType::bf16) == DType::bf16);   // no fp8 on Ampere
  CHECK(matmul_dtype(h100, DType::int4_g128, DType::bf16) == DType::bf16);  // W4A16
  CHECK(matmul_dtype(b200, DType::nvfp4, DType::bf16) == DType::nvfp4);
  CHECK(matmul_dtype(h100, DType::nvfp4, DType::bf16) == DType::bf16);
  CHECK(default_activation_dtype(gpus().find("v100")) == DType::fp16);
}

TEST_CASE("ring all-reduce: 2 (n - 1) latency steps and 2 (n - 1) / n of the message per rank") {
  const LinkSpec nvlink = scale_up_link(gpus().find("h100"), 2e-6);
  CHECK(nvlink.bandwidth_bytes_per_s == 450e9);  // 900 GB/s both directions
  // Decode, batch 1, Llama 3 70B: 8192 x 2 B = 16,384 B over 8 GPUs: 14 x 2 us = 28 us of latency
  // + 2 x 7/8 x 16,384 B / 450e9 B/s = 63.7 ns.
  CHECK(ring_allreduce_bytes_per_rank(16384, 8) == 28672.0);
  CHECK(ring_allreduce_time(16384, 8, nvlink) == Approx(28e-6 + 28672.0 / 450e9));
  CHECK(ring_allreduce_time(16384, 1, nvlink) == 0.0);
  // Prefill of 4096 tokens: 64 MiB message; the bandwidth term dominates: 2 x 7/8 x 67,108,864 / 450e9
  // = 261 us (+ 28 us).
  CHECK(ring_allreduce_time(4096.0 * 8192 * 2, 8, nvlink) == Approx(28e-6 + 117440512.0 / 450e9));
  // A GPU without a scale-up link talks over PCIe: L40S, PCIe 4.0 x16, 64 GB/s both directions.
  CHECK(scale_up_link(gpus().find("l40s"), 0).bandwidth_bytes_per_s == 32e9);
  CHECK(ring_allgather_time(8000, 4, {"x", 1e9, 1e-6}) == Approx(3e-6 + 6000.0 / 1e9));
}

TEST_CASE("training Llama 3 70B, TP 8: 16 bytes per parameter, ZeRO divides them over data parallelism") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  TrainConfig c;
  c.gpus = 8;
  c.tp = 8;
  // Parameters per GPU: 8,556,380,160 matrices + 1,318,912 norms + 2 x 131,334,144 embedding/head
  // = 8,820,367,360 (the book's 70e9 / 8 = 8.75e9).
  TrainMemory t = train_memory(m, h100, c);
  CHECK(t.parameters_per_gpu == 8820367360.0);
  CHECK(t.weights_bytes == 2.0 * 8820367360.0);     // 17.64 GB (book: 17.5)
  CHECK(t.optimizer_bytes == 12.0 * 8820367360.0);  // 105.8 GB
  // Activations: per token and layer 8h + 4 q + 4 kv + 6 f + 4 heads = 65,536 + 32,768 + 4,096 +
  // 172,032 + 256 = 274,688 B; x 80 layers x 4096 tokens / TP 8 = 11.25 GB.
  CHECK(activation_bytes_per_token_layer(m, false) == 274688.0);
  CHECK(t.activations_bytes == Approx(274688.0 * 80 * 4096 / 8));
  // fp32 logits for the loss: every token's slice of the vocabulary, 4096 x 16032 x 4 B.
  CHECK(t.logits_bytes == 262668288.0);
  CHECK_FALSE(t.fits());
  // 64 GPUs, ZeRO-3 over 8 data-parallel ranks: 16 B x 8,820,367,360 / 8 = 17.64 GB of states
  // (the book's 70e9 x 16 / 64 = 17.5 GB).
  c.gpus = 64;
  c.zero = 3;
  t = train_memory(m, h100, c);
  CHECK(t.data_parallel == 8);
  CHECK(t.weights_bytes + t.gradients_bytes + t.optimizer_bytes == Approx(16.0 * 8820367360.0 / 8));
  CHECK(t.fits());
  // Recomputation keeps 2h bytes per token and layer plus one layer: (2 x 8192 x 80 + 274,688) x 512.
  c.recompute = true;
  CHECK(train_memory(m, h100, c).activations_bytes == Approx((2.0 * 8192 * 80 + 274688.0) * 4096 / 8));
}

TEST_CASE("training that does not fit suggests what would") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  TrainConfig c;
  c.gpus = 8;
  c.tp = 8;
  // 8 GPUs have no data parallelism to shard over: more GPUs are the only way.
  const auto none = train_suggestions(m, gpus().find("h100"), c);
  REQUIRE(none.size() == 1);
  CHECK_THAT(none.front(), Contains("--zero 3 --recompute with --gpus 16"));
  c.gpus = 64;
  const auto some = train_suggestions(m, gpus().find("h100"), c);
  REQUIRE_FALSE(some.empty());
  CHECK_THAT(some.front(), Contains("--zero 1"));
  TrainConfig bad = c;
  bad.gpus = 12;
  CHECK_THROWS_WITH(train_memory(m, gpus().find("h100"), bad), Contains("--gpus 12 is not a multiple"));
  bad = c;
  bad.zero = 4;
  CHECK_THROWS_WITH(train_memory(m, gpus().find("h100"), bad), Contains("--zero 4"));
}
