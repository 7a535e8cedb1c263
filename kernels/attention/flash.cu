// Flash attention forward, FA2 style on mma.sync (sm_80 and later).
//
// One block owns a 128-row query tile of one (batch, head): Q stays in shared memory (and, with one
// m16 tile per warp, in registers), K and V tiles of 64 keys stream through two shared-memory stages
// filled by cp.async while the previous tile is being used. Per K/V tile each warp computes
// S = Q K^T for its rows on the tensor cores, masks it (causal diagonal, sequence end), updates the
// running row max and row sum (online softmax in base 2, the scale folded into one FFMA), rescales
// its O accumulators, converts P to 16 bits in registers -- the S accumulator layout of m16n8 is
// exactly the A-operand layout of the next m16n8k16, so P never touches shared memory -- and adds
// P V. O is divided by the row sum once at the end. Rows of shared memory are swizzled (16-byte
// chunk XOR row%8) so that ldmatrix reads of 8 rows are free of bank conflicts.
//
// Causal work is uneven across query tiles: blockIdx.y runs from the last (heaviest) tile to the
// first, so the longest blocks start first and the short ones fill the tail.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../attention.hpp"
#include "../cuda_check.cuh"
#include "../tc_ptx.cuh"
#include "flash_internal.cuh"

namespace roofline::kernels {
namespace {

constexpr int kKvStages = kernel_tiles::flash_mma_kv_stages;

// Tiles from roofline/kernel_tiles.hpp (32-key tiles for two m16 tiles per warp at head_dim 128).
template <int D, int Warps, int MTiles>
struct FlashConfig {
  static constexpr kernel_tiles::FlashTiling kTiling = kernel_tiles::flash_mma_sync(D, Warps);
  static constexpr int kBM = Warps * 16 * MTiles;
  static constexpr int kBlockN = kTiling.block_n;
  static constexpr int kThreads = Warps * 32;
  static constexpr int kRowBytes = D * 2;
  static constexpr int kQBytes = kBM * kRowBytes;
  static constexpr int kKvTileBytes = kBlockN * kRowBytes;
  static constexpr int kSmemBytes = kQBytes + 2 * kKvStages * kKvTileBytes;
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static_assert(kTiling.block_m == kBM && kTiling.smem_bytes == kSmemBytes && kTiling.kv_stages == kKvStages,
                "roofline/kernel_tiles.hpp describes this kernel");
};

// 2^x on the special-function unit (ex2.approx: 2 ulp, flushes subnormals; exp2(-inf) = 0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int D>
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return static_cast<uint32_t>(row * D * 2 + ((chunk ^ (row & 7)) * 16));
}

// Copies rows row0..row0+rows-1 (of a [seq][D] matrix at `src`) into a swizzled tile; rows past
// seq are zero-filled.
template <int D, int Threads>
__device__ __forceinline__ void load_rows(uint32_t dst, const void* src_void, int row0, int rows, int seq, int tid) {
  const auto* src = static_cast<const uint16_t*>(src_void);
  constexpr int kChunks = D / 8;
  // Not unrolled: unrolled, ptxas keeps every copy's addresses live across the main loop, and the
  // two-m-tile variant runs out of registers.
#pragma unroll 1
  for (int idx = tid; idx < rows * kChunks; idx += Threads) {
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const bool valid = row0 + r < seq;
    const uint16_t* from = src + (valid ? static_cast<std::size_t>(row0 + r) * D + c * 8 : 0);
    ptx::cp_async_16(dst + swizzled<D>(r, c), from, valid);
  }
}

template <typename T, int D, int Warps, int MTiles>
__global__ void __launch_bounds__(Warps * 32, Warps == 4 ? 2 : 1)
    flash_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
                     int heads, int group, int seq, float scale_log2, int causal) {
  using Config = FlashConfig<D, Warps, MTiles>;
  using Traits = TraitsOf<T>;
  constexpr int kBM = Config::kBM;
  constexpr int kBlockN = Config::kBlockN;
  constexpr int kThreads = Config::kThreads;
  constexpr int kNTiles = kBlockN / 8;  // n8 tiles of S per warp row block
  constexpr int kDTiles = D / 8;        // n8 tiles of O
  constexpr bool kQInRegisters = MTiles == 1;

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem_q = ptx::smem_addr(smem);
  const uint32_t smem_k = smem_q + Config::kQBytes;
  const uint32_t smem_v = smem_k + kKvStages * Config::kKvTileBytes;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int bh = static_cast<int>(blockIdx.x);
  const int batch = bh / heads;
  const int head = bh % heads;
  const int q0 = (static_cast<int>(gridDim.y) - 1 - static_cast<int>(blockIdx.y)) * kBM;
  const int kv_heads = heads / group;
  const T* q_head = q + static_cast<std::size_t>(bh) * seq * D;
  T* o_head = o + static_cast<std::size_t>(bh) * seq * D;
  const std::size_t kv_offset = static_cast<std::size_t>(batch * kv_heads + head / group) * seq * D;
  const T* k_head = k + kv_offset;
  const T* v_head = v + kv_offset;

  const int kv_tiles_all = (seq + kBlockN - 1) / kBlockN;
  const int kv_tiles = causal ? min(kv_tiles_all, (q0 + kBM + kBlockN - 1) / kBlockN) : kv_tiles_all;
  const int warp_row0 = warp * 16 * MTiles;  // first row of this warp inside the tile

  load_rows<D, kThreads>(smem_q, q_head, q0, kBM, seq, tid);
  ptx::cp_async_commit();
  load_rows<D, kThreads>(smem_k, k_head, 0, kBlockN, seq, tid);
  load_rows<D, kThreads>(smem_v, v_head, 0, kBlockN, seq, tid);
  ptx::cp_async_commit();

  uint32_t q_frag[kQInRegisters ? D / 16 : 1][4];
  if constexpr (kQInRegisters) {
    ptx::cp_async_wait<1>();  // Q has landed (K/V tile 0 may still be in flight)
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      ptx::ldmatrix_x4(q_frag[kk], smem_q + swizzled<D>(warp_row0 + (lane % 16), kk * 2 + lane / 16));
    }
  }

  float o_acc[MTiles][kDTiles][4] = {};
  float row_max[MTiles][2];
  float row_sum[MTiles][2];
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.0f;
  }

  for (int j = 0; j < kv_tiles; ++j) {
    if (j + 1 < kv_tiles) {
      const int stage = (j + 1) % kKvStages;
      load_rows<D, kThreads>(smem_k + stage * Config::kKvTileBytes, k_head, (j + 1) * kBlockN, kBlockN, seq, tid);
      load_rows<D, kThreads>(smem_v + stage * Config::kKvTileBytes, v_head, (j + 1) * kBlockN, kBlockN, seq, tid);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();  // everything but the tile just requested: Q and tile j are here
    __syncthreads();

    const int k0 = j * kBlockN;
    const int warp_first_row = q0 + warp_row0;
    const int warp_last_row = warp_first_row + 16 * MTiles - 1;
    // Causal: a warp whose rows all precede the tile's first key has nothing to add.
    if (!causal || warp_last_row >= k0) {
      const uint32_t tile_k = smem_k + (j % kKvStages) * Config::kKvTileBytes;
      const uint32_t tile_v = smem_v + (j % kKvStages) * Config::kKvTileBytes;

      // ---- S = Q K^T ----
      float s[MTiles][kNTiles][4] = {};
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[MTiles][4];
#pragma unroll
        for (int mt = 0; mt < MTiles; ++mt) {
          if constexpr (kQInRegisters) {
#pragma unroll
            for (int r = 0; r < 4; ++r) a[mt][r] = q_frag[kk][r];
          } else {
            ptx::ldmatrix_x4(a[mt], smem_q + swizzled<D>(warp_row0 + mt * 16 + (lane % 16), kk * 2 + lane / 16));
          }
        }
#pragma unroll
        for (int np = 0; np < kNTiles / 2; ++np) {
          uint32_t b[4];
          ptx::ldmatrix_x4(b, tile_k + swizzled<D>(np * 16 + (lane / 16) * 8 + (lane % 8), kk * 2 + (lane / 8) % 2));
#pragma unroll
          for (int mt = 0; mt < MTiles; ++mt) {
            ptx::mma_16816<T>(s[mt][2 * np], a[mt], b[0], b[1]);
            ptx::mma_16816<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
          }
        }
      }

      // ---- mask: keys past the sequence end, and (causal) keys after the query ----
      if (k0 + kBlockN > seq || (causal && k0 + kBlockN - 1 > warp_first_row)) {
#pragma unroll
        for (int mt = 0; mt < MTiles; ++mt) {
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int key = k0 + nt * 8 + (lane % 4) * 2 + (e % 2);
              const int row = warp_first_row + mt * 16 + lane / 4 + (e / 2) * 8;
              if (key >= seq || (causal && key > row)) s[mt][nt][e] = -INFINITY;
            }
          }
        }
      }

      // ---- online softmax; each thread holds 2 rows per m16 tile, a row spread over 4 lanes ----
#pragma unroll
      for (int mt = 0; mt < MTiles; ++mt) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          float mx = -INFINITY;
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * hh], s[mt][nt][2 * hh + 1]));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          const float new_max = fmaxf(row_max[mt][hh], mx * scale_log2);
          // A row with no unmasked key yet keeps max -inf; subtract 0 then so that no inf-inf NaN appears.
          const float base = new_max == -INFINITY ? 0.0f : new_max;
          const float alpha = fast_exp2(row_max[mt][hh] - base);
          row_max[mt][hh] = new_max;
          float sum = 0.0f;
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float p = fast_exp2(fmaf(s[mt][nt][2 * hh + e], scale_log2, -base));
              s[mt][nt][2 * hh + e] = p;
              sum += p;
            }
          }
          row_sum[mt][hh] = row_sum[mt][hh] * alpha + sum;  // per-lane partial; lanes are summed at the end
#pragma unroll
          for (int dt = 0; dt < kDTiles; ++dt) {
            o_acc[mt][dt][2 * hh] *= alpha;
            o_acc[mt][dt][2 * hh + 1] *= alpha;
          }
        }
      }

      // ---- O += P V, P from registers ----
#pragma unroll
      for (int t = 0; t < kBlockN / 16; ++t) {
        uint32_t p[MTiles][4];
#pragma unroll
        for (int mt = 0; mt < MTiles; ++mt) {
          p[mt][0] = Traits::pack(s[mt][2 * t][0], s[mt][2 * t][1]);
          p[mt][1] = Traits::pack(s[mt][2 * t][2], s[mt][2 * t][3]);
          p[mt][2] = Traits::pack(s[mt][2 * t + 1][0], s[mt][2 * t + 1][1]);
          p[mt][3] = Traits::pack(s[mt][2 * t + 1][2], s[mt][2 * t + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t b[4];
          ptx::ldmatrix_x4_trans(b,
                                 tile_v + swizzled<D>(t * 16 + ((lane / 8) % 2) * 8 + (lane % 8), dp * 2 + lane / 16));
#pragma unroll
          for (int mt = 0; mt < MTiles; ++mt) {
            ptx::mma_16816<T>(o_acc[mt][2 * dp], p[mt], b[0], b[1]);
            ptx::mma_16816<T>(o_acc[mt][2 * dp + 1], p[mt], b[2], b[3]);
          }
        }
      }
    }
    __syncthreads();  // every warp is done with stage j%2 before iteration j+1 refills it
  }
  ptx::cp_async_wait<0>();

  // ---- O / row sum ----
#pragma unroll
  for (int mt = 0; mt < MTiles; ++mt) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float total = row_sum[mt][hh];
      total += __shfl_xor_sync(0xffffffffu, total, 1);
      total += __shfl_xor_sync(0xffffffffu, total, 2);
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      const int row = q0 + warp_row0 + mt * 16 + lane / 4 + hh * 8;
      if (row >= seq) continue;
      T* out_row = o_head + static_cast<std::size_t>(row) * D;
#pragma unroll
      for (int dt = 0; dt < kDTiles; ++dt) {
        *reinterpret_cast<uint32_t*>(out_row + dt * 8 + (lane % 4) * 2) =
            Traits::pack(o_acc[mt][dt][2 * hh] * inv, o_acc[mt][dt][2 * hh + 1] * inv);
      }
    }
  }
}

template <typename T, int D, int Warps, int MTiles>
void launch(const AttentionShape& shape, float scale, const void* q, const void* k, const void* v, void* o,
            cudaStream_t stream) {
  using Config = FlashConfig<D, Warps, MTiles>;
  auto kernel = flash_fwd_kernel<T, D, Warps, MTiles>;
  ROOFLINE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSmemBytes));
  const long long bh = static_cast<long long>(shape.batch) * shape.heads;
  const int q_tiles = (shape.seq + Config::kBM - 1) / Config::kBM;
  detail::require(bh <= 0x7fffffff && q_tiles <= 65535, "flash attention: grid too large for this shape");
  const dim3 grid(static_cast<unsigned>(bh), static_cast<unsigned>(q_tiles));
  const float scale_log2 = scale * 1.4426950408889634f;  // exp(x) = exp2(x log2 e)
  kernel<<<grid, Config::kThreads, Config::kSmemBytes, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o), shape.heads,
      shape.heads / shape.kv_heads, shape.seq, scale_log2, shape.causal ? 1 : 0);
  ROOFLINE_CHECK_LAUNCH("flash_fwd_kernel");
}

template <typename T, int Warps, int MTiles>
void launch_dim(const AttentionShape& shape, float scale, const void* q, const void* k, const void* v, void* o,
                cudaStream_t stream) {
  if (shape.head_dim == 64) {
    launch<T, 64, Warps, MTiles>(shape, scale, q, k, v, o, stream);
  } else {
    launch<T, 128, Warps, MTiles>(shape, scale, q, k, v, o, stream);
  }
}

template <typename T>
void launch_variant(FlashVariant variant, const AttentionShape& shape, float scale, const void* q, const void* k,
                    const void* v, void* o, cudaStream_t stream) {
  if (variant == FlashVariant::warps8_rows16) {
    launch_dim<T, 8, 1>(shape, scale, q, k, v, o, stream);
  } else {
    launch_dim<T, 4, 2>(shape, scale, q, k, v, o, stream);
  }
}

}  // namespace

const char* flash_variant_name(FlashVariant variant) {
  switch (variant) {
    case FlashVariant::warps8_rows16: return "flash_w8r16";
    case FlashVariant::warps4_rows32: return "flash_w4r32";
    case FlashVariant::wgmma: return "flash_wgmma";
  }
  return "?";
}

bool flash_variant_supported(FlashVariant variant, int head_dim, int device, int head_dim_v) {
  cudaDeviceProp prop{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (variant != FlashVariant::wgmma) {
    return prop.major >= 8 && (head_dim == 64 || head_dim == 128) && (head_dim_v == 0 || head_dim_v == head_dim);
  }
  return kernel_tiles::flash_wgmma_runs(head_dim, head_dim_v) && detail::sm90a_runs_on(device);
}

void flash_wgmma_v_offsets_swapped(StorageFormat type, const AttentionShape& shape, const void* q, const void* k,
                                   const void* v, void* o, Stream stream) {
  const float scale = shape.scale > 0 ? shape.scale : 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  detail::flash_wgmma_forward(type, shape, scale, q, k, v, o, true, stream);
}

namespace {

// Throws KernelError unless the sizes are >= 1 and heads a multiple of kv_heads; the softmax scale
// (shape.scale, or 1/sqrt(head_dim) where it is 0).
float checked_softmax_scale(const AttentionShape& shape, const std::string& what) {
  detail::require(shape.batch >= 1 && shape.heads >= 1 && shape.kv_heads >= 1 && shape.seq >= 1,
                  what + ": batch, heads, kv_heads and seq must be >= 1");
  detail::require(shape.heads % shape.kv_heads == 0, what + ": heads (" + std::to_string(shape.heads) +
                                                         ") must be a multiple of kv_heads (" +
                                                         std::to_string(shape.kv_heads) + ")");
  return shape.scale > 0 ? shape.scale : 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
}

}  // namespace

bool flash_fp8_supported(int head_dim, int device) {
  return flash_variant_supported(FlashVariant::wgmma, 128, device) && kernel_tiles::flash_wgmma_fp8_runs(head_dim);
}

std::size_t flash_fp8_workspace_bytes(const AttentionShape& shape) {
  return detail::flash_fp8_transposed_v_bytes(shape);
}

void flash_fp8_forward(const AttentionShape& shape, const Fp8Descale& descale, const void* q, const void* k,
                       const void* v, void* o, void* workspace, Stream stream) {
  const float scale = checked_softmax_scale(shape, "flash attention (fp8)");
  detail::flash_wgmma_fp8_forward(shape, scale, descale, q, k, v, o, workspace, stream);
}

FlashTiling flash_tiling(FlashVariant variant, int head_dim) {
  if (variant == FlashVariant::wgmma) return kernel_tiles::flash_wgmma(head_dim);
  return kernel_tiles::flash_mma_sync(head_dim, variant == FlashVariant::warps8_rows16 ? 8 : 4);
}

void flash_attention_forward(FlashVariant variant, StorageFormat type, const AttentionShape& shape, const void* q,
                             const void* k, const void* v, void* o, Stream stream) {
  const float scale = checked_softmax_scale(shape, "flash attention");
  if (variant == FlashVariant::wgmma) {
    detail::flash_wgmma_forward(type, shape, scale, q, k, v, o, false, stream);
  } else {
    detail::require((shape.head_dim == 64 || shape.head_dim == 128) &&
                        (shape.head_dim_v == 0 || shape.head_dim_v == shape.head_dim),
                    "flash attention: head_dim must be 64 or 128 (V as wide), got " + std::to_string(shape.head_dim));
    dispatch_storage<attention_formats>(type, [&](auto traits) {
      using T = typename decltype(traits)::Element;
      launch_variant<T>(variant, shape, scale, q, k, v, o, stream);
    });
  }
}

}  // namespace roofline::kernels
