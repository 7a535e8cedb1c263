#pragma once

// What the compute suite's runners share: compute_runner.cpp runs the probes and deals the GEMM and
// attention problems out to gemm_runner.cpp and attention_runner.cpp. Here: the seeds of a run's
// input streams, the check tolerance of a format, reading 16-bit outputs back, and recording a case
// that was not timed.

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness.hpp"
#include "kernels/storage_format.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "runner_support.hpp"

namespace roofline::bench::cuda::compute_family {

// The normwise error ||out - ref|| / ||ref|| a result in `format` may have against its reference.
[[nodiscard]] double tolerance_for(kernels::StorageFormat format);

// The check of an FP8 GEMM (plain or grouped). The check operands (kernels::fill_fp8_check_operand)
// accumulate exactly in the tensor cores, so the one error left is bf16's rounding of C (at most
// 2^-9 relative per element), as for a bf16 GEMM. A wrong tile, a lost k stage or a dropped scale
// is off by far more (one lost 128-wide stage of k = 28672: about 7%; a dropped scale: a third or
// more with the scales below).
inline constexpr double fp8_gemm_tolerance = 1e-2;
// The check of FP8 flash attention against float64 attention of the same (dequantised) inputs. The
// kernel rounds the probabilities to e4m3 (3 mantissa bits: a relative error up to 2^-4, about 3.6%
// rms) before P V; with zero-mean V, O is itself a sum of terms of random sign, so that error carries
// over to ||O - ref|| / ||ref|| nearly whole: about 0.036 expected, plus bf16's rounding of O. A
// mismatched key order of P and V^T, or a dropped descale, is off by 0.5 or more.
inline constexpr double fp8_attention_tolerance = 8e-2;
// The per-tensor scales of the inputs: far from 1, so that a kernel that drops or misapplies one
// fails the check; their product 1.5 keeps the exact sums exact.
inline constexpr std::array<float, 2> fp8_scales{0.5F, 3.0F};  // a_scale, b_scale
// The grouped FP8 GEMM's weight scale of expert e (one per expert, as MoE engines keep them):
// 0.5 + 0.25 ((5 e) mod 11), from 0.5 to 3, so that neighbouring experts' scales differ by 1.25 or
// more (a kernel that applies one expert's scale to another's tile, or one scale to all, is off by
// 40% or more on those rows); multiples of 1/4, whose products with the exact sums stay exact.
[[nodiscard]] constexpr float fp8_expert_scale(int expert) {
  return 0.5F + 0.25F * static_cast<float>((5 * expert) % 11);
}

// Seeds of the input streams of one run.
[[nodiscard]] std::uint64_t seed_of(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t sub);

void record_not(Recorder& recorder, BenchmarkResult result, Disposition disposition, std::string detail);

// A library's whole output as the reference of the project's kernels: `run` writes it, `sampled_error`
// measures it against the host samples, and it is used only within `tolerance`. A library that
// cannot be loaded or called is not used either, and `problem` says why; the library's own cases
// are then recorded as failed with that reason. A hang is not survivable and propagates.
struct CheckedReference {
  bool callable = false;        // the library ran
  std::optional<double> error;  // set when the reference is used: its error against the samples
  std::string problem;          // why it is not used, otherwise
};
template <typename Run, typename SampledError>
[[nodiscard]] CheckedReference checked_reference(Context& ctx, std::string_view library, double tolerance, Run&& run,
                                                 SampledError&& sampled_error) {
  CheckedReference reference;
  try {
    run();
    ctx.wait(library);
    reference.callable = true;
    const double error = sampled_error();
    if (error <= tolerance) {
      reference.error = error;
    } else {
      reference.problem = fmt::format("{}'s output is off the host samples (error {:.2e}): not used", library, error);
    }
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    reference.callable = false;
    reference.problem = fmt::format("no {} reference: {}", library, e.what());
  }
  return reference;
}

// The second half of a matrix product's check, after its sampled entries against the float64 host
// (their normwise error `host_error`): the whole output against the reference library's where that
// passed its own check and the case is not the library's own, otherwise every output finite. Throws
// VerificationFailed on a non-finite output or an error past the tolerance; returns the note of
// both halves ("48 sampled entries vs float64 host 1.2e-03; whole output vs cuBLAS 3.4e-03").
struct WholeOutputCheck {
  kernels::StorageFormat format;    // of the output
  const void* output = nullptr;     // the case's
  const void* reference = nullptr;  // the library's
  std::size_t elements = 0;         // compared with the reference
  std::size_t finite_elements = 0;  // checked finite where there is no comparison
  bool compare = false;             // the reference passed its check and the case is not the library's
  std::string versus;               // "whole output vs cuBLAS": the comparison's note, before its error
  std::string otherwise;            // the note without a comparison: the reference's problem, or what the
                                    // library's own case checked ("every output finite")
  double tolerance = 0;
};
[[nodiscard]] std::string check_whole_output(Context& ctx, const WholeOutputCheck& check, std::size_t samples,
                                             double host_error);

// The cases of one GEMM problem (dtype, m, n, k), in table order.
void run_gemm_problem(Context& ctx, std::span<const compute::GemmCase* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder);
// The cases of one grouped GEMM problem (dtype, experts, tokens, split, n, k), in table order.
void run_grouped_gemm_problem(Context& ctx, std::span<const compute::GroupedGemmCase* const> cases, bool quick,
                              std::uint64_t seed, Recorder& recorder);
// The cases of one attention problem (dtype and shape), in table order.
void run_attention_problem(Context& ctx, std::span<const compute::AttentionCase* const> cases, bool quick,
                           std::uint64_t seed, Recorder& recorder);

}  // namespace roofline::bench::cuda::compute_family
