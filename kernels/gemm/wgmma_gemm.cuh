#pragma once

// The Hopper GEMM kernel (sm_90a), shared by the plain GEMM (gemm_wgmma.cu) and the grouped GEMM of
// MoE experts (gemm_grouped.cu): warp-specialised, TMA-fed wgmma, for 16-bit operands and for FP8.
//
// Block tile 128 x BN (BN = 256; the skinny plans also run 160, 128, 80 and 64:
// kernel_tiles::gemm_wgmma_shapes), k staged 128 bytes at a time (64 16-bit or 128 8-bit elements:
// one row of the 128-byte swizzle) in a ring of shared-memory stages (4 of 48 KB at BN = 256, 6 of
// 32 KB at 128: kernel_tiles::gemm_wgmma_stages). Warpgroup 0 is the
// producer: one thread issues two TMA tensor copies per stage (A 128 rows and B BN rows of 128
// bytes, written in the 128-byte swizzle that wgmma reads) and counts them on the stage's "full"
// mbarrier. Warpgroups 1 and 2 are consumers: each owns 64 rows of the tile and issues four wgmma
// per stage (m64nBNk16 for 16-bit operands, m64n256k32 for 8-bit ones: 32 bytes of k each) into
// BN/2 fp32 accumulator registers per thread, keeping one stage's wgmma group in flight while
// releasing the stage before it on its "empty" mbarrier. The producer gives up registers
// (setmaxnreg) so that the consumers can hold their accumulators. The Scheduler names BN.
//
// Persistent: at most one block per SM, each taking every gridDim.x-th tile, the ring running on
// across its tiles, so that the next tile's first stages load while the consumers store C (short-k
// grouped GEMMs ran 0.67-0.74x the time of a block per tile; docs/results/2026-12-02-h200-gemm-persistent).
//
// The 16-bit GEMM rounds the accumulators to the operands' type. The FP8 GEMM (e4m3 operands, both
// K-major as 8-bit wgmma requires) multiplies them by a_scale * b_scales[expert] (the plain GEMM: expert
// 0, its one b_scale; the grouped GEMM: the tile's expert's weight scale) and writes bf16.
//
// Which tile a block computes is the Scheduler's: it maps blockIdx.x to the first rows of the tile
// in A's and B's tensor maps, the first column of C, and the end of the rows the tile may write.
// Rows of A past that end (another expert's tokens, in a grouped GEMM) are loaded and multiplied
// but never stored; TMA zero-fills rows and k columns outside the tensors, and the epilogue stores
// only columns below n, so any m, n % 8 == 0 and k rows of a multiple of 16 bytes (TMA's row
// stride) are handled.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"
#include "../tma_host.cuh"
#include "../wgmma.cuh"
#include "gemm_internal.cuh"

namespace roofline::kernels::detail::wgmma_gemm {

inline constexpr int kBM = wgmma_tiling.tile_m;
inline constexpr int kBN = wgmma_tiling.tile_n;  // the plain and grouped GEMMs' tile width
inline constexpr int kThreads = wgmma_tiling.threads;
// One stage holds 128 bytes of k per row, whatever the element size.
inline constexpr int kRowBytes = 128;
static_assert(kBM == 128 && kBN == 256 && wgmma_tiling.tile_k * 2 == kRowBytes &&
                  wgmma_fp8_tiling.tile_k == kRowBytes && kThreads == 384 &&
                  kernel_tiles::gemm_wgmma_narrow.tile_m == kBM && kernel_tiles::gemm_wgmma_narrow.threads == kThreads,
              "two 64-row consumer warpgroups of m64nBN and 128-byte swizzled rows");
inline constexpr int kConsumerThreads = kThreads - 128;
inline constexpr int kGroupM = 8;

// The ring of a 128 x BN tile, kernel_tiles::gemm_wgmma_stages(BN) deep.
template <int BN>
struct Ring {
  static_assert(BN == 256 || BN == 160 || BN == 128 || BN == 80 || BN == 64,
                "the tile widths of kernel_tiles::gemm_wgmma_shapes");
  static constexpr int kStages = kernel_tiles::gemm_wgmma_stages(BN);
  static constexpr int kStageBytesA = kBM * kRowBytes;
  static constexpr int kStageBytesB = BN * kRowBytes;
  static constexpr int kStageBytes = kStageBytesA + kStageBytesB;
  // The stages, then 2*kStages 8-byte mbarriers; +1024 so that the stages can be aligned to 1024
  // bytes (the swizzle pattern repeats every 8 rows of 128 bytes).
  static constexpr int kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
  // One block's partial tile of a split-K GEMM: its BN/2 accumulators per consumer thread.
  static constexpr std::size_t kPartialTileFloats = static_cast<std::size_t>(BN / 2) * kConsumerThreads;
};

// The output of one instantiation: 16-bit operands round the accumulators to their own type
// (Out = T, no scale); FP8 operands write bf16 scaled by (*a_scale) * b_scales[tile.expert]: one
// weight scale per expert of a grouped GEMM (b_scales has E entries), the one of a plain GEMM at
// index 0.
template <typename T>
struct Epilogue {
  static constexpr bool scaled = TraitsOf<T>::bits == 8;
  using Out = std::conditional_t<scaled, __nv_bfloat16, T>;
  const float* a_scale = nullptr;
  const float* b_scales = nullptr;
};

// The tile of one block: its first row in A's tensor map (and in C), its first row in B's, its
// first column of C, the end (exclusive) of the rows of C it writes, the expert whose weights (and
// weight scale) it multiplies (0 in a plain GEMM), and the k blocks it multiplies (all, unless the
// scheduler splits k: then also the output tile and which split of it this block is).
struct BlockTile {
  int a_row = 0;
  int b_row = 0;
  int n0 = 0;
  int row_end = 0;
  int expert = 0;
  int k_block_begin = 0;
  int k_block_end = 0x7fffffff;
  int output_tile = 0;
  int split = 0;
};

// Where the blocks of a split-K GEMM leave their partial tiles. Every block of an output tile
// writes its fp32 accumulators to `partials`; the last to arrive (an atomic ticket per output tile)
// adds all of them in split order -- so the result does not depend on which block came last --
// stores C and resets the ticket for the next launch. A Scheduler with kSplitK = true carries one.
struct SplitK {
  int splits = 1;
  unsigned* tickets = nullptr;  // one per output tile, zero between launches
  float* partials = nullptr;    // [output tile][split][BN/2 accumulators][256 consumer threads]
};

// A split-K workspace: the tickets first (one per output tile, padded to 256 bytes), then the
// partial tiles of a plan's tiles x splits blocks of width BN.
inline std::size_t split_k_ticket_bytes(const kernel_tiles::GemmSplitK& plan) {
  return (static_cast<std::size_t>(plan.tiles) * sizeof(unsigned) + 255) / 256 * 256;
}
template <int BN>
std::size_t split_k_workspace_bytes(const kernel_tiles::GemmSplitK& plan) {
  if (plan.splits == 1) return 0;
  return split_k_ticket_bytes(plan) +
         static_cast<std::size_t>(plan.tiles) * plan.splits * Ring<BN>::kPartialTileFloats * sizeof(float);
}
// The SplitK of a plan over `workspace` (split_k_workspace_bytes, zeroed once).
inline SplitK split_k_over(const kernel_tiles::GemmSplitK& plan, void* workspace) {
  auto* bytes = static_cast<unsigned char*>(workspace);
  return {.splits = plan.splits,
          .tickets = reinterpret_cast<unsigned*>(bytes),
          .partials = reinterpret_cast<float*>(bytes + split_k_ticket_bytes(plan))};
}

// A Scheduler's output tiles (one block a tile) each cut along k into split.splits ranges of
// k_blocks_per_split k blocks: blocks s * splits .. s * splits + splits - 1 are output tile s's
// splits, in order. The plain GEMM's (MatrixScheduler) and the grouped GEMM's (ExpertScheduler).
template <typename Tiles>
struct SplitKScheduler {
  static constexpr bool kSplitK = true;
  static constexpr bool kSharedRows = Tiles::kSharedRows;
  static constexpr int kBN = Tiles::kBN;
  Tiles tiles;
  int k_blocks_per_split = 0;
  SplitK split;
  __device__ BlockTile tile(int block) const {
    const int output_tile = block / split.splits;
    const int part = block % split.splits;
    BlockTile t = tiles.tile(output_tile);
    t.k_block_begin = part * k_blocks_per_split;
    t.k_block_end = t.k_block_begin + k_blocks_per_split;
    t.output_tile = output_tile;
    t.split = part;
    return t;
  }
};

// Clusters of two blocks on adjacent tiles (a Scheduler with kCluster = 2, whose tile(pair, rank)
// gives rank r of the pair its tile). Vertically adjacent (tile rows 2p + r of one column), both
// multiply the same BN rows of B, so each block loads half of them and the TMA unit multicasts that
// half into both blocks' stages -- B is read from L2 once per pair instead of twice, a third of the
// L2 reads of a 128 x 256 tile. Horizontally adjacent (kSharesA: tile columns 2p + r of one row), they
// share A's 128 rows the same way: the narrow tiles of a skinny product, whose loads are mostly A's. A
// stage is then refilled only when the consumers of both blocks are done with it: every consumer warp
// arrives on the "empty" barrier of both blocks. Other schedulers run a block on its own.
template <typename Scheduler>
__host__ __device__ constexpr int cluster_of() {
  if constexpr (requires { Scheduler::kCluster; }) {
    return Scheduler::kCluster;
  } else {
    return 1;
  }
}
template <typename Scheduler>
__host__ __device__ constexpr bool shares_a() {
  if constexpr (requires { Scheduler::kSharesA; }) {
    return Scheduler::kSharesA;
  } else {
    return false;
  }
}
template <typename Scheduler>
__device__ __forceinline__ BlockTile tile_at(const Scheduler& scheduler, int index, int rank) {
  if constexpr (cluster_of<Scheduler>() > 1) {
    return scheduler.tile(index, rank);
  } else {
    (void)rank;
    return scheduler.tile(index);
  }
}

template <typename T, typename Scheduler>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      typename Epilogue<T>::Out* __restrict__ c, int n, int k, Scheduler scheduler,
                      Epilogue<T> epilogue, int tiles) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using OutTraits = TraitsOf<typename Epilogue<T>::Out>;
  constexpr int kBN = Scheduler::kBN;
  using R = Ring<kBN>;
  constexpr int kStages = R::kStages;
  constexpr int kStageBytesA = R::kStageBytesA;
  constexpr int kStageBytesB = R::kStageBytesB;
  constexpr int kStageBytes = R::kStageBytes;
  constexpr std::size_t kPartialTileFloats = R::kPartialTileFloats;
  constexpr int kCluster = cluster_of<Scheduler>();
  constexpr bool kSharesA = shares_a<Scheduler>();
  static_assert(kBN == 256 || TraitsOf<T>::bits == 16, "8-bit operands run 128 x 256 tiles");
  static_assert(kCluster == 1 || (kCluster == 2 && !Scheduler::kSplitK && !Scheduler::kSharedRows),
                "pairs of blocks multicast A or B for whole tiles only");
  // Shared rows: both consumers multiply the tile's first 64 rows, each over half its columns (a
  // tile whose C has at most 64 rows, a decode step's expert). Otherwise consumer c takes rows
  // 64 c .. 64 c + 63 over all the columns.
  constexpr bool kShared = Scheduler::kSharedRows;
  constexpr int kN = kShared ? kBN / 2 : kBN;                   // the columns of one consumer's MMA
  constexpr int kAcc = kN / 2;                                  // its accumulators per thread
  constexpr int kBK = kRowBytes / static_cast<int>(sizeof(T));  // elements of k per stage
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const uint32_t smem = (raw + 1023u) & ~1023u;
  const uint32_t smem_a = smem;                           // kStages x [128][64]
  const uint32_t smem_b = smem + kStages * kStageBytesA;  // kStages x [BN][64]
  const uint32_t full_bar = smem + kStages * kStageBytes;
  const uint32_t empty_bar = full_bar + kStages * 8;

  // Block b computes tiles b, b + gridDim.x, ... (one, where the grid has a block per tile); the
  // ring's k-block count runs on across its tiles, so the producer loads the next tile's first
  // stages while the consumers store this one's C. In pairs, pair b / 2 takes pair tiles b / 2,
  // b / 2 + gridDim.x / 2, ..., both blocks the same ones.
  const int k_blocks = (k + kBK - 1) / kBK;
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int first_index = static_cast<int>(blockIdx.x) / kCluster;
  const int index_step = static_cast<int>(gridDim.x) / kCluster;
  const int rank = kCluster > 1 ? static_cast<int>(ptx::cluster_ctarank()) : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full_bar + s * 8, 1);
      // Alone: every consumer thread arrives. In pairs: one lane of each consumer warp of both blocks.
      ptx::mbarrier_init(empty_bar + s * 8, kCluster == 1 ? kConsumerThreads : kCluster * kConsumerThreads / 32);
    }
    ptx::fence_mbarrier_init();
  }
  if constexpr (kCluster > 1) {
    ptx::cluster_sync();  // the peer's barriers are initialised before anything reaches them
  } else {
    __syncthreads();
  }
  // Consumers give a stage back once their wgmmas have read it.
  const auto release = [&](int stage) {
    if constexpr (kCluster == 1) {
      ptx::mbarrier_arrive(empty_bar + stage * 8);
    } else if (threadIdx.x % 32 == 0) {
      ptx::mbarrier_arrive(empty_bar + stage * 8);
#pragma unroll
      for (int peer = 1; peer < kCluster; ++peer) {
        ptx::mbarrier_arrive_remote(empty_bar + stage * 8, static_cast<uint32_t>((rank + peer) % kCluster));
      }
    }
  };

  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      int ring = 0;  // k blocks loaded so far, over this block's tiles
      for (int index = first_index; index < tiles; index += index_step) {
        const BlockTile tile = tile_at(scheduler, index, rank);
        const int kb_end = min(k_blocks, tile.k_block_end);
        for (int kb = tile.k_block_begin; kb < kb_end; ++kb, ++ring) {
          const int s = ring % kStages;
          const uint32_t phase = static_cast<uint32_t>(ring / kStages) & 1u;
          // A fresh barrier counts as having completed the phase before phase 0, so the first pass
          // through the ring (waiting on parity 1) does not block.
          ptx::mbarrier_wait(empty_bar + s * 8, phase ^ 1u);
          ptx::mbarrier_arrive_expect_tx(full_bar + s * 8, kStageBytes);
          [[maybe_unused]] constexpr uint16_t kPair = (1u << kCluster) - 1u;
          if constexpr (kCluster == 1) {
            ptx::tma_load_2d(smem_a + s * kStageBytesA, &map_a, full_bar + s * 8, kb * kBK, tile.a_row);
            ptx::tma_load_2d(smem_b + s * kStageBytesB, &map_b, full_bar + s * 8, kb * kBK, tile.b_row);
          } else if constexpr (kSharesA) {
            // This block's share of A's rows, into the same place in every block of the pair.
            constexpr int kShare = kBM / kCluster;
            ptx::tma_load_2d_multicast(smem_a + s * kStageBytesA + rank * kShare * kRowBytes, &map_a, full_bar + s * 8,
                                       kb * kBK, tile.a_row + rank * kShare, kPair);
            ptx::tma_load_2d(smem_b + s * kStageBytesB, &map_b, full_bar + s * 8, kb * kBK, tile.b_row);
          } else {
            // The same with B's rows.
            constexpr int kShare = kBN / kCluster;
            ptx::tma_load_2d(smem_a + s * kStageBytesA, &map_a, full_bar + s * 8, kb * kBK, tile.a_row);
            ptx::tma_load_2d_multicast(smem_b + s * kStageBytesB + rank * kShare * kRowBytes, &map_b, full_bar + s * 8,
                                       kb * kBK, tile.b_row + rank * kShare, kPair);
          }
        }
      }
    }
  } else {
    ptx::setmaxnreg_inc<232>();
    const int consumer = warpgroup - 1;  // rows consumer*64 .. +63 of the tile
    int ring = 0;                        // k blocks consumed so far, over this block's tiles
    for (int index = first_index; index < tiles; index += index_step) {
      const BlockTile tile = tile_at(scheduler, index, rank);
      const int kb_begin = tile.k_block_begin;
      const int kb_end = min(k_blocks, tile.k_block_end);
      float acc[kAcc];
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
      ptx::fence_registers(acc);
      const int first_row = kShared ? 0 : consumer * 64;  // of the tile, this consumer's
      const int first_col = kShared ? consumer * kN : 0;

      for (int kb = kb_begin; kb < kb_end; ++kb) {
        const int i = ring + kb - kb_begin;
        const int s = i % kStages;
        const uint32_t phase = static_cast<uint32_t>(i / kStages) & 1u;
        ptx::mbarrier_wait(full_bar + s * 8, phase);
        const uint64_t desc_a = ptx::wgmma_desc_sw128(smem_a + s * kStageBytesA + first_row * 128);
        const uint64_t desc_b = ptx::wgmma_desc_sw128(smem_b + s * kStageBytesB + first_col * 128);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kRowBytes / 32; ++kk) {
          // +32 bytes per k step (16 16-bit or 32 8-bit elements), in the descriptor's 16-byte units
          if constexpr (TraitsOf<T>::bits == 8 && kShared) {
            ptx::wgmma_m64n128k32_ss<T>(acc, desc_a + 2 * kk, desc_b + 2 * kk, 1);
          } else if constexpr (TraitsOf<T>::bits == 8) {
            ptx::wgmma_m64n256k32<T>(acc, desc_a + 2 * kk, desc_b + 2 * kk, 1);
          } else {
            ptx::wgmma_m64nNk16_ss<T, kN>(acc, desc_a + 2 * kk, desc_b + 2 * kk, 1);
          }
        }
        ptx::wgmma_commit();
        // Keep this stage's group in flight; the previous one is then complete and its stage free.
        ptx::wgmma_wait<1>();
        if (kb > kb_begin) release((i - 1) % kStages);
      }
      ptx::wgmma_wait<0>();
      ptx::fence_registers(acc);
      ring += kb_end - kb_begin;
      if (kb_end > kb_begin) release((ring - 1) % kStages);  // the last stage
      if constexpr (Scheduler::kSplitK) {
        const SplitK& split = scheduler.split;
        if (split.splits > 1) {
          // Thread t of the two consumers writes accumulator i at [i][t]: consecutive threads,
          // consecutive words. The partials stay in L2 (a few MB) for the last block to read.
          __shared__ unsigned last_of_tile;
          const int t = static_cast<int>(threadIdx.x) - 128;
          // A thread whose rows lie past the tile's last row of C (an expert's one decode token in a
          // tile of 128 rows, a skinny product's m < 128) has nothing to add: it neither writes
          // nor reads partials. Its first row is its lowest (the second lies 8 below).
          const bool holds_rows = tile.a_row + first_row + ((t % 128) / 32) * 16 + (t % 32) / 4 < tile.row_end;
          float* mine = split.partials +
                        (static_cast<std::size_t>(tile.output_tile) * split.splits + tile.split) * kPartialTileFloats;
          if (holds_rows) {
#pragma unroll
            for (int a = 0; a < kAcc; ++a) mine[a * kConsumerThreads + t] = acc[a];
          }
          __threadfence();
          ptx::named_barrier_sync(1, kConsumerThreads);
          if (t == 0)
            last_of_tile = atomicAdd(split.tickets + tile.output_tile, 1u) == static_cast<unsigned>(split.splits - 1);
          ptx::named_barrier_sync(1, kConsumerThreads);
          if (!last_of_tile) continue;
          __threadfence();
          const float* first =
              split.partials + static_cast<std::size_t>(tile.output_tile) * split.splits * kPartialTileFloats;
#pragma unroll
          for (int a = 0; a < kAcc; ++a) acc[a] = 0.0f;
          for (int s = 0; s < split.splits && holds_rows; ++s) {
#pragma unroll
            for (int a = 0; a < kAcc; ++a) acc[a] += __ldcg(first + s * kPartialTileFloats + a * kConsumerThreads + t);
          }
          if (t == 0) split.tickets[tile.output_tile] = 0;
        }
      }
      if constexpr (Epilogue<T>::scaled) {
        const float scale = *epilogue.a_scale * epilogue.b_scales[tile.expert];
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] *= scale;
      }

      // Accumulator layout of m64nNk16: thread t of the warpgroup holds, for j = 0..N/8-1,
      // acc[4j+0..1] at (row 16*(t/32) + (t%32)/4, cols 8j + 2*(t%4) + 0..1) and acc[4j+2..3] 8 rows below.
      const int t = static_cast<int>(threadIdx.x) % 128;
      const int row = tile.a_row + first_row + (t / 32) * 16 + (t % 32) / 4;
#pragma unroll
      for (int j = 0; j < kN / 8; ++j) {
        const int col = tile.n0 + first_col + j * 8 + (t % 4) * 2;
        if (col >= n) continue;
        if (row < tile.row_end) {
          *reinterpret_cast<uint32_t*>(c + static_cast<std::size_t>(row) * n + col) =
              OutTraits::pack(acc[4 * j], acc[4 * j + 1]);
        }
        if (row + 8 < tile.row_end) {
          *reinterpret_cast<uint32_t*>(c + static_cast<std::size_t>(row + 8) * n + col) =
              OutTraits::pack(acc[4 * j + 2], acc[4 * j + 3]);
        }
      }
    }
  }
  // A block leaves only when its peer is done: the peer's last arrivals and multicasts reach this
  // block's shared memory.
  if constexpr (kCluster > 1) ptx::cluster_sync();
#else
  // Built without sm_90a code: the host never launches this (gemm_kernel_supported is false);
  // if it does, fail loudly instead of returning garbage.
  __trap();
#endif
}

// Row-major [rows][cols] matrix of `type`, loaded in boxes of box_rows x 128 bytes with the
// 128-byte swizzle.
inline CUtensorMap make_map(StorageFormat type, const void* base, long long rows, int cols, int box_rows) {
  const int element_bytes = bytes_of(type);
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * static_cast<cuuint64_t>(element_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowBytes / element_bytes), static_cast<cuuint32_t>(box_rows)};
  return make_tensor_map_sw128(type, base, 2, dims, strides, box, "gemm wgmma operand");
}

// Launches `blocks` tiles of `scheduler` over A [a_rows x k] and B [b_rows x k] (row-major, k
// contiguous) into C with n columns.
template <typename T, typename Scheduler>
void launch(StorageFormat type, const void* a, long long a_rows, const void* b, long long b_rows, void* c, int n, int k,
            long long blocks, Scheduler scheduler, Epilogue<T> epilogue, cudaStream_t stream) {
  constexpr int smem_bytes = Ring<Scheduler::kBN>::kSmemBytes;
  constexpr int cluster = cluster_of<Scheduler>();
  constexpr bool pair_shares_a = shares_a<Scheduler>();
  const auto kernel = gemm_wgmma_kernel<T, Scheduler>;
  // In pairs each block loads its half of the shared operand's tile rows.
  const CUtensorMap map_a = make_map(type, a, a_rows, k, pair_shares_a ? kBM / cluster : kBM);
  const CUtensorMap map_b = make_map(type, b, b_rows, k, pair_shares_a ? Scheduler::kBN : Scheduler::kBN / cluster);
  ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  require(blocks >= 1 && blocks <= 0x7fffffff, "gemm wgmma: the tile count must be in 1 .. 2^31 - 1");
  auto* out = static_cast<typename Epilogue<T>::Out*>(c);
  if constexpr (cluster == 1) {
    // Persistent: one block per SM (the shared memory allows no more) takes every gridDim.x-th tile.
    const long long grid = std::min<long long>(blocks, current_device_sms());
    kernel<<<static_cast<unsigned>(grid), kThreads, smem_bytes, stream>>>(map_a, map_b, out, n, k, scheduler, epilogue,
                                                                          static_cast<int>(blocks));
  } else {
    // `blocks` counts pair tiles here. As many pairs as can be resident at once (the GPCs' SM counts
    // decide; at most half the SMs), each taking every (pairs)-th pair tile.
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    // Asked once per device (the query costs microseconds of host time, as much as a small GEMM).
    static std::array<std::atomic<int>, 64> resident_on{};
    int device = 0;
    ROOFLINE_CUDA_CHECK(cudaGetDevice(&device));
    require(device >= 0 && device < static_cast<int>(resident_on.size()), "gemm wgmma: device index out of range");
    int resident = resident_on[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
    if (resident == 0) {
      config.gridDim = dim3(static_cast<unsigned>(current_device_sms() / cluster * cluster));
      ROOFLINE_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &config));
      require(resident >= 1, "gemm wgmma: no pair of blocks fits on this GPU");
      resident_on[static_cast<std::size_t>(device)].store(resident, std::memory_order_relaxed);
    }
    config.gridDim = dim3(static_cast<unsigned>(std::min<long long>(blocks, resident) * cluster));
    ROOFLINE_CUDA_CHECK(
        cudaLaunchKernelEx(&config, kernel, map_a, map_b, out, n, k, scheduler, epilogue, static_cast<int>(blocks)));
  }
  ROOFLINE_CHECK_LAUNCH("gemm_wgmma_kernel");
}

}  // namespace roofline::kernels::detail::wgmma_gemm
