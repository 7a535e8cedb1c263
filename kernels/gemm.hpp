#pragma once

// GEMM kernels for the compute suite, from the naive one up to Hopper's wgmma, plus cuBLAS as the
// in-run reference; and the FP8 GEMM (wgmma, with cuBLASLt as its reference). Plain C++
// launchers: callers need no nvcc (the cuBLAS and cuBLASLt entry points they take, blas_api.hpp,
// bring the toolkit's cublas_v2.h and cublasLt.h for their types).
//
// Layout (all row-major, 16-bit elements, fp32 accumulation, the result rounded to the input type):
//   C[m x n] = A[m x k] . B[n x k]^T
// B is stored n-major with k contiguous (a weight matrix of nn.Linear); in BLAS terms this is the
// "TN" product, the layout cuBLAS is fastest in.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "blas_api.hpp"
#include "compute_types.hpp"
#include "roofline/bench/testdata.hpp"
#include "roofline/core/host_device.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels {

enum class GemmKernel {
  naive,       // one thread per output element, operands straight from global memory, no reuse
  smem_tiled,  // block tiles staged in shared memory, 8x8 outputs per thread, FFMA on CUDA cores
  mma_sync,    // tensor cores through mma.sync m16n8k16, ldmatrix, multi-stage cp.async pipeline
  wgmma,       // Hopper: TMA producer warp, two wgmma consumer warpgroups, mbarrier pipeline (sm_90a)
};

inline constexpr GemmKernel all_gemm_kernels[] = {GemmKernel::naive, GemmKernel::smem_tiled, GemmKernel::mma_sync,
                                                  GemmKernel::wgmma};

const char* gemm_kernel_name(GemmKernel kernel);

// The storage formats of A, B and C that every GEMM kernel (and the cuBLAS reference) is built for.
inline constexpr StorageFormats gemm_formats = half16_formats;

// The output tile one thread block computes and how deep its k loop is staged. A block reads a
// tile_m x K strip of A and a tile_n x K strip of B from global memory, so the HBM traffic of the
// kernel, when nothing is reused through L2 across blocks, is
//   M*K*(N/tile_n) + K*N*(M/tile_m) elements read + M*N written
// (the naive kernel is the 1 x 1 tile of that formula).
using GemmTiling = kernel_tiles::GemmTiling;
GemmTiling gemm_tiling(GemmKernel kernel);

// Whether this build holds the kernel's machine code and `device` can run it (wgmma: sm_90a code
// and a compute capability 9.0 device). Throws KernelError when the device cannot be queried.
bool gemm_kernel_supported(GemmKernel kernel, int device);

// Launches `kernel` on `stream`. Requires m, n, k >= 1, n % 8 == 0 and k % 8 == 0 (16-byte rows),
// 16-byte aligned pointers; anything else throws KernelError. Errors of the launch are checked;
// faults inside the kernel show up at the caller's next synchronisation.
void gemm(GemmKernel kernel, StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
          Stream stream = nullptr);

// The wgmma kernel on the plan of kernel_tiles::gemm_wgmma_split_k, for skinny products whose
// 128 x 256 tiles leave some of the `sms` multiprocessors idle: 128 x 128 tiles where they fill
// more of them, and each output tile's k cut into ranges, one block each. The blocks of a tile
// leave fp32 partial tiles in `workspace`; the last one adds them in split order (the result does
// not depend on the blocks' order) and writes C. The workspace: gemm_split_k_workspace_bytes for
// the same shape and `sms`, zeroed once before the first launch (each launch leaves its tickets at
// zero again); 0 bytes where the plan does not split. Requirements and errors as gemm's, plus a
// null workspace where one is needed.
std::size_t gemm_split_k_workspace_bytes(int m, int n, int k, int sms);
void gemm_split_k(StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k, int sms,
                  void* workspace, Stream stream = nullptr);

// ---- FP8 -------------------------------------------------------------------------------------

// FP8 GEMM as serving engines call it: e4m3 operands with per-tensor scales, fp32 accumulation,
// bf16 output: C_bf16[m x n] = (*a_scale) * (*b_scale) * A_e4m3[m x k] . B_e4m3[n x k]^T
// (B stored n-major with k contiguous, as every GEMM here). Scales are device pointers to one float.
struct Fp8GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int m = 0;
  int n = 0;
  int k = 0;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
};

// The formats of the FP8 GEMM: e4m3 operands, bf16 output.
inline constexpr StorageFormat fp8_gemm_operand_format = StorageFormat::fp8_e4m3;
inline constexpr StorageFormat fp8_gemm_output_format = StorageFormat::bf16;

// The project's kernel (GemmKernel::wgmma only; sm_90a). Requires m >= 1, k % 16 == 0 (TMA's
// 16-byte row stride of 8-bit rows), n % 8 == 0, 16-byte aligned operands and non-null scales;
// anything else throws KernelError.
void gemm_fp8(GemmKernel kernel, const Fp8GemmArgs& args, Stream stream);

// cuBLASLt (loaded at run time, see BlasLtApi in kernels/blas_api.hpp): the in-run reference.
// cublasLtMatmul in the "TN" layout cuBLASLt's FP8 kernels require, fp32 compute with fast
// accumulation (no periodic promotion: the same arithmetic as the wgmma kernel's registers), the
// algorithm cuBLASLt's heuristic ranks first for the workspace lt.workspace_bytes. The
// descriptors, layouts and algorithm are built on the first call of a shape (and scale pointers)
// and cached in lt.plans, so that a later call is cublasLtMatmul alone. Throws KernelError when
// cuBLASLt reports an error or has no algorithm for the shape. cuBLASLt's FP8 kernels want m, n
// and k multiples of 16 (docs/compute-kernels.md): a caller with fewer tokens runs m rounded up
// to 16 on an A and a C of that many rows (the compute suite's cublaslt_fp8_rows) and reads the
// first m.
void cublaslt_gemm_fp8(const BlasLtApi& lt, const Fp8GemmArgs& args, Stream stream);
// The check operands of the FP8 GEMM: element i of stream `seed` is level / 8 with level in
// [-8, 8] (fp8_check_level), exact in e4m3. A product of two is a multiple of 1/64 of at most 1,
// so a partial sum of a dot product is a multiple of 1/64 too, of typical size 0.375 sqrt(k) (63
// at k = 28672, about 2^12 units): held exactly in the ~14 bits Hopper's fp8 tensor cores keep
// while accumulating, or off by a few units at the rare largest sums, far below bf16's rounding.
// The check then sees indexing, tiling and scaling, not the hardware's accumulation precision,
// and the host recomputes any element from (seed, index).
ROOFLINE_HOST_DEVICE constexpr int fp8_check_level(std::uint64_t seed, std::uint64_t index) {
  return static_cast<int>(testdata::bits32(seed, index) % 17U) - 8;
}
inline constexpr double fp8_check_level_scale = 1.0 / 8.0;
// Fills `count` e4m3 elements with the check operands of stream `seed`.
void fill_fp8_check_operand(void* data, std::size_t count, std::uint64_t seed, Stream stream);

// The plan cache of a loaded cuBLASLt (BlasLtApi::plans); it destroys its descriptors with lt's
// entry points, so it must not outlive the library.
std::shared_ptr<BlasLtPlans> make_blaslt_plans(const BlasLtApi& lt);

// cuBLAS in the same layout (cublasGemmEx, fp32 compute, default algorithm): the reference every
// kernel is checked and measured against. Throws KernelError when cuBLAS reports an error.
void cublas_gemm(const BlasApi& blas, StorageFormat type, const void* a, const void* b, void* c, int m, int n, int k,
                 Stream stream);
// The same product in fp32 throughout (inputs, output and arithmetic; no TF32): the reference of
// the decoder-layer benchmark.
void cublas_gemm_f32(const BlasApi& blas, const float* a, const float* b, float* c, int m, int n, int k, Stream stream);

// ---- grouped GEMM (MoE experts) ---------------------------------------------------------------

// E experts, each multiplying its own tokens by its own weight, C_e[t_e x n] = A_e[t_e x k] .
// B_e[n x k]^T, in the stacked layout of MoE engines: the tokens sorted by expert, A [sum t_e x k]
// and C [sum t_e x n] hold expert e's rows from row_offsets[e] to row_offsets[e + 1], and B
// [E x n x k] the experts' weights one after another. row_offsets has E + 1 entries: 0, then
// non-decreasing (an expert may have no tokens), the last one sum t_e >= 1.
//   16-bit operands (gemm_formats): C in their type, as gemm();
//   fp8_e4m3 operands: C_e in bf16, scaled by (*a_scale) * b_scales[e]: a per-tensor activation scale
//     and one weight scale per expert (vLLM's fused_moe w1_scale[E], TensorRT-LLM's per-expert FP8
//     scales); a per-tensor weight scale is E equal entries.
struct GroupedGemmArgs {
  StorageFormat operands = StorageFormat::bf16;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int n = 0;
  int k = 0;
  std::span<const int> row_offsets;  // host
  // Device copy of grouped_gemm_schedule(row_offsets, n), made by the caller before the launch (a
  // launch copies nothing, so that it can be captured in a graph).
  const int* schedule = nullptr;
  const float* a_scale = nullptr;   // fp8 only: device pointer to one float
  const float* b_scales = nullptr;  // fp8 only: device array of E floats, expert e's weight scale at e
};

// What the grouped kernel reads to map a block to its (expert, tile): row_offsets (E + 1 entries),
// then the prefix sums of the tiles per expert, ceil(t_e / tile_m) * ceil(n / tile_n) with
// gemm_tiling(GemmKernel::wgmma) (E + 1 entries, the last one the grid). Throws KernelError when
// row_offsets is not as GroupedGemmArgs says or the tiles do not fit a grid.
[[nodiscard]] std::vector<int> grouped_gemm_schedule(std::span<const int> row_offsets, int n);

// The project's grouped kernel (GemmKernel::wgmma only; sm_90a): the wgmma GEMM's mainloop under a
// scheduler over all experts' tiles (block b -> the expert whose tile prefix sum range holds b). An
// M tile never crosses an expert: its rows past the expert's end are another expert's tokens, loaded
// and multiplied but not stored. Requires n % 8 == 0, k % 8 == 0 (16-bit) or k % 16 == 0 (fp8),
// E * n < 2^31 (TMA's row coordinate), 16-byte aligned pointers and, for fp8, a_scale and b_scales;
// anything else throws KernelError.
void gemm_grouped(GemmKernel kernel, const GroupedGemmArgs& args, Stream stream);

// The same kernel with each output tile's k cut into kernel_tiles::grouped_gemm_split_k's splits
// for `sms` multiprocessors (0: the H200's 132), for decode steps whose experts hold a token or two:
// each block leaves its fp32 partial rows (only the rows its expert has) in `workspace`, and the
// last block of a tile adds them in split order (the result does not depend on the blocks' order)
// and writes C. The workspace: grouped_gemm_split_k_workspace_bytes for the same arguments and
// `sms`, zeroed once before the first launch (each launch leaves its tickets at zero); 0 bytes
// where the plan does not split, and then this is gemm_grouped. Throws KernelError as gemm_grouped
// does, and on a null workspace where one is needed.
[[nodiscard]] kernel_tiles::GemmSplitK grouped_gemm_split_k_plan(const GroupedGemmArgs& args, int sms);
[[nodiscard]] std::size_t grouped_gemm_split_k_workspace_bytes(const GroupedGemmArgs& args, int sms);
void gemm_grouped_split_k(const GroupedGemmArgs& args, int sms, void* workspace, Stream stream);

// The same product with A and B swapped, for decode steps (every expert at most 64 tokens): the
// wgmma GEMV of gemv_wgmma.cu over each expert's weights, C_e^T = B_e . A_e^T, an expert's n rows
// of B as wgmma's M (tiles of 64 or 128 rows) and its tokens as N (16, 32 or 64, the rest of the
// box loaded and not stored), k split as kernel_tiles::grouped_gemv_wgmma_split says for `sms`
// multiprocessors (0: the H200's 132). No row of M is padding: at one token an expert's weights
// are read once with nothing multiplied for nothing but the box's unused columns. bf16 and
// fp8_e4m3 operands, at most 256 experts with tokens; the workspace as for the split-K variant
// (grouped_gemm_swap_ab_workspace_bytes, zeroed once; 0 bytes where k is not split).
// grouped_gemm_swap_ab_unsupported says why a shape cannot run (nullptr when it can); the launch
// throws KernelError on that, and on what gemm_grouped throws.
[[nodiscard]] kernel_tiles::GemvWgmmaSplit grouped_gemm_swap_ab_plan(const GroupedGemmArgs& args, int sms);
[[nodiscard]] std::size_t grouped_gemm_swap_ab_workspace_bytes(const GroupedGemmArgs& args, int sms);
[[nodiscard]] const char* grouped_gemm_swap_ab_unsupported(const GroupedGemmArgs& args);
void gemm_grouped_swap_ab(const GroupedGemmArgs& args, int sms, void* workspace, Stream stream);

// cuBLAS over equal groups: cublasGemmStridedBatchedEx, E products of t tokens each (A, B and C
// strides t*k, n*k and t*n), 16-bit operands, fp32 compute. Throws KernelError on a cuBLAS error.
void cublas_gemm_strided_batched(const BlasApi& blas, StorageFormat type, const void* a, const void* b, void* c,
                                 int experts, int tokens, int n, int k, Stream stream);

// cuBLAS over uneven groups: cublasGemmGroupedBatchedEx (BlasApi::gemm_grouped_batched_ex), one
// group of one product per expert with tokens. `pointers` is a device copy of
// grouped_blas_pointers(...) for the same operands; row_offsets as in GroupedGemmArgs. Throws
// KernelError when the entry point is absent (cuBLAS before 12.5) or cuBLAS reports an error.
struct GroupedBlasArgs {
  StorageFormat type = StorageFormat::bf16;
  int n = 0;
  int k = 0;
  std::span<const int> row_offsets;       // host
  const void* const* pointers = nullptr;  // device: the experts' B, then A, then C pointers
};
void cublas_gemm_grouped_batched(const BlasApi& blas, const GroupedBlasArgs& args, Stream stream);
// The per-expert operand pointers of the stacked layout for the experts with tokens, in the order
// cuBLAS takes them: its "A" array (our B_e), its "B" array (our A_e), then C_e.
[[nodiscard]] std::vector<const void*> grouped_blas_pointers(StorageFormat type, const void* a, const void* b, void* c,
                                                             std::span<const int> row_offsets, int n, int k);

}  // namespace roofline::kernels
