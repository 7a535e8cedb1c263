// The compute suite's attention forward (standard through cuBLAS, flash on mma.sync and wgmma):
// sampled rows against a float64 host attention, and the whole output for non-finite (unwritten)
// elements.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "compute_family.hpp"
#include "kernels/attention.hpp"
#include "kernels/verify.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda::compute_family {
namespace {

using compute::AttentionCase;
using compute::AttentionImpl;

kernels::FlashVariant flash_variant_of(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::flash_w8r16: return kernels::FlashVariant::warps8_rows16;
    case AttentionImpl::flash_w4r32: return kernels::FlashVariant::warps4_rows32;
    default: return kernels::FlashVariant::wgmma;
  }
}

kernels::AttentionShape kernel_shape(const AttentionCase& c) {
  kernels::AttentionShape s;
  s.batch = static_cast<int>(c.batch);
  s.heads = static_cast<int>(c.heads);
  s.kv_heads = static_cast<int>(c.kv_heads);
  s.seq = static_cast<int>(c.seq);
  s.head_dim = static_cast<int>(c.head_dim);
  s.head_dim_v = static_cast<int>(c.head_dim_v);
  s.causal = c.causal;
  return s;
}

// The per-tensor descales of the FP8 inputs: far from 1 and from each other, so that a kernel that drops
// or swaps one fails the check (q and k: the scores 1.5x sharper; v: O a quarter); powers of two and
// 3, exact in fp32. 16-bit inputs take none.
constexpr kernels::Fp8Descale fp8_descale{0.5F, 3.0F, 0.25F};

struct AttentionSamples {
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (batch x heads index, query)
  std::vector<double> reference;                            // rows x V's width
};

// The width of V and O.
std::int64_t value_dim(const AttentionCase& c) {
  return c.head_dim_v == 0 ? c.head_dim : c.head_dim_v;
}

// Float64 attention of sampled query rows (the first and last included) from the device inputs, each
// tensor's values times its descale.
AttentionSamples sample_attention(Context& ctx, kernels::StorageFormat format, const AttentionCase& c,
                                  const DeviceBuffer& q, const DeviceBuffer& k, const DeviceBuffer& v,
                                  const kernels::Fp8Descale& descale, int count, std::uint64_t seed) {
  const std::int64_t n = c.seq;
  const std::int64_t d = c.head_dim;
  const std::int64_t dv = value_dim(c);
  const std::int64_t bh = c.batch * c.heads;
  AttentionSamples samples;
  samples.rows = {{0, 0}, {bh - 1, n - 1}, {bh / 2, n / 2}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.rows.size()) < count) {
    samples.rows.emplace_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bh)),
                              static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)));
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d)) * descale.q * descale.k;
  const std::int64_t group = c.heads / c.kv_heads;
  std::map<std::int64_t, std::pair<std::vector<float>, std::vector<float>>> kv_cache;  // kv head -> (K, V)
  for (const auto& [row_bh, i] : samples.rows) {
    const std::int64_t kv_index = (row_bh / c.heads) * c.kv_heads + (row_bh % c.heads) / group;
    auto found = kv_cache.find(kv_index);
    if (found == kv_cache.end()) {
      found = kv_cache
                  .emplace(kv_index,
                           std::make_pair(download_values(ctx, format, k, as_size(kv_index * n * d), as_size(n * d)),
                                          download_values(ctx, format, v, as_size(kv_index * n * dv), as_size(n * dv))))
                  .first;
    }
    const std::vector<float>& kh = found->second.first;
    const std::vector<float>& vh = found->second.second;
    const std::vector<float> qrow = download_values(ctx, format, q, as_size((row_bh * n + i) * d), as_size(d));
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
    std::vector<double> out(as_size(dv), 0.0);
    for (std::int64_t j = 0; j < keys; ++j) {
      for (std::int64_t t = 0; t < dv; ++t) out[as_size(t)] += score[as_size(j)] * vh[as_size(j * dv + t)];
    }
    for (double x : out) samples.reference.push_back(x / total * descale.v);
  }
  return samples;
}

double sampled_attention_error(Context& ctx, kernels::StorageFormat format, const AttentionCase& c,
                               const AttentionSamples& samples, const DeviceBuffer& o) {
  const std::int64_t n = c.seq;
  const std::int64_t d = value_dim(c);
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t r = 0; r < samples.rows.size(); ++r) {
    const auto [bh, i] = samples.rows[r];
    const std::vector<float> got = download_values(ctx, format, o, as_size((bh * n + i) * d), as_size(d));
    for (std::int64_t t = 0; t < d; ++t) {
      if (!std::isfinite(got[as_size(t)])) return INFINITY;
      const double ref = samples.reference[r * as_size(d) + as_size(t)];
      diff2 += (got[as_size(t)] - ref) * (got[as_size(t)] - ref);
      ref2 += ref * ref;
    }
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

}  // namespace

void run_attention_problem(Context& ctx, std::span<const AttentionCase* const> cases, bool quick, std::uint64_t seed,
                           Recorder& recorder) {
  const AttentionCase& p = *cases.front();
  const bool fp8 = p.dtype == DType::fp8_e4m3;
  const FormatChoice format = fp8 ? choose_format(p.dtype, kernels::flash_fp8_formats, "FP8 flash attention")
                                  : choose_format(p.dtype, kernels::attention_formats, "attention");
  if (!format.format) {
    for (const AttentionCase* c : cases)
      record_not(recorder, compute::make_result(*c), Disposition::not_supported, format.unsupported);
    return;
  }
  const kernels::StorageFormat type = *format.format;
  const kernels::AttentionShape shape = kernel_shape(p);
  const std::size_t q_elements = as_size(p.batch * p.heads * p.seq * p.head_dim);
  const std::size_t o_elements = as_size(p.batch * p.heads * p.seq * value_dim(p));
  const std::size_t kv_elements = as_size(p.batch * p.kv_heads * p.seq * p.head_dim);
  const std::size_t v_elements = as_size(p.batch * p.kv_heads * p.seq * value_dim(p));
  const std::size_t element_bytes = as_size(kernels::bytes_of(type));
  const kernels::StorageFormat output_type = fp8 ? kernels::flash_fp8_output_format : type;
  const kernels::Fp8Descale descale = fp8 ? fp8_descale : kernels::Fp8Descale{};
  DeviceBuffer q = ctx.allocate(q_elements * element_bytes);
  DeviceBuffer k = ctx.allocate(kv_elements * element_bytes);
  DeviceBuffer v = ctx.allocate(v_elements * element_bytes);
  DeviceBuffer o = ctx.allocate(o_elements * as_size(kernels::bytes_of(output_type)));
  DeviceBuffer transposed_v;  // FP8: V^T, written by each call
  if (fp8) transposed_v = ctx.allocate(kernels::flash_fp8_workspace_bytes(shape));
  const std::uint64_t problem_seed =
      seed_of(seed, 3, static_cast<std::uint64_t>(p.seq * 977 + p.batch * 31 + p.heads * 7 + p.kv_heads + p.head_dim));
  // |q| up to 2: scores of std ~0.7 give softmax rows far from uniform, so the running max matters.
  kernels::fill_uniform(type, q.get(), q_elements, problem_seed, 2.0F, ctx.stream());
  kernels::fill_uniform(type, k.get(), kv_elements, problem_seed + 1, 1.0F, ctx.stream());
  kernels::fill_uniform(type, v.get(), v_elements, problem_seed + 2, 1.0F, ctx.stream());
  const AttentionSamples samples = sample_attention(ctx, type, p, q, k, v, descale, quick ? 16 : 24, problem_seed + 3);
  const double tolerance = fp8 ? fp8_attention_tolerance : tolerance_for(type);

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
    } else if (fp8) {
      if (!kernels::flash_fp8_supported(shape.head_dim, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "FP8 flash_wgmma runs head_dim 128 and 256, with sm_90a code on a compute capability 9.0 device");
        continue;
      }
      launch = [&](cudaStream_t s, int) {
        kernels::flash_fp8_forward(shape, descale, q.get(), k.get(), v.get(), o.get(), transposed_v.get(), s);
        return cudaSuccess;
      };
    } else {
      const kernels::FlashVariant variant = flash_variant_of(c->impl);
      if (!kernels::flash_variant_supported(variant, shape.head_dim, ctx.device().index, shape.head_dim_v)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   variant == kernels::FlashVariant::wgmma
                       ? "flash_wgmma runs head_dim 64, 128 and 256 (and 192 with V 128), with sm_90a code on a "
                         "compute capability 9.0 device"
                       : "needs compute capability 8.0 or later and head_dim 64 or 128 (V as wide)");
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
      const std::uint64_t nonfinite = kernels::count_nonfinite(output_type, o.get(), o_elements, ctx.stream());
      const double error = sampled_attention_error(ctx, output_type, *c, samples, o);
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

}  // namespace roofline::bench::cuda::compute_family
