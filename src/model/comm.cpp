#include "roofline/model/comm.hpp"

#include "roofline/hardware/hardware.hpp"

namespace roofline {

LinkSpec scale_up_link(const GpuSpec& gpu, double latency_s) {
  if (gpu.scale_up_bidir_gbps) return {gpu.scale_up_name, *gpu.scale_up_bidir_gbps / 2.0 * 1e9, latency_s};
  return {"PCIe (no scale-up link)", gpu.pcie_bidir_gbps / 2.0 * 1e9, latency_s};
}

std::optional<Collective> collective_from_name(std::string_view name) {
  for (std::size_t i = 0; i < collective_names.size(); ++i) {
    if (collective_names[i] == name) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

double bus_factor(Collective c, int ranks) {
  if (ranks <= 1) return 0.0;
  const auto n = static_cast<double>(ranks);
  // All-reduce = reduce-scatter + all-gather: each half sends (n - 1) chunks of bytes / n.
  return (c == Collective::all_reduce ? 2.0 : 1.0) * (n - 1.0) / n;
}

int ring_steps(Collective c, int ranks) {
  if (ranks <= 1) return 0;
  return (c == Collective::all_reduce ? 2 : 1) * (ranks - 1);
}

double algorithm_bandwidth(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds : 0.0;
}

double bus_bandwidth(Collective c, int ranks, double bytes, double seconds) {
  return algorithm_bandwidth(bytes, seconds) * bus_factor(c, ranks);
}

double ring_time(Collective c, double bytes, int ranks, const LinkSpec& link) {
  if (ranks <= 1) return 0.0;
  return ring_steps(c, ranks) * link.latency_s + bus_factor(c, ranks) * bytes / link.bandwidth_bytes_per_s;
}

double ring_allreduce_bytes_per_rank(double bytes, int ranks) {
  return bus_factor(Collective::all_reduce, ranks) * bytes;
}

double ring_allreduce_time(double bytes, int ranks, const LinkSpec& link) {
  return ring_time(Collective::all_reduce, bytes, ranks, link);
}

double ring_allgather_time(double total_bytes, int ranks, const LinkSpec& link) {
  return ring_time(Collective::all_gather, total_bytes, ranks, link);
}

double point_to_point_time(double bytes, const LinkSpec& link) {
  return link.latency_s + bytes / link.bandwidth_bytes_per_s;
}

}  // namespace roofline
