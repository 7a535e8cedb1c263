// Compute-ceiling probes: FFMA chains, mma.sync and wgmma issued back to back on data that stays
// in registers or shared memory, so that the measured rate is the arithmetic unit's, not memory's.
//
// Every probe's output is exactly predictable: the FFMA chains are replayed on the host with
// std::fmaf (the same correctly rounded fused operation), and the tensor-core probes alternate
// B and -B on inputs drawn from {+-0.5, +-1, +-1.5, +-2}, so every partial sum is a small multiple
// of 1/4, exact in fp32, and the accumulators end at exactly A.B^T after an odd number of steps.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../cuda_check.cuh"
#include "../peak.hpp"
#include "../tc_ptx.cuh"
#include "../wgmma.cuh"

namespace roofline::kernels {
namespace {

constexpr int kFmaThreads = 256;
constexpr int kFmaChains = 8;
constexpr int kMmaWarps = 4;
constexpr int kMmaSets = 8;
constexpr int kWgmmaThreads = 256;
constexpr int kWgmmaSmem = 64 * 128 + 2 * 256 * 128 + 1024;

// ---- FFMA ----------------------------------------------------------------------------------

// input: b, c, then kFmaThreads x kFmaChains starting values; output: one sum per thread.
__global__ void __launch_bounds__(kFmaThreads)
    fma_probe_kernel(const float* __restrict__ in, float* __restrict__ out, int iterations) {
  const float b = in[0];
  const float c = in[1];
  float a[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) a[j] = in[2 + threadIdx.x * kFmaChains + j];
#pragma unroll 4
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) a[j] = fmaf(a[j], b, c);
  }
  float sum = a[0];
#pragma unroll
  for (int j = 1; j < kFmaChains; ++j) sum += a[j];
  out[blockIdx.x * kFmaThreads + threadIdx.x] = sum;
}

// ---- mma.sync -----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t pack_bits(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return static_cast<uint32_t>(__bfloat16_as_ushort(lo)) | (static_cast<uint32_t>(__bfloat16_as_ushort(hi)) << 16);
}

// input: A[16][16] then B[8][16] (n-major); output: per warp and accumulator set, the 16x8 fp32
// fragment in lane order (lane*4 + r).
__global__ void __launch_bounds__(kMmaWarps * 32)
    mma_probe_kernel(const __nv_bfloat16* __restrict__ in, float* __restrict__ out, int iterations) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int g = lane / 4;
  const int q = lane % 4;
  const __nv_bfloat16* am = in;
  const __nv_bfloat16* bm = in + 256;
  const uint32_t a[4] = {pack_bits(am[g * 16 + 2 * q], am[g * 16 + 2 * q + 1]),
                         pack_bits(am[(g + 8) * 16 + 2 * q], am[(g + 8) * 16 + 2 * q + 1]),
                         pack_bits(am[g * 16 + 2 * q + 8], am[g * 16 + 2 * q + 9]),
                         pack_bits(am[(g + 8) * 16 + 2 * q + 8], am[(g + 8) * 16 + 2 * q + 9])};
  const uint32_t b0 = pack_bits(bm[g * 16 + 2 * q], bm[g * 16 + 2 * q + 1]);
  const uint32_t b1 = pack_bits(bm[g * 16 + 2 * q + 8], bm[g * 16 + 2 * q + 9]);
  const uint32_t nb0 = b0 ^ 0x80008000u;  // -B: flip both sign bits
  const uint32_t nb1 = b1 ^ 0x80008000u;
  float acc[kMmaSets][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int s = 0; s < kMmaSets; ++s) ptx::mma_16816<__nv_bfloat16>(acc[s], a, b0, b1);
#pragma unroll
    for (int s = 0; s < kMmaSets; ++s) ptx::mma_16816<__nv_bfloat16>(acc[s], a, nb0, nb1);
  }
#pragma unroll
  for (int s = 0; s < kMmaSets; ++s) ptx::mma_16816<__nv_bfloat16>(acc[s], a, b0, b1);
  const int global_warp = static_cast<int>(blockIdx.x) * kMmaWarps + warp;
#pragma unroll
  for (int s = 0; s < kMmaSets; ++s) {
#pragma unroll
    for (int r = 0; r < 4; ++r)
      out[(static_cast<std::size_t>(global_warp) * kMmaSets + s) * 128 + lane * 4 + r] = acc[s][r];
  }
}

// ---- wgmma --------------------------------------------------------------------------------

// input: A[64][64] then B[256][64] (both k-contiguous); output: per block and warpgroup the 64x256
// fp32 result, row-major.
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    wgmma_probe_kernel(const __nv_bfloat16* __restrict__ in, float* __restrict__ out, int iterations) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  unsigned char* base = smem_raw + (((raw + 1023u) & ~1023u) - raw);
  unsigned char* tile_a = base;                 // [64][64], 128-byte swizzle
  unsigned char* tile_b = base + 64 * 128;      // [256][64]
  unsigned char* tile_nb = tile_b + 256 * 128;  // -B
  const int tid = static_cast<int>(threadIdx.x);
  // Element (r, k) of a [rows][64] tile in the 128-byte swizzle: chunk k/8 of row r sits at chunk
  // (k/8) ^ (r%8) -- the layout TMA writes and wgmma_desc_sw128 describes.
  auto offset = [](int r, int kcol) { return r * 128 + (((kcol / 8) ^ (r % 8)) * 16) + (kcol % 8) * 2; };
  for (int idx = tid; idx < 64 * 64; idx += kWgmmaThreads) {
    *reinterpret_cast<__nv_bfloat16*>(tile_a + offset(idx / 64, idx % 64)) = in[idx];
  }
  for (int idx = tid; idx < 256 * 64; idx += kWgmmaThreads) {
    const __nv_bfloat16 v = in[64 * 64 + idx];
    *reinterpret_cast<__nv_bfloat16*>(tile_b + offset(idx / 64, idx % 64)) = v;
    *reinterpret_cast<__nv_bfloat16*>(tile_nb + offset(idx / 64, idx % 64)) = __hneg(v);
  }
  // Ordinary stores that wgmma (the async proxy) reads next need this fence before the barrier.
  ptx::fence_proxy_async_shared();
  __syncthreads();

  const uint64_t desc_a = ptx::wgmma_desc_sw128(ptx::smem_addr(tile_a));
  const uint64_t desc_b = ptx::wgmma_desc_sw128(ptx::smem_addr(tile_b));
  const uint64_t desc_nb = ptx::wgmma_desc_sw128(ptx::smem_addr(tile_nb));
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  ptx::fence_registers(acc);
  for (int it = 0; it < iterations; ++it) {
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) ptx::wgmma_m64n256k16<__nv_bfloat16>(acc, desc_a + 2 * kk, desc_b + 2 * kk, 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) ptx::wgmma_m64n256k16<__nv_bfloat16>(acc, desc_a + 2 * kk, desc_nb + 2 * kk, 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<1>();
  }
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) ptx::wgmma_m64n256k16<__nv_bfloat16>(acc, desc_a + 2 * kk, desc_b + 2 * kk, 1);
  ptx::wgmma_commit();
  ptx::wgmma_wait<0>();
  ptx::fence_registers(acc);

  const int t = tid % 128;
  const int row = (t / 32) * 16 + (t % 32) / 4;
  float* result = out + (static_cast<std::size_t>(blockIdx.x) * 2 + tid / 128) * 64 * 256;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = j * 8 + (t % 4) * 2;
    result[row * 256 + col] = acc[4 * j];
    result[row * 256 + col + 1] = acc[4 * j + 1];
    result[(row + 8) * 256 + col] = acc[4 * j + 2];
    result[(row + 8) * 256 + col + 1] = acc[4 * j + 3];
  }
#else
  __trap();
#endif
}

float dyadic(std::mt19937_64& rng) {
  static constexpr float values[] = {-2.0f, -1.5f, -1.0f, -0.5f, 0.5f, 1.0f, 1.5f, 2.0f};
  return values[rng() % 8];
}

std::vector<float> bf16_to_float(const void* bytes, std::size_t count) {
  std::vector<float> values(count);
  const auto* raw = static_cast<const std::uint16_t*>(bytes);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t bits = static_cast<std::uint32_t>(raw[i]) << 16;
    std::memcpy(&values[i], &bits, sizeof(float));
  }
  return values;
}

// max |out - A.B^T| with A [rows][k] and B [cols][k], out read through `at(copy, row, col)`.
template <typename At>
double matmul_error(const std::vector<float>& a, const std::vector<float>& b, int rows, int cols, int k,
                    std::size_t copies, At at) {
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      double expected = 0;
      for (int i = 0; i < k; ++i) expected += static_cast<double>(a[r * k + i]) * b[c * k + i];
      for (std::size_t copy = 0; copy < copies; ++copy) {
        const double got = at(copy, r, c);
        const double error = std::isfinite(got) ? std::fabs(got - expected) : INFINITY;
        worst = std::max(worst, error);
      }
    }
  }
  return worst;
}

}  // namespace

const char* peak_probe_name(PeakProbe probe) {
  switch (probe) {
    case PeakProbe::fma_fp32: return "fma_fp32";
    case PeakProbe::mma_sync_bf16: return "mma_sync_bf16";
    case PeakProbe::wgmma_bf16: return "wgmma_bf16";
  }
  return "?";
}

bool peak_probe_supported(PeakProbe probe, int device) {
  cudaDeviceProp prop{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  switch (probe) {
    case PeakProbe::fma_fp32: return true;
    case PeakProbe::mma_sync_bf16: return prop.major >= 8;
    case PeakProbe::wgmma_bf16: return detail::sm90a_runs_on(device);
  }
  return false;
}

PeakProbeConfig peak_probe_config(PeakProbe probe, int sm_count, bool quick) {
  PeakProbeConfig config;
  switch (probe) {
    case PeakProbe::fma_fp32:
      config.threads = kFmaThreads;
      config.blocks = sm_count * 8;  // 2048 threads per SM: full occupancy
      config.iterations = quick ? 4096 : 65536;
      config.input_bytes = (2 + kFmaThreads * kFmaChains) * sizeof(float);
      config.output_bytes = static_cast<std::size_t>(config.blocks) * kFmaThreads * sizeof(float);
      config.flops = 2.0 * kFmaChains * config.iterations * config.blocks * kFmaThreads;
      break;
    case PeakProbe::mma_sync_bf16:
      config.threads = kMmaWarps * 32;
      config.blocks = sm_count * 4;  // 16 warps per SM, 8 accumulator sets each
      config.iterations = quick ? 1024 : 16384;
      config.input_bytes = (16 * 16 + 8 * 16) * 2;
      config.output_bytes = static_cast<std::size_t>(config.blocks) * kMmaWarps * kMmaSets * 128 * sizeof(float);
      config.flops = 2.0 * 16 * 8 * 16 * kMmaSets * (2.0 * config.iterations + 1) * config.blocks * kMmaWarps;
      break;
    case PeakProbe::wgmma_bf16:
      config.threads = kWgmmaThreads;
      config.blocks = sm_count;  // one block of two warpgroups per SM (72 KB shared, 128 accumulators)
      config.iterations = quick ? 256 : 4096;
      config.input_bytes = (64 * 64 + 256 * 64) * 2;
      config.output_bytes = static_cast<std::size_t>(config.blocks) * 2 * 64 * 256 * sizeof(float);
      config.flops = 2.0 * 64 * 256 * 16 * (8.0 * config.iterations + 4) * config.blocks * 2;
      break;
  }
  return config;
}

std::vector<unsigned char> peak_probe_input(PeakProbe probe, const PeakProbeConfig& config, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> bytes(config.input_bytes);
  if (probe == PeakProbe::fma_fp32) {
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> values(config.input_bytes / sizeof(float));
    values[0] = std::uniform_real_distribution<float>(0.5f, 0.99f)(rng);  // |b| < 1: the chains stay bounded
    values[1] = unit(rng);
    for (std::size_t i = 2; i < values.size(); ++i) values[i] = unit(rng);
    std::memcpy(bytes.data(), values.data(), bytes.size());
  } else {
    auto* out = reinterpret_cast<std::uint16_t*>(bytes.data());
    for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
      const float v = dyadic(rng);  // exact in bf16: its upper 16 bits
      std::uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof(bits));
      out[i] = static_cast<std::uint16_t>(bits >> 16);
    }
  }
  return bytes;
}

void peak_probe_launch(PeakProbe probe, const PeakProbeConfig& config, const void* device_input, void* device_output,
                       Stream stream) {
  switch (probe) {
    case PeakProbe::fma_fp32:
      fma_probe_kernel<<<config.blocks, config.threads, 0, stream>>>(
          static_cast<const float*>(device_input), static_cast<float*>(device_output), config.iterations);
      ROOFLINE_CHECK_LAUNCH("fma_probe_kernel");
      return;
    case PeakProbe::mma_sync_bf16:
      mma_probe_kernel<<<config.blocks, config.threads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(device_input), static_cast<float*>(device_output), config.iterations);
      ROOFLINE_CHECK_LAUNCH("mma_probe_kernel");
      return;
    case PeakProbe::wgmma_bf16:
      ROOFLINE_CUDA_CHECK(
          cudaFuncSetAttribute(wgmma_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgmmaSmem));
      wgmma_probe_kernel<<<config.blocks, config.threads, kWgmmaSmem, stream>>>(
          static_cast<const __nv_bfloat16*>(device_input), static_cast<float*>(device_output), config.iterations);
      ROOFLINE_CHECK_LAUNCH("wgmma_probe_kernel");
      return;
  }
}

double peak_probe_max_error(PeakProbe probe, const PeakProbeConfig& config, const void* host_input,
                            const void* host_output) {
  const auto* out = static_cast<const float*>(host_output);
  switch (probe) {
    case PeakProbe::fma_fp32: {
      const auto* in = static_cast<const float*>(host_input);
      // Every block computes the same values (they depend on threadIdx only): replay 32 of the
      // threads exactly and compare them in every block.
      double worst = 0;
      for (int t = 0; t < kFmaThreads; t += kFmaThreads / 32) {
        float a[kFmaChains];
        for (int j = 0; j < kFmaChains; ++j) a[j] = in[2 + t * kFmaChains + j];
        for (int it = 0; it < config.iterations; ++it) {
          for (float& value : a) value = std::fmaf(value, in[0], in[1]);
        }
        float sum = a[0];
        for (int j = 1; j < kFmaChains; ++j) sum += a[j];
        for (int blk = 0; blk < config.blocks; ++blk) {
          const double got = out[static_cast<std::size_t>(blk) * kFmaThreads + t];
          worst = std::max(worst, std::isfinite(got) ? std::fabs(got - sum) : INFINITY);
        }
      }
      return worst;
    }
    case PeakProbe::mma_sync_bf16: {
      const std::vector<float> in = bf16_to_float(host_input, config.input_bytes / 2);
      const std::vector<float> a(in.begin(), in.begin() + 256);
      const std::vector<float> b(in.begin() + 256, in.end());
      const std::size_t copies = static_cast<std::size_t>(config.blocks) * kMmaWarps * kMmaSets;
      return matmul_error(a, b, 16, 8, 16, copies, [&](std::size_t copy, int r, int c) {
        // fragment element (row g + 8*(i/2), col 2q + i%2) is at lane (g*4 + q), register i
        const int lane = (r % 8) * 4 + c / 2;
        const int reg = (r / 8) * 2 + c % 2;
        return static_cast<double>(out[copy * 128 + lane * 4 + reg]);
      });
    }
    case PeakProbe::wgmma_bf16: {
      const std::vector<float> in = bf16_to_float(host_input, config.input_bytes / 2);
      const std::vector<float> a(in.begin(), in.begin() + 64 * 64);
      const std::vector<float> b(in.begin() + 64 * 64, in.end());
      const std::size_t copies = static_cast<std::size_t>(config.blocks) * 2;
      return matmul_error(a, b, 64, 256, 64, copies, [&](std::size_t copy, int r, int c) {
        return static_cast<double>(out[copy * 64 * 256 + static_cast<std::size_t>(r) * 256 + c]);
      });
    }
  }
  return INFINITY;
}

}  // namespace roofline::kernels
