// Device detection: the CUDA runtime's properties and versions, and the current clocks through
// NVML, loaded at run time so that the binary still starts where no driver is installed.
#include <dlfcn.h>
#include <fmt/format.h>

#include <array>

#include "harness.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench::cuda {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attr, device), "cudaDeviceGetAttribute");
  return value;
}

// The few NVML entry points used here, declared by hand (nvml.h is not part of every toolkit
// install); their C ABI is stable across driver versions.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlByPciBusId = int (*)(const char*, NvmlDevice*);
using NvmlClockInfo = int (*)(NvmlDevice, int, unsigned int*);
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;

class NvmlLibrary {
 public:
  NvmlLibrary() : handle_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {}
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  template <typename F>
  F symbol(const char* name) const {
    return handle_ == nullptr ? nullptr : reinterpret_cast<F>(dlsym(handle_, name));
  }

 private:
  void* handle_;
};

}  // namespace

Clocks current_clocks(const std::string& pci_bus_id) {
  Clocks clocks;
  const NvmlLibrary nvml;
  const auto init = nvml.symbol<NvmlInit>("nvmlInit_v2");
  const auto shutdown = nvml.symbol<NvmlShutdown>("nvmlShutdown");
  const auto by_pci = nvml.symbol<NvmlByPciBusId>("nvmlDeviceGetHandleByPciBusId_v2");
  const auto clock_info = nvml.symbol<NvmlClockInfo>("nvmlDeviceGetClockInfo");
  if (init == nullptr || shutdown == nullptr || by_pci == nullptr || clock_info == nullptr || init() != 0) {
    return clocks;
  }
  NvmlDevice device = nullptr;
  if (by_pci(pci_bus_id.c_str(), &device) == 0) {
    unsigned int mhz = 0;
    if (clock_info(device, nvml_clock_sm, &mhz) == 0) clocks.sm_mhz = mhz;
    if (clock_info(device, nvml_clock_mem, &mhz) == 0) clocks.memory_mhz = mhz;
  }
  shutdown();
  return clocks;
}

DeviceInfo detect_device(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || (status == cudaSuccess && count == 0)) {
    throw NoDeviceError("no CUDA device found: benchmarks need an NVIDIA GPU");
  }
  if (status == cudaErrorInsufficientDriver) {
    throw NoDeviceError(fmt::format(
        "no usable NVIDIA driver (cudaGetDeviceCount: {}): benchmarks need a GPU with a driver for CUDA {}.{}",
        cudaGetErrorString(status), CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10));
  }
  if (status != cudaSuccess) {
    throw NoDeviceError(fmt::format("cannot use CUDA: cudaGetDeviceCount: {} ({})", cudaGetErrorString(status),
                                    cudaGetErrorName(status)));
  }
  if (index < 0 || index >= count) {
    throw InputError(fmt::format("--device: {} is not a device index (this machine has {} CUDA device{})", index, count,
                                 count == 1 ? "" : "s"));
  }
  check(cudaSetDevice(index), "cudaSetDevice");
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, index), "cudaGetDeviceProperties");

  DeviceInfo info;
  info.index = index;
  info.name = props.name;
  std::array<char, 64> bus{};
  if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), index) == cudaSuccess)
    info.pci_bus_id = bus.data();
  info.compute_major = props.major;
  info.compute_minor = props.minor;
  info.sms = props.multiProcessorCount;
  info.sm_clock_max_mhz = attribute(cudaDevAttrClockRate, index) / 1000.0;
  info.memory_clock_max_mhz = attribute(cudaDevAttrMemoryClockRate, index) / 1000.0;
  info.memory_bus_bits = props.memoryBusWidth;
  info.l2_bytes = props.l2CacheSize;
  info.memory_bytes = static_cast<std::int64_t>(props.totalGlobalMem);
  info.smem_per_sm_bytes = static_cast<std::int64_t>(props.sharedMemPerMultiprocessor);
  info.ecc = props.ECCEnabled != 0;
  check(cudaDriverGetVersion(&info.driver_version), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&info.runtime_version), "cudaRuntimeGetVersion");
  const Clocks clocks = current_clocks(info.pci_bus_id);
  info.sm_clock_start_mhz = clocks.sm_mhz;
  info.memory_clock_start_mhz = clocks.memory_mhz;
  return info;
}

}  // namespace roofline::bench::cuda
