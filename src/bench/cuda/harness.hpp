#pragma once

// The CUDA side of the benchmark harness (host code, compiled by the C++ compiler): device
// buffers, waits with a deadline, the timing loop, cuBLAS, and host-side parallel loops for
// references. Suites' runners (memory_runner.cpp, ...) build on these.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/blas_api.hpp"
#include "kernels/storage_format.hpp"
#include "roofline/bench/bench.hpp"

namespace roofline::bench::cuda {

class Nvml;

// A CUDA or cuBLAS call failed.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, cudaError_t code) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// The GPU did not finish within the timeout: nothing may touch it any more.
class GpuHang : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case needs more device memory than is free: it is not run.
class NotEnoughMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel's output did not match the host reference; the message says where and by how much.
class VerificationFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, std::string_view what);
void check(cublasStatus_t status, std::string_view what);

// Whether the device may still be used: after a hang nothing may wait on it (not even
// cudaFree), after a sticky error nothing runs on it.
struct Health {
  bool hung = false;
  bool lost = false;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const Health* health);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  [[nodiscard]] void* get() const { return data_; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_);
  }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void release();
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  const Health* health_ = nullptr;
};

// One launch of the code under test; `iteration` picks the rotating input set. It may return an
// error or throw (CudaError, or a kernel launcher's KernelError).
using Launch = std::function<cudaError_t(cudaStream_t stream, int iteration)>;

// How the timed launches are issued. graph: a sample's launches are captured once as a CUDA
// graph and replayed (launch gaps shrink). direct: plain launches on the stream, as a user calls
// them -- for work whose graph form is a different operation (a device-to-device cudaMemcpyAsync
// becomes a memcpy node, which runs on a copy engine, slower than the copy kernel the runtime
// launches for a direct call).
enum class TimingMode : std::uint8_t { graph, direct };

// cuBLAS, loaded with dlopen when a case first needs it: linking it would make every roofline
// command (ridge, hw, ...) load ~700 MB of libraries at start-up. The entry points are the ones
// the kernels take (kernels/blas_api.hpp).
inline constexpr std::size_t scalar_slot_floats = 64;
[[nodiscard]] inline const float* scalar_slot(const DeviceBuffer& scalars, std::size_t index) {
  return scalars.as<float>() + index * scalar_slot_floats;
}

struct Cublas : kernels::BlasApi {
  int version = 0;
};

class CublasLtLibrary;  // cublaslt_library.hpp

class Context {
 public:
  Context(const DeviceInfo& device, const TimingPolicy& policy);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  [[nodiscard]] const DeviceInfo& device() const { return device_; }
  [[nodiscard]] const TimingPolicy& policy() const { return policy_; }
  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] Health& health() { return health_; }

  // cuBLAS with a handle bound to stream() and its own workspace (so that graph capture never
  // allocates); loaded on first use. Throws CudaError when the library cannot be loaded.
  [[nodiscard]] const Cublas& cublas();
  // cuBLASLt (the FP8 GEMM's reference) with its own 32 MiB workspace; loaded on first use.
  // Throws CudaError when the library cannot be loaded.
  [[nodiscard]] const kernels::BlasLtApi& cublaslt();

  // Device memory; throws NotEnoughMemory when less than `bytes` (plus a margin) is free.
  [[nodiscard]] DeviceBuffer allocate(std::size_t bytes);
  // The same, zeroed on stream() (a workspace of tickets that each launch leaves at zero).
  [[nodiscard]] DeviceBuffer allocate_zeroed(std::size_t bytes);
  // Waits for the stream with a deadline (policy().timeout_s); throws GpuHang past it.
  void wait(std::string_view what);
  void upload(const DeviceBuffer& to, const void* from, std::size_t bytes);
  // Per-tensor scales on the device, value i at scalar_slot(buffer, i): each at the start of its own
  // 256-byte line, aligned as cudaMalloc aligns a tensor, since cuBLASLt's FP8 kernels take a
  // scale pointer with a tensor's alignment.
  DeviceBuffer upload_scalars(std::span<const float> values);
  void download(void* to, const DeviceBuffer& from, std::size_t bytes);
  // Fills the buffer with 0xFF bytes: NaN in every float format and an index no kernel writes,
  // so that an element the kernel under test failed to write is caught by the check.
  void poison(const DeviceBuffer& buffer);
  // After a failed case: clears a recoverable error, or marks the device lost.
  void recover();

  // Warm-up, then timed samples of back-to-back launches (replayed as one CUDA graph where
  // capture works, unless `mode` is direct) until the policy's noise, count or budget says stop
  // (take_samples: throttled samples are taken again); per-launch seconds, with the clocks NVML
  // read between samples. `rotation` > 1 makes every sample cycle through that many input sets.
  // ColdL2::flush writes twice the L2 before every sample, outside the timed region, and makes a
  // sample one pass over the input sets. Long launches get fewer warm-up launches and samples
  // (policy().max_case_s). Throws CudaError / GpuHang.
  [[nodiscard]] Timing time_launches(const Launch& launch, int rotation = 1, TimingMode mode = TimingMode::graph,
                                     ColdL2 cold_l2 = ColdL2::not_claimed);

 private:
  double elapsed_s(cudaEvent_t from, cudaEvent_t to);
  DeviceInfo device_;
  TimingPolicy policy_;
  Health health_;
  cudaStream_t stream_ = nullptr;
  void* cublas_library_ = nullptr;
  Cublas cublas_;
  decltype(&cublasDestroy_v2) cublas_destroy_ = nullptr;
  DeviceBuffer cublas_workspace_;
  std::unique_ptr<CublasLtLibrary> cublaslt_;
  std::unique_ptr<Nvml> nvml_;  // clocks between samples
  DeviceBuffer l2_flush_;       // twice the L2, allocated by the first case that flushes
};

// Collects results and prints one progress line per result on stderr.
class Recorder {
 public:
  // quiet: no progress lines (the ranks of an MPI run other than rank 0).
  Recorder(std::vector<BenchmarkResult>& results, std::size_t expected, bool quiet = false)
      : results_(results), expected_(expected), quiet_(quiet) {}
  void record(BenchmarkResult result);
  [[nodiscard]] std::size_t count() const { return done_; }

 private:
  std::vector<BenchmarkResult>& results_;
  std::size_t expected_;
  bool quiet_ = false;
  std::size_t done_ = 0;
};

// The protocol every case follows: `verify` runs the code once on poisoned outputs and checks
// the result against a host reference (returning what it checked, or throwing
// VerificationFailed); only then are launches timed, the L2 kept cold as the result's claim
// asks (cold_l2_method: its rotation, or a flush). Errors become dispositions: a mismatch, a
// CUDA error or a launcher's exception is `failed`, missing memory `not_run`; after a hang the
// GpuHang propagates.
[[nodiscard]] BenchmarkResult run_case(Context& ctx, BenchmarkResult result, const std::function<std::string()>& verify,
                                       const Launch& launch, int rotation = 1, TimingMode mode = TimingMode::graph);

// ||got - want|| / ||want|| over all elements: the check of outputs whose rounding grows with the
// length of their sums (attention, projections). Infinite when an element of `got` is not finite.
struct ErrorNorm {
  double error = 0;
  std::size_t nonfinite = 0;
};
[[nodiscard]] ErrorNorm relative_error(std::span<const float> got, std::span<const float> want);

// Downloads `count` elements of `format` (bf16, fp16 or fp8 e4m3) from element `offset` of a device
// buffer, as float; throws std::logic_error for another format.
[[nodiscard]] std::vector<float> download_values(Context& ctx, kernels::StorageFormat format,
                                                 const DeviceBuffer& buffer, std::size_t offset, std::size_t count);

// Runs body(begin, end) over [0, n) split across the host's cores.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t begin, std::int64_t end)>& body);

// Device detection (device.cpp): properties, versions, and clocks through NVML where present.
[[nodiscard]] DeviceInfo detect_device(int index);
// Current SM and memory clocks in MHz through NVML (nullopt where NVML is unavailable).
struct Clocks {
  std::optional<double> sm_mhz;
  std::optional<double> memory_mhz;
};
[[nodiscard]] Clocks current_clocks(const std::string& pci_bus_id);

}  // namespace roofline::bench::cuda
