// Hopper GEMM (sm_90a): the wgmma kernel of wgmma_gemm.cuh over one matrix, for 16-bit operands and
// for FP8. Consecutive blocks sweep kGroupM tile rows together (grouped_tile), so that the blocks
// resident at one time share A and B strips in L2.
#include <cuda_runtime.h>

#include <type_traits>

#include "gemm_internal.cuh"
#include "wgmma_gemm.cuh"

namespace roofline::kernels::detail {

// The tiles of one m x n output, rasterised by grouped_tile. (Outside the anonymous namespace: its
// one caller is device code that the host pass of nvcc does not see.)
struct MatrixScheduler {
  int m = 0;
  int n = 0;
  __device__ wgmma_gemm::BlockTile tile(int block) const {
    using namespace wgmma_gemm;
    const int tiles_m = (m + kBM - 1) / kBM;
    const int tiles_n = (n + kBN - 1) / kBN;
    int tile_m = 0;
    int tile_n = 0;
    grouped_tile(block, tiles_m, tiles_n, kGroupM, tile_m, tile_n);
    return BlockTile{.a_row = tile_m * kBM, .b_row = tile_n * kBN, .n0 = tile_n * kBN, .row_end = m};
  }
};

namespace {

using namespace wgmma_gemm;

template <typename T>
void launch_matrix(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, Epilogue<T> epilogue,
                   cudaStream_t stream) {
  const long long blocks = static_cast<long long>((m + kBM - 1) / kBM) * ((n + kBN - 1) / kBN);
  launch<T>(type, a, m, b, n, c, n, k, blocks, MatrixScheduler{.m = m, .n = n}, epilogue, stream);
}

}  // namespace

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
