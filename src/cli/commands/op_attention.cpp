// roofline op attention: standard vs flash attention, HBM traffic and roofline time, and the
// factor flash saves.
#include <fmt/format.h>

#include "op.hpp"
#include "op_engine.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/text.hpp"
#include "roofline/model/attention.hpp"

namespace roofline::cli {
namespace {

using namespace op_detail;

struct AttentionRow {
  std::string_view gpu;
  AttentionShape shape;
  AttentionImpl impl = AttentionImpl::flash;
  AttentionCost cost;  // of this implementation
  FlashTiling tiling;
  double smem_bytes = 0;
  std::optional<bool> tile_fits;  // unset: the GPU states no shared memory size
  KvResidency residency;
  double hbm_reduction = 0;   // standard bytes / flash bytes
  double time_reduction = 0;  // standard time / flash time, when the GPU has the peak
  Timing t;
  [[nodiscard]] bool flash() const { return impl == AttentionImpl::flash; }
};

constexpr std::array<OpColumn<AttentionRow>, 12> shape_columns{{
    {{"gpu", "GPU", 0}, [](const AttentionRow& r) { return text(r.gpu); }},
    {{"impl", "impl", 0}, [](const AttentionRow& r) { return text(name_of(r.impl)); }},
    {{"batch", "batch", 0}, [](const AttentionRow& r) { return integer(r.shape.batch); }},
    {{"heads", "heads", 0}, [](const AttentionRow& r) { return integer(r.shape.heads); }},
    {{"kv_heads", "kv heads", 0}, [](const AttentionRow& r) { return integer(r.shape.kv_heads); }},
    {{"head_dim", "d", 0}, [](const AttentionRow& r) { return integer(r.shape.head_dim); }},
    {{"head_dim_v", "d_v", 0}, [](const AttentionRow& r) { return integer(value_head_dim(r.shape)); }, Show::detail},
    {{"seq", "seq", 0}, [](const AttentionRow& r) { return integer(r.shape.seq); }},
    {{"kv_seq", "kv seq", 0}, [](const AttentionRow& r) { return integer(r.shape.kv_seq); }},
    {{"causal", "causal", 0}, [](const AttentionRow& r) { return OpCell{r.shape.causal}; }},
    {{"act_dtype", "act", 0}, [](const AttentionRow& r) { return text(name_of(r.shape.act)); }, Show::detail},
    {{"kv_dtype", "kv", 0}, [](const AttentionRow& r) { return text(name_of(r.shape.kv)); }, Show::detail},
}};

constexpr std::array<OpColumn<AttentionRow>, 11> attention_columns{{
    {{"executed_flops", "executed FLOPs", 0},
     [](const AttentionRow& r) { return OpCell{r.cost.executed_flops}; },
     Show::detail},
    {{"scores_bytes", "S/P [B]", 0}, [](const AttentionRow& r) { return number_if(!r.flash(), r.cost.scores_bytes); }},
    {{"tile_q", "tile q", 0}, [](const AttentionRow& r) { return r.flash() ? integer(r.tiling.q) : OpCell{}; }},
    {{"tile_kv", "tile kv", 0}, [](const AttentionRow& r) { return r.flash() ? integer(r.tiling.kv) : OpCell{}; }},
    {{"smem_bytes", "smem [B]", 0},
     [](const AttentionRow& r) { return number_if(r.flash(), r.smem_bytes); },
     Show::detail},
    {{"tile_fits_smem", "tile fits", 0},
     [](const AttentionRow& r) { return r.flash() && r.tile_fits ? OpCell{*r.tile_fits} : OpCell{}; },
     Show::detail},
    {{"kv_reread_bytes", "K/V re-read [B]", 0},
     [](const AttentionRow& r) { return number_if(r.flash(), r.cost.kv_reread_bytes); }},
    {{"kv_working_set_bytes", "K/V in flight [B]", 0},
     [](const AttentionRow& r) { return number_if(r.flash(), r.residency.working_set_bytes); },
     Show::detail},
    {{"l2_holds_kv", "L2 holds K/V", 0},
     [](const AttentionRow& r) { return r.flash() ? OpCell{r.residency.l2_holds} : OpCell{}; }},
    {{"hbm_reduction", "HBM std/flash", 1}, [](const AttentionRow& r) { return OpCell{r.hbm_reduction}; }},
    {{"time_reduction", "time std/flash", 1},
     [](const AttentionRow& r) { return number_if(r.t.has_peak(), r.time_reduction); }},
}};

// A flag that is either swept or tied to another one (--kv-heads to --heads, --kv-seq to --seq).
struct TiedAxis {
  std::vector<std::int64_t> values;  // empty: tied
  [[nodiscard]] std::size_t size() const { return values.empty() ? 1 : values.size(); }
  [[nodiscard]] std::int64_t at(std::size_t i, std::int64_t tied) const { return values.empty() ? tied : values[i]; }
};

struct AttentionPlan {
  OpSetup setup;
  std::vector<std::int64_t> batch, heads, head_dim, seq;
  std::int64_t head_dim_v = 0;  // 0: each point's head_dim
  TiedAxis kv_heads, kv_seq, tile, tile_kv;
  bool causal = false;
  bool show_standard = true, show_flash = true;
  DType act = DType::bf16, kv = DType::bf16;
  MathRoof math;  // the tensor peak of the activation type
  std::uint64_t rows = 0;
};

// Every pair of values from two axes must satisfy `ok`; checked before any row is written.
// Skipped for absurdly long axes (each point is checked again as it is costed).
template <class Ok>
void check_pairs(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b, Ok&& ok) {
  if (a.size() * b.size() > 10'000'000) return;
  for (std::int64_t x : a) {
    for (std::int64_t y : b) ok(x, y);
  }
}

AttentionPlan plan_attention(const AttentionOptions& o, const HardwareRegistry& registry) {
  AttentionPlan p;
  p.setup = setup_op("op-attention", o.op, registry);
  p.batch = axis("--batch", o.batch);
  p.heads = axis("--heads", o.heads);
  p.head_dim = axis("--head-dim", o.head_dim);
  p.seq = axis("--seq", o.seq);
  if (o.head_dim_v) {
    if (*o.head_dim_v < 1) throw InputError(fmt::format("--head-dim-v {}: must be a whole number >= 1", *o.head_dim_v));
    p.head_dim_v = *o.head_dim_v;
  }
  if (o.kv_heads) p.kv_heads.values = axis("--kv-heads", *o.kv_heads);
  if (o.kv_seq) p.kv_seq.values = axis("--kv-seq", *o.kv_seq);
  if (o.tile) p.tile.values = axis("--tile", *o.tile);
  if (o.tile_kv) p.tile_kv.values = axis("--tile-kv", *o.tile_kv);
  for (const TiedAxis* tile : {&p.tile, &p.tile_kv}) {
    if (!tile->values.empty() && max_of(tile->values) > max_flash_tile) {
      throw InputError(fmt::format("{}: {} rows; at most {}", tile == &p.tile ? "--tile" : "--tile-kv",
                                   max_of(tile->values), max_flash_tile));
    }
  }
  p.causal = o.causal;
  const std::string impl = to_lower(o.impl);
  if (impl != "standard" && impl != "flash" && impl != "both") {
    throw InputError(fmt::format("--impl: '{}' is not one of standard, flash, both", o.impl));
  }
  p.show_standard = impl != "flash";
  p.show_flash = impl != "standard";
  const DType base = parse_dtype(o.op.dtype);
  p.act = o.act ? parse_dtype(*o.act, "--act") : base;
  p.kv = o.kv ? parse_dtype(*o.kv, "--kv") : base;

  check_pairs(p.heads, p.kv_heads.values, [](std::int64_t h, std::int64_t kv) {
    if (h % kv != 0) {
      throw InputError(
          fmt::format("--kv-heads {} does not divide --heads {} (each KV head serves a whole group of "
                      "query heads)",
                      kv, h));
    }
  });
  if (p.causal) {
    check_pairs(p.seq, p.kv_seq.values, [](std::int64_t q, std::int64_t kv) {
      if (q > kv) {
        throw InputError(
            fmt::format("--causal: --seq {} exceeds --kv-seq {} (the queries are the last seq of the "
                        "kv_seq positions)",
                        q, kv));
      }
    });
  }
  // The largest point first: a byte count that overflows fails before any row is written.
  const std::int64_t max_heads = max_of(p.heads);
  const AttentionShape largest{.batch = max_of(p.batch),
                               .heads = max_heads,
                               .kv_heads = p.kv_heads.values.empty() ? max_heads : max_of(p.kv_heads.values),
                               .head_dim = max_of(p.head_dim),
                               .head_dim_v = p.head_dim_v,
                               .seq = max_of(p.seq),
                               .kv_seq = p.kv_seq.values.empty() ? max_of(p.seq) : max_of(p.kv_seq.values),
                               .causal = p.causal,
                               .act = p.act,
                               .kv = p.kv};
  const std::int64_t smallest_q = p.tile.values.empty() ? 16 : min_of(p.tile.values);
  const std::int64_t smallest_kv = p.tile_kv.values.empty() ? smallest_q : min_of(p.tile_kv.values);
  (void)standard_attention_cost(largest);
  (void)flash_attention_cost(largest, {smallest_q, smallest_kv});

  p.math = {MathRoof::Unit::matrix, p.act};
  const std::array<std::size_t, 10> sizes{
      p.setup.gpus.size(), p.batch.size(),
      p.heads.size(),      p.kv_heads.size(),
      p.head_dim.size(),   p.seq.size(),
      p.kv_seq.size(),     p.tile.size(),
      p.tile_kv.size(),    std::size_t{p.show_standard} + std::size_t{p.show_flash}};
  p.rows = sweep_point_count(sizes);

  Report& report = p.setup.report;
  const auto tied = [](const std::optional<std::string>& flag, const char* to) {
    return flag ? nlohmann::json(*flag) : nlohmann::json(to);
  };
  report.inputs.update({{"batch", o.batch},
                        {"heads", o.heads},
                        {"kv_heads", tied(o.kv_heads, "= heads")},
                        {"head_dim", o.head_dim},
                        {"head_dim_v", o.head_dim_v ? nlohmann::json(*o.head_dim_v) : nlohmann::json("= head_dim")},
                        {"seq", o.seq},
                        {"kv_seq", tied(o.kv_seq, "= seq")},
                        {"causal", o.causal},
                        {"impl", impl},
                        {"tile", tied(o.tile, "from shared memory")},
                        {"tile_kv", tied(o.tile_kv, "= tile")},
                        {"act", name_of(p.act)},
                        {"kv", name_of(p.kv)}});
  report.notes.push_back(
      "FLOPs = 4 d per query-key pair per (batch, head): 2 d for Q K^T and 2 d for P V (2 (d + d_v) where "
      "--head-dim-v makes V d_v wide); the softmax's few FLOPs per score run on the vector units and are not counted "
      "(as in the FlashAttention papers)");
  if (p.causal) {
    report.notes.push_back(
        "causal: the seq queries are the last of the kv_seq positions; pairs = seq (kv_seq - seq) + seq (seq + 1) / "
        "2, each query's own key (the diagonal) counted. Standard attention still computes and stores all of S; "
        "flash computes whole tiles up to the diagonal (executed_flops)");
  }
  if (p.show_standard) {
    report.notes.push_back(
        "standard: three kernels. S = Q K^T writes S; softmax reads S and writes P; O = P V reads P and V and writes "
        "O: four passes over the seq x kv_seq scores (scores_bytes, in the activation type). The scale is folded "
        "into the first GEMM and the mask into the softmax; K and V are read once per query head");
  }
  if (p.show_flash) {
    report.notes.push_back(
        "flash: Q and O cross HBM once, K and V once per KV head (shared by the query heads of a GQA group). Each "
        "query tile loads K and V again (kv_reread_bytes): from L2 when it holds the K/V of the heads in flight "
        "(l2_holds_kv; one block per SM, a head's query tiles launched together), otherwise from HBM, which the "
        "lower-bound time leaves out");
    report.notes.push_back(
        "flash tiles: --tile, or the largest power of two (256 down to 16) whose Q tile and double-buffered K and V "
        "tiles fit the GPU's shared memory per SM");
  }
  report.notes.push_back("hbm_reduction = standard bytes / flash bytes; time_reduction = standard time / flash time");
  add_roof_notes(report, p.setup.roofs, p.math,
                 fmt::format("{} tensor peak (the activation type sets the math)", name_of(p.act)));
  add_dtype_notes(report, {p.act, p.kv});
  for (const Roofs& gpu : p.setup.roofs) {
    if (!gpu.smem_bytes_per_unit && p.show_flash) {
      report.notes.push_back(fmt::format("{} states no shared memory size: default tile 128", gpu.gpu_id));
    }
  }
  return p;
}

template <class Emit>
void generate(const AttentionPlan& p, Emit&& emit) {
  const std::array<std::size_t, 8> sizes{p.batch.size(), p.heads.size(),  p.kv_heads.size(), p.head_dim.size(),
                                         p.seq.size(),   p.kv_seq.size(), p.tile.size(),     p.tile_kv.size()};
  AttentionRow standard;
  AttentionRow flash;
  standard.impl = AttentionImpl::standard;
  flash.impl = AttentionImpl::flash;
  for (const Roofs& gpu : p.setup.roofs) {
    standard.gpu = flash.gpu = gpu.gpu_id;
    SweepCursor at(sizes);
    do {
      AttentionShape shape;
      shape.batch = p.batch[at[0]];
      shape.heads = p.heads[at[1]];
      shape.kv_heads = p.kv_heads.at(at[2], shape.heads);
      shape.head_dim = p.head_dim[at[3]];
      shape.head_dim_v = p.head_dim_v;
      shape.seq = p.seq[at[4]];
      shape.kv_seq = p.kv_seq.at(at[5], shape.seq);
      shape.causal = p.causal;
      shape.act = p.act;
      shape.kv = p.kv;
      FlashTiling tiling =
          gpu.smem_bytes_per_unit ? default_flash_tiling(shape, *gpu.smem_bytes_per_unit) : FlashTiling{128, 128};
      tiling.q = p.tile.at(at[6], tiling.q);
      tiling.kv = p.tile_kv.at(at[7], p.tile.values.empty() ? tiling.kv : tiling.q);

      standard.shape = flash.shape = shape;
      standard.cost = standard_attention_cost(shape);
      flash.cost = flash_attention_cost(shape, tiling);
      flash.tiling = tiling;
      flash.smem_bytes = flash_smem_bytes(shape, tiling);
      flash.tile_fits =
          gpu.smem_bytes_per_unit ? std::optional(flash.smem_bytes <= *gpu.smem_bytes_per_unit) : std::nullopt;
      flash.residency = flash_kv_residency(shape, tiling, gpu.units, gpu.l2_bytes);
      standard.t = time_on(standard.cost.hbm, gpu, p.math, p.setup.efficiency);
      flash.t = time_on(flash.cost.hbm, gpu, p.math, p.setup.efficiency);
      if (p.setup.calibrated()) {
        apply_calibration(standard.t, p.setup, attention_basis(shape, AttentionImpl::standard));
        apply_calibration(flash.t, p.setup, attention_basis(shape, AttentionImpl::flash));
      }
      standard.hbm_reduction = flash.hbm_reduction = standard.cost.hbm.bytes() / flash.cost.hbm.bytes();
      standard.time_reduction = flash.time_reduction = standard.t.time.time_s / flash.t.time.time_s;
      if (p.show_standard) emit(standard);
      if (p.show_flash) emit(flash);
    } while (at.next());
  }
}

}  // namespace

Report run_op(const AttentionOptions& options, const HardwareRegistry& registry) {
  AttentionPlan p = plan_attention(options, registry);
  return make_report<AttentionRow>(
      p.setup, p.rows, "attention", "Attention: standard (S and P through HBM) vs flash (on chip)",
      {shape_columns, timing_columns<AttentionRow>, attention_columns}, [&](auto&& emit) { generate(p, emit); });
}

std::uint64_t stream_op_csv(const AttentionOptions& options, const HardwareRegistry& registry, std::ostream& out,
                            std::ostream& notes) {
  const AttentionPlan p = plan_attention(options, registry);
  return stream_rows<AttentionRow>(p.setup, {shape_columns, timing_columns<AttentionRow>, attention_columns}, out,
                                   notes, [&](auto&& emit) { generate(p, emit); });
}

}  // namespace roofline::cli
