// The compute suite's GEMM ladder (naive, shared-memory tiled, mma.sync, wgmma) against cuBLAS:
// sampled entries against a float64 host dot product, and the whole output against cuBLAS, itself
// checked on the samples.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "compute_family.hpp"
#include "kernels/gemm.hpp"
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
    const std::vector<float> row = download_half(ctx, format, a, as_size(i * c.k), as_size(c.k));
    const std::vector<float> col = download_half(ctx, format, b, as_size(j * c.k), as_size(c.k));
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
    const float got = download_half(ctx, format, out, as_size(i * c.n + j), 1)[0];
    if (!std::isfinite(got)) return INFINITY;
    diff2 += (got - samples.reference[s]) * (got - samples.reference[s]);
    ref2 += samples.reference[s] * samples.reference[s];
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

}  // namespace

// The cases of one GEMM problem (dtype, m, n, k), in table order.
void run_gemm_problem(Context& ctx, std::span<const GemmCase* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder) {
  const GemmCase& p = *cases.front();
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
  std::optional<double> reference_error;
  std::string reference_problem;
  const Cublas* blas = nullptr;
  try {
    blas = &ctx.cublas();
    ctx.poison(c_ref);
    kernels::cublas_gemm(*blas, type, a.get(), b.get(), c_ref.get(), m, n, k, ctx.stream());
    ctx.wait("cuBLAS reference");
    const double error = sampled_gemm_error(ctx, type, p, samples, c_ref);
    if (error <= tolerance) {
      reference_error = error;
    } else {
      reference_problem = fmt::format("cuBLAS's output is off the host samples (error {:.2e}): not used", error);
    }
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    reference_problem = fmt::format("no cuBLAS reference: {}", e.what());
  }

  for (const GemmCase* c : cases) {
    BenchmarkResult result = compute::make_result(*c);
    if (ctx.health().lost) {
      record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    Launch launch;
    if (c->impl == GemmImpl::cublas) {
      if (blas == nullptr) {
        record_not(recorder, std::move(result), Disposition::failed, reference_problem);
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
      const double host = sampled_gemm_error(ctx, type, *c, samples, c_out);
      std::string versus = "no whole-output comparison (" + reference_problem + ")";
      double error = host;
      std::uint64_t nonfinite = 0;
      if (!is_cublas && reference_error) {
        const kernels::Comparison cmp =
            kernels::compare(type, c_out.get(), c_ref.get(), as_size(p.m * p.n), ctx.stream());
        const double whole = std::sqrt(cmp.sum_sq_diff / std::max(cmp.sum_sq_ref, 1e-300));
        nonfinite = cmp.nonfinite;
        error = std::max(error, whole);
        versus = fmt::format("whole output vs cuBLAS {:.2e}", whole);
      } else {
        nonfinite = kernels::count_nonfinite(type, c_out.get(), as_size(p.m * p.n), ctx.stream());
        if (is_cublas) versus = "every output finite";
      }
      if (nonfinite != 0 || !(error <= tolerance)) {
        throw VerificationFailed(
            fmt::format("{} non-finite outputs; {} sampled entries vs float64 host {:.2e}; {} "
                        "(tolerance {:.0e})",
                        nonfinite, samples.positions.size(), host, versus, tolerance));
      }
      return fmt::format("{} sampled entries vs float64 host {:.2e}; {} (tolerance {:.0e})", samples.positions.size(),
                         host, versus, tolerance);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
  }
}

}  // namespace roofline::bench::cuda::compute_family
