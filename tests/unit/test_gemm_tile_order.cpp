// The GEMM kernels' tile order (kernels/gemm/tile_order.hpp: the kernels call these functions).
// grouped_tile walks `group` tile rows down, then across: per group of rows, linear index i is row
// first_m + i % rows, column i / rows. paired_tile does the same over pair rows (group / 2 of them a
// group), and rank r of pair row p is tile row 2p + r. row_paired_tile walks pair columns like
// grouped_tile's columns, and rank r of pair column q is tile column 2q + r.
#include <set>
#include <tuple>
#include <utility>

#include "catch.hpp"
#include "kernels/gemm/tile_order.hpp"

using roofline::kernels::detail::grouped_tile;
using roofline::kernels::detail::paired_tile;
using roofline::kernels::detail::row_paired_tile;

namespace {
std::pair<int, int> grouped(int linear, int tiles_m, int tiles_n, int group) {
  int m = -1;
  int n = -1;
  grouped_tile(linear, tiles_m, tiles_n, group, m, n);
  return {m, n};
}
// Pair tiles: tile rows rounded up to even, halved, times the columns.
int pair_count(int tiles_m, int tiles_n) {
  return (tiles_m + 1) / 2 * tiles_n;
}
std::pair<int, int> paired(int pair, int rank, int tiles_m, int tiles_n, int group) {
  int m = -1;
  int n = -1;
  paired_tile(pair, rank, tiles_m, tiles_n, group, m, n);
  return {m, n};
}
std::pair<int, int> row_paired(int pair, int rank, int tiles_m, int tiles_n, int group) {
  int m = -1;
  int n = -1;
  row_paired_tile(pair, rank, tiles_m, tiles_n, group, m, n);
  return {m, n};
}
}  // namespace

TEST_CASE("GEMM tile order: groups of tile rows, walked down then across") {
  // 4 x 3 tiles in groups of 2 rows: a group is 6 blocks, (0,0) (1,0) (0,1) (1,1) (0,2) (1,2), then
  // rows 2 and 3 likewise.
  CHECK(grouped(0, 4, 3, 2) == std::pair{0, 0});
  CHECK(grouped(1, 4, 3, 2) == std::pair{1, 0});
  CHECK(grouped(2, 4, 3, 2) == std::pair{0, 1});
  CHECK(grouped(5, 4, 3, 2) == std::pair{1, 2});
  CHECK(grouped(6, 4, 3, 2) == std::pair{2, 0});
  // A last group of fewer rows (5 rows in groups of 2: row 4 alone) walks across its one row.
  CHECK(grouped(12, 5, 3, 2) == std::pair{4, 0});
  CHECK(grouped(14, 5, 3, 2) == std::pair{4, 2});
  // Every tile once, for shapes the suites run (4096^3 at 128 x 256: 32 x 16 in groups of 8) and
  // ragged ones.
  for (const auto& [tiles_m, tiles_n, group] : {std::tuple{32, 16, 8}, std::tuple{3, 2, 8}, std::tuple{13, 7, 8}}) {
    std::set<std::pair<int, int>> seen;
    for (int i = 0; i < tiles_m * tiles_n; ++i) seen.insert(grouped(i, tiles_m, tiles_n, group));
    CHECK(static_cast<int>(seen.size()) == tiles_m * tiles_n);
    CHECK(seen.begin()->first == 0);
    CHECK(seen.rbegin()->first == tiles_m - 1);
  }
}

TEST_CASE("GEMM tile order: vertical pairs share a column, cover every tile once") {
  // 4096^3 at 128 x 256: 32 x 16 tiles, 16 x 16 = 256 pairs in groups of 4 pair rows. Pair 0 is tile
  // rows 0 and 1 of column 0, pair 1 rows 2 and 3, pair 4 rows 0 and 1 of column 1.
  CHECK(pair_count(32, 16) == 256);
  CHECK(paired(0, 0, 32, 16, 8) == std::pair{0, 0});
  CHECK(paired(0, 1, 32, 16, 8) == std::pair{1, 0});
  CHECK(paired(1, 1, 32, 16, 8) == std::pair{3, 0});
  CHECK(paired(4, 0, 32, 16, 8) == std::pair{0, 1});
  // Both ranks of every pair in one column, and the pairs' tiles all of the matrix's, once.
  for (const auto& [tiles_m, tiles_n] : {std::pair{32, 16}, std::pair{64, 32}, std::pair{4, 40}, std::pair{2, 224}}) {
    std::set<std::pair<int, int>> seen;
    for (int p = 0; p < pair_count(tiles_m, tiles_n); ++p) {
      const auto upper = paired(p, 0, tiles_m, tiles_n, 8);
      const auto lower = paired(p, 1, tiles_m, tiles_n, 8);
      CHECK(upper.second == lower.second);
      CHECK(lower.first == upper.first + 1);
      CHECK(upper.first % 2 == 0);
      seen.insert(upper);
      seen.insert(lower);
    }
    CHECK(static_cast<int>(seen.size()) == tiles_m * tiles_n);
  }
  // An odd tile-row count (333 rows at 128: 3 tile rows, 2 columns of 256 for n = 264): 2 pair rows x 2
  // columns; the lower tile of pair row 1 is row 3, below the matrix (its C is not stored).
  CHECK(pair_count(3, 2) == 4);
  std::set<std::pair<int, int>> inside;
  int below = 0;
  for (int p = 0; p < 4; ++p) {
    for (int r = 0; r < 2; ++r) {
      const auto t = paired(p, r, 3, 2, 8);
      if (t.first < 3) {
        inside.insert(t);
      } else {
        ++below;
      }
    }
  }
  CHECK(inside.size() == 6);
  CHECK(below == 2);
}

TEST_CASE("GEMM tile order: horizontal pairs share a row, cover every tile once") {
  // 128 x 8192 at 128 x 64: 1 x 128 tiles, 64 pairs; pair q is columns 2q and 2q + 1 of row 0 (a
  // group of 8 rows holds the one row, so pairs walk across it).
  CHECK(row_paired(0, 0, 1, 128, 8) == std::pair{0, 0});
  CHECK(row_paired(0, 1, 1, 128, 8) == std::pair{0, 1});
  CHECK(row_paired(63, 1, 1, 128, 8) == std::pair{0, 127});
  // 2 x 6 tiles, 2 x 3 pairs in one group of rows: down then across, as grouped_tile: pair 1 is row
  // 1's columns 0 and 1, pair 2 row 0's columns 2 and 3.
  CHECK(row_paired(1, 0, 2, 6, 8) == std::pair{1, 0});
  CHECK(row_paired(2, 1, 2, 6, 8) == std::pair{0, 3});
  for (const auto& [tiles_m, tiles_n] : {std::pair{1, 128}, std::pair{1, 160}, std::pair{2, 64}, std::pair{8, 16}}) {
    std::set<std::pair<int, int>> seen;
    for (int p = 0; p < tiles_m * tiles_n / 2; ++p) {
      const auto left = row_paired(p, 0, tiles_m, tiles_n, 8);
      const auto right = row_paired(p, 1, tiles_m, tiles_n, 8);
      CHECK(left.first == right.first);
      CHECK(right.second == left.second + 1);
      CHECK(left.second % 2 == 0);
      seen.insert(left);
      seen.insert(right);
    }
    CHECK(static_cast<int>(seen.size()) == tiles_m * tiles_n);
  }
  // An odd column count (264 columns at 64: 5 tile columns, 3 pair columns): the right tile of the
  // last pair is column 5, right of the matrix (its C is not stored).
  CHECK(row_paired(2, 0, 1, 5, 8) == std::pair{0, 4});
  CHECK(row_paired(2, 1, 1, 5, 8) == std::pair{0, 5});
}
