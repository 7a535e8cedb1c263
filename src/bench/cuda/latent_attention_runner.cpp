// The memory suite's latent attention: DeepSeek-V3's MLA at decode in its absorbed form, one query
// per sequence over the shared latent cache, checked against the fp32 reference, timed with the
// cache rotated so that every launch reads it from HBM.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kernels/layer.hpp"
#include "kernels/verify.hpp"
#include "memory_family.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda::memory_family {
namespace {

using memory::Case;
using memory::Sizes;

void run_latent_attention_case(Context& ctx, const Case& c, const Sizes& sizes, std::uint64_t seed,
                               Recorder& recorder) {
  const kernels::StorageFormat type = kernels::StorageFormat::bf16;
  const LatentAttentionShape shape = memory::latent_attention_shape(c);
  const kernels::LatentLayout layout{static_cast<int>(shape.heads), static_cast<int>(shape.kv_lora_rank),
                                     static_cast<int>(shape.qk_rope_head_dim)};
  const int batch = static_cast<int>(shape.batch);
  const int context = static_cast<int>(shape.kv_seq);
  const auto scale = static_cast<float>(memory::latent_attention_softmax_scale);
  BenchmarkResult result = memory::make_result(c, sizes);
  if (const char* why = kernels::latent_attention_unsupported(layout, context)) {
    result.disposition = Disposition::not_supported;
    result.detail = why;
    recorder.record(std::move(result));
    return;
  }
  const std::int64_t row = shape.kv_lora_rank + shape.qk_rope_head_dim;
  const std::int64_t q_elements = shape.batch * shape.heads * row;
  const std::int64_t out_elements = shape.batch * shape.heads * shape.kv_lora_rank;
  const std::int64_t cache_elements = shape.batch * shape.kv_seq * row;
  const std::size_t cache_bytes = as_size(cache_elements) * 2;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(result.cost.bytes()), sizes);
  // Fails as NotEnoughMemory (the case is not run) when the copies do not fit.
  DeviceBuffer cache = ctx.allocate(cache_bytes * as_size(copies));
  DeviceBuffer q = ctx.allocate(as_size(q_elements) * 2);
  DeviceBuffer q_f32 = ctx.allocate(as_size(q_elements) * 4);
  DeviceBuffer out = ctx.allocate(as_size(out_elements) * 2);
  DeviceBuffer reference = ctx.allocate(as_size(out_elements) * 4);
  const kernels::LatentAttentionPlan plan = kernels::latent_attention_plan(batch, layout, context, ctx.device().sms);
  DeviceBuffer workspace = ctx.allocate(std::max<std::size_t>(plan.workspace_bytes, 16));
  // Unit-variance queries and cache rows (uniform in +-sqrt(3)): at the scale 1 / sqrt(192), the
  // scores' spread is sqrt(576 / 192), so that the softmax neither flattens nor collapses to one key.
  constexpr float unit = 1.7320508F;
  kernels::fill_uniform(type, q.get(), as_size(q_elements), seed_of(seed, Stream::attention_qkv), unit, ctx.stream());
  kernels::fill_uniform(type, cache.get(), as_size(cache_elements) * as_size(copies),
                        seed_of(seed, Stream::attention_k), unit, ctx.stream());
  kernels::to_float(type, q.get(), q_f32.as<float>(), q_elements, ctx.stream());
  ctx.wait("latent attention inputs");
  const auto cache_copy = [&](int copy) {
    return static_cast<const void*>(cache.as<unsigned char>() + cache_bytes * as_size(copy));
  };

  const Launch launch = [&, batch, context, copies](cudaStream_t s, int iteration) {
    kernels::latent_attention(type, q.get(), cache_copy(iteration % copies), out.get(), workspace.get(), batch, layout,
                              context, scale, plan, s);
    return cudaGetLastError();
  };
  const auto verify = [&]() -> std::string {
    ctx.poison(out);
    check(launch(ctx.stream(), 0), "latent attention");
    kernels::latent_attention_reference(q_f32.as<float>(), type, cache_copy(0), reference.as<float>(), batch, layout,
                                        context, scale, ctx.stream());
    ctx.wait("latent attention");
    const std::vector<float> got = download_values(ctx, type, out, 0, as_size(out_elements));
    std::vector<float> want(as_size(out_elements));
    ctx.download(want.data(), reference, want.size() * 4);
    const ErrorNorm e = relative_error(got, want);
    const std::string what = fmt::format(
        "{} sequences x {} heads vs the fp32 reference: normwise error {:.2e} (tol {:.0e}), {} non-finite outputs; "
        "{} splits of {} key tiles, {}-head blocks on the {} kernel",
        batch, layout.heads, e.error, kernels::attention_check_tolerance, e.nonfinite, plan.splits,
        plan.tiles_per_split, plan.heads_per_block, kernels::latent_kernel_name(plan.kernel));
    if (!(e.error <= kernels::attention_check_tolerance)) throw VerificationFailed(what);
    if (copies == 1) return what;
    return fmt::format(
        "{}; launches rotate through {} copies of the cache ({:.0f} MB) so that every read comes from HBM", what,
        copies, static_cast<double>(cache_bytes) * copies / 1e6);
  };
  recorder.record(run_case(ctx, std::move(result), verify, launch, copies));
}

}  // namespace

void run_latent_attention(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                          Recorder& recorder) {
  run_each_case(ctx, recorder, cases, sizes,
                [&](const Case& c) { run_latent_attention_case(ctx, c, sizes, seed, recorder); });
}

}  // namespace roofline::bench::cuda::memory_family
