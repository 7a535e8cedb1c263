// The bases of operations (what op and llm predict, and what benchmarks are predicted by) and the
// bare roofline's time of one.
#include "roofline/basis/basis.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>

#include "roofline/basis/calibration_tables.hpp"
#include "roofline/core/error.hpp"

namespace roofline {
namespace {

std::string mask_name(bool causal) {
  return causal ? "causal" : "full";
}

// The stream kernel classes that vector work is calibrated against, by their share of writes.
struct StreamClass {
  int inputs;
  int outputs;
};
constexpr std::array<StreamClass, 3> stream_classes{{
    {1, 1},  // copy, scale, cudaMemcpy
    {2, 1},  // add, triad
    {2, 0},  // dot (read-only)
}};

const StreamClass& stream_class_of(int inputs, int outputs) {
  const double share = static_cast<double>(outputs) / static_cast<double>(inputs + outputs);
  const StreamClass* best = &stream_classes[0];
  double best_distance = 2;
  for (const StreamClass& c : stream_classes) {
    if (c.inputs == inputs && c.outputs == outputs) return c;
    const double distance = std::abs(share - static_cast<double>(c.outputs) / (c.inputs + c.outputs));
    if (distance < best_distance) {
      best = &c;
      best_distance = distance;
    }
  }
  return *best;
}

}  // namespace

Roofs Roofs::of(const GpuSpec& gpu) {
  Roofs r;
  r.gpu_id = gpu.id;
  r.bandwidth = gpu.memory_bandwidth_bytes_per_s();
  for (std::size_t i = 0; i < peak_class_names.size(); ++i) r.peaks[i] = gpu.peak_flops(static_cast<PeakClass>(i));
  // The hardware files state shared memory in KiB, as the CUDA guide does.
  if (gpu.smem_per_unit_kb) r.smem_bytes_per_unit = *gpu.smem_per_unit_kb * 1024;
  r.l2_bytes = gpu.l2_bytes();
  r.units = gpu.units;
  return r;
}

std::optional<PeakClass> Roofs::matrix_class(DType type) const {
  for (const auto& p : info(type).matrix_peaks) {
    if (p && peak(*p)) return p;
  }
  return std::nullopt;
}

std::optional<PeakClass> MathRoof::resolve(const Roofs& roofs) const {
  switch (unit) {
    case Unit::none: return std::nullopt;
    case Unit::matrix: return roofs.matrix_class(type);
    case Unit::vector: {
      const PeakClass p = vector_peak_class(type);
      return roofs.peak(p) ? std::optional(p) : std::nullopt;
    }
  }
  return std::nullopt;
}

IdealTime ideal_time(const Basis& basis, const Roofs& roofs) {
  IdealTime t;
  t.memory_s = basis.roof_bytes / roofs.bandwidth;
  t.peak = basis.math.resolve(roofs);
  if (basis.math.unit != MathRoof::Unit::none && basis.cost.flops > 0 && !t.peak) t.peak_missing = true;
  if (t.peak && basis.cost.flops > 0) t.compute_s = basis.cost.flops / *roofs.peak(*t.peak);
  t.bound = t.compute_s > 0 && t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
  t.time_s = std::max(t.compute_s, t.memory_s);
  return t;
}

std::string attention_implementation_table(std::string_view kernel, DType dtype, std::int64_t head_dim, bool causal,
                                           std::int64_t head_dim_v) {
  return calibration_tables::attention(kernel, dtype, dtype, head_dim, causal, head_dim_v);
}

Basis gemm_basis(const GemmShape& shape) {
  Basis b;
  b.pattern = "gemm";
  b.best_table = calibration_tables::gemm(shape.a, shape.b);
  b.table = b.best_table;
  // At equal roofline time a deeper GEMM runs closer to its roof: each output tile's fixed costs
  // (pipeline fill, epilogue, the last wave's tail) are spread over k / tile_k mainloop steps. On
  // the H200 the FP8 wgmma kernel reaches 0.52-0.55 of its roof at k = 3584-4096 and 0.67 at
  // k = 28672 for the same 243 us of roofline time, which size alone cannot tell apart.
  b.series = static_cast<double>(shape.k);
  // assign(1, 'k'), not = "k": g++ 12 at -O3 reports a false -Wrestrict overlap on a one-character
  // literal assigned to a std::string (GCC bug 105329).
  b.series_name.assign(1, 'k');
  b.series_optional = true;
  b.cost = gemm_cost(shape);
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.a};
  b.model = fmt::format("gemm_cost{{m {}, n {}, k {}, batch {}, {}}}", shape.m, shape.n, shape.k, shape.batch,
                        name_of(shape.a));
  return b;
}

Basis grouped_gemm_lookup(DType a, DType b, std::int64_t k) {
  Basis basis;
  basis.pattern = "gemm_grouped";
  basis.best_table = calibration_tables::grouped_gemm(a, b);
  basis.table = basis.best_table;
  // The GEMM's k axis, for the same reason: a grouped table mixes every model's projections, and at
  // equal roofline time a shallow one (Qwen3-235B's down projection at TP 8, k = 192: 0.26-0.28 of
  // its roof on the H200) and a deep one (DeepSeek-V3's gate_up at TP 8, k = 7168: 0.68) lie side by
  // side; by size alone DeepSeek's decode step at batch 16 read the shallow one.
  basis.series = static_cast<double>(k);
  basis.series_name.assign(1, 'k');
  basis.series_optional = true;
  basis.math = {MathRoof::Unit::matrix, a};
  return basis;
}

Basis grouped_gemm_basis(const GroupedGemmShape& shape) {
  Basis b = grouped_gemm_lookup(shape.a, shape.b, shape.k);
  std::int64_t touched = 0;
  for (const std::int64_t tokens : shape.tokens_per_expert) {
    if (tokens == 0) continue;
    const OpCost expert = gemm_cost({tokens, shape.n, shape.k, 1, shape.a, shape.b, shape.c});
    b.cost = {b.cost.flops + expert.flops, b.cost.bytes_read + expert.bytes_read,
              b.cost.bytes_written + expert.bytes_written};
    ++touched;
  }
  if (touched == 0) throw InputError("grouped gemm: no expert has tokens");
  b.roof_bytes = b.cost.bytes();
  b.model = fmt::format("sum of gemm_cost{{t_e, n {}, k {}, {}}} over {} of {} experts", shape.n, shape.k,
                        name_of(shape.a), touched, shape.tokens_per_expert.size());
  return b;
}

Basis gemv_basis(const GemvShape& shape) {
  Basis b;
  b.pattern = "gemv";
  b.best_table = calibration_tables::gemv(shape.activation, shape.weight);
  b.table = b.best_table;
  b.series = static_cast<double>(shape.batch);
  b.series_name = "batch";
  b.cost = gemv_cost(shape);
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.activation};
  b.model = fmt::format("gemv_cost{{m {}, k {}, batch {}, {}}}", shape.m, shape.k, shape.batch, name_of(shape.weight));
  if (shape.output_format() != shape.activation) {
    b.model = fmt::format("gemv_cost{{m {}, k {}, batch {}, {} W, {} x, {} y}}", shape.m, shape.k, shape.batch,
                          name_of(shape.weight), name_of(shape.activation), name_of(shape.output_format()));
  }
  b.problem = calibration_tables::gemv_problem(shape.activation, shape.weight, shape.m, shape.k, shape.batch);
  return b;
}

Basis vector_basis(const OpCost& cost, int inputs, int outputs, DType dtype, std::string model) {
  const StreamClass& c = stream_class_of(inputs, outputs);
  Basis b;
  b.pattern = "stream";
  b.best_table = calibration_tables::stream(c.inputs, c.outputs);
  b.table = b.best_table;
  b.cost = cost;
  b.roof_bytes = cost.bytes();
  b.math = {MathRoof::Unit::vector, dtype};
  b.model = std::move(model);
  if (c.inputs != inputs || c.outputs != outputs) {
    b.note = fmt::format(
        "{} read and {} written arrays: calibrated as {}, the stream class with the nearest share "
        "of writes",
        inputs, outputs, b.best_table);
  }
  return b;
}

Basis elementwise_basis(const ElementwiseShape& shape) {
  return vector_basis(elementwise_cost(shape), shape.inputs, shape.outputs, shape.dtype,
                      fmt::format("elementwise_cost{{{} elements, {} in, {} out, {}}}", shape.elements, shape.inputs,
                                  shape.outputs, name_of(shape.dtype)));
}

Basis norm_basis(const NormShape& shape) {
  const int arrays = shape.residual ? 2 : 1;
  return vector_basis(norm_cost(shape), arrays, arrays, shape.dtype,
                      fmt::format("norm_cost{{rows {}, hidden {}, {}{}}}", shape.rows, shape.hidden,
                                  name_of(shape.kind), shape.residual ? ", residual" : ""));
}

Basis softmax_basis(const SoftmaxShape& shape) {
  return vector_basis(softmax_cost(shape), 1, 1, shape.dtype,
                      fmt::format("softmax_cost{{rows {}, cols {}}}", shape.rows, shape.cols));
}

Basis attention_basis(const AttentionShape& shape, AttentionImpl impl) {
  Basis b;
  b.pattern = "attention";
  // Kernels are built per head dimension, so it names the table. MHA and GQA share a table: the
  // few GQA shapes measured are too sparse to be a second axis (docs/validate.md).
  b.best_table =
      calibration_tables::attention(name_of(impl), shape.act, shape.kv, shape.head_dim, shape.causal, shape.head_dim_v);
  b.table = b.best_table;
  b.cost = impl == AttentionImpl::standard ? standard_attention_cost(shape).hbm
                                           : flash_attention_cost(shape, FlashTiling{}).hbm;
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.act};
  const std::string value_dim =
      shape.head_dim_v == 0 || shape.head_dim_v == shape.head_dim ? "" : fmt::format(", d_v {}", shape.head_dim_v);
  b.model = fmt::format("{}_attention_cost{{batch {}, heads {}/{}, d {}{}, seq {}, kv_seq {}, {}}}", name_of(impl),
                        shape.batch, shape.heads, shape.kv_heads, shape.head_dim, value_dim, shape.seq, shape.kv_seq,
                        mask_name(shape.causal));
  return b;
}

Basis flash_step_basis(const AttentionShape& shape, const OpCost& cost) {
  Basis b;
  if (shape.seq > 1) {
    b = attention_basis(shape, AttentionImpl::flash);
  } else {
    // Decode: one query row per sequence against its cache, measured by the memory suite's
    // decode-attention benchmark. No mask word: a single query row sees the whole cache.
    b.pattern = "attention";
    b.best_table = calibration_tables::decode_attention(shape.act, shape.kv, shape.head_dim);
    b.table = b.best_table;
    b.math = {MathRoof::Unit::matrix, shape.act};
    b.model = fmt::format("decode attention{{batch {}, heads {}/{}, d {}, kv_seq {}}}", shape.batch, shape.heads,
                          shape.kv_heads, shape.head_dim, shape.kv_seq);
    // The kernel's parallelism is one stream per (sequence, KV head): at equal bytes, batch 1 over
    // 32768 keys runs at 0.54 of the roof and batch 16 over 2048 keys at 0.74 (H200, run 3), so
    // the size alone does not place a decode step in the table.
    b.series = static_cast<double>(shape.batch * shape.kv_heads);
    b.series_name = "kv streams";
  }
  b.cost = cost;
  b.roof_bytes = cost.bytes();
  return b;
}

Basis latent_decode_basis(const LatentAttentionShape& shape, const OpCost& cost) {
  if (!shape.absorbed) throw std::logic_error("latent_decode_basis: the shape is the expanded (prefill) form");
  Basis b;
  b.pattern = "attention";
  b.best_table =
      calibration_tables::latent_decode_attention(shape.act, shape.kv, shape.kv_lora_rank + shape.qk_rope_head_dim);
  b.table = b.best_table;
  b.cost = cost;
  b.roof_bytes = cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.act};
  b.model = fmt::format("latent_attention_cost{{batch {}, heads {}, latent {} + rope {}, kv_seq {}, absorbed}}",
                        shape.batch, shape.heads, shape.kv_lora_rank, shape.qk_rope_head_dim, shape.kv_seq);
  // The query rows that share each cached row (a verify step's K + 1 queries per sequence as well,
  // which a kernel packs as rows the same way): what sets the arithmetic intensity.
  b.series = static_cast<double>(shape.heads * shape.seq);
  b.series_name = "query rows";
  return b;
}

}  // namespace roofline
