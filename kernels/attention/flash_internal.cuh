#pragma once

// What the flash-attention translation units share: the Hopper kernel's tiling and launcher.

#include <cuda_runtime.h>

#include "../attention.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels::detail {

struct FlashWgmmaTiling {
  int head_dim;
  int block_m;
  int block_n;
  int warps;
  int kv_stages;
  int smem_bytes;
};
// The numbers live in roofline/kernel_tiles.hpp (the benchmarks read them there).
// 9 warps: two consumer warpgroups and one producer warp (no setmaxnreg). 64-key tiles: with
// 128-key tiles (S 64 + O 64 + P 32 accumulator registers) ptxas serialised the wgmma for lack of
// registers (C7512, nvcc 13.0), and so it did, with spills, for a version in which each consumer
// issued S of the next tile before the softmax of this one (FA3's intra-warpgroup overlap): both
// compiled to 168 registers per thread whether the block had 384 threads with setmaxnreg raising
// the consumers to 232, or 288 threads.
// Shared memory: Q 32 KB + stages x (K + V, 2 x 16 KB) + mbarriers + 1024 bytes of alignment slack.
inline constexpr FlashWgmmaTiling flash_wgmma_tiling{
    kernel_tiles::flash_wgmma_head_dim, kernel_tiles::flash_wgmma.block_m,   kernel_tiles::flash_wgmma.block_n,
    kernel_tiles::flash_wgmma.warps,    kernel_tiles::flash_wgmma.kv_stages, kernel_tiles::flash_wgmma.smem_bytes};

// swap_v_offsets exchanges the two byte offsets of V's N-major descriptor (see
// flash_wgmma_v_offsets_swapped in attention.hpp).
void flash_wgmma_forward(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream);

}  // namespace roofline::kernels::detail
