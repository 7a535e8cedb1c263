// Runs the compute suite's cases (roofline/compute_suite.hpp): the compute-ceiling probes, the GEMM
// ladder against cuBLAS, and attention forward (standard vs flash). Inputs are random on the device
// (kernels/verify.hpp), outputs are poisoned before the checked run, and every result is compared
// with a reference before it is timed:
//   - probes: the exactly predictable result (kernels/peak.hpp);
//   - GEMM: sampled entries against a float64 host dot product, and the whole output against cuBLAS;
//   - attention: sampled rows against a float64 host attention, and the whole output for
//     non-finite (unwritten) elements.
// The error is normwise, ||out - ref|| / ||ref||: at most 1e-2 for bf16, 5e-3 for fp16.
#include "compute_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "kernels/attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/peak.hpp"
#include "kernels/verify.hpp"
#include "roofline/testdata.hpp"

namespace roofline::bench::cuda {
namespace {

using compute::AttentionCase;
using compute::AttentionImpl;
using compute::GemmCase;
using compute::GemmImpl;
using compute::PeakImpl;

std::size_t as_size(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

kernels::Half16 half16(DType dtype) {
  return dtype == DType::fp16 ? kernels::Half16::fp16 : kernels::Half16::bf16;
}

double tolerance_for(DType dtype) {
  return dtype == DType::fp16 ? 5e-3 : 1e-2;
}

kernels::PeakProbe probe_of(PeakImpl impl) {
  switch (impl) {
    case PeakImpl::fma_fp32: return kernels::PeakProbe::fma_fp32;
    case PeakImpl::mma_sync_bf16: return kernels::PeakProbe::mma_sync_bf16;
    case PeakImpl::wgmma_bf16: return kernels::PeakProbe::wgmma_bf16;
  }
  return kernels::PeakProbe::fma_fp32;
}

kernels::GemmKernel gemm_kernel_of(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::naive: return kernels::GemmKernel::naive;
    case GemmImpl::smem_tiled: return kernels::GemmKernel::smem_tiled;
    case GemmImpl::mma_sync: return kernels::GemmKernel::mma_sync;
    default: return kernels::GemmKernel::wgmma;
  }
}

kernels::FlashVariant flash_variant_of(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::flash_w8r16: return kernels::FlashVariant::warps8_rows16;
    case AttentionImpl::flash_w4r32: return kernels::FlashVariant::warps4_rows32;
    default: return kernels::FlashVariant::wgmma;
  }
}

// Seeds of the input streams of one run.
std::uint64_t seed_of(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t sub) {
  return testdata::mix64(run_seed ^ (stream << 56) ^ (sub * 0x9E3779B97F4A7C15ULL));
}

// Downloads `count` 16-bit elements from element `offset` of a device buffer, as float.
std::vector<float> download_half(Context& ctx, DType dtype, const DeviceBuffer& buffer, std::size_t offset,
                                 std::size_t count) {
  std::vector<std::uint16_t> raw(count);
  ctx.wait("before download");
  check(
      cudaMemcpyAsync(raw.data(), buffer.as<std::uint16_t>() + offset, count * 2, cudaMemcpyDeviceToHost, ctx.stream()),
      "download");
  ctx.wait("download");
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = dtype == DType::fp16 ? testdata::fp16_bits_to_float(raw[i]) : testdata::bf16_bits_to_float(raw[i]);
  }
  return values;
}

void record_not(Recorder& recorder, BenchmarkResult result, Disposition disposition, std::string detail) {
  result.disposition = disposition;
  result.detail = std::move(detail);
  recorder.record(std::move(result));
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

// ---- GEMM ------------------------------------------------------------------------------------

struct GemmSamples {
  std::vector<std::pair<std::int64_t, std::int64_t>> positions;
  std::vector<double> reference;
};

GemmSamples sample_gemm(Context& ctx, const GemmCase& c, const DeviceBuffer& a, const DeviceBuffer& b, int count,
                        std::uint64_t seed) {
  GemmSamples samples;
  samples.positions = {{0, 0}, {c.m - 1, c.n - 1}, {c.m - 1, 0}, {0, c.n - 1}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.positions.size()) < count) {
    samples.positions.emplace_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.m)),
                                   static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.n)));
  }
  for (const auto& [i, j] : samples.positions) {
    const std::vector<float> row = download_half(ctx, c.dtype, a, as_size(i * c.k), as_size(c.k));
    const std::vector<float> col = download_half(ctx, c.dtype, b, as_size(j * c.k), as_size(c.k));
    double dot = 0;
    for (std::size_t t = 0; t < row.size(); ++t) dot += static_cast<double>(row[t]) * col[t];
    samples.reference.push_back(dot);
  }
  return samples;
}

double sampled_gemm_error(Context& ctx, const GemmCase& c, const GemmSamples& samples, const DeviceBuffer& out) {
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t s = 0; s < samples.positions.size(); ++s) {
    const auto [i, j] = samples.positions[s];
    const float got = download_half(ctx, c.dtype, out, as_size(i * c.n + j), 1)[0];
    if (!std::isfinite(got)) return INFINITY;
    diff2 += (got - samples.reference[s]) * (got - samples.reference[s]);
    ref2 += samples.reference[s] * samples.reference[s];
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

// The cases of one GEMM problem (dtype, m, n, k), in table order.
void run_gemm_problem(Context& ctx, std::span<const GemmCase* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder) {
  const GemmCase& p = *cases.front();
  const kernels::Half16 type = half16(p.dtype);
  const int m = static_cast<int>(p.m);
  const int n = static_cast<int>(p.n);
  const int k = static_cast<int>(p.k);
  const double tolerance = tolerance_for(p.dtype);
  DeviceBuffer a = ctx.allocate(as_size(p.m * p.k) * 2);
  DeviceBuffer b = ctx.allocate(as_size(p.n * p.k) * 2);
  DeviceBuffer c_ref = ctx.allocate(as_size(p.m * p.n) * 2);
  DeviceBuffer c_out = ctx.allocate(as_size(p.m * p.n) * 2);
  const std::uint64_t problem_seed = seed_of(seed, 2, static_cast<std::uint64_t>(p.m * 131 + p.n * 7 + p.k));
  kernels::fill_uniform(type, a.get(), as_size(p.m * p.k), problem_seed, 1.0F, ctx.stream());
  kernels::fill_uniform(type, b.get(), as_size(p.n * p.k), problem_seed + 1, 1.0F, ctx.stream());
  const GemmSamples samples = sample_gemm(ctx, p, a, b, quick ? 24 : 48, problem_seed + 2);

  // The whole-output reference: cuBLAS, itself checked on the host samples.
  std::optional<double> reference_error;
  std::string reference_problem;
  const Cublas* blas = nullptr;
  try {
    blas = &ctx.cublas();
    ctx.poison(c_ref);
    kernels::cublas_gemm(*blas, type, a.get(), b.get(), c_ref.get(), m, n, k, ctx.stream());
    ctx.wait("cuBLAS reference");
    const double error = sampled_gemm_error(ctx, p, samples, c_ref);
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
      const double host = sampled_gemm_error(ctx, *c, samples, c_out);
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

// ---- attention -------------------------------------------------------------------------------

kernels::AttentionShape kernel_shape(const AttentionCase& c) {
  kernels::AttentionShape s;
  s.batch = static_cast<int>(c.batch);
  s.heads = static_cast<int>(c.heads);
  s.kv_heads = static_cast<int>(c.kv_heads);
  s.seq = static_cast<int>(c.seq);
  s.head_dim = static_cast<int>(c.head_dim);
  s.causal = c.causal;
  return s;
}

struct AttentionSamples {
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (batch x heads index, query)
  std::vector<double> reference;                            // rows x head_dim
};

// Float64 attention of sampled query rows (the first and last included) from the device inputs.
AttentionSamples sample_attention(Context& ctx, const AttentionCase& c, const DeviceBuffer& q, const DeviceBuffer& k,
                                  const DeviceBuffer& v, int count, std::uint64_t seed) {
  const std::int64_t n = c.seq;
  const std::int64_t d = c.head_dim;
  const std::int64_t bh = c.batch * c.heads;
  AttentionSamples samples;
  samples.rows = {{0, 0}, {bh - 1, n - 1}, {bh / 2, n / 2}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.rows.size()) < count) {
    samples.rows.emplace_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bh)),
                              static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)));
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::int64_t group = c.heads / c.kv_heads;
  std::map<std::int64_t, std::pair<std::vector<float>, std::vector<float>>> kv_cache;  // kv head -> (K, V)
  for (const auto& [row_bh, i] : samples.rows) {
    const std::int64_t kv_index = (row_bh / c.heads) * c.kv_heads + (row_bh % c.heads) / group;
    auto found = kv_cache.find(kv_index);
    if (found == kv_cache.end()) {
      const std::size_t offset = as_size(kv_index * n * d);
      found = kv_cache
                  .emplace(kv_index, std::make_pair(download_half(ctx, c.dtype, k, offset, as_size(n * d)),
                                                    download_half(ctx, c.dtype, v, offset, as_size(n * d))))
                  .first;
    }
    const std::vector<float>& kh = found->second.first;
    const std::vector<float>& vh = found->second.second;
    const std::vector<float> qrow = download_half(ctx, c.dtype, q, as_size((row_bh * n + i) * d), as_size(d));
    const std::int64_t keys = c.causal ? i + 1 : n;
    std::vector<double> score(as_size(keys));
    double top = -INFINITY;
    for (std::int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (std::int64_t t = 0; t < d; ++t) dot += static_cast<double>(qrow[as_size(t)]) * kh[as_size(j * d + t)];
      score[as_size(j)] = dot * scale;
      top = std::max(top, score[as_size(j)]);
    }
    double total = 0;
    for (double& x : score) {
      x = std::exp(x - top);
      total += x;
    }
    std::vector<double> out(as_size(d), 0.0);
    for (std::int64_t j = 0; j < keys; ++j) {
      for (std::int64_t t = 0; t < d; ++t) out[as_size(t)] += score[as_size(j)] * vh[as_size(j * d + t)];
    }
    for (double x : out) samples.reference.push_back(x / total);
  }
  return samples;
}

double sampled_attention_error(Context& ctx, const AttentionCase& c, const AttentionSamples& samples,
                               const DeviceBuffer& o) {
  const std::int64_t n = c.seq;
  const std::int64_t d = c.head_dim;
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t r = 0; r < samples.rows.size(); ++r) {
    const auto [bh, i] = samples.rows[r];
    const std::vector<float> got = download_half(ctx, c.dtype, o, as_size((bh * n + i) * d), as_size(d));
    for (std::int64_t t = 0; t < d; ++t) {
      if (!std::isfinite(got[as_size(t)])) return INFINITY;
      const double ref = samples.reference[r * as_size(d) + as_size(t)];
      diff2 += (got[as_size(t)] - ref) * (got[as_size(t)] - ref);
      ref2 += ref * ref;
    }
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

void run_attention_problem(Context& ctx, std::span<const AttentionCase* const> cases, bool quick, std::uint64_t seed,
                           Recorder& recorder) {
  const AttentionCase& p = *cases.front();
  const kernels::Half16 type = half16(p.dtype);
  const kernels::AttentionShape shape = kernel_shape(p);
  const std::size_t q_elements = as_size(p.batch * p.heads * p.seq * p.head_dim);
  const std::size_t kv_elements = as_size(p.batch * p.kv_heads * p.seq * p.head_dim);
  DeviceBuffer q = ctx.allocate(q_elements * 2);
  DeviceBuffer k = ctx.allocate(kv_elements * 2);
  DeviceBuffer v = ctx.allocate(kv_elements * 2);
  DeviceBuffer o = ctx.allocate(q_elements * 2);
  const std::uint64_t problem_seed =
      seed_of(seed, 3, static_cast<std::uint64_t>(p.seq * 977 + p.batch * 31 + p.heads * 7 + p.kv_heads + p.head_dim));
  // |q| up to 2: scores of std ~0.7 give softmax rows far from uniform, so the running max matters.
  kernels::fill_uniform(type, q.get(), q_elements, problem_seed, 2.0F, ctx.stream());
  kernels::fill_uniform(type, k.get(), kv_elements, problem_seed + 1, 1.0F, ctx.stream());
  kernels::fill_uniform(type, v.get(), kv_elements, problem_seed + 2, 1.0F, ctx.stream());
  const AttentionSamples samples = sample_attention(ctx, p, q, k, v, quick ? 16 : 24, problem_seed + 3);
  const double tolerance = tolerance_for(p.dtype);

  for (const AttentionCase* c : cases) {
    BenchmarkResult result = compute::make_result(*c);
    if (ctx.health().lost) {
      record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    Launch launch;
    DeviceBuffer workspace;
    if (c->impl == AttentionImpl::standard) {
      const Cublas* blas = nullptr;
      try {
        blas = &ctx.cublas();
      } catch (const CudaError& e) {
        record_not(recorder, std::move(result), Disposition::failed, e.what());
        continue;
      }
      const std::size_t bytes = kernels::standard_attention_workspace_bytes(shape);
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
      constexpr std::size_t margin = std::size_t{1} << 30;
      if (bytes + margin > free_bytes) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   fmt::format("does not fit: S and P need {:.1f} GiB of device memory, {:.1f} GiB free",
                               static_cast<double>(bytes) / (1 << 30), static_cast<double>(free_bytes) / (1 << 30)));
        continue;
      }
      try {
        workspace = ctx.allocate(bytes);
      } catch (const NotEnoughMemory& e) {
        record_not(recorder, std::move(result), Disposition::not_supported, fmt::format("does not fit: {}", e.what()));
        continue;
      }
      launch = [&, blas](cudaStream_t s, int) {
        kernels::standard_attention_forward(*blas, type, shape, q.get(), k.get(), v.get(), o.get(), workspace.get(), s);
        return cudaSuccess;
      };
    } else {
      const kernels::FlashVariant variant = flash_variant_of(c->impl);
      if (!kernels::flash_variant_supported(variant, shape.head_dim, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   variant == kernels::FlashVariant::wgmma
                       ? "flash_wgmma runs head_dim 128 only, with sm_90a code on a compute capability 9.0 device"
                       : "needs compute capability 8.0 or later and head_dim 64 or 128");
        continue;
      }
      launch = [&, variant](cudaStream_t s, int) {
        kernels::flash_attention_forward(variant, type, shape, q.get(), k.get(), v.get(), o.get(), s);
        return cudaSuccess;
      };
    }
    const auto verify = [&]() -> std::string {
      ctx.poison(o);
      check(launch(ctx.stream(), 0), "attention");
      ctx.wait("attention");
      const std::uint64_t nonfinite = kernels::count_nonfinite(type, o.get(), q_elements, ctx.stream());
      const double error = sampled_attention_error(ctx, *c, samples, o);
      if (nonfinite != 0 || !(error <= tolerance)) {
        throw VerificationFailed(fmt::format(
            "{} non-finite (unwritten) outputs; {} sampled rows vs float64 host: error {:.2e} (tolerance {:.0e})",
            nonfinite, samples.rows.size(), error, tolerance));
      }
      return fmt::format("{} sampled rows vs float64 host: error {:.2e} (tolerance {:.0e}); every output finite",
                         samples.rows.size(), error, tolerance);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
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
      [&](std::span<const GemmCase* const> problem) {
        guarded_problem(
            ctx, recorder, problem, [](const GemmCase& c) { return compute::make_result(c); },
            [&] { run_gemm_problem(ctx, problem, quick, seed, recorder); });
      });

  for_each_problem(
      selection.attention,
      [](const AttentionCase& a, const AttentionCase& b) {
        return a.dtype == b.dtype && a.batch == b.batch && a.heads == b.heads && a.kv_heads == b.kv_heads &&
               a.seq == b.seq && a.head_dim == b.head_dim && a.causal == b.causal;
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
}

}  // namespace roofline::bench::cuda
