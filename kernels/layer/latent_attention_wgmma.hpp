#pragma once

// The Hopper kernel of latent attention (latent_attention_wgmma.cu), which latent_attention
// (latent_attention.cu) launches for plans of LatentKernel::wgmma; the splits' combine stays there.

#include <cuda_runtime.h>

#include "../storage_format.hpp"

namespace roofline::kernels::detail {

// Whether this build has the sm_90a kernel and `device` can run it.
[[nodiscard]] bool latent_attention_wgmma_runs(int device);

// One block per (64-head group, split, sequence). With one split it writes `out` (normalised, in
// `type`); otherwise each split's unnormalised partial O [slot][512] and (base-2 max, row sum)
// [slot][2], slot = (sequence x heads + head) x splits + split, as latent_combine_kernel reads them.
void latent_attention_wgmma(StorageFormat type, const void* q, const void* cache, float* part_o, float* part_ml,
                            void* out, int batch, int heads, int context, int tiles_per_split, int splits,
                            float scale_log2, cudaStream_t stream);

}  // namespace roofline::kernels::detail
