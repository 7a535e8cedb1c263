#pragma once

// A profiled kernel placed on one GPU's roofline: the pipe that did most of its floating-point
// work picks the compute roof, its DRAM bytes the intensity, and the roof it reached is the
// achieved rate over min(peak, intensity x bandwidth). docs/profile.md derives it.

#include <optional>
#include <string>
#include <vector>

#include "roofline/basis/basis.hpp"
#include "roofline/core/roofline.hpp"
#include "roofline/profile/ncu.hpp"

namespace roofline::ncu {

struct Placement {
  const Kernel* kernel = nullptr;
  std::string pipe;  // "tensor bf16_dst_fp32", "fp32", "fp64", "fp16", "none"
  std::optional<PeakClass> peak_class;
  std::optional<double> peak;       // FLOP/s; unset where the roofs state none for the pipe
  double bandwidth = 0;             // B/s
  std::optional<double> intensity;  // FLOPs per DRAM byte
  std::optional<Bound> bound;
  std::optional<double> attainable;     // FLOP/s
  std::optional<double> roof_fraction;  // achieved / attainable (bandwidth for a kernel with no FLOPs)
  std::string label;                    // unique short name for a chart
  std::string note;                     // why only the memory roof applies, where it does
};

// `kernel` must outlive the placement (it points to it).
[[nodiscard]] Placement place(const Kernel& kernel, const Roofs& roofs);
// Every kernel, each labelled by its short name, with its ID where the name repeats.
[[nodiscard]] std::vector<Placement> place_all(const std::vector<Kernel>& kernels, const Roofs& roofs);

}  // namespace roofline::ncu
