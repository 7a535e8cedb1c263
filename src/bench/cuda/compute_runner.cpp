// Runs the compute suite's cases (roofline/compute_suite.hpp): the compute-ceiling probes, the GEMM
// ladder against cuBLAS, and attention forward (standard vs flash). Inputs are random on the device
// (kernels/verify.hpp), outputs are poisoned before the checked run, and every result is compared
// with a reference before it is timed:
//   - probes: the exactly predictable result (kernels/peak.hpp);
//   - GEMM: sampled entries against a float64 host dot product, and the whole output against cuBLAS
//     (FP8: cuBLASLt, on check operands that the tensor cores accumulate exactly);
//   - attention: sampled rows against a float64 host attention, and the whole output for
//     non-finite (unwritten) elements.
// The error is normwise, ||out - ref|| / ||ref||: at most 1e-2 for bf16, 5e-3 for fp16.
#include "compute_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "compute_family.hpp"
#include "kernels/peak.hpp"
#include "kernels/verify.hpp"
#include "roofline/bench/testdata.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda {

namespace compute_family {

// The normwise error a 16-bit result may have against its reference.
double tolerance_for(kernels::StorageFormat format) {
  switch (format) {
    case kernels::StorageFormat::bf16: return 1e-2;
    case kernels::StorageFormat::fp16: return 5e-3;
    default: throw std::logic_error(fmt::format("no check tolerance for {}", kernels::name_of(format)));
  }
}

// Seeds of the input streams of one run.
std::uint64_t seed_of(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t sub) {
  return testdata::mix64(run_seed ^ (stream << 56) ^ (sub * 0x9E3779B97F4A7C15ULL));
}

void record_not(Recorder& recorder, BenchmarkResult result, Disposition disposition, std::string detail) {
  result.disposition = disposition;
  result.detail = std::move(detail);
  recorder.record(std::move(result));
}

std::string check_whole_output(Context& ctx, const WholeOutputCheck& check, std::size_t samples, double host_error) {
  std::string versus = check.otherwise;
  double error = host_error;
  std::uint64_t nonfinite = 0;
  if (check.compare) {
    const kernels::Comparison cmp =
        kernels::compare(check.format, check.output, check.reference, check.elements, ctx.stream());
    const double whole = std::sqrt(cmp.sum_sq_diff / std::max(cmp.sum_sq_ref, 1e-300));
    nonfinite = cmp.nonfinite;
    error = std::max(error, whole);
    versus = fmt::format("{} {:.2e}", check.versus, whole);
  } else {
    nonfinite = kernels::count_nonfinite(check.format, check.output, check.finite_elements, ctx.stream());
  }
  if (nonfinite != 0 || !(error <= check.tolerance)) {
    throw VerificationFailed(
        fmt::format("{} non-finite outputs; {} sampled entries vs float64 host {:.2e}; {} (tolerance {:.0e})",
                    nonfinite, samples, host_error, versus, check.tolerance));
  }
  return fmt::format("{} sampled entries vs float64 host {:.2e}; {}", samples, host_error, versus);
}

}  // namespace compute_family

namespace {

using namespace compute_family;

using compute::AttentionCase;
using compute::AttentionImpl;
using compute::GemmCase;
using compute::GemmImpl;
using compute::PeakImpl;

kernels::PeakProbe probe_of(PeakImpl impl) {
  switch (impl) {
    case PeakImpl::fma_fp32: return kernels::PeakProbe::fma_fp32;
    case PeakImpl::mma_sync_bf16: return kernels::PeakProbe::mma_sync_bf16;
    case PeakImpl::wgmma_bf16: return kernels::PeakProbe::wgmma_bf16;
  }
  return kernels::PeakProbe::fma_fp32;
}

// ---- probes ----------------------------------------------------------------------------------

void run_peak(Context& ctx, PeakImpl impl, bool quick, std::uint64_t seed, Recorder& recorder) {
  const kernels::PeakProbe probe = probe_of(impl);
  const kernels::PeakProbeConfig config = kernels::peak_probe_config(probe, ctx.device().sms, quick);
  BenchmarkResult result = compute::make_result(impl, peak_cost(impl, ctx.device().sms, quick));
  result.parameters.push_back({"blocks", Cell{std::int64_t{config.blocks}}});
  result.parameters.push_back({"threads", Cell{std::int64_t{config.threads}}});
  result.parameters.push_back({"iterations", Cell{std::int64_t{config.iterations}}});
  if (ctx.health().lost)
    return record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
  try {
    if (!kernels::peak_probe_supported(probe, ctx.device().index)) {
      return record_not(recorder, std::move(result), Disposition::not_supported,
                        "needs sm_90a code (a build with 90a in CMAKE_CUDA_ARCHITECTURES) and a compute capability "
                        "9.0 device");
    }
    const std::vector<unsigned char> input = kernels::peak_probe_input(probe, config, seed_of(seed, 1, 0));
    DeviceBuffer in = ctx.allocate(config.input_bytes);
    DeviceBuffer out = ctx.allocate(config.output_bytes);
    ctx.upload(in, input.data(), input.size());
    std::vector<unsigned char> output(config.output_bytes);
    const Launch launch = [&](cudaStream_t s, int) {
      kernels::peak_probe_launch(probe, config, in.get(), out.get(), s);
      return cudaSuccess;
    };
    const auto verify = [&]() -> std::string {
      ctx.poison(out);
      check(launch(ctx.stream(), 0), "peak probe");
      ctx.download(output.data(), out, output.size());
      const double error = kernels::peak_probe_max_error(probe, config, input.data(), output.data());
      if (!(error == 0.0)) {
        throw VerificationFailed(fmt::format("max |out - exact| = {:.3g} (must be 0: every value is exact)", error));
      }
      return fmt::format("all {} outputs exact", config.output_bytes / 4);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
  } catch (const NotEnoughMemory& e) {
    record_not(recorder, std::move(result), Disposition::not_run, e.what());
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    record_not(recorder, std::move(result), Disposition::failed, fmt::format("set-up failed: {}", e.what()));
  }
}

// Calls body(span) for each run of consecutive cases that `same` puts together.
template <typename Case, typename Same, typename Body>
void for_each_problem(const std::vector<const Case*>& cases, Same same, Body body) {
  std::size_t i = 0;
  while (i < cases.size()) {
    std::size_t end = i + 1;
    while (end < cases.size() && same(*cases[i], *cases[end])) ++end;
    body(std::span<const Case* const>(cases.data() + i, end - i));
    i = end;
  }
}

// A failed set-up (memory, a CUDA error) becomes the disposition of the problem's cases not yet recorded.
template <typename Case, typename MakeResult, typename Body>
void guarded_problem(Context& ctx, Recorder& recorder, std::span<const Case* const> cases, MakeResult make, Body body) {
  const std::size_t before = recorder.count();
  const auto rest = [&](Disposition d, const std::string& why) {
    for (std::size_t i = recorder.count() - before; i < cases.size(); ++i) {
      record_not(recorder, make(*cases[i]), d, why);
    }
  };
  if (ctx.health().lost) return rest(Disposition::not_run, "the CUDA context was lost");
  try {
    body();
  } catch (const NotEnoughMemory& e) {
    rest(Disposition::not_run, e.what());
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    rest(Disposition::failed, fmt::format("set-up failed: {}", e.what()));
  }
}

}  // namespace

OpCost peak_cost(PeakImpl impl, int sms, bool quick) {
  const kernels::PeakProbeConfig config = kernels::peak_probe_config(probe_of(impl), sms, quick);
  OpCost cost;
  cost.flops = config.flops;
  cost.bytes_read = static_cast<double>(config.input_bytes);
  cost.bytes_written = static_cast<double>(config.output_bytes);
  return cost;
}

void run_compute_suite(Context& ctx, const ComputeSelection& selection, bool quick, std::uint64_t seed,
                       Recorder& recorder, std::vector<std::string>& notes) {
  for (const compute::PeakCase* c : selection.peaks) run_peak(ctx, c->impl, quick, seed, recorder);

  for_each_problem(
      selection.gemms,
      [](const GemmCase& a, const GemmCase& b) { return a.dtype == b.dtype && a.m == b.m && a.n == b.n && a.k == b.k; },
      [&](std::span<const compute::GemmCase* const> problem) {
        guarded_problem(
            ctx, recorder, problem, [](const GemmCase& c) { return compute::make_result(c); },
            [&] { run_gemm_problem(ctx, problem, quick, seed, recorder); });
      });

  for_each_problem(
      selection.grouped,
      [](const compute::GroupedGemmCase& a, const compute::GroupedGemmCase& b) {
        return a.dtype == b.dtype && a.experts == b.experts && a.tokens == b.tokens && a.split == b.split &&
               a.n == b.n && a.k == b.k;
      },
      [&](std::span<const compute::GroupedGemmCase* const> problem) {
        guarded_problem(
            ctx, recorder, problem, [](const compute::GroupedGemmCase& c) { return compute::make_result(c); },
            [&] { run_grouped_gemm_problem(ctx, problem, quick, seed, recorder); });
      });

  for_each_problem(
      selection.attention,
      [](const AttentionCase& a, const AttentionCase& b) {
        return a.dtype == b.dtype && a.batch == b.batch && a.heads == b.heads && a.kv_heads == b.kv_heads &&
               a.seq == b.seq && a.head_dim == b.head_dim && a.head_dim_v == b.head_dim_v && a.causal == b.causal;
      },
      [&](std::span<const AttentionCase* const> problem) {
        guarded_problem(
            ctx, recorder, problem, [](const AttentionCase& c) { return compute::make_result(c); },
            [&] { run_attention_problem(ctx, problem, quick, seed, recorder); });
      });
  if (!selection.gemms.empty() || !selection.attention.empty()) {
    notes.push_back(
        "compute suite: GEMM and attention inputs are uniform random on the device; checks are normwise "
        "||out - ref|| / ||ref|| <= 1e-2 (bf16) or 5e-3 (fp16); GEMM operands are not rotated (compute-bound: at "
        "small sizes they stay in L2)");
  }
  if (!selection.grouped.empty()) {
    notes.push_back(
        "compute suite: grouped GEMMs (MoE experts, tokens stacked by expert) are checked against one cuBLAS GEMM "
        "(bf16) or cuBLASLt FP8 matmul (fp8) per expert, whole output, and float64 host samples, normwise <= 1e-2; a "
        "skewed split gives expert e a share of the tokens in proportion to 1 / (e + 1)");
  }
  if (std::any_of(selection.gemms.begin(), selection.gemms.end(),
                  [](const GemmCase* c) { return c->dtype == DType::fp8_e4m3; })) {
    notes.push_back(
        "compute suite: FP8 GEMMs are checked on e4m3 operands of 17 levels (exact sums), normwise <= 1e-2, with "
        "per-tensor scales 0.5 and 3, and timed on uniform random e4m3 operands; cuBLASLt runs m rounded up to 16 (m "
        "run), the FLOPs and bytes are those of m");
  }
}

}  // namespace roofline::bench::cuda
