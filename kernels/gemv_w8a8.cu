// The W8A8 GEMV (gemv.hpp): e4m3 W and x with per-tensor scales, fp32 accumulation, bf16 y, as FP8
// checkpoints are decoded (y = a_scale * w_scale * W . x).
//
// gemv.cu's tensor-core kernels widen fp8 W to bf16 in registers, because no instruction multiplies
// e4m3 by bf16. With x in e4m3 as well, the bytes as loaded are operands of mma.m16n8k32 (e4m3,
// sm_89+): no conversion, half the mma instructions of the widened path (one k32 instead of two
// k16 per 32 k), and x read from L2 in 1-byte elements. The loads and their pairing are gemv.cu's
// (gemv_mapping.hpp): lane (g, t) loads 16 bytes (16 k) of W rows g and g + 8 and of vector g per
// 64-k chunk, and the same a_source and b_word registers feed two m16n8k32 per chunk.
//
// One kernel template, three schedules:
//   mma:  a block of WK warps owns MT m-tiles of 16 rows (one tile per block, as many blocks as
//         tiles), its warps taking turns over k in steps of U chunks;
//   stag: a resident grid looping over 16-row tiles, tile i starting its k sweep 7 i steps in (the
//         blocks in flight read different columns; gemv.cu's stag);
//   pdl:  stag launched with programmatic dependent launch: W loads start before the predecessor
//         ends; x, the scales and y wait for it (griddepcontrol.wait).
// Shapes: any m >= 1 (rows past m are clamped to row m - 1 for loading and never stored), k a
// multiple of 16 (16-byte rows; a last chunk of 16, 32 or 48 k is zero-filled per lane), any batch
// up to 64 (mma) or 16 (stag, pdl).
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "device_utils.cuh"
#include "gemv_fragments.cuh"
#include "gemv_mapping.hpp"
#include "gemv_w8a8.hpp"
#include "tc_ptx.cuh"

namespace roofline::kernels::detail {
namespace {

using E4M3 = __nv_fp8_e4m3;
constexpr int kChunk = gemv_mapping::chunk_k8;  // k (and bytes of a row of W or x) per chunk
constexpr int kStaggerStride = 7;               // odd and prime: tiles in flight start at distinct steps
constexpr int kTunedMaxBatch = 16;

// mma step `Step` (32 of the chunk's 64 k) of one m-tile against one n-tile: w0, w1 are the lane's
// pieces of rows g and g + 8, x its piece of vector g (gemv_fragments.cuh).
template <int Step>
__device__ __forceinline__ void mma_step(float (&acc)[4], const uint4& w0, const uint4& w1, const uint4& x) {
  uint32_t a[4];
  gemv_fragments::a_registers<Step>(a, w0, w1);
  ptx::mma_16832<E4M3>(acc, a, gemv_fragments::b_register<Step, 0>(x), gemv_fragments::b_register<Step, 1>(x));
}

// One 64-k chunk of one m-tile against NT n-tiles of x.
template <int NT>
__device__ __forceinline__ void chunk_mma(float (&acc)[NT][4], const uint4& w0, const uint4& w1,
                                          const uint4 (&xv)[NT]) {
  static_assert(gemv_mapping::steps == 2, "a 64-k chunk of 8-bit operands is two m16n8k32 steps");
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    mma_step<0>(acc[nt], w0, w1, xv[nt]);
    mma_step<1>(acc[nt], w0, w1, xv[nt]);
  }
}

// NT: n-tiles of 8 vectors. MT: m-tiles of 16 rows per tile. WK: warps, splitting k. U: chunks per
// warp and step (2 x MT x U loads of 16 bytes of W in flight per thread). MinBlocks: the register
// budget (blocks resident per SM).
template <int NT, int MT, int WK, int U, int MinBlocks>
struct Config {
  static constexpr int n_tiles = NT;
  static constexpr int m_tiles = MT;
  static constexpr int warps = WK;
  static constexpr int unroll = U;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int threads = 32 * WK;
  static constexpr int rows = 16 * MT;
};

struct Operands {
  const unsigned char* __restrict__ w;  // [m][k] e4m3
  const unsigned char* __restrict__ x;  // [batch][k] e4m3
  __nv_bfloat16* __restrict__ y;        // [batch][m]
  const float* weight_scale;
  const float* activation_scale;
};

template <typename Cfg, bool Persistent, bool Pdl>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks)
    gemv_w8a8_kernel(Operands op, int m, int k, int batch) {
  constexpr int NT = Cfg::n_tiles;
  constexpr int MT = Cfg::m_tiles;
  constexpr int WK = Cfg::warps;
  constexpr int U = Cfg::unroll;
  __shared__ float partial[WK - 1][MT * NT * 4][32];
  if constexpr (Pdl) device::grid_dependency_launch();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int tiles = static_cast<int>((static_cast<std::int64_t>(m) + Cfg::rows - 1) / Cfg::rows);
  const int chunks = static_cast<int>((static_cast<std::int64_t>(k) + kChunk - 1) / kChunk);  // last: partial
  const int steps = (k / kChunk) / U;  // whole steps of U whole chunks
  const std::int64_t step_bytes = static_cast<std::int64_t>(U) * kChunk;

  // Vector g of each n-tile at the lane's 16 bytes, as 32-bit offsets from one pointer (fewer
  // registers than a pointer each; the launcher checks batch x k < 2^32); lanes past the batch read
  // vector 0 and zero it.
  const unsigned char* const xlane = op.x + 16 * t;
  std::uint32_t xrow[NT];
  bool xvalid[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int vector = nt * 8 + g;
    xvalid[nt] = vector < batch;
    xrow[nt] = static_cast<std::uint32_t>(xvalid[nt] ? vector : 0) * static_cast<std::uint32_t>(k);
  }
  const unsigned char* const wlane = op.w + 16 * t;
  bool waited = !Pdl;

  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
    const std::int64_t row0 = static_cast<std::int64_t>(tile) * Cfg::rows;
    // Rows g and g + 8 of each m-tile (gemv_mapping::row_of), clamped to the last row of W, as 32-bit
    // offsets (the launcher checks m x k < 2^32).
    std::uint32_t wrow[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t row = row0 + 16 * mt + g + 8 * h;
        wrow[mt][h] = static_cast<std::uint32_t>(row < m ? row : m - 1) * static_cast<std::uint32_t>(k);
      }
    }
    const int shift =
        Persistent && steps > 0 ? static_cast<int>(static_cast<std::int64_t>(tile) * kStaggerStride % steps) : 0;
    float acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0F;
      }
    }

    // Whole steps, dealt to the warps round robin (at any time the block's warps read neighbouring
    // pieces of the same rows), each step's loads issued before any is used.
#pragma unroll 1
    for (int s = warp; s < steps; s += WK) {
      const int physical = s + shift >= steps ? s + shift - steps : s + shift;
      const std::int64_t offset = physical * step_bytes;
      uint4 wv[U][MT][2];
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
          for (int h = 0; h < 2; ++h) wv[u][mt][h] = device::load_stream_16(wlane + wrow[mt][h] + offset + u * kChunk);
        }
      }
      if (!waited) {
        device::grid_dependency_wait();  // the first W step is in flight; x and y may be the predecessor's
        waited = true;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        uint4 xv[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint4 v = device::load_shared_operand_16(xlane + xrow[nt] + offset + u * kChunk);
          xv[nt] = xvalid[nt] ? v : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) chunk_mma<NT>(acc[mt], wv[u][mt][0], wv[u][mt][1], xv);
      }
    }
    // The chunks after the whole steps (fewer than U whole ones, then a partial one), one per warp in
    // turn; a lane whose 16 bytes lie past k feeds zeros.
#pragma unroll 1
    for (int c = steps * U + warp; c < chunks; c += WK) {
      const std::int64_t offset = static_cast<std::int64_t>(c) * kChunk;
      const bool in_k = offset + 16 * t < k;
      uint4 wv[MT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          wv[mt][h] = in_k ? device::load_stream_16(wlane + wrow[mt][h] + offset) : make_uint4(0, 0, 0, 0);
        }
      }
      if (!waited) {
        device::grid_dependency_wait();
        waited = true;
      }
      uint4 xv[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        xv[nt] =
            in_k && xvalid[nt] ? device::load_shared_operand_16(xlane + xrow[nt] + offset) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) chunk_mma<NT>(acc[mt], wv[mt][0], wv[mt][1], xv);
    }
    if (!waited) {
      device::grid_dependency_wait();  // a warp without chunks still must not write y early
      waited = true;
    }

    // Warps 1.. hand their partial sums to warp 0, which adds them in warp order (deterministic).
    if (warp > 0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
          for (int i = 0; i < 4; ++i) partial[warp - 1][(mt * NT + nt) * 4 + i][lane] = acc[mt][nt][i];
        }
      }
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
      for (int other = 0; other < WK - 1; ++other) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[mt][nt][i] += partial[other][(mt * NT + nt) * 4 + i][lane];
          }
        }
      }
      const float scale = __ldg(op.activation_scale) * __ldg(op.weight_scale);
      // Accumulator layout of m16n8: c0, c1 at (row g, columns 2t, 2t + 1), c2, c3 at row g + 8.
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const std::int64_t row = row0 + 16 * mt + g + (i >= 2 ? 8 : 0);
            const int vector = nt * 8 + 2 * t + (i & 1);
            if (vector < batch && row < m) {
              op.y[static_cast<std::int64_t>(vector) * m + row] = __float2bfloat16_rn(acc[mt][nt][i] * scale);
            }
          }
        }
      }
    }
    __syncthreads();  // warp 0 has read `partial` before the next tile overwrites it
  }
}

// mma: batches up to 8 share one n-tile. Where all tiles fit at four blocks per SM (m <= 64 x SMs),
// eight chunks in flight per warp; otherwise at most 64 registers so that eight blocks fit per SM,
// three chunks in flight (four spill at 64 registers). Larger batches: 2, 4, 8 n-tiles; from 17 on
// two m-tiles per block, so that each piece of x read from L2 feeds two m-tiles (gemv.cu's shapes;
// batches 17-32 at two blocks per SM, where three spilled). stag, pdl: one m-tile, four blocks per SM,
// eight chunks in flight per warp for one n-tile, four for two. ptxas (nvcc 13.0, sm_90a): no spills
// in any of them (docs/bench.md lists the registers).
using Mma1Deep = Config<1, 1, 4, 8, 4>;
using Mma1 = Config<1, 1, 4, 3, 8>;
using Mma2 = Config<2, 1, 4, 4, 4>;
using Mma4 = Config<4, 2, 4, 2, 2>;
using Mma8 = Config<8, 2, 4, 1, 2>;
using Tuned1 = Config<1, 1, 4, 8, 4>;
using Tuned2 = Config<2, 1, 4, 4, 4>;

Operands operands_of(const GemvArgs& a) {
  return {static_cast<const unsigned char*>(a.w), static_cast<const unsigned char*>(a.x),
          static_cast<__nv_bfloat16*>(a.y), a.weight_scale, a.activation_scale};
}

template <typename Cfg, bool Persistent, bool Pdl>
cudaError_t launch_config(const GemvArgs& a, cudaStream_t stream) {
  const auto kernel = gemv_w8a8_kernel<Cfg, Persistent, Pdl>;
  const std::int64_t tiles = (a.m + Cfg::rows - 1) / Cfg::rows;
  std::int64_t blocks = tiles;
  if constexpr (Persistent) {
    // A pure query (also inside stream capture); should it fail, one block per SM still runs
    // correctly, and its error must not be left for the launch check below.
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::threads, 0) != cudaSuccess || per_sm < 1) {
      (void)cudaGetLastError();
      per_sm = 1;
    }
    const std::int64_t resident = static_cast<std::int64_t>(per_sm) * (a.sms > 0 ? a.sms : 132);
    blocks = tiles < resident ? tiles : resident;
  }
  const Operands op = operands_of(a);
  const int m = static_cast<int>(a.m);
  const int k = static_cast<int>(a.k);
  const int batch = static_cast<int>(a.batch);
  if constexpr (Pdl) {
    return device::launch_programmatic_dependent(kernel, dim3(static_cast<unsigned>(blocks)), dim3(Cfg::threads), 0,
                                                 stream, op, m, k, batch);
  } else {
    kernel<<<static_cast<unsigned>(blocks), Cfg::threads, 0, stream>>>(op, m, k, batch);
    return cudaGetLastError();
  }
}

}  // namespace

const char* gemv_w8a8_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch) {
  if (m < 1 || k < 1 || batch < 1) return "sizes must be positive";
  if (m > 0x7FFFFFFF || k > 0x7FFFFFFF) return "m and k must fit in 32 bits";
  if (k % 16 != 0) return "the W8A8 GEMV needs k to be a multiple of 16 (16-byte rows of W and x)";
  if (m * k >= (std::int64_t{1} << 32) || batch * k >= (std::int64_t{1} << 32)) {
    return "the W8A8 GEMV needs m x k and batch x k below 2^32 (32-bit offsets into W and x)";
  }
  switch (kernel) {
    case GemvKernel::mma:
      return batch > gemv_w8a8_max_batch ? "the W8A8 tensor-core kernel handles batches up to 64" : nullptr;
    case GemvKernel::stag:
    case GemvKernel::pdl:
      return batch > kTunedMaxBatch ? "the tuned W8A8 kernels (stag, pdl) handle batches up to 16" : nullptr;
    default: return "the W8A8 GEMV is built as the mma, stag and pdl kernels only";
  }
}

bool gemv_w8a8_device_supported(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (prop.major * 10 + prop.minor < 89) return false;
  // The PTX the kernels were compiled from must be sm_89 or later, else their mma is compiled out.
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, gemv_w8a8_kernel<Mma1Deep, false, false>) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.ptxVersion >= 89;
}

cudaError_t launch_gemv_w8a8(const GemvArgs& a, cudaStream_t stream) {
  if (gemv_w8a8_unsupported(a.kernel, a.m, a.k, a.batch) != nullptr || a.weight_scale == nullptr ||
      a.activation_scale == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (a.kernel == GemvKernel::stag) {
    return a.batch > 8 ? launch_config<Tuned2, true, false>(a, stream) : launch_config<Tuned1, true, false>(a, stream);
  }
  if (a.kernel == GemvKernel::pdl) {
    return a.batch > 8 ? launch_config<Tuned2, true, true>(a, stream) : launch_config<Tuned1, true, true>(a, stream);
  }
  if (a.batch <= 8) {
    const bool one_wave_at_four = a.sms > 0 && (a.m + Mma1Deep::rows - 1) / Mma1Deep::rows <= 4 * std::int64_t{a.sms};
    return one_wave_at_four ? launch_config<Mma1Deep, false, false>(a, stream)
                            : launch_config<Mma1, false, false>(a, stream);
  }
  if (a.batch <= 16) return launch_config<Mma2, false, false>(a, stream);
  if (a.batch <= 32) return launch_config<Mma4, false, false>(a, stream);
  return launch_config<Mma8, false, false>(a, stream);
}

}  // namespace roofline::kernels::detail
