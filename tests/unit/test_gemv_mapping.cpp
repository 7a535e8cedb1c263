// The tensor-core GEMV's operand mapping (kernels/gemv_mapping.hpp: the kernel indexes its
// registers with these functions) against the PTX ISA's fragment layouts of mma.m16n8k16 with
// 16-bit operands. Lane (g, t) = (lane / 4, lane % 4):
//   A (16 x 16): register r holds a_2r (low half) and a_2r+1; a_i is at row g (+8 for i in 2, 3,
//     6, 7) and column 2t + (i & 1) (+8 for i >= 4). So element h of register r is at row
//     g + 8 (r % 2), column 2t + h + 8 (r / 2).
//   B (16 x 8): register r holds b_2r, b_2r+1; b_i is at row 2t + (i & 1) (+8 for i >= 2),
//     column g. So element h of register r is at row 2t + h + 8r, column (vector) g.
// What the mapping must give, derived by hand from gemv_mapping.hpp's comment (pieces are 8
// consecutive k from 8t; word w holds k 8t + 2w and 8t + 2w + 1):
//   A register r of step s is piece r % 2 (row g + 8 (r % 2), as the layout wants), word 2s + r / 2,
//     so A column 2t + h + 8j (j = r / 2) holds k = 8t + 4s + 2j + h;
//   B register r of step s is word 2s + r of vector g's piece, so B row 2t + h + 8j (j = r) holds
//     k = 8t + 4s + 2j + h: the same k as the A column it multiplies;
//   over s, t, j, h in {0,1} x {0..3} x {0,1} x {0,1}, 8t + 4s + 2j + h takes every k in 0..31 once.
#include <set>

#include "catch.hpp"
#include "kernels/gemv_mapping.hpp"
#include "roofline/bench/testdata.hpp"

using namespace roofline::kernels;

TEST_CASE("GEMV mapping: hand-listed registers of two lanes") {
  // Lane 0 (g 0, t 0), step 0, register 0: row 0, words 0 -> k 0 and 1.
  CHECK(gemv_mapping::a_source(0, 0).piece == 0);
  CHECK(gemv_mapping::a_source(0, 0).word == 0);
  CHECK(gemv_mapping::row_of(0, 0) == 0);
  CHECK(gemv_mapping::k_of(0, 0, 0) == 0);
  CHECK(gemv_mapping::k_of(0, 0, 1) == 1);
  // Lane 5 (g 1, t 1), step 1, register 3: piece 1 = row 9, word 2 + 1 = 3 -> k 8 + 6 = 14, 15.
  CHECK(gemv_mapping::a_source(1, 3).piece == 1);
  CHECK(gemv_mapping::a_source(1, 3).word == 3);
  CHECK(gemv_mapping::row_of(5, 1) == 9);
  CHECK(gemv_mapping::k_of(5, 3, 0) == 14);
  CHECK(gemv_mapping::k_of(5, 3, 1) == 15);
  // B register 1 of step 1 is word 3 of the x piece; register 0 of step 0 word 0.
  CHECK(gemv_mapping::b_word(1, 1) == 3);
  CHECK(gemv_mapping::b_word(0, 0) == 0);
}

TEST_CASE("GEMV mapping: every A and B element holds the k its fragment position pairs") {
  std::set<int> chunk_k_seen;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4;
    const int t = lane % 4;
    for (int step = 0; step < gemv_mapping::steps; ++step) {
      for (int h = 0; h < 2; ++h) {
        for (int r = 0; r < 4; ++r) {
          const gemv_mapping::WordOfPiece source = gemv_mapping::a_source(step, r);
          INFO("lane " << lane << " step " << step << " A register " << r << " half " << h);
          CHECK(gemv_mapping::row_of(lane, source.piece) == g + 8 * (r % 2));
          CHECK(gemv_mapping::k_of(lane, source.word, h) == 8 * t + 4 * step + 2 * (r / 2) + h);
        }
        for (int r = 0; r < 2; ++r) {
          INFO("lane " << lane << " step " << step << " B register " << r << " half " << h);
          const int k = gemv_mapping::k_of(lane, gemv_mapping::b_word(step, r), h);
          CHECK(k == 8 * t + 4 * step + 2 * r + h);
          if (g == 0) chunk_k_seen.insert(k);  // one column of B: each k of the chunk once
        }
      }
    }
  }
  CHECK(chunk_k_seen.size() == gemv_mapping::chunk_k);
  CHECK(*chunk_k_seen.begin() == 0);
  CHECK(*chunk_k_seen.rbegin() == gemv_mapping::chunk_k - 1);
}

// The instruction emulated from the layouts above, fed as the kernel feeds it: the two steps of
// one chunk must compute W . x exactly (integer levels, so no rounding).
TEST_CASE("GEMV mapping: two emulated mma steps compute a 16 x 32 by 32 x 8 product") {
  int w[16][32];
  int x[8][32];
  for (int r = 0; r < 16; ++r) {
    for (int k = 0; k < 32; ++k) w[r][k] = roofline::testdata::level(1, static_cast<std::uint64_t>(r * 32 + k));
  }
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 32; ++k) x[n][k] = roofline::testdata::level(2, static_cast<std::uint64_t>(n * 32 + k));
  }
  long long d[16][8] = {};
  for (int step = 0; step < gemv_mapping::steps; ++step) {
    int a[16][16] = {};  // the logical A and B of this mma, assembled from every lane's registers
    int b[16][8] = {};
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4;
      const int t = lane % 4;
      for (int h = 0; h < 2; ++h) {
        for (int r = 0; r < 4; ++r) {
          const gemv_mapping::WordOfPiece source = gemv_mapping::a_source(step, r);
          a[g + 8 * (r % 2)][2 * t + h + 8 * (r / 2)] =
              w[gemv_mapping::row_of(lane, source.piece)][gemv_mapping::k_of(lane, source.word, h)];
        }
        for (int r = 0; r < 2; ++r) {
          b[2 * t + h + 8 * r][g] =
              x[gemv_mapping::row_of(lane, 0)][gemv_mapping::k_of(lane, gemv_mapping::b_word(step, r), h)];
        }
      }
    }
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) {
        for (int c = 0; c < 16; ++c) d[r][n] += static_cast<long long>(a[r][c]) * b[c][n];
      }
    }
  }
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 8; ++n) {
      long long want = 0;
      for (int k = 0; k < 32; ++k) want += static_cast<long long>(w[r][k]) * x[n][k];
      INFO("row " << r << " vector " << n);
      CHECK(d[r][n] == want);
    }
  }
}

// The W8A8 GEMV (gemv_w8a8.cu) feeds mma.m16n8k32 with e4m3 operands from the same registers. The
// PTX ISA's layout of that instruction for 8-bit operands ("Matrix Fragments for mma.m16n8k32",
// .u8/.s8/.e4m3/.e5m2), lane (g, t):
//   A (16 x 32): register r holds a_4r .. a_4r+3 (byte j = a_4r+j); a_i is at row g for i in 0..3 and
//     8..11, g + 8 otherwise, column 4t + (i & 3) (+16 for i >= 8). So byte j of register r is at
//     row g + 8 (r % 2), column 4t + j + 16 (r / 2).
//   B (32 x 8): register r holds b_4r .. b_4r+3; b_i is at row 4t + (i & 3) (+16 for i >= 4), column
//     g. So byte j of register r is at row 4t + j + 16 r, column (vector) g.
// With 16-byte pieces of 16 k from k = 16t, word w holding k 16t + 4w .. +3 (k8_of):
//   A register r of step s is word 2s + r / 2 of piece r % 2: column 4t + j + 16 (r / 2) holds
//     k = 16t + 8s + 4 (r / 2) + j;
//   B register r of step s is word 2s + r: row 4t + j + 16 r holds k = 16t + 8s + 4r + j, the k of the
//     A column it multiplies; over s, t, r, j that is every k of the 64-k chunk once.
// (Only what the pairing needs is assumed of the layout: registers 0 and 2 of A are row g, 1 and 3
// row g + 8; A registers 2i and 2i + 1 share their columns with B register i; a register's columns
// depend on t alone. Any layout of that form gives the same sums.)
TEST_CASE("GEMV mapping, 8-bit: two emulated m16n8k32 steps compute a 16 x 64 by 64 x 8 product") {
  CHECK(gemv_mapping::k8_of(0, 0, 0) == 0);
  CHECK(gemv_mapping::k8_of(7, 3, 2) == 16 * 3 + 12 + 2);  // lane 7: t 3, word 3, byte 2
  int w[16][64];
  int x[8][64];
  for (int r = 0; r < 16; ++r) {
    for (int k = 0; k < 64; ++k) w[r][k] = roofline::testdata::level(3, static_cast<std::uint64_t>(r * 64 + k));
  }
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 64; ++k) x[n][k] = roofline::testdata::level(4, static_cast<std::uint64_t>(n * 64 + k));
  }
  long long d[16][8] = {};
  std::set<int> chunk_k_seen;
  for (int step = 0; step < gemv_mapping::steps; ++step) {
    int a[16][32] = {};
    int b[32][8] = {};
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4;
      const int t = lane % 4;
      for (int j = 0; j < 4; ++j) {
        for (int r = 0; r < 4; ++r) {
          const gemv_mapping::WordOfPiece source = gemv_mapping::a_source(step, r);
          a[g + 8 * (r % 2)][4 * t + j + 16 * (r / 2)] =
              w[gemv_mapping::row_of(lane, source.piece)][gemv_mapping::k8_of(lane, source.word, j)];
        }
        for (int r = 0; r < 2; ++r) {
          const int k = gemv_mapping::k8_of(lane, gemv_mapping::b_word(step, r), j);
          b[4 * t + j + 16 * r][g] = x[gemv_mapping::row_of(lane, 0)][k];
          if (g == 0) chunk_k_seen.insert(k);
        }
      }
    }
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) {
        for (int c = 0; c < 32; ++c) d[r][n] += static_cast<long long>(a[r][c]) * b[c][n];
      }
    }
  }
  CHECK(chunk_k_seen.size() == static_cast<std::size_t>(gemv_mapping::chunk_k8));
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 8; ++n) {
      long long want = 0;
      for (int k = 0; k < 64; ++k) want += static_cast<long long>(w[r][k]) * x[n][k];
      INFO("row " << r << " vector " << n);
      CHECK(d[r][n] == want);
    }
  }
}
