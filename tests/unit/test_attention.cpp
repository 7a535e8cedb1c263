// Attention costs against hand-derived numbers, including the book's worked example at N = 4096,
// d = 128 (docs/formulas.md), GQA, MQA, causal masking and the flash tile walk.
#include <random>

#include "catch.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/attention.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

AttentionShape one_head(std::int64_t n, std::int64_t d = 128) {
  AttentionShape s;
  s.batch = 1;
  s.heads = 1;
  s.kv_heads = 1;
  s.head_dim = d;
  s.seq = n;
  s.kv_seq = n;
  return s;
}

// The flash tile walk by brute force: every query tile, every key tile it touches.
struct Walk {
  double keys = 0;
  double pairs = 0;
};
Walk brute_force_walk(const AttentionShape& s, FlashTiling t) {
  Walk w;
  const std::int64_t offset = s.kv_seq - s.seq;
  for (std::int64_t start = 0; start < s.seq; start += t.q) {
    const std::int64_t end = std::min(start + t.q, s.seq);
    const std::int64_t keys_needed = s.causal ? offset + end : s.kv_seq;
    std::int64_t keys = 0;
    for (std::int64_t k = 0; k < keys_needed; k += t.kv) keys += std::min(t.kv, s.kv_seq - k);
    w.keys += static_cast<double>(keys);
    w.pairs += static_cast<double>(keys * (end - start));
  }
  return w;
}

}  // namespace

TEST_CASE("standard attention per head at N = 4096, d = 128, bf16: 138.4 MB, every S/P pass counted") {
  const AttentionCost c = standard_attention_cost(one_head(4096));
  // FLOPs: 4 d N^2 = 4 x 128 x 4096^2 = 8,589,934,592.
  CHECK(c.hbm.flops == 8589934592.0);
  // Q, K, V read, O written: 4 x 4096 x 128 x 2 B = 4,194,304 B (the book's 4.2 MB).
  // S written, S read, P written, P read: 4 x 4096^2 x 2 B = 134,217,728 B.
  CHECK(c.scores_bytes == 134217728.0);
  CHECK(c.hbm.bytes_read == 3 * 1048576.0 + 2 * 33554432.0);  // Q K V, S, P
  CHECK(c.hbm.bytes_written == 2 * 33554432.0 + 1048576.0);   // S, P, O
  CHECK(c.hbm.bytes() == 138412032.0);                        // 138.4 MB: the book's "139 MB"
  // The book's other figure, 4Nd + 3N^2 = 104,857,600 B ("~105 MB"), leaves out reading P for P V.
  CHECK(c.hbm.bytes() - 33554432.0 == 104857600.0);
  CHECK(c.executed_flops == c.hbm.flops);
}

TEST_CASE("flash attention per head at N = 4096, d = 128: 4.19 MB, a reduction of exactly 1 + N/d = 33") {
  const AttentionShape s = one_head(4096);
  const AttentionCost f = flash_attention_cost(s, {128, 128});
  // Q, K, V read once (3 x 1,048,576 B), O written once (1,048,576 B).
  CHECK(f.hbm.bytes_read == 3145728.0);
  CHECK(f.hbm.bytes_written == 1048576.0);
  CHECK(f.hbm.bytes() == 4194304.0);  // 4.19 MB (4.0 MiB), the book's "4.1 MB"
  CHECK(f.hbm.flops == 8589934592.0);
  // (4 N d + 4 N^2) / (4 N d) = 1 + N / d = 33, not the book's 34.
  CHECK(standard_attention_cost(s).hbm.bytes() / f.hbm.bytes() == 33.0);
  // AI 2048 FLOP/B (= N / 2): the book's "attention GEMM AI ~ 2048".
  CHECK(f.hbm.intensity() == 2048.0);
  // Re-reads: 32 query tiles each load K and V (2 x 1,048,576 B): 67,108,864 B, one load of which is HBM's.
  CHECK(f.kv_load_bytes == 67108864.0);
  CHECK(f.kv_reread_bytes == 67108864.0 - 2097152.0);
  // The book's FAv1 tiles (64 rows): 64 query tiles, 134,217,728 B of K/V loads.
  CHECK(flash_attention_cost(s, {64, 64}).kv_load_bytes == 134217728.0);
  // One query tile covering the whole sequence re-reads nothing.
  CHECK(flash_attention_cost(s, {4096, 128}).kv_reread_bytes == 0.0);
}

TEST_CASE("GQA: flash reads K and V once per KV head and standard once per query head") {
  // LLaMA-3 70B layer: 64 query heads, 8 KV heads, d = 128, N = 4096, bf16, batch 1.
  AttentionShape s = one_head(4096);
  s.heads = 64;
  s.kv_heads = 8;
  const AttentionCost f = flash_attention_cost(s, {128, 128});
  // Q: 64 x 4096 x 128 x 2 = 67,108,864; K + V: 2 x 8 x 4096 x 128 x 2 = 16,777,216; O like Q.
  CHECK(f.hbm.bytes_read == 67108864.0 + 16777216.0);
  CHECK(f.hbm.bytes_written == 67108864.0);
  // 80 layers: 80 x 150,994,944 B = 12.08 GB per forward pass, not the book's 1.05 GB.
  CHECK(80 * f.hbm.bytes() == Approx(12.08e9).epsilon(1e-3));
  const AttentionCost st = standard_attention_cost(s);
  // K + V per query head: 2 x 64 x 4096 x 128 x 2 = 134,217,728; S and P: 4 passes x 64 x 4096^2 x 2.
  CHECK(st.hbm.bytes_read == 67108864.0 + 134217728.0 + 2 * 2147483648.0);
  CHECK(st.scores_bytes == 4 * 2147483648.0);
  // MHA (kv_heads = heads) reads 8x the K/V; MQA (1 KV head) 1/8.
  s.kv_heads = 64;
  CHECK(flash_attention_cost(s, {128, 128}).hbm.bytes_read == 67108864.0 + 8 * 16777216.0);
  s.kv_heads = 1;
  CHECK(flash_attention_cost(s, {128, 128}).hbm.bytes_read == 67108864.0 + 16777216.0 / 8);
  // The re-reads count every query head of the group loading its K/V per tile: 64 heads x 32 tiles x
  // 2,097,152 B, minus the one HBM read of the single KV head.
  CHECK(flash_attention_cost(s, {128, 128}).kv_reread_bytes == 64 * 32 * 2097152.0 - 2097152.0);
}

TEST_CASE("causal: N (N + 1) / 2 pairs, the diagonal counted while standard still computes all of S") {
  AttentionShape s = one_head(4096);
  s.causal = true;
  // 4096 x 4097 / 2 = 8,390,656 pairs; 4 x 128 x 8,390,656 = 4,296,015,872 FLOPs.
  CHECK(attention_pairs(s) == 8390656.0);
  const AttentionCost st = standard_attention_cost(s);
  CHECK(st.hbm.flops == 4296015872.0);
  CHECK(st.executed_flops == 8589934592.0);
  CHECK(st.hbm.bytes() == 138412032.0);  // the masked S is still written and read in full
  // Flash with 128 x 128 tiles: query tile i walks i + 1 key tiles: keys = 128 x (1 + ... + 32) = 67,584;
  // executed pairs 128 x 67,584 = 8,650,752 (3.1 % above the useful 8,390,656).
  const AttentionCost f = flash_attention_cost(s, {128, 128});
  CHECK(f.hbm.flops == 4296015872.0);
  CHECK(f.executed_flops == 4.0 * 128 * 8650752);
  CHECK(f.kv_load_bytes == 2 * 67584.0 * 128 * 2);
  CHECK(f.hbm.bytes() == 4194304.0);  // every key is still read once (by the last tile)
  // Queries are the last seq of kv_seq positions: seq 2, kv_seq 5 -> query 0 sees keys 0..3, query 1 0..4.
  s.seq = 2;
  s.kv_seq = 5;
  CHECK(attention_pairs(s) == 9.0);
  // Decode (one query) with causal sees the whole context.
  s.seq = 1;
  s.kv_seq = 4096;
  CHECK(attention_pairs(s) == 4096.0);
}

TEST_CASE("flash tile walk with ragged tiles: hand-counted cases and a brute-force comparison") {
  AttentionShape s = one_head(100, 8);
  s.causal = true;
  // Tiles 32 x 48, N = 100: query tiles end at 32, 64, 96, 100 -> key tiles 1, 2, 2, 3 ->
  // keys 48, 96, 96, 100 (the third key tile holds only 4) = 340; pairs 32x48 + 32x96 + 32x96 + 4x100.
  AttentionCost f = flash_attention_cost(s, {32, 48});
  CHECK(f.kv_load_bytes == 2 * 340.0 * 8 * 2);
  CHECK(f.executed_flops == 4.0 * 8 * 8080);
  // seq 50 of kv_seq 100, tiles 16 x 48: query tiles reach keys 66, 82, 98, 100 -> 96, 96, 100, 100 = 392.
  s.seq = 50;
  f = flash_attention_cost(s, {16, 48});
  CHECK(f.kv_load_bytes == 2 * 392.0 * 8 * 2);
  CHECK(f.executed_flops == 4.0 * 8 * (16 * 292 + 2 * 100));

  std::mt19937_64 random(12345);
  for (int i = 0; i < 2000; ++i) {
    AttentionShape r = one_head(1, 4);
    r.causal = random() % 2 == 0;
    r.kv_seq = 1 + static_cast<std::int64_t>(random() % 700);
    r.seq = r.causal ? 1 + static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(r.kv_seq))
                     : 1 + static_cast<std::int64_t>(random() % 700);
    const FlashTiling t{1 + static_cast<std::int64_t>(random() % 150), 1 + static_cast<std::int64_t>(random() % 150)};
    const Walk w = brute_force_walk(r, t);
    const AttentionCost c = flash_attention_cost(r, t);
    INFO("seq " << r.seq << " kv_seq " << r.kv_seq << " causal " << r.causal << " tiles " << t.q << "x" << t.kv);
    REQUIRE(c.kv_load_bytes == 2 * w.keys * 4 * 2);
    REQUIRE(c.executed_flops == 4.0 * 4 * w.pairs);
  }
}

TEST_CASE("mixed types: an fp8 KV cache halves the K/V bytes and the activations keep their type") {
  AttentionShape s = one_head(4096);
  s.kv = DType::fp8_e4m3;
  const AttentionCost f = flash_attention_cost(s, {128, 128});
  // Q 1,048,576 (bf16) + K, V 2 x 524,288 (fp8); O 1,048,576.
  CHECK(f.hbm.bytes_read == 1048576.0 + 1048576.0);
  CHECK(f.hbm.bytes_written == 1048576.0);
  // Standard: S and P stay in the activation type.
  CHECK(standard_attention_cost(s).scores_bytes == 134217728.0);
  // nvfp4 KV cache: 4.5 bits per element.
  s.kv = DType::nvfp4;
  CHECK(flash_attention_cost(s, {128, 128}).hbm.bytes_read == 1048576.0 + 2 * 4096 * 128 * 0.5625);
}

TEST_CASE("default flash tiles come from shared memory with L2 residency of K/V") {
  const AttentionShape s = one_head(4096);
  // Q tile + double-buffered K and V: T x 128 x 2 + 4 x T x 128 x 2 = 1280 T bytes.
  CHECK(flash_smem_bytes(s, {128, 128}) == 163840.0);
  // H100 (228 KiB = 233,472 B): 128 fits, 256 (327,680 B) does not.
  CHECK(default_flash_tiling(s, 228 * 1024).q == 128);
  // V100 (96 KiB): 64.
  CHECK(default_flash_tiling(s, 96 * 1024).q == 64);
  // d = 256 on H100: 128 needs 327,680 B -> 64.
  CHECK(default_flash_tiling(one_head(4096, 256), 228 * 1024).q == 64);
  // Nothing fits: the smallest tile, 16.
  CHECK(default_flash_tiling(one_head(4096, 65536), 228 * 1024).q == 16);

  // Batch 4 x 32 heads at N = 4096 on H100 (132 SMs, 50 MB L2): 32 query tiles per head; a window of
  // 132 blocks touches ceil(131 / 32) + 1 = 6 heads: 6 x 2 x 4096 x 128 x 2 = 12,582,912 B: fits.
  AttentionShape batch = one_head(4096);
  batch.batch = 4;
  batch.heads = batch.kv_heads = 32;
  const KvResidency fits = flash_kv_residency(batch, {128, 128}, 132, 50e6);
  CHECK(fits.kv_heads_in_flight == 6);
  CHECK(fits.working_set_bytes == 12582912.0);
  CHECK(fits.l2_holds);
  // N = 131,072: 1024 blocks per head, two heads in flight: 2 x 2 x 131072 x 128 x 2 = 134 MB > 50 MB.
  batch.seq = batch.kv_seq = 131072;
  const KvResidency spills = flash_kv_residency(batch, {128, 128}, 132, 50e6);
  CHECK(spills.kv_heads_in_flight == 2);
  CHECK_FALSE(spills.l2_holds);
  // Never more heads in flight than exist.
  CHECK(flash_kv_residency(one_head(64), {128, 128}, 132, 50e6).kv_heads_in_flight == 1);
}

TEST_CASE("attention rejects bad shapes") {
  AttentionShape s = one_head(128);
  s.heads = 32;
  s.kv_heads = 5;
  CHECK_THROWS_WITH(flash_attention_cost(s, {128, 128}), Contains("not a multiple"));
  s.kv_heads = 64;
  CHECK_THROWS_AS(standard_attention_cost(s), InputError);
  s = one_head(128);
  s.causal = true;
  s.kv_seq = 64;
  CHECK_THROWS_WITH(standard_attention_cost(s), Contains("causal"));
  s = one_head(0);
  CHECK_THROWS_AS(standard_attention_cost(s), InputError);
  CHECK_THROWS_AS(flash_attention_cost(one_head(128), {0, 128}), InputError);
  CHECK_THROWS_AS(flash_attention_cost(one_head(128), {128, max_flash_tile + 1}), InputError);
  // Quadratic traffic overflows long before linear: N = 2^31 standard is 2^65 B.
  CHECK_THROWS_WITH(standard_attention_cost(one_head(std::int64_t{1} << 31)), Contains("64 bits"));
  CHECK_NOTHROW(flash_attention_cost(one_head(std::int64_t{1} << 20), {128, 128}));
}

TEST_CASE("a V narrower than Q and K (MLA expanded: d 192, d_v 128) counts each at its own width") {
  AttentionShape s = one_head(1024, 192);
  s.head_dim_v = 128;
  s.causal = true;
  CHECK(value_head_dim(s) == 128);
  CHECK(value_head_dim(one_head(1024)) == 128);  // 0: as wide as Q and K
  // 1024 x 1025 / 2 = 524,800 pairs, 2 x (192 + 128) FLOPs each: 335,872,000.
  const AttentionCost flash = flash_attention_cost(s, {128, 128});
  CHECK(flash.hbm.flops == 335872000.0);
  // Q and K 1024 x 192 x 2 B = 393,216 each, V and O 1024 x 128 x 2 B = 262,144 each.
  CHECK(flash.hbm.bytes_read == 393216.0 + 393216.0 + 262144.0);
  CHECK(flash.hbm.bytes_written == 262144.0);
  // Query tile i of 8 loads (i + 1) x 128 keys: 36 x 128 = 4,608 keys of 320 elements, 2 B each.
  CHECK(flash.kv_load_bytes == 4608.0 * 320 * 2);
  // Standard computes all 1024^2 pairs (671,088,640 FLOPs) and moves S and P (2,097,152 B a pass) four times.
  const AttentionCost standard = standard_attention_cost(s);
  CHECK(standard.hbm.flops == 335872000.0);
  CHECK(standard.executed_flops == 671088640.0);
  CHECK(standard.hbm.bytes_read == 393216.0 + 393216.0 + 262144.0 + 2 * 2097152.0);
  CHECK(standard.hbm.bytes_written == 2 * 2097152.0 + 262144.0);
  // Shared memory: a 128-row Q tile 192 wide (49,152 B) and two stages of K (192) and V (128) tiles
  // of 128 keys (163,840 B).
  CHECK(flash_smem_bytes(s, {128, 128}) == 49152.0 + 163840.0);
  s.head_dim_v = -1;
  CHECK_THROWS_WITH(flash_attention_cost(s, {128, 128}), Contains("head_dim_v"));
}

TEST_CASE("MLA's expanded prefill is flash attention with 192-wide Q and K and 128-wide V") {
  LatentAttentionShape latent;
  latent.heads = 16;
  latent.seq = 2048;
  latent.kv_seq = 2048;
  latent.causal = true;
  latent.absorbed = false;
  const AttentionShape shape = expanded_attention_shape(latent);
  CHECK(shape.heads == 16);
  CHECK(shape.kv_heads == 16);
  CHECK(shape.head_dim == 192);
  CHECK(shape.head_dim_v == 128);
  const OpCost flash = flash_attention_cost(shape, {128, 128}).hbm;
  const OpCost mla = latent_attention_cost(latent);
  CHECK(mla.flops == flash.flops);
  CHECK(mla.bytes_read == flash.bytes_read);
  CHECK(mla.bytes_written == flash.bytes_written);
  latent.absorbed = true;
  CHECK_THROWS_AS(expanded_attention_shape(latent), std::logic_error);
}
