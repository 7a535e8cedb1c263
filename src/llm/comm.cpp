#include "roofline/comm.hpp"

#include "roofline/hardware.hpp"

namespace roofline {

LinkSpec scale_up_link(const GpuSpec& gpu, double latency_s) {
  if (gpu.scale_up_bidir_gbps) return {gpu.scale_up_name, *gpu.scale_up_bidir_gbps / 2.0 * 1e9, latency_s};
  return {"PCIe (no scale-up link)", gpu.pcie_bidir_gbps / 2.0 * 1e9, latency_s};
}

double ring_allreduce_bytes_per_rank(double bytes, int ranks) {
  if (ranks <= 1) return 0.0;
  const auto n = static_cast<double>(ranks);
  return 2.0 * (n - 1.0) / n * bytes;
}

double ring_allreduce_time(double bytes, int ranks, const LinkSpec& link) {
  if (ranks <= 1) return 0.0;
  const double steps = 2.0 * (ranks - 1);
  return steps * link.latency_s + ring_allreduce_bytes_per_rank(bytes, ranks) / link.bandwidth_bytes_per_s;
}

double ring_allgather_time(double total_bytes, int ranks, const LinkSpec& link) {
  if (ranks <= 1) return 0.0;
  const auto n = static_cast<double>(ranks);
  return (n - 1.0) * link.latency_s + (n - 1.0) / n * total_bytes / link.bandwidth_bytes_per_s;
}

double point_to_point_time(double bytes, const LinkSpec& link) {
  return link.latency_s + bytes / link.bandwidth_bytes_per_s;
}

}  // namespace roofline
