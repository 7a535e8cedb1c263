// Hopper GEMM (sm_90a): the wgmma kernel of wgmma_gemm.cuh over one matrix, for 16-bit operands and
// for FP8. Consecutive blocks sweep kGroupM tile rows together (grouped_tile), so that the blocks
// resident at one time share A and B strips in L2; where there are two tile rows or more and a wave of
// pairs at least, blocks run in pairs that multicast B (PairScheduler).
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "gemm_internal.cuh"
#include "wgmma_gemm.cuh"

namespace roofline::kernels::detail {

// The 128 x BN tiles of one m x n output, rasterised by grouped_tile. (Outside the anonymous
// namespace: its one caller is device code that the host pass of nvcc does not see.)
template <int BN>
struct MatrixScheduler {
  static constexpr bool kSplitK = false;
  static constexpr bool kSharedRows = false;
  static constexpr int kBN = BN;
  int m = 0;
  int n = 0;
  __device__ wgmma_gemm::BlockTile tile(int block) const {
    using wgmma_gemm::kBM;
    const int tiles_m = (m + kBM - 1) / kBM;
    const int tiles_n = (n + BN - 1) / BN;
    int tile_m = 0;
    int tile_n = 0;
    grouped_tile(block, tiles_m, tiles_n, wgmma_gemm::kGroupM, tile_m, tile_n);
    return wgmma_gemm::BlockTile{.a_row = tile_m * kBM, .b_row = tile_n * BN, .n0 = tile_n * BN, .row_end = m};
  }
};

// The 128 x BN tiles in pairs, clusters of two blocks (wgmma_gemm.cuh). Vertical pairs (SharesA
// false) multicast B: pair tile p covers tile rows 2 r' and 2 r' + 1 of one tile column, rasterised
// like MatrixScheduler's tiles with pairs for tile rows (paired_tile: kGroupM / 2 pairs, the same rows
// of A in a group), rank r taking tile row 2 r' + r. Horizontal pairs (SharesA true) multicast A: tile
// columns 2 c' and 2 c' + 1 of one tile row (row_paired_tile), rank r taking column 2 c' + r. A last
// pair over an odd tile row (column) count has a rank-1 tile outside C: TMA fills its A (B) with zeros
// and its C is not stored, but it still loads its half of the shared operand for rank 0.
template <int BN, bool SharesA = false>
struct PairScheduler {
  static constexpr bool kSplitK = false;
  static constexpr bool kSharedRows = false;
  static constexpr int kBN = BN;
  static constexpr int kCluster = 2;
  static constexpr bool kSharesA = SharesA;
  int m = 0;
  int n = 0;
  __device__ wgmma_gemm::BlockTile tile(int pair, int rank) const {
    using wgmma_gemm::kBM;
    const int tiles_m = (m + kBM - 1) / kBM;
    const int tiles_n = (n + BN - 1) / BN;
    int tile_m = 0;
    int tile_n = 0;
    if constexpr (SharesA) {
      row_paired_tile(pair, rank, tiles_m, tiles_n, wgmma_gemm::kGroupM, tile_m, tile_n);
    } else {
      paired_tile(pair, rank, tiles_m, tiles_n, wgmma_gemm::kGroupM, tile_m, tile_n);
    }
    return wgmma_gemm::BlockTile{.a_row = tile_m * kBM, .b_row = tile_n * BN, .n0 = tile_n * BN, .row_end = m};
  }
};

namespace {

using namespace wgmma_gemm;

template <typename T, int BN = kBN>
void launch_matrix(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, Epilogue<T> epilogue,
                   cudaStream_t stream) {
  const long long tiles_m = (m + kBM - 1) / kBM;
  const long long tiles_n = (n + BN - 1) / BN;
  // In pairs where kernel_tiles::gemm_wgmma_pairs says (two tile rows or more, a wave of pairs).
  if constexpr (BN == kBN) {
    const long long pairs = kernel_tiles::gemm_wgmma_pairs(m, n, current_device_sms());
    if (pairs > 0) {
      launch<T>(type, a, m, b, n, c, n, k, pairs, PairScheduler<BN>{.m = m, .n = n}, epilogue, stream);
      return;
    }
  }
  launch<T>(type, a, m, b, n, c, n, k, tiles_m * tiles_n, MatrixScheduler<BN>{.m = m, .n = n}, epilogue, stream);
}

// A skinny plan (kernel_tiles::gemm_wgmma_skinny_plan) at its compile-time tile width BN.
template <typename T, int BN>
void launch_skinny(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                   const kernel_tiles::GemmSplitK& plan, void* workspace, cudaStream_t stream) {
  const long long blocks = kernel_tiles::gemm_plan_blocks(plan, m, n);
  switch (plan.pairing) {
    case kernel_tiles::GemmPairing::share_b:
      if constexpr (BN == 256 || BN == 160 || BN == 128) {
        launch<T>(type, a, m, b, n, c, n, k, blocks / 2, PairScheduler<BN>{.m = m, .n = n}, Epilogue<T>{}, stream);
        return;
      }
      break;
    case kernel_tiles::GemmPairing::share_a:
      if constexpr (BN == 128 || BN == 80 || BN == 64) {
        launch<T>(type, a, m, b, n, c, n, k, blocks / 2, PairScheduler<BN, true>{.m = m, .n = n}, Epilogue<T>{},
                  stream);
        return;
      }
      break;
    case kernel_tiles::GemmPairing::none:
      if constexpr (BN == 256 || BN == 128) {
        if (plan.splits == 1) {
          launch<T>(type, a, m, b, n, c, n, k, blocks, MatrixScheduler<BN>{.m = m, .n = n}, Epilogue<T>{}, stream);
          return;
        }
        require(workspace != nullptr, "gemm wgmma split-K: no workspace (gemm_split_k_workspace_bytes, zeroed once)");
        const wgmma_gemm::SplitKScheduler<MatrixScheduler<BN>> scheduler{.tiles = {.m = m, .n = n},
                                                                         .k_blocks_per_split = plan.k_blocks_per_split,
                                                                         .split = split_k_over(plan, workspace)};
        launch<T>(type, a, m, b, n, c, n, k, blocks, scheduler, Epilogue<T>{}, stream);
        return;
      }
      break;
  }
  throw KernelError("gemm wgmma: no kernel built for a plan of 128 x " + std::to_string(BN) +
                    " tiles with this pairing (kernel_tiles::gemm_wgmma_shapes)");
}

// Calls f with the plan's tile width as a compile-time constant.
template <typename F>
void with_tile_n(int tile_n, F&& f) {
  switch (tile_n) {
    case 256: f(std::integral_constant<int, 256>{}); return;
    case 160: f(std::integral_constant<int, 160>{}); return;
    case 128: f(std::integral_constant<int, 128>{}); return;
    case 80: f(std::integral_constant<int, 80>{}); return;
    case 64: f(std::integral_constant<int, 64>{}); return;
    default: throw KernelError("gemm wgmma: no kernel built for tiles 128 x " + std::to_string(tile_n));
  }
}

}  // namespace

std::size_t gemm_wgmma_split_k_workspace_bytes(int m, int n, int k, int sms) {
  const kernel_tiles::GemmSplitK plan = kernel_tiles::gemm_wgmma_skinny_plan(m, n, k, sms);
  if (plan.splits == 1) return 0;
  std::size_t bytes = 0;
  with_tile_n(plan.tile_n, [&](auto bn) { bytes = split_k_workspace_bytes<decltype(bn)::value>(plan); });
  return bytes;
}

void gemm_wgmma_split_k(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, int sms,
                        void* workspace, cudaStream_t stream) {
  const kernel_tiles::GemmSplitK plan = kernel_tiles::gemm_wgmma_skinny_plan(m, n, k, sms);
  dispatch_storage<gemm_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    with_tile_n(plan.tile_n, [&](auto bn) {
      launch_skinny<T, decltype(bn)::value>(type, a, b, c, m, n, k, plan, workspace, stream);
    });
  });
}

void gemm_wgmma(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, cudaStream_t stream) {
  dispatch_storage<gemm_formats>(type, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    launch_matrix<T>(type, a, b, c, m, n, k, Epilogue<T>{}, stream);
  });
}

void gemm_wgmma_fp8(const Fp8GemmArgs& args, cudaStream_t stream) {
  using T = StorageTraits<fp8_gemm_operand_format>::Element;
  launch_matrix<T>(fp8_gemm_operand_format, args.a, args.b, args.c, args.m, args.n, args.k,
                   Epilogue<T>{.a_scale = args.a_scale, .b_scales = args.b_scale}, stream);
}

}  // namespace roofline::kernels::detail
