#pragma once

// What the compute suite's runners share: compute_runner.cpp runs the probes and deals the GEMM and
// attention problems out to gemm_runner.cpp and attention_runner.cpp. Here: the seeds of a run's
// input streams, the check tolerance of a format, reading 16-bit outputs back, and recording a case
// that was not timed.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "kernels/storage_format.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "runner_support.hpp"

namespace roofline::bench::cuda::compute_family {

// The normwise error ||out - ref|| / ||ref|| a result in `format` may have against its reference.
[[nodiscard]] double tolerance_for(kernels::StorageFormat format);

// Seeds of the input streams of one run.
[[nodiscard]] std::uint64_t seed_of(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t sub);

// Downloads `count` 16-bit elements of `format` from element `offset` of a device buffer, as float.
[[nodiscard]] std::vector<float> download_half(Context& ctx, kernels::StorageFormat format, const DeviceBuffer& buffer,
                                               std::size_t offset, std::size_t count);

void record_not(Recorder& recorder, BenchmarkResult result, Disposition disposition, std::string detail);

// The cases of one GEMM problem (dtype, m, n, k), in table order.
void run_gemm_problem(Context& ctx, std::span<const compute::GemmCase* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder);
// The cases of one attention problem (dtype and shape), in table order.
void run_attention_problem(Context& ctx, std::span<const compute::AttentionCase* const> cases, bool quick,
                           std::uint64_t seed, Recorder& recorder);

}  // namespace roofline::bench::cuda::compute_family
