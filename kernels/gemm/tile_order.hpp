#pragma once

// The order in which a GEMM's blocks take their output tiles (the rasterisation), shared by the
// tiled kernels and checked on the host (tests/unit/test_gemm_tile_order.cpp). Plain constexpr C++
// for host and device: the kernels call exactly these functions.

#include "roofline/core/host_device.hpp"

namespace roofline::kernels::detail {

// Maps a linear block index to an output tile so that consecutive blocks sweep `group` tile rows
// together: the blocks resident at one time then share A and B strips in L2 instead of each wave
// streaming all of B.
ROOFLINE_HOST_DEVICE constexpr void grouped_tile(int linear, int tiles_m, int tiles_n, int group, int& tile_m,
                                                 int& tile_n) {
  const int per_group = group * tiles_n;
  const int first_m = (linear / per_group) * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int in_group = linear % per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

// Vertical pairs of tiles (the wgmma GEMM's clusters of two, which share B; how many:
// kernel_tiles::gemm_wgmma_pairs): pair `pair` is a pair
// row of grouped_tile over (tiles_m + 1) / 2 pair rows, `group` / 2 pair rows a group (the same rows
// of A as `group` single tile rows), and `rank` 0 or 1 its upper or lower tile. With an odd tiles_m
// the last pair row's lower tile is row tiles_m, below the matrix.
ROOFLINE_HOST_DEVICE constexpr void paired_tile(int pair, int rank, int tiles_m, int tiles_n, int group, int& tile_m,
                                                int& tile_n) {
  int pair_m = 0;
  grouped_tile(pair, (tiles_m + 1) / 2, tiles_n, group / 2, pair_m, tile_n);
  tile_m = 2 * pair_m + rank;
}

// Horizontal pairs of tiles (clusters of two sharing A: kernel_tiles::GemmPairing::share_a): pair
// `pair` is tile row tile_m and pair column pair_n of grouped_tile over (tiles_n + 1) / 2 pair
// columns, and `rank` 0 or 1 its left or right tile. With an odd tiles_n the last pair column's
// right tile is column tiles_n, right of the matrix.
ROOFLINE_HOST_DEVICE constexpr void row_paired_tile(int pair, int rank, int tiles_m, int tiles_n, int group,
                                                    int& tile_m, int& tile_n) {
  int pair_n = 0;
  grouped_tile(pair, tiles_m, (tiles_n + 1) / 2, group, tile_m, pair_n);
  tile_n = 2 * pair_n + rank;
}

}  // namespace roofline::kernels::detail
