// GEMV kernels. The weight matrix dominates the traffic (one read of m x k elements), so both
// kernels are built around streaming W with 16-byte loads, many in flight per thread, and
// enough blocks resident to cover every SM in one wave.
//
// The tensor-core kernels feed mma.m16n8k16 straight from those loads, with W and x permuted the
// same way along k: gemv_mapping.hpp says which register holds what.
#include <cstdint>

#include "device_utils.cuh"
#include "gemv.hpp"
#include "gemv_mapping.hpp"
#include "storage_format.cuh"
#include "tc_ptx.cuh"

namespace roofline::kernels {
namespace {

template <int Word>
__device__ __forceinline__ uint32_t word_of(const uint4& v) {
  if constexpr (Word == 0) return v.x;
  if constexpr (Word == 1) return v.y;
  if constexpr (Word == 2) return v.z;
  return v.w;
}

// mma step `Step` of a 32-k chunk: w holds the lane's pieces of rows g and g + 8, x its piece of
// vector g (gemv_mapping.hpp).
template <typename T, int Step>
__device__ __forceinline__ void mma_step(float (&acc)[4], const uint4& w0, const uint4& w1, const uint4& x) {
  constexpr gemv_mapping::WordOfPiece a0 = gemv_mapping::a_source(Step, 0);
  constexpr gemv_mapping::WordOfPiece a1 = gemv_mapping::a_source(Step, 1);
  constexpr gemv_mapping::WordOfPiece a2 = gemv_mapping::a_source(Step, 2);
  constexpr gemv_mapping::WordOfPiece a3 = gemv_mapping::a_source(Step, 3);
  const uint4 pieces[2] = {w0, w1};
  const uint32_t a[4] = {word_of<a0.word>(pieces[a0.piece]), word_of<a1.word>(pieces[a1.piece]),
                         word_of<a2.word>(pieces[a2.piece]), word_of<a3.word>(pieces[a3.piece])};
  ptx::mma_16816<T>(acc, a, word_of<gemv_mapping::b_word(Step, 0)>(x), word_of<gemv_mapping::b_word(Step, 1)>(x));
}

template <typename T>
__device__ __forceinline__ void mma_chunk_tile(float (&acc)[4], const uint4& w0, const uint4& w1, const uint4& x) {
  static_assert(gemv_mapping::steps == 2, "a 32-k chunk is two m16n8k16 steps");
  mma_step<T, 0>(acc, w0, w1, x);
  mma_step<T, 1>(acc, w0, w1, x);
}

// ---- tensor-core kernel ----------------------------------------------------------------------
//
// NT: n-tiles of 8 vectors (batch <= 8 NT). MT: m-tiles of 16 rows per block. WK: warps per
// block, splitting k. U: 32-element k-chunks per warp per step (2 x MT x U loads of 16 B in
// flight per thread). MinBlocks: the register budget (blocks resident per SM).
template <int NT, int MT, int WK, int U, int MinBlocks>
struct MmaConfig {
  static constexpr int n_tiles = NT;
  static constexpr int m_tiles = MT;
  static constexpr int warps = WK;
  static constexpr int unroll = U;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int threads = 32 * WK;
  static constexpr int rows = 16 * MT;
};

template <typename T, typename Cfg>
__device__ __forceinline__ void mma_chunk(float (&acc)[Cfg::m_tiles][Cfg::n_tiles][4],
                                          const uint4 (&wv)[Cfg::m_tiles][2], const uint4 (&xv)[Cfg::n_tiles]) {
#pragma unroll
  for (int mt = 0; mt < Cfg::m_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < Cfg::n_tiles; ++nt) {
      mma_chunk_tile<T>(acc[mt][nt], wv[mt][0], wv[mt][1], xv[nt]);
    }
  }
}

template <typename T, typename Cfg>
__device__ __forceinline__ void load_x(uint4 (&xv)[Cfg::n_tiles], const T* const (&xrow)[Cfg::n_tiles],
                                       const bool (&xvalid)[Cfg::n_tiles], std::int64_t k_offset) {
  // Every lane loads (lanes past the batch read vector 0 again) and then zeroes what it does not
  // need: no divergent branch before the warp-wide mma.
#pragma unroll
  for (int nt = 0; nt < Cfg::n_tiles; ++nt) {
    const uint4 v = device::load_shared_operand_16(xrow[nt] + k_offset);
    xv[nt] = xvalid[nt] ? v : make_uint4(0, 0, 0, 0);
  }
}

template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks)
    gemv_mma(const T* __restrict__ w, const T* __restrict__ x, T* __restrict__ y, int m, int k, int batch) {
  constexpr int NT = Cfg::n_tiles;
  constexpr int MT = Cfg::m_tiles;
  constexpr int WK = Cfg::warps;
  constexpr int U = Cfg::unroll;
  constexpr int kRegs = MT * NT * 4;
  __shared__ float partial[WK - 1][kRegs][32];

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * Cfg::rows;

  // Row g of m-tile mt is at wp + mt x 16k, row g + 8 another 8k further: gemv_mapping::row_of and
  // k_of(lane, 0, 0) = 8t, spelled out because computing them through the header changes the machine
  // code of the one-wave shape (Mma1).
  const T* wp = w + (row0 + g) * k + 8 * t;
  const std::int64_t eight_rows = 8 * static_cast<std::int64_t>(k);
  const T* xrow[NT];
  bool xvalid[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int vector = nt * 8 + g;
    xvalid[nt] = vector < batch;
    xrow[nt] = x + static_cast<std::int64_t>(xvalid[nt] ? vector : 0) * k + 8 * t;
  }

  float acc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0F;
    }
  }

  // Steps of U chunks (32 elements each) are dealt to the warps round robin, so that at any
  // time the block's warps read neighbouring pieces of the same rows.
  const int chunks = k / 32;
  const int steps = chunks / U;
  // Pointers advance by whole steps; within a step the offsets are compile-time constants, so
  // every load addresses [base + immediate] and few registers hold addresses.
  const std::int64_t first = static_cast<std::int64_t>(warp) * U * 32;
  const std::int64_t advance = static_cast<std::int64_t>(WK) * U * 32;
  const T* wstep = wp + first;
  std::int64_t xstep = first;
#pragma unroll 1
  for (int step = warp; step < steps; step += WK, wstep += advance, xstep += advance) {
    uint4 wv[U][MT][2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) wv[u][mt][h] = device::load_stream_16(wstep + (2 * mt + h) * eight_rows + u * 32);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint4 xv[NT];
      load_x<T, Cfg>(xv, xrow, xvalid, xstep + u * 32);
      mma_chunk<T, Cfg>(acc, wv[u], xv);
    }
  }
  // Chunks left over when k / 32 is not a multiple of U, one per warp in turn.
#pragma unroll 1
  for (int chunk = steps * U + warp; chunk < chunks; chunk += WK) {
    const std::int64_t k_offset = static_cast<std::int64_t>(chunk) * 32;
    uint4 wv[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) wv[mt][h] = device::load_stream_16(wp + (2 * mt + h) * eight_rows + k_offset);
    }
    uint4 xv[NT];
    load_x<T, Cfg>(xv, xrow, xvalid, k_offset);
    mma_chunk<T, Cfg>(acc, wv, xv);
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
  if (warp != 0) return;
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
  // Accumulator layout of m16n8: c0, c1 at (row g, columns 2t, 2t+1), c2, c3 at row g + 8.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::int64_t row = row0 + 16 * mt + g + (i >= 2 ? 8 : 0);
        const int vector = nt * 8 + 2 * t + (i & 1);
        if (vector < batch) y[static_cast<std::int64_t>(vector) * m + row] = TraitsOf<T>::from_float(acc[mt][nt][i]);
      }
    }
  }
}

// Batch 1-8: one m-tile per block of four warps. Two shapes: where all blocks fit on the GPU
// at four per SM (m <= 64 x SMs), eight chunks in flight per warp and step (256 bytes per
// thread); otherwise at most 64 registers, so that eight blocks fit per SM (16384 rows = 1024
// blocks run in one wave on 132 SMs) with four chunks in flight.
using Mma1Deep = MmaConfig<1, 1, 4, 8, 4>;
using Mma1 = MmaConfig<1, 1, 4, 4, 8>;
using Mma2 = MmaConfig<2, 1, 4, 4, 4>;
// Larger batches: two m-tiles per block so that each vector piece loaded from L2 feeds two mma.
using Mma4 = MmaConfig<4, 2, 4, 2, 3>;
using Mma8 = MmaConfig<8, 2, 4, 1, 2>;

template <typename T, typename Cfg>
cudaError_t launch_mma(const GemvArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(a.m / Cfg::rows);
  gemv_mma<T, Cfg><<<blocks, Cfg::threads, 0, stream>>>(static_cast<const T*>(a.w), static_cast<const T*>(a.x),
                                                        static_cast<T*>(a.y), static_cast<int>(a.m),
                                                        static_cast<int>(a.k), static_cast<int>(a.batch));
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_mma_for_batch(const GemvArgs& a, cudaStream_t stream) {
  if (a.batch <= 8) {
    const bool one_wave_at_four = a.sms > 0 && a.m / Mma1Deep::rows <= 4 * static_cast<std::int64_t>(a.sms);
    return one_wave_at_four ? launch_mma<T, Mma1Deep>(a, stream) : launch_mma<T, Mma1>(a, stream);
  }
  if (a.batch <= 16) return launch_mma<T, Mma2>(a, stream);
  if (a.batch <= 32) return launch_mma<T, Mma4>(a, stream);
  return launch_mma<T, Mma8>(a, stream);
}

std::int64_t mma_rows(std::int64_t batch) {
  return batch <= 16 ? 16 : 32;
}

// ---- tuned tensor-core kernels (stag, pipe, pdl) ---------------------------------------------
//
// Same operand permutation and block shape as gemv_mma with one m-tile (16 rows, four warps
// splitting k in steps of U chunks), changed in three ways that each address a suspected loss at
// 8192^2 (134 MB, ~31 us: a few microseconds of fixed cost are 10 %):
//   - a resident grid (blocks = what fits at once) loops over the row tiles, and tile i starts
//     its k sweep Stride x i steps in (wrapping): the blocks in flight then read columns spread
//     over the row instead of all the same ones, 16 KB apart, which can concentrate on a few
//     memory channels;
//   - Pipeline: each warp issues the loads of its next step before it uses the current one, so
//     that its loads are always in flight (U = 4 x 2 rows x 16 B x 32 lanes = 4 KB per buffer);
//     without it a step's loads are issued, waited for and used (U = 8 then, as gemv_mma's
//     one-wave shape);
//   - Pdl (on the unpipelined stag): launched with programmatic stream serialisation, the kernel
//     lets its successor start at once (griddepcontrol.launch_dependents), loads its first W step,
//     and only then waits for its predecessor to finish (griddepcontrol.wait) before it reads x or
//     writes y. Back to back, one kernel's tail then overlaps the next one's ramp-up, which is
//     what cuBLAS's GEMV gains when it is replayed in a graph.
constexpr int kTunedWarps = 4;
constexpr int kTunedThreads = 32 * kTunedWarps;
constexpr int kTunedMinBlocks = 4;      // at most 128 registers: four blocks (16 warps) per SM
constexpr int kTunedStaggerStride = 7;  // odd and prime: tiles in flight start at distinct steps

__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependency_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <int U>
__device__ __forceinline__ void tuned_load_step(uint4 (&buffer)[U][2], const void* row_g, std::int64_t eight_rows_bytes,
                                                std::int64_t k_offset_bytes) {
  const char* p = static_cast<const char*>(row_g) + k_offset_bytes;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    buffer[u][0] = device::load_stream_16(p + u * 64);
    buffer[u][1] = device::load_stream_16(p + eight_rows_bytes + u * 64);
  }
}

template <typename T, int NT, int U>
__device__ __forceinline__ void tuned_use_step(float (&acc)[NT][4], const uint4 (&buffer)[U][2],
                                               const T* const (&xrow)[NT], const bool (&xvalid)[NT],
                                               std::int64_t k_offset) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const uint4 v = device::load_shared_operand_16(xrow[nt] + k_offset + u * 32);
      const uint4 xv = xvalid[nt] ? v : make_uint4(0, 0, 0, 0);
      mma_chunk_tile<T>(acc[nt], buffer[u][0], buffer[u][1], xv);
    }
  }
}

template <typename T, int NT, bool Pipeline, bool Pdl>
__global__ void __launch_bounds__(kTunedThreads, kTunedMinBlocks)
    gemv_tuned(const T* __restrict__ w, const T* __restrict__ x, T* __restrict__ y, int m, int k, int batch) {
  constexpr int U = Pipeline ? 4 : 8;
  constexpr int WK = kTunedWarps;
  __shared__ float partial[WK - 1][NT * 4][32];
  if constexpr (Pdl) grid_dependency_launch();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int tiles = m / 16;
  const int steps = k / (32 * U);
  const std::int64_t eight_rows_bytes = 8 * static_cast<std::int64_t>(k) * static_cast<std::int64_t>(sizeof(T));
  constexpr std::int64_t step_elements = 32 * U;
  const T* xrow[NT];
  bool xvalid[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int vector = nt * 8 + g;
    xvalid[nt] = vector < batch;
    xrow[nt] = x + static_cast<std::int64_t>(xvalid[nt] ? vector : 0) * k + 8 * t;
  }
  bool waited = !Pdl;

  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
    const T* row_g = w + (static_cast<std::int64_t>(tile) * 16 + g) * k + 8 * t;
    const int shift = static_cast<int>((static_cast<std::int64_t>(tile) * kTunedStaggerStride) % steps);
    const auto physical = [shift, steps](int s) { return s + shift >= steps ? s + shift - steps : s + shift; };
    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = 0.0F;
    }
    uint4 current[U][2];
    if constexpr (Pipeline) {
      int s = warp;
      if (s < steps) {
        tuned_load_step<U>(current, row_g, eight_rows_bytes,
                           physical(s) * step_elements * static_cast<std::int64_t>(sizeof(T)));
      }
      if (!waited) {
        grid_dependency_wait();  // the first W step is in flight; x and y may belong to the predecessor
        waited = true;
      }
#pragma unroll 1
      for (; s < steps; s += WK) {
        uint4 next[U][2];
        const bool more = s + WK < steps;
        if (more) {
          tuned_load_step<U>(next, row_g, eight_rows_bytes,
                             physical(s + WK) * step_elements * static_cast<std::int64_t>(sizeof(T)));
        }
        tuned_use_step<T, NT, U>(acc, current, xrow, xvalid, physical(s) * step_elements);
        if (more) {
#pragma unroll
          for (int u = 0; u < U; ++u) {
            current[u][0] = next[u][0];
            current[u][1] = next[u][1];
          }
        }
      }
    } else {
#pragma unroll 1
      for (int s = warp; s < steps; s += WK) {
        tuned_load_step<U>(current, row_g, eight_rows_bytes,
                           physical(s) * step_elements * static_cast<std::int64_t>(sizeof(T)));
        if (!waited) {
          grid_dependency_wait();  // the first W step is in flight; x and y may belong to the predecessor
          waited = true;
        }
        tuned_use_step<T, NT, U>(acc, current, xrow, xvalid, physical(s) * step_elements);
      }
      if (!waited) {
        grid_dependency_wait();  // a warp without steps still must not write y early
        waited = true;
      }
    }

    // Warps 1.. hand their partial sums to warp 0, which adds them in warp order (deterministic).
    if (warp > 0) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) partial[warp - 1][nt * 4 + i][lane] = acc[nt][i];
      }
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
      for (int other = 0; other < WK - 1; ++other) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[nt][i] += partial[other][nt * 4 + i][lane];
        }
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const std::int64_t row = static_cast<std::int64_t>(tile) * 16 + g + (i >= 2 ? 8 : 0);
          const int vector = nt * 8 + 2 * t + (i & 1);
          if (vector < batch) y[static_cast<std::int64_t>(vector) * m + row] = TraitsOf<T>::from_float(acc[nt][i]);
        }
      }
    }
    __syncthreads();  // warp 0 has read `partial` before the next tile overwrites it
  }
}

template <typename T, int NT, bool Pipeline, bool Pdl>
cudaError_t launch_tuned_kernel(const GemvArgs& a, cudaStream_t stream) {
  const auto kernel = gemv_tuned<T, NT, Pipeline, Pdl>;
  // A pure query (also inside stream capture); should it fail, one block per SM still runs correctly,
  // and its error must not be left for the launch check below.
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTunedThreads, 0) != cudaSuccess || per_sm < 1) {
    (void)cudaGetLastError();
    per_sm = 1;
  }
  const std::int64_t tiles = a.m / 16;
  const std::int64_t resident = static_cast<std::int64_t>(per_sm) * (a.sms > 0 ? a.sms : 132);
  const unsigned blocks = static_cast<unsigned>(tiles < resident ? tiles : resident);
  const T* w = static_cast<const T*>(a.w);
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const int m = static_cast<int>(a.m);
  const int k = static_cast<int>(a.k);
  const int batch = static_cast<int>(a.batch);
  if constexpr (Pdl) {
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(kTunedThreads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    const cudaError_t status = cudaLaunchKernelEx(&config, kernel, w, x, y, m, k, batch);
    return status != cudaSuccess ? status : cudaGetLastError();
  } else {
    kernel<<<blocks, kTunedThreads, 0, stream>>>(w, x, y, m, k, batch);
    return cudaGetLastError();
  }
}

template <typename T>
cudaError_t launch_tuned(const GemvArgs& a, cudaStream_t stream) {
  const bool two = a.batch > 8;
  switch (a.kernel) {
    case GemvKernel::stag:
      return two ? launch_tuned_kernel<T, 2, false, false>(a, stream)
                 : launch_tuned_kernel<T, 1, false, false>(a, stream);
    case GemvKernel::pipe:
      return two ? launch_tuned_kernel<T, 2, true, false>(a, stream)
                 : launch_tuned_kernel<T, 1, true, false>(a, stream);
    default:
      return two ? launch_tuned_kernel<T, 2, false, true>(a, stream)
                 : launch_tuned_kernel<T, 1, false, true>(a, stream);
  }
}

bool is_tuned(GemvKernel kernel) {
  return kernel == GemvKernel::stag || kernel == GemvKernel::pipe || kernel == GemvKernel::pdl;
}

// ---- CUDA-core kernel ------------------------------------------------------------------------

constexpr int kSimtWarps = 8;
constexpr int kSimtUnroll = 4;

template <typename T, int B>
__global__ void __launch_bounds__(32 * kSimtWarps)
    gemv_simt(const T* __restrict__ w, const T* __restrict__ x, T* __restrict__ y, int m, int k) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kSimtWarps + threadIdx.x / 32;
  if (row >= m) return;
  const uint4* wr = reinterpret_cast<const uint4*>(w + row * k);
  const int pieces = k / 8;  // 16-byte pieces per row
  float acc[B] = {};
  for (int p = lane; p < pieces; p += 32 * kSimtUnroll) {
    uint4 wv[kSimtUnroll];
#pragma unroll
    for (int u = 0; u < kSimtUnroll; ++u) {
      const int piece = p + 32 * u;
      wv[u] = piece < pieces ? device::load_stream_16(wr + piece) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kSimtUnroll; ++u) {
      const int piece = p + 32 * u;
      if (piece >= pieces) break;
      const uint32_t wwords[4] = {wv[u].x, wv[u].y, wv[u].z, wv[u].w};
#pragma unroll
      for (int b = 0; b < B; ++b) {
        const uint4 xv = __ldg(reinterpret_cast<const uint4*>(x + static_cast<std::int64_t>(b) * k) + piece);
        const uint32_t xwords[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 wf = TraitsOf<T>::pair_to_float2(wwords[j]);
          const float2 xf = TraitsOf<T>::pair_to_float2(xwords[j]);
          acc[b] = fmaf(wf.x, xf.x, acc[b]);
          acc[b] = fmaf(wf.y, xf.y, acc[b]);
        }
      }
    }
  }
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const float total = device::warp_sum(acc[b]);
    if (lane == 0) y[static_cast<std::int64_t>(b) * m + row] = TraitsOf<T>::from_float(total);
  }
}

template <typename T, int B>
cudaError_t launch_simt(const GemvArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((a.m + kSimtWarps - 1) / kSimtWarps);
  gemv_simt<T, B><<<blocks, 32 * kSimtWarps, 0, stream>>>(static_cast<const T*>(a.w), static_cast<const T*>(a.x),
                                                          static_cast<T*>(a.y), static_cast<int>(a.m),
                                                          static_cast<int>(a.k));
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_simt_for_batch(const GemvArgs& a, cudaStream_t stream) {
  switch (a.batch) {
    case 1: return launch_simt<T, 1>(a, stream);
    case 2: return launch_simt<T, 2>(a, stream);
    default: return launch_simt<T, 4>(a, stream);
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

const char* gemv_formats_unsupported(StorageFormat weights, StorageFormat activations) {
  if (weights != activations) return "the GEMV kernels take W, x and y in one storage format";
  if (!gemv_formats.contains(weights)) return "the GEMV kernels are built for bf16 and fp16 only";
  return nullptr;
}

const char* gemv_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch) {
  if (m < 1 || k < 1 || batch < 1) return "sizes must be positive";
  if (m > 0x7FFFFFFF || k > 0x7FFFFFFF) return "m and k must fit in 32 bits";
  if (is_tuned(kernel)) {
    if (batch > 16) return "the tuned tensor-core kernels handle batches up to 16";
    if (k % 256 != 0) return "the tuned tensor-core kernels need k to be a multiple of 256";
    if (m % 16 != 0) return "the tuned tensor-core kernels need m to be a multiple of 16";
    return nullptr;
  }
  if (kernel == GemvKernel::mma) {
    if (batch > 64) return "the tensor-core kernel handles batches up to 64";
    if (k % 32 != 0) return "the tensor-core kernel needs k to be a multiple of 32";
    if (m % mma_rows(batch) != 0) {
      return batch <= 16 ? "the tensor-core kernel needs m to be a multiple of 16 for batches up to 16"
                         : "the tensor-core kernel needs m to be a multiple of 32 for batches above 16";
    }
    return nullptr;
  }
  if (batch != 1 && batch != 2 && batch != 4) return "the CUDA-core kernel handles batches 1, 2 and 4";
  if (k % 8 != 0) return "the CUDA-core kernel needs k to be a multiple of 8";
  return nullptr;
}

cudaError_t launch_gemv(const GemvArgs& a, cudaStream_t stream) {
  if (gemv_unsupported(a.kernel, a.m, a.k, a.batch) != nullptr || !aligned16(a.w) || !aligned16(a.x) ||
      a.y == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (gemv_formats_unsupported(a.weights, a.activations) != nullptr) return cudaErrorInvalidValue;
  return dispatch_storage<gemv_formats>(a.weights, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    if (is_tuned(a.kernel)) return launch_tuned<T>(a, stream);
    if (a.kernel == GemvKernel::mma) return launch_mma_for_batch<T>(a, stream);
    return launch_simt_for_batch<T>(a, stream);
  });
}

}  // namespace roofline::kernels
