#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "roofline/bench/compute_suite.hpp"

namespace roofline::bench::cuda {

struct ComputeSelection {
  std::vector<const compute::PeakCase*> peaks;
  std::vector<const compute::GemmCase*> gemms;
  std::vector<const compute::AttentionCase*> attention;
  std::vector<const compute::GroupedGemmCase*> grouped;
  [[nodiscard]] std::size_t size() const { return peaks.size() + gemms.size() + attention.size() + grouped.size(); }
};

// The probe's FLOPs and bytes of one launch (kernels/peak.hpp's configuration for this device).
[[nodiscard]] OpCost peak_cost(compute::PeakImpl impl, int sms, bool quick);

// Runs the selected cases of the compute suite (peaks, GEMMs, grouped GEMMs, attention), recording one
// result per case.
void run_compute_suite(Context& ctx, const ComputeSelection& selection, bool quick, std::uint64_t seed,
                       Recorder& recorder, std::vector<std::string>& notes);

}  // namespace roofline::bench::cuda
