// The model's side of a measured run: the GPU file it was measured on, and each benchmark's basis
// rebuilt, by the suite that recorded it, from the parameters the run recorded.
#include <fmt/format.h>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"
#include "roofline/validate/validate.hpp"

namespace roofline {

BasisOrReason benchmark_basis(const Measurement& m) {
  if (m.suite.empty()) return NoBasis{fmt::format("group '{}' has no prediction in this build", m.group), false};
  const bench::SuiteInfo& suite = bench::find_suite(m.suite);
  return suite.basis({m.group, m.id, m.kernel, m.parameters, m.recorded_bytes, m.where});
}

const GpuSpec& gpu_of_runs(std::span<const MeasuredRun> runs, const HardwareRegistry& registry,
                           const std::optional<std::string>& gpu_flag) {
  if (runs.empty()) throw InputError("no measured run given");
  for (const MeasuredRun& run : runs) {
    if (run.device_name != runs.front().device_name) {
      throw InputError(fmt::format("{} ran on '{}' but {} on '{}': give runs of one GPU", runs.front().file,
                                   runs.front().device_name, run.file, run.device_name));
    }
  }
  if (gpu_flag) return registry.find(*gpu_flag);
  const GpuSpec* found = nullptr;
  for (const MeasuredRun& run : runs) {
    const GpuSpec* spec = nullptr;
    if (run.hardware_id) {
      spec = &registry.find(*run.hardware_id);
    } else {
      const HardwareMatch match = match_hardware(run.device_name, registry);
      if (match.spec == nullptr) throw InputError(fmt::format("{}: {}", run.file, match.detail));
      spec = match.spec;
    }
    if (found != nullptr && found != spec) {
      throw InputError(fmt::format("{} was matched to {} but {} to {}: name the GPU with --gpu", runs.front().file,
                                   found->id, run.file, spec->id));
    }
    found = spec;
  }
  return *found;
}

}  // namespace roofline
