#pragma once

// The tile shapes of the compute kernels (kernels/gemm, kernels/attention, kernels/layer/), in
// one place that the host code can read without CUDA: the kernels are built from these constants
// (and static_assert the shapes their thread mappings assume), and the benchmarks hand the same
// tiles to the model's traffic formulas (gemm_tiled_cost, flash_attention_cost), so the report's
// predicted HBM bytes are those of the tiles actually used.

namespace roofline::kernel_tiles {

// The SM count a launch plan assumes: the GPU's, or the H200's 132 where it is unknown (0).
constexpr int known_sms(int sms) {
  return sms > 0 ? sms : 132;
}

// A GEMM block computes a tile_m x tile_n tile of C, its k loop staged tile_k at a time through
// `stages` shared-memory buffers (0: none), with `threads` threads.
struct GemmTiling {
  int tile_m = 0;
  int tile_n = 0;
  int tile_k = 0;
  int stages = 0;
  int threads = 0;
};
inline constexpr GemmTiling gemm_naive{1, 1, 1, 0, 256};
inline constexpr GemmTiling gemm_smem_tiled{128, 128, 16, 1, 256};
inline constexpr GemmTiling gemm_mma_sync{128, 128, 64, 3, 128};
inline constexpr GemmTiling gemm_wgmma{128, 256, 64, 4, 384};
// The wgmma GEMM's narrow tiles, for products whose 128 x 256 tiles leave SMs idle: 128 x 128, the
// ring 6 stages of 32 KB deep (the shared memory of 4 wide stages buys more loads in flight).
inline constexpr GemmTiling gemm_wgmma_narrow{128, 128, 64, 6, 384};

// How the blocks of a wgmma GEMM share their loads: alone, or in clusters of two whose TMA unit
// multicasts one operand's tile rows into both (each block loads half of them). share_b: vertical
// pairs (tile rows 2r and 2r + 1 of one tile column) share B; share_a: horizontal pairs (tile
// columns 2c and 2c + 1 of one tile row) share A.
enum class GemmPairing : unsigned char { none, share_b, share_a };

// The wgmma GEMM's plan for a skinny product (kernels/gemm/gemm_wgmma.cu, gemm_wgmma_skinny): tiles
// of 128 x tile_n, `tiles` of them over C, each one block's (pairing none: each tile's k may be cut
// into `splits` ranges of k_blocks_per_split blocks of 64, one block each) or two tiles a cluster.
struct GemmSplitK {
  int tile_n = 256;
  int tiles = 0;
  int splits = 1;
  int k_blocks_per_split = 0;
  GemmPairing pairing = GemmPairing::none;
};

// The plain wgmma GEMM's 128 x 256 tiles in vertical pairs of blocks, clusters of two that each load
// half of B's tile rows and multicast them to both (kernels/gemm/gemm_wgmma.cu, PairScheduler): the
// pair tiles (tiles_m rounded up to even, over 2, times tiles_n) where A has two tile rows or more and
// they fill at least a wave of pairs (half the SMs); 0 where the blocks run alone. Below a wave the
// cluster launch's fixed cost (about a microsecond) and the pair's lockstep outweighed the L2 reads
// saved: 512^3-2048^3 and 256 x 8192 x 8192 ran 0.89-0.99x paired on the H200, 4096^3 1.06x
// (docs/results/2026-12-04-h200-gemm-pairs-gemv-groups).
constexpr long long gemm_wgmma_pairs(long long m, long long n, int sms) {
  const long long tiles_m = (m + gemm_wgmma.tile_m - 1) / gemm_wgmma.tile_m;
  const long long tiles_n = (n + gemm_wgmma.tile_n - 1) / gemm_wgmma.tile_n;
  const long long pairs = (tiles_m + 1) / 2 * tiles_n;
  return tiles_m >= 2 && pairs >= known_sms(sms) / 2 ? pairs : 0;
}

// The tile widths and pairings the wgmma GEMM kernel is built for (kernels/gemm/gemm_wgmma.cu
// instantiates exactly these), with the depth of each width's ring of 128-byte k stages (A's 128
// rows and B's tile_n rows: 48 KB at 256, 36 at 160, 32 at 128, 26 at 80, 24 at 64; as deep as
// the 227 KB of shared memory allows, at most 8). Only the unpaired 256 and 128 also split k.
struct GemmWgmmaShape {
  int tile_n = 0;
  GemmPairing pairing = GemmPairing::none;
  bool splits_k = false;
};
inline constexpr GemmWgmmaShape gemm_wgmma_shapes[] = {
    {256, GemmPairing::none, true},    {256, GemmPairing::share_b, false}, {160, GemmPairing::share_b, false},
    {128, GemmPairing::none, true},    {128, GemmPairing::share_b, false}, {128, GemmPairing::share_a, false},
    {80, GemmPairing::share_a, false}, {64, GemmPairing::share_a, false}};
constexpr int gemm_wgmma_stages(int tile_n) {
  switch (tile_n) {
    case 256: return gemm_wgmma.stages;
    case 160: return 6;
    case 128: return gemm_wgmma_narrow.stages;
    default: return 8;  // 80 and 64
  }
}

// The k blocks of 64 a tile's k loop runs.
constexpr long long gemm_k_blocks(long long k) {
  return (k + gemm_wgmma.tile_k - 1) / gemm_wgmma.tile_k;
}

// One tile width's k split (pairing none): as many splits as keep the grid to one wave (SMs /
// tiles, rounded down), each at least 8 k blocks (512 of k: twice the 4-stage ring), at most 8; 1
// where the tiles fill the SMs.
constexpr GemmSplitK gemm_wgmma_split_k(long long m, long long n, long long k, int sms, int tile_n) {
  constexpr int min_k_blocks_per_split = 8;
  constexpr int max_splits = 8;
  const int sm_count = known_sms(sms);
  GemmSplitK s;
  s.tile_n = tile_n;
  s.tiles = static_cast<int>(((m + gemm_wgmma.tile_m - 1) / gemm_wgmma.tile_m) * ((n + tile_n - 1) / tile_n));
  const int k_blocks = static_cast<int>(gemm_k_blocks(k));
  int splits = s.tiles > 0 ? sm_count / s.tiles : 1;
  if (splits > k_blocks / min_k_blocks_per_split) splits = k_blocks / min_k_blocks_per_split;
  if (splits > max_splits) splits = max_splits;
  if (splits < 1) splits = 1;
  s.k_blocks_per_split = (k_blocks + splits - 1) / splits;
  s.splits = s.k_blocks_per_split > 0 ? (k_blocks + s.k_blocks_per_split - 1) / s.k_blocks_per_split : 1;
  return s;
}

// The thread blocks of a plan: a block per tile and split, or two per pair of tiles (an odd tile
// row or column count rounds up: the spare tile lies outside C, loads its half of the shared
// operand and stores nothing).
constexpr long long gemm_plan_blocks(const GemmSplitK& plan, long long m, long long n) {
  const long long tiles_m = (m + gemm_wgmma.tile_m - 1) / gemm_wgmma.tile_m;
  const long long tiles_n = (n + plan.tile_n - 1) / plan.tile_n;
  switch (plan.pairing) {
    case GemmPairing::share_b: return 2 * ((tiles_m + 1) / 2) * tiles_n;
    case GemmPairing::share_a: return 2 * tiles_m * ((tiles_n + 1) / 2);
    default: return static_cast<long long>(plan.tiles) * plan.splits;
  }
}

// What a k block of 64 costs one block, in the time its SM takes to read one 128-byte row from L2
// while every SM reads: its MMAs (128 x tile_n x 64) or its loads (A's rows, B's tile_n rows, each
// halved where a pair shares it), whichever is longer. On the H200 a column of the MMAs (16,384
// FLOP) takes as long as 1.27 rows: wgmma bf16 912.4 TFLOP/s against an L2 read of 9.08 TB/s, both
// measured (docs/results/2026-11-30-h200-run2). So unpaired 128 x 256 tiles are bound by their
// loads (384 rows against 325), paired ones by their MMAs (256 rows), and a 128 x 128 tile reads
// 1.57 times what its MMAs take -- measured 1.37 times the wide tile's time per output element
// (docs/results/2026-12-02-h200-skinny-narrow).
inline constexpr double gemm_l2_rows_per_mma_column = 1.27;
constexpr double gemm_k_block_cost(int tile_n, GemmPairing pairing, long long m) {
  // TMA reads no rows past m; what its zero fill costs is in gemm_wgmma_plan_of's rule on A pairs.
  const double a_rows = static_cast<double>(m < gemm_wgmma.tile_m ? m : gemm_wgmma.tile_m);
  const double rows =
      (pairing == GemmPairing::share_a ? a_rows / 2 : a_rows) + (pairing == GemmPairing::share_b ? tile_n / 2 : tile_n);
  const double mma = gemm_l2_rows_per_mma_column * tile_n;
  return rows > mma ? rows : mma;
}

// The busiest SM's time for a plan's loads and MMAs, in the rows of gemm_k_block_cost: the tiles it
// takes one after another (the blocks over the SMs, or over half of them for pairs, rounded up)
// times a tile's k blocks, plus for split k the partial tiles through L2 (a fp32 tile is 4 x tile_n
// rows: each block writes its own, the last reads all of them).
constexpr double gemm_plan_l2_cost(const GemmSplitK& plan, long long m, long long n, long long k, int sms) {
  const long long slots = plan.pairing == GemmPairing::none ? known_sms(sms) : known_sms(sms) / 2 * 2;
  const long long blocks = gemm_plan_blocks(plan, m, n);
  const long long waves = (blocks + slots - 1) / slots;
  const long long k_blocks = plan.splits > 1 ? plan.k_blocks_per_split : gemm_k_blocks(k);
  const double partials = plan.splits > 1 ? 4.0 * plan.tile_n * (1 + plan.splits) : 0.0;
  return static_cast<double>(waves) *
         (static_cast<double>(k_blocks) * gemm_k_block_cost(plan.tile_n, plan.pairing, m) + partials);
}
// Whatever the plan, A, B and C cross HBM once (16-bit elements): in the same rows, HBM's 4.40 TB/s
// (stream dot, docs/results/2026-11-30-h200-run2) is 2.06 times slower than the L2 read, shared by
// all SMs. A skinny product with a wide matrix is bound by it: 128 x 8192 x 28672 reads 470 MB of B.
inline constexpr double gemm_l2_over_hbm = 2.06;
constexpr double gemm_hbm_cost(long long m, long long n, long long k, int sms) {
  const double bytes = 2.0 * static_cast<double>(m * k + n * k + m * n);
  return bytes / 128.0 * gemm_l2_over_hbm / known_sms(sms);
}
// A plan's time: its loads and MMAs, or HBM's, whichever is longer.
constexpr double gemm_plan_cost(const GemmSplitK& plan, long long m, long long n, long long k, int sms) {
  const double l2 = gemm_plan_l2_cost(plan, m, n, k, sms);
  const double hbm = gemm_hbm_cost(m, n, k, sms);
  return l2 > hbm ? l2 : hbm;
}

// The plan of one shape of gemm_wgmma_shapes for m x n x k, or tiles = 0 where it cannot run
// (pairs need two tile rows, or columns, to pair) or is not to.
constexpr GemmSplitK gemm_wgmma_plan_of(const GemmWgmmaShape& shape, long long m, long long n, long long k, int sms) {
  GemmSplitK plan = shape.splits_k ? gemm_wgmma_split_k(m, n, k, sms, shape.tile_n) : GemmSplitK{};
  plan.tile_n = shape.tile_n;
  plan.pairing = shape.pairing;
  const long long tiles_m = (m + gemm_wgmma.tile_m - 1) / gemm_wgmma.tile_m;
  const long long tiles_n = (n + shape.tile_n - 1) / shape.tile_n;
  plan.tiles = static_cast<int>(tiles_m * tiles_n);
  if (!shape.splits_k) plan.k_blocks_per_split = static_cast<int>(gemm_k_blocks(k));
  if ((shape.pairing == GemmPairing::share_b && tiles_m < 2) ||
      (shape.pairing == GemmPairing::share_a && tiles_n < 2)) {
    plan.tiles = 0;
  }
  // 128 x 256 tiles in pairs below a wave of pairs: the plain kernel's rule (gemm_wgmma_pairs), met
  // again by the skinny plan's runs on the H200 (512 x 8192 x 8192 as 64 pairs 103.4 us, alone 100.2;
  // 2048^3 29.3 against 28.8; docs/results/2026-12-05-h200-skinny-widths).
  if (shape.pairing == GemmPairing::share_b && shape.tile_n == gemm_wgmma.tile_n && gemm_wgmma_pairs(m, n, sms) == 0) {
    plan.tiles = 0;
  }
  // Pairs sharing A where it has 64 rows or fewer: the second block's half of A lies wholly past m
  // (TMA fills it with zeros), and on the H200 such pairs ran twice the time of the same plan at m =
  // 128 (64 x 8192 x 8192: 78.0 us against 42.6; docs/results/2026-12-05-h200-skinny-widths).
  if (shape.pairing == GemmPairing::share_a && m <= gemm_wgmma.tile_m / 2) plan.tiles = 0;
  return plan;
}

// The plain wgmma GEMM's plan: 128 x 256 tiles over the whole k, in vertical pairs where
// gemm_wgmma_pairs says.
constexpr GemmSplitK gemm_wgmma_plain_plan(long long m, long long n, long long k, int sms) {
  GemmSplitK plan = gemm_wgmma_plan_of({gemm_wgmma.tile_n, GemmPairing::none, false}, m, n, k, sms);
  if (gemm_wgmma_pairs(m, n, sms) > 0) plan.pairing = GemmPairing::share_b;
  return plan;
}

// The skinny plan: of gemm_wgmma_shapes, the one that finishes first by gemm_plan_cost; within 1%
// (the model's tie, as where HBM bounds them all) the one with fewer splits (a partial tile through
// L2 and a serial sum at the end), then the one with the smaller load-and-MMA time (the most slack
// under HBM), then the earlier shape. Skinny products leave SMs idle or a last wave ragged with 128 x
// 256 tiles: 256 x 10240 x 8192 is 80 wide tiles (52 SMs idle), or 64 vertical pairs of 128 x 160
// on 128 SMs; 128 x 8192 x 8192 is 128 tiles of 128 x 64 in 64 horizontal pairs sharing A, cuBLAS's
// plan for it (docs/results/2026-12-02-h200-flash-fa3, call 3). From two waves of wide tiles on,
// that quantisation is small and the plan is the plain kernel's (gemm_wgmma_plain_plan).
constexpr GemmSplitK gemm_wgmma_skinny_plan(long long m, long long n, long long k, int sms) {
  const GemmSplitK wide = gemm_wgmma_plan_of(gemm_wgmma_shapes[0], m, n, k, sms);
  if (wide.tiles >= 2LL * known_sms(sms)) return gemm_wgmma_plain_plan(m, n, k, sms);
  constexpr double tie = 0.01;
  const double hbm = gemm_hbm_cost(m, n, k, sms);
  GemmSplitK best = wide;
  double best_l2 = gemm_plan_l2_cost(wide, m, n, k, sms);
  double best_cost = best_l2 > hbm ? best_l2 : hbm;
  for (const GemmWgmmaShape& shape : gemm_wgmma_shapes) {
    const GemmSplitK plan = gemm_wgmma_plan_of(shape, m, n, k, sms);
    if (plan.tiles == 0) continue;
    const double l2 = gemm_plan_l2_cost(plan, m, n, k, sms);
    const double cost = l2 > hbm ? l2 : hbm;
    bool better = cost < best_cost * (1 - tie);
    if (cost <= best_cost * (1 + tie) && !better) {  // a tie
      better = plan.splits < best.splits || (plan.splits == best.splits && l2 < best_l2 * (1 - tie));
    }
    if (better) {
      best = plan;
      best_cost = cost;
      best_l2 = l2;
    }
  }
  return best;
}

// The grouped GEMM of MoE experts with k split (kernels/gemm/gemm_grouped.cu,
// gemm_grouped_split_k): the wgmma kernel's 128 x 256 tiles over every expert's rows (`tiles` of them,
// grouped_gemm_schedule's last entry), each cut along k into `splits` ranges of k_blocks_per_split
// blocks of 128 bytes of k (64 16-bit or 128 fp8 elements), one thread block each. A decode step's
// experts hold a token or two: DeepSeek-V3's gate_up at TP 8 over 4 experts is 8 tiles over a k of
// 7168, which unsplit kept 8 of 132 SMs busy (0.09 of the HBM roof on the H200,
// docs/results/2026-12-03-h200-grouped-decode). A split block writes and reads its partial rows
// only where the expert has tokens (a row or two of 128), so the grid aims at every SM: each split
// at least 4 k blocks (the ring's 4 stages), at most 16 splits. On the H200 that case went from
// 35.9 to 21.1 us (14 splits); plans of 3 or more splits gained 1.37x (median), plans of 2 nothing
// (0.97x): docs/results/2026-12-03-h200-grouped-splitk.
constexpr GemmSplitK grouped_gemm_split_k(long long tiles, long long k_blocks, int sms) {
  constexpr long long min_k_blocks_per_split = 4;
  constexpr long long max_splits = 16;
  GemmSplitK s;
  s.tile_n = gemm_wgmma.tile_n;
  s.tiles = static_cast<int>(tiles);
  long long splits = tiles > 0 ? known_sms(sms) / tiles : 1;
  if (splits > k_blocks / min_k_blocks_per_split) splits = k_blocks / min_k_blocks_per_split;
  if (splits > max_splits) splits = max_splits;
  if (splits < 1) splits = 1;
  s.k_blocks_per_split = static_cast<int>((k_blocks + splits - 1) / splits);
  s.splits =
      s.k_blocks_per_split > 0 ? static_cast<int>((k_blocks + s.k_blocks_per_split - 1) / s.k_blocks_per_split) : 1;
  return s;
}

// A skinny GEMM (m <= 256) as the wgmma GEMV with A and B swapped (kernels/gemv_wgmma.cu): a block
// owns 128 rows of B (n) and every row of A (one m tile, wgmma's N up to 256), k staged 64 at a time;
// split-K partial sums are not in this tiling's traffic.
inline constexpr GemmTiling gemm_swapab{256, 128, 64, 4, 288};

// How the wgmma GEMV (kernels/gemv_wgmma.cu; the swapab skinny GEMM through it) cuts an m x k
// 16-bit W for a batch: tiles of 128 rows (gemm_swapab.tile_n) or 64, wgmma's N the batch rounded
// up to 16, 32, 64, 128 or 256, k in blocks of 64 elements split into `splits` ranges, one thread
// block each. A split costs far more than its partial tile's bytes (each block's partial write,
// fence and ticket, and the last block's sum, are serial at the end of a short call), and one block
// streams W at only about 53 GB/s, so a grid wants every SM busy without splitting k. On the H200
// (docs/results/2026-12-02-h200-gemv-splits, 2026-12-02-h200-decode-shapes):
// - 128-row tiles: 64 x 8192 x 8192 took 39.6, 43.7, 54.5 and 59.5 us at 1, 2, 3 and 4 splits; at
//   N <= 64 their splits aim at about half the SMs, at N = 128 and 256 (tensor work per block that
//   would double on half the SMs) at all of them.
// - 64-row tiles (N <= 64, where they are at most one per SM): the two warpgroups share the rows and
//   take alternate k blocks. 8192^2 at batch 64 then takes 36.5 us in 128 unsplit blocks; their
//   splits aim at every SM, rounded down, at most 4 (768 x 4096 and 1280 x 8192 were fastest at 4-6
//   splits, 4096^2 and 4096 x 14336 at 2; past 4 the serial tail grows).
// A split keeps at least 4 k blocks (256 k) so that its ring fills. Two blocks share an SM (the
// two-block variant, a shorter ring each) only where N <= 64 and the grid has more blocks than SMs,
// so that it is one wave. 64-row tiles are taken only where they fit one block per SM: 10240 rows,
// 160 tiles of 64, ran slower as two per SM (48.3 us at batch 64) than as 80 tiles of 128 (45.9 us).
// Vector groups (the plain GEMV, batches of 17-64; gemv_wgmma_split says where): the batch cut in two
// groups of N / 2 vectors, one block each, before k is split: the two blocks of a tile read its W rows
// together (the second from L2) and neither has partials to add -- cuBLAS's choice on the small shapes
// (64-row x 32-vector tiles, unsplit).
struct GemvWgmmaSplit {
  int tile_n = 16;  // wgmma's N
  int rows = 128;   // rows of W per block (64: the two warpgroups share them, alternate k blocks)
  int tiles = 0;
  int splits = 1;
  int k_blocks_per_split = 0;
  int blocks_per_sm = 1;
  int vector_groups = 1;  // blocks per tile over the batch (tile_n vectors each), before the splits
};
constexpr int gemv_wgmma_tile_n(long long batch) {
  return batch <= 16 ? 16 : batch <= 32 ? 32 : batch <= 64 ? 64 : batch <= 128 ? 128 : 256;
}
// The rule over a grid given as its tiles of 64 and of 128 rows, k in 128-byte blocks: the plain
// GEMV's m rows, or the grouped one's experts x n rows each (grouped_gemv_wgmma_split), the batch in
// `vector_groups` groups (1 or 2).
constexpr GemvWgmmaSplit gemv_wgmma_split_in_groups(long long tiles_of_64, long long tiles_of_128, long long k_bytes,
                                                    long long batch, int sms, int vector_groups) {
  constexpr int min_k_blocks_per_split = 4;
  constexpr int max_splits_of_64_rows = 4;
  constexpr long long k_block_bytes = 2LL * gemm_swapab.tile_k;
  const int sm_count = known_sms(sms);
  GemvWgmmaSplit s;
  s.vector_groups = vector_groups;
  s.tile_n = gemv_wgmma_tile_n((batch + vector_groups - 1) / vector_groups);
  s.rows = s.tile_n <= 64 && tiles_of_64 * vector_groups <= sm_count ? gemm_swapab.tile_n / 2 : gemm_swapab.tile_n;
  s.tiles = static_cast<int>(s.rows == 64 ? tiles_of_64 : tiles_of_128);
  const long long row_blocks = static_cast<long long>(s.tiles) * s.vector_groups;
  // 64-row tiles aim at every SM, at most 4 splits; 128-row tiles at half the SMs (N <= 64) or all.
  const int target_blocks = s.rows == 64 || s.tile_n > 64 ? sm_count : sm_count / 2;
  const int k_blocks = static_cast<int>((k_bytes + k_block_bytes - 1) / k_block_bytes);
  int most_splits = k_blocks / min_k_blocks_per_split > 1 ? k_blocks / min_k_blocks_per_split : 1;
  if (s.rows == 64 && most_splits > max_splits_of_64_rows) most_splits = max_splits_of_64_rows;
  // Rounded to the nearest for 128-row tiles; down for 64-row ones, which run one block per SM only
  // (3072 rows, 48 tiles, ran 3 splits as two blocks per SM at 19.0 us against 9.6 for cuBLAS).
  int splits = row_blocks <= 0 ? 1
               : s.rows == 64  ? static_cast<int>(target_blocks / row_blocks)
                               : static_cast<int>((target_blocks + row_blocks / 2) / row_blocks);
  splits = splits < 1 ? 1 : (splits > most_splits ? most_splits : splits);
  s.k_blocks_per_split = (k_blocks + splits - 1) / splits;
  s.splits = s.k_blocks_per_split > 0 ? (k_blocks + s.k_blocks_per_split - 1) / s.k_blocks_per_split : 1;
  s.blocks_per_sm = s.tile_n <= 64 && row_blocks * s.splits > sm_count ? 2 : 1;
  return s;
}
constexpr GemvWgmmaSplit gemv_wgmma_split_of(long long tiles_of_64, long long tiles_of_128, long long k_bytes,
                                             long long batch, int sms) {
  return gemv_wgmma_split_in_groups(tiles_of_64, tiles_of_128, k_bytes, batch, sms, 1);
}

constexpr GemvWgmmaSplit gemv_wgmma_split(long long m, long long k, long long batch, int sms) {
  // Two vector groups (batches of 17-64, 64-row tiles that still fit one block per SM when doubled)
  // where k is short (at most 2048: the call is a fixed cost that the split's partial round trip
  // doubles), or where the splits alone, held to 4, leave more than half the SMs idle. Measured on the
  // H200 (docs/results/2026-12-04-h200-gemm-pairs-gemv-groups): 4096 x 512 and 4096 x 1024 1.18-1.52x,
  // 768 x 4096 1.06-1.12x; where they merely trade a split for a group over a long k, 0.73-0.89x
  // (each block streams 1.5x the bytes: its half of the batch is half of x, but all of W's k).
  const long long rows = gemm_swapab.tile_n;
  const long long tiles_of_64 = (m + rows / 2 - 1) / (rows / 2);
  const long long tiles_of_128 = (m + rows - 1) / rows;
  const GemvWgmmaSplit alone = gemv_wgmma_split_of(tiles_of_64, tiles_of_128, 2 * k, batch, sms);
  if (alone.rows != 64 || batch <= 16 || batch > 64 || 2 * tiles_of_64 > known_sms(sms)) return alone;
  const bool short_k = k <= 2048;
  const bool idle_half = static_cast<long long>(alone.tiles) * alone.splits < known_sms(sms) / 2;
  return short_k || idle_half ? gemv_wgmma_split_in_groups(tiles_of_64, tiles_of_128, 2 * k, batch, sms, 2) : alone;
}

// The experts with tokens that one launch of the grouped GEMV carries in its parameters (8 bytes
// each: 2 KB of the 4 KB parameter space).
inline constexpr int grouped_gemv_wgmma_max_experts = 256;

// The grouped GEMM of MoE experts through the same kernel (gemm_grouped_swap_ab): every expert with
// tokens is n rows of W cut into its own tiles, its tokens (at most `most_tokens`, wgmma's N) the
// batch; k of `bytes_per_element` (2, or 1 for FP8) in the same 128-byte blocks.
constexpr GemvWgmmaSplit grouped_gemv_wgmma_split(long long experts_with_tokens, long long n, long long k,
                                                  int bytes_per_element, long long most_tokens, int sms) {
  const long long rows = gemm_swapab.tile_n;
  return gemv_wgmma_split_of(experts_with_tokens * ((n + rows / 2 - 1) / (rows / 2)),
                             experts_with_tokens * ((n + rows - 1) / rows), bytes_per_element * k, most_tokens, sms);
}

// A flash-attention block holds block_m query rows and streams K/V in tiles of block_n keys
// through kv_stages shared-memory stages.
struct FlashTiling {
  int block_m = 0;
  int block_n = 0;
  int warps = 0;
  int kv_stages = 0;
  int smem_bytes = 0;  // dynamic shared memory per block
  int q_stages = 1;    // Q tiles held at once: 2 lets a persistent block load its next tile's Q early
};

// The mma.sync kernels (kernels/attention/flash.cu): 8 warps x 16 rows or 4 warps x 32 rows; two m16
// tiles per warp at head_dim 128 hold 128 O accumulators per thread, so that variant streams
// 32-key tiles (64-key ones push ptxas past 255 registers).
inline constexpr int flash_mma_kv_stages = 2;
constexpr FlashTiling flash_mma_sync(int head_dim, int warps) {
  const int m_tiles = warps == 8 ? 1 : 2;
  const int block_m = warps * 16 * m_tiles;
  const int block_n = head_dim == 128 && m_tiles == 2 ? 32 : 64;
  return {block_m, block_n, warps, flash_mma_kv_stages, (block_m + 2 * flash_mma_kv_stages * block_n) * head_dim * 2};
}

// The Hopper kernel (kernels/attention/flash_wgmma.cu, head dims 64, 128 and 256): a producer
// warpgroup and two consumer warpgroups of 64 rows (persistent, a block per SM, at short
// sequences). Keys per K/V tile: 128, but 80 at head dim 256 (FlashAttention-3's choice there), where
// a consumer's O (64 x 256 fp32) already takes 128 of its 240 registers and a 128-key S would take 64
// more (80 keys: S 40, P 20; ptxas: no spills), and two stages of 80-key K and V tiles are what fits
// beside Q (3.4% faster than 64-key tiles, median of four shapes, five interleaved rounds on the H200:
// docs/results/2026-12-05-h200-prepared-kernels). Shared memory: Q (128 rows, in one or two stages) +
// stages x (K + V tiles) at 2 bytes an element, + mbarriers (full and empty for each Q stage, and for K
// and V per stage) + 1024 bytes of alignment slack: 97 and 193 KB at head dims 64 and 128 (two Q
// stages), 225 KB at 256 (one).
// Two stages at every head dim: 4 at d 64 and 3 at d 128 (which fit) ran within the calls' noise of
// 2 (median time 1.00x over the suite's shapes, docs/results/2026-12-02-h200-flash-headdims).
// Q and K may be wider than V and O (`head_dim_v`; 0 means head_dim): the 16-bit kernel also runs
// 192 with 128, DeepSeek's multi-head latent attention in its expanded (prefill) form (128 + 64
// rotary wide scores, 128 wide values; FlashAttention-3 builds the same pair). Its K tile is 192
// wide and its V tile 128: 209 KB (one Q stage).
inline constexpr int flash_wgmma_stages = 2;
// The dynamic shared memory one Hopper (sm_90) block may take: 227 KB of the SM's 228.
inline constexpr int sm90_max_block_smem = 227 * 1024;
// Q in two stages where they fit beside the K/V ring (head dims 64 and 128, and FP8): a persistent
// block's next Q then loads during its current tile rather than after the tile's last S.
constexpr FlashTiling flash_wgmma_with_q_stages(int block_m, int block_n, int q_tile_bytes, int kv_stage_bytes) {
  const int stages = flash_wgmma_stages;
  const auto bytes = [&](int q_stages) {
    return q_stages * q_tile_bytes + stages * kv_stage_bytes + 8 * (2 * q_stages + 4 * stages) + 1024;
  };
  const int q_stages = bytes(2) <= sm90_max_block_smem ? 2 : 1;
  return {block_m, block_n, 12, stages, bytes(q_stages), q_stages};
}
constexpr bool flash_wgmma_runs(int head_dim, int head_dim_v = 0) {
  if (head_dim_v != 0 && head_dim_v != head_dim) return head_dim == 192 && head_dim_v == 128;
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}
constexpr FlashTiling flash_wgmma(int head_dim, int head_dim_v = 0) {
  const int value_dim = head_dim_v == 0 ? head_dim : head_dim_v;
  const int block_m = 128;
  const int block_n = head_dim == 256 ? 80 : 128;
  return flash_wgmma_with_q_stages(block_m, block_n, block_m * head_dim * 2, block_n * (head_dim + value_dim) * 2);
}

// The same kernel on e4m3 Q, K and V (both products on the 8-bit wgmma, k = 32), head dims 128 and
// 256: every K tile row and every row of the transposed V tile (one head-dim row of 128 keys) is
// one 128-byte swizzled row. Keys per tile: 128 at both head dims (8-bit P takes half the registers
// of 16-bit P, so a 128-key S fits beside d 256's O). Shared memory at 1 byte an element, two Q
// stages: 97 and 193 KB. Head dim 64 (64-byte rows, another swizzle) is not built.
constexpr bool flash_wgmma_fp8_runs(int head_dim) {
  return head_dim == 128 || head_dim == 256;
}
constexpr FlashTiling flash_wgmma_fp8(int head_dim) {
  const int block_m = 128;
  const int block_n = 128;
  return flash_wgmma_with_q_stages(block_m, block_n, block_m * head_dim, 2 * block_n * head_dim);
}

// Decode attention (kernels/layer/decode_attention.cu): one block per (sequence, KV head, split of the context);
// its 4 warps share 64-key K/V tiles (each warp takes 16 of the keys), 3 stages deep. The query
// heads of one KV head are the rows of the mma tile, so a GQA group may have up to 16 heads.
inline constexpr int decode_attention_block_n = 64;
inline constexpr int decode_attention_warps = 4;
inline constexpr int decode_attention_stages = 3;
inline constexpr int decode_attention_max_group = 16;

// How decode attention splits the context: at least enough splits that batch x kv_heads x splits
// blocks cover the `sms` multiprocessors, and more while the blocks fit at once (`blocks_per_sm`
// resident on each: 2 for a 16-bit cache, 3 for e4m3, from the kernel's shared memory) and each
// split keeps 4 tiles (256 keys); each split a whole number of 64-key tiles, none empty. One block
// streams K and V at about 20 GB/s on the H200 (batch 1 and 4 at 32768 keys, one block per SM:
// cuDNN's time over ours 0.74 and 0.80, docs/results/2026-12-02-h200-decode-shapes), so an SM needs
// two or three to reach its share of HBM; the partial results' traffic (per split and query head
// 128 fp32 values written and read back by the combine) keeps the splits from going further.
inline constexpr int decode_attention_min_tiles_per_split = 4;
struct DecodeSplit {
  int splits = 1;
  int tiles_per_split = 1;
};
constexpr DecodeSplit decode_attention_split(int batch, int kv_heads, int context, int sms, int blocks_per_sm) {
  const int tiles = context < 1 ? 1 : (context + decode_attention_block_n - 1) / decode_attention_block_n;
  const int pairs = batch * kv_heads < 1 ? 1 : batch * kv_heads;
  const int sm_count = sms < 1 ? 1 : sms;
  const int slots = sm_count * (blocks_per_sm < 1 ? 1 : blocks_per_sm);
  const int cover = (sm_count + pairs - 1) / pairs;
  const int fill = slots / pairs < tiles / decode_attention_min_tiles_per_split
                       ? slots / pairs
                       : tiles / decode_attention_min_tiles_per_split;
  int wanted = cover > fill ? cover : fill;
  wanted = wanted < 1 ? 1 : (wanted > tiles ? tiles : wanted);
  DecodeSplit split;
  split.tiles_per_split = (tiles + wanted - 1) / wanted;
  split.splits = (tiles + split.tiles_per_split - 1) / split.tiles_per_split;
  return split;
}

// Latent attention at decode (kernels/layer/latent_attention.cu, MLA in its absorbed form): one
// block of 8 warps per (sequence, group of query heads, split of the context); 64-key tiles of the
// shared cache rows (a 512-wide latent and a 64-wide rotary key, 72 KiB a tile) in two stages, one
// block per SM. A group is 16, 32 or 64 heads (1, 2 or 4 m16 tiles): every cache tile a block reads
// serves all its heads, so more heads a block divide the shared-memory reads per FLOP (16 heads:
// 30 FLOP per cache byte, 64: 120), up to what shared memory holds (Q, the stages, P, 225 KiB at 64);
// 64-head blocks took 128 heads from 84-88 to 192-217 TFLOP/s at batch 8-128. On sm_90a a 64-head
// block runs the Hopper kernel instead (kernels/layer/latent_attention_wgmma.cu, picked by
// latent_attention_plan: 317-581 TFLOP/s there), with the same splits.
inline constexpr int latent_attention_rank = 512;
inline constexpr int latent_attention_rope = 64;
inline constexpr int latent_attention_block_n = 64;
inline constexpr int latent_attention_warps = 8;
inline constexpr int latent_attention_stages = 2;
// The m16 tiles a block takes: the most that still give every SM a (sequence, head group, key tile)
// of its own; where none does (a short cache at batch 1), the fewest, which give the most blocks.
// 128 heads at batch 1 over 1024 keys ran 15.0 us in 64-head blocks (32 blocks) against 10.5 in
// 16-head ones (128), and over 16384 keys 43.4 against 61.2 (docs/results/2026-12-03-h200-latent-attention).
constexpr int latent_attention_m_tiles(int heads, int batch, int context, int sms) {
  const int most = heads <= 16 ? 1 : (heads <= 32 ? 2 : 4);
  const long tiles = context < 1 ? 1 : (context + latent_attention_block_n - 1) / latent_attention_block_n;
  for (int m = most; m > 1; m /= 2) {
    const long groups = (heads + 16 * m - 1) / (16 * m);
    if (static_cast<long>(batch) * groups * tiles >= sms) return m;
  }
  return 1;
}
// Whether the Hopper kernel's 64-head blocks give enough work where the mma.sync kernel would take
// smaller ones (latent_attention_m_tiles < 4): batch x 64-head groups x tiles covering half the SMs.
// 128 heads at batch 1 over 4096 keys (128 items) ran 16.4 us on it against 18.8 in 32-head
// mma.sync blocks; over 1024 keys (32 items) 11.1 against 10.4 in 16-head ones (H200).
constexpr bool latent_attention_wgmma_fills(int heads, int batch, int context, int sms) {
  const long tiles = context < 1 ? 1 : (context + latent_attention_block_n - 1) / latent_attention_block_n;
  const long groups = (heads + 63) / 64;
  return 2L * batch * groups * tiles >= sms;
}

constexpr int latent_attention_smem_bytes(int m_tiles) {
  const int rows = 16 * m_tiles;
  const int row_bytes = (latent_attention_rank + latent_attention_rope) * 2;
  const int key_groups = latent_attention_warps / m_tiles;
  return (rows + latent_attention_stages * latent_attention_block_n) * row_bytes + rows * latent_attention_block_n * 2 +
         key_groups * rows * 4;
}

// The fewest 64-key tiles a split reads: four at 64-head blocks, one below. A split writes a partial
// result of heads x 514 fp32 that the combine reads back (33 KiB at 16 heads, 131 KiB at 64) for
// the cache it reads (72 KiB a tile); at 64-head blocks one- and two-tile splits lost to four-tile
// ones on the H200 (128 heads at batch 1 over 4096 keys: 23.7 us in 64 splits of one tile, 16.6 in
// 32 of two, 16.4 in 16 of four; batch 8 over 1024 keys: 16.6 us in 8 splits of two, 15.4 in 4 of
// four; docs/results/2026-12-03-h200-latent-attention-splits). At 16 heads a tile a split stays
// (a 2048-key cache at batch 1 is 32 tiles, which the SMs must share to stream it at all); 32-head
// blocks, not measured so, keep it too.
constexpr int latent_attention_min_tiles_per_split(int heads_per_block) {
  return heads_per_block < 64 ? 1 : 4;
}

// How latent attention splits the context: as many splits as keep batch x head groups x splits
// blocks within one wave over the `sms` multiprocessors (one block each fits), each split a whole
// number of 64-key tiles, at least latent_attention_min_tiles_per_split of its block's heads, none
// empty. One wave, not a cover: 32 pairs in 5 splits were 160 blocks, a second wave of 28, and ran at
// 1.65 TB/s where 8 pairs in 16 splits (128 blocks) ran at 1.83 (H200, 16 heads, 4096 keys,
// docs/results/2026-12-03-h200-latent-attention).
constexpr DecodeSplit latent_attention_split(int batch, int head_groups, int context, int sms,
                                             int heads_per_block = 16) {
  const int tiles = context < 1 ? 1 : (context + latent_attention_block_n - 1) / latent_attention_block_n;
  const int pairs = batch * head_groups < 1 ? 1 : batch * head_groups;
  const int sm_count = sms < 1 ? 1 : sms;
  const int most = tiles / latent_attention_min_tiles_per_split(heads_per_block);
  int wanted = sm_count / pairs;
  wanted = wanted > most ? most : wanted;
  wanted = wanted < 1 ? 1 : (wanted > tiles ? tiles : wanted);
  DecodeSplit split;
  split.tiles_per_split = (tiles + wanted - 1) / wanted;
  split.splits = (tiles + split.tiles_per_split - 1) / split.tiles_per_split;
  return split;
}

}  // namespace roofline::kernel_tiles
