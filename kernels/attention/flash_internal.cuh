#pragma once

// What the flash-attention translation units share: the Hopper kernel's tiling and launcher.

#include <cuda_runtime.h>

#include "../attention.hpp"

namespace roofline::kernels::detail {

struct FlashWgmmaTiling {
  int head_dim;
  int block_m;
  int block_n;
  int warps;
  int kv_stages;
  int smem_bytes;
};
// 9 warps: two consumer warpgroups and one producer warp (no setmaxnreg). 64-key tiles: with
// 128-key tiles (S 64 + O 64 + P 32 accumulator registers) ptxas serialised the wgmma for lack of
// registers (C7512, nvcc 13.0), and so it did, with spills, for a version in which each consumer
// issued S of the next tile before the softmax of this one (FA3's intra-warpgroup overlap): both
// compiled to 168 registers per thread whether the block had 384 threads with setmaxnreg raising
// the consumers to 232, or 288 threads.
// Shared memory: Q 32 KB + stages x (K + V, 2 x 16 KB) + mbarriers + 1024 bytes of alignment slack.
inline constexpr int flash_wgmma_block_n = 64;
inline constexpr int flash_wgmma_stages = 3;
inline constexpr FlashWgmmaTiling flash_wgmma_tiling{
    128,
    128,
    flash_wgmma_block_n,
    9,
    flash_wgmma_stages,
    32768 + flash_wgmma_stages * 2 * flash_wgmma_block_n * 256 + 8 * (1 + 2 * flash_wgmma_stages) + 1024};

// swap_v_offsets exchanges the two byte offsets of V's N-major descriptor (see
// flash_wgmma_v_offsets_swapped in attention.hpp).
void flash_wgmma_forward(Half16 type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream);

}  // namespace roofline::kernels::detail
