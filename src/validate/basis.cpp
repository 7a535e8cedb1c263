// Bases: an operation or a benchmark as the model sees it, and the bare roofline's time of one.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "roofline/access.hpp"
#include "roofline/comm.hpp"
#include "roofline/error.hpp"
#include "roofline/layer_check.hpp"
#include "roofline/memory_suite.hpp"
#include "roofline/validate.hpp"

namespace roofline {
namespace {

using nlohmann::json;

std::string mask_name(bool causal) {
  return causal ? "causal" : "full";
}

// The stream kernel classes that vector work is calibrated against, by their share of writes.
struct StreamClass {
  int inputs;
  int outputs;
  std::string_view table;
};
constexpr std::array<StreamClass, 3> stream_classes{{
    {1, 1, "stream.r1w1"},  // copy, scale, cudaMemcpy
    {2, 1, "stream.r2w1"},  // add, triad
    {2, 0, "stream.r2w0"},  // dot (read-only)
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

// Integer and text parameters of a measurement, or InputError naming where it came from.
std::int64_t int_param(const Measurement& m, std::string_view key) {
  const auto it = m.parameters.find(std::string(key));
  if (it == m.parameters.end() || !it->is_number() || it->get<double>() != std::floor(it->get<double>()) ||
      it->get<double>() < 0) {
    throw InputError(fmt::format("{}: benchmark {} has no whole-number parameter '{}'", m.where, m.id, key));
  }
  return static_cast<std::int64_t>(it->get<double>());
}

std::string text_param(const Measurement& m, std::string_view key) {
  const auto it = m.parameters.find(std::string(key));
  if (it == m.parameters.end() || !it->is_string()) {
    throw InputError(fmt::format("{}: benchmark {} has no text parameter '{}'", m.where, m.id, key));
  }
  return it->get<std::string>();
}

DType dtype_param(const Measurement& m) {
  return parse_dtype(text_param(m, "dtype"), fmt::format("{}: benchmark {} dtype", m.where, m.id));
}

const bench::memory::Case* memory_case(std::string_view id) {
  for (const bench::memory::Case& c : bench::memory::cases) {
    if (bench::memory::case_id(c) == id) return &c;
  }
  return nullptr;
}

BasisOrReason memory_basis(const Measurement& m, const MeasuredRun& run) {
  namespace mem = bench::memory;
  const mem::Case* c = memory_case(m.id);
  if (c == nullptr) return NoBasis{"not a case of this build's memory suite", false};
  if (c->kernel == mem::Kernel::l2_read) {
    return NoBasis{"the L2 ceiling: itself a roof (hardware files state no L2 bandwidth)", true};
  }
  if (c->kernel == mem::Kernel::smem_read) {
    return NoBasis{"the shared-memory ceiling: itself a roof (hardware files state no such bandwidth)", true};
  }
  if (run.l2_bytes <= 0 || run.sms <= 0) {
    throw InputError(
        fmt::format("{}: the run records no L2 size or SM count, so its sizes cannot be rebuilt", run.file));
  }
  const mem::Sizes sizes = mem::plan_sizes(run.l2_bytes, run.sms, run.quick);
  const OpCost cost = mem::case_cost(*c, sizes);
  Basis b;
  switch (c->kernel) {
    case mem::Kernel::gemv: {
      const GemvShape shape{c->m, c->k, c->batch, c->dtype, c->dtype};
      b = gemv_basis(shape);
      b.table = fmt::format("{}.{}", b.best_table, mem::variant_name(c->variant));
      break;
    }
    case mem::Kernel::strided_read:
    case mem::Kernel::gather:
    case mem::Kernel::scatter: {
      const SectorTraffic sectors = *mem::case_sectors(*c, sizes);
      b.pattern = c->kernel == mem::Kernel::strided_read ? "access.strided" : "access.random";
      b.table = c->kernel == mem::Kernel::strided_read ? "access.strided"
                                                       : fmt::format("access.{}", mem::kernel_name(c->kernel));
      if (c->kernel == mem::Kernel::strided_read) {
        b.series = static_cast<double>(c->stride);
        b.series_name = "stride";
      }
      b.cost = cost;
      b.roof_bytes = sectors.moved_bytes();
      b.model = fmt::format("{:.0f} useful bytes in {:.0f} sectors of 32 B (access.hpp)", sectors.useful_bytes,
                            sectors.sectors);
      break;
    }
    case mem::Kernel::decode_attention:
      // The layer's decode attention stage and this benchmark share one basis, so that the table
      // calibrate learns here is the one the stage and llm's decode steps look up.
      b = flash_step_basis(mem::decode_attention_shape(*c), cost);
      break;
    default: {
      const bool two_in =
          c->kernel == mem::Kernel::add || c->kernel == mem::Kernel::triad || c->kernel == mem::Kernel::dot;
      const int outputs = c->kernel == mem::Kernel::dot ? 0 : 1;
      const std::int64_t elements = mem::stream_elements(*c, sizes);
      b = vector_basis(
          cost, two_in ? 2 : 1, outputs, DType::fp32,
          fmt::format("elementwise_cost{{{} elements, {} in, {} out, fp32}}", elements, two_in ? 2 : 1, outputs));
      b.pattern = "stream";
      // One table per kernel across the size ladder (its points span the sizes): the ladder's
      // cases share the table of the kernel at the suite's size.
      mem::Case at_suite_size = *c;
      at_suite_size.array_bytes = 0;
      b.table = mem::case_id(at_suite_size);
      // copy, scale and cudaMemcpy of the same arrays are one problem to the model
      b.problem = fmt::format("{}.{}", b.best_table, elements);
      break;
    }
  }
  if (m.recorded_bytes && std::abs(*m.recorded_bytes - cost.bytes()) > 1e-9 * cost.bytes()) {
    b.note = fmt::format("the run recorded {:.0f} model bytes; today's model counts {:.0f}", *m.recorded_bytes,
                         cost.bytes());
  }
  return b;
}

BasisOrReason compute_basis(const Measurement& m) {
  if (m.group == "peak") return NoBasis{"a compute ceiling: itself a measured roof", true};
  const DType dtype = dtype_param(m);
  if (m.group == "gemm") {
    const std::int64_t batch = m.parameters.contains("batch") ? int_param(m, "batch") : 1;
    Basis b = gemm_basis({int_param(m, "m"), int_param(m, "n"), int_param(m, "k"), batch, dtype, dtype, dtype});
    b.table = fmt::format("{}.{}", b.best_table, m.kernel);
    b.problem = m.id.substr(0, m.id.rfind('.'));
    return b;
  }
  if (m.group == "attention") {
    AttentionShape shape;
    shape.batch = int_param(m, "batch");
    shape.heads = int_param(m, "heads");
    shape.kv_heads = int_param(m, "kv_heads");
    shape.head_dim = int_param(m, "head_dim");
    shape.seq = int_param(m, "seq");
    shape.kv_seq = m.parameters.contains("kv_seq") ? int_param(m, "kv_seq") : shape.seq;
    const auto causal = m.parameters.find("causal");
    shape.causal =
        causal != m.parameters.end() && causal->is_boolean() ? causal->get<bool>() : int_param(m, "causal") != 0;
    shape.act = dtype;
    shape.kv = dtype;
    const AttentionImpl impl = m.kernel.starts_with("flash") ? AttentionImpl::flash : AttentionImpl::standard;
    Basis b = attention_basis(shape, impl);
    b.table = attention_implementation_table(m.kernel, dtype, shape.head_dim, shape.causal);
    b.problem = fmt::format("{}.{}", b.best_table, m.id.substr(0, m.id.rfind('.')));
    return b;
  }
  return NoBasis{fmt::format("group '{}' has no prediction in this build", m.group), false};
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

std::string attention_implementation_table(std::string_view kernel, DType dtype, std::int64_t head_dim, bool causal) {
  return fmt::format("attention.{}.{}.d{}.{}", kernel, name_of(dtype), head_dim, mask_name(causal));
}

Basis gemm_basis(const GemmShape& shape) {
  Basis b;
  b.pattern = "gemm";
  b.best_table = shape.a == shape.b ? fmt::format("gemm.{}", name_of(shape.a))
                                    : fmt::format("gemm.{}.w{}", name_of(shape.a), name_of(shape.b));
  b.table = b.best_table;
  b.cost = gemm_cost(shape);
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.a};
  b.model = fmt::format("gemm_cost{{m {}, n {}, k {}, batch {}, {}}}", shape.m, shape.n, shape.k, shape.batch,
                        name_of(shape.a));
  return b;
}

Basis gemv_basis(const GemvShape& shape) {
  Basis b;
  b.pattern = "gemv";
  b.best_table = shape.weight == shape.activation
                     ? fmt::format("gemv.{}", name_of(shape.weight))
                     : fmt::format("gemv.{}.w{}", name_of(shape.activation), name_of(shape.weight));
  b.table = b.best_table;
  b.series = static_cast<double>(shape.batch);
  b.series_name = "batch";
  b.cost = gemv_cost(shape);
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.activation};
  b.model = fmt::format("gemv_cost{{m {}, k {}, batch {}, {}}}", shape.m, shape.k, shape.batch, name_of(shape.weight));
  b.problem = fmt::format("{}.{}x{}.b{}", b.best_table, shape.m, shape.k, shape.batch);  // as the memory suite names it
  return b;
}

Basis vector_basis(const OpCost& cost, int inputs, int outputs, DType dtype, std::string model) {
  const StreamClass& c = stream_class_of(inputs, outputs);
  Basis b;
  b.pattern = "stream";
  b.best_table = std::string(c.table);
  b.table = b.best_table;
  b.cost = cost;
  b.roof_bytes = cost.bytes();
  b.math = {MathRoof::Unit::vector, dtype};
  b.model = std::move(model);
  if (c.inputs != inputs || c.outputs != outputs) {
    b.note = fmt::format(
        "{} read and {} written arrays: calibrated as {}, the stream class with the nearest share "
        "of writes",
        inputs, outputs, c.table);
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
  const std::string kv = shape.kv == shape.act ? "" : fmt::format(".kv{}", name_of(shape.kv));
  // Kernels are built per head dimension, so it names the table. MHA and GQA share a table: the
  // few GQA shapes measured are too sparse to be a second axis (docs/validate.md).
  b.best_table = fmt::format("attention.{}.{}{}.d{}.{}", name_of(impl), name_of(shape.act), kv, shape.head_dim,
                             mask_name(shape.causal));
  b.table = b.best_table;
  b.cost = impl == AttentionImpl::standard ? standard_attention_cost(shape).hbm
                                           : flash_attention_cost(shape, FlashTiling{}).hbm;
  b.roof_bytes = b.cost.bytes();
  b.math = {MathRoof::Unit::matrix, shape.act};
  b.model =
      fmt::format("{}_attention_cost{{batch {}, heads {}/{}, d {}, seq {}, kv_seq {}, {}}}", name_of(impl), shape.batch,
                  shape.heads, shape.kv_heads, shape.head_dim, shape.seq, shape.kv_seq, mask_name(shape.causal));
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
    const std::string kv = shape.kv == shape.act ? "" : fmt::format(".kv{}", name_of(shape.kv));
    b.best_table = fmt::format("attention.decode.{}{}.d{}", name_of(shape.act), kv, shape.head_dim);
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

const GpuSpec& gpu_of_runs(std::span<const MeasuredRun> runs, const HardwareRegistry& registry,
                           const std::optional<std::string>& gpu_flag) {
  if (runs.empty()) throw InputError("no measured run given");
  for (const MeasuredRun& run : runs) {
    if (run.device_name != runs.front().device_name) {
      throw InputError(fmt::format("{} ran on '{}' but {} on '{}': give runs of one GPU", runs.front().file,
                                   runs.front().device_name, run.file, run.device_name));
    }
  }
  if (gpu_flag) return registry.find(*gpu_flag);
  const GpuSpec* found = nullptr;
  for (const MeasuredRun& run : runs) {
    const GpuSpec* spec = nullptr;
    if (run.hardware_id) {
      spec = &registry.find(*run.hardware_id);
    } else {
      const bench::HardwareMatch match = bench::match_hardware(run.device_name, registry);
      if (match.spec == nullptr) throw InputError(fmt::format("{}: {}", run.file, match.detail));
      spec = match.spec;
    }
    if (found != nullptr && found != spec) {
      throw InputError(fmt::format("{} was matched to {} but {} to {}: name the GPU with --gpu", runs.front().file,
                                   found->id, run.file, spec->id));
    }
    found = spec;
  }
  return *found;
}

BasisOrReason benchmark_basis(const Measurement& m, const MeasuredRun& run) {
  if (m.suite == "memory") return memory_basis(m, run);
  if (m.group == "layer") {
    return NoBasis{"a whole decoder layer: predicted as the sum of its stages (the layers table)", false};
  }
  if (m.group == "layer_stages") return layer_stage_basis(m);
  if (m.group == "gemm" || m.group == "attention" || m.group == "peak") return compute_basis(m);
  if (collective_from_name(m.group)) return NoBasis{"a collective: compared with the ring model under collectives"};
  return NoBasis{fmt::format("group '{}' has no prediction in this build", m.group), false};
}

}  // namespace roofline
