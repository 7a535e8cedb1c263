// Device detection: the CUDA runtime's properties and versions, and the clocks through NVML
// (nvml_library.hpp), loaded at run time so that the binary still starts where no driver is installed.
#include <fmt/format.h>

#include <array>

#include "harness.hpp"
#include "nvml_library.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench::cuda {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attr, device), "cudaDeviceGetAttribute");
  return value;
}

}  // namespace

Clocks current_clocks(const std::string& pci_bus_id) {
  Nvml nvml(pci_bus_id);
  const GpuState state = nvml.state();
  return Clocks{state.sm_clock_mhz, state.memory_clock_mhz};
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
  Nvml nvml(info.pci_bus_id);
  const GpuState state = nvml.state();
  info.sm_clock_start_mhz = state.sm_clock_mhz;
  info.memory_clock_start_mhz = state.memory_clock_mhz;
  // The throttle rule's reference: NVML's default applications clock, the clock the driver runs
  // compute at unless someone set application clocks; where a GPU's default sits below its
  // maximum boost (some PCIe parts), 75% of the maximum would flag samples that ran exactly as
  // configured. Without NVML no sample clock is read, so no sample is judged either way.
  const Nvml::DefaultClock default_clock = nvml.default_sm_clock();
  info.sm_clock_default_mhz = default_clock.mhz;
  info.sm_clock_default_source = default_clock.source;
  return info;
}

}  // namespace roofline::bench::cuda
