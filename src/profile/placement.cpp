#include "roofline/profile/placement.hpp"

#include <fmt/format.h>

#include <map>

namespace roofline::ncu {

Placement place(const Kernel& k, const Roofs& roofs) {
  Placement p;
  p.kernel = &k;
  p.bandwidth = roofs.bandwidth;
  // The pipe that did most of the floating-point work bounds the kernel's math.
  double most = 0;
  const auto consider = [&](double flops, std::string name, std::optional<PeakClass> peak) {
    if (flops > most) {
      most = flops;
      p.pipe = std::move(name);
      p.peak_class = peak;
    }
  };
  consider(k.fp32_flops, "fp32", PeakClass::fp32);
  consider(k.fp64_flops, "fp64", PeakClass::fp64);
  consider(k.fp16_flops, "fp16", std::nullopt);
  for (const TensorOps& t : k.tensor) {
    if (t.floating) consider(t.ops, fmt::format("tensor {}", t.source), t.peak);
  }
  if (most == 0) p.pipe = "none";
  if (p.peak_class) p.peak = roofs.peak(*p.peak_class);
  if (p.pipe == "fp16") p.note = "the hardware file states no vector fp16 peak: memory roof only";
  if (p.peak_class && !p.peak)
    p.note = fmt::format("{} states no {} peak: memory roof only", roofs.gpu_id, name_of(*p.peak_class));

  const double flops = k.flops();
  const double seconds = k.duration_s;
  if (flops > 0 && k.dram_bytes && *k.dram_bytes > 0) {
    p.intensity = flops / *k.dram_bytes;
    if (p.peak) {
      const Attainable a = attainable(*p.peak, p.bandwidth, *p.intensity);
      p.bound = a.bound;
      p.attainable = a.flops;
    } else {
      p.bound = Bound::memory;
      p.attainable = *p.intensity * p.bandwidth;
    }
    p.roof_fraction = flops / seconds / *p.attainable;
  } else if (flops > 0 && p.peak) {
    // Nothing from DRAM: only the compute roof applies.
    p.bound = Bound::compute;
    p.attainable = *p.peak;
    p.roof_fraction = flops / seconds / *p.peak;
  } else if (k.dram_bytes) {
    // No FLOPs: the memory roof is the whole roof.
    p.bound = Bound::memory;
    p.roof_fraction = *k.dram_bytes / seconds / p.bandwidth;
  }
  return p;
}

std::vector<Placement> place_all(const std::vector<Kernel>& kernels, const Roofs& roofs) {
  std::vector<Placement> placed;
  std::map<std::string, int> uses;
  for (const Kernel& k : kernels) ++uses[k.short_name];
  for (const Kernel& k : kernels) {
    Placement p = place(k, roofs);
    p.label = uses[k.short_name] > 1 ? fmt::format("{} #{}", k.short_name, k.id) : k.short_name;
    placed.push_back(std::move(p));
  }
  return placed;
}

}  // namespace roofline::ncu
