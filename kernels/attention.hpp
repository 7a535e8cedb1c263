#pragma once

// Attention forward for the compute suite: flash attention on tensor cores, and the "standard"
// materialised path (S = Q K^T and O = P V through cuBLAS, a row softmax kernel in between).
// Plain C++ launchers: callers need no nvcc (standard attention takes cuBLAS's entry points, blas_api.hpp).
//
// Layout: Q, O [batch, heads, seq, head_dim]; K, V [batch, kv_heads, seq, head_dim]; all
// contiguous, 16-bit (bf16 or fp16), fp32 accumulation and softmax. Query head h reads kv head
// h / (heads / kv_heads) (grouped-query attention; kv_heads == heads is multi-head attention).
// Causal: query i attends keys 0..i (queries and keys share positions; prefill).

#include <cstddef>

#include "blas_api.hpp"
#include "compute_types.hpp"
#include "gemm.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::kernels {

struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int kv_heads = 1;
  int seq = 1;
  int head_dim = 128;  // Q and K: 64 or 128; 256 too on FlashVariant::wgmma
  // V and O (0: head_dim; V is then [batch, kv_heads, seq, head_dim_v] and O [batch, heads, seq,
  // head_dim_v]). Standard attention runs any; of the flash kernels FlashVariant::wgmma runs 192 with
  // 128, DeepSeek's latent attention expanded for prefill.
  int head_dim_v = 0;
  bool causal = false;
  float scale = 0;  // softmax scale; 0 means 1/sqrt(head_dim)
};

// Variants of the flash kernel (FA2 style: mma.sync m16n8k16, ldmatrix, K/V double-buffered with
// cp.async, P kept in registers as the A operand of the second product):
enum class FlashVariant {
  warps8_rows16,  // 8 warps x 16 query rows = 128-row query tile, K/V tiles of 64 keys
  warps4_rows32,  // 4 warps x 32 query rows = 128-row query tile; each K/V fragment feeds two
                  // m16 tiles, halving shared-memory reads per FLOP
  wgmma,          // Hopper (sm_90a, head_dim 64, 128, 256): TMA producer warpgroup, two consumer warpgroups of
                  // 64 rows, S = Q K^T and O += P V on wgmma with P from registers
};

inline constexpr FlashVariant all_flash_variants[] = {FlashVariant::warps8_rows16, FlashVariant::warps4_rows32,
                                                      FlashVariant::wgmma};

const char* flash_variant_name(FlashVariant variant);

// The storage formats of Q, K, V and O that the attention kernels (flash and standard) are built for.
inline constexpr StorageFormats attention_formats = half16_formats;

// Whether this build and `device` can run the variant at this head_dim (and head_dim_v, 0: the same).
// Throws KernelError when the device cannot be queried.
bool flash_variant_supported(FlashVariant variant, int head_dim, int device, int head_dim_v = 0);

// Query rows per block, keys per K/V tile, warps, K/V stages and shared memory (for this head_dim):
// roofline/kernel_tiles.hpp.
using FlashTiling = kernel_tiles::FlashTiling;
FlashTiling flash_tiling(FlashVariant variant, int head_dim);

// Throws KernelError unless head_dim is 64 or 128 (or 256, or 192 with head_dim_v 128, on wgmma), heads % kv_heads
// == 0, all sizes >= 1, and the grid fits. Pointers must be 16-byte aligned.
void flash_attention_forward(FlashVariant variant, StorageFormat type, const AttentionShape& shape, const void* q,
                             const void* k, const void* v, void* o, Stream stream = nullptr);

// Diagnostic for the selftest: FlashVariant::wgmma with the two byte offsets of V's shared-memory
// descriptor (N-major, read transposed) exchanged. That encoding was written without a GPU at hand;
// if the default fails verification and this passes, the default is the wrong one of the two.
void flash_wgmma_v_offsets_swapped(StorageFormat type, const AttentionShape& shape, const void* q, const void* k,
                                   const void* v, void* o, Stream stream = nullptr);

// FP8 flash attention forward on Hopper (sm_90a; FlashVariant::wgmma's kernel with both products on the
// 8-bit wgmma): Q, K and V in e4m3, each with a per-tensor descale (an element's value is its e4m3
// value times its tensor's descale), O in bf16. Head dims 128 and 256. The probabilities are rounded
// to e4m3 (as 2^8 P) for P V, the one rounding the 16-bit kernels do not have. 8-bit wgmma reads its
// B operand K-major only, so V is first transposed into `workspace` (flash_fp8_workspace_bytes) by a
// pass over V that is part of the call and of its time.
struct Fp8Descale {
  float q = 1;
  float k = 1;
  float v = 1;
};
inline constexpr StorageFormats flash_fp8_formats{StorageFormat::fp8_e4m3};
inline constexpr StorageFormat flash_fp8_output_format = StorageFormat::bf16;
bool flash_fp8_supported(int head_dim, int device);
std::size_t flash_fp8_workspace_bytes(const AttentionShape& shape);
void flash_fp8_forward(const AttentionShape& shape, const Fp8Descale& descale, const void* q, const void* k,
                       const void* v, void* o, void* workspace, Stream stream = nullptr);

// Standard attention: S (and P, written over S in place) materialised in a workspace of
// batch*heads*seq*seq elements of the input type. The causal mask is applied by the softmax (the
// GEMMs compute all of S, as the materialised path does).
std::size_t standard_attention_workspace_bytes(const AttentionShape& shape);
void standard_attention_forward(const BlasApi& blas, StorageFormat type, const AttentionShape& shape, const void* q,
                                const void* k, const void* v, void* o, void* workspace, Stream stream = nullptr);

}  // namespace roofline::kernels
