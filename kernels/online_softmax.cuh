#pragma once

// The online softmax of the Hopper attention kernels' consumer warpgroups (flash_wgmma.cu and
// layer/latent_attention_wgmma.cu): a warpgroup's S tile in the wgmma accumulator layout (per warp
// rows g and g + 8, columns 8 n8 + 2 (lane % 4) + {0, 1}) masked, turned into probabilities against
// running row maxima, O rescaled, and P packed into the register A fragments of the next wgmma.
#include <cstdint>

#include "storage_format.cuh"

namespace roofline::kernels::detail {

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Pins P's registers at this point of the program (as ptx::fence_registers does for accumulators),
// so that they are not overwritten while a register-A wgmma that reads them may still run.
template <int N>
__device__ __forceinline__ void fence_words(uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
  }
}

// Masks one S tile of BN keys (keys from k0), updates the running max and sum of this thread's two
// rows (row0, row0 + 8) and turns the scores into probabilities in place; alpha is the factor the O
// rows must be scaled by (applied by the caller once the previous P V has completed).
template <int BN>
__device__ __forceinline__ void softmax_scores(float (&s_acc)[BN / 2], float (&row_max)[2], float (&row_sum)[2],
                                               float (&alpha)[2], int k0, int row0, int first_row, int lane, int seq,
                                               int causal, float scale_log2, float exp_offset) {
  if (k0 + BN > seq || (causal && k0 + BN - 1 > first_row)) {
#pragma unroll
    for (int n8 = 0; n8 < BN / 8; ++n8) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = k0 + n8 * 8 + (lane % 4) * 2 + (e % 2);
        const int row = row0 + (e / 2) * 8;
        if (key >= seq || (causal && key > row)) s_acc[4 * n8 + e] = -INFINITY;
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int n8 = 0; n8 < BN / 8; ++n8) mx = fmaxf(mx, fmaxf(s_acc[4 * n8 + 2 * h], s_acc[4 * n8 + 2 * h + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float new_max = fmaxf(row_max[h], mx * scale_log2);
    const float base = new_max == -INFINITY ? 0.0f : new_max;  // no -inf - -inf
    alpha[h] = fast_exp2(row_max[h] - base);
    row_max[h] = new_max;
    const float shift = base - exp_offset;
    float sum = 0.0f;
#pragma unroll
    for (int n8 = 0; n8 < BN / 8; ++n8) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float prob = fast_exp2(fmaf(s_acc[4 * n8 + 2 * h + e], scale_log2, -shift));
        s_acc[4 * n8 + 2 * h + e] = prob;
        sum += prob;
      }
    }
    row_sum[h] = row_sum[h] * alpha[h] + sum;
  }
}

template <int D>
__device__ __forceinline__ void rescale(float (&o_acc)[D / 2], const float (&alpha)[2]) {
#pragma unroll
  for (int n8 = 0; n8 < D / 8; ++n8) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      o_acc[4 * n8 + 2 * h] *= alpha[h];
      o_acc[4 * n8 + 2 * h + 1] *= alpha[h];
    }
  }
}

// Accumulator layout (per warp: rows g, g+8; cols 8*n8 + 2*(lane%4)) -> A fragment of k step kt
// (keys 16kt..16kt+15): {row g, keys +0..1}, {row g+8, +0..1}, {row g, +8..9}, {row g+8, +8..9}.
// FP8: each register takes four of one row's accumulators, in the key order fp8_p_key describes.
template <typename T, int BN>
__device__ __forceinline__ void pack_p(const float (&s_acc)[BN / 2], uint32_t (&p)[BN * TraitsOf<T>::bits / 256][4]) {
  using Traits = TraitsOf<T>;
  if constexpr (Traits::bits == 8) {
    const auto pack4 = [](float a, float b, float c, float d) {
      return static_cast<uint32_t>(Traits::pack(a, b)) | (static_cast<uint32_t>(Traits::pack(c, d)) << 16);
    };
#pragma unroll
    for (int kt = 0; kt < BN / 32; ++kt) {
      const float* s = s_acc + 16 * kt;
      p[kt][0] = pack4(s[0], s[1], s[4], s[5]);
      p[kt][1] = pack4(s[2], s[3], s[6], s[7]);
      p[kt][2] = pack4(s[8], s[9], s[12], s[13]);
      p[kt][3] = pack4(s[10], s[11], s[14], s[15]);
    }
  } else {
#pragma unroll
    for (int kt = 0; kt < BN / 16; ++kt) {
      p[kt][0] = Traits::pack(s_acc[8 * kt + 0], s_acc[8 * kt + 1]);
      p[kt][1] = Traits::pack(s_acc[8 * kt + 2], s_acc[8 * kt + 3]);
      p[kt][2] = Traits::pack(s_acc[8 * kt + 4], s_acc[8 * kt + 5]);
      p[kt][3] = Traits::pack(s_acc[8 * kt + 6], s_acc[8 * kt + 7]);
    }
  }
}

}  // namespace roofline::kernels::detail
