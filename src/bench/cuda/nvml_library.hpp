#pragma once

// NVML, the driver's management library (libnvidia-ml.so.1), loaded with dlopen as cuBLAS and
// NCCL are: clocks, power and throttle reasons of one device, read between samples. Its few
// entry points are declared by hand (nvml.h is not part of every toolkit install); their C ABI
// is stable across driver versions. A missing library, device or entry point, or a failed call,
// leaves that reading absent: never a number NVML did not give.

#include <cstdint>
#include <optional>
#include <string>

#include "roofline/bench/bench.hpp"

namespace roofline::bench::cuda {

class Nvml final : public GpuMonitor {
 public:
  // The device with this PCI bus id (as cudaDeviceGetPCIBusId writes it). Never throws.
  explicit Nvml(const std::string& pci_bus_id);
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml() override;

  [[nodiscard]] GpuState state() override;
  [[nodiscard]] GpuState sample_state() override;

  // The SM clock the throttle rule compares with: NVML's default applications clock (what the
  // driver runs compute at when nobody set application clocks), else its maximum SM clock.
  struct DefaultClock {
    std::optional<double> mhz;
    std::string source;
  };
  [[nodiscard]] DefaultClock default_sm_clock() const;

 private:
  using Device = struct NvmlDeviceOpaque*;
  using ClockQuery = int (*)(Device, int, unsigned int*);
  using UnsignedQuery = int (*)(Device, unsigned int*);
  using ReasonsQuery = int (*)(Device, unsigned long long*);  // NOLINT(google-runtime-int): NVML's type

  [[nodiscard]] std::optional<double> clock_mhz(ClockQuery query, int clock) const;
  [[nodiscard]] std::optional<std::uint64_t> reasons() const;

  void* library_ = nullptr;
  int (*shutdown_)() = nullptr;
  Device device_ = nullptr;  // null: nothing can be read
  ClockQuery clock_info_ = nullptr;
  ClockQuery max_clock_info_ = nullptr;
  ClockQuery default_applications_clock_ = nullptr;
  UnsignedQuery power_usage_ = nullptr;
  ReasonsQuery clocks_event_reasons_ = nullptr;
};

}  // namespace roofline::bench::cuda
