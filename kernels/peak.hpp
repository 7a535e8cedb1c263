#pragma once

// Compute-ceiling probes: kernels that do nothing but arithmetic on registers (FFMA) or the tensor
// cores (mma.sync, wgmma), so that the roofline's compute roof is measured, not only quoted.
// Each probe's result is exactly predictable on the host (values are small dyadic numbers, or the
// same FMA chain replayed with std::fmaf), so every run is verified, not merely timed.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compute_types.hpp"

namespace roofline::kernels {

enum class PeakProbe {
  fma_fp32,       // 8 independent FFMA chains per thread, full occupancy
  mma_sync_bf16,  // 8 independent mma.sync m16n8k16 accumulators per warp, bf16 in, fp32 accumulate
  wgmma_bf16,     // two warpgroups per SM issuing wgmma m64n256k16 from shared memory (sm_90a)
};

inline constexpr PeakProbe all_peak_probes[] = {PeakProbe::fma_fp32, PeakProbe::mma_sync_bf16, PeakProbe::wgmma_bf16};

const char* peak_probe_name(PeakProbe probe);
bool peak_probe_supported(PeakProbe probe, int device);

struct PeakProbeConfig {
  int blocks = 0;
  int threads = 0;
  int iterations = 0;
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  double flops = 0;  // floating-point operations of one launch (an FMA counts 2)
};
// A grid that fills `sm_count` multiprocessors; `quick` shortens the loop ~16x.
PeakProbeConfig peak_probe_config(PeakProbe probe, int sm_count, bool quick);

// Random nonzero input for the probe (host bytes, input_bytes long).
std::vector<unsigned char> peak_probe_input(PeakProbe probe, const PeakProbeConfig& config, std::uint64_t seed);

void peak_probe_launch(PeakProbe probe, const PeakProbeConfig& config, const void* device_input, void* device_output,
                       Stream stream = nullptr);

// Largest |output - expected| over the whole output (host buffers); 0 for a correct run.
double peak_probe_max_error(PeakProbe probe, const PeakProbeConfig& config, const void* host_input,
                            const void* host_output);

}  // namespace roofline::kernels
