#pragma once

// Device helpers shared by the tensor-core kernels: the PTX spelling of a storage format, cp.async,
// ldmatrix, mma.sync (sm_80+), and the Hopper pieces (mbarrier, TMA, wgmma fences; sm_90a; the wgmma
// instructions are in wgmma.cuh). Each is a thin wrapper over one PTX instruction so that the kernels
// read as the algorithm.

#include <cstdint>

#include "storage_format.cuh"

namespace roofline::kernels::ptx {

// ---- storage formats -------------------------------------------------------------------------

// Expands INSTRUCTION(type) with the PTX operand-type name of element type T's storage format
// ("bf16", "f16", "e4m3", "e5m2"). asm templates must be string literals, so each tensor-core
// wrapper is an INSTRUCTION macro written once, and this picks its spelling per format.
#define ROOFLINE_WITH_PTX_TYPE(T, INSTRUCTION)                                                         \
  do {                                                                                                 \
    constexpr ::roofline::kernels::TensorOperand operand_ = ::roofline::kernels::TraitsOf<T>::operand; \
    if constexpr (operand_ == ::roofline::kernels::TensorOperand::bf16) {                              \
      INSTRUCTION("bf16");                                                                             \
    } else if constexpr (operand_ == ::roofline::kernels::TensorOperand::f16) {                        \
      INSTRUCTION("f16");                                                                              \
    } else if constexpr (operand_ == ::roofline::kernels::TensorOperand::e4m3) {                       \
      INSTRUCTION("e4m3");                                                                             \
    } else {                                                                                           \
      INSTRUCTION("e5m2");                                                                             \
    }                                                                                                  \
  } while (false)

__device__ __forceinline__ uint32_t smem_addr(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// ---- cp.async (sm_80+) -----------------------------------------------------------------------

// Copies 16 bytes global -> shared; when `valid` is false nothing is read and the 16 bytes are
// zero-filled (src-size 0), which is how tile edges are padded.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// ---- ldmatrix (sm_75+) -----------------------------------------------------------------------

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// One 32-bit word of shared memory (at a shared-window address, as ldmatrix takes it).
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t r;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(r) : "r"(addr));
  return r;
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// ---- mma.sync m16n8k16, fp32 accumulate (sm_80+) ---------------------------------------------

#define ROOFLINE_MMA_M16N8K16(TYPE)                                                     \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                   \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                         \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

// d += a . b with a 16x16 (row-major fragment), b 16x8 (column fragment), d 16x8 fp32.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  static_assert(TraitsOf<T>::bits == 16, "m16n8k16 takes 16-bit operands (8-bit formats are m16n8k32)");
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_MMA_M16N8K16);
}

// ---- mma.sync m16n8k32 on 8-bit floats, fp32 accumulate (sm_89+) -------------------------------

#define ROOFLINE_MMA_M16N8K32(TYPE)                                                     \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TYPE "." TYPE                   \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                         \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

// d += a . b with a 16x32 (row-major fragment: registers 0 and 2 of row g, 1 and 3 of row g + 8,
// four elements each), b 32x8 (column fragment of column g, two registers of four), d 16x8 fp32 (the
// m16n8k16 accumulator layout). Built only for sm_89 and later; elsewhere it traps (its caller's
// host side checks the device and the kernel's PTX version first).
template <typename T>
__device__ __forceinline__ void mma_16832(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  static_assert(TraitsOf<T>::bits == 8, "m16n8k32 here takes 8-bit float operands");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  ROOFLINE_WITH_PTX_TYPE(T, ROOFLINE_MMA_M16N8K32);
#else
  (void)d;
  (void)a;
  (void)b0;
  (void)b1;
  __trap();
#endif
}

// ---- mbarrier, TMA, wgmma (sm_90a) -----------------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) and the other threads.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.b32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits for the phase of parity `parity` to complete. A pipeline bug would otherwise hang the GPU
// silently: after ~2^32 cycles (about 2 s) of waiting the thread traps, so the launch fails with
// cudaErrorLaunchFailure, which the host reports. (No printf here: a function call inside the
// consumers' wgmma loop makes ptxas serialise the wgmma pipeline.)
// Without the watchdog, for warpgroups that raise their registers with setmaxnreg: ptxas shares
// one trap block between all the callers of mbarrier_wait, and code that a lower-register region
// reaches too is held to that region's count (the consumers of flash_wgmma spilled at 168
// registers with the trap, and fit in 240 without it). Their producer keeps the watchdog.
__device__ __forceinline__ void mbarrier_wait_untimed(uint32_t bar, uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  if (mbarrier_try_wait(bar, parity)) return;
  const long long start = clock64();
  while (!mbarrier_try_wait(bar, parity)) {
    if (clock64() - start > (1LL << 32)) __trap();
  }
}

// 2-D tensor copy global -> shared through the TMA unit; completion is counted on `bar` in bytes.
// c0 is the innermost (contiguous) coordinate.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// The same copy delivered to every CTA of the cluster in `cta_mask` (bit r: rank r): `dst` and `bar`
// are offsets in the executing CTA's shared memory, and each destination CTA receives the box at that
// offset and counts its bytes on its own barrier at that offset. One L2 read feeds them all.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const void* tensor_map, uint32_t bar, int c0,
                                                      int c1, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
}

// ---- thread-block clusters (sm_90) ----
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t rank = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
// Arrives on the mbarrier at offset `bar` of CTA `cta` of this cluster, with mbarrier.arrive's default
// (release, CTA scope) semantics, as a pipeline's consumer releases a stage that a peer's TMA refills.
// (With .release.cluster instead, the paired GEMM took 1.5x its unpaired time on the H200: 4096^3 bf16
// 314 against 203 us; with the default, 191.)
__device__ __forceinline__ void mbarrier_arrive_remote(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// Every thread of every CTA of the cluster arrives, then waits for all the others: the peers' shared
// memory (barriers, stages) is initialised before, and stays alive until after, any access to it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// 3-D variant (c0 innermost).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// Shared-memory matrix descriptor for wgmma: a K-major tile whose rows are 128 bytes (64 16-bit
// elements) in the 128-byte swizzle that TMA writes with CU_TENSOR_MAP_SWIZZLE_128B. Core matrices
// of 8 rows are 1024 bytes apart (stride byte offset); the leading byte offset is unused in this
// mode. The tile must start 1024-byte aligned; a k step of 16 elements inside the 128-byte row is
// taken by adding 32 bytes to the start address.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t smem_address) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_address & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(16 >> 4) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

// Descriptor for an N-major (or M-major) tile in the 128-byte swizzle, read with imm-trans = 1:
// rows of 128 bytes hold 64 consecutive n (or m) values of one k. `leading_bytes` and
// `stride_bytes` go into the descriptor's two offset fields; for this layout the leading offset is
// the distance between consecutive 64-wide n blocks and the stride offset the distance between
// 8-row groups along k (1024 bytes when the rows are packed).
__device__ __forceinline__ uint64_t wgmma_desc_sw128_mn(uint32_t smem_address, uint32_t leading_bytes,
                                                        uint32_t stride_bytes) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_address & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((leading_bytes & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((stride_bytes & 0x3FFFF) >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads, a multiple of 32: syncs some
// warps of a block (the consumers of a warp-specialised kernel) while the others run on.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Counts the calling threads on barrier `id` without waiting (the other side syncs on it).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Makes this thread's generic-proxy writes to shared memory visible to the async proxy (wgmma
// operands, TMA stores) of the threads it then synchronises with.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Pins the accumulator registers at this point of the program, so that the compiler neither
// reads them before a wgmma_wait nor moves their initialisation after a wgmma.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

template <uint32_t Registers>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <uint32_t Registers>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace roofline::kernels::ptx
