// serve's paged KV cache per attention group (roofline/serve/kv_blocks.hpp): vLLM's grouping of
// the layers, the blocks a request holds as its windows move, the cache's capacity, and the
// engine's schedule on it, each against numbers derived by hand.
#include <cmath>
#include <filesystem>

#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/hf_config.hpp"
#include "roofline/serve/engine.hpp"
#include "roofline/serve/kv_blocks.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

ModelSpec family(const std::string& name) {
  return read_hf_config(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "tests" / "data" / "hf" / name / "config.json");
}

}  // namespace

TEST_CASE("serve KV blocks: a model whose layers all attend alike is one group of every layer") {
  const ModelSpec& m = fixture::models().find("llama-3.1-8b");
  const KvBlockLayout kv(m, 16);
  CHECK(kv.groups() == 1);
  CHECK(kv.layers_per_group() == 32);
  CHECK(kv.layers_per_block(0, 32) == 32);
  CHECK(kv.layers_per_block(16, 16) == 16);  // a stage of PP 2
  // ceil((computed + new) / 16) blocks, nothing freed: 1000 cached + 1 = 63 blocks.
  CHECK(kv.held(1000, 1) == 63);
  CHECK(kv.peak(1001, 8192) == 63);
}

TEST_CASE("serve KV blocks: gpt-oss-120b, two groups of 18 layers, the sliding one holding its window") {
  const ModelSpec m = family("gpt-oss-120b");
  const KvBlockLayout kv(m, 16);
  // 18 sliding-128 and 18 full layers: vLLM's group size is 18, one group of each kind.
  REQUIRE(kv.kinds().size() == 2);
  CHECK(kv.kinds()[0].attention == LayerAttention{AttentionScope::sliding, 128});
  CHECK(kv.kinds()[0].groups == 1);
  CHECK(kv.layers_per_group() == 18);
  CHECK(kv.groups() == 2);
  // Decoding at 32,768 tokens (32,767 cached + 1): slots for ceil(32,768 / 16) = 2,048 blocks in
  // each group; the sliding group frees the tokens before 32,767 - 128 + 1 = 32,640, i.e. 2,040
  // blocks, and keeps 8. 2,056 blocks of 18 layers, where sizing every layer as full held 2,048
  // blocks of 36 layers (4,096 of 18): 1.99x the requests at that context.
  CHECK(kv.held(32767, 1) == 2048 + 8);
  // The most a 131,072-token request holds with steps of up to 8,192 tokens: 8,192 blocks in the
  // full group, and ceil((127 + 8,192) / 16) + 1 = 521 in the sliding one (vLLM's
  // SlidingWindowSpec.max_memory_usage_bytes).
  CHECK(kv.peak(131072, 8192) == 8192 + 521);
  // Below the window nothing is freed: 100 tokens, 7 blocks in each group.
  CHECK(kv.held(99, 1) == 14);

  // The cache on one H200 (bf16 KV, mxfp4 experts as the checkpoint): a block is 16 tokens x 18
  // layers x 2,048 B = 589,824 B, half the all-layers block; under PP 2 each stage holds 9 layers of
  // each group, 294,912 B a block.
  DeploymentConfig config;
  config.expert_weights = DType::mxfp4;
  const GpuSpec& h200 = fixture::gpus().find("h200");
  const KvCache one = kv_cache(m, h200, config, 16, 0.9);
  CHECK(one.bytes_per_block == 589824.0);
  CHECK(static_cast<double>(one.blocks) == std::floor(0.9 * one.free_bytes / 589824.0));
  config.pp = 2;
  CHECK(kv_cache(m, h200, config, 16, 0.9).bytes_per_block == 294912.0);
}

TEST_CASE("serve KV blocks: Gemma 3 27B, six padded sliding groups of 10 layers and one full") {
  const ModelSpec m = family("gemma-3-27b-it");
  const KvBlockLayout kv(m, 16);
  // 52 sliding-1,024 layers and 10 full: 52 is not within 1.5x of 10, so the group size is 10 and
  // the sliding layers fill ceil(52 / 10) = 6 groups, the last padded with 8 empty slots.
  CHECK(kv.layers_per_group() == 10);
  CHECK(kv.groups() == 7);
  // At 32,768 tokens: 2,048 blocks of the full group; each sliding group frees the 31,744 tokens
  // before 32,767 - 1,023 (1,984 blocks) and keeps 64. 2,048 + 6 x 64 = 2,432 blocks of 10 layers x
  // 16 tokens = 389,120 token-layers, 3,187,671,040 B at 8,192 B per token and layer: 2.2% above the
  // 380,928 token-layers (10 x 32,768 + 52 x 1,024) the layers themselves keep, the padding's 8 x
  // 1,024. Every layer sized as full: 62 x 32,768 = 2,031,616.
  CHECK(kv.held(32767, 1) == 2432);
  CHECK(m.cached_token_layers(32768) == 380928);
  const KvCache cache = kv_cache(m, fixture::gpus().find("h200"), DeploymentConfig{}, 16, 0.9);
  CHECK(cache.bytes_per_block == 16.0 * 10 * 8192);
}

TEST_CASE("serve KV blocks: Llama 4 Scout, three chunked groups and one full, split by PP") {
  const ModelSpec m = family("llama-4-scout-17b-16e-instruct");
  const KvBlockLayout kv(m, 16);
  // 36 chunked-8,192 layers and 12 full (NoPE, every fourth): group size 12, 3 + 1 groups. The
  // chunked layers 0, 1, 2, 4, 5, 6, ... go to groups 0, 1, 2, 0, 1, 2, ...: a stage of PP 2
  // (layers 0-23) holds 6 of each group.
  CHECK(kv.layers_per_group() == 12);
  CHECK(kv.groups() == 4);
  CHECK(kv.layers_per_block(0, 48) == 12);
  CHECK(kv.layers_per_block(0, 24) == 6);
  // Decoding at 32,768 tokens: a chunked group frees the 24,576 tokens before its chunk (1,536
  // blocks) and keeps 512; 2,048 + 3 x 512 = 3,584 blocks of 12 layers, against 8,192 for every
  // layer full. One token later the chunk restarts: slots for 2,049 blocks, 2,048 freed in each
  // chunked group, 2,049 + 3 = 2,052.
  CHECK(kv.held(32767, 1) == 3584);
  CHECK(kv.held(32768, 1) == 2052);
  // The most with steps of 8,192: ceil((8,191 + 8,192) / 16) = 1,024 per chunked group (16 divides
  // 8,192: the chunk starts on a block's edge).
  CHECK(kv.peak(1 << 20, 8192) == 65536 + 3 * 1024);
}

TEST_CASE("serve KV blocks: the engine frees what leaves a window, and admits by the most a request holds") {
  // Two layers of llama-3.1-8b's shapes, the first with a window of 8, the second full; blocks of
  // 4 tokens, a budget of 8 tokens. One request of 16 prompt and 5 output tokens:
  //   step 1: prefill 8 at 0:  2 + 2 blocks = 4
  //   step 2: prefill 8 at 8:  slots 4 blocks; the window starts at token 1, nothing freed: 8
  //   step 3: decode at 16: slots ceil(17 / 4) = 5; the window starts at 9: 2 blocks freed, 5 + 3 = 8
  //   steps 4, 5 (17, 18): 5 + 3 = 8; step 6 (19): the window starts at 12, 3 freed: 5 + 2 = 7.
  // Six steps, at most 8 blocks, 43 / 6 on average; both layers full would hold 2 x 5 = 10.
  ModelSpec m = fixture::models().find("llama-3.1-8b");
  m.layers = 2;
  m.layer_attention = {{AttentionScope::sliding, 8}, {}};
  EngineConfig e;
  e.block_size = 4;
  e.max_num_tokens = 8;
  e.kv_blocks = 10;
  const GpuSpec& h100 = fixture::gpus().find("h100");
  StepCoster coster(m, h100, DeploymentConfig{}, {}, e.max_num_tokens);
  const std::vector<RequestSpec> one{RequestSpec{0.0, 16, 5}};
  const Simulation sim = simulate(one, e, coster, m);
  CHECK(sim.engine.steps == 6);
  CHECK(sim.engine.kv_blocks_peak == 8);
  CHECK(sim.engine.kv_blocks_mean == Approx(43.0 / 6));
  CHECK(sim.engine.preemptions == 0);

  // Admission checks the most it may hold: 5 blocks in the full layer, and in the windowed one
  // ceil((7 + 8) / 4) + 1 = 5 (vLLM's bound, though this schedule never holds more than 4): 10.
  e.kv_blocks = 9;
  CHECK_THROWS_WITH(simulate(one, e, coster, m), Contains("need 10 KV blocks of 4 tokens; the cache holds 9"));

  // guaranteed-no-evict reserves those 10 at admission and holds them to the end.
  e.kv_blocks = 10;
  e.policy = CapacityPolicy::guaranteed_no_evict;
  CHECK(simulate(one, e, coster, m).engine.kv_blocks_peak == 10);
}
