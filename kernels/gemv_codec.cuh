#pragma once

// What the GEMV kernels share (gemv.cu's register-fed kernels, gemv_bulk.cu's shared-memory-fed
// one): the operands, how 16 bytes of a W row in each storage format become 16-bit pieces
// (WeightCodec), and the mma.m16n8k16 chunk that multiplies them with x, W and x permuted the
// same way along k (gemv_mapping.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gemv.hpp"
#include "gemv_mapping.hpp"
#include "storage_format.cuh"
#include "tc_ptx.cuh"

namespace roofline::kernels::gemv_detail {

// The operands of a GEMV kernel: W's bytes, x and y in the activations' format, and W's scales.
template <typename TX>
struct GemvOperands {
  const void* __restrict__ w;
  const TX* __restrict__ x;
  TX* __restrict__ y;
  const float* weight_scale;  // fp8 W
  const TX* group_scales;     // int4 W: [m][k / 128]
};

template <typename TX>
GemvOperands<TX> operands_of(const GemvArgs& a) {
  return {a.w, static_cast<const TX*>(a.x), static_cast<TX*>(a.y), a.weight_scale,
          static_cast<const TX*>(a.group_scales)};
}

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

}  // namespace roofline::kernels::gemv_detail
