#pragma once

// The registers of one mma step of the tensor-core GEMVs (gemv.cu's 16-bit mma.m16n8k16 and
// gemv_w8a8.cu's e4m3 mma.m16n8k32): lane (g, t) holds 16-byte pieces of W rows g and g + 8 and of
// vector g, and gemv_mapping.hpp says which 32-bit word of which piece each register takes. The
// pairing is the same for both instructions (a word holds two 16-bit or four 8-bit k), so both
// kernels take their registers here.
#include <vector_types.h>

#include <cstdint>

#include "gemv_mapping.hpp"

namespace roofline::kernels::gemv_fragments {

template <int Word>
__device__ __forceinline__ uint32_t word_of(const uint4& v) {
  if constexpr (Word == 0) return v.x;
  if constexpr (Word == 1) return v.y;
  if constexpr (Word == 2) return v.z;
  return v.w;
}

// A's four registers of step `Step` from the pieces of rows g (w0) and g + 8 (w1).
template <int Step>
__device__ __forceinline__ void a_registers(uint32_t (&a)[4], const uint4& w0, const uint4& w1) {
  constexpr gemv_mapping::WordOfPiece a0 = gemv_mapping::a_source(Step, 0);
  constexpr gemv_mapping::WordOfPiece a1 = gemv_mapping::a_source(Step, 1);
  constexpr gemv_mapping::WordOfPiece a2 = gemv_mapping::a_source(Step, 2);
  constexpr gemv_mapping::WordOfPiece a3 = gemv_mapping::a_source(Step, 3);
  const uint4 pieces[2] = {w0, w1};
  a[0] = word_of<a0.word>(pieces[a0.piece]);
  a[1] = word_of<a1.word>(pieces[a1.piece]);
  a[2] = word_of<a2.word>(pieces[a2.piece]);
  a[3] = word_of<a3.word>(pieces[a3.piece]);
}

// B's register `Register` (0 or 1) of step `Step` from the piece of vector g.
template <int Step, int Register>
__device__ __forceinline__ uint32_t b_register(const uint4& x) {
  return word_of<gemv_mapping::b_word(Step, Register)>(x);
}

}  // namespace roofline::kernels::gemv_fragments
