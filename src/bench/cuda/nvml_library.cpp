// NVML loaded at run time: the device's clocks, power and clock-event reasons.
#include "nvml_library.hpp"

#include <dlfcn.h>

namespace roofline::bench::cuda {
namespace {

// nvmlClockType_t (nvml.h).
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;
constexpr int nvml_success = 0;

template <typename F>
F symbol(void* library, const char* name) {
  return library == nullptr ? nullptr : reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) : library_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
  const auto init = symbol<int (*)()>(library_, "nvmlInit_v2");
  const auto by_pci = symbol<int (*)(const char*, Device*)>(library_, "nvmlDeviceGetHandleByPciBusId_v2");
  shutdown_ = symbol<int (*)()>(library_, "nvmlShutdown");
  if (init == nullptr || by_pci == nullptr || shutdown_ == nullptr || init() != nvml_success) {
    shutdown_ = nullptr;
    return;
  }
  if (by_pci(pci_bus_id.c_str(), &device_) != nvml_success) device_ = nullptr;
  clock_info_ = symbol<ClockQuery>(library_, "nvmlDeviceGetClockInfo");
  max_clock_info_ = symbol<ClockQuery>(library_, "nvmlDeviceGetMaxClockInfo");
  default_applications_clock_ = symbol<ClockQuery>(library_, "nvmlDeviceGetDefaultApplicationsClock");
  power_usage_ = symbol<UnsignedQuery>(library_, "nvmlDeviceGetPowerUsage");
  // The call was renamed in driver 535 (clock "events": not every reason throttles); older
  // drivers have only the first name.
  clocks_event_reasons_ = symbol<ReasonsQuery>(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (clocks_event_reasons_ == nullptr) {
    clocks_event_reasons_ = symbol<ReasonsQuery>(library_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
}

Nvml::~Nvml() {
  if (shutdown_ != nullptr) shutdown_();
  if (library_ != nullptr) dlclose(library_);
}

std::optional<double> Nvml::clock_mhz(ClockQuery query, int clock) const {
  unsigned int mhz = 0;
  if (device_ == nullptr || query == nullptr || query(device_, clock, &mhz) != nvml_success) return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> Nvml::reasons() const {
  unsigned long long mask = 0;  // NOLINT(google-runtime-int): NVML's type
  if (device_ == nullptr || clocks_event_reasons_ == nullptr || clocks_event_reasons_(device_, &mask) != nvml_success) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(mask);
}

GpuState Nvml::sample_state() {
  GpuState s;
  s.sm_clock_mhz = clock_mhz(clock_info_, nvml_clock_sm);
  s.throttle_reasons = reasons();
  return s;
}

GpuState Nvml::state() {
  GpuState s = sample_state();
  s.memory_clock_mhz = clock_mhz(clock_info_, nvml_clock_mem);
  unsigned int milliwatts = 0;
  if (device_ != nullptr && power_usage_ != nullptr && power_usage_(device_, &milliwatts) == nvml_success) {
    s.power_w = milliwatts * 1e-3;
  }
  return s;
}

Nvml::DefaultClock Nvml::default_sm_clock() const {
  if (const auto mhz = clock_mhz(default_applications_clock_, nvml_clock_sm); mhz && *mhz > 0) {
    return {mhz, "nvml default applications clock"};
  }
  if (const auto mhz = clock_mhz(max_clock_info_, nvml_clock_sm); mhz && *mhz > 0) return {mhz, "nvml max clock"};
  return {};
}

}  // namespace roofline::bench::cuda
