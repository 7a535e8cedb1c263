// The FP8 GEMM through cuBLASLt (the in-run reference of gemm_fp8) and its per-shape plans.
//
// cuBLASLt is column-major. The row-major product C[m x n] = A[m x k] . B[n x k]^T is, read
// column-major, C^T[n x m] = B'^T . A' with B' the k x n column-major view of B and A' the k x m
// view of A: cuBLASLt's "A" is our B (transposed), its "B" our A (not transposed) -- the "TN" form,
// the only one its FP8 kernels take. Its scale of "A" is therefore b_scale, of "B" a_scale.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "../blas_api.hpp"
#include "../cuda_check.cuh"
#include "gemm_internal.cuh"

namespace roofline::kernels {

namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw KernelError(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(status)));
  }
}

// The largest power of two (at most 256, the heuristic's default) that divides every pointer: the
// alignment the chosen algorithm may assume.
std::uint32_t common_alignment(std::initializer_list<const void*> pointers) {
  std::uint32_t alignment = 256;
  for (const void* p : pointers) {
    while (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) alignment /= 2;
  }
  return alignment;
}

}  // namespace

// How many algorithms the heuristic is asked for per descriptor. The heuristic does not see the
// scale pointers, so it offers algorithms that cublasLtMatmul then refuses
// (CUBLAS_STATUS_NOT_SUPPORTED) when a scale pointer is not 16-byte aligned: cublaslt_gemm_fp8
// requires that alignment; a plan keeps every candidate all the same, and the first call settles
// on the first one that runs (scripts/gpu/cublaslt_fp8_probe.cu, H200, cuBLAS 13.1, 2026-12-01).
constexpr int kHeuristicCandidates = 8;

// One way of calling cublasLtMatmul: a descriptor (fast accumulation on, as the project's kernel
// and serving engines run FP8, or off), an algorithm, and whether C is passed (beta is 0, so C may
// be null, as PyTorch's _scaled_mm passes it).
struct Fp8Candidate {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool pass_c = true;
  std::size_t workspace_bytes = 0;  // what the algorithm asks for, at most the plan's workspace
};

// One shape's descriptors, layouts and candidates; the scale pointers are attributes of the
// descriptors. `chosen` is the candidate that ran (-1 until a call has settled it).
struct Fp8Plan {
  cublasLtMatmulDesc_t desc_fast = nullptr;
  cublasLtMatmulDesc_t desc_exact = nullptr;
  cublasLtMatmulDesc_t desc_scalar_mode = nullptr;  // fast, with the scale modes stated (as PyTorch does)
  cublasLtMatrixLayout_t layout_a = nullptr;        // cuBLASLt's A: our B, k x n column-major
  cublasLtMatrixLayout_t layout_b = nullptr;        // cuBLASLt's B: our A, k x m column-major
  cublasLtMatrixLayout_t layout_d = nullptr;        // C and D: n x m column-major bf16
  std::vector<Fp8Candidate> candidates;
  int chosen = -1;
};

class BlasLtPlans {
 public:
  explicit BlasLtPlans(const BlasLtApi& lt)
      : desc_destroy_(lt.matmul_desc_destroy), layout_destroy_(lt.matrix_layout_destroy) {}
  BlasLtPlans(const BlasLtPlans&) = delete;
  BlasLtPlans& operator=(const BlasLtPlans&) = delete;
  ~BlasLtPlans() {
    for (auto& [key, plan] : plans_) release(plan);
  }

  // Runs the product with the plan of its shape: the settled candidate, or (first call) each
  // candidate in turn until cuBLASLt accepts one.
  void run(const BlasLtApi& lt, const Fp8GemmArgs& args, cudaStream_t stream) {
    const std::uint32_t alignment = common_alignment({args.a, args.b, args.c});
    const Key key{args.m, args.n, args.k, args.a_scale, args.b_scale, alignment};
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      Fp8Plan plan;
      try {
        build(lt, args, alignment, plan);
      } catch (...) {
        release(plan);
        throw;
      }
      it = plans_.emplace(key, std::move(plan)).first;
    }
    Fp8Plan& plan = it->second;
    if (plan.chosen >= 0) {
      check_lt(call(lt, plan, plan.candidates[static_cast<std::size_t>(plan.chosen)], args, stream), "cublasLtMatmul");
      return;
    }
    cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
    for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
      last = call(lt, plan, plan.candidates[i], args, stream);
      if (last == CUBLAS_STATUS_SUCCESS) {
        plan.chosen = static_cast<int>(i);
        return;
      }
    }
    throw KernelError(
        "cublasLtMatmul refused all " + std::to_string(plan.candidates.size()) +
        " algorithms its heuristic offered for the FP8 product " + std::to_string(args.m) + "x" +
        std::to_string(args.n) + "x" + std::to_string(args.k) +
        " (fast accumulation on and off, scale modes stated or not, C given and null): last cuBLAS status " +
        std::to_string(static_cast<int>(last)));
  }

 private:
  using Key = std::tuple<int, int, int, const float*, const float*, std::uint32_t>;

  static cublasStatus_t call(const BlasLtApi& lt, const Fp8Plan& plan, const Fp8Candidate& candidate,
                             const Fp8GemmArgs& args, cudaStream_t stream) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    return lt.matmul(lt.handle, candidate.desc, &alpha, args.b, plan.layout_a, args.a, plan.layout_b, &beta,
                     candidate.pass_c ? args.c : nullptr, plan.layout_d, args.c, plan.layout_d, &candidate.algo,
                     lt.workspace, candidate.workspace_bytes, stream);
  }

  static cublasLtMatmulDesc_t make_desc(const BlasLtApi& lt, const Fp8GemmArgs& args, bool fast_accumulation,
                                        bool state_scale_modes) {
    cublasLtMatmulDesc_t desc = nullptr;
    check_lt(lt.matmul_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transpose = CUBLAS_OP_T;
    const cublasOperation_t plain = CUBLAS_OP_N;
    const std::int8_t fast = fast_accumulation ? 1 : 0;
    const auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void* value, std::size_t size) {
      const cublasStatus_t status = lt.matmul_desc_set_attribute(desc, attribute, value, size);
      if (status != CUBLAS_STATUS_SUCCESS) lt.matmul_desc_destroy(desc);
      check_lt(status, "cublasLtMatmulDescSetAttribute");
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose));
    set(CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain));
    set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast));
    set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &args.b_scale, sizeof(args.b_scale));
    set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &args.a_scale, sizeof(args.a_scale));
    if (state_scale_modes) {
      const std::int32_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
      set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &scalar, sizeof(scalar));
      set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &scalar, sizeof(scalar));
    }
    return desc;
  }

  // Up to kHeuristicCandidates algorithms for `desc`, appended to the plan with C given and null.
  static void add_candidates(const BlasLtApi& lt, Fp8Plan& plan, cublasLtMatmulDesc_t desc, std::uint32_t alignment) {
    cublasLtMatmulPreference_t preference = nullptr;
    check_lt(lt.preference_create(&preference), "cublasLtMatmulPreferenceCreate");
    std::array<cublasLtMatmulHeuristicResult_t, kHeuristicCandidates> results{};
    int found = 0;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    const std::uint64_t workspace = lt.workspace_bytes;
    for (const auto [attribute, value, size] :
         {std::tuple{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<const void*>(&workspace), sizeof(workspace)},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, static_cast<const void*>(&alignment),
                     sizeof(alignment)},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, static_cast<const void*>(&alignment),
                     sizeof(alignment)},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, static_cast<const void*>(&alignment),
                     sizeof(alignment)},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, static_cast<const void*>(&alignment),
                     sizeof(alignment)}}) {
      const bool alignment_attribute = attribute != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES;
      if (status == CUBLAS_STATUS_SUCCESS && !(alignment_attribute && alignment == 0)) {
        status = lt.preference_set_attribute(preference, attribute, value, size);
      }
    }
    if (status == CUBLAS_STATUS_SUCCESS) {
      status = lt.algo_get_heuristic(lt.handle, desc, plan.layout_a, plan.layout_b, plan.layout_d, plan.layout_d,
                                     preference, kHeuristicCandidates, results.data(), &found);
    }
    lt.preference_destroy(preference);
    if (status != CUBLAS_STATUS_SUCCESS) return;  // this descriptor has no algorithm: the other may
    for (int i = 0; i < found; ++i) {
      if (results[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
      const cublasLtMatmulHeuristicResult_t& result = results[static_cast<std::size_t>(i)];
      for (bool pass_c : {true, false})
        plan.candidates.push_back(
            {.desc = desc, .algo = result.algo, .pass_c = pass_c, .workspace_bytes = result.workspaceSize});
    }
  }

  static void build(const BlasLtApi& lt, const Fp8GemmArgs& args, std::uint32_t alignment, Fp8Plan& plan) {
    const auto u64 = [](int v) { return static_cast<std::uint64_t>(v); };
    check_lt(lt.matrix_layout_create(&plan.layout_a, CUDA_R_8F_E4M3, u64(args.k), u64(args.n), args.k),
             "cublasLtMatrixLayoutCreate");
    check_lt(lt.matrix_layout_create(&plan.layout_b, CUDA_R_8F_E4M3, u64(args.k), u64(args.m), args.k),
             "cublasLtMatrixLayoutCreate");
    check_lt(lt.matrix_layout_create(&plan.layout_d, CUDA_R_16BF, u64(args.n), u64(args.m), args.n),
             "cublasLtMatrixLayoutCreate");
    plan.desc_fast = make_desc(lt, args, true, false);
    plan.desc_exact = make_desc(lt, args, false, false);
    plan.desc_scalar_mode = make_desc(lt, args, true, true);
    add_candidates(lt, plan, plan.desc_fast, alignment);
    add_candidates(lt, plan, plan.desc_exact, alignment);
    add_candidates(lt, plan, plan.desc_scalar_mode, 0);
    detail::require(!plan.candidates.empty(), "cuBLASLt has no FP8 algorithm for " + std::to_string(args.m) + "x" +
                                                  std::to_string(args.n) + "x" + std::to_string(args.k));
  }

  void release(Fp8Plan& plan) const {
    for (cublasLtMatmulDesc_t desc : {plan.desc_fast, plan.desc_exact, plan.desc_scalar_mode}) {
      if (desc != nullptr) desc_destroy_(desc);
    }
    for (cublasLtMatrixLayout_t layout : {plan.layout_a, plan.layout_b, plan.layout_d}) {
      if (layout != nullptr) layout_destroy_(layout);
    }
    plan = Fp8Plan{};
  }

  decltype(&cublasLtMatmulDescDestroy) desc_destroy_;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy_;
  std::mutex mutex_;
  std::map<Key, Fp8Plan> plans_;
};

std::shared_ptr<BlasLtPlans> make_blaslt_plans(const BlasLtApi& lt) {
  detail::require(lt.matmul_desc_destroy != nullptr && lt.matrix_layout_destroy != nullptr,
                  "cuBLASLt plans: cuBLASLt is not loaded");
  return std::make_shared<BlasLtPlans>(lt);
}

void cublaslt_gemm_fp8(const BlasLtApi& lt, const Fp8GemmArgs& args, Stream stream) {
  detail::require(lt.handle != nullptr && lt.matmul != nullptr && lt.plans != nullptr,
                  "cuBLASLt FP8 GEMM: cuBLASLt is not loaded");
  detail::require(args.m >= 1 && args.n >= 1 && args.k >= 1, "cuBLASLt FP8 GEMM: empty shape");
  for (const void* pointer : {args.a, args.b, static_cast<const void*>(args.c)}) {
    detail::require(pointer != nullptr && reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0,
                    "cuBLASLt FP8 GEMM: operands must be 16-byte aligned");
  }
  detail::require(args.a_scale != nullptr && args.b_scale != nullptr, "cuBLASLt FP8 GEMM: the scales must be given");
  for (const float* scale : {args.a_scale, args.b_scale}) {
    detail::require(reinterpret_cast<std::uintptr_t>(scale) % 16 == 0,
                    "cuBLASLt FP8 GEMM: each scale must be 16-byte aligned (cublasLtMatmul refuses the product "
                    "otherwise)");
  }
  lt.plans->run(lt, args, stream);
}

}  // namespace roofline::kernels
