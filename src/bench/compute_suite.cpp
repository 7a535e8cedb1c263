#include "roofline/bench/compute_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "roofline/basis/calibration_tables.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/llm/model_presets.hpp"

namespace roofline::bench::compute {

std::string_view id_name(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::cublas: return "cublas";
    case GemmImpl::naive: return "naive";
    case GemmImpl::smem_tiled: return "smemtiled";
    case GemmImpl::mma_sync: return "mmasync";
    case GemmImpl::wgmma: return "wgmma";
    case GemmImpl::cublaslt: return "cublaslt";
    case GemmImpl::swapab: return "swapab";
    case GemmImpl::splitk: return "splitk";
  }
  return "?";
}

std::string_view id_name(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::standard: return "standard";
    case AttentionImpl::flash_w8r16: return "flashw8r16";
    case AttentionImpl::flash_w4r32: return "flashw4r32";
    case AttentionImpl::flash_wgmma: return "flashwgmma";
  }
  return "?";
}

namespace {

bool is_fp8(const GemmCase& c) {
  return c.dtype == DType::fp8_e4m3 || c.dtype == DType::fp8_e5m2;
}

constexpr std::string_view fp8_gemm_group = "gemm_fp8";
constexpr std::string_view grouped_gemm_group = "gemm_grouped";

std::string_view group_of(const GemmCase& c) {
  return is_fp8(c) ? fp8_gemm_group : std::string_view("gemm");
}

std::string_view implementation_of(GroupedGemmImpl impl) {
  switch (impl) {
    case GroupedGemmImpl::wgmma:
    case GroupedGemmImpl::splitk:
    case GroupedGemmImpl::swapab: return "roofline";
    case GroupedGemmImpl::cublas: return "cublas";
    case GroupedGemmImpl::cublaslt: return "cublaslt";
  }
  return "?";
}

std::string_view implementation_of(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::cublas: return "cublas";
    case GemmImpl::cublaslt: return "cublaslt";
    default: return "roofline";
  }
}

// A format as a word of an id (ids are dotted words of letters and digits): "bf16", "fp8e4m3".
std::string id_word(DType dtype) {
  std::string word(name_of(dtype));
  std::erase(word, '_');
  return word;
}

std::string gemm_problem(const GemmCase& c) {
  return fmt::format("gemm.{}.{}x{}x{}", id_word(c.dtype), c.m, c.n, c.k);
}

// V's width joins the head dim where it differs: "d192v128".
std::string attention_problem(const AttentionCase& c) {
  const std::string value_dim = c.head_dim_v == 0 ? "" : fmt::format("v{}", c.head_dim_v);
  return fmt::format("attn.{}.{}.d{}{}.b{}h{}kv{}.n{}", name_of(c.dtype), c.causal ? "causal" : "full", c.head_dim,
                     value_dim, c.batch, c.heads, c.kv_heads, c.seq);
}

std::string tile_text(int m, int n) {
  return fmt::format("{}x{}", m, n);
}

using C = ColumnOf<BenchmarkResult>;
namespace col = columns;

constexpr auto gemm_columns = columns::join(std::to_array<C>({
                                                col::id,
                                                col::implementation,
                                                col::status,
                                                {{"kernel", "kernel", 0}, &param<"kernel">},
                                                {{"dtype", "dtype", 0}, &param<"dtype">},
                                                {{"m", "m", 0}, &param<"m">},
                                                {{"n", "n", 0}, &param<"n">},
                                                {{"k", "k", 0}, &param<"k">},
                                                {{"tile", "tile", 0}, &param<"tile">},
                                                col::model_flops,
                                                {{"model_bytes", "HBM bytes (tiled model)", 0}, &cells::model_bytes},
                                                {{"min_bytes", "min bytes", 0}, &param<"min_bytes">},
                                                {{"naive_bytes", "naive bytes", 0}, &param<"naive_bytes">},
                                            }),
                                            columns::timing,
                                            std::to_array<C>({
                                                col::tflops,
                                                {{"bandwidth_tbps", "model TB/s", 3}, &cells::bandwidth_tbps},
                                                {{"pct_of_cublas", "% cuBLAS", 1}, &cells::pct_of_reference},
                                                col::pct_of_peak,
                                                col::detail,
                                            }));

constexpr auto fp8_gemm_columns = columns::join(std::to_array<C>({
                                                    col::id,
                                                    col::implementation,
                                                    col::status,
                                                    {{"kernel", "kernel", 0}, &param<"kernel">},
                                                    {{"dtype", "dtype", 0}, &param<"dtype">},
                                                    {{"output", "C", 0}, &param<"output">},
                                                    {{"m", "m", 0}, &param<"m">},
                                                    {{"m_run", "m run", 0}, &param<"m_run">},
                                                    {{"n", "n", 0}, &param<"n">},
                                                    {{"k", "k", 0}, &param<"k">},
                                                    {{"tile", "tile", 0}, &param<"tile">},
                                                    col::model_flops,
                                                    {{"model_bytes", "HBM bytes (model)", 0}, &cells::model_bytes},
                                                    {{"min_bytes", "min bytes", 0}, &param<"min_bytes">},
                                                }),
                                                columns::timing,
                                                std::to_array<C>({
                                                    col::tflops,
                                                    {{"bandwidth_tbps", "model TB/s", 3}, &cells::bandwidth_tbps},
                                                    {{"pct_of_cublaslt", "% cuBLASLt", 1}, &cells::pct_of_reference},
                                                    col::detail,
                                                }));

constexpr auto grouped_gemm_columns =
    columns::join(std::to_array<C>({
                      col::id,
                      col::implementation,
                      col::status,
                      {{"kernel", "kernel", 0}, &param<"kernel">},
                      {{"call", "call", 0}, &param<"call">},
                      {{"dtype", "dtype", 0}, &param<"dtype">},
                      {{"output", "C", 0}, &param<"output">},
                      {{"model", "model", 0}, &param<"model">},
                      {{"projection", "projection", 0}, &param<"projection">},
                      {{"experts", "E", 0}, &param<"experts">},
                      {{"experts_touched", "E touched", 0}, &param<"experts_touched">},
                      {{"tokens_per_expert", "t/E", 0}, &param<"tokens_per_expert">},
                      {{"split", "split", 0}, &param<"split">},
                      {{"max_tokens", "max t_e", 0}, &param<"max_tokens">},
                      {{"m", "sum t_e", 0}, &param<"m">},
                      {{"m_run", "rows run", 0}, &param<"m_run">},
                      {{"n", "n", 0}, &param<"n">},
                      {{"k", "k", 0}, &param<"k">},
                      col::model_flops,
                      {{"model_bytes", "HBM bytes (model)", 0}, &cells::model_bytes},
                  }),
                  columns::timing,
                  std::to_array<C>({
                      col::tflops,
                      {{"bandwidth_tbps", "model TB/s", 3}, &cells::bandwidth_tbps},
                      {{"pct_of_library", "% library", 1}, &cells::pct_of_reference},
                      col::pct_of_peak,
                      col::detail,
                  }));

constexpr auto attention_columns =
    columns::join(std::to_array<C>({
                      col::id,
                      col::implementation,
                      col::status,
                      {{"kernel", "kernel", 0}, &param<"kernel">},
                      {{"dtype", "dtype", 0}, &param<"dtype">},
                      {{"causal", "causal", 0}, &param<"causal">},
                      {{"head_dim", "d", 0}, &param<"head_dim">},
                      {{"head_dim_v", "d_v", 0}, &param<"head_dim_v">},  // only where V is narrower
                      {{"batch", "B", 0}, &param<"batch">},
                      {{"heads", "H", 0}, &param<"heads">},
                      {{"kv_heads", "Hkv", 0}, &param<"kv_heads">},
                      {{"seq", "N", 0}, &param<"seq">},
                      {{"tile", "tile", 0}, &param<"tile">},
                      col::model_flops,
                      {{"executed_flops", "executed FLOPs", 0}, &param<"executed_flops">},
                      {{"model_bytes", "HBM bytes (model)", 0}, &cells::model_bytes},
                      {{"scores_bytes", "S/P bytes", 0}, &param<"scores_bytes">},
                      {{"kv_load_bytes", "K/V tile loads", 0}, &param<"kv_load_bytes">},
                  }),
                  columns::timing,
                  std::to_array<C>({
                      col::tflops,
                      {{"speedup_vs_standard", "x standard", 2}, &cells::reference_speedup},
                      col::pct_of_peak,
                      col::detail,
                  }));

constexpr auto peak_columns = columns::join(std::to_array<C>({
                                                col::id,
                                                col::implementation,
                                                col::status,
                                                {{"kernel", "kernel", 0}, &param<"kernel">},
                                                {{"dtype", "dtype", 0}, &param<"dtype">},
                                                {{"blocks", "blocks", 0}, &param<"blocks">},
                                                {{"threads", "threads", 0}, &param<"threads">},
                                                {{"iterations", "iterations", 0}, &param<"iterations">},
                                                col::model_flops,
                                            }),
                                            columns::timing,
                                            std::to_array<C>({
                                                col::tflops,
                                                col::detail,
                                            }));

const std::array<GroupLayout, 5> group_layouts{{
    {"peak", "Compute ceilings: FMA (fp32) and tensor-core (bf16) probes, arithmetic only", peak_columns},
    {"gemm",
     "GEMM C[m,n] = A[m,k] B[n,k]^T (fp32 accumulation): naive -> smem tiled -> mma.sync -> wgmma -> cuBLAS; HBM bytes "
     "from the tiled-GEMM formula for the kernel's tile",
     gemm_columns},
    {"gemm_fp8",
     "FP8 GEMM C_bf16[m,n] = sa sb A_e4m3[m,k] B_e4m3[n,k]^T (per-tensor scales, fp32 accumulation): wgmma vs "
     "cuBLASLt; FLOPs and bytes of the m rows asked for (m run: the rows cuBLASLt computed after padding)",
     fp8_gemm_columns},
    {std::string_view(grouped_gemm_group),
     "MoE grouped GEMM C_e[t_e,n] = A_e[t_e,k] B_e[n,k]^T over E experts, tokens stacked by expert (bf16, or e4m3 "
     "with per-tensor scales and bf16 C): the wgmma grouped kernel (one launch; k split; or A and B swapped, the "
     "tokens as wgmma's N) vs cuBLAS (strided batched for a "
     "uniform split, grouped batched for a skewed one) or cuBLASLt (one FP8 matmul per expert, rows rounded up to "
     "16: rows run); FLOPs 2 sum(t_e) n k, bytes the weights of the experts touched and the tokens in and out",
     grouped_gemm_columns},
    {"attention", "Attention forward: standard (S and P in HBM, cuBLAS) vs flash; HBM bytes from the model",
     attention_columns},
}};

constexpr std::array<Target, 4> suite_targets{{
    {"tensor-core GEMM bf16 8192^3 reaches 70% of cuBLAS",
     {"gemm.bf16.8192x8192x8192.wgmma", "gemm.bf16.8192x8192x8192.mmasync", "", "", "", ""},
     "gemm.bf16.8192x8192x8192.cublas",
     0.70,
     Metric::flop_rate},
    {"flash attention bf16 causal B4 H32 N4096 d128 reaches 300 TFLOP/s",
     {"attn.bf16.causal.d128.b4h32kv32.n4096.flashw8r16", "attn.bf16.causal.d128.b4h32kv32.n4096.flashw4r32",
      "attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma", "", "", ""},
     "",
     300e12,
     Metric::flop_rate},
    {"flash attention beats standard attention at N=4096 (bf16 causal B4 H32 d128)",
     {"attn.bf16.causal.d128.b4h32kv32.n4096.flashw8r16", "attn.bf16.causal.d128.b4h32kv32.n4096.flashw4r32",
      "attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma", "", "", ""},
     "attn.bf16.causal.d128.b4h32kv32.n4096.standard",
     1.0,
     Metric::flop_rate},
    {"FP8 wgmma GEMM 8192^3 reaches 85% of cuBLASLt",
     {"gemm.fp8e4m3.8192x8192x8192.wgmma", "", "", "", "", ""},
     "gemm.fp8e4m3.8192x8192x8192.cublaslt",
     0.85,
     Metric::flop_rate},
}};

std::vector<CaseInfo> list_cases() {
  std::vector<CaseInfo> list;
  for (const PeakCase& c : peak_cases) list.push_back({"compute", "peak", case_id(c.impl), "roofline", c.quick});
  for (const GemmCase& c : all_gemm_cases()) {
    list.push_back({"compute", std::string(group_of(c)), case_id(c), std::string(implementation_of(c.impl)), c.quick});
  }
  for (const GroupedGemmCase& c : grouped_gemm_cases()) {
    list.push_back(
        {"compute", std::string(grouped_gemm_group), case_id(c), std::string(implementation_of(c.impl)), c.quick});
  }
  for (const AttentionCase& c : attention_cases) {
    list.push_back({"compute", "attention", case_id(c),
                    c.impl == AttentionImpl::standard ? "roofline+cublas" : "roofline", c.quick});
  }
  return list;
}

// ---- the attention table by N ----------------------------------------------------------------

struct AttentionRow {
  std::string dtype;
  bool causal = false;
  std::int64_t head_dim = 0, batch = 0, heads = 0, kv_heads = 0, seq = 0;
  std::int64_t head_dim_v = 0;                  // 0: head_dim
  std::array<std::optional<double>, 4> tflops;  // by AttentionImpl
  std::string standard_status;
  std::optional<double> standard_bytes;
  std::optional<double> flash_bytes;
  std::optional<double> flash_kv_load_bytes;  // with the fastest flash kernel's tiles
  std::optional<std::string> best_flash;
  std::optional<double> best_flash_tflops;
};

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

Cell opt(const std::optional<double>& v, double scale = 1.0) {
  return v ? Cell{*v * scale} : Cell{};
}

constexpr std::array<ColumnOf<AttentionRow>, 20> by_n_columns{{
    {{"dtype", "dtype", 0}, [](const AttentionRow& r) { return Cell{r.dtype}; }},
    {{"causal", "causal", 0}, [](const AttentionRow& r) { return Cell{r.causal}; }},
    {{"head_dim", "d", 0}, [](const AttentionRow& r) { return Cell{r.head_dim}; }},
    {{"head_dim_v", "d_v", 0},
     [](const AttentionRow& r) { return Cell{r.head_dim_v == 0 ? r.head_dim : r.head_dim_v}; }},
    {{"batch", "B", 0}, [](const AttentionRow& r) { return Cell{r.batch}; }},
    {{"heads", "H", 0}, [](const AttentionRow& r) { return Cell{r.heads}; }},
    {{"kv_heads", "Hkv", 0}, [](const AttentionRow& r) { return Cell{r.kv_heads}; }},
    {{"seq", "N", 0}, [](const AttentionRow& r) { return Cell{r.seq}; }},
    {{"standard_tflops", "standard TFLOP/s", 1}, [](const AttentionRow& r) { return opt(r.tflops[0]); }},
    {{"flash_w8r16_tflops", "w8r16 TFLOP/s", 1}, [](const AttentionRow& r) { return opt(r.tflops[1]); }},
    {{"flash_w4r32_tflops", "w4r32 TFLOP/s", 1}, [](const AttentionRow& r) { return opt(r.tflops[2]); }},
    {{"flash_wgmma_tflops", "wgmma TFLOP/s", 1}, [](const AttentionRow& r) { return opt(r.tflops[3]); }},
    {{"best_flash", "best flash", 0},
     [](const AttentionRow& r) { return r.best_flash ? Cell{*r.best_flash} : Cell{}; }},
    {{"speedup", "best flash / standard", 2},
     [](const AttentionRow& r) { return opt(ratio(r.best_flash_tflops, r.tflops[0])); }},
    {{"standard_hbm_bytes", "standard HBM bytes", 0}, [](const AttentionRow& r) { return opt(r.standard_bytes); }},
    {{"flash_hbm_bytes", "flash HBM bytes", 0}, [](const AttentionRow& r) { return opt(r.flash_bytes); }},
    {{"traffic_ratio", "standard / flash bytes", 1},
     [](const AttentionRow& r) { return opt(ratio(r.standard_bytes, r.flash_bytes)); }},
    {{"flash_kv_load_bytes", "flash K/V tile loads", 0},
     [](const AttentionRow& r) { return opt(r.flash_kv_load_bytes); }},
    {{"standard_status", "standard", 0}, [](const AttentionRow& r) { return Cell{r.standard_status}; }},
    {{"note", "note", 0},
     [](const AttentionRow& r) {
       return r.standard_status == "passed" || r.standard_status.empty()
                  ? Cell{std::string()}
                  : Cell{std::string("standard attention: ") + r.standard_status};
     }},
}};

template <typename T>
T param_as(const BenchmarkResult& r, std::string_view key) {
  const Cell c = r.parameter(key);
  if (const T* v = std::get_if<T>(&c)) return *v;
  return T{};
}

// Rebuilt from the recorded shape: a GEMM from m, n, k (batch 1 where the run recorded none),
// an attention from its heads, dims and mask (kv_seq = seq where not recorded).
BasisOrReason recorded_basis(const RecordedResult& m) {
  if (m.group == "peak") return NoBasis{"a compute ceiling: itself a measured roof", true};
  if (m.group == grouped_gemm_group) {
    // The split is rebuilt from (experts, tokens per expert, split): expert_tokens is deterministic.
    const std::string split = m.text("split");
    const auto known =
        std::find_if(expert_splits.begin(), expert_splits.end(), [&](ExpertSplit s) { return split_name(s) == split; });
    if (known == expert_splits.end()) {
      throw InputError(fmt::format("{}: {} has split '{}' (uniform or skewed)", m.where, m.id, split));
    }
    const std::vector<std::int64_t> tokens = expert_tokens(m.whole("experts"), m.whole("tokens_per_expert"), *known);
    const DType dtype = m.dtype("dtype");
    Basis b = grouped_gemm_basis({tokens, m.whole("n"), m.whole("k"), dtype, dtype, m.dtype("output")});
    b.table = calibration_tables::implementation(b.best_table, m.kernel);
    b.problem = std::string(m.id.substr(0, m.id.rfind('.')));
    return b;
  }
  if (m.group != "gemm" && m.group != fp8_gemm_group && m.group != "attention") {
    return NoBasis{fmt::format("group '{}' has no prediction in this build", m.group), false};
  }
  const DType dtype = m.dtype("dtype");
  const std::string problem_id(m.id.substr(0, m.id.rfind('.')));
  if (m.group == "gemm" || m.group == fp8_gemm_group) {
    // FP8 results record C's format (bf16); the 16-bit ones have C in the operands' format. The
    // table is calibration_tables::gemm(a, b) of the operands: what an FP8 x FP8 linear looks up.
    const DType output = m.has("output") ? m.dtype("output") : dtype;
    const std::int64_t batch = m.has("batch") ? m.whole("batch") : 1;
    Basis b = gemm_basis({m.whole("m"), m.whole("n"), m.whole("k"), batch, dtype, dtype, output});
    b.table = calibration_tables::implementation(b.best_table, m.kernel);
    b.problem = problem_id;
    return b;
  }
  AttentionShape shape;
  shape.batch = m.whole("batch");
  shape.heads = m.whole("heads");
  shape.kv_heads = m.whole("kv_heads");
  shape.head_dim = m.whole("head_dim");
  shape.head_dim_v = m.has("head_dim_v") ? m.whole("head_dim_v") : 0;
  shape.seq = m.whole("seq");
  shape.kv_seq = m.has("kv_seq") ? m.whole("kv_seq") : shape.seq;
  shape.causal = m.flag("causal");
  shape.act = dtype;
  shape.kv = dtype;
  const roofline::AttentionImpl impl =
      m.kernel.starts_with("flash") ? roofline::AttentionImpl::flash : roofline::AttentionImpl::standard;
  Basis b = attention_basis(shape, impl);
  b.table = attention_implementation_table(m.kernel, dtype, shape.head_dim, shape.causal, shape.head_dim_v);
  b.problem = calibration_tables::problem(b.best_table, problem_id);
  return b;
}

}  // namespace

std::string_view impl_name(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::cublas: return "cublas";
    case GemmImpl::naive: return "naive";
    case GemmImpl::smem_tiled: return "smem_tiled";
    case GemmImpl::mma_sync: return "mma_sync";
    case GemmImpl::wgmma: return "wgmma";
    case GemmImpl::cublaslt: return "cublaslt";
    case GemmImpl::swapab: return "swapab";
    case GemmImpl::splitk: return "wgmma_splitk";
  }
  return "?";
}

std::string_view impl_name(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::standard: return "standard";
    case AttentionImpl::flash_w8r16: return "flash_w8r16";
    case AttentionImpl::flash_w4r32: return "flash_w4r32";
    case AttentionImpl::flash_wgmma: return "flash_wgmma";
  }
  return "?";
}

std::string_view impl_name(PeakImpl impl) {
  switch (impl) {
    case PeakImpl::fma_fp32: return "fma_fp32";
    case PeakImpl::mma_sync_bf16: return "mma_sync_bf16";
    case PeakImpl::wgmma_bf16: return "wgmma_bf16";
  }
  return "?";
}

std::string case_id(const GemmCase& c) {
  return fmt::format("{}.{}", gemm_problem(c), id_name(c.impl));
}

std::string case_id(const AttentionCase& c) {
  return fmt::format("{}.{}", attention_problem(c), id_name(c.impl));
}

std::string gemm_wgmma_plan_note(std::int64_t m, std::int64_t n, int sms) {
  // k does not enter the note: the plain plan's k is whole.
  return gemm_skinny_plan_note(kernel_tiles::gemm_wgmma_plain_plan(m, n, kernel_tiles::gemm_wgmma.tile_k, sms), m, n,
                               sms);
}

std::string gemm_skinny_plan_note(const kernel_tiles::GemmSplitK& plan, std::int64_t m, std::int64_t n, int sms) {
  const long long blocks = kernel_tiles::gemm_plan_blocks(plan, m, n);
  const int sm_count = kernel_tiles::known_sms(sms);
  switch (plan.pairing) {
    case kernel_tiles::GemmPairing::share_b:
      return fmt::format("; {} pair tiles of 2 x 128 x {} (clusters of two blocks multicasting B) on {} SMs",
                         blocks / 2, plan.tile_n, sm_count);
    case kernel_tiles::GemmPairing::share_a:
      return fmt::format("; {} pair tiles of 128 x 2 x {} (clusters of two blocks multicasting A) on {} SMs",
                         blocks / 2, plan.tile_n, sm_count);
    case kernel_tiles::GemmPairing::none: break;
  }
  if (plan.splits == 1) {
    return fmt::format("; {} tiles of 128 x {}, a block each (persistent) on {} SMs", plan.tiles, plan.tile_n,
                       sm_count);
  }
  return fmt::format("; {} tiles of 128 x {}, k split {} ways ({} blocks of 64 each) on {} SMs", plan.tiles,
                     plan.tile_n, plan.splits, plan.k_blocks_per_split, sm_count);
}

std::string case_id(PeakImpl impl) {
  switch (impl) {
    case PeakImpl::fma_fp32: return std::string(fma_peak_id);
    case PeakImpl::mma_sync_bf16: return "peak.mmasync.bf16";
    case PeakImpl::wgmma_bf16: return std::string(tensor_peak_id);
  }
  return "?";
}

std::optional<kernel_tiles::GemmTiling> tiling_of(GemmImpl impl) {
  switch (impl) {
    case GemmImpl::naive: return kernel_tiles::gemm_naive;
    case GemmImpl::smem_tiled: return kernel_tiles::gemm_smem_tiled;
    case GemmImpl::mma_sync: return kernel_tiles::gemm_mma_sync;
    case GemmImpl::wgmma: return kernel_tiles::gemm_wgmma;
    case GemmImpl::swapab: return kernel_tiles::gemm_swapab;
    case GemmImpl::splitk: return kernel_tiles::gemm_wgmma;  // the wide tile; a case's own: tiling_of(case)
    case GemmImpl::cublas:
    case GemmImpl::cublaslt: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<kernel_tiles::FlashTiling> tiling_of(const AttentionCase& c) {
  const int d = static_cast<int>(c.head_dim);
  switch (c.impl) {
    case AttentionImpl::flash_w8r16: return kernel_tiles::flash_mma_sync(d, 8);
    case AttentionImpl::flash_w4r32: return kernel_tiles::flash_mma_sync(d, 4);
    case AttentionImpl::flash_wgmma:
      return c.dtype == DType::fp8_e4m3 ? kernel_tiles::flash_wgmma_fp8(d)
                                        : kernel_tiles::flash_wgmma(d, static_cast<int>(c.head_dim_v));
    case AttentionImpl::standard: return std::nullopt;
  }
  return std::nullopt;
}

GemmShape model_shape(const GemmCase& c) {
  return GemmShape{c.m, c.n, c.k, 1, c.dtype, c.dtype, c.output};
}

AttentionShape model_shape(const AttentionCase& c) {
  AttentionShape s;
  s.batch = c.batch;
  s.heads = c.heads;
  s.kv_heads = c.kv_heads;
  s.head_dim = c.head_dim;
  s.head_dim_v = c.head_dim_v;
  s.seq = c.seq;
  s.kv_seq = c.seq;
  s.causal = c.causal;
  s.act = c.dtype;
  s.kv = c.dtype;
  return s;
}

std::optional<kernel_tiles::GemmTiling> tiling_of(const GemmCase& c) {
  if (c.impl != GemmImpl::splitk) return tiling_of(c.impl);
  const kernel_tiles::GemmSplitK plan = kernel_tiles::gemm_wgmma_skinny_plan(c.m, c.n, c.k, gemm_split_k_listed_sms);
  kernel_tiles::GemmTiling t = kernel_tiles::gemm_wgmma;
  t.tile_n = plan.tile_n;
  t.stages = kernel_tiles::gemm_wgmma_stages(plan.tile_n);
  return t;
}

OpCost case_cost(const GemmCase& c) {
  const GemmShape shape = model_shape(c);
  if (c.impl == GemmImpl::cublas || c.impl == GemmImpl::cublaslt) return gemm_cost(shape);
  if (c.impl == GemmImpl::naive) return gemm_naive_cost(shape);
  const kernel_tiles::GemmTiling t = *tiling_of(c);
  return gemm_tiled_cost(shape, GemmTiles{t.tile_m, t.tile_n});
}

OpCost case_cost(const AttentionCase& c) {
  const AttentionShape shape = model_shape(c);
  if (c.impl == AttentionImpl::standard) return standard_attention_cost(shape).hbm;
  const kernel_tiles::FlashTiling t = *tiling_of(c);
  return flash_attention_cost(shape, FlashTiling{t.block_m, t.block_n}).hbm;
}

BenchmarkResult make_result(const GemmCase& c) {
  BenchmarkResult r;
  r.suite = "compute";
  r.group = std::string(group_of(c));
  r.id = case_id(c);
  r.implementation = std::string(implementation_of(c.impl));
  r.cost = case_cost(c);
  const GemmShape shape = model_shape(c);
  const std::optional<kernel_tiles::GemmTiling> t = tiling_of(c);
  if (is_fp8(c)) {
    r.parameters = {{"kernel", Cell{std::string(impl_name(c.impl))}},
                    {"dtype", Cell{std::string(name_of(c.dtype))}},
                    {"output", Cell{std::string(name_of(c.output))}},
                    {"m", Cell{c.m}},
                    {"m_run", Cell{c.rows_run()}},
                    {"n", Cell{c.n}},
                    {"k", Cell{c.k}},
                    {"tile", t ? Cell{tile_text(t->tile_m, t->tile_n)} : Cell{}},
                    {"min_bytes", Cell{gemm_cost(shape).bytes()}}};
    // No FP8 ceiling is measured (the tensor-core probe is bf16): the reference is cuBLASLt.
    r.ceiling_metric = Metric::flop_rate;
    if (c.impl != GemmImpl::cublaslt) r.reference_id = gemm_problem(c) + ".cublaslt";
    return r;
  }
  r.parameters = {{"kernel", Cell{std::string(impl_name(c.impl))}},
                  {"dtype", Cell{std::string(name_of(c.dtype))}},
                  {"m", Cell{c.m}},
                  {"n", Cell{c.n}},
                  {"k", Cell{c.k}},
                  {"tile", t ? Cell{tile_text(t->tile_m, t->tile_n)} : Cell{}},
                  {"min_bytes", Cell{gemm_cost(shape).bytes()}},
                  {"naive_bytes", Cell{gemm_naive_cost(shape).bytes()}}};
  const bool cuda_cores = c.impl == GemmImpl::naive || c.impl == GemmImpl::smem_tiled;
  r.ceiling_id = std::string(cuda_cores ? fma_peak_id : tensor_peak_id);
  r.ceiling_metric = Metric::flop_rate;
  if (c.impl != GemmImpl::cublas) r.reference_id = gemm_problem(c) + ".cublas";
  return r;
}

BenchmarkResult make_result(const AttentionCase& c) {
  BenchmarkResult r;
  r.suite = "compute";
  r.group = "attention";
  r.id = case_id(c);
  r.implementation = c.impl == AttentionImpl::standard ? "roofline+cublas" : "roofline";
  const AttentionShape shape = model_shape(c);
  const std::optional<kernel_tiles::FlashTiling> t = tiling_of(c);
  Cell scores{};
  Cell kv_loads{};
  double executed = 0;
  if (t) {
    const AttentionCost cost = flash_attention_cost(shape, FlashTiling{t->block_m, t->block_n});
    r.cost = cost.hbm;
    kv_loads = Cell{cost.kv_load_bytes};
    executed = cost.executed_flops;
  } else {
    const AttentionCost cost = standard_attention_cost(shape);
    r.cost = cost.hbm;
    scores = Cell{cost.scores_bytes};
    executed = cost.executed_flops;
  }
  r.parameters = {{"kernel", Cell{std::string(impl_name(c.impl))}},
                  {"dtype", Cell{std::string(name_of(c.dtype))}},
                  {"causal", Cell{c.causal}},
                  {"head_dim", Cell{c.head_dim}},
                  {"batch", Cell{c.batch}},
                  {"heads", Cell{c.heads}},
                  {"kv_heads", Cell{c.kv_heads}},
                  {"seq", Cell{c.seq}},
                  {"tile", t ? Cell{tile_text(t->block_m, t->block_n)} : Cell{}},
                  {"executed_flops", Cell{executed}},
                  {"scores_bytes", scores},
                  {"kv_load_bytes", kv_loads}};
  if (c.head_dim_v != 0) r.parameters.push_back({"head_dim_v", Cell{c.head_dim_v}});
  r.ceiling_metric = Metric::flop_rate;
  if (c.dtype == DType::fp8_e4m3) {
    // No FP8 ceiling is measured (the tensor-core probe is bf16); the reference is the bf16 kernel on
    // the same problem.
    AttentionCase bf16 = c;
    bf16.dtype = DType::bf16;
    r.reference_id = case_id(bf16);
    return r;
  }
  r.ceiling_id = std::string(tensor_peak_id);
  if (c.impl != AttentionImpl::standard) r.reference_id = attention_problem(c) + ".standard";
  return r;
}

BenchmarkResult make_result(PeakImpl impl, const OpCost& probe_cost) {
  BenchmarkResult r;
  r.suite = "compute";
  r.group = "peak";
  r.id = case_id(impl);
  r.implementation = "roofline";
  r.cost = probe_cost;
  r.parameters = {{"kernel", Cell{std::string(impl_name(impl))}},
                  {"dtype", Cell{std::string(impl == PeakImpl::fma_fp32 ? "fp32" : "bf16")}}};
  r.ceiling_metric = Metric::flop_rate;
  return r;
}

std::vector<Table> derived_tables(std::span<const BenchmarkResult> results) {
  std::vector<AttentionRow> rows;
  std::map<
      std::tuple<std::string, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>,
      std::size_t>
      index;
  for (const BenchmarkResult& r : results) {
    if (r.suite != "compute" || r.group != "attention") continue;
    AttentionRow key;
    key.dtype = param_as<std::string>(r, "dtype");
    key.causal = param_as<bool>(r, "causal");
    key.head_dim = param_as<std::int64_t>(r, "head_dim");
    key.head_dim_v = param_as<std::int64_t>(r, "head_dim_v");
    key.batch = param_as<std::int64_t>(r, "batch");
    key.heads = param_as<std::int64_t>(r, "heads");
    key.kv_heads = param_as<std::int64_t>(r, "kv_heads");
    key.seq = param_as<std::int64_t>(r, "seq");
    const auto k = std::make_tuple(key.dtype, key.causal, key.head_dim, key.head_dim_v, key.batch, key.heads,
                                   key.kv_heads, key.seq);
    auto [it, fresh] = index.emplace(k, rows.size());
    if (fresh) rows.push_back(key);
    AttentionRow& row = rows[it->second];
    const std::string kernel = param_as<std::string>(r, "kernel");
    std::size_t slot = 0;
    for (std::size_t i = 0; i < attention_impls.size(); ++i) {
      if (impl_name(attention_impls[i]) == kernel) slot = i;
    }
    row.tflops[slot] =
        r.disposition == Disposition::passed && r.flop_rate() ? std::optional(*r.flop_rate() * 1e-12) : std::nullopt;
    if (slot == 0) {
      row.standard_bytes = r.cost.bytes();
      row.standard_status = std::string(name_of(r.disposition));
      if (r.disposition != Disposition::passed && !r.detail.empty()) row.standard_status += ": " + r.detail;
    } else {
      row.flash_bytes = r.cost.bytes();
      if (row.tflops[slot] && (!row.best_flash_tflops || *row.tflops[slot] > *row.best_flash_tflops)) {
        row.best_flash_tflops = row.tflops[slot];
        row.best_flash = kernel;
        row.flash_kv_load_bytes = param_as<double>(r, "kv_load_bytes");
      }
      if (!row.flash_kv_load_bytes) row.flash_kv_load_bytes = param_as<double>(r, "kv_load_bytes");
    }
  }
  std::vector<Table> tables;
  tables.push_back(Table::from_rows<AttentionRow>(
      "attention_by_n",
      "Standard vs flash attention by N: TFLOP/s measured, HBM bytes predicted by the model (roofline/attention.hpp)",
      by_n_columns, rows));
  return tables;
}

// ---- the FP8 cases ----------------------------------------------------------------------------

namespace {

const ModelSpec& bundled_model(std::string_view id) {
  static const ModelRegistry registry = ModelRegistry::bundled_only();
  const ModelSpec& model = registry.find(id);
  if (!model.origin.starts_with("bundled:")) {
    throw InputError(fmt::format("the compute suite's FP8 cases need the bundled preset {}", id));
  }
  return model;
}

std::vector<GemmCase> build_gemm_cases() {
  std::vector<GemmCase> cases(gemm_cases.begin(), gemm_cases.end());
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  const auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, bool with_wgmma, bool quick) {
    if (!seen.emplace(m, n, k).second) return;
    for (GemmImpl impl : fp8_gemm_impls) {
      if (impl == GemmImpl::wgmma && !with_wgmma) continue;
      cases.push_back(GemmCase{.impl = impl,
                               .m = m,
                               .n = n,
                               .k = k,
                               .dtype = DType::fp8_e4m3,
                               .quick = quick,
                               .output = DType::bf16,
                               .m_run = impl == GemmImpl::cublaslt ? cublaslt_fp8_rows(m) : m});
    }
  };
  // --quick first: a cube, every edge (m, n and k off the wgmma tile; m off cuBLASLt's 16), a
  // model shape, and a padded decode call.
  add(1024, 1024, 1024, true, true);
  add(333, 272, 208, true, true);
  const LinearShape small_qkv = w8a8_linears("llama-3.1-8b", 1).front();
  add(128, small_qkv.n, small_qkv.k, true, true);
  const LinearShape o_proj = w8a8_linears("llama-3.1-70b", 1).at(1);
  add(4, o_proj.n, o_proj.k, false, true);
  for (std::int64_t size : {1024, 2048, 4096, 8192}) add(size, size, size, true, false);
  const auto each_linear = [](const auto& deployments, const auto& take) {
    for (const Fp8Deployment& d : deployments) {
      for (std::int64_t tp : d.tp) {
        if (tp == 0) continue;
        for (const LinearShape& linear : w8a8_linears(d.model, tp)) take(linear);
      }
    }
  };
  each_linear(fp8_prefill_deployments, [&](const LinearShape& linear) {
    for (std::int64_t m : prefill_tokens) add(m, linear.n, linear.k, true, false);
  });
  each_linear(fp8_decode_deployments, [&](const LinearShape& linear) {
    for (std::int64_t m : decode_tokens) add(m, linear.n, linear.k, false, false);
  });
  return cases;
}

}  // namespace

std::vector<LinearShape> w8a8_linears(std::string_view model_id, std::int64_t tp) {
  const ModelSpec& model = bundled_model(model_id);
  const Sharding sharding = shard(model, static_cast<int>(tp), 1);
  StepFormats formats;
  formats.weights = DType::fp8_e4m3;
  formats.matmul = DType::fp8_e4m3;
  const StepShape step{.phase = StepPhase::decode, .tokens = 2 * w8a16_gemv_max_batch, .context = 1024};
  std::vector<LinearShape> out;
  for (const DecoderLayer& layer :
       describe_step(model, sharding, formats, step, DescribeOptions{.text = false, .kernels = {}})) {
    for (const DecoderOp& op : layer.ops) {
      const auto* gemm = std::get_if<GemmShape>(&op.shape);
      if (op.kind != OpKind::linear || !gemm || gemm->batch != 1 || gemm->a != formats.matmul) continue;
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const LinearShape& l) { return l.n == gemm->n && l.k == gemm->k; });
      if (!seen) out.push_back({op.name, gemm->n, gemm->k});
    }
  }
  return out;
}

const std::vector<GemmCase>& all_gemm_cases() {
  static const std::vector<GemmCase> cases = build_gemm_cases();
  return cases;
}

// ---- the grouped GEMM cases -------------------------------------------------------------------

namespace {

// Qwen3's MoE models are not bundled; the figures of their config.json files (hidden_size,
// moe_intermediate_size, num_experts, num_experts_per_tok):
//   https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json      2048,  768, 128, 8
//   https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json    4096, 1536, 128, 8
constexpr MoeExperts qwen3_30b{"qwen3-30b-a3b", 2048, 768, 128, 8};
constexpr MoeExperts qwen3_235b{"qwen3-235b-a22b", 4096, 1536, 128, 8};

MoeExperts bundled_experts(std::string_view id) {
  const ModelSpec& model = bundled_model(id);
  if (!model.moe)
    throw InputError(fmt::format("the compute suite's grouped GEMM cases need {} to be an MoE model", id));
  return {id, model.hidden, model.moe->expert_intermediate, model.moe->experts, model.moe->experts_per_token};
}

GroupedGemmImpl library_of(DType dtype) {
  return dtype == DType::bf16 ? GroupedGemmImpl::cublas : GroupedGemmImpl::cublaslt;
}

std::string grouped_problem(const GroupedGemmCase& c) {
  return fmt::format("gemm.grouped.{}.e{}.t{}.{}.{}x{}x{}", id_word(c.dtype), c.experts, c.tokens, split_name(c.split),
                     c.total_tokens(), c.n, c.k);
}

std::string_view call_of(const GroupedGemmCase& c) {
  switch (c.impl) {
    case GroupedGemmImpl::wgmma: return "gemm_grouped";
    case GroupedGemmImpl::splitk: return "gemm_grouped_split_k";
    case GroupedGemmImpl::swapab: return "gemm_grouped_swap_ab";
    case GroupedGemmImpl::cublas:
      return c.split == ExpertSplit::uniform ? "cublasGemmStridedBatchedEx" : "cublasGemmGroupedBatchedEx";
    case GroupedGemmImpl::cublaslt: return "cublasLtMatmul per expert";
  }
  return "?";
}

// The swapped kernel's cases: every expert at most grouped_swap_ab_most_tokens tokens, and no more
// experts with tokens than its launch carries.
bool swap_ab_listed(const GroupedGemmCase& c) {
  const std::vector<std::int64_t> tokens = expert_tokens(c.experts, c.tokens, c.split);
  const auto touched = std::count_if(tokens.begin(), tokens.end(), [](std::int64_t t) { return t > 0; });
  return *std::max_element(tokens.begin(), tokens.end()) <= grouped_swap_ab_most_tokens &&
         touched <= kernel_tiles::grouped_gemv_wgmma_max_experts;
}

std::vector<GroupedGemmCase> build_grouped_gemm_cases() {
  std::vector<GroupedGemmCase> cases;
  std::set<std::tuple<DType, std::int64_t, std::int64_t, ExpertSplit, std::int64_t, std::int64_t>> seen;
  const auto add = [&](std::string_view model, std::string_view projection, std::int64_t experts, std::int64_t tokens,
                       std::int64_t n, std::int64_t k, bool quick) {
    for (const DType dtype : {DType::bf16, DType::fp8_e4m3}) {
      for (const ExpertSplit split : expert_splits) {
        if (!seen.emplace(dtype, experts, tokens, split, n, k).second) continue;
        for (const GroupedGemmImpl impl :
             {GroupedGemmImpl::wgmma, GroupedGemmImpl::splitk, GroupedGemmImpl::swapab, library_of(dtype)}) {
          const GroupedGemmCase c{.impl = impl,
                                  .model = model,
                                  .projection = projection,
                                  .experts = experts,
                                  .tokens = tokens,
                                  .split = split,
                                  .n = n,
                                  .k = k,
                                  .dtype = dtype,
                                  .quick = quick};
          if (impl == GroupedGemmImpl::splitk && grouped_split_k_plan(c, gemm_split_k_listed_sms).splits == 1) continue;
          if (impl == GroupedGemmImpl::swapab && !swap_ab_listed(c)) continue;
          cases.push_back(c);
        }
      }
    }
  };
  add(qwen3_30b.model, "down", qwen3_30b.experts, 2, qwen3_30b.hidden, qwen3_30b.expert_ffn, true);
  add("synthetic", "ragged", 16, 3, 272, 208, true);
  // A decode step's few experts of one token over a deep k: the quick run's split-K cases.
  add("synthetic", "ragged, decode", 4, 1, 272, 2048, true);
  for (const MoeExperts& m : grouped_gemm_models()) {
    for (const std::int64_t tokens : grouped_tokens_per_expert) {
      add(m.model, "gate_up", m.experts, tokens, 2 * m.expert_ffn, m.hidden, false);
      add(m.model, "down", m.experts, tokens, m.hidden, m.expert_ffn, false);
    }
  }
  for (const MoeExperts& m : grouped_gemm_models()) {
    for (const std::int64_t tokens : grouped_tokens_per_expert) {
      add(m.model, "gate_up, TP 8", m.experts, tokens, 2 * m.expert_ffn / grouped_tp_split, m.hidden, false);
      add(m.model, "down, TP 8", m.experts, tokens, m.hidden, m.expert_ffn / grouped_tp_split, false);
    }
  }
  for (const MoeExperts& m : grouped_gemm_models()) {
    if (m.experts <= grouped_decode_min_experts) continue;
    for (const std::int64_t reached : grouped_decode_experts) {
      add(m.model, "gate_up, decode", reached, 1, 2 * m.expert_ffn, m.hidden, false);
      add(m.model, "down, decode", reached, 1, m.hidden, m.expert_ffn, false);
      add(m.model, "gate_up, TP 8, decode", reached, 1, 2 * m.expert_ffn / grouped_tp_split, m.hidden, false);
      add(m.model, "down, TP 8, decode", reached, 1, m.hidden, m.expert_ffn / grouped_tp_split, false);
    }
  }
  return cases;
}

}  // namespace

std::vector<std::int64_t> expert_tokens(std::int64_t experts, std::int64_t tokens, ExpertSplit split) {
  if (experts < 1 || tokens < 1) {
    throw InputError(fmt::format("a grouped GEMM needs experts >= 1 and tokens >= 1, got {} and {}", experts, tokens));
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(experts), tokens);
  if (split == ExpertSplit::uniform) return out;
  const std::int64_t total = experts * tokens;
  double harmonic = 0;
  for (std::int64_t e = 0; e < experts; ++e) harmonic += 1.0 / static_cast<double>(e + 1);
  std::vector<double> remainder(out.size());
  std::int64_t assigned = 0;
  for (std::size_t e = 0; e < out.size(); ++e) {
    const double share = static_cast<double>(total) / (harmonic * static_cast<double>(e + 1));
    out[e] = static_cast<std::int64_t>(share);
    remainder[e] = share - static_cast<double>(out[e]);
    assigned += out[e];
  }
  std::vector<std::size_t> order(out.size());
  for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::int64_t i = 0; i < total - assigned; ++i) ++out[order[static_cast<std::size_t>(i)]];
  return out;
}

kernel_tiles::GemmSplitK grouped_split_k_plan(const GroupedGemmCase& c, int sms) {
  const kernel_tiles::GemmTiling& tile = kernel_tiles::gemm_wgmma;
  long long tiles = 0;
  for (const std::int64_t t : expert_tokens(c.experts, c.tokens, c.split)) {
    tiles += (t + tile.tile_m - 1) / tile.tile_m * ((c.n + tile.tile_n - 1) / tile.tile_n);
  }
  // The kernel stages 128 bytes of k (tile_k 16-bit elements) at a time.
  const auto k_bytes = static_cast<long long>(std::ceil(static_cast<double>(c.k) * bytes_per_element(c.dtype)));
  const long long row_bytes = static_cast<long long>(tile.tile_k) * 2;
  return kernel_tiles::grouped_gemm_split_k(tiles, (k_bytes + row_bytes - 1) / row_bytes, sms);
}

std::array<MoeExperts, 4> grouped_gemm_models() {
  return {bundled_experts("mixtral-8x7b"), bundled_experts("deepseek-v3"), qwen3_30b, qwen3_235b};
}

const std::vector<GroupedGemmCase>& grouped_gemm_cases() {
  static const std::vector<GroupedGemmCase> cases = build_grouped_gemm_cases();
  return cases;
}

std::string_view id_name(GroupedGemmImpl impl) {
  switch (impl) {
    case GroupedGemmImpl::wgmma: return "wgmma";
    case GroupedGemmImpl::splitk: return "splitk";
    case GroupedGemmImpl::swapab: return "swapab";
    case GroupedGemmImpl::cublas: return "cublas";
    case GroupedGemmImpl::cublaslt: return "cublaslt";
  }
  return "?";
}

std::string_view split_name(ExpertSplit split) {
  return split == ExpertSplit::uniform ? "uniform" : "skewed";
}

std::string case_id(const GroupedGemmCase& c) {
  return fmt::format("{}.{}", grouped_problem(c), id_name(c.impl));
}

std::int64_t rows_run(const GroupedGemmCase& c) {
  std::int64_t rows = 0;
  for (const std::int64_t t : expert_tokens(c.experts, c.tokens, c.split)) {
    rows += c.impl == GroupedGemmImpl::cublaslt && t > 0 ? cublaslt_fp8_rows(t) : t;
  }
  return rows;
}

OpCost case_cost(const GroupedGemmCase& c) {
  const std::vector<std::int64_t> tokens = expert_tokens(c.experts, c.tokens, c.split);
  return grouped_gemm_basis({tokens, c.n, c.k, c.dtype, c.dtype, DType::bf16}).cost;
}

BenchmarkResult make_result(const GroupedGemmCase& c) {
  const std::vector<std::int64_t> tokens = expert_tokens(c.experts, c.tokens, c.split);
  BenchmarkResult r;
  r.suite = "compute";
  r.group = std::string(grouped_gemm_group);
  r.id = case_id(c);
  r.implementation = std::string(implementation_of(c.impl));
  r.cost = case_cost(c);
  const auto touched =
      static_cast<std::int64_t>(std::count_if(tokens.begin(), tokens.end(), [](std::int64_t t) { return t > 0; }));
  r.parameters = {{"kernel", Cell{std::string(id_name(c.impl))}},
                  {"call", Cell{std::string(call_of(c))}},
                  {"dtype", Cell{std::string(name_of(c.dtype))}},
                  {"output", Cell{std::string(name_of(DType::bf16))}},
                  {"model", Cell{std::string(c.model)}},
                  {"projection", Cell{std::string(c.projection)}},
                  {"experts", Cell{c.experts}},
                  {"experts_touched", Cell{touched}},
                  {"tokens_per_expert", Cell{c.tokens}},
                  {"split", Cell{std::string(split_name(c.split))}},
                  {"max_tokens", Cell{*std::max_element(tokens.begin(), tokens.end())}},
                  {"m", Cell{c.total_tokens()}},
                  {"m_run", Cell{rows_run(c)}},
                  {"n", Cell{c.n}},
                  {"k", Cell{c.k}}};
  r.ceiling_metric = Metric::flop_rate;
  // The bf16 tensor-core probe is the ceiling of bf16 cases; no FP8 ceiling is measured.
  if (c.dtype == DType::bf16) r.ceiling_id = std::string(tensor_peak_id);
  if (c.impl != library_of(c.dtype))
    r.reference_id = fmt::format("{}.{}", grouped_problem(c), id_name(library_of(c.dtype)));
  return r;
}

const SuiteInfo& suite() {
  static const SuiteInfo info{"compute",
                              "GEMM ladder (naive, smem tiled, mma.sync, wgmma vs cuBLAS), attention forward "
                              "(standard vs flash), compute-ceiling probes",
                              group_layouts,
                              suite_targets,
                              &list_cases,
                              &derived_tables,
                              &recorded_basis};
  return info;
}

}  // namespace roofline::bench::compute
