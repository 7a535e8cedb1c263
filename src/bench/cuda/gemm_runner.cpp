// The compute suite's GEMM ladder (naive, shared-memory tiled, mma.sync, wgmma) against cuBLAS,
// and the FP8 GEMM (wgmma) against cuBLASLt: sampled entries against a float64 host dot product
// (for FP8, of check operands whose sums the tensor cores accumulate exactly), and the whole output
// against the library, itself checked on the samples.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <random>

#include "compute_family.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemv.hpp"
#include "kernels/verify.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda::compute_family {
namespace {

using compute::GemmCase;
using compute::GemmImpl;

kernels::GemmKernel gemm_kernel_of(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::naive: return kernels::GemmKernel::naive;
    case GemmImpl::smem_tiled: return kernels::GemmKernel::smem_tiled;
    case GemmImpl::mma_sync: return kernels::GemmKernel::mma_sync;
    default: return kernels::GemmKernel::wgmma;
  }
}

// C[m, n] = A[m, k] B[n, k]^T is the GEMV y[b, r] = sum W[r, k] x[b, k] with W = B (n rows), x = A
// (a batch of m vectors) and y = C: the skinny GEMM as the wgmma GEMV.
kernels::GemvArgs swapped_gemv(kernels::StorageFormat type, const DeviceBuffer& a, const DeviceBuffer& b,
                               const DeviceBuffer& c, const GemmCase& g, int sms) {
  return kernels::GemvArgs{.kernel = kernels::GemvKernel::wgmma,
                           .weights = type,
                           .activations = type,
                           .w = b.get(),
                           .x = a.get(),
                           .y = c.get(),
                           .m = g.n,
                           .k = g.k,
                           .batch = g.m,
                           .sms = sms,
                           .weight_scale = nullptr,
                           .group_scales = nullptr,
                           .workspace = nullptr};
}

struct GemmSamples {
  std::vector<std::pair<std::int64_t, std::int64_t>> positions;
  std::vector<double> reference;
};

GemmSamples sample_gemm(Context& ctx, kernels::StorageFormat format, const GemmCase& c, const DeviceBuffer& a,
                        const DeviceBuffer& b, int count, std::uint64_t seed) {
  GemmSamples samples;
  samples.positions = {{0, 0}, {c.m - 1, c.n - 1}, {c.m - 1, 0}, {0, c.n - 1}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.positions.size()) < count) {
    samples.positions.emplace_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.m)),
                                   static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.n)));
  }
  for (const auto& [i, j] : samples.positions) {
    const std::vector<float> row = download_values(ctx, format, a, as_size(i * c.k), as_size(c.k));
    const std::vector<float> col = download_values(ctx, format, b, as_size(j * c.k), as_size(c.k));
    double dot = 0;
    for (std::size_t t = 0; t < row.size(); ++t) dot += static_cast<double>(row[t]) * col[t];
    samples.reference.push_back(dot);
  }
  return samples;
}

double sampled_gemm_error(Context& ctx, kernels::StorageFormat format, const GemmCase& c, const GemmSamples& samples,
                          const DeviceBuffer& out) {
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t s = 0; s < samples.positions.size(); ++s) {
    const auto [i, j] = samples.positions[s];
    const float got = download_values(ctx, format, out, as_size(i * c.n + j), 1)[0];
    if (!std::isfinite(got)) return INFINITY;
    diff2 += (got - samples.reference[s]) * (got - samples.reference[s]);
    ref2 += samples.reference[s] * samples.reference[s];
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

// ---- FP8 ---------------------------------------------------------------------------------------

// Sampled entries of C from the check operands of streams a_seed and b_seed, recomputed on the
// host (exact in double).
GemmSamples sample_fp8_gemm(const GemmCase& c, std::uint64_t a_seed, std::uint64_t b_seed, int count,
                            std::uint64_t seed) {
  GemmSamples samples;
  samples.positions = {{0, 0}, {c.m - 1, c.n - 1}, {c.m - 1, 0}, {0, c.n - 1}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.positions.size()) < count) {
    samples.positions.emplace_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.m)),
                                   static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.n)));
  }
  const double scale = static_cast<double>(fp8_scales[0]) * fp8_scales[1] * kernels::fp8_check_level_scale *
                       kernels::fp8_check_level_scale;
  const auto k = static_cast<std::uint64_t>(c.k);
  for (const auto& [i, j] : samples.positions) {
    std::int64_t dot = 0;
    for (std::uint64_t t = 0; t < k; ++t) {
      dot += kernels::fp8_check_level(a_seed, static_cast<std::uint64_t>(i) * k + t) *
             kernels::fp8_check_level(b_seed, static_cast<std::uint64_t>(j) * k + t);
    }
    samples.reference.push_back(scale * static_cast<double>(dot));
  }
  return samples;
}

// The cases of one FP8 problem (m, n, k): the wgmma kernel at m rows, cuBLASLt at its padded rows.
// A holds the padded rows, C as many; the checks read the first m. Each check runs on the check
// operands; the timed launches run on uniform random e4m3 values in [-1, 1) (what a check
// operand's few levels would not show: the tensor cores' power and clocks on realistic bits).
void run_fp8_gemm_problem(Context& ctx, std::span<const GemmCase* const> cases, bool quick, std::uint64_t seed,
                          Recorder& recorder) {
  const GemmCase& p = *cases.front();
  const kernels::StorageFormat operand = kernels::fp8_gemm_operand_format;
  const kernels::StorageFormat output = kernels::fp8_gemm_output_format;
  const std::int64_t rows = compute::cublaslt_fp8_rows(p.m);
  DeviceBuffer a = ctx.allocate(as_size(rows * p.k));
  DeviceBuffer b = ctx.allocate(as_size(p.n * p.k));
  DeviceBuffer c_ref = ctx.allocate(as_size(rows * p.n) * 2);
  DeviceBuffer c_out = ctx.allocate(as_size(rows * p.n) * 2);
  const DeviceBuffer scales = ctx.upload_scalars(fp8_scales);
  const std::uint64_t problem_seed = seed_of(seed, 5, static_cast<std::uint64_t>(p.m * 131 + p.n * 7 + p.k));
  const auto fill_check_operands = [&] {
    kernels::fill_fp8_check_operand(a.get(), as_size(rows * p.k), problem_seed, ctx.stream());
    kernels::fill_fp8_check_operand(b.get(), as_size(p.n * p.k), problem_seed + 1, ctx.stream());
  };
  const auto fill_timing_operands = [&] {
    kernels::fill_uniform(operand, a.get(), as_size(rows * p.k), problem_seed + 2, 1.0F, ctx.stream());
    kernels::fill_uniform(operand, b.get(), as_size(p.n * p.k), problem_seed + 3, 1.0F, ctx.stream());
  };
  const GemmSamples samples = sample_fp8_gemm(p, problem_seed, problem_seed + 1, quick ? 24 : 48, problem_seed + 4);
  fill_check_operands();
  const auto args = [&](std::int64_t m, const DeviceBuffer& c) {
    return kernels::Fp8GemmArgs{.a = a.get(),
                                .b = b.get(),
                                .c = c.get(),
                                .m = static_cast<int>(m),
                                .n = static_cast<int>(p.n),
                                .k = static_cast<int>(p.k),
                                .a_scale = scalar_slot(scales, 0),
                                .b_scale = scalar_slot(scales, 1)};
  };

  // The whole-output reference: cuBLASLt at its padded rows, itself checked on the host samples.
  const kernels::BlasLtApi* lt = nullptr;
  const CheckedReference reference = checked_reference(
      ctx, "cuBLASLt", fp8_gemm_tolerance,
      [&] {
        lt = &ctx.cublaslt();
        ctx.poison(c_ref);
        kernels::cublaslt_gemm_fp8(*lt, args(rows, c_ref), ctx.stream());
      },
      [&] { return sampled_gemm_error(ctx, output, p, samples, c_ref); });
  if (!reference.callable) lt = nullptr;

  for (const GemmCase* c : cases) {
    BenchmarkResult result = compute::make_result(*c);
    if (ctx.health().lost) {
      record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    const bool is_library = c->impl == GemmImpl::cublaslt;
    Launch launch;
    std::string plan_note;  // how the wgmma kernel covers the output
    if (is_library) {
      if (lt == nullptr) {
        record_not(recorder, std::move(result), Disposition::failed, reference.problem);
        continue;
      }
      launch = [lt, call = args(c->rows_run(), c_out)](cudaStream_t s, int) {
        kernels::cublaslt_gemm_fp8(*lt, call, s);
        return cudaSuccess;
      };
    } else {
      if (!kernels::gemm_kernel_supported(kernels::GemmKernel::wgmma, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "not built for this device (wgmma needs sm_90a code and a compute capability 9.0 device)");
        continue;
      }
      launch = [call = args(c->m, c_out)](cudaStream_t s, int) {
        kernels::gemm_fp8(kernels::GemmKernel::wgmma, call, s);
        return cudaSuccess;
      };
      plan_note = compute::gemm_wgmma_plan_note(c->m, c->n, ctx.device().sms);
    }
    const auto verify = [&]() -> std::string {
      fill_check_operands();
      ctx.poison(c_out);
      check(launch(ctx.stream(), 0), "fp8 gemm");
      ctx.wait("fp8 gemm");
      const std::string checked = check_whole_output(
          ctx,
          {.format = output,
           .output = c_out.get(),
           .reference = c_ref.get(),
           .elements = as_size(c->m * c->n),
           .finite_elements = as_size(c->rows_run() * c->n),
           .compare = !is_library && reference.error.has_value(),
           .versus = "whole output vs cuBLASLt",
           .otherwise = is_library ? fmt::format("every output of the {} rows run finite", c->rows_run())
                                   : "no whole-output comparison (" + reference.problem + ")",
           .tolerance = fp8_gemm_tolerance},
          samples.positions.size(), sampled_gemm_error(ctx, output, *c, samples, c_out));
      fill_timing_operands();
      return fmt::format("{} (tolerance {:.0e}; timed on uniform random operands){}", checked, fp8_gemm_tolerance,
                         plan_note);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
  }
}

}  // namespace

// The cases of one GEMM problem (dtype, m, n, k), in table order.
void run_gemm_problem(Context& ctx, std::span<const GemmCase* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder) {
  const GemmCase& p = *cases.front();
  if (p.dtype == DType::fp8_e4m3) return run_fp8_gemm_problem(ctx, cases, quick, seed, recorder);
  const FormatChoice format = choose_format(p.dtype, kernels::gemm_formats, "GEMM");
  if (!format.format) {
    for (const GemmCase* c : cases)
      record_not(recorder, compute::make_result(*c), Disposition::not_supported, format.unsupported);
    return;
  }
  const kernels::StorageFormat type = *format.format;
  const int m = static_cast<int>(p.m);
  const int n = static_cast<int>(p.n);
  const int k = static_cast<int>(p.k);
  const double tolerance = tolerance_for(type);
  const std::size_t element_bytes = as_size(kernels::bytes_of(type));
  DeviceBuffer a = ctx.allocate(as_size(p.m * p.k) * element_bytes);
  DeviceBuffer b = ctx.allocate(as_size(p.n * p.k) * element_bytes);
  DeviceBuffer c_ref = ctx.allocate(as_size(p.m * p.n) * element_bytes);
  DeviceBuffer c_out = ctx.allocate(as_size(p.m * p.n) * element_bytes);
  const std::uint64_t problem_seed = seed_of(seed, 2, static_cast<std::uint64_t>(p.m * 131 + p.n * 7 + p.k));
  kernels::fill_uniform(type, a.get(), as_size(p.m * p.k), problem_seed, 1.0F, ctx.stream());
  kernels::fill_uniform(type, b.get(), as_size(p.n * p.k), problem_seed + 1, 1.0F, ctx.stream());
  const GemmSamples samples = sample_gemm(ctx, type, p, a, b, quick ? 24 : 48, problem_seed + 2);

  // The whole-output reference: cuBLAS, itself checked on the host samples.
  const Cublas* blas = nullptr;
  const CheckedReference reference = checked_reference(
      ctx, "cuBLAS", tolerance,
      [&] {
        blas = &ctx.cublas();
        ctx.poison(c_ref);
        kernels::cublas_gemm(*blas, type, a.get(), b.get(), c_ref.get(), m, n, k, ctx.stream());
      },
      [&] { return sampled_gemm_error(ctx, type, p, samples, c_ref); });
  if (!reference.callable) blas = nullptr;

  for (const GemmCase* c : cases) {
    BenchmarkResult result = compute::make_result(*c);
    if (ctx.health().lost) {
      record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    Launch launch;
    DeviceBuffer workspace;  // split-K partial sums and tickets (swapab, splitk), zeroed once
    std::string plan_note;   // how the kernel cut the problem, where the case does not say
    if (c->impl == GemmImpl::swapab) {
      kernels::GemvArgs args = swapped_gemv(type, a, b, c_out, *c, ctx.device().sms);
      if (!kernels::gemv_kernel_supported(kernels::GemvKernel::wgmma, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "not built for this device (the wgmma GEMV needs sm_90a code and a compute capability 9.0 device)");
        continue;
      }
      if (const char* why = kernels::gemv_unsupported(args.kernel, args.m, args.k, args.batch, type)) {
        record_not(recorder, std::move(result), Disposition::not_supported, why);
        continue;
      }
      if (const std::size_t bytes = kernels::gemv_workspace_bytes(args); bytes > 0) {
        workspace = ctx.allocate_zeroed(bytes);
        args.workspace = workspace.get();
      }
      launch = [args](cudaStream_t s, int) { return kernels::launch_gemv(args, s); };
    } else if (c->impl == GemmImpl::splitk) {
      if (!kernels::gemm_kernel_supported(kernels::GemmKernel::wgmma, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "not built for this device (wgmma needs sm_90a code and a compute capability 9.0 device)");
        continue;
      }
      const int sms = ctx.device().sms;
      plan_note = compute::gemm_skinny_plan_note(kernel_tiles::gemm_wgmma_skinny_plan(m, n, k, sms), m, n, sms);
      if (const std::size_t bytes = kernels::gemm_split_k_workspace_bytes(m, n, k, sms); bytes > 0) {
        workspace = ctx.allocate_zeroed(bytes);
      }
      launch = [&, sms, ws = workspace.get()](cudaStream_t s, int) {
        kernels::gemm_split_k(type, a.get(), b.get(), c_out.get(), m, n, k, sms, ws, s);
        return cudaSuccess;
      };
    } else if (c->impl == GemmImpl::cublas) {
      if (blas == nullptr) {
        record_not(recorder, std::move(result), Disposition::failed, reference.problem);
        continue;
      }
      launch = [&, blas](cudaStream_t s, int) {
        kernels::cublas_gemm(*blas, type, a.get(), b.get(), c_out.get(), m, n, k, s);
        return cudaSuccess;
      };
    } else {
      const kernels::GemmKernel kernel = gemm_kernel_of(c->impl);
      if (!kernels::gemm_kernel_supported(kernel, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "not built for this device (wgmma needs sm_90a code and a compute capability 9.0 device)");
        continue;
      }
      if (kernel == kernels::GemmKernel::wgmma) plan_note = compute::gemm_wgmma_plan_note(m, n, ctx.device().sms);
      launch = [&, kernel](cudaStream_t s, int) {
        kernels::gemm(kernel, type, a.get(), b.get(), c_out.get(), m, n, k, s);
        return cudaSuccess;
      };
    }
    const bool is_cublas = c->impl == GemmImpl::cublas;
    const auto verify = [&]() -> std::string {
      ctx.poison(c_out);
      check(launch(ctx.stream(), 0), "gemm");
      ctx.wait("gemm");
      const std::string checked =
          check_whole_output(ctx,
                             {.format = type,
                              .output = c_out.get(),
                              .reference = c_ref.get(),
                              .elements = as_size(p.m * p.n),
                              .finite_elements = as_size(p.m * p.n),
                              .compare = !is_cublas && reference.error.has_value(),
                              .versus = "whole output vs cuBLAS",
                              .otherwise = is_cublas ? std::string("every output finite")
                                                     : "no whole-output comparison (" + reference.problem + ")",
                              .tolerance = tolerance},
                             samples.positions.size(), sampled_gemm_error(ctx, type, *c, samples, c_out));
      return fmt::format("{} (tolerance {:.0e}){}", checked, tolerance, plan_note);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
  }
}

}  // namespace roofline::bench::cuda::compute_family
