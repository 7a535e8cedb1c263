#pragma once

// What the flash-attention translation units share: the Hopper kernel's launcher.

#include <cuda_runtime.h>

#include <cstddef>

#include "../attention.hpp"

namespace roofline::kernels::detail {

// The Hopper kernel's tiling per head dim lives in roofline/kernel_tiles.hpp (kernel_tiles::flash_wgmma;
// the benchmarks read it there). 12 warps: a producer warpgroup (setmaxnreg 24) and two consumer
// warpgroups (setmaxnreg 240); at head dim 128 a consumer's 128-key tiles hold S 64 + O 64 + P 32
// accumulator registers per thread, at 256 its 64-key tiles S 32 + O 128 + P 16. ptxas honours the
// 240 only when the consumers' code shares no block with the producer's: the consumers wait on
// their mbarriers without the watchdog's trap (ptx::mbarrier_wait_untimed), else ptxas held them to
// the 168 registers of 384 threads and serialised the wgmma (C7512) with spills (nvcc 13.0).
//
// swap_v_offsets exchanges the two byte offsets of V's N-major descriptor (see
// flash_wgmma_v_offsets_swapped in attention.hpp).
void flash_wgmma_forward(StorageFormat type, const AttentionShape& shape, float scale, const void* q, const void* k,
                         const void* v, void* o, bool swap_v_offsets, cudaStream_t stream);

// The FP8 forward (attention.hpp's flash_fp8_forward): V transposed into `workspace`
// (flash_fp8_transposed_v_bytes), then the kernel on e4m3 with S scaled by scale x q x k descales.
std::size_t flash_fp8_transposed_v_bytes(const AttentionShape& shape);
void flash_wgmma_fp8_forward(const AttentionShape& shape, float scale, const Fp8Descale& descale, const void* q,
                             const void* k, const void* v, void* o, void* workspace, cudaStream_t stream);

}  // namespace roofline::kernels::detail
