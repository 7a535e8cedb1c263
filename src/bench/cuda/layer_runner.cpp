// Runs the decoder-layer suite (roofline/layer_suite.hpp): a LLaMA-3-70B layer at decode and
// prefill, built from the project's kernels (or cuBLAS / cuBLASLt for the matrix products), in the
// case's formats (bf16, or FP8: e4m3 weights and cache, W8A8 projections where the description
// says). The stages are the ops of the layer's description (layer::stages), each launched by the
// kernel its kind maps to (layer::layer_kernel_of, and the builders table below), at the op's own
// shape and in the formats the op states (an op that writes e4m3 gets its kernel's e4m3 output).
//
// Per case:
//   1. the layer's stages are queued once on poisoned buffers and the output is checked against an
//      fp32 reference pipeline on the GPU (cuBLAS fp32 GEMMs on fp32 copies of the same weights, and
//      simple reference kernels for the residual adds, RMSNorm, rotary embedding, attention and
//      SwiGLU) on sampled token rows (all rows at decode): the attention output (through the norm,
//      the projection, rope and the cache append), the O projection, the residual stream after
//      ffn_norm and the FFN's output must each be within a normwise tolerance. FP8: the fp32
//      weights are the dequantised e4m3 ones and the reference rounds to e4m3 where the layer
//      does (round_to_e4m3_reference), so that the check measures the kernels, not the format;
//   2. the whole layer is timed as the harness times any case (a CUDA graph of the stage sequence,
//      replayed);
//   3. each stage is timed inside the layer: the sequence launched directly, an event before and
//      after every stage, repeated; per stage the median of its samples.
#include "layer_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "kernels/attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemv.hpp"
#include "kernels/layer.hpp"
#include "kernels/verify.hpp"
#include "memory_runner.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "roofline/bench/testdata.hpp"
#include "runner_support.hpp"

namespace roofline::bench::cuda {
namespace {

using layer::Case;
using layer::LayerKernel;
using layer::Linear;
using layer::Phase;
using layer::StagePlan;

constexpr double attention_tolerance = kernels::attention_check_tolerance;
constexpr double projection_tolerance = 2e-2;
constexpr double output_tolerance = 3e-2;
constexpr int prefill_sampled_rows = 32;

// FP8: e4m3 keeps 3 mantissa bits, so rounding to nearest moves a value by at most 2^-4 of itself,
// and a tensor by at most 2^-4 normwise. The reference rounds at the same points, so what is left
// are the values the two pipelines (16-bit and fp32 inputs, apart by the bf16 tolerances) round to
// neighbouring e4m3 values: each off by one step, at most 2^-3 of itself, and only those within the
// inputs' difference of a rounding boundary, a small share. Each e4m3 rounding upstream of a checked
// tensor is allowed 2^-4 normwise on top of the bf16 tolerance: loose for the format, and still far
// below what a wrong scale (a factor of 2: 100%) or layout (~140%) gives.
constexpr double e4m3_rounding = 0.0625;

// The static per-tensor scales of the e4m3 activations and cache (real = stored x scale), fixed
// offline as FP8 checkpoints fix theirs: powers of two (exact in every format, so the scaled values
// round only once) with 448 x scale above each tensor's largest value for these inputs. The
// normalised rows: |x + r| / rms <= sqrt(6) for x, r uniform in +-sqrt(3), times gamma <= 1, under
// 7 = 448 / 64; attention outputs are averages of values (the cache uniform in +-sqrt(3), the new
// ones about N(0, 0.6)), and the new keys after rope within sqrt(2) of theirs: under 7 too; SwiGLU's
// silu(g) u of g, u about N(0, 0.6) over 2.3e8 elements stays under 28 = 448 / 16.
enum class E4m3Tensor : std::uint8_t { norm, attention, swiglu, kv };
constexpr std::array<float, 4> e4m3_scales{1.0F / 64, 1.0F / 64, 1.0F / 16, 1.0F / 64};  // by E4m3Tensor

std::uint64_t seed_of(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t sub) {
  return testdata::mix64(run_seed ^ (stream << 56) ^ (sub * 0x9E3779B97F4A7C15ULL));
}

kernels::HeadLayout head_layout(const ModelSpec& m) {
  return {static_cast<int>(m.attention.heads), static_cast<int>(m.attention.kv_heads),
          static_cast<int>(m.attention.head_dim)};
}

std::int64_t qkv_width(const ModelSpec& m) {
  return head_layout(m).qkv_width();
}

std::int64_t q_width(const ModelSpec& m) {
  return m.attention.heads * m.attention.head_dim;
}

// The layer's weights in one format, shared by the cases of that format: the projections as run
// (bf16, or e4m3 with one scale per matrix), and fp32 copies of the values the kernels multiply by
// for the reference (the e4m3 ones dequantised).
struct Weights {
  kernels::StorageFormat format = kernels::StorageFormat::bf16;
  DeviceBuffer gamma1, gamma2, qkv, o, gate_up, down;
  DeviceBuffer qkv_scale, o_scale, gate_up_scale, down_scale;  // e4m3: one float each (amax / 448)
  DeviceBuffer qkv_f32, o_f32, gate_up_f32, down_f32;
};

// The same bf16 fills for both formats (the seeds do not depend on it); e4m3 weights are those
// fills quantised with a per-tensor scale of max |W| / 448.
Weights make_weights(Context& ctx, const ModelSpec& m, std::uint64_t seed, kernels::StorageFormat format) {
  const kernels::StorageFormat type = kernels::StorageFormat::bf16;
  Weights w;
  w.format = format;
  const auto matrix = [&](std::int64_t out, std::int64_t in, std::uint64_t stream, DeviceBuffer& run,
                          DeviceBuffer& scale, DeviceBuffer& full) {
    const std::size_t n = as_size(out * in);
    DeviceBuffer half = ctx.allocate(n * 2);
    full = ctx.allocate(n * 4);
    // Uniform in +-sqrt(3 / in): each output of a unit-variance input has about unit variance.
    kernels::fill_uniform(type, half.get(), n, seed_of(seed, stream, 0),
                          static_cast<float>(std::sqrt(3.0 / static_cast<double>(in))), ctx.stream());
    if (format == kernels::StorageFormat::fp8_e4m3) {
      run = ctx.allocate(n);
      scale = ctx.allocate(sizeof(float));
      kernels::e4m3_scale_of(type, half.get(), static_cast<std::int64_t>(n), scale.as<float>(), ctx.stream());
      kernels::quantize_e4m3(type, half.get(), run.get(), static_cast<std::int64_t>(n), scale.as<float>(),
                             ctx.stream());
      kernels::dequantize_e4m3(run.get(), scale.as<float>(), full.as<float>(), static_cast<std::int64_t>(n),
                               ctx.stream());
      ctx.wait("e4m3 weights");  // before the bf16 fill is freed
    } else {
      kernels::to_float(type, half.get(), full.as<float>(), static_cast<std::int64_t>(n), ctx.stream());
      run = std::move(half);
    }
  };
  w.gamma1 = ctx.allocate(as_size(m.hidden) * 2);
  w.gamma2 = ctx.allocate(as_size(m.hidden) * 2);
  kernels::fill_uniform(type, w.gamma1.get(), as_size(m.hidden), seed_of(seed, 10, 1), 0.5F, 1.0F, ctx.stream());
  kernels::fill_uniform(type, w.gamma2.get(), as_size(m.hidden), seed_of(seed, 10, 2), 0.5F, 1.0F, ctx.stream());
  matrix(qkv_width(m), m.hidden, 11, w.qkv, w.qkv_scale, w.qkv_f32);
  matrix(m.hidden, q_width(m), 12, w.o, w.o_scale, w.o_f32);
  matrix(2 * m.ffn.intermediate, m.hidden, 13, w.gate_up, w.gate_up_scale, w.gate_up_f32);
  matrix(m.hidden, m.ffn.intermediate, 14, w.down, w.down_scale, w.down_f32);
  ctx.wait("layer weights");
  return w;
}

// A stage as the runner launches it.
struct StageRun {
  layer::StageKernel kernel;
  std::function<void(cudaStream_t)> launch;
};

// Host copies of rows of a 16-bit or fp32 device matrix.
std::vector<float> rows_of_half(Context& ctx, const DeviceBuffer& buffer, std::int64_t cols,
                                const std::vector<int>& rows) {
  std::vector<float> out;
  out.reserve(rows.size() * as_size(cols));
  std::vector<std::uint16_t> raw(as_size(cols));
  for (int r : rows) {
    ctx.wait("before download");
    check(cudaMemcpyAsync(raw.data(), buffer.as<std::uint16_t>() + as_size(r * cols), raw.size() * 2,
                          cudaMemcpyDeviceToHost, ctx.stream()),
          "download");
    ctx.wait("download");
    for (std::uint16_t bits : raw) out.push_back(testdata::bf16_bits_to_float(bits));
  }
  return out;
}

std::vector<float> download_floats(Context& ctx, const DeviceBuffer& buffer, std::size_t count) {
  std::vector<float> out(count);
  ctx.download(out.data(), buffer, count * 4);
  return out;
}

// Host copies of rows of an e4m3 device matrix of `total_rows`, as real values (x *scale).
std::vector<float> rows_of_e4m3(Context& ctx, const DeviceBuffer& buffer, const float* scale, std::int64_t total_rows,
                                std::int64_t cols, const std::vector<int>& rows) {
  DeviceBuffer values = ctx.allocate(as_size(total_rows * cols) * 4);
  kernels::dequantize_e4m3(buffer.get(), scale, values.as<float>(), total_rows * cols, ctx.stream());
  const std::vector<float> all = download_floats(ctx, values, as_size(total_rows * cols));
  std::vector<float> out;
  out.reserve(rows.size() * as_size(cols));
  for (int r : rows) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(r * cols);
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(cols));
  }
  return out;
}

class LayerCase {
 public:
  LayerCase(Context& ctx, const Case& c, const ModelSpec& m, const Weights& w, std::uint64_t seed)
      : ctx_(ctx),
        case_(c),
        model_(m),
        w_(w),
        layout_(head_layout(m)),
        tokens_(layer::tokens(c)),
        // cuBLASLt's FP8 GEMM takes m in multiples of 16: its cases hold (and multiply) padded rows.
        rows_(layer::quantized_linears(c) && c.linear == Linear::cublas ? compute::cublaslt_fp8_rows(tokens_)
                                                                        : tokens_),
        quantized_(layer::quantized_linears(c)),
        kv_e4m3_(c.formats.kv == DType::fp8_e4m3) {
    const kernels::StorageFormat type = kernels::StorageFormat::bf16;
    // Every activation buffer holds 16-bit rows; those a W8A8 GEMM reads hold e4m3 in their first half.
    const auto activations = [&](std::int64_t cols) { return ctx.allocate(as_size(rows_ * cols) * 2); };
    const std::int64_t ffn = m.ffn.intermediate;
    scales_ = ctx.upload_scalars(e4m3_scales);
    x_ = activations(m.hidden);
    r_ = activations(m.hidden);
    n1_ = activations(m.hidden);
    h1_ = activations(m.hidden);
    qkv_ = activations(qkv_width(m));
    attn_ = activations(q_width(m));
    o_ = activations(m.hidden);
    n2_ = activations(m.hidden);
    h2_ = activations(m.hidden);
    gu_ = activations(2 * ffn);
    act_ = activations(ffn);
    dn_ = activations(m.hidden);
    if (quantized_) attn_q_ = activations(q_width(m));
    // The previous layer's FFN output and the residual stream it adds to: unit variance.
    kernels::fill_uniform(type, x_.get(), as_size(tokens_ * m.hidden), seed_of(seed, 20, 0), 1.7320508F, ctx.stream());
    kernels::fill_uniform(type, r_.get(), as_size(tokens_ * m.hidden), seed_of(seed, 23, 0), 1.7320508F, ctx.stream());
    if (c.phase == Phase::decode) {
      const std::size_t cache = as_size(c.batch * layout_.kv_heads * c.context * layout_.head_dim);
      k_cache_ = ctx.allocate(cache * (kv_e4m3_ ? 1 : 2));
      v_cache_ = ctx.allocate(cache * (kv_e4m3_ ? 1 : 2));
      // The history: unit-variance keys and values (uniform in +-sqrt(3)), quantised into an e4m3 cache.
      const auto history = [&](DeviceBuffer& into, std::uint64_t stream) {
        if (!kv_e4m3_) {
          kernels::fill_uniform(type, into.get(), cache, seed_of(seed, stream, 0), 1.7320508F, ctx.stream());
          return;
        }
        DeviceBuffer half = ctx.allocate(cache * 2);
        kernels::fill_uniform(type, half.get(), cache, seed_of(seed, stream, 0), 1.7320508F, ctx.stream());
        kernels::quantize_e4m3(type, half.get(), into.get(), static_cast<std::int64_t>(cache), scale_of(E4m3Tensor::kv),
                               ctx.stream());
        ctx.wait("e4m3 cache");  // before the bf16 fill is freed
      };
      history(k_cache_, 21);
      history(v_cache_, 22);
      plan_ = kernels::decode_attention_plan(
          static_cast<int>(c.batch), layout_, static_cast<int>(c.context), ctx.device().sms,
          kv_e4m3_ ? kernels::StorageFormat::fp8_e4m3 : kernels::StorageFormat::bf16);
      workspace_ = ctx.allocate(plan_.workspace_bytes);
    } else {
      // The prompt's cache: head-major K and V, which the flash kernel reads, with head-major Q.
      q_heads_ = ctx.allocate(as_size(tokens_ * q_width(m)) * 2);
      k_cache_ = ctx.allocate(as_size(tokens_ * layout_.kv_heads * layout_.head_dim) * 2);
      v_cache_ = ctx.allocate(as_size(tokens_ * layout_.kv_heads * layout_.head_dim) * 2);
      o_heads_ = ctx.allocate(as_size(tokens_ * q_width(m)) * 2);
    }
    ctx.wait("layer inputs");
    for (const StagePlan& plan : layer::stages(c)) {
      const std::optional<LayerKernel> kernel = layer::layer_kernel_of(plan.op.kind);
      if (!kernel)
        throw kernels::KernelError(fmt::format("the layer has no kernel for a {} op", name_of(plan.op.kind)));
      stages_.push_back((this->*builders[static_cast<std::size_t>(*kernel)])(plan));
    }
  }

  [[nodiscard]] const std::vector<StageRun>& stages() const { return stages_; }

  void run_all(cudaStream_t s) const {
    for (const StageRun& stage : stages_) stage.launch(s);
  }

  // Queues the layer once on poisoned intermediates and checks it against the fp32 reference.
  std::string verify() {
    for (const DeviceBuffer* b : {&n1_, &h1_, &qkv_, &attn_, &o_, &n2_, &h2_, &gu_, &act_, &dn_}) ctx_.poison(*b);
    if (quantized_) ctx_.poison(attn_q_);
    // At prefill the cache and the head-major tensors are the step's own outputs (at decode the
    // cache holds the history).
    if (case_.phase == Phase::prefill) {
      for (const DeviceBuffer* b : {&q_heads_, &k_cache_, &v_cache_, &o_heads_}) ctx_.poison(*b);
    }
    run_all(ctx_.stream());
    ctx_.wait("layer");
    // The attention output as o_proj reads it: e4m3 where it was quantised for a W8A8 o_proj.
    const auto attention_rows = [&](const std::vector<int>& rows) {
      if (quantized_)
        return rows_of_e4m3(ctx_, attn_q_, scale_of(E4m3Tensor::attention), tokens_, q_width(model_), rows);
      return rows_of_half(ctx_, attn_, q_width(model_), rows);
    };
    const std::uint64_t bad =
        kernels::count_nonfinite(kernels::StorageFormat::bf16, dn_.get(), as_size(tokens_ * model_.hidden),
                                 ctx_.stream()) +
        (quantized_ ? 0
                    : kernels::count_nonfinite(kernels::StorageFormat::bf16, attn_.get(),
                                               as_size(tokens_ * q_width(model_)), ctx_.stream()));
    const Reference ref = reference();
    const ErrorNorm e_attn = relative_error(attention_rows(ref.rows), ref.attn);
    const ErrorNorm e_o = relative_error(rows_of_half(ctx_, o_, model_.hidden, ref.rows), ref.o);
    const ErrorNorm e_h2 = relative_error(rows_of_half(ctx_, h2_, model_.hidden, ref.rows), ref.h2);
    const ErrorNorm e_out = relative_error(rows_of_half(ctx_, dn_, model_.hidden, ref.rows), ref.dn);
    // The e4m3 roundings upstream of each checked tensor (see e4m3_rounding): the cache's, and with
    // W8A8 projections attn_norm's and the attention output's, then ffn_norm's and SwiGLU's.
    const int cache_points = kv_e4m3_ ? 1 : 0;
    const int attention_points = cache_points + (quantized_ ? 2 : 0);
    const int output_points = attention_points + (quantized_ ? 2 : 0);
    const double tol_attn = attention_tolerance + attention_points * e4m3_rounding;
    const double tol_o = projection_tolerance + attention_points * e4m3_rounding;
    const double tol_out = output_tolerance + output_points * e4m3_rounding;
    const std::string what = fmt::format(
        "{} token rows vs the fp32 reference: attention {:.2e} (tol {:.3g}), o_proj {:.2e} (tol {:.3g}), residual "
        "stream {:.2e} (tol {:.3g}), layer output (ffn_down) {:.2e} (tol {:.3g}); {} non-finite outputs",
        ref.rows.size(), e_attn.error, tol_attn, e_o.error, tol_o, e_h2.error, tol_o, e_out.error, tol_out, bad);
    if (bad != 0 || !(e_attn.error <= tol_attn) || !(e_o.error <= tol_o) || !(e_h2.error <= tol_o) ||
        !(e_out.error <= tol_out)) {
      throw VerificationFailed(what);
    }
    return what;
  }

 private:
  using Builder = StageRun (LayerCase::*)(const StagePlan&);
  // The kernel of each LayerKernel (roofline/layer_suite.hpp), in that enum's order.
  static const std::array<Builder, layer::layer_kernel_count> builders;

  struct Reference {
    std::vector<int> rows;
    std::vector<float> attn, o, h2, dn;  // rows x cols, fp32
  };

  [[nodiscard]] std::vector<int> checked_rows() const {
    std::vector<int> rows;
    if (case_.phase == Phase::decode || tokens_ <= prefill_sampled_rows) {
      for (std::int64_t r = 0; r < tokens_; ++r) rows.push_back(static_cast<int>(r));
      return rows;
    }
    const int n = static_cast<int>(tokens_);
    rows = {0, n - 1, n / 2};
    std::mt19937_64 rng(static_cast<std::uint64_t>(n) * 7919U);
    while (static_cast<int>(rows.size()) < prefill_sampled_rows) {
      const int r = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
      if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // Where the rows of one sequence start in the cache and which position its first row has.
  [[nodiscard]] int tokens_per_sequence() const { return static_cast<int>(case_.seq); }
  [[nodiscard]] int first_position() const {
    return case_.phase == Phase::decode ? static_cast<int>(case_.context) - 1 : 0;
  }

  // The fp32 pipeline on the GPU: every token through the residual add, RMSNorm, the QKV
  // projection and rope (attention needs every key), then the checked rows through the rest;
  // rounded to e4m3 wherever the layer writes e4m3 for a W8A8 projection.
  Reference reference() {
    const ModelSpec& m = model_;
    const layer::LayerNumerics& numerics = layer::layer_numerics();
    const auto rounded = [&](DeviceBuffer& values, std::int64_t elements, E4m3Tensor tensor) {
      if (quantized_) kernels::round_to_e4m3_reference(values.as<float>(), elements, scale_of(tensor), ctx_.stream());
    };
    const kernels::BlasApi& blas = ctx_.cublas();
    const cudaStream_t s = ctx_.stream();
    const kernels::StorageFormat bf16 = kernels::StorageFormat::bf16;
    const int hidden = static_cast<int>(m.hidden);
    const int ffn = static_cast<int>(m.ffn.intermediate);
    Reference ref;
    ref.rows = checked_rows();
    const int nrows = static_cast<int>(ref.rows.size());
    const int t = static_cast<int>(tokens_);
    const auto floats = [&](std::int64_t rows, std::int64_t cols) { return ctx_.allocate(as_size(rows * cols) * 4); };
    DeviceBuffer rows = ctx_.allocate(ref.rows.size() * sizeof(int));
    ctx_.upload(rows, ref.rows.data(), ref.rows.size() * sizeof(int));

    DeviceBuffer x_all = floats(t, m.hidden);
    DeviceBuffer r_all = floats(t, m.hidden);
    DeviceBuffer h1_all = floats(t, m.hidden);
    DeviceBuffer n1 = floats(t, m.hidden);
    DeviceBuffer qkv = floats(t, qkv_width(m));
    kernels::to_float(bf16, x_.get(), x_all.as<float>(), t * m.hidden, s);
    kernels::to_float(bf16, r_.get(), r_all.as<float>(), t * m.hidden, s);
    kernels::add_reference(x_all.as<float>(), r_all.as<float>(), h1_all.as<float>(), t * m.hidden, s);
    kernels::rmsnorm_reference(h1_all.as<float>(), bf16, w_.gamma1.get(), n1.as<float>(), t, hidden, numerics.rms_eps,
                               s);
    rounded(n1, t * m.hidden, E4m3Tensor::norm);
    kernels::cublas_gemm_f32(blas, n1.as<float>(), w_.qkv_f32.as<float>(), qkv.as<float>(), t,
                             static_cast<int>(qkv_width(m)), hidden, s);
    kernels::rope_reference(qkv.as<float>(), t, layout_, tokens_per_sequence(), first_position(), numerics.rope_theta,
                            s);

    DeviceBuffer attn = floats(nrows, q_width(m));
    if (case_.phase == Phase::decode) {
      kernels::decode_attention_reference(qkv.as<float>(), kv_e4m3_ ? kernels::StorageFormat::fp8_e4m3 : bf16,
                                          k_cache_.get(), v_cache_.get(), attn.as<float>(),
                                          static_cast<int>(case_.batch), layout_, static_cast<int>(case_.context), s,
                                          kv_e4m3_ ? scale_of(E4m3Tensor::kv) : nullptr);
    } else {
      kernels::prefill_attention_reference(qkv.as<float>(), rows.as<int>(), nrows, t, attn.as<float>(), layout_, s);
    }
    rounded(attn, nrows * q_width(m), E4m3Tensor::attention);
    DeviceBuffer x = floats(nrows, m.hidden);
    DeviceBuffer r = floats(nrows, m.hidden);
    DeviceBuffer h1 = floats(nrows, m.hidden);
    DeviceBuffer o = floats(nrows, m.hidden);
    DeviceBuffer h2 = floats(nrows, m.hidden);
    DeviceBuffer n2 = floats(nrows, m.hidden);
    DeviceBuffer gu = floats(nrows, 2 * m.ffn.intermediate);
    DeviceBuffer act = floats(nrows, m.ffn.intermediate);
    DeviceBuffer dn = floats(nrows, m.hidden);
    kernels::gather_rows_to_float(bf16, x_.get(), rows.as<int>(), nrows, hidden, x.as<float>(), s);
    kernels::gather_rows_to_float(bf16, r_.get(), rows.as<int>(), nrows, hidden, r.as<float>(), s);
    kernels::add_reference(x.as<float>(), r.as<float>(), h1.as<float>(), nrows * m.hidden, s);
    kernels::cublas_gemm_f32(blas, attn.as<float>(), w_.o_f32.as<float>(), o.as<float>(), nrows, hidden,
                             static_cast<int>(q_width(m)), s);
    kernels::add_reference(o.as<float>(), h1.as<float>(), h2.as<float>(), nrows * m.hidden, s);
    kernels::rmsnorm_reference(h2.as<float>(), bf16, w_.gamma2.get(), n2.as<float>(), nrows, hidden, numerics.rms_eps,
                               s);
    rounded(n2, nrows * m.hidden, E4m3Tensor::norm);
    kernels::cublas_gemm_f32(blas, n2.as<float>(), w_.gate_up_f32.as<float>(), gu.as<float>(), nrows, 2 * ffn, hidden,
                             s);
    kernels::swiglu_reference(gu.as<float>(), act.as<float>(), nrows, ffn, s);
    rounded(act, nrows * m.ffn.intermediate, E4m3Tensor::swiglu);
    kernels::cublas_gemm_f32(blas, act.as<float>(), w_.down_f32.as<float>(), dn.as<float>(), nrows, hidden, ffn, s);
    ctx_.wait("layer reference");
    ref.attn = download_floats(ctx_, attn, as_size(nrows * q_width(m)));
    ref.o = download_floats(ctx_, o, as_size(nrows * m.hidden));
    ref.h2 = download_floats(ctx_, h2, as_size(nrows * m.hidden));
    ref.dn = download_floats(ctx_, dn, as_size(nrows * m.hidden));
    return ref;
  }

  // Where each op of the layer reads and writes: the layer's data flow, by op name. A W8A8
  // projection reads its e4m3 input from `quantized_in` with the scale of `input`.
  struct NormFlow {
    std::string_view op;
    DeviceBuffer LayerCase::*x;
    DeviceBuffer LayerCase::*residual;
    DeviceBuffer Weights::*gamma;
    DeviceBuffer LayerCase::*out;
    DeviceBuffer LayerCase::*residual_out;
  };
  static const std::array<NormFlow, 2> norm_flows;
  struct LinearFlow {
    std::string_view op;
    DeviceBuffer LayerCase::*in;
    DeviceBuffer LayerCase::*quantized_in;
    E4m3Tensor input;
    DeviceBuffer Weights::*weight;
    DeviceBuffer Weights::*weight_scale;
    DeviceBuffer LayerCase::*out;
  };
  static const std::array<LinearFlow, 4> linear_flows;

  template <typename Flow, std::size_t N>
  static const Flow& flow_of(const std::array<Flow, N>& flows, const StagePlan& plan) {
    for (const Flow& f : flows) {
      if (f.op == plan.name) return f;
    }
    throw kernels::KernelError(fmt::format("the layer runner has no buffers for op {}", plan.name));
  }

  [[nodiscard]] const float* scale_of(E4m3Tensor tensor) const {
    return scalar_slot(scales_, static_cast<std::size_t>(tensor));
  }
  // The scale an op's e4m3 result is written with, or null where it writes 16 bits.
  [[nodiscard]] const float* output_scale(const StagePlan& plan, E4m3Tensor tensor) const {
    return plan.op.writes == DType::fp8_e4m3 ? scale_of(tensor) : nullptr;
  }
  [[nodiscard]] static std::string_view written(const float* scale) { return scale != nullptr ? ", e4m3 out" : ""; }

  StageRun add_rmsnorm(const StagePlan& plan) {
    const NormFlow& f = flow_of(norm_flows, plan);
    const auto& shape = std::get<NormShape>(plan.op.shape);
    const void* px = (this->*f.x).get();
    const void* pr = (this->*f.residual).get();
    const void* pg = (w_.*f.gamma).get();
    void* po = (this->*f.out).get();
    void* ph = (this->*f.residual_out).get();
    const int rows = static_cast<int>(shape.rows);
    const int hidden = static_cast<int>(shape.hidden);
    const float eps = layer::layer_numerics().rms_eps;
    const float* scale = output_scale(plan, E4m3Tensor::norm);
    return {{fmt::format("add + rmsnorm{} (roofline)", written(scale)), ""}, [=](cudaStream_t s) {
              kernels::add_rmsnorm(kernels::StorageFormat::bf16, px, pr, pg, po, ph, rows, hidden, eps, s, scale);
            }};
  }

  // A linear layer on every token: C[tokens][n] = A[tokens][k] . W[n][k]^T, at the op's shape: a
  // GEMV where the description says GEMV, else a GEMM (W8A8 where its input is e4m3).
  StageRun linear(const StagePlan& plan) {
    const LinearFlow& f = flow_of(linear_flows, plan);
    std::int64_t out = 0;
    std::int64_t in = 0;
    bool w8a8 = false;
    if (const auto* gemv = std::get_if<GemvShape>(&plan.op.shape)) {
      out = gemv->m;
      in = gemv->k;
    } else {
      const auto& gemm = std::get<GemmShape>(plan.op.shape);
      out = gemm.n;
      in = gemm.k;
      w8a8 = gemm.a == DType::fp8_e4m3;
    }
    const bool e4m3_weights = w_.format == kernels::StorageFormat::fp8_e4m3;
    const int t = static_cast<int>(tokens_);
    const int n = static_cast<int>(out);
    const int k = static_cast<int>(in);
    const void* pa = (this->*(w8a8 ? f.quantized_in : f.in)).get();
    const void* pw = (w_.*f.weight).get();
    void* pc = (this->*f.out).get();
    if (w8a8)
      return fp8_gemm(kernels::Fp8GemmArgs{.a = pa,
                                           .b = pw,
                                           .c = pc,
                                           .m = static_cast<int>(rows_),
                                           .n = n,
                                           .k = k,
                                           .a_scale = scale_of(f.input),
                                           .b_scale = (w_.*f.weight_scale).as<float>()});
    const bool decode = case_.phase == Phase::decode;
    const kernels::GemvKernel gemv = gemv_kernel_of(layer::roofline_gemv);
    const kernels::StorageFormat weights = w_.format;
    if (std::holds_alternative<GemvShape>(plan.op.shape) && case_.linear == Linear::roofline &&
        tokens_ <= layer::roofline_gemv_max_batch) {
      if (const char* why = kernels::gemv_unsupported(gemv, out, in, tokens_, weights)) {
        if (e4m3_weights) throw kernels::KernelError(fmt::format("the FP8 GEMV: {}", why));
      } else {
        const kernels::GemvArgs args{.kernel = gemv,
                                     .weights = weights,
                                     .activations = kernels::StorageFormat::bf16,
                                     .w = pw,
                                     .x = pa,
                                     .y = pc,
                                     .m = out,
                                     .k = in,
                                     .batch = tokens_,
                                     .sms = ctx_.device().sms,
                                     .weight_scale = e4m3_weights ? (w_.*f.weight_scale).as<float>() : nullptr};
        const std::string_view variant = memory::variant_name(layer::roofline_gemv);
        return {
            {fmt::format("gemv {}{} (roofline)", variant, e4m3_weights ? ", e4m3 weights" : ""), std::string(variant)},
            [args](cudaStream_t s) { check(kernels::launch_gemv(args, s), "gemv"); }};
      }
    }
    if (e4m3_weights) {
      throw kernels::KernelError(fmt::format("{}: an e4m3-weight projection the layer has no kernel for", plan.name));
    }
    if (case_.linear == Linear::roofline && !decode) {
      const bool wgmma = kernels::gemm_kernel_supported(kernels::GemmKernel::wgmma, ctx_.device().index);
      const kernels::GemmKernel kernel = wgmma ? kernels::GemmKernel::wgmma : kernels::GemmKernel::mma_sync;
      const compute::GemmImpl impl = wgmma ? compute::GemmImpl::wgmma : compute::GemmImpl::mma_sync;
      return {
          {fmt::format("gemm {} (roofline)", kernels::gemm_kernel_name(kernel)), std::string(compute::id_name(impl))},
          [=](cudaStream_t s) { kernels::gemm(kernel, kernels::StorageFormat::bf16, pa, pw, pc, t, n, k, s); }};
    }
    const Cublas* blas = &ctx_.cublas();
    return {{"cublasGemmEx", std::string(compute::id_name(compute::GemmImpl::cublas))},
            [=](cudaStream_t s) { kernels::cublas_gemm(*blas, kernels::StorageFormat::bf16, pa, pw, pc, t, n, k, s); }};
  }

  // An FP8 x FP8 projection: the project's wgmma FP8 GEMM, or cuBLASLt's (on rows_ rows: m
  // padded to its multiple of 16; the stage's FLOPs and bytes stay those of the tokens).
  StageRun fp8_gemm(const kernels::Fp8GemmArgs& args) {
    if (case_.linear == Linear::roofline) {
      if (!kernels::gemm_kernel_supported(kernels::GemmKernel::wgmma, ctx_.device().index)) {
        throw kernels::KernelError("the FP8 GEMM is the wgmma kernel: it needs sm_90a code and a 9.0 device");
      }
      return {{"gemm_fp8 wgmma, e4m3 x e4m3 (roofline)", std::string(compute::id_name(compute::GemmImpl::wgmma))},
              [args](cudaStream_t s) { kernels::gemm_fp8(kernels::GemmKernel::wgmma, args, s); }};
    }
    const kernels::BlasLtApi* lt = &ctx_.cublaslt();
    const std::string padded = args.m > tokens_ ? fmt::format(", m padded to {}", args.m) : std::string();
    return {{fmt::format("cublasLtMatmul e4m3 x e4m3{}", padded),
             std::string(compute::id_name(compute::GemmImpl::cublaslt))},
            [lt, args](cudaStream_t s) { kernels::cublaslt_gemm_fp8(*lt, args, s); }};
  }

  // Keys in place; queries in place at decode (flash-decoding reads them from qkv), head-major at
  // prefill (the flash kernel's layout).
  StageRun rope(const StagePlan& /*plan*/) {
    void* qkv = qkv_.get();
    void* q_out = case_.phase == Phase::decode ? nullptr : q_heads_.get();
    const int t = static_cast<int>(tokens_);
    const kernels::HeadLayout layout = layout_;
    const int per_sequence = tokens_per_sequence();
    const int first = first_position();
    const float theta = layer::layer_numerics().rope_theta;
    return {{case_.phase == Phase::decode ? "rope (roofline)" : "rope, queries to head-major (roofline)", ""},
            [=](cudaStream_t s) {
              kernels::rope(kernels::StorageFormat::bf16, qkv, q_out, t, layout, per_sequence, first, theta, s);
            }};
  }

  StageRun kv_append(const StagePlan& /*plan*/) {
    const void* qkv = qkv_.get();
    void* kc = k_cache_.get();
    void* vc = v_cache_.get();
    const int t = static_cast<int>(tokens_);
    const kernels::HeadLayout layout = layout_;
    const int per_sequence = tokens_per_sequence();
    const int context = static_cast<int>(case_.context);
    const int first = first_position();
    const float* scale = kv_e4m3_ ? scale_of(E4m3Tensor::kv) : nullptr;
    return {{fmt::format("kv_append{} (roofline)", kv_e4m3_ ? ", e4m3 cache" : ""), ""}, [=](cudaStream_t s) {
              kernels::kv_append(kernels::StorageFormat::bf16, qkv, kc, vc, t, layout, per_sequence, context, first, s,
                                 scale);
            }};
  }

  StageRun attention(const StagePlan& plan) {
    const auto& shape = std::get<AttentionShape>(plan.op.shape);
    const kernels::StorageFormat type = kernels::StorageFormat::bf16;
    const kernels::HeadLayout layout = layout_;
    void* attn = attn_.get();
    if (case_.phase == Phase::decode) {
      const void* qkv = qkv_.get();
      const kernels::KvCache cache{kv_e4m3_ ? kernels::StorageFormat::fp8_e4m3 : type, k_cache_.get(), v_cache_.get(),
                                   kv_e4m3_ ? scale_of(E4m3Tensor::kv) : nullptr};
      void* ws = workspace_.get();
      const int batch = static_cast<int>(shape.batch);
      const int context = static_cast<int>(shape.kv_seq);
      const kernels::DecodeAttentionPlan split = plan_;
      return {{fmt::format("flash-decoding{}: {} splits x {} tiles of 64 keys, then a combine (roofline)",
                           kv_e4m3_ ? " over an e4m3 cache" : "", split.splits, split.tiles_per_split),
               ""},
              [=](cudaStream_t s) {
                kernels::decode_attention(type, qkv, cache, attn, ws, batch, layout, context, split, s);
              }};
    }
    const void* q = q_heads_.get();
    const void* k = k_cache_.get();
    const void* v = v_cache_.get();
    void* oh = o_heads_.get();
    const kernels::FlashVariant variant =
        kernels::flash_variant_supported(kernels::FlashVariant::wgmma, layout.head_dim, ctx_.device().index)
            ? kernels::FlashVariant::wgmma
            : kernels::FlashVariant::warps4_rows32;
    kernels::AttentionShape flash;
    flash.batch = static_cast<int>(shape.batch);
    flash.heads = static_cast<int>(shape.heads);
    flash.kv_heads = static_cast<int>(shape.kv_heads);
    flash.seq = static_cast<int>(shape.seq);
    flash.head_dim = static_cast<int>(shape.head_dim);
    flash.causal = shape.causal;
    return {
        {fmt::format("{} causal (roofline)", kernels::flash_variant_name(variant)),
         std::string(compute::id_name(variant == kernels::FlashVariant::wgmma ? compute::AttentionImpl::flash_wgmma
                                                                              : compute::AttentionImpl::flash_w4r32))},
        [=](cudaStream_t s) { kernels::flash_attention_forward(variant, type, flash, q, k, v, oh, s); }};
  }

  // Head-major outputs to token-major: into attn_, or quantised into attn_q_ for a W8A8 o_proj.
  StageRun attn_merge(const StagePlan& plan) {
    const void* oh = o_heads_.get();
    const float* scale = output_scale(plan, E4m3Tensor::attention);
    void* attn = scale != nullptr ? attn_q_.get() : attn_.get();
    const int t = static_cast<int>(tokens_);
    const kernels::HeadLayout layout = layout_;
    return {{fmt::format("attn_merge{} (roofline)", written(scale)), ""}, [=](cudaStream_t s) {
              kernels::attn_merge(kernels::StorageFormat::bf16, oh, attn, t, layout.heads, layout.head_dim, s, scale);
            }};
  }

  StageRun swiglu(const StagePlan& plan) {
    const auto& shape = std::get<ElementwiseShape>(plan.op.shape);
    const void* gu = gu_.get();
    void* act = act_.get();
    const int t = static_cast<int>(tokens_);
    const int ffn = static_cast<int>(shape.elements / tokens_);
    const float* scale = output_scale(plan, E4m3Tensor::swiglu);
    return {{fmt::format("swiglu{} (roofline)", written(scale)), ""},
            [=](cudaStream_t s) { kernels::swiglu(kernels::StorageFormat::bf16, gu, act, t, ffn, s, scale); }};
  }

  // The attention output quantised for a W8A8 o_proj (attn_ -> attn_q_).
  StageRun quantize(const StagePlan& plan) {
    const auto& shape = std::get<QuantizeShape>(plan.op.shape);
    const void* in = attn_.get();
    void* out = attn_q_.get();
    const std::int64_t elements = shape.elements;
    const float* scale = scale_of(E4m3Tensor::attention);
    return {{"quantize to e4m3 (roofline)", ""},
            [=](cudaStream_t s) { kernels::quantize_e4m3(kernels::StorageFormat::bf16, in, out, elements, scale, s); }};
  }

  Context& ctx_;
  Case case_;
  const ModelSpec& model_;
  const Weights& w_;
  kernels::HeadLayout layout_;
  std::int64_t tokens_;
  std::int64_t rows_;    // rows of the activation buffers: tokens_, padded where cuBLASLt's FP8 GEMM runs
  bool quantized_;       // the projections run W8A8 (layer::quantized_linears)
  bool kv_e4m3_;         // the decode cache is e4m3
  DeviceBuffer scales_;  // e4m3_scales on the device
  DeviceBuffer x_, r_, n1_, h1_, qkv_, attn_, attn_q_, o_, n2_, h2_, gu_, act_, dn_;
  DeviceBuffer k_cache_, v_cache_, workspace_;
  DeviceBuffer q_heads_, o_heads_;
  kernels::DecodeAttentionPlan plan_;
  std::vector<StageRun> stages_;
};

const std::array<LayerCase::Builder, layer::layer_kernel_count> LayerCase::builders{
    &LayerCase::add_rmsnorm, &LayerCase::linear, &LayerCase::rope,       &LayerCase::kv_append,
    &LayerCase::attention,   &LayerCase::swiglu, &LayerCase::attn_merge, &LayerCase::quantize};
static_assert(static_cast<std::size_t>(LayerKernel::quantize) + 1 == layer::layer_kernel_count);

const std::array<LayerCase::NormFlow, 2> LayerCase::norm_flows{{
    {"attn_norm", &LayerCase::x_, &LayerCase::r_, &Weights::gamma1, &LayerCase::n1_, &LayerCase::h1_},
    {"ffn_norm", &LayerCase::o_, &LayerCase::h1_, &Weights::gamma2, &LayerCase::n2_, &LayerCase::h2_},
}};

const std::array<LayerCase::LinearFlow, 4> LayerCase::linear_flows{{
    {"qkv_proj", &LayerCase::n1_, &LayerCase::n1_, E4m3Tensor::norm, &Weights::qkv, &Weights::qkv_scale,
     &LayerCase::qkv_},
    {"o_proj", &LayerCase::attn_, &LayerCase::attn_q_, E4m3Tensor::attention, &Weights::o, &Weights::o_scale,
     &LayerCase::o_},
    {"ffn_gate_up", &LayerCase::n2_, &LayerCase::n2_, E4m3Tensor::norm, &Weights::gate_up, &Weights::gate_up_scale,
     &LayerCase::gu_},
    {"ffn_down", &LayerCase::act_, &LayerCase::act_, E4m3Tensor::swiglu, &Weights::down, &Weights::down_scale,
     &LayerCase::dn_},
}};

// Each stage timed inside the layer: the sequence launched directly `samples` times after one
// warm-up pass, an event between every two stages. Returns per-stage seconds and the whole pass's.
struct StageTimes {
  std::vector<Summary> stages;
  Summary layer;
  int samples = 0;
};

StageTimes time_stages(Context& ctx, const LayerCase& lc, double layer_seconds) {
  const std::size_t count = lc.stages().size();
  // One layer pass per sample, as many samples as the harness would time in batches.
  const int samples = sample_plan(ctx.policy(), layer_seconds, 1).samples;
  std::vector<cudaEvent_t> events(as_size(samples) * (count + 1), nullptr);
  const auto destroy = [&events] {
    for (cudaEvent_t e : events) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  };
  StageTimes times;
  try {
    for (cudaEvent_t& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
    lc.run_all(ctx.stream());  // warm-up
    for (int r = 0; r < samples; ++r) {
      cudaEvent_t* marks = events.data() + as_size(r) * (count + 1);
      check(cudaEventRecord(marks[0], ctx.stream()), "cudaEventRecord");
      for (std::size_t i = 0; i < count; ++i) {
        lc.stages()[i].launch(ctx.stream());
        check(cudaEventRecord(marks[i + 1], ctx.stream()), "cudaEventRecord");
      }
    }
    ctx.wait("stage timing");
    std::vector<std::vector<double>> per_stage(count);
    std::vector<double> whole;
    for (int r = 0; r < samples; ++r) {
      cudaEvent_t* marks = events.data() + as_size(r) * (count + 1);
      for (std::size_t i = 0; i < count; ++i) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, marks[i], marks[i + 1]), "cudaEventElapsedTime");
        per_stage[i].push_back(static_cast<double>(ms) * 1e-3);
      }
      float ms = 0;
      check(cudaEventElapsedTime(&ms, marks[0], marks[count]), "cudaEventElapsedTime");
      whole.push_back(static_cast<double>(ms) * 1e-3);
    }
    for (const std::vector<double>& s : per_stage) times.stages.push_back(summarize(s));
    times.layer = summarize(whole);
    times.samples = samples;
  } catch (...) {
    destroy();
    throw;
  }
  destroy();
  return times;
}

void record_all(Recorder& recorder, std::vector<BenchmarkResult> results) {
  for (BenchmarkResult& r : results) recorder.record(std::move(r));
}

void run_one(Context& ctx, const Case& c, const Weights& weights, std::uint64_t seed, Recorder& recorder) {
  const ModelSpec& m = layer::layer_model();
  std::vector<BenchmarkResult> results = layer::make_results(c);
  const auto fail_all = [&](Disposition d, const std::string& why) {
    results = layer::make_results(c);  // fresh: a failure may come after a result was moved out
    for (BenchmarkResult& r : results) {
      r.disposition = d;
      r.detail = why;
    }
    record_all(recorder, std::move(results));
  };
  if (c.phase == Phase::decode) {
    if (const char* why = kernels::decode_attention_unsupported(head_layout(m), static_cast<int>(c.context))) {
      return fail_all(Disposition::not_supported, why);
    }
  }
  try {
    LayerCase lc(ctx, c, m, weights, seed_of(seed, 30, static_cast<std::uint64_t>(c.batch * 100003 + c.context)));
    std::vector<layer::StageKernel> kernels;
    for (const StageRun& s : lc.stages()) kernels.push_back(s.kernel);
    results = layer::make_results(c, kernels);
    const Launch launch = [&lc](cudaStream_t s, int) {
      lc.run_all(s);
      return cudaSuccess;
    };
    BenchmarkResult whole = run_case(
        ctx, std::move(results.front()), [&lc] { return lc.verify(); }, launch);
    if (whole.disposition != Disposition::passed) {
      const std::string why = fmt::format("the layer {}: {}", name_of(whole.disposition), whole.detail);
      results.front() = std::move(whole);
      for (std::size_t i = 1; i < results.size(); ++i) {
        results[i].disposition =
            results.front().disposition == Disposition::failed ? Disposition::failed : Disposition::not_run;
        results[i].detail = why;
      }
      record_all(recorder, std::move(results));
      return;
    }
    if (!whole.timing) {  // --check-only
      for (std::size_t i = 1; i < results.size(); ++i) {
        results[i].disposition = Disposition::passed;
        results[i].detail = "checked with the layer (--check-only), not timed";
      }
      results.front() = std::move(whole);
      record_all(recorder, std::move(results));
      return;
    }
    const StageTimes times = time_stages(ctx, lc, whole.timing->seconds.median);
    double sum = 0;
    for (const Summary& s : times.stages) sum += s.median;
    for (std::size_t i = 1; i < results.size(); ++i) {
      BenchmarkResult& r = results[i];
      r.disposition = Disposition::passed;
      r.timing = Timing{times.stages[i - 1], 1, false};
      r.detail = "timed inside the layer: direct launches, an event before and after the stage";
      r.parameters.push_back({"share_pct", Cell{times.stages[i - 1].median / sum * 100}});
    }
    whole.parameters.push_back({"direct_us", Cell{times.layer.median * 1e6}});
    whole.parameters.push_back({"stages_sum_us", Cell{sum * 1e6}});
    results.front() = std::move(whole);
    record_all(recorder, std::move(results));
  } catch (const NotEnoughMemory& e) {
    fail_all(Disposition::not_run, e.what());
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    fail_all(Disposition::failed, fmt::format("set-up failed: {}", e.what()));
  }
}

}  // namespace

void run_layer_suite(Context& ctx, std::span<const layer::Case* const> cases, bool /*quick*/, std::uint64_t seed,
                     Recorder& recorder, std::vector<std::string>& notes) {
  if (cases.empty()) return;
  const ModelSpec& m = layer::layer_model();
  const layer::LayerNumerics& numerics = layer::layer_numerics();
  notes.push_back(fmt::format(
      "layer suite: {} (hidden {}, {} query heads, {} KV heads, head dim {}, SwiGLU {}, RMSNorm eps {}, rope theta "
      "{}), bf16 weights uniform in +-sqrt(3/in_features), FP8 cases' weights those quantised to e4m3 with a "
      "per-matrix scale of max |W| / 448, e4m3 activations and cache with static power-of-two scales; the stages are "
      "the ops of the layer's description (decoder_step.hpp), as llm counts them; the layer is one CUDA graph of its "
      "stages; stage times are measured inside the layer with direct launches, so their sum (stages_sum_us) includes "
      "launch gaps that the graph hides",
      m.name, m.hidden, m.attention.heads, m.attention.kv_heads, m.attention.head_dim, m.ffn.intermediate,
      numerics.rms_eps, numerics.rope_theta));
  // The weights of each format, made when its first case comes (and freed before the next format's).
  std::optional<Weights> weights;
  for (const Case* c : cases) {
    const auto record_not_run = [&](Disposition d, const std::string& why) {
      std::vector<BenchmarkResult> results = layer::make_results(*c);
      for (BenchmarkResult& r : results) {
        r.disposition = d;
        r.detail = why;
      }
      record_all(recorder, std::move(results));
    };
    if (ctx.health().lost) {
      record_not_run(Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    const kernels::StorageFormat format =
        c->formats.fp8() ? kernels::StorageFormat::fp8_e4m3 : kernels::StorageFormat::bf16;
    if (!weights || weights->format != format) {
      weights.reset();
      try {
        weights = make_weights(ctx, m, seed, format);
      } catch (const GpuHang&) {
        throw;
      } catch (const std::exception& e) {
        ctx.recover();
        const bool memory = dynamic_cast<const NotEnoughMemory*>(&e) != nullptr;
        record_not_run(memory ? Disposition::not_run : Disposition::failed,
                       fmt::format("the layer's weights could not be set up: {}", e.what()));
        continue;
      }
    }
    run_one(ctx, *c, *weights, seed, recorder);
  }
}

}  // namespace roofline::bench::cuda
