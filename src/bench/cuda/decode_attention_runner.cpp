// The memory suite's decode attention: one new token per sequence against its K/V caches, checked
// against the fp32 reference, timed with the caches rotated so that every launch reads them from HBM.
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
using memory::Kernel;
using memory::Sizes;
using memory::Variant;

// One case: random bf16 qkv rows and K/V caches, the new token's k and v written into the last
// position (as the layer's kv_write stage does), checked against the fp32 reference, then timed
// with launches rotating through copies of the caches so that every launch reads them from HBM.
void run_decode_attention_case(Context& ctx, const Case& c, const Sizes& sizes, std::uint64_t seed,
                               Recorder& recorder) {
  const kernels::StorageFormat type = kernels::StorageFormat::bf16;  // the decoder layer's activations and KV cache
  const AttentionShape shape = memory::decode_attention_shape(c);
  const kernels::HeadLayout layout{static_cast<int>(shape.heads), static_cast<int>(shape.kv_heads),
                                   static_cast<int>(shape.head_dim)};
  const int batch = static_cast<int>(shape.batch);
  const int context = static_cast<int>(shape.kv_seq);
  BenchmarkResult result = memory::make_result(c, sizes);
  if (const char* why = kernels::decode_attention_unsupported(layout, context)) {
    result.disposition = Disposition::not_supported;
    result.detail = why;
    recorder.record(std::move(result));
    return;
  }
  const std::int64_t qkv_elements = shape.batch * layout.qkv_width();
  const std::int64_t out_elements = shape.batch * shape.heads * shape.head_dim;
  const std::int64_t cache_elements = shape.batch * shape.kv_heads * shape.kv_seq * shape.head_dim;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(result.cost.bytes()), sizes);
  // Fails as NotEnoughMemory (the case is not run) when the copies do not fit.
  DeviceBuffer k_cache = ctx.allocate(as_size(cache_elements) * 2 * as_size(copies));
  DeviceBuffer v_cache = ctx.allocate(as_size(cache_elements) * 2 * as_size(copies));
  DeviceBuffer qkv = ctx.allocate(as_size(qkv_elements) * 2);
  DeviceBuffer qkv_f32 = ctx.allocate(as_size(qkv_elements) * 4);
  DeviceBuffer out = ctx.allocate(as_size(out_elements) * 2);
  DeviceBuffer reference = ctx.allocate(as_size(out_elements) * 4);
  const kernels::DecodeAttentionPlan plan = kernels::decode_attention_plan(batch, layout, context, ctx.device().sms);
  DeviceBuffer workspace = ctx.allocate(plan.workspace_bytes);
  // Unit-variance queries, keys and values (uniform in +-sqrt(3)), as the layer's history.
  constexpr float unit = 1.7320508F;
  kernels::fill_uniform(type, qkv.get(), as_size(qkv_elements), seed_of(seed, Stream::attention_qkv), unit,
                        ctx.stream());
  kernels::fill_uniform(type, k_cache.get(), as_size(cache_elements) * as_size(copies),
                        seed_of(seed, Stream::attention_k), unit, ctx.stream());
  kernels::fill_uniform(type, v_cache.get(), as_size(cache_elements) * as_size(copies),
                        seed_of(seed, Stream::attention_v), unit, ctx.stream());
  // The new token's k and v into position context - 1 of every copy: each launch then attends
  // to the same keys as the reference, which takes key context - 1 from qkv.
  for (int copy = 0; copy < copies; ++copy) {
    const std::size_t offset = as_size(cache_elements) * as_size(copy);
    kernels::kv_append(type, qkv.get(), k_cache.as<std::uint16_t>() + offset, v_cache.as<std::uint16_t>() + offset,
                       batch, layout, 1, context, context - 1, ctx.stream());
  }
  kernels::to_float(type, qkv.get(), qkv_f32.as<float>(), qkv_elements, ctx.stream());
  ctx.wait("decode attention inputs");

  const Launch launch = [&, batch, context, copies](cudaStream_t s, int iteration) {
    const std::size_t offset = as_size(cache_elements) * as_size(iteration % copies);
    kernels::decode_attention(type, qkv.get(), k_cache.as<std::uint16_t>() + offset,
                              v_cache.as<std::uint16_t>() + offset, out.get(), workspace.get(), batch, layout, context,
                              plan, s);
    return cudaGetLastError();
  };
  const auto verify = [&]() -> std::string {
    ctx.poison(out);
    check(launch(ctx.stream(), 0), "decode attention");
    kernels::decode_attention_reference(qkv_f32.as<float>(), type, k_cache.get(), v_cache.get(), reference.as<float>(),
                                        batch, layout, context, ctx.stream());
    ctx.wait("decode attention");
    std::vector<std::uint16_t> got_bits(as_size(out_elements));
    std::vector<float> want(as_size(out_elements));
    ctx.download(got_bits.data(), out, got_bits.size() * 2);
    ctx.download(want.data(), reference, want.size() * 4);
    std::vector<float> got(got_bits.size());
    std::transform(got_bits.begin(), got_bits.end(), got.begin(),
                   [type](std::uint16_t bits) { return half16_to_float(type, bits); });
    const ErrorNorm e = relative_error(got, want);
    const std::string what = fmt::format(
        "{} sequences x {} heads vs the fp32 reference: normwise error {:.2e} (tol {:.0e}), {} non-finite outputs; "
        "{} splits of {} key tiles",
        batch, layout.heads, e.error, kernels::attention_check_tolerance, e.nonfinite, plan.splits,
        plan.tiles_per_split);
    if (!(e.error <= kernels::attention_check_tolerance)) throw VerificationFailed(what);
    if (copies == 1) return what;
    return fmt::format(
        "{}; launches rotate through {} copies of the K/V caches ({:.0f} MB) so that every read "
        "comes from HBM",
        what, copies, static_cast<double>(cache_elements) * 4 * copies / 1e6);
  };
  recorder.record(run_case(ctx, std::move(result), verify, launch, copies));
}

}  // namespace

void run_decode_attention(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                          Recorder& recorder) {
  for (const Case* c : cases) {
    guarded_group(ctx, recorder, std::span(&c, 1), sizes, [&] {
      if (ctx.health().lost) throw CudaError("the CUDA context was lost", cudaErrorUnknown);
      run_decode_attention_case(ctx, *c, sizes, seed, recorder);
    });
  }
}

}  // namespace roofline::bench::cuda::memory_family
