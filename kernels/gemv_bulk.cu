// The GEMV for batches of 1 to 8 vectors with W and x streamed into shared memory by the TMA unit
// (sm_90a): one producer warp issues bulk copies of 16 rows x 1 KB of W, and of the matching k
// range of every vector, into a ring of stages; four consumer warps multiply each stage on
// mma.m16n8k16, as gemv.cu's kernels do from registers (the same WeightCodec, so that every storage
// format of W is one instantiation).
//
// Why a third batch-1 kernel: gemv.cu's kernels hold the bytes in flight in registers, and every
// block ramps up and drains its own loads, 16 rows at a time. Here a resident grid (two blocks
// per SM) loops over the row tiles and its producer moves on to the next tile while the
// consumers finish the last one: 3-6 stages per block in flight at all times, no per-tile ramp,
// and one copy instruction per 1 KB instead of one load per 16 bytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "device_utils.cuh"
#include "gemv_bulk.hpp"
#include "gemv_codec.cuh"

namespace roofline::kernels::detail {
namespace {

using namespace gemv_detail;

namespace gemv_bulk_layout {
inline constexpr int kRows = 16;  // one m-tile of mma.m16n8k16
inline constexpr int kConsumerWarps = 4;
inline constexpr int kConsumerThreads = 32 * kConsumerWarps;
inline constexpr int kThreads = kConsumerThreads + 32;  // the last warp is the producer
inline constexpr int kChunkBytes = 64;                  // one mma chunk: 4 lanes x 16 bytes of a row
inline constexpr int kStageRowBytes = 1024;             // of each row per stage: 16 chunks, 4 per warp
inline constexpr int kChunksPerStage = kStageRowBytes / kChunkBytes;
// A warp reads 64 bytes of each of 8 rows at once; rows half a bank period (64 bytes) apart in
// the bank map make those 512 bytes four conflict-free wavefronts (a 1 KB pitch would make 8).
inline constexpr int kRowPitch = kStageRowBytes + 64;
inline constexpr int kStageBytesW = kRows * kRowPitch;
inline constexpr int kBlocksPerSm = 2;
inline constexpr int kSmemBudget = 110 * 1024;  // of the 228 KB per SM, for each of two blocks
static_assert(kChunksPerStage % kConsumerWarps == 0, "the consumer warps split a stage's chunks evenly");

// A stage: 16 rows x 1 KB of W, then the matching k range of each of NV vectors (16-bit).
template <typename Codec, int NV>
struct Stages {
  static constexpr int k_per_stage = kChunksPerStage * chunk_k_of<Codec>;
  static constexpr int bytes_x_vector = k_per_stage * 2;
  static constexpr int bytes = kStageBytesW + NV * bytes_x_vector;
  static constexpr int count = std::min(6, (kSmemBudget - 256) / bytes);
  static constexpr int smem = count * bytes + 2 * count * 8;  // the stages, then 2 x count mbarriers
  static_assert(count >= 2, "a ring of at least two stages");
};
}  // namespace gemv_bulk_layout

using namespace gemv_bulk_layout;

template <typename TX, typename Codec, int NV>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    gemv_bulk_kernel(GemvOperands<TX> op, int m, int k, int batch) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Stages<Codec, NV>;
  constexpr int CK = chunk_k_of<Codec>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ float partial[kConsumerWarps - 1][4][32];
  const uint32_t stages = ptx::smem_addr(smem_raw);
  const uint32_t full_bar = stages + S::count * S::bytes;
  const uint32_t empty_bar = full_bar + S::count * 8;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tiles = m / kRows;
  const std::int64_t row_bytes = w_bytes<Codec>(k);
  const int stages_per_tile = static_cast<int>((row_bytes + kStageRowBytes - 1) / kStageRowBytes);
  // The bytes of W of each row in stage s of a tile (the last may be short), in 64-byte chunks.
  const auto chunks_in = [&](int s) {
    const std::int64_t left = row_bytes - static_cast<std::int64_t>(s) * kStageRowBytes;
    return static_cast<int>(left < kStageRowBytes ? left : kStageRowBytes) / kChunkBytes;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < S::count; ++s) {
      ptx::mbarrier_init(full_bar + s * 8, 1);
      ptx::mbarrier_init(empty_bar + s * 8, kConsumerThreads);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warp == kConsumerWarps) {
    // Lanes 0-15 copy a row of W each, lanes 16 .. 16 + batch - 1 a vector's slice of x.
    const uint64_t policy = ptx::l2_policy_evict_first();
    const int vectors = min(batch, NV);
    int i = 0;
    for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
      const unsigned char* tile_w =
          static_cast<const unsigned char*>(op.w) + static_cast<std::int64_t>(tile) * kRows * row_bytes;
      for (int s = 0; s < stages_per_tile; ++s, ++i) {
        const int slot = i % S::count;
        const uint32_t phase = static_cast<uint32_t>(i / S::count) & 1U;
        const int chunks = chunks_in(s);
        const auto bytes_w = static_cast<uint32_t>(chunks * kChunkBytes);
        const auto bytes_x = static_cast<uint32_t>(chunks * CK * 2);
        const uint32_t stage = stages + slot * S::bytes;
        // A fresh barrier counts as having completed the phase before phase 0.
        ptx::mbarrier_wait(empty_bar + slot * 8, phase ^ 1U);
        if (lane == 0) ptx::mbarrier_arrive_expect_tx(full_bar + slot * 8, kRows * bytes_w + vectors * bytes_x);
        __syncwarp();
        if (lane < kRows) {
          ptx::bulk_load(stage + lane * kRowPitch,
                         tile_w + lane * row_bytes + static_cast<std::int64_t>(s) * kStageRowBytes, bytes_w,
                         full_bar + slot * 8, policy);
        } else if (lane - kRows < vectors) {
          const int v = lane - kRows;
          ptx::bulk_load(stage + kStageBytesW + v * S::bytes_x_vector,
                         op.x + static_cast<std::int64_t>(v) * k + static_cast<std::int64_t>(s) * S::k_per_stage,
                         bytes_x, full_bar + slot * 8, ptx::l2_policy_evict_last());
        }
      }
    }
    return;  // the consumers sync among themselves from here on (named barrier 1)
  }

  // Lane (g, t) holds rows g and g + 8 of the tile, bytes 16t .. 16t + 15 of each chunk, and x's
  // matching piece of vector g (gemv_mapping.hpp): lanes past the batch read vector 0 and zero it.
  const int g = lane / 4;
  const int t = lane % 4;
  const bool xvalid = g < batch;
  const uint32_t lane_x = static_cast<uint32_t>((xvalid ? g : 0) * S::bytes_x_vector + (CK / 4) * t * 2);
  const int groups = k / gemv_int4_group;
  const float scale = output_scale<Codec>(op.weight_scale);
  constexpr int kPerWarp = kChunksPerStage / kConsumerWarps;
  int i = 0;
  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
    float acc[1][4] = {{0.0F, 0.0F, 0.0F, 0.0F}};
    const std::int64_t row_g = static_cast<std::int64_t>(tile) * kRows + g;
    for (int s = 0; s < stages_per_tile; ++s, ++i) {
      const int slot = i % S::count;
      const uint32_t phase = static_cast<uint32_t>(i / S::count) & 1U;
      const int chunks = chunks_in(s);
      ptx::mbarrier_wait(full_bar + slot * 8, phase);
      const uint32_t stage = stages + slot * S::bytes;
      const uint32_t lane_w = stage + g * kRowPitch + 16 * t;
      // The stage's loads first (selected, not branched on, so that they issue together), then
      // the multiplies; the warps take neighbouring chunks.
      uint4 w0[kPerWarp];
      uint4 w1[kPerWarp];
      uint4 xv[kPerWarp][1][Codec::pieces];
#pragma unroll
      for (int j = 0; j < kPerWarp; ++j) {
        const int c = j * kConsumerWarps + warp;
        const bool valid = c < chunks;
        w0[j] = valid ? ptx::ld_shared_v4(lane_w + c * kChunkBytes) : make_uint4(0, 0, 0, 0);
        w1[j] = valid ? ptx::ld_shared_v4(lane_w + 8 * kRowPitch + c * kChunkBytes) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int p = 0; p < Codec::pieces; ++p) {
          const uint4 v =
              valid ? ptx::ld_shared_v4(stage + kStageBytesW + lane_x + (c * CK + 8 * p) * 2) : make_uint4(0, 0, 0, 0);
          xv[j][0][p] = xvalid ? v : make_uint4(0, 0, 0, 0);
        }
      }
      // Each thread's reads of the stage are done (its release orders them): it may be refilled
      // while the multiplies run.
      ptx::mbarrier_arrive(empty_bar + slot * 8);
#pragma unroll
      for (int j = 0; j < kPerWarp; ++j) {
        const int c = j * kConsumerWarps + warp;
        if (c >= chunks) break;
        float2 scales = make_float2(1.0F, 1.0F);
        if constexpr (Codec::group_scaled) {
          scales = group_scales_of(op.group_scales, row_g, groups, s * kChunksPerStage + c);
        }
        codec_chunk<TX, Codec, 1>(acc, w0[j], w1[j], xv[j], scales);
      }
    }

    // Warps 1.. hand their sums to warp 0, which adds them in warp order (deterministic).
    if (warp > 0) {
#pragma unroll
      for (int r = 0; r < 4; ++r) partial[warp - 1][r][lane] = acc[0][r];
    }
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (warp == 0) {
#pragma unroll
      for (int other = 0; other < kConsumerWarps - 1; ++other) {
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[0][r] += partial[other][r][lane];
      }
      // Accumulator layout of m16n8: c0, c1 at (row g, vectors 2t, 2t + 1), c2, c3 at row g + 8.
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int vector = 2 * t + (r & 1);
        if (vector < batch) {
          const std::int64_t row = static_cast<std::int64_t>(tile) * kRows + g + (r >= 2 ? 8 : 0);
          const float value = Codec::per_tensor_scale ? acc[0][r] * scale : acc[0][r];
          op.y[static_cast<std::int64_t>(vector) * m + row] = TraitsOf<TX>::from_float(value);
        }
      }
    }
    ptx::named_barrier_sync(1, kConsumerThreads);  // warp 0 has read `partial` before the next tile
  }
#else
  // Built without sm_90a code: the host never launches this (gemv_kernel_supported is false).
  __trap();
#endif
}

template <typename TX, typename Codec, int NV>
cudaError_t launch_vectors(const GemvArgs& a, cudaStream_t stream) {
  using S = Stages<Codec, NV>;
  const auto kernel = gemv_bulk_kernel<TX, Codec, NV>;
  const cudaError_t attribute = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::smem);
  if (attribute != cudaSuccess) return attribute;
  const std::int64_t tiles = a.m / kRows;
  const std::int64_t resident = static_cast<std::int64_t>(kBlocksPerSm) * (a.sms > 0 ? a.sms : 132);
  const auto blocks = static_cast<unsigned>(std::min(tiles, resident));
  kernel<<<blocks, kThreads, S::smem, stream>>>(operands_of<TX>(a), static_cast<int>(a.m), static_cast<int>(a.k),
                                                static_cast<int>(a.batch));
  return cudaGetLastError();
}

template <typename TX, typename Codec>
cudaError_t launch_with_codec(const GemvArgs& a, cudaStream_t stream) {
  if (a.batch <= 1) return launch_vectors<TX, Codec, 1>(a, stream);
  if (a.batch <= 2) return launch_vectors<TX, Codec, 2>(a, stream);
  if (a.batch <= 4) return launch_vectors<TX, Codec, 4>(a, stream);
  return launch_vectors<TX, Codec, 8>(a, stream);
}

}  // namespace

const char* gemv_bulk_unsupported(std::int64_t m, std::int64_t k, std::int64_t batch, StorageFormat weights) {
  if (batch > gemv_bulk_max_batch) return "the bulk GEMV handles batches up to 8";
  if (m % kRows != 0) return "the bulk GEMV needs m to be a multiple of 16";
  // A chunk is 64 bytes of a row: 32 k of 16-bit W, 64 of fp8, 128 of int4.
  const std::int64_t chunk_k = static_cast<std::int64_t>(kChunkBytes) * 8 / bits_of(weights);
  if (k % chunk_k != 0) {
    switch (weights) {
      case StorageFormat::fp8_e4m3: return "the bulk GEMV needs k to be a multiple of 64 for fp8 W";
      case StorageFormat::int4_g128: return "the bulk GEMV needs k to be a multiple of 128 for int4 W";
      default: return "the bulk GEMV needs k to be a multiple of 32";
    }
  }
  return nullptr;
}

cudaError_t launch_gemv_bulk(const GemvArgs& a, cudaStream_t stream) {
  switch (a.weights) {
    case StorageFormat::fp8_e4m3:
      if (a.weight_scale == nullptr) return cudaErrorInvalidValue;
      return launch_with_codec<__nv_bfloat16, WeightCodec<StorageFormat::fp8_e4m3, __nv_bfloat16>>(a, stream);
    case StorageFormat::int4_g128:
      if (a.group_scales == nullptr) return cudaErrorInvalidValue;
      return launch_with_codec<__nv_bfloat16, WeightCodec<StorageFormat::int4_g128, __nv_bfloat16>>(a, stream);
    default:
      return dispatch_storage<gemv_formats>(a.weights, [&](auto traits) {
        using T = typename decltype(traits)::Element;
        return launch_with_codec<T, WeightCodec<decltype(traits)::format, T>>(a, stream);
      });
  }
}

}  // namespace roofline::kernels::detail
