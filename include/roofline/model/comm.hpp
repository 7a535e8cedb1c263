#pragma once

// Communication cost of the collectives that model parallelism needs: the alpha-beta model
// (a fixed latency per message step plus bytes over bandwidth). Bandwidths here are per GPU
// and per direction, in bytes per second.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// The three collectives `bench --suite collectives` measures and the model charges, sized as
// nccl-tests size them: `bytes` is the larger buffer of one rank -- all-reduce: the tensor every
// rank holds (input = output = bytes); all-gather: the gathered output (each rank contributes
// bytes / ranks); reduce-scatter: the input (each rank keeps bytes / ranks of the sums).
enum class Collective : std::uint8_t { all_reduce, all_gather, reduce_scatter };
inline constexpr std::array<std::string_view, 3> collective_names{"all_reduce", "all_gather", "reduce_scatter"};
[[nodiscard]] constexpr std::string_view name_of(Collective c) {
  return collective_names[static_cast<std::size_t>(c)];
}
[[nodiscard]] std::optional<Collective> collective_from_name(std::string_view name);

// What one rank sends over its link, per byte of `bytes`, in a ring (the bus-bandwidth factor of
// nccl-tests): all-reduce 2 (n - 1) / n, all-gather and reduce-scatter (n - 1) / n; 0 for n = 1.
[[nodiscard]] double bus_factor(Collective c, int ranks);
// Message steps of the ring, each paying the link latency once: 2 (n - 1) for all-reduce (a
// reduce-scatter then an all-gather), n - 1 for the others.
[[nodiscard]] int ring_steps(Collective c, int ranks);
// Algorithm bandwidth = bytes / time; bus bandwidth = algorithm bandwidth x bus_factor: what each
// link carried, comparable across rank counts and with the link's own figure.
[[nodiscard]] double algorithm_bandwidth(double bytes, double seconds);
[[nodiscard]] double bus_bandwidth(Collective c, int ranks, double bytes, double seconds);
// The ring's time: ring_steps x latency + bus_factor x bytes / link bandwidth.
[[nodiscard]] double ring_time(Collective c, double bytes, int ranks, const LinkSpec& link);

// One message from one GPU to the next (pipeline-parallel activations).
[[nodiscard]] double point_to_point_time(double bytes, const LinkSpec& link);

}  // namespace roofline
