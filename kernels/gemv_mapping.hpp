#pragma once

// How the tensor-core GEMV (gemv.cu) feeds mma.m16n8k16 straight from 16-byte loads, with no
// shuffle or shared-memory staging. Lane (g, t) = (lane / 4, lane % 4) of a warp loads, per 32-k
// chunk, 16 bytes (8 consecutive k, from k = 8t) of W rows g and g + 8 (pieces 0 and 1) and of
// vector g, and passes 32-bit words of those pieces to two mma steps as if they held the fragment
// columns the PTX layout assigns to the lane. W and x go through the same permutation of k, so the
// products pair up: a dot product does not care about the order of its terms.
// Plain constexpr C++ for host and device: the kernel indexes its registers with these functions,
// and tests/unit/test_gemv_mapping.cpp checks them against the PTX fragment layout.

#include "roofline/core/host_device.hpp"

namespace roofline::kernels::gemv_mapping {

inline constexpr int chunk_k = 32;  // k per chunk: 4 lanes x 8 elements
inline constexpr int steps = 2;     // mma.m16n8k16 per chunk (k = 16 each)

// Which 16-byte piece of W (0: row g, 1: row g + 8) and which of its four 32-bit words (two
// elements each) is A-fragment register `reg` (0..3) of mma step `step`.
struct WordOfPiece {
  int piece;
  int word;
};
ROOFLINE_HOST_DEVICE constexpr WordOfPiece a_source(int step, int reg) {
  return {reg % 2, 2 * step + reg / 2};
}

// Which 32-bit word of the lane's x piece is B-fragment register `reg` (0..1) of step `step`.
ROOFLINE_HOST_DEVICE constexpr int b_word(int step, int reg) {
  return 2 * step + reg;
}

// The W row (within the 16-row tile) that piece `piece` of `lane` holds; also, for piece 0, the
// vector of x the lane loads.
ROOFLINE_HOST_DEVICE constexpr int row_of(int lane, int piece) {
  return lane / 4 + 8 * piece;
}

// The k (within the chunk) of element `half` (0: low 16 bits) of word `word` of a lane's piece.
ROOFLINE_HOST_DEVICE constexpr int k_of(int lane, int word, int half) {
  return 8 * (lane % 4) + 2 * word + half;
}

// ---- 8-bit operands (the W8A8 GEMV: e4m3 W and x, mma.m16n8k32) --------------------------------
// The same loads feed the 8-bit instruction without any conversion: lane (g, t) loads 16 bytes (16
// consecutive k, from k = 16t) of W rows g and g + 8 and of vector g per 64-k chunk, and a_source and
// b_word pick the registers exactly as above, a 32-bit word now holding four k. The 8-bit fragment
// layout (PTX ISA, "Matrix Fragments for mma.m16n8k32", .e4m3) keeps what the pairing relies on:
// A registers 0 and 2 are row g, 1 and 3 row g + 8; A registers 0 and 1 hold the same four columns
// as B register 0 (column g), registers 2 and 3 the same as B register 1; byte j of a register is
// element j of its four; and which columns a register holds depends on t alone.
inline constexpr int chunk_k8 = 64;  // k per chunk of 8-bit W and x: 4 lanes x 16 bytes

// The k (within the chunk) of byte `byte` (0: lowest) of word `word` of a lane's 16-byte piece.
ROOFLINE_HOST_DEVICE constexpr int k8_of(int lane, int word, int byte) {
  return 16 * (lane % 4) + 4 * word + byte;
}

}  // namespace roofline::kernels::gemv_mapping
