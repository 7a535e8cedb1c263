#include "roofline/bench/memory_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "roofline/basis/calibration_tables.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::bench::memory {
namespace {

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;
constexpr std::int64_t GiB = 1024 * MiB;
constexpr std::int64_t word_bytes = 4;  // fp32 and u32 elements

std::int64_t power_of_two_at_least(std::int64_t bytes) {
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(bytes)));
}

bool is_stream(Kernel k) {
  return k == Kernel::memcpy_d2d || k == Kernel::copy || k == Kernel::scale || k == Kernel::add || k == Kernel::triad ||
         k == Kernel::dot;
}

// The model's shapes of the stream kernels: arrays read, arrays written, FLOPs per element.
ElementwiseShape stream_shape(Kernel k, std::int64_t elements) {
  ElementwiseShape shape{elements, 1, 1, 0, DType::fp32};
  switch (k) {
    case Kernel::scale: shape.flops_per_element = 1; break;
    case Kernel::add: shape = {elements, 2, 1, 1, DType::fp32}; break;
    case Kernel::triad: shape = {elements, 2, 1, 2, DType::fp32}; break;
    case Kernel::dot: shape = {elements, 2, 0, 2, DType::fp32}; break;
    default: break;
  }
  return shape;
}

// Reads of 4-byte words that the kernel only sums (integer adds, no FLOPs); fp32 stands for
// "a 4-byte element" in the model's byte count.
OpCost word_reads(std::int64_t words) {
  return elementwise_cost({words, 1, 0, 0, DType::fp32});
}

// Gather and scatter: an index and a value read, a value written per access.
OpCost random_access_cost(std::int64_t accesses) {
  return elementwise_cost({accesses, 2, 1, 0, DType::fp32});
}

// Indices and the contiguous side stream; the table side is random.
SectorTraffic random_access_sectors(std::int64_t accesses) {
  SectorTraffic t = contiguous_traffic(accesses, word_bytes);
  t += random_traffic(accesses, word_bytes);
  t += contiguous_traffic(accesses, word_bytes);
  return t;
}

// The GEMV floor reads W alone, as 4-byte words.
OpCost gemv_read_cost(std::int64_t m, std::int64_t k, DType weights) {
  return word_reads(m * k * static_cast<std::int64_t>(bytes_per_element(weights)) / word_bytes);
}

// The decoder layer's decode attention stage, at any shape (its cost with the kernel's tiles).
OpCost decode_attention_cost(const AttentionShape& shape) {
  return flash_attention_cost(shape, layer::attention_tiling(layer::Phase::decode)).hbm;
}

using C = ColumnOf<BenchmarkResult>;
namespace col = columns;

constexpr auto stream_columns = columns::join(std::to_array<C>({
                                                  col::id,
                                                  col::implementation,
                                                  col::status,
                                                  {{"op", "op", 0}, &param<"op">},
                                                  {{"vector_bytes", "width [B]", 0}, &param<"vector_bytes">},
                                                  {{"elements", "elements", 0}, &param<"elements">},
                                                  col::model_bytes,
                                              }),
                                              columns::timing,
                                              std::to_array<C>({
                                                  col::bandwidth_tbps,
                                                  col::best_bandwidth_tbps,
                                                  col::pct_of_ceiling,
                                                  col::detail,
                                              }));

constexpr auto access_columns = columns::join(std::to_array<C>({
                                                  col::id,
                                                  col::implementation,
                                                  col::status,
                                                  {{"pattern", "pattern", 0}, &param<"pattern">},
                                                  {{"stride_elements", "stride", 0}, &param<"stride_elements">},
                                                  {{"accesses", "accesses", 0}, &param<"accesses">},
                                                  col::model_bytes,
                                                  col::moved_bytes,
                                              }),
                                              columns::timing,
                                              std::to_array<C>({
                                                  col::bandwidth_tbps,
                                                  col::sector_bandwidth_tbps,
                                                  col::sector_efficiency,
                                                  col::best_bandwidth_tbps,
                                                  col::pct_of_ceiling,
                                                  col::detail,
                                              }));

constexpr auto gemv_columns = columns::join(std::to_array<C>({
                                                col::id,
                                                col::implementation,
                                                col::status,
                                                {{"dtype", "dtype", 0}, &param<"dtype">},
                                                {{"m", "m", 0}, &param<"m">},
                                                {{"k", "k", 0}, &param<"k">},
                                                {{"batch", "batch", 0}, &param<"batch">},
                                                col::model_bytes,
                                            }),
                                            columns::timing,
                                            std::to_array<C>({
                                                col::bandwidth_tbps,
                                                col::best_bandwidth_tbps,
                                                col::tflops,
                                                col::pct_of_ceiling,
                                                {{"speedup_vs_cublas", "x cuBLAS", 2}, &cells::reference_speedup},
                                                col::detail,
                                            }));

constexpr auto gemv_quant_columns = columns::join(std::to_array<C>({
                                                      col::id,
                                                      col::implementation,
                                                      col::status,
                                                      {{"dtype", "x, y", 0}, &param<"dtype">},
                                                      {{"weights", "W", 0}, &param<"weights">},
                                                      {{"m", "m", 0}, &param<"m">},
                                                      {{"k", "k", 0}, &param<"k">},
                                                      {{"batch", "batch", 0}, &param<"batch">},
                                                      col::model_bytes,
                                                  }),
                                                  columns::timing,
                                                  std::to_array<C>({
                                                      col::bandwidth_tbps,
                                                      col::best_bandwidth_tbps,
                                                      col::tflops,
                                                      col::pct_of_ceiling,
                                                      col::detail,
                                                  }));

constexpr auto gemv_w8a8_columns = columns::join(std::to_array<C>({
                                                     col::id,
                                                     col::implementation,
                                                     col::status,
                                                     {{"dtype", "x", 0}, &param<"dtype">},
                                                     {{"weights", "W", 0}, &param<"weights">},
                                                     {{"output", "y", 0}, &param<"output">},
                                                     {{"m", "m", 0}, &param<"m">},
                                                     {{"k", "k", 0}, &param<"k">},
                                                     {{"batch", "batch", 0}, &param<"batch">},
                                                     col::model_bytes,
                                                 }),
                                                 columns::timing,
                                                 std::to_array<C>({
                                                     col::bandwidth_tbps,
                                                     col::best_bandwidth_tbps,
                                                     col::tflops,
                                                     col::pct_of_ceiling,
                                                     col::detail,
                                                 }));

constexpr auto hierarchy_columns = columns::join(std::to_array<C>({
                                                     col::id,
                                                     col::implementation,
                                                     col::status,
                                                     {{"level", "level", 0}, &param<"level">},
                                                     {{"footprint_bytes", "footprint", 0}, &param<"footprint_bytes">},
                                                     col::model_bytes,
                                                 }),
                                                 columns::timing,
                                                 std::to_array<C>({
                                                     col::bandwidth_tbps,
                                                     col::best_bandwidth_tbps,
                                                     col::pct_of_ceiling,
                                                     col::detail,
                                                 }));

constexpr auto decode_attention_columns = columns::join(std::to_array<C>({
                                                            col::id,
                                                            col::implementation,
                                                            col::status,
                                                            {{"dtype", "dtype", 0}, &param<"dtype">},
                                                            {{"batch", "batch", 0}, &param<"batch">},
                                                            {{"context", "context", 0}, &param<"context">},
                                                            {{"heads", "heads", 0}, &param<"heads">},
                                                            {{"kv_heads", "KV heads", 0}, &param<"kv_heads">},
                                                            {{"head_dim", "d", 0}, &param<"head_dim">},
                                                            col::model_flops,
                                                            col::model_bytes,
                                                        }),
                                                        columns::timing,
                                                        std::to_array<C>({
                                                            col::bandwidth_tbps,
                                                            col::pct_of_ceiling,
                                                            col::detail,
                                                        }));

constexpr auto decode_attention_fp8_columns = columns::join(std::to_array<C>({
                                                                col::id,
                                                                col::implementation,
                                                                col::status,
                                                                {{"dtype", "dtype", 0}, &param<"dtype">},
                                                                {{"kv", "KV cache", 0}, &param<"kv">},
                                                                {{"batch", "batch", 0}, &param<"batch">},
                                                                {{"context", "context", 0}, &param<"context">},
                                                                {{"heads", "heads", 0}, &param<"heads">},
                                                                {{"kv_heads", "KV heads", 0}, &param<"kv_heads">},
                                                                {{"head_dim", "d", 0}, &param<"head_dim">},
                                                                col::model_flops,
                                                                col::model_bytes,
                                                            }),
                                                            columns::timing,
                                                            std::to_array<C>({
                                                                col::bandwidth_tbps,
                                                                col::pct_of_ceiling,
                                                                col::detail,
                                                            }));

constexpr auto latent_attention_columns = columns::join(std::to_array<C>({
                                                            col::id,
                                                            col::implementation,
                                                            col::status,
                                                            {{"dtype", "dtype", 0}, &param<"dtype">},
                                                            {{"heads", "heads", 0}, &param<"heads">},
                                                            {{"batch", "batch", 0}, &param<"batch">},
                                                            {{"context", "context", 0}, &param<"context">},
                                                            {{"latent", "latent", 0}, &param<"latent">},
                                                            {{"rope", "rope", 0}, &param<"rope">},
                                                            col::model_flops,
                                                            col::model_bytes,
                                                        }),
                                                        columns::timing,
                                                        std::to_array<C>({
                                                            col::bandwidth_tbps,
                                                            col::tflops,
                                                            col::pct_of_ceiling,
                                                            col::detail,
                                                        }));

const std::array<GroupLayout, 9> group_layouts{{
    {"stream", "Streaming: cudaMemcpy and BabelStream kernels (fp32; bandwidth = bytes read + written / median time)",
     stream_columns},
    {"access", "Access patterns: useful bandwidth, and the 32-byte sectors the memory system moved (model)",
     access_columns},
    {"gemv", "GEMV y[b,m] = W[m,k] x[b,k] (fp32 accumulation) with cuBLAS as the reference", gemv_columns},
    {"gemv_quant",
     "GEMV with quantised weights, bf16 x and y (LLaMA-3-70B decode linears at TP 1 and 8): fp8 e4m3 W with a "
     "per-tensor scale, int4 W with a bf16 scale per 128 (bytes = gemv_cost with the formats)",
     gemv_quant_columns},
    {"gemv_w8a8",
     "W8A8 GEMV: fp8 e4m3 W and x with per-tensor scales, fp32 accumulation, bf16 y, on e4m3 tensor cores "
     "(bytes = gemv_cost with 1-byte W and x and a 2-byte y; cuBLASLt's FP8 GEMM at these shapes: the compute "
     "suite's gemm.fp8e4m3.{batch}x{m}x{k}.cublaslt)",
     gemv_w8a8_columns},
    {"decode_attention",
     "Decode attention: the decoder layer's flash-decoding kernel over a bf16 KV cache (LLaMA-3-70B heads; bytes = "
     "the layer stage's model count)",
     decode_attention_columns},
    {"decode_attention_fp8",
     "Decode attention over an fp8 (e4m3, per-tensor scale) KV cache, bf16 q and output: the same kernel and heads "
     "(bytes = the layer stage's model count with 1-byte K and V)",
     decode_attention_fp8_columns},
    {"latent_attention",
     "Latent attention (DeepSeek-V3's MLA) at decode, absorbed: every query head over one shared cache row per "
     "position (512 latent + 64 rotary, bf16), the latent also the value (bytes and FLOPs = latent_attention_cost)",
     latent_attention_columns},
    {"hierarchy", "Cache-level ceilings: L2-resident and shared-memory read bandwidth", hierarchy_columns},
}};

constexpr std::array<Target, 7> suite_targets{{
    {"copy reaches 95% of cudaMemcpy D2D",
     {"stream.copy.4B.tile", "stream.copy.8B.tile", "stream.copy.16B.tile", "stream.copy.16B.persistent",
      "stream.copy.16B.streaming", ""},
     ceiling_id,
     0.95},
    {"triad reaches 95% of cudaMemcpy D2D",
     {"stream.triad.4B.tile", "stream.triad.8B.tile", "stream.triad.16B.tile", "stream.triad.16B.persistent",
      "stream.triad.16B.streaming", ""},
     ceiling_id,
     0.95},
    {"GEMV bf16 16384x16384 batch 1 reaches 90% of cudaMemcpy D2D",
     {"gemv.bf16.16384x16384.b1.mma", "gemv.bf16.16384x16384.b1.stag", "gemv.bf16.16384x16384.b1.pipe",
      "gemv.bf16.16384x16384.b1.pdl", "gemv.bf16.16384x16384.b1.simt", ""},
     ceiling_id,
     0.90},
    {"GEMV bf16 8192x8192 batch 1 reaches 85% of cudaMemcpy D2D",
     {"gemv.bf16.8192x8192.b1.mma", "gemv.bf16.8192x8192.b1.stag", "gemv.bf16.8192x8192.b1.pipe",
      "gemv.bf16.8192x8192.b1.pdl", "gemv.bf16.8192x8192.b1.simt", ""},
     ceiling_id,
     0.85},
    {"GEMV bf16 8192x8192 batch 1 is faster than cuBLAS",
     {"gemv.bf16.8192x8192.b1.mma", "gemv.bf16.8192x8192.b1.stag", "gemv.bf16.8192x8192.b1.pipe",
      "gemv.bf16.8192x8192.b1.pdl", "gemv.bf16.8192x8192.b1.simt", ""},
     "gemv.bf16.8192x8192.b1.cublas",
     1.0},
    // fp8 W: the 90% of the issue at LLaMA-3-70B's gate_up (470 MB, like bf16's 16384^2), and at
    // 8192^2 (67 MB, where a few microseconds per call are 15%) bf16's 85%.
    {"GEMV fp8 W, bf16 x 57344x8192 batch 1 reaches 90% of cudaMemcpy D2D",
     {"gemv.bf16.wfp8_e4m3.57344x8192.b1.mma", "gemv.bf16.wfp8_e4m3.57344x8192.b1.stag",
      "gemv.bf16.wfp8_e4m3.57344x8192.b1.pipe", "gemv.bf16.wfp8_e4m3.57344x8192.b1.pdl",
      "gemv.bf16.wfp8_e4m3.57344x8192.b1.simt", ""},
     ceiling_id,
     0.90},
    {"GEMV fp8 W, bf16 x 8192x8192 batch 1 reaches 85% of cudaMemcpy D2D",
     {"gemv.bf16.wfp8_e4m3.8192x8192.b1.mma", "gemv.bf16.wfp8_e4m3.8192x8192.b1.stag",
      "gemv.bf16.wfp8_e4m3.8192x8192.b1.pipe", "gemv.bf16.wfp8_e4m3.8192x8192.b1.pdl",
      "gemv.bf16.wfp8_e4m3.8192x8192.b1.simt", ""},
     ceiling_id,
     0.85},
}};

std::vector<CaseInfo> list_cases() {
  std::vector<CaseInfo> list;
  for (const Case& c : cases) {
    list.push_back({"memory", std::string(group_of(c)), case_id(c), std::string(implementation_of(c)), c.quick});
  }
  return list;
}

layer::Case decode_layer_case(const Case& c) {
  return {layer::Phase::decode, c.batch, 1, c.context, layer::Linear::roofline, false, layer::bf16_layer};
}

// The model's shape of a GEMV case (W8A8: y in bf16).
GemvShape gemv_shape(const Case& c) {
  GemvShape shape{c.m, c.k, c.batch, c.weights, c.activations, std::nullopt};
  if (w8a8_gemv(c)) shape.output = gemv_w8a8_output;
  return shape;
}

std::string gemv_problem(const Case& c) {
  return calibration_tables::gemv_problem(c.activations, c.weights, c.m, c.k, c.batch);
}

}  // namespace

Sizes plan_sizes(std::int64_t l2_bytes, int sms, bool quick) {
  Sizes s;
  s.l2_bytes = l2_bytes;
  s.rotation_floor_bytes = 4 * l2_bytes;
  // Each stream array is at least 16 times the L2 (1 GiB on an H200's 60 MiB); --quick only
  // checks the kernels, on arrays of 32 MiB.
  const std::int64_t array_bytes = quick ? 32 * MiB : power_of_two_at_least(std::max(GiB, 16 * l2_bytes));
  s.stream_elements = array_bytes / word_bytes;
  s.strided_span_bytes = quick ? 256 * MiB : power_of_two_at_least(std::max(2 * GiB, 32 * l2_bytes));
  // Random access: a table far larger than L2, and accesses touching an eighth of its sectors
  // per launch, so that the launches of one rotation of index arrays cover the table once.
  const std::int64_t table_bytes = quick ? 64 * MiB : power_of_two_at_least(std::max(2 * GiB, 32 * l2_bytes));
  s.gather_table_elements = table_bytes / word_bytes;
  s.gather_accesses = table_bytes / sector_bytes / 8;
  s.gather_index_sets = quick ? 2 : 8;
  // L2: four blocks per SM, each reading its own slice, all slices together a quarter of L2.
  s.l2_blocks = 4 * sms;
  const std::int64_t slice_granule = static_cast<std::int64_t>(l2_threads) * 16;  // one 16-byte load per thread
  s.l2_slice_bytes = std::max(slice_granule, (l2_bytes / 4 / s.l2_blocks) / slice_granule * slice_granule);
  s.l2_passes = quick ? 4 : 64;
  s.smem_blocks = 4 * sms;
  s.smem_rounds = quick ? 64 : 2048;
  return s;
}

std::int64_t stream_elements(const Case& c, const Sizes& sizes) {
  return c.array_bytes > 0 ? c.array_bytes / word_bytes : sizes.stream_elements;
}

std::string size_name(std::int64_t bytes) {
  if (bytes >= MiB && bytes % MiB == 0) return fmt::format("{}MiB", bytes / MiB);
  if (bytes >= KiB && bytes % KiB == 0) return fmt::format("{}KiB", bytes / KiB);
  return fmt::format("{}B", bytes);
}

AttentionShape decode_attention_shape(const Case& c) {
  AttentionShape shape = layer::attention_shape(decode_layer_case(c));
  shape.act = c.activations;
  shape.kv = c.kv;
  return shape;
}

LatentAttentionShape latent_attention_shape(const Case& c) {
  LatentAttentionShape shape;
  shape.batch = c.batch;
  shape.heads = c.heads;
  shape.seq = 1;
  shape.kv_seq = c.context;
  shape.causal = false;
  shape.absorbed = true;
  shape.act = c.activations;
  shape.kv = c.kv;
  return shape;  // the latent, rotary and head widths are DeepSeek-V3's (the shape's defaults)
}

bool quantised_gemv(const Case& c) {
  return c.kernel == Kernel::gemv && c.weights != c.activations;
}

bool w8a8_gemv(const Case& c) {
  return c.kernel == Kernel::gemv && c.weights == gemv_w8a8_format && c.activations == gemv_w8a8_format;
}

int rotation_count(std::int64_t bytes, const Sizes& sizes) {
  if (bytes <= 0) return 1;
  return static_cast<int>(std::max<std::int64_t>(1, (sizes.rotation_floor_bytes + bytes - 1) / bytes));
}

StreamRotation stream_rotation(const Case& c, const Sizes& sizes) {
  const std::int64_t elements = stream_elements(c, sizes);
  StreamRotation r;
  if (elements >= sizes.stream_elements) return r;
  r.wanted = rotation_count(static_cast<std::int64_t>(case_cost(c, sizes).bytes()), sizes);
  r.copies = static_cast<int>(
      std::min<std::int64_t>({r.wanted, sizes.stream_elements / elements, std::int64_t{max_stream_rotation}}));
  return r;
}

std::int64_t strided_accesses(std::int64_t stride, const Sizes& sizes) {
  // The last access of the last offset, (accesses - 1) x stride + stride - 8, stays inside.
  return sizes.strided_span_bytes / word_bytes / stride - 1;
}

int strided_offsets(std::int64_t stride) {
  // With a stride of whole sectors (8 words), launches start one sector further each time, so
  // that successive launches touch different sectors and L2 cannot serve a repeat.
  return stride % 8 == 0 ? static_cast<int>(stride / 8) : 1;
}

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::memcpy_d2d: return "memcpy";
    case Kernel::copy: return "copy";
    case Kernel::scale: return "scale";
    case Kernel::add: return "add";
    case Kernel::triad: return "triad";
    case Kernel::dot: return "dot";
    case Kernel::strided_read: return "strided";
    case Kernel::gather: return "gather";
    case Kernel::scatter: return "scatter";
    case Kernel::gemv: return "gemv";
    case Kernel::l2_read: return "l2";
    case Kernel::smem_read: return "smem";
    case Kernel::decode_attention: return "decode_attention";
    case Kernel::latent_attention: return "latent_attention";
  }
  return "?";
}

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::runtime: return "runtime";
    case Variant::graph: return "graph";
    case Variant::tile: return "tile";
    case Variant::persistent: return "persistent";
    case Variant::streaming: return "streaming";
    case Variant::mma: return "mma";
    case Variant::stag: return "stag";
    case Variant::pipe: return "pipe";
    case Variant::pdl: return "pdl";
    case Variant::simt: return "simt";
    case Variant::wgmma: return "wgmma";
    case Variant::cublas: return "cublas";
    case Variant::cublasdirect: return "cublasdirect";
    case Variant::read: return "read";
    case Variant::flashdecode: return "flashdecode";
  }
  return "?";
}

std::string gemv_wgmma_plan_note(std::int64_t m, std::int64_t k, std::int64_t batch, int sms) {
  const kernel_tiles::GemvWgmmaSplit plan = kernel_tiles::gemv_wgmma_split(m, k, batch, sms);
  return fmt::format(
      "; {} tiles of {} rows x {} vector group{} of N {}, k in {} split{} of {} blocks, {} block{} per SM on {} SMs",
      plan.tiles, plan.rows, plan.vector_groups, plan.vector_groups == 1 ? "" : "s", plan.tile_n, plan.splits,
      plan.splits == 1 ? "" : "s", plan.k_blocks_per_split, plan.blocks_per_sm, plan.blocks_per_sm == 1 ? "" : "s",
      kernel_tiles::known_sms(sms));
}

std::string case_id(const Case& c) {
  switch (c.kernel) {
    case Kernel::memcpy_d2d:
      return c.variant == Variant::graph ? std::string(ceiling_id) + ".graph" : std::string(ceiling_id);
    case Kernel::strided_read: return fmt::format("access.strided.s{}", c.stride);
    case Kernel::gather:
    case Kernel::scatter: return fmt::format("access.{}", kernel_name(c.kernel));
    case Kernel::gemv: return fmt::format("{}.{}", gemv_problem(c), variant_name(c.variant));
    case Kernel::l2_read: return "hierarchy.l2.read";
    case Kernel::smem_read: return "hierarchy.smem.read";
    case Kernel::decode_attention: {
      // The bf16 cases keep the ids of the runs before the fp8 cache.
      const std::string kv = c.kv == c.activations ? "" : fmt::format(".kv{}", name_of(c.kv));
      return fmt::format("attention.decode.{}{}.b{}.ctx{}.{}", name_of(c.activations), kv, c.batch, c.context,
                         variant_name(c.variant));
    }
    case Kernel::latent_attention:
      return fmt::format("attention.latent_decode.{}.h{}.b{}.ctx{}.{}", name_of(c.activations), c.heads, c.batch,
                         c.context, variant_name(c.variant));
    default: {
      std::string id = fmt::format("stream.{}.{}B.{}", kernel_name(c.kernel), c.vector_bytes, variant_name(c.variant));
      if (c.array_bytes > 0) id += fmt::format(".{}", size_name(c.array_bytes));
      return id;
    }
  }
}

std::string_view group_of(const Case& c) {
  if (is_stream(c.kernel)) return "stream";
  if (c.kernel == Kernel::gemv) {
    if (w8a8_gemv(c)) return "gemv_w8a8";
    return quantised_gemv(c) ? "gemv_quant" : "gemv";
  }
  if (c.kernel == Kernel::l2_read || c.kernel == Kernel::smem_read) return "hierarchy";
  if (c.kernel == Kernel::decode_attention) return c.kv == c.activations ? "decode_attention" : "decode_attention_fp8";
  if (c.kernel == Kernel::latent_attention) return "latent_attention";
  return "access";
}

std::string_view implementation_of(const Case& c) {
  if (c.variant == Variant::runtime || c.variant == Variant::graph) return "cuda-runtime";
  if (c.variant == Variant::cublas || c.variant == Variant::cublasdirect) return "cublas";
  return "roofline";
}

OpCost case_cost(const Case& c, const Sizes& s) {
  switch (c.kernel) {
    case Kernel::strided_read: return word_reads(strided_accesses(c.stride, s));
    case Kernel::gather:
    case Kernel::scatter: return random_access_cost(s.gather_accesses);
    case Kernel::gemv:
      if (c.variant == Variant::read) return gemv_read_cost(c.m, c.k, c.weights);
      return gemv_cost(gemv_shape(c));
    case Kernel::l2_read: return word_reads(s.l2_passes * s.l2_blocks * s.l2_slice_bytes / word_bytes);
    case Kernel::smem_read:
      // Each thread reads 16 bytes (4 words) per round.
      return word_reads(static_cast<std::int64_t>(s.smem_blocks) * s.smem_rounds * smem_threads * 4);
    case Kernel::decode_attention: return decode_attention_cost(decode_attention_shape(c));
    case Kernel::latent_attention: return latent_attention_cost(latent_attention_shape(c));
    default: return elementwise_cost(stream_shape(c.kernel, stream_elements(c, s)));
  }
}

std::optional<SectorTraffic> case_sectors(const Case& c, const Sizes& s) {
  switch (c.kernel) {
    case Kernel::strided_read: return strided_traffic(strided_accesses(c.stride, s), c.stride, word_bytes);
    case Kernel::gather:
    case Kernel::scatter: return random_access_sectors(s.gather_accesses);
    default: return std::nullopt;
  }
}

BenchmarkResult make_result(const Case& c, const Sizes& s) {
  BenchmarkResult r;
  r.suite = "memory";
  r.group = std::string(group_of(c));
  r.id = case_id(c);
  r.implementation = std::string(implementation_of(c));
  r.cost = case_cost(c, s);
  r.sectors = case_sectors(c, s);
  r.ceiling_id = std::string(ceiling_id);
  r.claims_hbm = c.kernel != Kernel::l2_read && c.kernel != Kernel::smem_read;  // the cache ceilings read what L2 holds
  switch (c.kernel) {
    case Kernel::strided_read:
      r.parameters = {{"pattern", Cell{std::string("strided")}},
                      {"stride_elements", Cell{c.stride}},
                      {"accesses", Cell{strided_accesses(c.stride, s)}}};
      break;
    case Kernel::gather:
    case Kernel::scatter:
      r.parameters = {{"pattern", Cell{std::string(kernel_name(c.kernel))}},
                      {"stride_elements", Cell{}},
                      {"accesses", Cell{s.gather_accesses}}};
      break;
    case Kernel::gemv:
      if (w8a8_gemv(c)) {
        // No in-suite library reference: cuBLASLt's FP8 GEMM at these shapes is the compute suite's.
        r.parameters = {{"dtype", Cell{std::string(name_of(c.activations))}},
                        {"weights", Cell{std::string(name_of(c.weights))}},
                        {"output", Cell{std::string(name_of(gemv_w8a8_output))}},
                        {"m", Cell{c.m}},
                        {"k", Cell{c.k}},
                        {"batch", Cell{c.batch}}};
        break;
      }
      if (quantised_gemv(c)) {
        // No cuBLAS reference: cublasGemmEx takes no fp8 or int4 W with bf16 x.
        r.parameters = {{"dtype", Cell{std::string(name_of(c.activations))}},
                        {"weights", Cell{std::string(name_of(c.weights))}},
                        {"m", Cell{c.m}},
                        {"k", Cell{c.k}},
                        {"batch", Cell{c.batch}}};
        break;
      }
      r.parameters = {{"dtype", Cell{std::string(name_of(c.activations))}},
                      {"m", Cell{c.m}},
                      {"k", Cell{c.k}},
                      {"batch", Cell{c.batch}}};
      if (c.variant != Variant::cublas) r.reference_id = gemv_problem(c) + ".cublas";
      break;
    case Kernel::l2_read:
      r.parameters = {{"level", Cell{std::string("L2")}}, {"footprint_bytes", Cell{s.l2_blocks * s.l2_slice_bytes}}};
      break;
    case Kernel::smem_read:
      r.parameters = {{"level", Cell{std::string("shared memory")}},
                      {"footprint_bytes", Cell{std::int64_t{s.smem_blocks} * smem_block_bytes}}};
      break;
    case Kernel::decode_attention: {
      const AttentionShape shape = decode_attention_shape(c);
      r.parameters = {{"dtype", Cell{std::string(name_of(shape.act))}}};
      if (shape.kv != shape.act) r.parameters.push_back({"kv", Cell{std::string(name_of(shape.kv))}});
      r.parameters.insert(r.parameters.end(), {{"batch", Cell{shape.batch}},
                                               {"context", Cell{shape.kv_seq}},
                                               {"heads", Cell{shape.heads}},
                                               {"kv_heads", Cell{shape.kv_heads}},
                                               {"head_dim", Cell{shape.head_dim}}});
      break;
    }
    case Kernel::latent_attention: {
      const LatentAttentionShape shape = latent_attention_shape(c);
      r.parameters = {{"dtype", Cell{std::string(name_of(shape.act))}},
                      {"heads", Cell{shape.heads}},
                      {"batch", Cell{shape.batch}},
                      {"context", Cell{shape.kv_seq}},
                      {"latent", Cell{shape.kv_lora_rank}},
                      {"rope", Cell{shape.qk_rope_head_dim}}};
      break;
    }
    default:
      r.parameters = {{"op", Cell{std::string(kernel_name(c.kernel))}},
                      {"vector_bytes", Cell{std::int64_t{c.vector_bytes}}},
                      {"elements", Cell{stream_elements(c, s)}}};
      break;
  }
  return r;
}

namespace {

// ---- bases of recorded results -----------------------------------------------------------------
// Every basis below is rebuilt from the parameters the run recorded (its element counts, access
// counts and shapes) and the id's last word (the variant that ran): never from today's case table
// at today's sizes, so that a run keeps its prediction when the suite's sizes change.

std::optional<Kernel> stream_kernel_named(std::string_view op) {
  for (Kernel k : {Kernel::memcpy_d2d, Kernel::copy, Kernel::scale, Kernel::add, Kernel::triad, Kernel::dot}) {
    if (kernel_name(k) == op) return k;
  }
  return std::nullopt;
}

BasisOrReason stream_basis(const RecordedResult& m) {
  const std::optional<Kernel> kernel = stream_kernel_named(m.text("op"));
  if (!kernel) return NoBasis{"not a case of this build's memory suite", false};
  const std::int64_t elements = m.whole("elements");
  const ElementwiseShape shape = stream_shape(*kernel, elements);
  Basis b = vector_basis(
      elementwise_cost(shape), shape.inputs, shape.outputs, DType::fp32,
      fmt::format("elementwise_cost{{{} elements, {} in, {} out, fp32}}", elements, shape.inputs, shape.outputs));
  b.pattern = "stream";
  // One table per kernel across the size ladder (its points span the sizes): a ladder case's id
  // is the id of the kernel at the suite's size followed by its array size.
  const std::string ladder_suffix = fmt::format(".{}", size_name(elements * word_bytes));
  b.table = m.id.ends_with(ladder_suffix) ? std::string(m.id.substr(0, m.id.size() - ladder_suffix.size()))
                                          : std::string(m.id);
  // copy, scale and cudaMemcpy of the same arrays are one problem to the model
  b.problem = calibration_tables::problem(b.best_table, std::to_string(elements));
  return b;
}

BasisOrReason access_basis(const RecordedResult& m) {
  const std::string pattern = m.text("pattern");
  const std::int64_t accesses = m.whole("accesses");
  Basis b;
  SectorTraffic sectors;
  if (pattern == "strided") {
    const std::int64_t stride = m.whole("stride_elements");
    b.cost = word_reads(accesses);
    sectors = strided_traffic(accesses, stride, word_bytes);
    b.pattern = "access.strided";
    b.table = calibration_tables::access_strided();
    b.series = static_cast<double>(stride);
    b.series_name = "stride";
  } else if (pattern == kernel_name(Kernel::gather) || pattern == kernel_name(Kernel::scatter)) {
    b.cost = random_access_cost(accesses);
    sectors = random_access_sectors(accesses);
    b.pattern = "access.random";
    b.table = calibration_tables::access_random(pattern);
  } else {
    return NoBasis{"not a case of this build's memory suite", false};
  }
  b.roof_bytes = sectors.moved_bytes();
  b.model =
      fmt::format("{:.0f} useful bytes in {:.0f} sectors of 32 B (access.hpp)", sectors.useful_bytes, sectors.sectors);
  return b;
}

AttentionShape recorded_decode_attention(const RecordedResult& m) {
  AttentionShape shape;
  shape.batch = m.whole("batch");
  shape.heads = m.whole("heads");
  shape.kv_heads = m.whole("kv_heads");
  shape.head_dim = m.whole("head_dim");
  shape.seq = 1;
  shape.kv_seq = m.whole("context");
  shape.causal = false;  // one query row sees its whole cache
  shape.act = m.dtype("dtype");
  shape.kv = m.group == "decode_attention_fp8" ? m.dtype("kv") : shape.act;
  return shape;
}

// The basis, and the suite's count of the bytes one launch moves (what the run recorded, unless
// the model's formula changed since).
std::pair<BasisOrReason, OpCost> memory_basis(const RecordedResult& m) {
  if (m.group == "hierarchy") {
    if (m.text("level") == "L2") {
      return {NoBasis{"the L2 ceiling: itself a roof (hardware files state no L2 bandwidth)", true}, {}};
    }
    return {NoBasis{"the shared-memory ceiling: itself a roof (hardware files state no such bandwidth)", true}, {}};
  }
  if (m.group == "stream") {
    BasisOrReason b = stream_basis(m);
    const OpCost cost = std::holds_alternative<Basis>(b) ? std::get<Basis>(b).cost : OpCost{};
    return {std::move(b), cost};
  }
  if (m.group == "access") {
    BasisOrReason b = access_basis(m);
    const OpCost cost = std::holds_alternative<Basis>(b) ? std::get<Basis>(b).cost : OpCost{};
    return {std::move(b), cost};
  }
  if (m.group == "gemv" || m.group == "gemv_quant" || m.group == "gemv_w8a8") {
    const DType activations = m.dtype("dtype");
    const DType weights = m.group == "gemv" ? activations : m.dtype("weights");
    GemvShape shape{m.whole("m"), m.whole("k"), m.whole("batch"), weights, activations, std::nullopt};
    if (m.group == "gemv_w8a8") shape.output = m.dtype("output");
    Basis b = gemv_basis(shape);
    b.table = calibration_tables::implementation(b.best_table, m.kernel);
    const bool read_floor = m.kernel == variant_name(Variant::read);
    // The read floor streams W and computes nothing: its own table shows the floor, and for
    // quantised W it does not stand for the problem in the best table that op and llm look up (at
    // fp8 gate_up it is 11% faster than any GEMV kernel). The bf16 best table keeps it, as the
    // committed calibrations of the H200 runs 2 and 3 were learnt (there it was fastest once, at
    // 8192x28672 batch 1, by 3.6% over cuBLAS).
    if (read_floor && m.group == "gemv_quant") b.best_table.clear();
    const OpCost cost = read_floor ? gemv_read_cost(shape.m, shape.k, shape.weight) : gemv_cost(shape);
    return {std::move(b), cost};
  }
  if (m.group == "decode_attention" || m.group == "decode_attention_fp8") {
    // The layer's decode attention stage and this benchmark share one basis, so that the table
    // calibrate learns here is the one the stage and llm's decode steps look up.
    const AttentionShape shape = recorded_decode_attention(m);
    const OpCost cost = decode_attention_cost(shape);
    return {flash_step_basis(shape, cost), cost};
  }
  if (m.group == "latent_attention") {
    // The table's series is the query rows (heads here), swept at 16 and 128. A ragged correctness
    // case (24 or 96 heads) would be a series of one point, which the interpolation between series
    // holds constant over every size: 96 heads at batch 8 took a 64-row verify step at batch 1 from
    // 11.3 to 4.3 us a layer. They are checked and timed, not learnt.
    const std::int64_t heads = m.whole("heads");
    if (std::find(memory::latent_attention_heads.begin(), memory::latent_attention_heads.end(), heads) ==
        memory::latent_attention_heads.end()) {
      return {
          NoBasis{fmt::format("a correctness case ({} heads, off the swept head counts): not learnt", heads), false},
          OpCost{}};
    }
    LatentAttentionShape shape;
    shape.batch = m.whole("batch");
    shape.heads = heads;
    shape.kv_seq = m.whole("context");
    shape.kv_lora_rank = m.whole("latent");
    shape.qk_rope_head_dim = m.whole("rope");
    shape.act = m.dtype("dtype");
    shape.kv = shape.act;
    const OpCost cost = latent_attention_cost(shape);
    return {latent_decode_basis(shape, cost), cost};
  }
  return {NoBasis{"not a case of this build's memory suite", false}, {}};
}

BasisOrReason recorded_basis(const RecordedResult& m) {
  auto [basis, cost] = memory_basis(m);
  if (Basis* b = std::get_if<Basis>(&basis);
      b != nullptr && m.recorded_bytes && std::abs(*m.recorded_bytes - cost.bytes()) > 1e-9 * cost.bytes()) {
    b->note = fmt::format("the run recorded {:.0f} model bytes; today's model counts {:.0f}", *m.recorded_bytes,
                          cost.bytes());
  }
  return basis;
}

}  // namespace

const SuiteInfo& suite() {
  static const SuiteInfo info{
      "memory",
      "HBM streaming (cudaMemcpy, BabelStream, a size ladder), strided and random access, GEMV vs cuBLAS, GEMV with "
      "fp8 and int4 weights, W8A8 GEMV, decode attention over bf16 and fp8 KV caches, latent (MLA) decode "
      "attention, L2 and shared memory",
      group_layouts,
      suite_targets,
      &list_cases,
      nullptr,
      &recorded_basis};
  return info;
}

}  // namespace roofline::bench::memory
