#pragma once

// Communication cost of the collectives that model parallelism needs: the alpha-beta model
// (a fixed latency per message step plus bytes over bandwidth). Bandwidths here are per GPU
// and per direction, in bytes per second.

#include <optional>
#include <string>

namespace roofline {

struct GpuSpec;

struct LinkSpec {
  std::string name;
  double bandwidth_bytes_per_s = 0;  // per GPU, one direction
  double latency_s = 0;              // per message step
};

// The scale-up link of a GPU from its hardware file: half the stated bidirectional figure
// (NVLink, Infinity Fabric), or the PCIe link where the GPU has none.
[[nodiscard]] LinkSpec scale_up_link(const GpuSpec& gpu, double latency_s);

// Ring all-reduce of `bytes` (the size of the tensor every rank holds) over `ranks` GPUs: a
// reduce-scatter and an all-gather of ranks - 1 steps each, every step sending bytes / ranks,
// so each rank sends 2 (ranks - 1) / ranks x bytes (NCCL's "bus bandwidth" factor).
[[nodiscard]] double ring_allreduce_bytes_per_rank(double bytes, int ranks);
[[nodiscard]] double ring_allreduce_time(double bytes, int ranks, const LinkSpec& link);

// Ring all-gather: every rank ends with all `total_bytes`, receiving (ranks - 1) / ranks of them
// in ranks - 1 steps.
[[nodiscard]] double ring_allgather_time(double total_bytes, int ranks, const LinkSpec& link);

// One message from one GPU to the next (pipeline-parallel activations).
[[nodiscard]] double point_to_point_time(double bytes, const LinkSpec& link);

}  // namespace roofline
