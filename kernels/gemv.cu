// GEMV kernels. The weight matrix dominates the traffic (one read of m x k elements), so both
// kernels are built around streaming W with 16-byte loads, many in flight per thread, and
// enough blocks resident to cover every SM in one wave.
//
// The tensor-core kernels feed mma.m16n8k16 straight from those loads, with W and x permuted the
// same way along k: gemv_mapping.hpp says which register holds what. Quantised W (fp8, int4) is
// turned into 16-bit pieces in registers first (WeightCodec), each piece standing where a 16-bit
// W's 16-byte load would.
#include <cuda_bf16.h>

#include <cstdint>

#include "device_utils.cuh"
#include "gemv.hpp"
#include "gemv_fragments.cuh"
#include "gemv_mapping.hpp"
#include "gemv_w8a8.hpp"
#include "gemv_wgmma.hpp"
#include "storage_format.cuh"
#include "tc_ptx.cuh"

namespace roofline::kernels {
namespace {

// mma step `Step` of a 32-k chunk: w holds the lane's pieces of rows g and g + 8, x its piece of
// vector g (gemv_fragments.cuh).
template <typename T, int Step>
__device__ __forceinline__ void mma_step(float (&acc)[4], const uint4& w0, const uint4& w1, const uint4& x) {
  uint32_t a[4];
  gemv_fragments::a_registers<Step>(a, w0, w1);
  ptx::mma_16816<T>(acc, a, gemv_fragments::b_register<Step, 0>(x), gemv_fragments::b_register<Step, 1>(x));
}

template <typename T>
__device__ __forceinline__ void mma_chunk_tile(float (&acc)[4], const uint4& w0, const uint4& w1, const uint4& x) {
  static_assert(gemv_mapping::steps == 2, "a 32-k chunk is two m16n8k16 steps");
  mma_step<T, 0>(acc, w0, w1, x);
  mma_step<T, 1>(acc, w0, w1, x);
}

// ---- weight codecs ---------------------------------------------------------------------------
//
// What 16 bytes of a W row become: `pieces` uint4s of eight x-format elements each, piece p
// holding the 8 k from 8p of the bytes' k range, in the order arrange_x puts a piece of x in
// (so that W and x still pair up term by term). A 64-byte chunk of a row (4 lanes x 16 bytes)
// spans chunk_k = 4 x 8 x pieces values of k.

template <StorageFormat W, typename TX>
struct WeightCodec;

// W in x's 16-bit format: the load is the piece.
template <typename TX>
struct SameFormatCodec {
  static constexpr int bits = 16;
  static constexpr int pieces = 1;
  static constexpr bool per_tensor_scale = false;
  static constexpr bool group_scaled = false;
  __device__ static __forceinline__ void decode(const uint4& raw, uint4 (&out)[pieces]) { out[0] = raw; }
  __device__ static __forceinline__ uint4 arrange_x(const uint4& x) { return x; }
};
template <>
struct WeightCodec<StorageFormat::bf16, __nv_bfloat16> : SameFormatCodec<__nv_bfloat16> {};
template <>
struct WeightCodec<StorageFormat::fp16, __half> : SameFormatCodec<__half> {};

// fp8 e4m3 W with bf16 x: 16 k per load, in order (e4m3x4_to_pairs, storage_format.cuh).
template <>
struct WeightCodec<StorageFormat::fp8_e4m3, __nv_bfloat16> {
  static constexpr int bits = 8;
  static constexpr int pieces = 2;
  static constexpr bool per_tensor_scale = true;
  static constexpr bool group_scaled = false;
  __device__ static __forceinline__ uint4 decode_word_pair(uint32_t lo, uint32_t hi) {
    const uint2 a = e4m3x4_to_pairs<__nv_bfloat16>(lo);
    const uint2 b = e4m3x4_to_pairs<__nv_bfloat16>(hi);
    return make_uint4(a.x, a.y, b.x, b.y);
  }
  __device__ static __forceinline__ void decode(const uint4& raw, uint4 (&out)[pieces]) {
    out[0] = decode_word_pair(raw.x, raw.y);
    out[1] = decode_word_pair(raw.z, raw.w);
  }
  __device__ static __forceinline__ uint4 arrange_x(const uint4& x) { return x; }
};

// int4 W (gemv.hpp's layout) with bf16 x: 32 k per load, one group scale per row and chunk (a
// chunk is 128 k, one group). A 32-bit word holds nibbles n0..n7 (k in order); nibbles i and
// i + 4 become one bf16 pair: (n | 0x4300) is the bf16 of 128 + n, and 128 + n - 136 = n - 8
// exactly. The pairs are (n0, n4), (n1, n5), (n2, n6), (n3, n7), and arrange_x pairs x alike.
template <>
struct WeightCodec<StorageFormat::int4_g128, __nv_bfloat16> {
  static constexpr int bits = 4;
  static constexpr int pieces = 4;
  static constexpr bool per_tensor_scale = false;
  static constexpr bool group_scaled = true;
  __device__ static __forceinline__ uint32_t nibble_pair(uint32_t shifted) {
    const uint32_t bits = (shifted & 0x000F000FU) | 0x43004300U;
    const __nv_bfloat162 offset = __halves2bfloat162(__ushort_as_bfloat16(0x4308), __ushort_as_bfloat16(0x4308));
    const __nv_bfloat162 v = __hsub2(*reinterpret_cast<const __nv_bfloat162*>(&bits), offset);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
  __device__ static __forceinline__ uint4 decode_word(uint32_t q) {
    return make_uint4(nibble_pair(q), nibble_pair(q >> 4), nibble_pair(q >> 8), nibble_pair(q >> 12));
  }
  __device__ static __forceinline__ void decode(const uint4& raw, uint4 (&out)[pieces]) {
    out[0] = decode_word(raw.x);
    out[1] = decode_word(raw.y);
    out[2] = decode_word(raw.z);
    out[3] = decode_word(raw.w);
  }
  // x words (x0 x1) (x2 x3) (x4 x5) (x6 x7) -> (x0 x4) (x1 x5) (x2 x6) (x3 x7).
  __device__ static __forceinline__ uint4 arrange_x(const uint4& x) {
    return make_uint4(__byte_perm(x.x, x.z, 0x5410), __byte_perm(x.x, x.z, 0x7632), __byte_perm(x.y, x.w, 0x5410),
                      __byte_perm(x.y, x.w, 0x7632));
  }
};

// k values one 64-byte chunk of a W row holds (4 lanes x 16 bytes).
template <typename Codec>
constexpr int chunk_k_of = 4 * 8 * Codec::pieces;
static_assert(chunk_k_of<WeightCodec<StorageFormat::int4_g128, __nv_bfloat16>> == gemv_int4_group,
              "an int4 chunk is one scale group");

// Bytes of `elements` values of W.
template <typename Codec>
__device__ __forceinline__ std::int64_t w_bytes(std::int64_t elements) {
  return elements * Codec::bits / 8;
}

// The scale of W rows `row` and `row + 8` in chunk (= group) `chunk`, for group-scaled W.
template <typename TX>
__device__ __forceinline__ float2 group_scales_of(const TX* scales, std::int64_t row, int groups, int chunk) {
  return make_float2(TraitsOf<TX>::to_float(scales[row * groups + chunk]),
                     TraitsOf<TX>::to_float(scales[(row + 8) * groups + chunk]));
}

// One 64-byte chunk of an m-tile against NT n-tiles of x: acc += W_chunk . x_chunk, each piece
// of W decoded and multiplied with its piece of x; group-scaled W accumulates the chunk apart
// and adds it times the rows' scales. xv[nt][p]: piece p of vector tile nt, as loaded.
template <typename TX, typename Codec, int NT>
__device__ __forceinline__ void codec_chunk(float (&acc)[NT][4], const uint4& w0, const uint4& w1,
                                            const uint4 (&xv)[NT][Codec::pieces], float2 scales) {
  uint4 p0[Codec::pieces];
  uint4 p1[Codec::pieces];
  Codec::decode(w0, p0);
  Codec::decode(w1, p1);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    if constexpr (Codec::group_scaled) {
      float part[4] = {0.0F, 0.0F, 0.0F, 0.0F};
#pragma unroll
      for (int p = 0; p < Codec::pieces; ++p) mma_chunk_tile<TX>(part, p0[p], p1[p], Codec::arrange_x(xv[nt][p]));
      // c0, c1 belong to row g, c2, c3 to row g + 8.
      acc[nt][0] = fmaf(part[0], scales.x, acc[nt][0]);
      acc[nt][1] = fmaf(part[1], scales.x, acc[nt][1]);
      acc[nt][2] = fmaf(part[2], scales.y, acc[nt][2]);
      acc[nt][3] = fmaf(part[3], scales.y, acc[nt][3]);
    } else {
#pragma unroll
      for (int p = 0; p < Codec::pieces; ++p) mma_chunk_tile<TX>(acc[nt], p0[p], p1[p], Codec::arrange_x(xv[nt][p]));
    }
  }
}

// The value an accumulator stands for: times the per-tensor scale of fp8 W.
template <typename Codec>
__device__ __forceinline__ float output_scale(const float* weight_scale) {
  if constexpr (Codec::per_tensor_scale) {
    return __ldg(weight_scale);
  } else {
    return 1.0F;
  }
}

// ---- tensor-core kernel ----------------------------------------------------------------------
//
// NT: n-tiles of 8 vectors (batch <= 8 NT). MT: m-tiles of 16 rows per block. WK: warps per
// block, splitting k. U: 64-byte W chunks per warp per step (2 x MT x U loads of 16 B in
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

// The operands of a GEMV kernel: W's bytes, x and y in the activations' format, and W's scales.
template <typename TX>
struct GemvOperands {
  const void* __restrict__ w;
  const TX* __restrict__ x;
  TX* __restrict__ y;
  const float* weight_scale;  // fp8 W
  const TX* group_scales;     // int4 W: [m][k / 128]
};

template <typename TX, typename Codec, typename Cfg>
__device__ __forceinline__ void mma_chunk(float (&acc)[Cfg::m_tiles][Cfg::n_tiles][4],
                                          const uint4 (&wv)[Cfg::m_tiles][2],
                                          const uint4 (&xv)[Cfg::n_tiles][Codec::pieces], const TX* group_scales,
                                          std::int64_t tile_row_g, int groups, int chunk) {
#pragma unroll
  for (int mt = 0; mt < Cfg::m_tiles; ++mt) {
    float2 scales = make_float2(1.0F, 1.0F);
    if constexpr (Codec::group_scaled) scales = group_scales_of(group_scales, tile_row_g + 16 * mt, groups, chunk);
    codec_chunk<TX, Codec, Cfg::n_tiles>(acc[mt], wv[mt][0], wv[mt][1], xv, scales);
  }
}

template <typename TX, typename Codec, typename Cfg>
__device__ __forceinline__ void load_x(uint4 (&xv)[Cfg::n_tiles][Codec::pieces], const TX* const (&xrow)[Cfg::n_tiles],
                                       const bool (&xvalid)[Cfg::n_tiles], std::int64_t k_offset) {
  // Every lane loads (lanes past the batch read vector 0 again) and then zeroes what it does not
  // need: no divergent branch before the warp-wide mma.
#pragma unroll
  for (int nt = 0; nt < Cfg::n_tiles; ++nt) {
#pragma unroll
    for (int p = 0; p < Codec::pieces; ++p) {
      const uint4 v = device::load_shared_operand_16(xrow[nt] + k_offset + 8 * p);
      xv[nt][p] = xvalid[nt] ? v : make_uint4(0, 0, 0, 0);
    }
  }
}

template <typename TX, typename Codec, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks)
    gemv_mma(GemvOperands<TX> op, int m, int k, int batch) {
  constexpr int NT = Cfg::n_tiles;
  constexpr int MT = Cfg::m_tiles;
  constexpr int WK = Cfg::warps;
  constexpr int U = Cfg::unroll;
  constexpr int CK = chunk_k_of<Codec>;
  constexpr int kRegs = MT * NT * 4;
  __shared__ float partial[WK - 1][kRegs][32];

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * Cfg::rows;
  const int groups = k / gemv_int4_group;

  // Row g of m-tile mt is at wp + mt x 16 rows, row g + 8 another 8 rows further: gemv_mapping::row_of
  // and the lane's 16 bytes at 16t, spelled out because computing them through the header changes
  // the machine code of the one-wave shape (Mma1).
  const std::int64_t row_bytes = w_bytes<Codec>(k);
  const unsigned char* wp = static_cast<const unsigned char*>(op.w) + (row0 + g) * row_bytes + 16 * t;
  const std::int64_t eight_rows = 8 * row_bytes;
  const TX* xrow[NT];
  bool xvalid[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int vector = nt * 8 + g;
    xvalid[nt] = vector < batch;
    xrow[nt] = op.x + static_cast<std::int64_t>(xvalid[nt] ? vector : 0) * k + (CK / 4) * t;
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

  // Steps of U chunks (64 bytes of each row each) are dealt to the warps round robin, so that at
  // any time the block's warps read neighbouring pieces of the same rows.
  const int chunks = k / CK;
  const int steps = chunks / U;
  // Pointers advance by whole steps; within a step the offsets are compile-time constants, so
  // every load addresses [base + immediate] and few registers hold addresses.
  const unsigned char* wstep = wp + static_cast<std::int64_t>(warp) * U * 64;
  const std::int64_t w_advance = static_cast<std::int64_t>(WK) * U * 64;
  std::int64_t xstep = static_cast<std::int64_t>(warp) * U * CK;
  const std::int64_t x_advance = static_cast<std::int64_t>(WK) * U * CK;
#pragma unroll 1
  for (int step = warp; step < steps; step += WK, wstep += w_advance, xstep += x_advance) {
    uint4 wv[U][MT][2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) wv[u][mt][h] = device::load_stream_16(wstep + (2 * mt + h) * eight_rows + u * 64);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint4 xv[NT][Codec::pieces];
      load_x<TX, Codec, Cfg>(xv, xrow, xvalid, xstep + u * CK);
      mma_chunk<TX, Codec, Cfg>(acc, wv[u], xv, op.group_scales, row0 + g, groups, step * U + u);
    }
  }
  // Chunks left over when k / CK is not a multiple of U, one per warp in turn.
#pragma unroll 1
  for (int chunk = steps * U + warp; chunk < chunks; chunk += WK) {
    const std::int64_t k_offset = static_cast<std::int64_t>(chunk) * CK;
    uint4 wv[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        wv[mt][h] = device::load_stream_16(wp + (2 * mt + h) * eight_rows + static_cast<std::int64_t>(chunk) * 64);
      }
    }
    uint4 xv[NT][Codec::pieces];
    load_x<TX, Codec, Cfg>(xv, xrow, xvalid, k_offset);
    mma_chunk<TX, Codec, Cfg>(acc, wv, xv, op.group_scales, row0 + g, groups, chunk);
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
  const float scale = output_scale<Codec>(op.weight_scale);
  // Accumulator layout of m16n8: c0, c1 at (row g, columns 2t, 2t+1), c2, c3 at row g + 8.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::int64_t row = row0 + 16 * mt + g + (i >= 2 ? 8 : 0);
        const int vector = nt * 8 + 2 * t + (i & 1);
        if (vector < batch) {
          const float value = Codec::per_tensor_scale ? acc[mt][nt][i] * scale : acc[mt][nt][i];
          op.y[static_cast<std::int64_t>(vector) * m + row] = TraitsOf<TX>::from_float(value);
        }
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
// Group-scaled (int4) W at batches 17-64: each chunk's four decoded pieces a row beside the x pieces
// of every vector tile are more than Mma4's and Mma8's budgets hold (ptxas spilt 244 and 392 bytes
// a thread, CUDA 13.0). Mma4's shape at two blocks per SM takes 236 registers; eight vector tiles
// on one m-tile, 220; neither spills. (Keeping Mma4 and Mma8 and holding less x at a time spilt
// still, ptxas hoisting the loads back: one piece of every vector tile 108 and 208 bytes, one vector
// tile's pieces 236 and 160.)
// Mma8Grouped keeps two chunks in flight a warp (252 registers, no spill): with one (220) batch 64
// took 1.05-1.15x as long on every quantised shape of the H200 suite
// (docs/results/2026-12-05-h200-deepseek-fp8-prefill).
using Mma4Grouped = MmaConfig<4, 2, 4, 2, 2>;
using Mma8Grouped = MmaConfig<8, 1, 4, 2, 2>;

template <typename TX>
GemvOperands<TX> operands_of(const GemvArgs& a) {
  return {a.w, static_cast<const TX*>(a.x), static_cast<TX*>(a.y), a.weight_scale,
          static_cast<const TX*>(a.group_scales)};
}

template <typename TX, typename Codec, typename Cfg>
cudaError_t launch_mma(const GemvArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(a.m / Cfg::rows);
  gemv_mma<TX, Codec, Cfg><<<blocks, Cfg::threads, 0, stream>>>(operands_of<TX>(a), static_cast<int>(a.m),
                                                                static_cast<int>(a.k), static_cast<int>(a.batch));
  return cudaGetLastError();
}

template <typename TX, typename Codec>
cudaError_t launch_mma_for_batch(const GemvArgs& a, cudaStream_t stream) {
  if (a.batch <= 8) {
    const bool one_wave_at_four = a.sms > 0 && a.m / Mma1Deep::rows <= 4 * static_cast<std::int64_t>(a.sms);
    return one_wave_at_four ? launch_mma<TX, Codec, Mma1Deep>(a, stream) : launch_mma<TX, Codec, Mma1>(a, stream);
  }
  if (a.batch <= 16) return launch_mma<TX, Codec, Mma2>(a, stream);
  if constexpr (Codec::group_scaled) {
    return a.batch <= 32 ? launch_mma<TX, Codec, Mma4Grouped>(a, stream)
                         : launch_mma<TX, Codec, Mma8Grouped>(a, stream);
  } else {
    return a.batch <= 32 ? launch_mma<TX, Codec, Mma4>(a, stream) : launch_mma<TX, Codec, Mma8>(a, stream);
  }
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
constexpr int kTunedChunksPerStep = 8;  // U of stag and pdl (pipe: half of it, twice buffered)

using device::grid_dependency_launch;
using device::grid_dependency_wait;

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

// Chunks first_chunk .. first_chunk + U - 1 of the tile's rows (in `buffer`) against x.
template <typename TX, typename Codec, int NT, int U>
__device__ __forceinline__ void tuned_use_step(float (&acc)[NT][4], const uint4 (&buffer)[U][2],
                                               const TX* const (&xrow)[NT], const bool (&xvalid)[NT], int first_chunk,
                                               const TX* group_scales, std::int64_t row_g, int groups) {
  constexpr int CK = chunk_k_of<Codec>;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    uint4 xv[NT][Codec::pieces];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int p = 0; p < Codec::pieces; ++p) {
        const uint4 v =
            device::load_shared_operand_16(xrow[nt] + static_cast<std::int64_t>(first_chunk + u) * CK + 8 * p);
        xv[nt][p] = xvalid[nt] ? v : make_uint4(0, 0, 0, 0);
      }
    }
    float2 scales = make_float2(1.0F, 1.0F);
    if constexpr (Codec::group_scaled) scales = group_scales_of(group_scales, row_g, groups, first_chunk + u);
    codec_chunk<TX, Codec, NT>(acc, buffer[u][0], buffer[u][1], xv, scales);
  }
}

template <typename TX, typename Codec, int NT, bool Pipeline, bool Pdl>
__global__ void __launch_bounds__(kTunedThreads, kTunedMinBlocks)
    gemv_tuned(GemvOperands<TX> op, int m, int k, int batch) {
  constexpr int U = Pipeline ? kTunedChunksPerStep / 2 : kTunedChunksPerStep;
  constexpr int WK = kTunedWarps;
  constexpr int CK = chunk_k_of<Codec>;
  __shared__ float partial[WK - 1][NT * 4][32];
  if constexpr (Pdl) grid_dependency_launch();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int tiles = m / 16;
  const int steps = k / (CK * U);
  const int groups = k / gemv_int4_group;
  const std::int64_t row_bytes = w_bytes<Codec>(k);
  const std::int64_t eight_rows_bytes = 8 * row_bytes;
  constexpr std::int64_t step_bytes = 64 * U;
  const TX* xrow[NT];
  bool xvalid[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int vector = nt * 8 + g;
    xvalid[nt] = vector < batch;
    xrow[nt] = op.x + static_cast<std::int64_t>(xvalid[nt] ? vector : 0) * k + (CK / 4) * t;
  }
  bool waited = !Pdl;

  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
    const std::int64_t tile_row_g = static_cast<std::int64_t>(tile) * 16 + g;
    const unsigned char* row_g = static_cast<const unsigned char*>(op.w) + tile_row_g * row_bytes + 16 * t;
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
      if (s < steps) tuned_load_step<U>(current, row_g, eight_rows_bytes, physical(s) * step_bytes);
      if (!waited) {
        grid_dependency_wait();  // the first W step is in flight; x and y may belong to the predecessor
        waited = true;
      }
#pragma unroll 1
      for (; s < steps; s += WK) {
        uint4 next[U][2];
        const bool more = s + WK < steps;
        if (more) tuned_load_step<U>(next, row_g, eight_rows_bytes, physical(s + WK) * step_bytes);
        tuned_use_step<TX, Codec, NT, U>(acc, current, xrow, xvalid, physical(s) * U, op.group_scales, tile_row_g,
                                         groups);
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
        tuned_load_step<U>(current, row_g, eight_rows_bytes, physical(s) * step_bytes);
        if (!waited) {
          grid_dependency_wait();  // the first W step is in flight; x and y may belong to the predecessor
          waited = true;
        }
        tuned_use_step<TX, Codec, NT, U>(acc, current, xrow, xvalid, physical(s) * U, op.group_scales, tile_row_g,
                                         groups);
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
      const float scale = output_scale<Codec>(op.weight_scale);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const std::int64_t row = static_cast<std::int64_t>(tile) * 16 + g + (i >= 2 ? 8 : 0);
          const int vector = nt * 8 + 2 * t + (i & 1);
          if (vector < batch) {
            const float value = Codec::per_tensor_scale ? acc[nt][i] * scale : acc[nt][i];
            op.y[static_cast<std::int64_t>(vector) * m + row] = TraitsOf<TX>::from_float(value);
          }
        }
      }
    }
    __syncthreads();  // warp 0 has read `partial` before the next tile overwrites it
  }
}

template <typename TX, typename Codec, int NT, bool Pipeline, bool Pdl>
cudaError_t launch_tuned_kernel(const GemvArgs& a, cudaStream_t stream) {
  const auto kernel = gemv_tuned<TX, Codec, NT, Pipeline, Pdl>;
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
  const GemvOperands<TX> op = operands_of<TX>(a);
  const int m = static_cast<int>(a.m);
  const int k = static_cast<int>(a.k);
  const int batch = static_cast<int>(a.batch);
  if constexpr (Pdl) {
    return device::launch_programmatic_dependent(kernel, dim3(blocks), dim3(kTunedThreads), 0, stream, op, m, k, batch);
  } else {
    kernel<<<blocks, kTunedThreads, 0, stream>>>(op, m, k, batch);
    return cudaGetLastError();
  }
}

template <typename TX, typename Codec>
cudaError_t launch_tuned(const GemvArgs& a, cudaStream_t stream) {
  const bool two = a.batch > 8;
  switch (a.kernel) {
    case GemvKernel::stag:
      return two ? launch_tuned_kernel<TX, Codec, 2, false, false>(a, stream)
                 : launch_tuned_kernel<TX, Codec, 1, false, false>(a, stream);
    case GemvKernel::pipe:
      return two ? launch_tuned_kernel<TX, Codec, 2, true, false>(a, stream)
                 : launch_tuned_kernel<TX, Codec, 1, true, false>(a, stream);
    default:
      return two ? launch_tuned_kernel<TX, Codec, 2, false, true>(a, stream)
                 : launch_tuned_kernel<TX, Codec, 1, false, true>(a, stream);
  }
}

bool is_tuned(GemvKernel kernel) {
  return kernel == GemvKernel::stag || kernel == GemvKernel::pipe || kernel == GemvKernel::pdl;
}

// ---- CUDA-core kernel ------------------------------------------------------------------------

constexpr int kSimtWarps = 8;
constexpr int kSimtUnroll = 4;

template <typename TX, typename Codec, int B>
__global__ void __launch_bounds__(32 * kSimtWarps) gemv_simt(GemvOperands<TX> op, int m, int k) {
  constexpr int E = 8 * Codec::pieces;  // k values per 16-byte piece of W
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kSimtWarps + threadIdx.x / 32;
  if (row >= m) return;
  const uint4* wr = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(op.w) + row * w_bytes<Codec>(k));
  const int pieces = k / E;  // 16-byte pieces per row
  const int groups = k / gemv_int4_group;
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
      uint4 decoded[Codec::pieces];
      Codec::decode(wv[u], decoded);
      // A piece lies inside one group of int4 W (128 / 32 pieces per group).
      const float group_scale =
          Codec::group_scaled ? TraitsOf<TX>::to_float(op.group_scales[row * groups + piece * E / gemv_int4_group])
                              : 1.0F;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        float sum = 0.0F;
#pragma unroll
        for (int d = 0; d < Codec::pieces; ++d) {
          const uint4 xv = Codec::arrange_x(__ldg(reinterpret_cast<const uint4*>(
              op.x + static_cast<std::int64_t>(b) * k + static_cast<std::int64_t>(piece) * E + 8 * d)));
          const uint32_t wwords[4] = {decoded[d].x, decoded[d].y, decoded[d].z, decoded[d].w};
          const uint32_t xwords[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float2 wf = TraitsOf<TX>::pair_to_float2(wwords[j]);
            const float2 xf = TraitsOf<TX>::pair_to_float2(xwords[j]);
            sum = fmaf(wf.x, xf.x, sum);
            sum = fmaf(wf.y, xf.y, sum);
          }
        }
        acc[b] = Codec::group_scaled ? fmaf(sum, group_scale, acc[b]) : acc[b] + sum;
      }
    }
  }
  const float scale = output_scale<Codec>(op.weight_scale);
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const float total = device::warp_sum(acc[b]);
    if (lane == 0) {
      op.y[static_cast<std::int64_t>(b) * m + row] =
          TraitsOf<TX>::from_float(Codec::per_tensor_scale ? total * scale : total);
    }
  }
}

template <typename TX, typename Codec, int B>
cudaError_t launch_simt(const GemvArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((a.m + kSimtWarps - 1) / kSimtWarps);
  gemv_simt<TX, Codec, B>
      <<<blocks, 32 * kSimtWarps, 0, stream>>>(operands_of<TX>(a), static_cast<int>(a.m), static_cast<int>(a.k));
  return cudaGetLastError();
}

template <typename TX, typename Codec>
cudaError_t launch_simt_for_batch(const GemvArgs& a, cudaStream_t stream) {
  switch (a.batch) {
    case 1: return launch_simt<TX, Codec, 1>(a, stream);
    case 2: return launch_simt<TX, Codec, 2>(a, stream);
    default: return launch_simt<TX, Codec, 4>(a, stream);
  }
}

template <typename TX, typename Codec>
cudaError_t launch_with_codec(const GemvArgs& a, cudaStream_t stream) {
  if (is_tuned(a.kernel)) return launch_tuned<TX, Codec>(a, stream);
  if (a.kernel == GemvKernel::mma) return launch_mma_for_batch<TX, Codec>(a, stream);
  return launch_simt_for_batch<TX, Codec>(a, stream);
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// k values per 16-byte load of W: 8 for 16-bit W, 16 for fp8, 32 for int4.
std::int64_t k_per_load(StorageFormat weights) {
  return 128 / bits_of(weights);
}

}  // namespace

const char* gemv_formats_unsupported(StorageFormat weights, StorageFormat activations) {
  if (gemv_is_w8a8(weights, activations)) return nullptr;
  if (gemv_quantised_weights.contains(weights)) {
    return activations == StorageFormat::bf16
               ? nullptr
               : "the GEMV kernels take fp8 and int4 weights with bf16 activations, or fp8 weights with fp8 "
                 "activations (W8A8)";
  }
  if (weights != activations) return "the GEMV kernels take 16-bit W in the format of x and y";
  if (!gemv_formats.contains(weights)) return "the GEMV kernels are built for bf16 and fp16 (or fp8/int4 weights)";
  return nullptr;
}

const char* gemv_unsupported(GemvKernel kernel, std::int64_t m, std::int64_t k, std::int64_t batch,
                             StorageFormat weights, StorageFormat activations) {
  if (gemv_is_w8a8(weights, activations)) return detail::gemv_w8a8_unsupported(kernel, m, k, batch);
  if (m < 1 || k < 1 || batch < 1) return "sizes must be positive";
  if (m > 0x7FFFFFFF || k > 0x7FFFFFFF) return "m and k must fit in 32 bits";
  if (weights == StorageFormat::int4_g128 && k % gemv_int4_group != 0) {
    return "int4_g128 weights need k to be a multiple of the group, 128";
  }
  // A tensor-core chunk is 4 loads of 16 bytes of each row: 32 k of 16-bit W, 64 of fp8, 128 of int4.
  const std::int64_t chunk = 4 * k_per_load(weights);
  if (is_tuned(kernel)) {
    if (batch > 16) return "the tuned tensor-core kernels handle batches up to 16";
    if (k % (chunk * kTunedChunksPerStep) != 0) {
      switch (weights) {
        case StorageFormat::fp8_e4m3: return "the tuned tensor-core kernels need k to be a multiple of 512 for fp8 W";
        case StorageFormat::int4_g128:
          return "the tuned tensor-core kernels need k to be a multiple of 1024 for int4 W";
        default: return "the tuned tensor-core kernels need k to be a multiple of 256";
      }
    }
    if (m % 16 != 0) return "the tuned tensor-core kernels need m to be a multiple of 16";
    return nullptr;
  }
  if (kernel == GemvKernel::wgmma) return detail::gemv_wgmma_unsupported(m, k, batch, weights);
  if (kernel == GemvKernel::mma) {
    if (batch > 64) return "the tensor-core kernel handles batches up to 64";
    if (k % chunk != 0) {
      return weights == StorageFormat::fp8_e4m3 ? "the tensor-core kernel needs k to be a multiple of 64 for fp8 W"
                                                : "the tensor-core kernel needs k to be a multiple of 32";
    }
    if (m % mma_rows(batch) != 0) {
      return batch <= 16 ? "the tensor-core kernel needs m to be a multiple of 16 for batches up to 16"
                         : "the tensor-core kernel needs m to be a multiple of 32 for batches above 16";
    }
    return nullptr;
  }
  if (batch != 1 && batch != 2 && batch != 4) return "the CUDA-core kernel handles batches 1, 2 and 4";
  if (k % k_per_load(weights) != 0) {
    return weights == StorageFormat::fp8_e4m3 ? "the CUDA-core kernel needs k to be a multiple of 16 for fp8 W"
                                              : "the CUDA-core kernel needs k to be a multiple of 8";
  }
  return nullptr;
}

std::size_t gemv_workspace_bytes(const GemvArgs& a) {
  if (a.kernel != GemvKernel::wgmma) return 0;
  return detail::gemv_wgmma_workspace_bytes(a.m, a.k, a.batch, a.sms);
}

bool gemv_kernel_supported(GemvKernel kernel, int device) {
  if (kernel != GemvKernel::wgmma) return true;
#if defined(ROOFLINE_HAVE_SM90A)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return false;
  return prop.major == 9 && prop.minor == 0;
#else
  (void)device;
  return false;
#endif
}

bool gemv_w8a8_supported(int device) {
  return detail::gemv_w8a8_device_supported(device);
}

cudaError_t launch_gemv(const GemvArgs& a, cudaStream_t stream) {
  if (gemv_unsupported(a.kernel, a.m, a.k, a.batch, a.weights, a.activations) != nullptr || !aligned16(a.w) ||
      !aligned16(a.x) || a.y == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (gemv_formats_unsupported(a.weights, a.activations) != nullptr) return cudaErrorInvalidValue;
  if (gemv_is_w8a8(a.weights, a.activations)) return detail::launch_gemv_w8a8(a, stream);
  if (a.kernel == GemvKernel::wgmma) return detail::launch_gemv_wgmma(a, stream);
  switch (a.weights) {
    case StorageFormat::fp8_e4m3:
      if (a.weight_scale == nullptr) return cudaErrorInvalidValue;
      return launch_with_codec<__nv_bfloat16, WeightCodec<StorageFormat::fp8_e4m3, __nv_bfloat16>>(a, stream);
    case StorageFormat::int4_g128:
      if (a.group_scales == nullptr) return cudaErrorInvalidValue;
      return launch_with_codec<__nv_bfloat16, WeightCodec<StorageFormat::int4_g128, __nv_bfloat16>>(a, stream);
    default:
      return dispatch_storage<gemv_formats>(a.weights, [&](auto traits) {
        using T = typename decltype(traits)::Element;
        return launch_with_codec<T, WeightCodec<decltype(traits)::format, T>>(a, stream);
      });
  }
}

}  // namespace roofline::kernels
