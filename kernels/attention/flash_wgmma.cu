// Flash attention forward on Hopper (sm_90a): TMA-fed, warp-specialised, both products on wgmma,
// FlashAttention-3's schedule.
//
// One block per (batch x head, 128-query tile), head dim D = 64, 128 or 256 (or Q and K 192 wide
// with V and O 128, DV: DeepSeek's latent attention expanded for prefill), three warpgroups.
// Warpgroup 0 is the producer: it gives its registers away (setmaxnreg 24) and one thread loads the
// Q tile once, then streams K and V tiles of BN keys (128; 64 at D = 256) with TMA (3-D tensor maps
// [batch*heads][seq][d] in boxes 64 elements wide, so rows past a head's end read as zero) through
// two stages each, K and V on their own "full"/"empty" mbarriers so that a K tile is released as
// soon as S is computed. Warpgroups 1 and 2 take 240 registers each and own 64 query rows; per K/V
// tile j:
//   S_j = Q K_j^T        D/16 x wgmma m64nBNk16, A = Q and B = K from shared memory (K-major)
//   O += P_{j-1} V_{j-1}  BN/16 x wgmma m64nDk16, A = P from registers, B = V from shared memory
//                         read N-major (imm-trans-b: V is stored [key][d], d contiguous)
//   both issued back to back; the softmax of S_j (mask, running max, exp2, row sum) runs while the
//   tensor cores do P_{j-1} V_{j-1} (FA3's intra-warpgroup overlap); then O is rescaled and S_j
//   packed into P_j, whose registers are the A fragments of the register-A wgmma (the accumulator
//   layout of m64nN is, per warp, that fragment layout), so P never goes through shared memory.
// O is divided by the row sum once at the end. The two consumers take turns issuing (ping-pong on
// two named barriers), so that one's softmax also runs under the other's products.
//
// Persistent blocks (one per SM; full masks, and causal up to N 2048) run their query tiles as one
// stream: a tile's last P V is issued with the next tile's first S, so that the softmax of that S --
// which has no P V of its own to hide under -- runs under it, and the finished O is stored while the
// other consumer's products run; Q has two stages where they fit (head dims 64 and 128, FP8), and
// the producer loads the next tile's Q right after the current tile's first K.
//
// FP8 (e4m3 Q, K, V, bf16 O; head dims 128 and 256): the same kernel with both products on the 8-bit
// wgmma (k = 32). 8-bit wgmma reads B K-major only, so V arrives transposed (a pre-pass writes V^T,
// its keys of each 32 in the order the P registers hold them: fp8_p_key), and P is packed from S's
// accumulators without moving values between threads.
//
// Blocks are ordered for L2 (FA3's LPT schedule): the heads are cut into sections whose K and V fit
// in a share of L2, and within a section the query tiles go heaviest first (causal: the last rows)
// with the section's heads fastest, so the blocks that read one head's K and V run together.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../attention.hpp"
#include "../cuda_check.cuh"
#include "../online_softmax.cuh"
#include "../tc_ptx.cuh"
#include "../tma_host.cuh"
#include "../wgmma.cuh"
#include "flash_internal.cuh"

namespace roofline::kernels::detail {
namespace {

// The kernel's sizes for elements T at head dims D (Q, K) and DV (V, O) (kernel_tiles::flash_wgmma and
// flash_wgmma_fp8 hold the tilings the benchmarks read).
template <typename T, int D, int DV = D>
struct Tiles {
  static constexpr bool kFp8 = TraitsOf<T>::bits == 8;
  static constexpr kernel_tiles::FlashTiling tiling =
      kFp8 ? kernel_tiles::flash_wgmma_fp8(D) : kernel_tiles::flash_wgmma(D, DV);
  static constexpr int kBM = tiling.block_m;
  static constexpr int kBN = tiling.block_n;
  static constexpr int kStages = tiling.kv_stages;
  static constexpr int kQStages = tiling.q_stages;
  static constexpr int kThreads = tiling.warps * 32;
  static_assert((kFp8 ? kernel_tiles::flash_wgmma_fp8_runs(D) && DV == D : kernel_tiles::flash_wgmma_runs(D, DV)) &&
                    kBM == 128 && kThreads == 384 && kBN % 16 == 0,
                "a producer warpgroup + two 64-row consumer warpgroups; d in boxes of 128 bytes");
  static constexpr int kElementBytes = TraitsOf<T>::bits / 8;
  static constexpr int kBoxElements = 128 / kElementBytes;  // one 128-byte row (the 128-byte swizzle)
  static constexpr int kBoxes = D / kBoxElements;           // d in boxes of 128-byte rows
  static constexpr int kVBoxes = DV / kBoxElements;         // V's width in boxes
  static constexpr int kQBoxBytes = kBM * 128;              // [128 rows][one box of d]
  static constexpr uint32_t kKvBoxBytes = kBN * 128;        // [kBN keys][one box of d]
  static constexpr int kQBytes = kBoxes * kQBoxBytes;
  // One K tile and one V tile; FP8 V tiles are transposed, [D rows][128 keys] of one byte: the size of K's.
  static constexpr int kTileBytes = kBoxes * kKvBoxBytes;
  static constexpr int kVTileBytes = kVBoxes * kKvBoxBytes;
  static_assert(!kFp8 || (kBN == 128 && D * kBN == kTileBytes), "FP8 V tiles: one 128-byte row of keys per d");
  // k steps of the products: 32 bytes of k (16 elements of 16 bits, 32 of 8) per wgmma.
  static constexpr int kQkSteps = D * kElementBytes / 32;
  static constexpr int kPvSteps = kBN * kElementBytes / 32;
  // Q full and empty per Q stage; K full, K empty, V full, V empty per K/V stage
  static constexpr int kBarriers = 2 * kQStages + 4 * kStages;
  static constexpr int kSmemBytes = kQStages * kQBytes + kStages * (kTileBytes + kVTileBytes) + 8 * kBarriers + 1024;
  static_assert(kSmemBytes == tiling.smem_bytes);
};

// The output element: FP8 attention writes bf16 (what the next projection reads or quantises).
template <typename T>
using OutputOf = std::conditional_t<TraitsOf<T>::bits == 8, __nv_bfloat16, T>;

// FP8: the probabilities are computed as 2^8 P (the exponent offset below), which puts them in [0, 256]
// where e4m3 has its normal range rather than in [0, 1] where small ones fall to subnormals; the row
// sum carries the same factor, so it cancels in O / l.
template <typename T>
inline constexpr float kExpOffset = TraitsOf<T>::bits == 8 ? 8.0f : 0.0f;

// The key order of an FP8 P fragment. S's accumulators hold, per thread, keys {2c, 2c+1, 8+2c, 9+2c}
// of each 16 (c = lane % 4), while the 8-bit A fragment takes k {4c .. 4c+3} of each 16: rather than
// move values between threads, P's registers keep the accumulator's values and V^T's keys are
// stored in the matching order. Position p of each 32 keys holds key fp8_p_key(p).
__host__ __device__ constexpr int fp8_p_key(int p) {
  const int q = p % 16;
  return 16 * (p / 16) + 2 * (q / 4) + (q & 1) + 8 * ((q >> 1) & 1);
}

constexpr int kConsumerThreads = 256;  // warpgroups 1 and 2; warpgroup 0 is the producer
// setmaxnreg: 24 x 128 + 240 x 256 = 64,512 of the SM's 65,536 registers.
constexpr uint32_t kProducerRegisters = 24;
constexpr uint32_t kConsumerRegisters = 240;
// The share of L2 the K and V of one section of heads may take. FA3 takes 32 MB of H100's 50; on
// the H200, five interleaved runs of each size (docs/results/2026-12-04-h200-flash-chained-tiles,
// call 5) ran full masks 0.93-1.00x the time in 8 MB sections (Nsight Compute had shown the 32 MB
// ones reading K and V from HBM about three times over: 1.6 GB at N 4096 against cuDNN's 0.53),
// and causal grids with a block per tile (N >= 4096) 0.87-0.99x. Persistent causal grids keep 32
// MB: their fixed stride balances the uneven tiles only with the heaviest of many heads first
// (N 1024 ran 1.24x the time in 8 MB sections).
constexpr long long kL2SectionBytes = 8ll << 20;
constexpr long long kL2SectionBytesStridedCausal = 32ll << 20;
// Persistent blocks where a query tile reads at most this many keys on average (N <= 2048 causal, 12
// tiles of 128 keys; full masks at every length). At 128-key tiles they ran N <= 1024 in 0.75-0.93x
// the time of a block per tile, while at N >= 4096 causal they ran 1.08-1.14x (static striding
// balances the uneven causal tiles worse; docs/results/2026-12-02-h200-flash-fa3). Causal N 2048,
// once tiles were chained and Q double-buffered, ran 0.89-1.01x (median of six interleaved runs
// each; docs/results/2026-12-04-h200-flash-chained-tiles). Full masks have equal tiles, which a
// fixed stride balances exactly: persistent at every length (N 2048-8192 ran 0.92-0.97x the time
// of a block per tile, 16k-32k 0.99-1.00x).
constexpr double kPersistentMaxKeys = 1536.0;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Issues S = Q K^T for one K tile as one wgmma group (not waited for).
template <typename T, int D, int DV>
__device__ __forceinline__ void issue_qk(float (&s_acc)[Tiles<T, D, DV>::kBN / 2], uint32_t smem_q, uint32_t k_tile,
                                         int consumer) {
  using S = Tiles<T, D, DV>;
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < S::kQkSteps; ++kk) {
    const uint32_t k_offset = static_cast<uint32_t>(kk % 4) * 32;  // 32 bytes further along d
    const uint64_t desc_q =
        ptx::wgmma_desc_sw128(smem_q + static_cast<uint32_t>(kk / 4) * S::kQBoxBytes + consumer * 64 * 128 + k_offset);
    const uint64_t desc_k = ptx::wgmma_desc_sw128(k_tile + static_cast<uint32_t>(kk / 4) * S::kKvBoxBytes + k_offset);
    if constexpr (S::kFp8) {
      ptx::wgmma_m64n128k32_ss<T>(s_acc, desc_q, desc_k, kk > 0 ? 1 : 0);  // the first k step overwrites
    } else {
      ptx::wgmma_m64nNk16_ss<T, S::kBN>(s_acc, desc_q, desc_k, kk > 0 ? 1 : 0);
    }
  }
  ptx::wgmma_commit();
}

// Issues O += P V for one V tile as one wgmma group (not waited for). P must stay untouched until
// the group completes.
template <typename T, int D, int DV>
__device__ __forceinline__ void issue_pv(float (&o_acc)[DV / 2], const uint32_t (&p)[Tiles<T, D, DV>::kPvSteps][4],
                                         uint32_t v_tile, uint32_t v_leading_bytes, uint32_t v_stride_bytes) {
  ptx::wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < Tiles<T, D, DV>::kPvSteps; ++kt) {
    if constexpr (Tiles<T, D, DV>::kFp8) {
      // V^T: D rows of 128 keys (K-major, as K in S = Q K^T); keys 32kt.. are 32 bytes along each row.
      ptx::wgmma_m64nNk32_rs<T, D>(o_acc, p[kt], ptx::wgmma_desc_sw128(v_tile + kt * 32), 1);
    } else {
      // keys 16kt..16kt+15: 16 rows of 128 bytes further into each box; the next 64-wide d box is
      // kKvBoxBytes away (the leading byte offset), 8-key groups 1024 bytes (the stride offset).
      ptx::wgmma_m64nNk16_rs<T, DV>(
          o_acc, p[kt], ptx::wgmma_desc_sw128_mn(v_tile + kt * 16 * 128, v_leading_bytes, v_stride_bytes), 1);
    }
  }
  ptx::wgmma_commit();
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// The K/V tiles the query tile starting at row q0 reads: all, or (causal) none past its last row.
// The kernel's loops and the host's choice of persistent blocks both count with it.
template <typename T, int D, int DV>
__host__ __device__ constexpr int kv_tiles_of(int q0, int seq, bool causal) {
  constexpr int bm = Tiles<T, D, DV>::kBM;
  constexpr int bn = Tiles<T, D, DV>::kBN;
  const int all = (seq + bn - 1) / bn;
  const int through_last_row = (q0 + bm + bn - 1) / bn;
  return causal && through_last_row < all ? through_last_row : all;
}

// The K/V tiles consumer c (rows q0 + 64c .. + 63) computes: causal, none past its last row.
template <typename T, int D, int DV>
__host__ __device__ constexpr int consumer_tiles_of(int q0, int kv_tiles, int consumer, bool causal) {
  return causal ? min(kv_tiles, (q0 + consumer * 64 + 63) / Tiles<T, D, DV>::kBN + 1) : kv_tiles;
}

// The work of one query tile: its (batch x head) row, first query, KV head and K/V tiles.
struct QueryTile {
  int bh;
  int q0;
  int kv_index;
  int kv_tiles;
};

// Tile `index` in L2 order: sections of section_rows heads; within a section the heaviest tiles
// (causal: the last rows) first, the section's heads fastest.
template <typename T, int D, int DV>
__device__ __forceinline__ QueryTile query_tile(int index, int heads, int group, int seq, int rows, int section_rows,
                                                int causal) {
  constexpr int bm = Tiles<T, D, DV>::kBM;
  const int q_tiles = (seq + bm - 1) / bm;
  const int per_section = section_rows * q_tiles;
  const int section = index / per_section;
  const int in_section = index % per_section;
  const int first_bh = section * section_rows;
  const int section_here = min(section_rows, rows - first_bh);
  const int rank = in_section / section_here;  // 0: the heaviest tile
  QueryTile t;
  t.bh = first_bh + in_section % section_here;
  t.q0 = (causal ? q_tiles - 1 - rank : rank) * bm;
  t.kv_index = (t.bh / heads) * (heads / group) + (t.bh % heads) / group;
  t.kv_tiles = kv_tiles_of<T, D, DV>(t.q0, seq, causal != 0);
  return t;
}

// map_v: V [rows][seq][d] for 16-bit T; for FP8, V^T [rows][d][seq, padded] in fp8_p_key's key order.
// out_scale multiplies O (FP8: V's descale).
template <typename T, int D, int DV>
__global__ void __launch_bounds__(Tiles<T, D, DV>::kThreads, 1)
    flash_wgmma_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                       const __grid_constant__ CUtensorMap map_v, OutputOf<T>* __restrict__ o, int heads, int group,
                       int seq, int rows, int section_rows, float scale_log2, float out_scale, int causal,
                       uint32_t v_leading_bytes, uint32_t v_stride_bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Tiles<T, D, DV>;
  constexpr int kBM = S::kBM;
  constexpr int kBN = S::kBN;
  constexpr int kStages = S::kStages;
  constexpr int kTileBytes = S::kTileBytes;
  constexpr int kVTileBytes = S::kVTileBytes;
  using OutTraits = TraitsOf<OutputOf<T>>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const uint32_t smem = (raw + 1023u) & ~1023u;
  const uint32_t smem_q = smem;
  const uint32_t smem_k = smem_q + S::kQStages * S::kQBytes;
  const uint32_t smem_v = smem_k + kStages * kTileBytes;
  const uint32_t q_full = smem_v + kStages * kVTileBytes;
  const uint32_t q_empty = q_full + 8 * S::kQStages;
  const uint32_t k_full = q_empty + 8 * S::kQStages;
  const uint32_t k_empty = k_full + 8 * kStages;
  const uint32_t v_full = k_empty + 8 * kStages;
  const uint32_t v_empty = v_full + 8 * kStages;

  // Block b takes tiles b, b + gridDim.x, ... (one tile where the grid has a block per tile; see
  // launch for when it is persistent); the K/V ring's tile count runs on across query tiles, so
  // the next tile's Q and first K/V load while this one finishes.
  const int tiles = rows * ((seq + kBM - 1) / kBM);
  // 0: the producer; 1, 2: consumers. Read through a shuffle so that ptxas sees a warp-uniform value:
  // it applies setmaxnreg's register counts only to code whose branch it can prove uniform.
  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);

  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kQStages; ++s) {
      ptx::mbarrier_init(q_full + 8 * s, 1);
      ptx::mbarrier_init(q_empty + 8 * s, kConsumerThreads);
    }
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(k_full + 8 * s, 1);
      ptx::mbarrier_init(k_empty + 8 * s, kConsumerThreads);
      ptx::mbarrier_init(v_full + 8 * s, 1);
      ptx::mbarrier_init(v_empty + 8 * s, kConsumerThreads);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  auto stage = [](int j) { return static_cast<uint32_t>(j % kStages); };
  auto parity = [](int j) { return static_cast<uint32_t>(j / kStages) & 1u; };
  // The Q ring: query tile `count` of this block in stage count % kQStages.
  auto q_stage = [](int count) { return static_cast<uint32_t>(count % S::kQStages); };
  auto q_parity = [](int count) { return static_cast<uint32_t>(count / S::kQStages) & 1u; };

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // K tiles are kBoxes boxes of d wide, V tiles kVBoxes (fewer where V is narrower than K).
      auto load = [&](uint32_t full, uint32_t empty, uint32_t ring, const CUtensorMap* map, int j, int key_tile,
                      int kv_index, bool transposed, int boxes) {
        const uint32_t tile_bytes = static_cast<uint32_t>(boxes) * S::kKvBoxBytes;
        ptx::mbarrier_wait(empty + 8 * stage(j), parity(j) ^ 1u);
        ptx::mbarrier_arrive_expect_tx(full + 8 * stage(j), tile_bytes);
        const uint32_t tile = ring + stage(j) * tile_bytes;
        if (transposed) {  // FP8 V^T: one box of [D rows][128 keys]
          ptx::tma_load_3d(tile, map, full + 8 * stage(j), key_tile * kBN, 0, kv_index);
          return;
        }
        for (int box = 0; box < boxes; ++box) {
          ptx::tma_load_3d(tile + box * S::kKvBoxBytes, map, full + 8 * stage(j), S::kBoxElements * box, key_tile * kBN,
                           kv_index);
        }
      };
      int ring = 0;  // K/V tiles loaded so far
      int count = 0;
      for (int index = static_cast<int>(blockIdx.x); index < tiles; index += static_cast<int>(gridDim.x), ++count) {
        const QueryTile t = query_tile<T, D, DV>(index, heads, group, seq, rows, section_rows, causal);
        // Query tile `c` of this block (`qt`) into its Q stage.
        auto load_q = [&](int c, const QueryTile& qt) {
          const uint32_t full = q_full + 8 * q_stage(c);
          ptx::mbarrier_wait(q_empty + 8 * q_stage(c), q_parity(c) ^ 1u);
          ptx::mbarrier_arrive_expect_tx(full, S::kQBytes);
#pragma unroll
          for (int box = 0; box < S::kBoxes; ++box) {
            ptx::tma_load_3d(smem_q + q_stage(c) * S::kQBytes + box * S::kQBoxBytes, &map_q, full,
                             S::kBoxElements * box, qt.q0, qt.bh);
          }
        };
        // With two Q stages the next tile's Q is loaded right after this tile's first K (its stage
        // was freed by the tile before this one). Loaded after this tile's last V, as it was until
        // 2026-12-04, it was often still in flight when the consumers chained into the next tile:
        // Nsight Compute sampled them waiting on Q at 1.3% of all samples at N 1024
        // (docs/results/2026-12-04-h200-flash-early-q).
        if (S::kQStages == 1 || count == 0) load_q(count, t);
        // K runs one tile ahead of V: a consumer needs K_j and V_{j-1} together.
        load(k_full, k_empty, smem_k, &map_k, ring, 0, t.kv_index, false, S::kBoxes);
        if (S::kQStages > 1 && index + static_cast<int>(gridDim.x) < tiles) {
          load_q(count + 1, query_tile<T, D, DV>(index + static_cast<int>(gridDim.x), heads, group, seq, rows,
                                                 section_rows, causal));
        }
        for (int j = 1; j < t.kv_tiles; ++j) {
          load(k_full, k_empty, smem_k, &map_k, ring + j, j, t.kv_index, false, S::kBoxes);
          load(v_full, v_empty, smem_v, &map_v, ring + j - 1, j - 1, t.kv_index, S::kFp8, S::kVBoxes);
        }
        load(v_full, v_empty, smem_v, &map_v, ring + t.kv_tiles - 1, t.kv_tiles - 1, t.kv_index, S::kFp8, S::kVBoxes);
        ring += t.kv_tiles;
      }
      // The consumers wait without a watchdog (mbarrier_wait_untimed); the producer's own waits
      // cover every load but the last ones, which it waits for here: a load that never lands
      // then traps instead of hanging the GPU.
      for (int c = max(0, count - S::kQStages); c < count; ++c)
        ptx::mbarrier_wait(q_full + 8 * q_stage(c), q_parity(c));
      for (int j = max(0, ring - kStages); j < ring; ++j) {
        ptx::mbarrier_wait(k_full + 8 * stage(j), parity(j));
        ptx::mbarrier_wait(v_full + 8 * stage(j), parity(j));
      }
    }
  } else {
    ptx::setmaxnreg_inc<kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int t_in_wg = static_cast<int>(threadIdx.x) % 128;
    const int lane = t_in_wg % 32;
    auto k_tile = [&](int j) { return smem_k + stage(j) * kTileBytes; };
    auto v_tile = [&](int j) { return smem_v + stage(j) * kVTileBytes; };
    auto wait_k = [&](int j) { ptx::mbarrier_wait_untimed(k_full + 8 * stage(j), parity(j)); };
    auto wait_v = [&](int j) { ptx::mbarrier_wait_untimed(v_full + 8 * stage(j), parity(j)); };
    auto release_k = [&](int j) { ptx::mbarrier_arrive(k_empty + 8 * stage(j)); };
    auto release_v = [&](int j) { ptx::mbarrier_arrive(v_empty + 8 * stage(j)); };

    // Ping-pong: the two consumers take turns issuing their products (named barriers 1 and 2, one
    // per consumer, each passed when its owner syncs and the other consumer arrives), so that one
    // consumer's softmax runs while the tensor cores do the other's S and P V. Consumer 0 starts:
    // consumer 1 arrives on consumer 0's barrier once up front. The turns must pair up to the end:
    // where consumer 0 computes fewer tiles than consumer 1 (causal, with tiles narrower than the
    // query tile: the diagonal then ends a tile earlier for the upper 64 rows), it takes the
    // difference as empty turns.
    const int my_turn = 1 + consumer;
    const int their_turn = 2 - consumer;
    if (consumer == 1) ptx::named_barrier_arrive(their_turn, kConsumerThreads);

    // The output of a finished query tile: O / l of this thread's rows row0 and row0 + 8.
    auto store_o = [&](const float(&o_acc)[DV / 2], const float(&sum)[2], int bh, int row0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float total = sum[h];
        total += __shfl_xor_sync(0xffffffffu, total, 1);
        total += __shfl_xor_sync(0xffffffffu, total, 2);
        const float inv = total > 0.0f ? out_scale / total : 0.0f;
        const int row = row0 + 8 * h;
        if (row >= seq) continue;
        OutputOf<T>* out_row = o + (static_cast<std::size_t>(bh) * seq + row) * DV;
#pragma unroll
        for (int n8 = 0; n8 < DV / 8; ++n8) {
          *reinterpret_cast<uint32_t*>(out_row + n8 * 8 + (lane % 4) * 2) =
              OutTraits::pack(o_acc[4 * n8 + 2 * h] * inv, o_acc[4 * n8 + 2 * h + 1] * inv);
        }
      }
    };

    float o_acc[DV / 2];
#pragma unroll
    for (int i = 0; i < DV / 2; ++i) o_acc[i] = 0.0f;
    ptx::fence_registers(o_acc);
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};
    float alpha[2] = {1.0f, 1.0f};
    uint32_t p[S::kPvSteps][4];
    float s_acc[kBN / 2];
    // Chained query tiles: a persistent block's last P V of one query tile is issued with the next
    // tile's first S, in the same turn, so that the softmax of that first S (which has no P V of its
    // own to hide under) runs under the last P V, and the finished tile's O is stored while the
    // other consumer's products run. `pending`: P (of K/V tile pending_v) still waits for its P V;
    // the tile it belongs to is (done_bh, done_row0), its row sums done_sum.
    bool pending = false;
    int pending_v = 0;
    int done_bh = 0;
    int done_row0 = 0;
    float done_sum[2] = {0.0f, 0.0f};

    int ring = 0;
    int count = 0;
    for (int index = static_cast<int>(blockIdx.x); index < tiles; index += static_cast<int>(gridDim.x), ++count) {
      const QueryTile tile = query_tile<T, D, DV>(index, heads, group, seq, rows, section_rows, causal);
      const int first_row = tile.q0 + consumer * 64;                // this warpgroup's rows: first_row .. +63
      const int row0 = first_row + (t_in_wg / 32) * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
      // Tiles this warpgroup computes; causal: none past its last row (it still waits on and
      // releases the block's remaining tiles, in order, so that both warpgroups' arrivals stay in step).
      const int wg_tiles = consumer_tiles_of<T, D, DV>(tile.q0, tile.kv_tiles, consumer, causal != 0);
      const int turns = consumer_tiles_of<T, D, DV>(tile.q0, tile.kv_tiles, 1, causal != 0);
      const uint32_t q_tile = smem_q + q_stage(count) * S::kQBytes;
      const uint32_t q_release = q_empty + 8 * q_stage(count);
      // The previous tile's row sums go with its pending P V; this tile's softmax starts afresh.
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        done_sum[h] = row_sum[h];
        row_max[h] = -INFINITY;
        row_sum[h] = 0.0f;
      }

      ptx::mbarrier_wait_untimed(q_full + 8 * q_stage(count), q_parity(count));
      ptx::named_barrier_sync(my_turn, kConsumerThreads);
      wait_k(ring);
      // Each branch issues and waits for its own products: ptxas serialises wgmma whose waits it
      // cannot match to their issues across a branch (C7514).
      if (pending) {  // S_0 with the previous tile's last P V
        issue_qk<T, D, DV>(s_acc, q_tile, k_tile(ring), consumer);
        wait_v(pending_v);  // (O was rescaled for this P V when the previous tile ended)
        issue_pv<T, D, DV>(o_acc, p, v_tile(pending_v), v_leading_bytes, v_stride_bytes);
        ptx::named_barrier_arrive(their_turn, kConsumerThreads);
        ptx::wgmma_wait<1>();
        ptx::fence_registers(s_acc);
        release_k(ring);
        if (wg_tiles == 1) ptx::mbarrier_arrive(q_release);  // Q's last use: a later tile's Q may load
        softmax_scores<kBN>(s_acc, row_max, row_sum, alpha, 0, row0, first_row, lane, seq, causal, scale_log2,
                            kExpOffset<T>);
        ptx::wgmma_wait<0>();
        ptx::fence_registers(o_acc);
        fence_words(p);
        release_v(pending_v);
        pack_p<T, kBN>(s_acc, p);
        store_o(o_acc, done_sum, done_bh, done_row0);  // the previous tile is complete
#pragma unroll
        for (int i = 0; i < DV / 2; ++i) o_acc[i] = 0.0f;
        ptx::fence_registers(o_acc);
      } else {
        issue_qk<T, D, DV>(s_acc, q_tile, k_tile(ring), consumer);
        ptx::named_barrier_arrive(their_turn, kConsumerThreads);
        ptx::wgmma_wait<0>();
        ptx::fence_registers(s_acc);
        release_k(ring);
        if (wg_tiles == 1) ptx::mbarrier_arrive(q_release);
        softmax_scores<kBN>(s_acc, row_max, row_sum, alpha, 0, row0, first_row, lane, seq, causal, scale_log2,
                            kExpOffset<T>);
        pack_p<T, kBN>(s_acc, p);
      }
      for (int j = 1; j < wg_tiles; ++j) {
        ptx::named_barrier_sync(my_turn, kConsumerThreads);
        wait_k(ring + j);
        issue_qk<T, D, DV>(s_acc, q_tile, k_tile(ring + j), consumer);
        rescale<DV>(o_acc, alpha);  // to the running max of P_{j-1}, under S_j's product
        wait_v(ring + j - 1);
        issue_pv<T, D, DV>(o_acc, p, v_tile(ring + j - 1), v_leading_bytes, v_stride_bytes);
        ptx::named_barrier_arrive(their_turn, kConsumerThreads);
        ptx::wgmma_wait<1>();  // S_j is done; P_{j-1} V_{j-1} may still run
        ptx::fence_registers(s_acc);
        release_k(ring + j);
        if (j == wg_tiles - 1) ptx::mbarrier_arrive(q_release);
        softmax_scores<kBN>(s_acc, row_max, row_sum, alpha, j * kBN, row0, first_row, lane, seq, causal, scale_log2,
                            kExpOffset<T>);
        ptx::wgmma_wait<0>();
        ptx::fence_registers(o_acc);
        fence_words(p);
        release_v(ring + j - 1);
        pack_p<T, kBN>(s_acc, p);
      }
      // Chain into the next tile where this block has one and this warpgroup computes every K/V tile
      // of this one (no skipped tiles to wait through while a V stage is held, and no empty turns).
      pending = index + static_cast<int>(gridDim.x) < tiles && wg_tiles == tile.kv_tiles;
      if (pending) {
        rescale<DV>(o_acc, alpha);  // here, with no product in flight, rather than under S_0
        pending_v = ring + wg_tiles - 1;
        done_bh = tile.bh;
        done_row0 = row0;
      } else {
        rescale<DV>(o_acc, alpha);
        wait_v(ring + wg_tiles - 1);
        issue_pv<T, D, DV>(o_acc, p, v_tile(ring + wg_tiles - 1), v_leading_bytes, v_stride_bytes);
        for (int j = wg_tiles; j < turns; ++j) {  // consumer 0's empty turns (see the ping-pong above)
          ptx::named_barrier_sync(my_turn, kConsumerThreads);
          ptx::named_barrier_arrive(their_turn, kConsumerThreads);
        }
        ptx::wgmma_wait<0>();
        ptx::fence_registers(o_acc);
        fence_words(p);
        release_v(ring + wg_tiles - 1);
        store_o(o_acc, row_sum, tile.bh, row0);
#pragma unroll
        for (int i = 0; i < DV / 2; ++i) o_acc[i] = 0.0f;
        ptx::fence_registers(o_acc);
      }
      for (int j = wg_tiles; j < tile.kv_tiles; ++j) {
        wait_k(ring + j);
        release_k(ring + j);
        wait_v(ring + j);
        release_v(ring + j);
      }
      ring += tile.kv_tiles;
    }
  }
#else
  __trap();
#endif
}

// Keys a query tile reads on average.
template <typename T, int D, int DV>
double mean_kv_keys(int seq, bool causal) {
  constexpr int bm = Tiles<T, D, DV>::kBM;
  const int q_tiles = (seq + bm - 1) / bm;
  long long total = 0;
  for (int q = 0; q < q_tiles; ++q) total += kv_tiles_of<T, D, DV>(q * bm, seq, causal);
  return static_cast<double>(total) * Tiles<T, D, DV>::kBN / q_tiles;
}

// [rows][seq][width] with rows = batch*heads (or batch*kv_heads), boxes of one 128-byte row of the
// width x box_seq positions.
template <typename T, int D, int DV>
CUtensorMap make_map(StorageFormat type, const void* base, int rows, int seq, int width, int box_seq) {
  using S = Tiles<T, D, DV>;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(width), static_cast<cuuint64_t>(seq),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(width) * S::kElementBytes,
                                 static_cast<cuuint64_t>(seq) * width * S::kElementBytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(S::kBoxElements), static_cast<cuuint32_t>(box_seq), 1};
  return make_tensor_map_sw128(type, base, 3, dims, strides, box, "flash wgmma");
}

// FP8 V^T [rows][d][seq_pad] in boxes of [D rows][128 keys].
template <int D>
CUtensorMap make_transposed_map(const void* base, int rows, int seq_pad) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(seq_pad), static_cast<cuuint64_t>(D),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(seq_pad), static_cast<cuuint64_t>(seq_pad) * D};
  const cuuint32_t box[3] = {128, static_cast<cuuint32_t>(D), 1};
  return make_tensor_map_sw128(StorageFormat::fp8_e4m3, base, 3, dims, strides, box, "flash wgmma fp8 (V^T)");
}

// FP8 V [rows][seq][d] -> V^T [rows][d][seq_pad], the keys of each 32 in fp8_p_key's order and keys
// past seq zero (their probabilities are zero; a zero keeps 0 x V finite). One block per 64 keys x 64
// dims: 16-byte loads of key rows into shared memory, 16-byte stores of d rows.
constexpr int kTransposeTile = 64;
constexpr int kTransposeThreads = 256;
constexpr int kSeqPad = 128;  // V^T rows padded to whole 128-key tiles (16-byte aligned for TMA)

__global__ void __launch_bounds__(kTransposeThreads)
    transpose_v_fp8_kernel(const uint8_t* __restrict__ v, uint8_t* __restrict__ vt, int seq, int seq_pad, int d) {
  __shared__ __align__(16) uint8_t tile[kTransposeTile][kTransposeTile + 16];
  const int row = static_cast<int>(blockIdx.z);
  const int key0 = static_cast<int>(blockIdx.x) * kTransposeTile;
  const int d0 = static_cast<int>(blockIdx.y) * kTransposeTile;
  const int t = static_cast<int>(threadIdx.x);
  {
    const int key = t / 4;
    const int dim = 16 * (t % 4);
    uint4 value = make_uint4(0, 0, 0, 0);
    if (key0 + key < seq) {
      value = *reinterpret_cast<const uint4*>(v + (static_cast<std::size_t>(row) * seq + key0 + key) * d + d0 + dim);
    }
    *reinterpret_cast<uint4*>(&tile[key][dim]) = value;
  }
  __syncthreads();
  const int dim = t / 4;
  const int first = 16 * (t % 4);  // positions first .. first + 15 of the tile's 64
  uint32_t words[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int position = first + 4 * w + b;
      const int key = 32 * (position / 32) + fp8_p_key(position % 32);
      word |= static_cast<uint32_t>(tile[key][dim]) << (8 * b);
    }
    words[w] = word;
  }
  *reinterpret_cast<uint4*>(vt + (static_cast<std::size_t>(row) * d + d0 + dim) * seq_pad + key0 + first) =
      make_uint4(words[0], words[1], words[2], words[3]);
}

int padded_seq(int seq) {
  return (seq + kSeqPad - 1) / kSeqPad * kSeqPad;
}

// v_transposed: FP8's V^T (map_v reads it); nullptr for 16-bit T (map_v reads v).
template <typename T, int D, int DV>
void launch(StorageFormat type, const AttentionShape& shape, float scale, float out_scale, const void* q, const void* k,
            const void* v, const void* v_transposed, void* o, bool swap_v_offsets, cudaStream_t stream) {
  using S = Tiles<T, D, DV>;
  const int kv_rows = shape.batch * shape.kv_heads;
  const CUtensorMap map_q = make_map<T, D, DV>(type, q, shape.batch * shape.heads, shape.seq, D, S::kBM);
  const CUtensorMap map_k = make_map<T, D, DV>(type, k, kv_rows, shape.seq, D, S::kBN);
  const CUtensorMap map_v = S::kFp8 ? make_transposed_map<D>(v_transposed, kv_rows, padded_seq(shape.seq))
                                    : make_map<T, D, DV>(type, v, kv_rows, shape.seq, DV, S::kBN);
  ROOFLINE_CUDA_CHECK(
      cudaFuncSetAttribute(flash_wgmma_kernel<T, D, DV>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes));
  const long long rows = static_cast<long long>(shape.batch) * shape.heads;
  const long long q_tiles = (shape.seq + S::kBM - 1) / S::kBM;
  require(rows * q_tiles <= 0x7fffffff, "flash attention (wgmma): grid too large for this shape");
  // Persistent (one block per SM, the most the shared memory allows) where the query tiles are equal
  // work (a full mask) or short work -- at most kPersistentMaxKeys keys on average, where a tile's
  // start and end are a large share of it; longer causal tiles get a block each, and the hardware's
  // block scheduler hands the next (lighter) tile to whichever SM frees first, which balanced causal
  // work better than a fixed stride (docs/results/2026-12-02-h200-flash-fa3).
  const long long tiles = rows * q_tiles;
  const bool persistent = !shape.causal || mean_kv_keys<T, D, DV>(shape.seq, shape.causal) <= kPersistentMaxKeys;
  const long long blocks = persistent ? std::min<long long>(tiles, current_device_sms()) : tiles;
  // Query heads per L2 section: as many KV heads' K and V as fit in the share, times the group
  // (a KV head's query heads are consecutive rows), at least one group.
  const int group = shape.heads / shape.kv_heads;
  const long long kv_head_bytes = 1ll * shape.seq * (D + DV) * S::kElementBytes;
  const long long section_bytes = persistent && shape.causal ? kL2SectionBytesStridedCausal : kL2SectionBytes;
  const long long section_rows = std::min(rows, std::max(1ll, section_bytes / kv_head_bytes) * group);
  flash_wgmma_kernel<T, D, DV><<<static_cast<unsigned>(blocks), S::kThreads, S::kSmemBytes, stream>>>(
      map_q, map_k, map_v, static_cast<OutputOf<T>*>(o), shape.heads, group, shape.seq, static_cast<int>(rows),
      static_cast<int>(section_rows), scale * 1.4426950408889634f, out_scale, shape.causal ? 1 : 0,
      swap_v_offsets ? 1024u : S::kKvBoxBytes, swap_v_offsets ? S::kKvBoxBytes : 1024u);
  ROOFLINE_CHECK_LAUNCH("flash_wgmma_kernel");
}

}  // namespace

void flash_wgmma_forward(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream) {
  const int value_dim = shape.head_dim_v == 0 ? shape.head_dim : shape.head_dim_v;
  require(kernel_tiles::flash_wgmma_runs(shape.head_dim, value_dim),
          "flash attention (wgmma): head_dim must be 64, 128 or 256 (or 192 with head_dim_v 128), got " +
              std::to_string(shape.head_dim) + " with head_dim_v " + std::to_string(value_dim));
  dispatch_storage<attention_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    if (value_dim != shape.head_dim) {
      launch<T, 192, 128>(type, shape, scale, 1.0f, q, k, v, nullptr, o, swap_v_offsets, stream);
      return;
    }
    switch (shape.head_dim) {
      case 64: launch<T, 64, 64>(type, shape, scale, 1.0f, q, k, v, nullptr, o, swap_v_offsets, stream); break;
      case 128: launch<T, 128, 128>(type, shape, scale, 1.0f, q, k, v, nullptr, o, swap_v_offsets, stream); break;
      default: launch<T, 256, 256>(type, shape, scale, 1.0f, q, k, v, nullptr, o, swap_v_offsets, stream); break;
    }
  });
}

std::size_t flash_fp8_transposed_v_bytes(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.kv_heads) *
         static_cast<std::size_t>(shape.head_dim) * static_cast<std::size_t>(padded_seq(shape.seq));
}

void flash_wgmma_fp8_forward(const AttentionShape& shape, float scale, const Fp8Descale& descale, const void* q,
                             const void* k, const void* v, void* o, void* workspace, cudaStream_t stream) {
  require(
      kernel_tiles::flash_wgmma_fp8_runs(shape.head_dim) &&
          (shape.head_dim_v == 0 || shape.head_dim_v == shape.head_dim),
      "flash attention (wgmma, fp8): head_dim must be 128 or 256 (V as wide), got " + std::to_string(shape.head_dim));
  const long long kv_rows = static_cast<long long>(shape.batch) * shape.kv_heads;
  require(kv_rows <= 65535, "flash attention (wgmma, fp8): batch x kv_heads must be at most 65535");
  const int seq_pad = padded_seq(shape.seq);
  const dim3 grid(static_cast<unsigned>(seq_pad / kTransposeTile),
                  static_cast<unsigned>(shape.head_dim / kTransposeTile), static_cast<unsigned>(kv_rows));
  transpose_v_fp8_kernel<<<grid, kTransposeThreads, 0, stream>>>(
      static_cast<const uint8_t*>(v), static_cast<uint8_t*>(workspace), shape.seq, seq_pad, shape.head_dim);
  ROOFLINE_CHECK_LAUNCH("transpose_v_fp8_kernel");
  const float qk_scale = scale * descale.q * descale.k;
  using T = __nv_fp8_e4m3;
  if (shape.head_dim == 128) {
    launch<T, 128, 128>(StorageFormat::fp8_e4m3, shape, qk_scale, descale.v, q, k, nullptr, workspace, o, false,
                        stream);
  } else {
    launch<T, 256, 256>(StorageFormat::fp8_e4m3, shape, qk_scale, descale.v, q, k, nullptr, workspace, o, false,
                        stream);
  }
}

}  // namespace roofline::kernels::detail
