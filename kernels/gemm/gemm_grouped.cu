// The grouped GEMM of MoE experts (gemm.hpp): the wgmma kernel of wgmma_gemm.cuh under a scheduler
// over every expert's tiles, and cuBLAS's batched and grouped-batched calls over the same stacked
// layout.
//
// Two tensor maps cover all experts: one over the stacked A [sum t_e x k], one over the stacked B
// [E x n x k]; an expert's tile is a row offset into them (row_offsets[e] in A, e * n in B), so no
// per-expert descriptor is built, copied or fetched. The schedule (row offsets and the prefix sums
// of tiles per expert) sits in global memory; each block finds its expert by a binary search over
// the tile prefix sums (at most 8 steps for 256 experts) and rasterises its expert's tiles as the
// plain GEMM does.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "../blas_api.hpp"
#include "../gemv_wgmma.hpp"
#include "gemm_internal.cuh"
#include "wgmma_gemm.cuh"

namespace roofline::kernels {
namespace detail {

__host__ __device__ constexpr int tiles_n_of(int n) {
  return (n + wgmma_gemm::kBN - 1) / wgmma_gemm::kBN;
}

// The tiles of all experts: schedule[0 .. E] the row offsets, schedule[E + 1 .. 2E + 1] the tile
// prefix sums. SharedRows: every expert has at most 64 tokens, and the two consumers share a tile's
// first 64 rows, each over half its columns (half the MMA work of 128 rows for a decode step's token
// or two). (Outside the anonymous namespace: its one caller is device code that the host pass of
// nvcc does not see.)
template <bool SharedRows>
struct ExpertScheduler {
  static constexpr bool kSplitK = false;
  static constexpr bool kSharedRows = SharedRows;
  static constexpr int kBN = wgmma_gemm::kBN;
  const int* schedule = nullptr;
  int experts = 0;
  int n = 0;
  __device__ wgmma_gemm::BlockTile tile(int block) const {
    using namespace wgmma_gemm;
    const int* rows = schedule;
    const int* tiles = schedule + experts + 1;
    // The expert e with tiles[e] <= block < tiles[e + 1] (experts without tokens have empty ranges).
    int lo = 0;
    int hi = experts;
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (tiles[mid] <= block) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const int e = lo;
    const int first_row = rows[e];
    const int end_row = rows[e + 1];
    int tile_m = 0;
    int tile_n = 0;
    grouped_tile(block - tiles[e], (end_row - first_row + kBM - 1) / kBM, tiles_n_of(n), kGroupM, tile_m, tile_n);
    return BlockTile{.a_row = first_row + tile_m * kBM,
                     .b_row = e * n + tile_n * kBN,
                     .n0 = tile_n * kBN,
                     .row_end = end_row,
                     .expert = e};
  }
};

namespace {

using namespace wgmma_gemm;

// k in the kernel's blocks of kRowBytes (64 16-bit or 128 fp8 elements).
long long k_blocks_of(const GroupedGemmArgs& args) {
  const long long k_bytes = static_cast<long long>(args.k) * bytes_of(args.operands);
  return (k_bytes + kRowBytes - 1) / kRowBytes;
}

kernel_tiles::GemmSplitK split_plan(const GroupedGemmArgs& args, int sms) {
  return kernel_tiles::grouped_gemm_split_k(grouped_gemm_schedule(args.row_offsets, args.n).back(), k_blocks_of(args),
                                            sms);
}

// One launch over every expert's tiles; k split as `plan` says where it has more than one split.
template <typename T, bool SharedRows>
void launch_grouped_rows(const GroupedGemmArgs& args, Epilogue<T> epilogue, const kernel_tiles::GemmSplitK* plan,
                         void* workspace, cudaStream_t stream) {
  const int experts = static_cast<int>(args.row_offsets.size()) - 1;
  const int total_rows = args.row_offsets.back();
  const std::vector<int> schedule = grouped_gemm_schedule(args.row_offsets, args.n);
  const long long tiles = schedule.back();
  const ExpertScheduler<SharedRows> scheduler{.schedule = args.schedule, .experts = experts, .n = args.n};
  const long long b_rows = static_cast<long long>(experts) * args.n;
  if (plan == nullptr || plan->splits == 1) {
    launch<T>(args.operands, args.a, total_rows, args.b, b_rows, args.c, args.n, args.k, tiles, scheduler, epilogue,
              stream);
    return;
  }
  require(workspace != nullptr,
          "grouped gemm split-K: no workspace (grouped_gemm_split_k_workspace_bytes, zeroed once)");
  const wgmma_gemm::SplitKScheduler<ExpertScheduler<SharedRows>> split{
      .tiles = scheduler, .k_blocks_per_split = plan->k_blocks_per_split, .split = split_k_over(*plan, workspace)};
  launch<T>(args.operands, args.a, total_rows, args.b, b_rows, args.c, args.n, args.k, tiles * plan->splits, split,
            epilogue, stream);
}

// The rows' variant: shared where no expert has more than 64 tokens (one consumer's rows).
template <typename T>
void launch_grouped(const GroupedGemmArgs& args, Epilogue<T> epilogue, const kernel_tiles::GemmSplitK* plan,
                    void* workspace, cudaStream_t stream) {
  int most = 0;
  for (std::size_t e = 0; e + 1 < args.row_offsets.size(); ++e) {
    most = std::max(most, args.row_offsets[e + 1] - args.row_offsets[e]);
  }
  if (most <= kBM / 2) {
    launch_grouped_rows<T, true>(args, epilogue, plan, workspace, stream);
  } else {
    launch_grouped_rows<T, false>(args, epilogue, plan, workspace, stream);
  }
}

}  // namespace
}  // namespace detail

std::vector<int> grouped_gemm_schedule(std::span<const int> row_offsets, int n) {
  detail::require(row_offsets.size() >= 2 && row_offsets.size() - 1 <= static_cast<std::size_t>(INT_MAX / 2),
                  "grouped gemm: row_offsets needs E + 1 entries for E >= 1 experts");
  detail::require(n >= 1, "grouped gemm: n must be positive");
  detail::require(row_offsets.front() == 0, "grouped gemm: row_offsets[0] must be 0");
  const std::size_t experts = row_offsets.size() - 1;
  std::vector<int> schedule(row_offsets.begin(), row_offsets.end());
  schedule.reserve(2 * (experts + 1));
  schedule.push_back(0);
  long long tiles = 0;
  for (std::size_t e = 0; e < experts; ++e) {
    const int rows = row_offsets[e + 1] - row_offsets[e];
    detail::require(rows >= 0, "grouped gemm: row_offsets must not decrease");
    tiles +=
        static_cast<long long>((rows + detail::wgmma_gemm::kBM - 1) / detail::wgmma_gemm::kBM) * detail::tiles_n_of(n);
    detail::require(tiles <= INT_MAX, "grouped gemm: more tiles than a grid holds");
    schedule.push_back(static_cast<int>(tiles));
  }
  detail::require(row_offsets.back() >= 1, "grouped gemm: no expert has tokens");
  return schedule;
}

namespace {

// Throws KernelError where the arguments are not as GroupedGemmArgs says.
void check_grouped(const std::string& what, const GroupedGemmArgs& args) {
  detail::require(args.row_offsets.size() >= 2, what + ": no experts");
  const long long experts = static_cast<long long>(args.row_offsets.size()) - 1;
  const bool fp8 = args.operands == fp8_gemm_operand_format;
  detail::require(fp8 || gemm_formats.contains(args.operands),
                  what + ": operands must be bf16, fp16 or fp8_e4m3, not " + std::string(name_of(args.operands)));
  detail::require(args.n >= 1 && args.k >= 1 && args.n % 8 == 0 && args.k % (fp8 ? 16 : 8) == 0,
                  what + ": n must be a multiple of 8 and k of " + (fp8 ? "16" : "8") + ", got n " +
                      std::to_string(args.n) + ", k " + std::to_string(args.k));
  detail::require(experts * args.n <= INT_MAX, what + ": E * n must stay below 2^31 (TMA's row coordinate)");
  for (const void* pointer : {args.a, args.b, static_cast<const void*>(args.c)}) {
    detail::require(pointer != nullptr && reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0,
                    what + ": operands must be 16-byte aligned");
  }
  detail::require(args.schedule != nullptr, what + ": the device schedule must be given");
  detail::require(!fp8 || (args.a_scale != nullptr && args.b_scales != nullptr),
                  what + ": the activation scale and the experts' weight scales must be given");
}

// Checks the arguments and launches, split along k where `plan` (non-null) says so.
void run_grouped(const std::string& what, const GroupedGemmArgs& args, const kernel_tiles::GemmSplitK* plan,
                 void* workspace, Stream stream) {
  check_grouped(what, args);
  if (args.operands == fp8_gemm_operand_format) {
    using T = StorageTraits<fp8_gemm_operand_format>::Element;
    detail::launch_grouped<T>(args, detail::wgmma_gemm::Epilogue<T>{.a_scale = args.a_scale, .b_scales = args.b_scales},
                              plan, workspace, stream);
    return;
  }
  dispatch_storage<gemm_formats>(args.operands, [&](auto traits) {
    using T = typename decltype(traits)::Element;
    detail::launch_grouped<T>(args, detail::wgmma_gemm::Epilogue<T>{}, plan, workspace, stream);
  });
}

}  // namespace

void gemm_grouped(GemmKernel kernel, const GroupedGemmArgs& args, Stream stream) {
  const std::string what = std::string("grouped gemm ") + gemm_kernel_name(kernel);
  detail::require(kernel == GemmKernel::wgmma, what + ": only the wgmma kernel is built for grouped GEMMs");
  run_grouped(what, args, nullptr, nullptr, stream);
}

kernel_tiles::GemmSplitK grouped_gemm_split_k_plan(const GroupedGemmArgs& args, int sms) {
  return detail::split_plan(args, sms);
}

std::size_t grouped_gemm_split_k_workspace_bytes(const GroupedGemmArgs& args, int sms) {
  return detail::wgmma_gemm::split_k_workspace_bytes<detail::wgmma_gemm::kBN>(detail::split_plan(args, sms));
}

void gemm_grouped_split_k(const GroupedGemmArgs& args, int sms, void* workspace, Stream stream) {
  const kernel_tiles::GemmSplitK plan = detail::split_plan(args, sms);
  run_grouped("grouped gemm wgmma split-K", args, &plan, workspace, stream);
}

kernel_tiles::GemvWgmmaSplit grouped_gemm_swap_ab_plan(const GroupedGemmArgs& args, int sms) {
  return detail::grouped_gemv_wgmma_plan(args, sms);
}

std::size_t grouped_gemm_swap_ab_workspace_bytes(const GroupedGemmArgs& args, int sms) {
  return detail::grouped_gemv_wgmma_workspace_bytes(args, sms);
}

const char* grouped_gemm_swap_ab_unsupported(const GroupedGemmArgs& args) {
  return detail::grouped_gemv_wgmma_unsupported(args);
}

void gemm_grouped_swap_ab(const GroupedGemmArgs& args, int sms, void* workspace, Stream stream) {
  const std::string what = "grouped gemm swap-AB";
  check_grouped(what, args);
  if (const char* why = detail::grouped_gemv_wgmma_unsupported(args); why != nullptr) {
    detail::require(false, what + ": " + why);
  }
  detail::require(workspace != nullptr || grouped_gemm_swap_ab_plan(args, sms).splits == 1,
                  what + ": no workspace (grouped_gemm_swap_ab_workspace_bytes, zeroed once)");
  ROOFLINE_CUDA_CHECK(detail::launch_grouped_gemv_wgmma(args, sms, workspace, stream));
}

// ---- cuBLAS ------------------------------------------------------------------------------------
// Column-major, as tn_gemm in gemm.cu: C_e^T[n x t_e] = B_e[n x k] . A_e^T[k x t_e], op(B) = T on the
// k x n column-major buffer of B_e, op(A) = N on the k x t_e buffer of A_e.

void cublas_gemm_strided_batched(const BlasApi& blas, StorageFormat type, const void* a, const void* b, void* c,
                                 int experts, int tokens, int n, int k, Stream stream) {
  detail::require(blas.handle != nullptr && blas.gemm_strided_batched_ex != nullptr && blas.set_stream != nullptr,
                  "cuBLAS strided batched GEMM: cuBLAS is not loaded");
  detail::require(experts >= 1 && tokens >= 1 && n >= 1 && k >= 1, "cuBLAS strided batched GEMM: empty shape");
  const cudaDataType data = cuda_data_type(type);
  detail::check_cublas(blas.set_stream(blas.handle, stream), "cublasSetStream");
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto ll = [](int v) { return static_cast<long long>(v); };
  detail::check_cublas(blas.gemm_strided_batched_ex(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, n, tokens, k, &alpha, b,
                                                    data, k, ll(n) * k, a, data, k, ll(tokens) * k, &beta, c, data, n,
                                                    ll(tokens) * n, experts, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmStridedBatchedEx");
}

std::vector<const void*> grouped_blas_pointers(StorageFormat type, const void* a, const void* b, void* c,
                                               std::span<const int> row_offsets, int n, int k) {
  const auto bytes = static_cast<std::size_t>(bytes_of(type));
  std::vector<const void*> weights;
  std::vector<const void*> tokens;
  std::vector<const void*> outputs;
  for (std::size_t e = 0; e + 1 < row_offsets.size(); ++e) {
    if (row_offsets[e + 1] == row_offsets[e]) continue;
    const auto row = static_cast<std::size_t>(row_offsets[e]);
    weights.push_back(static_cast<const unsigned char*>(b) + e * static_cast<std::size_t>(n) * k * bytes);
    tokens.push_back(static_cast<const unsigned char*>(a) + row * static_cast<std::size_t>(k) * bytes);
    outputs.push_back(static_cast<unsigned char*>(c) + row * static_cast<std::size_t>(n) * bytes);
  }
  weights.insert(weights.end(), tokens.begin(), tokens.end());
  weights.insert(weights.end(), outputs.begin(), outputs.end());
  return weights;
}

void cublas_gemm_grouped_batched(const BlasApi& blas, const GroupedBlasArgs& args, Stream stream) {
  detail::require(blas.handle != nullptr && blas.set_stream != nullptr, "cuBLAS grouped GEMM: cuBLAS is not loaded");
  detail::require(blas.gemm_grouped_batched_ex != nullptr,
                  "cuBLAS grouped GEMM: this cuBLAS has no cublasGemmGroupedBatchedEx (needs 12.5 or later)");
  detail::require(args.n >= 1 && args.k >= 1 && args.pointers != nullptr, "cuBLAS grouped GEMM: empty shape");
  std::vector<int> tokens;
  for (std::size_t e = 0; e + 1 < args.row_offsets.size(); ++e) {
    const int rows = args.row_offsets[e + 1] - args.row_offsets[e];
    if (rows > 0) tokens.push_back(rows);
  }
  detail::require(!tokens.empty(), "cuBLAS grouped GEMM: no expert has tokens");
  const std::size_t groups = tokens.size();
  const std::vector<cublasOperation_t> transpose(groups, CUBLAS_OP_T);
  const std::vector<cublasOperation_t> plain(groups, CUBLAS_OP_N);
  const std::vector<int> n(groups, args.n);
  const std::vector<int> k(groups, args.k);
  const std::vector<int> one(groups, 1);
  const std::vector<float> alpha(groups, 1.0f);
  const std::vector<float> beta(groups, 0.0f);
  const cudaDataType data = cuda_data_type(args.type);
  const void* const* weights = args.pointers;
  const void* const* activations = args.pointers + groups;
  void* const* outputs = const_cast<void* const*>(args.pointers + 2 * groups);
  detail::check_cublas(blas.set_stream(blas.handle, stream), "cublasSetStream");
  detail::check_cublas(
      blas.gemm_grouped_batched_ex(blas.handle, transpose.data(), plain.data(), n.data(), tokens.data(), k.data(),
                                   alpha.data(), weights, data, k.data(), activations, data, k.data(), beta.data(),
                                   outputs, data, n.data(), static_cast<int>(groups), one.data(), CUBLAS_COMPUTE_32F),
      "cublasGemmGroupedBatchedEx");
}

}  // namespace roofline::kernels
