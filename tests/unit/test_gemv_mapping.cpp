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
