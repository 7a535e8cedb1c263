#include "harness.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "cublaslt_library.hpp"
#include "nvml_library.hpp"
#include "runner_support.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda {
namespace {

constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;
constexpr std::size_t allocation_margin_bytes = std::size_t{256} << 20;

// RAII for the events of one timing run.
class Events {
 public:
  explicit Events(std::size_t n) : events_(n, nullptr) {
    for (cudaEvent_t& e : events_) check(cudaEventCreate(&e), "cudaEventCreate");
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (cudaEvent_t e : events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  }
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

}  // namespace

void check(cudaError_t status, std::string_view what) {
  if (status != cudaSuccess) {
    throw CudaError(fmt::format("{}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)), status);
  }
}

void check(cublasStatus_t status, std::string_view what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(status)), cudaErrorUnknown);
  }
}

// ---- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes, const Health* health) : bytes_(bytes), health_(health) {
  check(cudaMalloc(&data_, std::max<std::size_t>(bytes, 1)), fmt::format("cudaMalloc of {} bytes", bytes));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)), health_(other.health_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    health_ = other.health_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

void DeviceBuffer::release() {
  // cudaFree waits for the device: after a hang it would never return.
  if (data_ != nullptr && (health_ == nullptr || !health_->hung)) cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
}

// ---- Context ---------------------------------------------------------------------------------

Context::Context(const DeviceInfo& device, const TimingPolicy& policy)
    : device_(device), policy_(policy), nvml_(std::make_unique<Nvml>(device.pci_bus_id)) {
  check(cudaSetDevice(device.index), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Context::~Context() {
  if (health_.hung) {  // anything below could wait on the stuck kernel
    static_cast<void>(cublaslt_.release());
    return;
  }
  if (cublas_.handle != nullptr && cublas_destroy_ != nullptr) cublas_destroy_(cublas_.handle);
  cublas_workspace_ = DeviceBuffer();
  l2_flush_ = DeviceBuffer();
  if (cublas_library_ != nullptr) dlclose(cublas_library_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

namespace {

template <typename F>
F cublas_symbol(void* library, const char* name) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) throw CudaError(fmt::format("cuBLAS: no symbol {}", name), cudaErrorUnknown);
  return reinterpret_cast<F>(symbol);
}

}  // namespace

const Cublas& Context::cublas() {
  if (cublas_.handle != nullptr) return cublas_;
  if (cublas_library_ == nullptr) {
    // The library of the toolkit the binary was built with: the loader's path first, then the
    // toolkit's own directory.
    const std::string soname = ROOFLINE_CUBLAS_SONAME;
    cublas_library_ = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (cublas_library_ == nullptr) {
      cublas_library_ = dlopen((std::string(ROOFLINE_CUDA_LIBRARY_DIR) + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (cublas_library_ == nullptr) {
      throw CudaError(fmt::format("cannot load {} (not on the loader's path nor in {}): {}", soname,
                                  ROOFLINE_CUDA_LIBRARY_DIR, dlerror()),
                      cudaErrorUnknown);
    }
  }
  const auto create = cublas_symbol<decltype(&cublasCreate_v2)>(cublas_library_, "cublasCreate_v2");
  const auto set_stream = cublas_symbol<kernels::CublasSetStream>(cublas_library_, "cublasSetStream_v2");
  const auto set_workspace = cublas_symbol<decltype(&cublasSetWorkspace_v2)>(cublas_library_, "cublasSetWorkspace_v2");
  const auto get_version = cublas_symbol<decltype(&cublasGetVersion_v2)>(cublas_library_, "cublasGetVersion_v2");
  cublas_destroy_ = cublas_symbol<decltype(&cublasDestroy_v2)>(cublas_library_, "cublasDestroy_v2");
  Cublas api;
  api.gemm_ex = cublas_symbol<kernels::CublasGemmEx>(cublas_library_, "cublasGemmEx");
  api.gemm_strided_batched_ex =
      cublas_symbol<kernels::CublasGemmStridedBatchedEx>(cublas_library_, "cublasGemmStridedBatchedEx");
  // Optional: absent before cuBLAS 12.5.
  api.gemm_grouped_batched_ex =
      reinterpret_cast<kernels::CublasGemmGroupedBatchedEx>(dlsym(cublas_library_, "cublasGemmGroupedBatchedEx"));
  api.set_stream = set_stream;
  check(create(&api.handle), "cublasCreate");
  cublas_.handle = api.handle;  // destroyed with the context even if the steps below fail
  check(set_stream(api.handle, stream_), "cublasSetStream");
  cublas_workspace_ = allocate(cublas_workspace_bytes);
  check(set_workspace(api.handle, cublas_workspace_.get(), cublas_workspace_bytes), "cublasSetWorkspace");
  check(get_version(api.handle, &api.version), "cublasGetVersion");
  cublas_ = api;
  return cublas_;
}

const kernels::BlasLtApi& Context::cublaslt() {
  if (!cublaslt_) cublaslt_ = std::make_unique<CublasLtLibrary>(allocate(cublas_workspace_bytes));
  return cublaslt_->api();
}

DeviceBuffer Context::allocate(std::size_t bytes) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (bytes + allocation_margin_bytes > free_bytes) {
    throw NotEnoughMemory(fmt::format("needs {:.2f} GiB of device memory, {:.2f} GiB free",
                                      static_cast<double>(bytes) / (1 << 30),
                                      static_cast<double>(free_bytes) / (1 << 30)));
  }
  return DeviceBuffer(bytes, &health_);
}

DeviceBuffer Context::allocate_zeroed(std::size_t bytes) {
  DeviceBuffer buffer = allocate(bytes);
  if (bytes > 0) check(cudaMemsetAsync(buffer.get(), 0, bytes, stream_), "cudaMemsetAsync");
  return buffer;
}

void Context::wait(std::string_view what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(policy_.timeout_s);
  while (true) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) check(status, what);
    if (std::chrono::steady_clock::now() > deadline) {
      health_.hung = true;
      throw GpuHang(fmt::format("{}: the GPU did not finish within {:.0f} s", what, policy_.timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Context::upload(const DeviceBuffer& to, const void* from, std::size_t bytes) {
  check(cudaMemcpyAsync(to.get(), from, bytes, cudaMemcpyHostToDevice, stream_), "upload");
  wait("upload");
}

DeviceBuffer Context::upload_scalars(std::span<const float> values) {
  std::vector<float> slots(values.size() * scalar_slot_floats, 0.0F);
  for (std::size_t i = 0; i < values.size(); ++i) slots[i * scalar_slot_floats] = values[i];
  DeviceBuffer buffer = allocate(slots.size() * sizeof(float));
  upload(buffer, slots.data(), slots.size() * sizeof(float));
  return buffer;
}

void Context::download(void* to, const DeviceBuffer& from, std::size_t bytes) {
  wait("before download");  // a synchronous copy behind a stuck kernel would never return
  check(cudaMemcpyAsync(to, from.get(), bytes, cudaMemcpyDeviceToHost, stream_), "download");
  wait("download");
}

void Context::poison(const DeviceBuffer& buffer) {
  check(cudaMemsetAsync(buffer.get(), 0xFF, buffer.bytes(), stream_), "poison");
}

void Context::recover() {
  if (health_.hung) return;
  (void)cudaGetLastError();  // clears a launch error that does not corrupt the context
  try {
    wait("recovery");
  } catch (const CudaError&) {
    health_.lost = true;
    return;
  }
  // A sticky error (an illegal address) is returned again by every later call.
  if (cudaStreamSynchronize(stream_) != cudaSuccess || cudaGetLastError() != cudaSuccess) health_.lost = true;
}

double Context::elapsed_s(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

Timing Context::time_launches(const Launch& launch, int rotation, TimingMode mode, ColdL2 cold_l2) {
  rotation = std::max(rotation, 1);
  const bool flush = cold_l2 == ColdL2::flush;
  if (flush && l2_flush_.get() == nullptr) {
    l2_flush_ = allocate(2 * static_cast<std::size_t>(std::max<std::int64_t>(device_.l2_bytes, 1)));
  }
  Events probe(2);
  // One launch to size the warm-up and the batches.
  check(cudaEventRecord(probe[0], stream_), "cudaEventRecord");
  check(launch(stream_, 0), "first timed launch");
  check(cudaEventRecord(probe[1], stream_), "cudaEventRecord");
  wait("first timed launch");
  const double first = std::max(elapsed_s(probe[0], probe[1]), 1e-7);

  const int warmup = warmup_launches(policy_, first);
  check(cudaEventRecord(probe[0], stream_), "cudaEventRecord");
  for (int i = 0; i < warmup; ++i) check(launch(stream_, (i + 1) % rotation), "warm-up launch");
  check(cudaEventRecord(probe[1], stream_), "cudaEventRecord");
  wait("warm-up");
  const double estimate = std::max(elapsed_s(probe[0], probe[1]) / warmup, 1e-7);

  const SamplePlan plan = sample_plan(policy_, estimate, rotation, cold_l2);
  const int batch = plan.batch;

  // One sample = `batch` launches, captured once as a graph so that launch gaps shrink.
  GraphExec graph;
  bool use_graph =
      mode == TimingMode::graph && cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (use_graph) {
    bool captured = true;
    try {
      for (int i = 0; i < batch && captured; ++i) captured = launch(stream_, i % rotation) == cudaSuccess;
    } catch (const std::exception&) {
      captured = false;  // the capture must still be ended; the direct launches below report the error
    }
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph.graph);
    use_graph = captured && ended == cudaSuccess && cudaGraphInstantiate(&graph.exec, graph.graph, 0) == cudaSuccess;
    (void)cudaGetLastError();  // a failed capture leaves an error that the fallback must not see
  }
  const auto run_sample = [&] {
    if (use_graph) {
      check(cudaGraphLaunch(graph.exec, stream_), "cudaGraphLaunch");
    } else {
      for (int i = 0; i < batch; ++i) check(launch(stream_, i % rotation), "timed launch");
    }
  };
  run_sample();  // the graph's first replay uploads it
  wait("graph warm-up");

  // Each sample is waited for, so that NVML is read between samples and never inside one; the
  // flush (a memset: it allocates every line it writes in L2, evicting the inputs) sits before
  // the start event.
  Events marks(2);
  const auto take_sample = [&]() -> double {
    if (flush) check(cudaMemsetAsync(l2_flush_.get(), 0, l2_flush_.bytes(), stream_), "L2 flush");
    check(cudaEventRecord(marks[0], stream_), "cudaEventRecord");
    run_sample();
    check(cudaEventRecord(marks[1], stream_), "cudaEventRecord");
    wait("timed sample");
    return elapsed_s(marks[0], marks[1]) / batch;
  };
  Timing timing = take_samples(policy_, plan, device_.sm_clock_default_mhz, *nvml_, take_sample);
  timing.launches_per_sample = batch;
  timing.graph = use_graph;
  timing.cold_l2 = cold_l2;
  return timing;
}

// ---- cases ---------------------------------------------------------------------------------

void Recorder::record(BenchmarkResult result) {
  ++done_;
  if (quiet_) {
    results_.push_back(std::move(result));
    return;
  }
  std::string figures;
  if (const auto flops = result.flop_rate(); flops && result.ceiling_metric == Metric::flop_rate) {
    figures = fmt::format("{:>10.2f} us {:>8.1f} TFLOP/s", result.timing->seconds.median * 1e6, *flops * 1e-12);
  } else if (const auto bw = result.bandwidth()) {
    figures = fmt::format("{:>10.2f} us {:>8.3f} TB/s", result.timing->seconds.median * 1e6, *bw * 1e-12);
  }
  const std::size_t width = fmt::formatted_size("{}", expected_);
  if (result.timing && result.timing->sm_clock_mhz) {
    figures += fmt::format(" {:>5.0f} MHz{}", *result.timing->sm_clock_mhz, result.timing->throttled ? "*" : "");
  }
  fmt::print(stderr, "[{:>{}}/{}] {:<44} {:<13} {}{}\n", done_, width, expected_, result.id,
             name_of(result.disposition), figures,
             result.disposition == Disposition::passed ? "" : "  " + result.detail);
  std::fflush(stderr);
  results_.push_back(std::move(result));
}

BenchmarkResult run_case(Context& ctx, BenchmarkResult result, const std::function<std::string()>& verify,
                         const Launch& launch, int rotation, TimingMode mode) {
  try {
    result.detail = verify();
    if (ctx.policy().check_only) {
      for (int i = 1; i < rotation; ++i) check(launch(ctx.stream(), i), "rotated launch");
      ctx.wait("rotated launches");
      result.detail += "; checked only (--check-only), not timed";
    } else {
      // What a launch streams through L2: the sectors it moves where the suite models them (a
      // strided read moves whole sectors for the words it uses), else its model bytes.
      const double through_l2 = result.sectors ? result.sectors->moved_bytes() : result.cost.bytes();
      const ColdL2 cold_l2 = cold_l2_method(result.claims_hbm, through_l2, rotation, ctx.device().l2_bytes);
      result.timing = ctx.time_launches(launch, rotation, mode, cold_l2);
      if (const std::string note = throttle_note(*result.timing, ctx.policy(), ctx.device().sm_clock_default_mhz);
          !note.empty()) {
        result.detail += "; " + note;
      }
    }
    result.disposition = Disposition::passed;
  } catch (const GpuHang&) {
    throw;
  } catch (const VerificationFailed& e) {
    result.disposition = Disposition::failed;
    result.detail = e.what();
    result.timing.reset();
  } catch (const NotEnoughMemory& e) {
    result.disposition = Disposition::not_run;
    result.detail = e.what();
    result.timing.reset();
  } catch (const std::exception& e) {
    // A CUDA error, or a kernel launcher's KernelError (a shape it refuses, a failed launch).
    result.disposition = Disposition::failed;
    result.detail = e.what();
    result.timing.reset();
    ctx.recover();
  }
  return result;
}

// ---- host parallelism -------------------------------------------------------------------------

ErrorNorm relative_error(std::span<const float> got, std::span<const float> want) {
  ErrorNorm e;
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++e.nonfinite;
      continue;
    }
    diff2 += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref2 += static_cast<double>(want[i]) * want[i];
  }
  e.error = e.nonfinite > 0 ? INFINITY : std::sqrt(diff2 / std::max(ref2, 1e-300));
  return e;
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (n <= 0) return;
  const std::int64_t cores = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::int64_t workers = std::min<std::int64_t>(cores, (n + 65535) / 65536);
  if (workers <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  for (std::int64_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      try {
        body(n * w / workers, n * (w + 1) / workers);
      } catch (...) {
        errors[static_cast<std::size_t>(w)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Downloads `count` elements (16-bit, or e4m3) from element `offset` of a device buffer, as float.
std::vector<float> download_values(Context& ctx, kernels::StorageFormat format, const DeviceBuffer& buffer,
                                   std::size_t offset, std::size_t count) {
  const std::size_t bytes = as_size(kernels::bytes_of(format));
  std::vector<std::uint8_t> raw(count * bytes);
  ctx.wait("before download");
  check(cudaMemcpyAsync(raw.data(), buffer.as<std::uint8_t>() + offset * bytes, count * bytes, cudaMemcpyDeviceToHost,
                        ctx.stream()),
        "download");
  ctx.wait("download");
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (format == kernels::StorageFormat::fp8_e4m3) {
      values[i] = static_cast<float>(e4m3_value(raw[i]));
    } else {
      std::uint16_t bits = 0;
      std::memcpy(&bits, raw.data() + 2 * i, 2);
      values[i] = half16_to_float(format, bits);
    }
  }
  return values;
}

}  // namespace roofline::bench::cuda
