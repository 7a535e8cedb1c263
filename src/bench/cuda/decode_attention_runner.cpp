// The memory suite's decode attention: one new token per sequence against its K/V caches (bf16, or
// e4m3 with a per-tensor scale), checked against the fp32 reference, timed with the caches rotated
// so that every launch reads them from HBM.
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

// The per-tensor scale of the fp8 caches: 3 x 2^-8, not a power of two (a kernel that skips it fails),
// with 2 significant bits, so that stored x scale is exact in bf16 (the reference reads that); the
// unit-variance history then spans stored magnitudes up to 148 of e4m3's 448.
constexpr float fp8_kv_test_scale = 0.01171875F;

// One case: random bf16 qkv rows and K/V caches, the new token's k and v written into the last
// position (as the layer's kv_write stage does), checked against the fp32 reference, then timed
// with launches rotating through copies of the caches so that every launch reads them from HBM.
// An fp8 cache is quantised from such a bf16 history (quantize_kv_fp8), whose dequantised values
// the reference reads; the new token's k and v are made representable first, so that the
// reference's key context - 1 (from qkv) is the one in the cache.
void run_decode_attention_case(Context& ctx, const Case& c, const Sizes& sizes, std::uint64_t seed,
                               Recorder& recorder) {
  const kernels::StorageFormat type = kernels::StorageFormat::bf16;  // the decoder layer's activations
  const AttentionShape shape = memory::decode_attention_shape(c);
  const bool fp8 = shape.kv == DType::fp8_e4m3;
  const kernels::StorageFormat cache_format = fp8 ? kernels::StorageFormat::fp8_e4m3 : type;
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
  const std::size_t cache_bytes = as_size(cache_elements) * as_size(kernels::bytes_of(cache_format));
  const int copies = memory::rotation_count(static_cast<std::int64_t>(result.cost.bytes()), sizes);
  // Fails as NotEnoughMemory (the case is not run) when the copies do not fit.
  DeviceBuffer k_cache = ctx.allocate(cache_bytes * as_size(copies));
  DeviceBuffer v_cache = ctx.allocate(cache_bytes * as_size(copies));
  // fp8: one bf16 history at a time, quantised into each copy; copy 0's stays for the reference.
  DeviceBuffer k_history = fp8 ? ctx.allocate(as_size(cache_elements) * 2) : DeviceBuffer{};
  DeviceBuffer v_history = fp8 ? ctx.allocate(as_size(cache_elements) * 2) : DeviceBuffer{};
  DeviceBuffer kv_scale = ctx.allocate(sizeof(float));
  DeviceBuffer qkv = ctx.allocate(as_size(qkv_elements) * 2);
  DeviceBuffer qkv_f32 = ctx.allocate(as_size(qkv_elements) * 4);
  DeviceBuffer out = ctx.allocate(as_size(out_elements) * 2);
  DeviceBuffer reference = ctx.allocate(as_size(out_elements) * 4);
  const kernels::DecodeAttentionPlan plan =
      kernels::decode_attention_plan(batch, layout, context, ctx.device().sms, cache_format);
  DeviceBuffer workspace = ctx.allocate(plan.workspace_bytes);
  // Unit-variance queries, keys and values (uniform in +-sqrt(3)), as the layer's history.
  constexpr float unit = 1.7320508F;
  kernels::fill_uniform(type, qkv.get(), as_size(qkv_elements), seed_of(seed, Stream::attention_qkv), unit,
                        ctx.stream());
  const auto cache_copy = [&](const DeviceBuffer& cache, int copy) {
    return static_cast<void*>(cache.as<unsigned char>() + cache_bytes * as_size(copy));
  };
  if (fp8) {
    ctx.upload(kv_scale, &fp8_kv_test_scale, sizeof(float));
    // qkv through e4m3 and back (its fp8 image lands in the k cache, overwritten below): the new
    // token's k and v are then values the fp8 cache holds exactly.
    kernels::quantize_kv_fp8(type, qkv.get(), k_cache.get(), as_size(qkv_elements), kv_scale.as<float>(), ctx.stream());
    for (int copy = copies - 1; copy >= 0; --copy) {
      const auto sub = static_cast<std::uint64_t>(copy);
      kernels::fill_uniform(type, k_history.get(), as_size(cache_elements), seed_of(seed, Stream::attention_k, sub),
                            unit, ctx.stream());
      kernels::fill_uniform(type, v_history.get(), as_size(cache_elements), seed_of(seed, Stream::attention_v, sub),
                            unit, ctx.stream());
      kernels::kv_append(type, qkv.get(), k_history.get(), v_history.get(), batch, layout, 1, context, context - 1,
                         ctx.stream());
      kernels::quantize_kv_fp8(type, k_history.get(), cache_copy(k_cache, copy), as_size(cache_elements),
                               kv_scale.as<float>(), ctx.stream());
      kernels::quantize_kv_fp8(type, v_history.get(), cache_copy(v_cache, copy), as_size(cache_elements),
                               kv_scale.as<float>(), ctx.stream());
    }
  } else {
    kernels::fill_uniform(type, k_cache.get(), as_size(cache_elements) * as_size(copies),
                          seed_of(seed, Stream::attention_k), unit, ctx.stream());
    kernels::fill_uniform(type, v_cache.get(), as_size(cache_elements) * as_size(copies),
                          seed_of(seed, Stream::attention_v), unit, ctx.stream());
    // The new token's k and v into position context - 1 of every copy: each launch then attends
    // to the same keys as the reference, which takes key context - 1 from qkv.
    for (int copy = 0; copy < copies; ++copy) {
      kernels::kv_append(type, qkv.get(), cache_copy(k_cache, copy), cache_copy(v_cache, copy), batch, layout, 1,
                         context, context - 1, ctx.stream());
    }
  }
  kernels::to_float(type, qkv.get(), qkv_f32.as<float>(), qkv_elements, ctx.stream());
  ctx.wait("decode attention inputs");

  const Launch launch = [&, batch, context, copies](cudaStream_t s, int iteration) {
    const kernels::KvCache cache{cache_format, cache_copy(k_cache, iteration % copies),
                                 cache_copy(v_cache, iteration % copies), fp8 ? kv_scale.as<float>() : nullptr};
    kernels::decode_attention(type, qkv.get(), cache, out.get(), workspace.get(), batch, layout, context, plan, s);
    return cudaGetLastError();
  };
  const auto verify = [&]() -> std::string {
    ctx.poison(out);
    check(launch(ctx.stream(), 0), "decode attention");
    // The reference reads the 16-bit history an fp8 cache stands for (exactly its values).
    const void* reference_k = fp8 ? k_history.get() : k_cache.get();
    const void* reference_v = fp8 ? v_history.get() : v_cache.get();
    kernels::decode_attention_reference(qkv_f32.as<float>(), type, reference_k, reference_v, reference.as<float>(),
                                        batch, layout, context, ctx.stream());
    ctx.wait("decode attention");
    const std::vector<float> got = download_values(ctx, type, out, 0, as_size(out_elements));
    std::vector<float> want(as_size(out_elements));
    ctx.download(want.data(), reference, want.size() * 4);
    const ErrorNorm e = relative_error(got, want);
    const std::string cache_note =
        fp8 ? fmt::format(" (e4m3 cache, scale {}, against its dequantised bf16 history)", fp8_kv_test_scale) : "";
    const std::string what = fmt::format(
        "{} sequences x {} heads vs the fp32 reference{}: normwise error {:.2e} (tol {:.0e}), {} non-finite outputs; "
        "{} splits of {} key tiles ({} blocks per SM resident)",
        batch, layout.heads, cache_note, e.error, kernels::attention_check_tolerance, e.nonfinite, plan.splits,
        plan.tiles_per_split, plan.blocks_per_sm);
    if (!(e.error <= kernels::attention_check_tolerance)) throw VerificationFailed(what);
    if (copies == 1) return what;
    return fmt::format(
        "{}; launches rotate through {} copies of the K/V caches ({:.0f} MB) so that every read "
        "comes from HBM",
        what, copies, static_cast<double>(cache_bytes) * 2 * copies / 1e6);
  };
  recorder.record(run_case(ctx, std::move(result), verify, launch, copies));
}

}  // namespace

void run_decode_attention(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                          Recorder& recorder) {
  run_each_case(ctx, recorder, cases, sizes,
                [&](const Case& c) { run_decode_attention_case(ctx, c, sizes, seed, recorder); });
}

}  // namespace roofline::bench::cuda::memory_family
