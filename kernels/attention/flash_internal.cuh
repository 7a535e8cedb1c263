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
// 12 warps: a producer warpgroup (setmaxnreg 24) and two consumer warpgroups (setmaxnreg 240), whose
// 128-key tiles hold S 64 + O 64 + P 32 accumulator registers per thread. ptxas honours the 240
// only when the consumers' code shares no block with the producer's: the consumers wait on their
// mbarriers without the watchdog's trap (ptx::mbarrier_wait_untimed), else ptxas held them to
// the 168 registers of 384 threads and serialised the wgmma (C7512) with spills (nvcc 13.0).
// Shared memory: Q 32 KB + stages x (K + V, 2 x 32 KB) + mbarriers + 1024 bytes of alignment slack.
inline constexpr FlashWgmmaTiling flash_wgmma_tiling{
    kernel_tiles::flash_wgmma_head_dim, kernel_tiles::flash_wgmma.block_m,   kernel_tiles::flash_wgmma.block_n,
    kernel_tiles::flash_wgmma.warps,    kernel_tiles::flash_wgmma.kv_stages, kernel_tiles::flash_wgmma.smem_bytes};

// swap_v_offsets exchanges the two byte offsets of V's N-major descriptor (see
// flash_wgmma_v_offsets_swapped in attention.hpp).
void flash_wgmma_forward(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream);

}  // namespace roofline::kernels::detail
