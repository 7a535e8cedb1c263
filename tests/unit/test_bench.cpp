// The host side of the benchmarks: statistics, the sector model, the case tables of the memory,
// compute and layer suites and their model costs, sizes, targets, hardware matching, test data,
// and result -> report conversion.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "bench_sample.hpp"
#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/basis/calibration_tables.hpp"
#include "roofline/bench/bench.hpp"
#include "roofline/bench/bench_runner.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/bench/memory_suite.hpp"
#include "roofline/bench/testdata.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/model/access.hpp"
#include "roofline/model/kernel_tiles.hpp"

using namespace roofline;
using namespace roofline::bench;
using Catch::Matchers::Contains;

namespace {

const memory::Sizes h200 = memory::plan_sizes(sample::h200_l2_bytes, sample::h200_sms, false);

const Table& table_named(const Report& report, std::string_view name) {
  for (const Table& t : report.tables) {
    if (t.name == name) return t;
  }
  throw std::invalid_argument("no table " + std::string(name));
}

std::size_t column_index(const Table& table, std::string_view key) {
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].key == key) return i;
  }
  throw std::invalid_argument("no column " + std::string(key));
}

}  // namespace

// ---- statistics --------------------------------------------------------------------------------

TEST_CASE("median of odd and even counts") {
  CHECK(median(std::vector<double>{3.0}) == 3.0);
  CHECK(median(std::vector<double>{5.0, 1.0, 3.0}) == 3.0);
  // Even count: the mean of the two middle values, 2 and 3.
  CHECK(median(std::vector<double>{4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median(std::vector<double>{2.0, 2.0}) == 2.0);
  // Halving before adding: no overflow to infinity near the largest double.
  const double big = std::numeric_limits<double>::max();
  CHECK(median(std::vector<double>{big, big}) == big);
  CHECK_THROWS_AS(median(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(median(std::vector<double>{1.0, std::nan("")}), std::invalid_argument);
}

TEST_CASE("summary: median, extremes, mean and spread") {
  // Times 10, 11, 12, 13, 20: median 12, mean 66/5 = 13.2, spread (20 - 10) / 12 = 0.8333.
  const Summary s = summarize(std::vector<double>{13, 10, 20, 11, 12});
  CHECK(s.count == 5);
  CHECK(s.median == 12);
  CHECK(s.min == 10);
  CHECK(s.max == 20);
  CHECK(s.mean == Approx(13.2));
  CHECK(s.spread() == Approx(10.0 / 12.0));
  CHECK(summarize(std::vector<double>{7, 7, 7, 7}).spread() == 0);
}

// ---- sector model -----------------------------------------------------------------------------

TEST_CASE("sectors per warp request for 4-byte elements") {
  // 32 lanes x 4 B at stride 1 = 128 contiguous bytes = 4 sectors.
  CHECK(sectors_per_warp_request(1, 4) == 4);
  // Stride 2: span 31 x 8 + 4 = 252 B -> 8 sectors (half of each is used).
  CHECK(sectors_per_warp_request(2, 4) == 8);
  // Stride 3: span 31 x 12 + 4 = 376 B -> ceil(11.75) = 12 sectors.
  CHECK(sectors_per_warp_request(3, 4) == 12);
  // Stride 8 (32 B) and beyond: every lane its own sector.
  CHECK(sectors_per_warp_request(8, 4) == 32);
  CHECK(sectors_per_warp_request(32, 4) == 32);
  // 16-byte elements, stride 1: 512 B = 16 sectors; stride 2: each 32-byte step its own sector.
  CHECK(sectors_per_warp_request(1, 16) == 16);
  CHECK(sectors_per_warp_request(2, 16) == 32);
  // 64-byte elements cover two sectors each.
  CHECK(sectors_per_warp_request(1, 64) == 64);
}

TEST_CASE("traffic of whole access patterns") {
  const SectorTraffic stream = contiguous_traffic(1024, 4);
  CHECK(stream.useful_bytes == 4096);
  CHECK(stream.sectors == 128);
  CHECK(stream.efficiency() == 1.0);
  // Stride 16 words = 64 B: one sector per element, 4 of its 32 bytes useful.
  const SectorTraffic strided = strided_traffic(1000, 16, 4);
  CHECK(strided.sectors == 1000);
  CHECK(strided.moved_bytes() == 32000);
  CHECK(strided.efficiency() == 0.125);
  // Random 4-byte accesses: one sector each.
  CHECK(random_traffic(10, 4).sectors == 10);
  SectorTraffic sum = stream;
  sum += random_traffic(10, 4);
  CHECK(sum.sectors == 138);
  CHECK(strided_traffic(0, 4, 4).sectors == 0);
  CHECK_THROWS_AS(strided_traffic(1, 1, 12), std::invalid_argument);  // 12 B straddles sectors
  CHECK_THROWS_AS(strided_traffic(1, 0, 4), std::invalid_argument);
}

// ---- the case table ----------------------------------------------------------------------------

TEST_CASE("memory cases: unique ids, groups, quick subset") {
  std::set<std::string> ids;
  std::size_t quick = 0;
  for (const memory::Case& c : memory::cases) {
    INFO(memory::case_id(c));
    CHECK(ids.insert(memory::case_id(c)).second);
    quick += c.quick ? 1 : 0;
  }
  // 2 memcpy (direct, graph) + 4 ops x (3 widths + persistent) + streaming copy and triad + 3 dots
  // + 15 strides + gather + scatter + 4 shapes x (7 mma + 3 simt + 4 wgmma (batches 8 .. 64) + 7
  // cuBLAS) per dtype, and for bf16
  // the tuned stag, pipe, pdl at batches 1-16 (3 x 5) and the read floor at batch 1 + L2 + shared memory.
  // + batch-1 bf16 cuBLAS timed directly (per shape) + the size ladder (copy, add, dot at 9 sizes)
  // + decode attention (5 batches x 5 contexts, and batch 4 over 1000 keys) over bf16 and fp8 caches
  // + the bf16 decode shapes of LLaMA-3-8B and 70B at TP 1, 2, 4, 8 (32 linears, of which 8192^2,
  // 8192 x 28672 and 28672 x 8192 are gemv_shapes already: 29) x (7 mma + 3 tuned x 5 + 7 wgmma + 7 cuBLAS)
  // + quantised GEMV at 8 shapes: fp8 W at batches 1, 2, 4 (mma, 3 tuned, simt) + 8, 16 (mma, 3
  // tuned) + 32 .. 256 (mma) + the read floor at batch 1 = 28; int4 W at batches 1 .. 16, the same
  // kernels without the read floor, + 32 and 64 (mma) = 25
  // + W8A8 GEMV at 4 shapes: mma at 7 batches, stag and pdl at batches 1 .. 16 (2 x 5) = 17; and the
  // ragged 9000 x 1104 at batches 5, 13 (mma, stag, pdl) and 24, 40 (mma) = 8
  // + latent attention (2 head counts x 4 batches x 3 contexts, and the ragged 24 and 96 heads x 1000 keys)
  // + the wgmma GEMV's ragged 1000 x 1104 at batches 24 and 40 (wgmma, cuBLAS) = 4.
  CHECK(memory::cases.size() == 2 + 16 + 2 + 3 + 15 + 2 + 2 * 4 * 21 + 4 * (15 + 2) + 2 + 9 * 3 + 2 * (5 * 5 + 1) +
                                    29 * 36 + 8 * (28 + 25) + 4 * 17 + 8 + 2 * 4 * 3 + 2 + 4);
  // The 35 of the first version, the graph memcpy, and for bf16 8192^2 the tuned kernels at
  // batches 1, 2 and 8 (9), directly timed cuBLAS and the read floor; the ladder's 64 KiB copy
  // and decode attention at batch 1 over 2048 positions and batch 4 over 1000 (bf16 and fp8 caches); quantised GEMV at
  // 8192^2 batch 1: mma, stag, simt for fp8 and int4, and fp8's read floor, and their mma at batches
  // 32 and 64 (the tensor-core kernel's shapes above 16, int4's own: 4); the bf16 wgmma GEMV at
  // 8192^2 batches 8 and 64; W8A8 at 8192^2 (mma, stag, pdl at batch 1; mma at 16 and 64) and every
  // ragged case (8); latent attention at 1024 keys for 16 and 128 heads at batch 1, 128 heads at
  // batch 8, and the two ragged cases (5); the wgmma GEMV's ragged cases (4).
  CHECK(quick == 35 + 1 + 9 + 2 + 2 + 2 + 1 + 7 + 4 + 2 + 5 + 8 + 5 + 4);
  CHECK(ids.contains("memcpy.d2d"));
  CHECK(ids.contains("memcpy.d2d.graph"));
  CHECK(ids.contains("gemv.bf16.8192x8192.b1.pdl"));
  CHECK(ids.contains("gemv.bf16.8192x8192.b16.pipe"));
  CHECK_FALSE(ids.contains("gemv.bf16.8192x8192.b32.pipe"));
  CHECK_FALSE(ids.contains("gemv.fp16.8192x8192.b1.pipe"));
  CHECK(ids.contains("gemv.bf16.16384x16384.b1.read"));
  CHECK(ids.contains("stream.triad.16B.tile"));
  CHECK(ids.contains("gemv.bf16.16384x16384.b1.mma"));
  CHECK(ids.contains("gemv.fp16.8192x28672.b64.cublas"));
  CHECK(ids.contains("access.strided.s1024"));
  CHECK(ids.contains("gemv.bf16.768x4096.b64.wgmma"));  // LLaMA-3-8B qkv at TP 8
  CHECK(ids.contains("gemv.bf16.768x4096.b1.wgmma"));   // wgmma at every batch of the decode shapes
  CHECK_FALSE(ids.contains("gemv.bf16.8192x8192.b4.wgmma"));
  CHECK(ids.contains("gemv.bf16.8192x1024.b1.pdl"));  // LLaMA-3-70B o_proj at TP 8
  CHECK(ids.contains("gemv.bf16.57344x8192.b32.cublas"));
  CHECK_FALSE(ids.contains("gemv.fp16.768x4096.b1.mma"));
  CHECK(ids.contains("attention.decode.bf16.b64.ctx1024.flashdecode"));
  // Every target names real cases.
  for (const Target& t : memory::suite().targets) {
    CHECK(ids.contains(std::string(t.reference)));
    for (std::string_view id : t.candidates) {
      if (!id.empty()) CHECK(ids.contains(std::string(id)));
    }
  }
}

TEST_CASE("sizes on an H200 (60 MiB L2, 132 SMs)") {
  // Stream arrays: the power of two at least max(1 GiB, 16 x 60 MiB = 960 MiB) = 1 GiB = 2^28 floats.
  CHECK(h200.stream_elements == 268435456);
  // Strided span and random table: max(2 GiB, 32 x 60 MiB = 1920 MiB) -> 2 GiB.
  CHECK(h200.strided_span_bytes == 2147483648);
  CHECK(h200.gather_table_elements == 536870912);
  // Accesses: an eighth of the table's 2^31 / 32 = 2^26 sectors = 2^23.
  CHECK(h200.gather_accesses == 8388608);
  // L2: 4 x 132 = 528 blocks; (62914560 / 4 / 528 = 29789) rounded down to 4 KiB = 28672 B each.
  CHECK(h200.l2_blocks == 528);
  CHECK(h200.l2_slice_bytes == 28672);
  CHECK(h200.smem_blocks == 528);
  // Rotation: 4 x L2 = 251658240 B; W of 8192^2 bf16 (134217728 B) needs 2 copies, 16384^2 one.
  CHECK(memory::rotation_count(134217728, h200) == 2);
  CHECK(memory::rotation_count(536870912, h200) == 1);
  CHECK(memory::rotation_count(33554432, h200) == 8);
  // Strided: 2^29 words / stride - 1 accesses; offsets rotate by sectors for multiples of 8.
  CHECK(memory::strided_accesses(1, h200) == 536870911);
  CHECK(memory::strided_accesses(8, h200) == 67108863);
  CHECK(memory::strided_offsets(3) == 1);
  CHECK(memory::strided_offsets(8) == 1);
  CHECK(memory::strided_offsets(12) == 1);
  CHECK(memory::strided_offsets(1024) == 128);
  // The last access of the last offset stays inside the span: (n - 1) x s + s - 8 < 2^29.
  for (std::int64_t s : memory::strides) {
    const std::int64_t last = (memory::strided_accesses(s, h200) - 1) * s + (memory::strided_offsets(s) - 1) * 8;
    CHECK(last < h200.strided_span_bytes / 4);
  }
  const memory::Sizes quick = memory::plan_sizes(sample::h200_l2_bytes, sample::h200_sms, true);
  CHECK(quick.stream_elements == 8388608);  // 32 MiB
  CHECK(quick.gather_accesses == 262144);   // 64 MiB / 32 / 8
}

TEST_CASE("each case's bytes and FLOPs come from the model's formulas") {
  const auto cost = [](std::string_view id) { return memory::case_cost(sample::find_case(id), h200); };
  // Copy of 2^28 floats: 1 GiB read + 1 GiB written = 2^31 bytes, no FLOPs.
  CHECK(cost("memcpy.d2d").bytes() == 2147483648.0);
  CHECK(cost("stream.copy.4B.tile").bytes() == 2147483648.0);
  CHECK(cost("stream.copy.4B.tile").flops == 0);
  // Triad: two arrays read, one written (3 GiB), 2 FLOPs per element.
  CHECK(cost("stream.triad.16B.tile").bytes() == 3221225472.0);
  CHECK(cost("stream.triad.16B.tile").flops == 536870912.0);
  // Dot: two arrays read, nothing written (the scalar is not counted).
  CHECK(cost("stream.dot.16B.persistent").bytes_written == 0);
  CHECK(cost("stream.dot.16B.persistent").bytes_read == 2147483648.0);
  // GEMV bf16 8192^2, batch 1: W 134217728 B + x 16384 B read, y 16384 B written; 2 x 8192^2 FLOPs.
  const OpCost gemv = cost("gemv.bf16.8192x8192.b1.mma");
  CHECK(gemv.bytes_read == 134234112.0);
  CHECK(gemv.bytes_written == 16384.0);
  CHECK(gemv.flops == 134217728.0);
  CHECK(gemv.bytes() == gemv_cost({8192, 8192, 1, DType::bf16, DType::bf16, std::nullopt}).bytes());
  // The read floor of 8192^2 bf16: W's 2^27 bytes as 2^25 words, read only.
  CHECK(cost("gemv.bf16.8192x8192.b1.read").bytes_read == 134217728.0);
  CHECK(cost("gemv.bf16.8192x8192.b1.read").bytes_written == 0);
  CHECK(cost("gemv.bf16.8192x8192.b1.pipe").bytes() == gemv.bytes());
  // Gather of 2^23 words: index + value read (2 x 4 B), value written (4 B) each.
  CHECK(cost("access.gather").bytes() == 100663296.0);
  // L2: 64 passes x 528 slices x 28672 B = 968884224 B read.
  CHECK(cost("hierarchy.l2.read").bytes() == 968884224.0);
  // Shared memory: 528 blocks x 2048 rounds x 256 threads x 16 B.
  CHECK(cost("hierarchy.smem.read").bytes() == 4429185024.0);
}

TEST_CASE("the stream size ladder: ids, element counts, costs and rotation") {
  std::set<std::string> ladder;
  for (const memory::Case& c : memory::cases) {
    if (c.array_bytes > 0) ladder.insert(memory::case_id(c));
  }
  CHECK(ladder.size() == 27);
  CHECK(ladder.contains("stream.copy.16B.tile.4KiB"));
  CHECK(ladder.contains("stream.copy.16B.tile.64KiB"));
  CHECK(ladder.contains("stream.add.16B.tile.1MiB"));
  CHECK(ladder.contains("stream.dot.16B.persistent.256MiB"));
  CHECK(memory::size_name(65536) == "64KiB");
  CHECK(memory::size_name(268435456) == "256MiB");
  // The suite's own cases keep their ids and the suite's size.
  CHECK(memory::stream_elements(sample::find_case("stream.copy.16B.tile"), h200) == 268435456);
  CHECK(memory::group_of(sample::find_case("stream.copy.16B.tile.64KiB")) == "stream");

  const auto cost = [](std::string_view id) { return memory::case_cost(sample::find_case(id), h200); };
  // Copy of 64 KiB arrays: 16384 floats, 64 KiB read + 64 KiB written, no FLOPs.
  const memory::Case& copy64k = sample::find_case("stream.copy.16B.tile.64KiB");
  CHECK(memory::stream_elements(copy64k, h200) == 16384);
  CHECK(cost("stream.copy.16B.tile.64KiB").bytes() == 131072.0);
  CHECK(cost("stream.copy.16B.tile.64KiB").flops == 0);
  CHECK(std::get<std::int64_t>(memory::make_result(copy64k, h200).parameter("elements")) == 16384);
  // Add of 1 MiB arrays: 262144 floats, 2 read + 1 written = 3 MiB, one FLOP each.
  CHECK(cost("stream.add.16B.tile.1MiB").bytes() == 3145728.0);
  CHECK(cost("stream.add.16B.tile.1MiB").flops == 262144.0);
  // Dot of 256 MiB arrays: 2^26 floats, 512 MiB read, nothing written, 2 FLOPs each.
  CHECK(cost("stream.dot.16B.persistent.256MiB").bytes_read == 536870912.0);
  CHECK(cost("stream.dot.16B.persistent.256MiB").bytes_written == 0);
  CHECK(cost("stream.dot.16B.persistent.256MiB").flops == 134217728.0);

  // Rotation of the 64 KiB copy on an H200: a launch touches 131072 B, the floor is 4 x 60 MiB =
  // 251658240 B, so 251658240 / 131072 = 1920 copies; they fill 1920 x 64 KiB = 120 MiB of the
  // 1 GiB arrays. Under --quick the arrays are 32 MiB: 512 copies fit, fewer than wanted.
  CHECK(memory::rotation_count(131072, h200) == 1920);
  const memory::StreamRotation full = memory::stream_rotation(copy64k, h200);
  CHECK(full.wanted == 1920);
  CHECK(full.copies == 1920);
  const memory::Sizes quick = memory::plan_sizes(sample::h200_l2_bytes, sample::h200_sms, true);
  const memory::StreamRotation q = memory::stream_rotation(copy64k, quick);
  CHECK(q.wanted == 1920);
  CHECK(q.copies == 512);
  // 256 MiB copy: 512 MiB a launch, past the floor: one copy. 64 MiB add: 192 MiB, 2 copies.
  CHECK(memory::stream_rotation(sample::find_case("stream.copy.16B.tile.256MiB"), h200).copies == 1);
  CHECK(memory::stream_rotation(sample::find_case("stream.add.16B.tile.64MiB"), h200).copies == 2);
  // 4 KiB copy: a launch touches 8192 B, 251658240 / 8192 = 30720 copies wanted; the cap is 4096.
  const memory::StreamRotation tiny = memory::stream_rotation(sample::find_case("stream.copy.16B.tile.4KiB"), h200);
  CHECK(tiny.wanted == 30720);
  CHECK(tiny.copies == memory::max_stream_rotation);
  // The suite's own size never rotates.
  CHECK(memory::stream_rotation(sample::find_case("stream.copy.16B.tile"), h200).copies == 1);
}

TEST_CASE("decode attention cases: LLaMA-3-70B heads, the layer stage's cost") {
  std::set<std::string> ids;
  for (const memory::Case& c : memory::cases) {
    if (c.kernel == memory::Kernel::decode_attention) ids.insert(memory::case_id(c));
  }
  // batches 1, 4, 16, 64, 256 x contexts 1024, 2048, 8192, 16384, 32768 x bf16 and e4m3 caches, and
  // batch 4 over 1000 keys (a partial last tile) in each
  CHECK(ids.size() == 50 + 2);
  CHECK(ids.contains("attention.decode.bf16.kvfp8_e4m3.b4.ctx1000.flashdecode"));
  CHECK(ids.contains("attention.decode.bf16.b1.ctx2048.flashdecode"));
  CHECK(ids.contains("attention.decode.bf16.kvfp8_e4m3.b256.ctx2048.flashdecode"));
  CHECK(ids.contains("attention.decode.bf16.b64.ctx32768.flashdecode"));
  CHECK(ids.contains("attention.decode.bf16.kvfp8_e4m3.b64.ctx32768.flashdecode"));
  const memory::Case& c = sample::find_case("attention.decode.bf16.b1.ctx2048.flashdecode");
  CHECK(memory::group_of(c) == "decode_attention");
  CHECK(memory::implementation_of(c) == "roofline");
  // Batch 1 over 2048 positions, 64 query heads on 8 KV heads of 128: q and o 64 x 128 x 2 B =
  // 16384 B each; K and V 2 x 8 x 2048 x 128 x 2 B = 8388608 B read once; 4 x 128 x 64 x 2048
  // FLOPs.
  const OpCost cost = memory::case_cost(c, h200);
  CHECK(cost.bytes_read == 16384.0 + 8388608.0);
  CHECK(cost.bytes_written == 16384.0);
  CHECK(cost.flops == 4.0 * 128 * 64 * 2048);
  // The same count as the layer's decode attention stage at that batch and context.
  for (const memory::Case& d : memory::cases) {
    if (d.kernel != memory::Kernel::decode_attention || d.kv != DType::bf16) continue;
    INFO(memory::case_id(d));
    const layer::Case step{layer::Phase::decode, d.batch, 1, d.context, layer::Linear::roofline, false,
                           layer::bf16_layer};
    const layer::StagePlan stage = layer::stages(step)[4];
    REQUIRE(stage.op.kind == OpKind::attention);
    const OpCost mine = memory::case_cost(d, h200);
    CHECK(mine.bytes_read == stage.cost.bytes_read);
    CHECK(mine.bytes_written == stage.cost.bytes_written);
    CHECK(mine.flops == stage.cost.flops);
  }
  const BenchmarkResult r = memory::make_result(c, h200);
  CHECK(std::get<std::int64_t>(r.parameter("batch")) == 1);
  CHECK(std::get<std::int64_t>(r.parameter("context")) == 2048);
  CHECK(std::get<std::int64_t>(r.parameter("heads")) == 64);
  CHECK(std::get<std::int64_t>(r.parameter("head_dim")) == 128);
  CHECK(std::get<std::string>(r.parameter("dtype")) == "bf16");
  CHECK(std::holds_alternative<std::monostate>(r.parameter("kv")));
}

TEST_CASE("decode attention over an fp8 cache: its own group, 1-byte K and V") {
  const memory::Case& c = sample::find_case("attention.decode.bf16.kvfp8_e4m3.b1.ctx2048.flashdecode");
  CHECK(memory::group_of(c) == "decode_attention_fp8");
  // As the bf16 case but K and V at 1 B: 2 x 8 x 2048 x 128 x 1 B = 4194304 B; q and o 16384 B
  // each; the FLOPs do not change.
  const OpCost cost = memory::case_cost(c, h200);
  CHECK(cost.bytes_read == 16384.0 + 4194304.0);
  CHECK(cost.bytes_written == 16384.0);
  CHECK(cost.flops == 4.0 * 128 * 64 * 2048);
  const BenchmarkResult r = memory::make_result(c, h200);
  CHECK(std::get<std::string>(r.parameter("dtype")) == "bf16");
  CHECK(std::get<std::string>(r.parameter("kv")) == "fp8_e4m3");
  CHECK(std::get<std::int64_t>(r.parameter("context")) == 2048);
  // Its recorded basis is the table the model's decode step of an fp8-KV deployment looks up.
  const nlohmann::json parameters = {{"dtype", "bf16"}, {"kv", "fp8_e4m3"}, {"batch", 1},     {"context", 2048},
                                     {"heads", 64},     {"kv_heads", 8},    {"head_dim", 128}};
  const RecordedResult recorded{"decode_attention_fp8", r.id, "flashdecode", parameters, cost.bytes(), "test"};
  const BasisOrReason basis = memory::suite().basis(recorded);
  REQUIRE(std::holds_alternative<Basis>(basis));
  CHECK(std::get<Basis>(basis).best_table == "attention.decode.bf16.kvfp8_e4m3.d128");
  CHECK(std::get<Basis>(basis).cost.bytes() == cost.bytes());
  CHECK(std::get<Basis>(basis).note.empty());
}

TEST_CASE("latent attention: the swept head counts teach the table, the ragged correctness cases do not") {
  // 128 heads at batch 8 over 4096 keys: its basis is the decode step's MLA table, series = 128
  // query rows. 96 heads (the wgmma kernel's ragged case) would be a series of one point, which the
  // interpolation between series would hold constant at every size: checked and timed, not learnt.
  const auto basis_of_heads = [](std::int64_t heads, std::int64_t batch, std::int64_t context) {
    const nlohmann::json parameters = {{"dtype", "bf16"}, {"batch", batch}, {"context", context},
                                       {"heads", heads},  {"latent", 512},  {"rope", 64}};
    const std::string id = fmt::format("attention.latent_decode.bf16.h{}.b{}.ctx{}.flashdecode", heads, batch, context);
    return memory::suite().basis(
        RecordedResult{"latent_attention", id, "flashdecode", parameters, std::nullopt, "test"});
  };
  const BasisOrReason swept = basis_of_heads(128, 8, 4096);
  REQUIRE(std::holds_alternative<Basis>(swept));
  CHECK(std::get<Basis>(swept).best_table == "attention.latent_decode.bf16.d576");
  CHECK(std::get<Basis>(swept).series == 128.0);
  for (const std::int64_t heads : {24, 96}) {
    const BasisOrReason ragged = basis_of_heads(heads, 8, 1000);
    REQUIRE(std::holds_alternative<NoBasis>(ragged));
    CHECK(std::get<NoBasis>(ragged).reason.find("not learnt") != std::string::npos);
    CHECK_FALSE(std::get<NoBasis>(ragged).ceiling);
  }
}

namespace {

// N x K of every GEMV a decode step of `model` runs, at each TP degree, as the decoder-step
// description builds them.
std::set<std::pair<std::int64_t, std::int64_t>> decode_gemv_shapes(const ModelSpec& model,
                                                                   std::initializer_list<int> tps) {
  std::set<std::pair<std::int64_t, std::int64_t>> shapes;
  for (int tp : tps) {
    for (const DecoderOp& op :
         describe_layer(model, shard(model, tp, 1), StepFormats{}, StepShape{StepPhase::decode, 1, 4096}, false)) {
      if (const auto* g = std::get_if<GemvShape>(&op.shape)) shapes.emplace(g->m, g->k);
    }
  }
  return shapes;
}

}  // namespace

TEST_CASE("bf16 GEMV decode shapes: LLaMA-3-8B and 70B's decode linears at TP 1, 2, 4, 8") {
  // Every GEMV the decoder-step description builds for the two bundled models at the four TP degrees
  // (qkv, o_proj, gate_up, down) is a bf16 case of the suite: in the decode list or in gemv_shapes.
  std::set<std::pair<std::int64_t, std::int64_t>> described;
  for (const char* name : {"llama-3.1-8b", "llama-3.1-70b"}) {
    described.merge(decode_gemv_shapes(fixture::models().find(name), {1, 2, 4, 8}));
  }
  std::set<std::pair<std::int64_t, std::int64_t>> suite;
  for (const memory::Case& c : memory::cases) {
    if (c.kernel == memory::Kernel::gemv && c.weights == DType::bf16 && c.variant == memory::Variant::cublas) {
      suite.emplace(c.m, c.k);
    }
  }
  for (const auto& [m, k] : described) {
    INFO(m << " x " << k);
    CHECK(suite.contains({m, k}));
  }
  // 32 linears, 3 of them (8192^2, 8192 x 28672, 28672 x 8192 = 70B gate_up at TP 2) in gemv_shapes;
  // 16384^2 is gemv_shapes' own, and 1000 x 1104 the wgmma GEMV's ragged shape.
  CHECK(described.size() == 32);
  CHECK(suite.size() == 29 + 4 + 1);
  // Hand-derived: LLaMA-3-8B qkv at TP 8 is (32 + 2 x 8) x 128 / 8 = 768 rows of 4096.
  CHECK(described.contains({768, 4096}));
}

TEST_CASE("quantised GEMV cases: ids, the LLaMA-3-70B decode linears, bytes with the formats") {
  // The shapes are the decode linears of the bundled llama-3.1-70b at TP 1 and 8 (N x K of qkv,
  // o_proj, gate_up, down), as the decoder-step description builds them.
  const std::set<std::pair<std::int64_t, std::int64_t>> described = decode_gemv_shapes(layer::layer_model(), {1, 8});
  std::set<std::pair<std::int64_t, std::int64_t>> table;
  for (const memory::GemvShapeMK& shape : memory::gemv_quantised_shapes) table.emplace(shape.m, shape.k);
  CHECK(table == described);

  const memory::Case& fp8 = sample::find_case("gemv.bf16.wfp8_e4m3.8192x8192.b1.stag");
  CHECK(memory::group_of(fp8) == "gemv_quant");
  CHECK(memory::quantised_gemv(fp8));
  CHECK_FALSE(memory::quantised_gemv(sample::find_case("gemv.bf16.8192x8192.b1.stag")));
  // fp8 W: 8192^2 x 1 B + x 8192 x 2 B read, y 8192 x 2 B written; 2 x 8192^2 FLOPs.
  const OpCost c8 = memory::case_cost(fp8, h200);
  CHECK(c8.bytes_read == 67108864.0 + 16384.0);
  CHECK(c8.bytes_written == 16384.0);
  CHECK(c8.flops == 134217728.0);
  // Its read floor: W's 2^26 bytes.
  CHECK(memory::case_cost(sample::find_case("gemv.bf16.wfp8_e4m3.8192x8192.b1.read"), h200).bytes() == 67108864.0);
  // int4_g128 W as the model counts it and the kernel stores it (4 bits + one 16-bit scale per
  // 128, no zero point): 8192^2 x 0.515625 B = 33554432 + 1048576 = 34603008 B, + x.
  const OpCost c4 = memory::case_cost(sample::find_case("gemv.bf16.wint4_g128.8192x8192.b1.mma"), h200);
  CHECK(c4.bytes_read == 34603008.0 + 16384.0);
  // Batches up to 256 for fp8: above 64 the mma case stands alone, to say no project kernel runs it.
  CHECK(sample::find_case("gemv.bf16.wfp8_e4m3.57344x8192.b256.mma").batch == 256);
  const BenchmarkResult r = memory::make_result(fp8, h200);
  CHECK(r.reference_id.empty());  // cuBLAS takes no fp8 W with bf16 x
  CHECK(std::get<std::string>(r.parameter("dtype")) == "bf16");
  CHECK(std::get<std::string>(r.parameter("weights")) == "fp8_e4m3");
  // The recorded basis names the table an FP8 deployment's decode linear looks up (gemv_basis of
  // GemvShape{weights fp8, activations bf16}) and the kernel's own.
  const nlohmann::json parameters = {
      {"dtype", "bf16"}, {"weights", "fp8_e4m3"}, {"m", 8192}, {"k", 8192}, {"batch", 1}};
  const RecordedResult recorded{"gemv_quant", r.id, "stag", parameters, c8.bytes(), "test"};
  const BasisOrReason basis = memory::suite().basis(recorded);
  REQUIRE(std::holds_alternative<Basis>(basis));
  CHECK(std::get<Basis>(basis).best_table == "gemv.bf16.wfp8_e4m3");
  CHECK(std::get<Basis>(basis).table == "gemv.bf16.wfp8_e4m3.stag");
  CHECK(std::get<Basis>(basis).problem == "gemv.bf16.wfp8_e4m3.8192x8192.b1");
  CHECK(std::get<Basis>(basis).cost.bytes() == c8.bytes());
  // The read floor has a table of its own and never stands for the GEMV in the best table.
  const RecordedResult read{"gemv_quant", "gemv.bf16.wfp8_e4m3.8192x8192.b1.read", "read", parameters, 67108864.0,
                            "test"};
  const BasisOrReason floor = memory::suite().basis(read);
  REQUIRE(std::holds_alternative<Basis>(floor));
  CHECK(std::get<Basis>(floor).table == "gemv.bf16.wfp8_e4m3.read");
  CHECK(std::get<Basis>(floor).best_table.empty());
  CHECK(std::get<Basis>(floor).note.empty());  // the run's bytes are the floor's
}

TEST_CASE("W8A8 GEMV cases: ids, quick subset, bytes with 1-byte x and a bf16 y, tables") {
  const memory::Case& b16 = sample::find_case("gemv.fp8_e4m3.8192x8192.b16.mma");
  CHECK(memory::group_of(b16) == "gemv_w8a8");
  CHECK(memory::w8a8_gemv(b16));
  CHECK_FALSE(memory::quantised_gemv(b16));  // W and x share a format: not the W8A16 group
  CHECK_FALSE(memory::w8a8_gemv(sample::find_case("gemv.bf16.wfp8_e4m3.8192x8192.b1.stag")));
  CHECK(b16.quick);
  // By hand: W 8192^2 x 1 B = 67108864 B and x 16 x 8192 x 1 B = 131072 B read, y 16 x 8192 x 2 B
  // (bf16) = 262144 B written; 2 x 8192^2 x 16 = 2147483648 FLOPs.
  const OpCost c = memory::case_cost(b16, h200);
  CHECK(c.bytes_read == 67108864.0 + 131072.0);
  CHECK(c.bytes_written == 262144.0);
  CHECK(c.flops == 2147483648.0);
  // gate_up at batch 1: W 57344 x 8192 = 469762048 B, x 8192 B; y 57344 x 2 = 114688 B.
  const OpCost gate_up = memory::case_cost(sample::find_case("gemv.fp8_e4m3.57344x8192.b1.pdl"), h200);
  CHECK(gate_up.bytes_read == 469762048.0 + 8192.0);
  CHECK(gate_up.bytes_written == 114688.0);
  // The ragged shape at batch 40: W 9000 x 1104 = 9936000 B, x 40 x 1104 = 44160 B; y 40 x 9000 x 2 =
  // 720000 B.
  const memory::Case& ragged = sample::find_case("gemv.fp8_e4m3.9000x1104.b40.mma");
  CHECK(ragged.quick);
  const OpCost cr = memory::case_cost(ragged, h200);
  CHECK(cr.bytes_read == 9936000.0 + 44160.0);
  CHECK(cr.bytes_written == 720000.0);
  // The cases: mma at every batch; stag and pdl up to 16; no simt, pipe, wgmma, cuBLAS or read floor
  // (cuBLASLt at these shapes is the compute suite's gemm.fp8e4m3.{batch}x{m}x{k}.cublaslt; the read
  // of these W is the W8A16 group's).
  std::set<std::string> ids;
  std::set<std::string> quick;
  for (const memory::Case& w : memory::cases) {
    if (!memory::w8a8_gemv(w)) continue;
    ids.insert(memory::case_id(w));
    if (w.quick) quick.insert(memory::case_id(w));
  }
  CHECK(ids.size() == 4 * 17 + 8);
  CHECK(ids.contains("gemv.fp8_e4m3.8192x28672.b64.mma"));
  CHECK(ids.contains("gemv.fp8_e4m3.10240x8192.b16.stag"));
  CHECK_FALSE(ids.contains("gemv.fp8_e4m3.8192x8192.b32.stag"));
  CHECK_FALSE(ids.contains("gemv.fp8_e4m3.8192x8192.b1.simt"));
  CHECK(quick == std::set<std::string>{"gemv.fp8_e4m3.8192x8192.b1.mma", "gemv.fp8_e4m3.8192x8192.b1.stag",
                                       "gemv.fp8_e4m3.8192x8192.b1.pdl", "gemv.fp8_e4m3.8192x8192.b16.mma",
                                       "gemv.fp8_e4m3.8192x8192.b64.mma", "gemv.fp8_e4m3.9000x1104.b5.mma",
                                       "gemv.fp8_e4m3.9000x1104.b5.stag", "gemv.fp8_e4m3.9000x1104.b5.pdl",
                                       "gemv.fp8_e4m3.9000x1104.b13.mma", "gemv.fp8_e4m3.9000x1104.b13.stag",
                                       "gemv.fp8_e4m3.9000x1104.b13.pdl", "gemv.fp8_e4m3.9000x1104.b24.mma",
                                       "gemv.fp8_e4m3.9000x1104.b40.mma"});
  // The ragged shape is off every tile: m not a multiple of 16, k a multiple of 16 but not of 64.
  CHECK(memory::gemv_w8a8_ragged_shape.m % 16 != 0);
  CHECK(memory::gemv_w8a8_ragged_shape.k % 16 == 0);
  CHECK(memory::gemv_w8a8_ragged_shape.k % 64 != 0);
  // The wgmma GEMV's ragged shape likewise: m off its 64-row tiles, k off its 64-element blocks, and
  // its batches fill the second of two vector groups partly (24 = 16 + 8, 40 = 32 + 8).
  CHECK(memory::gemv_wgmma_ragged_shape.m % 64 != 0);
  CHECK(memory::gemv_wgmma_ragged_shape.k % 64 != 0);
  for (std::int64_t batch : memory::gemv_wgmma_ragged_batches) {
    const kernel_tiles::GemvWgmmaSplit plan = kernel_tiles::gemv_wgmma_split(
        memory::gemv_wgmma_ragged_shape.m, memory::gemv_wgmma_ragged_shape.k, batch, 132);
    CHECK(plan.vector_groups == 2);
    CHECK(batch % plan.tile_n != 0);
    CHECK(plan.splits == 4);
  }

  const BenchmarkResult r = memory::make_result(b16, h200);
  CHECK(r.group == "gemv_w8a8");
  CHECK(r.reference_id.empty());
  CHECK(std::get<std::string>(r.parameter("dtype")) == "fp8_e4m3");
  CHECK(std::get<std::string>(r.parameter("weights")) == "fp8_e4m3");
  CHECK(std::get<std::string>(r.parameter("output")) == "bf16");
  // The recorded basis: the model's GEMV basis with 1-byte x and a bf16 y, and a table of its own,
  // "gemv.fp8_e4m3" (calibration_tables::gemv(fp8_e4m3, fp8_e4m3)), apart from W8A16's
  // "gemv.bf16.wfp8_e4m3".
  const nlohmann::json parameters = {
      {"dtype", "fp8_e4m3"}, {"weights", "fp8_e4m3"}, {"output", "bf16"}, {"m", 8192}, {"k", 8192}, {"batch", 16}};
  const RecordedResult recorded{"gemv_w8a8", r.id, "mma", parameters, c.bytes(), "test"};
  const BasisOrReason basis = memory::suite().basis(recorded);
  REQUIRE(std::holds_alternative<Basis>(basis));
  const Basis& b = std::get<Basis>(basis);
  CHECK(b.best_table == "gemv.fp8_e4m3");
  CHECK(b.best_table == calibration_tables::gemv(DType::fp8_e4m3, DType::fp8_e4m3));
  CHECK(b.best_table != calibration_tables::gemv(DType::bf16, DType::fp8_e4m3));
  CHECK(b.table == "gemv.fp8_e4m3.mma");
  CHECK(b.problem == "gemv.fp8_e4m3.8192x8192.b16");
  CHECK(b.cost.bytes() == c.bytes());
  CHECK(b.note.empty());
  CHECK(b.math.type == DType::fp8_e4m3);  // the e4m3 tensor-core roof
}

TEST_CASE("sectors moved by the access cases") {
  const auto sectors = [](std::string_view id) { return *memory::case_sectors(sample::find_case(id), h200); };
  // Stride 8 words (32 B): one sector per access, an eighth of it useful.
  const SectorTraffic s8 = sectors("access.strided.s8");
  CHECK(s8.sectors == 67108863);
  CHECK(s8.efficiency() == 0.125);
  // Stride 1: 2^29 - 1 words fill 2^26 sectors but for the last word: (2^31 - 4) / 2^31.
  CHECK(sectors("access.strided.s1").efficiency() == Approx(1.0 - 4.0 / 2147483648.0).epsilon(1e-12));
  // Gather: 2^23 x 4 B of indices and of outputs (2^20 sectors each) + 2^23 random sectors;
  // 100663296 useful bytes of 10485760 x 32 = 335544320 moved: 0.3.
  const SectorTraffic g = sectors("access.gather");
  CHECK(g.sectors == 10485760);
  CHECK(g.efficiency() == Approx(0.3));
  CHECK_FALSE(memory::case_sectors(sample::find_case("memcpy.d2d"), h200).has_value());
}

TEST_CASE("results know their group, parameters, ceiling and reference") {
  const BenchmarkResult r = memory::make_result(sample::find_case("gemv.bf16.8192x8192.b4.simt"), h200);
  CHECK(r.group == "gemv");
  CHECK(r.implementation == "roofline");
  CHECK(r.ceiling_id == "memcpy.d2d");
  CHECK(r.reference_id == "gemv.bf16.8192x8192.b4.cublas");
  CHECK(std::get<std::int64_t>(r.parameter("batch")) == 4);
  CHECK(std::get<std::string>(r.parameter("dtype")) == "bf16");
  CHECK(std::holds_alternative<std::monostate>(r.parameter("no such key")));
  CHECK(memory::make_result(sample::find_case("gemv.bf16.8192x8192.b4.cublas"), h200).reference_id.empty());
  CHECK(memory::make_result(sample::find_case("memcpy.d2d"), h200).implementation == "cuda-runtime");
}

// ---- relating results and targets ----------------------------------------------------------------

TEST_CASE("bandwidth, ceiling fraction and speedup of a synthetic run") {
  const BenchRun run = sample::sample_run();
  const auto find = [&run](std::string_view id) -> const BenchmarkResult& {
    for (const BenchmarkResult& r : run.results) {
      if (r.id == id) return r;
    }
    throw std::invalid_argument("missing");
  };
  // memcpy: 2^31 B in 0.5 ms = 4.294967 TB/s; copy: in 0.505 ms = 99.0099% of it.
  CHECK(*find("memcpy.d2d").bandwidth() == Approx(4.294967296e12));
  CHECK(*find("stream.copy.16B.tile").ceiling_fraction == Approx(0.5 / 0.505));
  // Best bandwidth uses the fastest sample: 2^31 / 0.5 ms.
  CHECK(*find("stream.copy.16B.tile").best_bandwidth() == Approx(4.294967296e12));
  // GEMV: 134250496 B / 37 us = 3.628 TB/s; 2^27 FLOP / 37 us = 3.627 TFLOP/s; 44 / 37 = 1.189x cuBLAS.
  const BenchmarkResult& gemv = find("gemv.bf16.8192x8192.b1.mma");
  CHECK(*gemv.bandwidth() == Approx(134250496.0 / 37e-6));
  CHECK(*gemv.flop_rate() == Approx(134217728.0 / 37e-6));
  CHECK(*gemv.reference_speedup == Approx(44.0 / 37.0));
  CHECK_FALSE(find("gemv.bf16.8192x8192.b1.cublas").reference_speedup.has_value());
  // A failed result has no timing and no derived figures.
  CHECK_FALSE(find("stream.triad.16B.tile").bandwidth().has_value());
  CHECK_FALSE(find("stream.triad.16B.tile").ceiling_fraction.has_value());
  // Sector bandwidth of stride 8: 67108863 x 32 B / 0.4 ms.
  CHECK(*find("access.strided.s8").sector_bandwidth() == Approx(67108863.0 * 32 / 0.0004));
}

TEST_CASE("targets take the fastest passed candidate and say when they cannot be judged") {
  const BenchRun run = sample::sample_run();
  const std::vector<TargetResult> t = evaluate_targets(memory::suite().targets, run.results);
  REQUIRE(t.size() == 7);
  // copy: 99.01% of memcpy >= 95%.
  CHECK(t[0].candidate == std::optional<std::string>("stream.copy.16B.tile"));
  CHECK(*t[0].ratio == Approx(0.5 / 0.505));
  CHECK(t[0].met == std::optional<bool>(true));
  // triad failed verification: not evaluated.
  CHECK_FALSE(t[1].met.has_value());
  CHECK_FALSE(t[1].candidate.has_value());
  // GEMV 8192^2: 3.628 / 4.295 TB/s = 84.5% < 85%: missed.
  CHECK(*t[3].ratio == Approx((134250496.0 / 37e-6) / 4.294967296e12));
  CHECK(t[3].met == std::optional<bool>(false));
  // ... but faster than cuBLAS (same bytes: 44 / 37).
  CHECK(*t[4].ratio == Approx(44.0 / 37.0));
  CHECK(t[4].met == std::optional<bool>(true));
  // fp8 W at gate_up: not in the sample, not judged; 8192^2 batch 1: 8192^2 x 1 B + 2 x 8192 x 2 B
  // = 67141632 B in 17 us = 3.950 TB/s, 91.96% of memcpy's 4.295 >= 85%.
  CHECK_FALSE(t[5].met.has_value());
  CHECK(t[6].candidate == std::optional<std::string>("gemv.bf16.wfp8_e4m3.8192x8192.b1.stag"));
  CHECK(*t[6].ratio == Approx((67141632.0 / 17e-6) / 4.294967296e12));
  CHECK(t[6].met == std::optional<bool>(true));
}

// ---- reports -----------------------------------------------------------------------------------

TEST_CASE("a run becomes a report: device, run, one table per group, targets") {
  const Report report = make_report(sample::sample_run(), {{"suite", "all"}});
  CHECK(report.kind == "bench");
  std::vector<std::string> names;
  for (const Table& t : report.tables) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"device", "run", "stream", "access", "gemv", "gemv_quant", "gemv_w8a8",
                                          "decode_attention", "decode_attention_fp8", "hierarchy", "peak", "gemm",
                                          "gemm_grouped", "attention", "attention_by_n", "layer", "layer_stages",
                                          "targets"});
  const Table& stream = table_named(report, "stream");
  REQUIRE(stream.rows.size() == 4);
  // The ladder's 64 KiB copy: its own element count, 2^14.
  CHECK(std::get<std::int64_t>(stream.rows[3][column_index(stream, "elements")]) == 16384);
  const Table& decode = table_named(report, "decode_attention");
  REQUIRE(decode.rows.size() == 1);
  CHECK(std::get<std::int64_t>(decode.rows[0][column_index(decode, "context")]) == 2048);
  CHECK(std::get<std::int64_t>(decode.rows[0][column_index(decode, "kv_heads")]) == 8);
  CHECK(std::get<std::string>(stream.rows[2][column_index(stream, "status")]) == "failed");
  CHECK(std::holds_alternative<std::monostate>(stream.rows[2][column_index(stream, "median_us")]));
  CHECK(std::get<double>(stream.rows[0][column_index(stream, "median_us")]) == Approx(500.0));
  CHECK(std::get<double>(stream.rows[1][column_index(stream, "pct_of_memcpy")]) == Approx(100 * 0.5 / 0.505));
  const Table& gemv = table_named(report, "gemv");
  CHECK(std::get<double>(gemv.rows[0][column_index(gemv, "speedup_vs_cublas")]) == Approx(44.0 / 37.0));
  CHECK(std::get<std::string>(gemv.rows[2][column_index(gemv, "status")]) == "not_supported");
  const Table& run = table_named(report, "run");
  // Memory 12 (with the 64 KiB copy, decode attention over both caches, an fp8 GEMV and a W8A8 GEMV),
  // compute 9 (2 probes, 3 GEMMs, 2 grouped GEMMs, 2 attention), layer 11 (the layer and 10 stages).
  CHECK(std::get<std::int64_t>(run.rows[0][column_index(run, "passed")]) == 12 + 9 + 11);
  // The grouped wgmma case against cuBLAS: 480 / 520 us.
  const Table& grouped = table_named(report, "gemm_grouped");
  REQUIRE(grouped.rows.size() == 2);
  CHECK(std::get<double>(grouped.rows[0][column_index(grouped, "pct_of_library")]) == Approx(100 * 480.0 / 520.0));
  CHECK(std::get<std::string>(grouped.rows[1][column_index(grouped, "call")]) == "cublasGemmStridedBatchedEx");
  CHECK(std::get<std::int64_t>(run.rows[0][column_index(run, "failed")]) == 2);
  CHECK(std::get<std::int64_t>(run.rows[0][column_index(run, "not_supported")]) == 2);
  CHECK(report.hardware.size() == 1);
  // 4.294967 TB/s of the file's 4.8: 89.5%.
  CHECK(std::find(report.notes.begin(), report.notes.end(),
                  "cudaMemcpy D2D moved 4.295 TB/s: 89.5% of the 4.8 TB/s in h200-sxm") != report.notes.end());
  CHECK(failed_ids(sample::sample_run()) ==
        std::vector<std::string>{"stream.triad.16B.tile", "attn.bf16.causal.d128.b4h32kv32.n4096.flashw8r16"});
  // The JSON carries every table under results.
  const nlohmann::json json = to_json(report);
  CHECK(json.at("schema") == "roofline.bench.v1");
  CHECK(json.at("results").at("targets").size() == 7 + 4);
  CHECK(json.at("results").at("device").at(0).at("name") == "NVIDIA H200");
}

TEST_CASE("case list report and suite selection") {
  const std::vector<const SuiteInfo*> all = select_suites("all");
  REQUIRE(all.size() == suites().size());
  CHECK(select_suites("memory,all").size() == all.size());
  CHECK_THROWS_AS(select_suites("compute-nope"), InputError);
  CHECK_THROWS_AS(select_suites("memory,"), InputError);
  const Report list = make_case_list(all, true, nlohmann::json::object());
  CHECK(list.kind == "bench-cases");
  // --quick: 87 memory (49, and fp8 GEMV mma, stag, simt, read, int4 GEMV mma, stag, simt, both
  // formats' mma at batches 32 and 64, fp8-KV decode attention, the bf16 wgmma GEMV at batches 8 and
  // 64: 63; decode attention over 1000 keys in both cache formats, 2; the W8A8 GEMV's 13; 5 latent
  // attention; the wgmma GEMV's 4 ragged cases), 104 + 38 compute (3 probes, 32 GEMMs, 7 FP8 GEMMs, 62 attention:
  // 56 + the Hopper kernel's 6 of several query tiles a block; 38 grouped GEMMs) + 12 FP8 attention (8 + 4 of
  // several tiles a block), 8 MLA expanded attention (2 small shapes x 2 masks x standard and flash_wgmma)
  // and 5 + 4 layer cases (bf16 + FP8).
  CHECK(list.tables.front().rows.size() == 87 + 104 + 38 + 12 + 8 + 5 + 4 + 36);
  CHECK(make_case_list(select_suites("layer"), false, nlohmann::json::object()).tables.front().rows.size() == 26 + 26);
  CHECK(selected_by_filters("gemv.bf16.8192x8192.b1.mma", {"8192x8192.b1", "nothing"}));
  CHECK_FALSE(selected_by_filters("gemv.bf16.8192x8192.b1.mma", {"fp16"}));
  CHECK(selected_by_filters("anything", {}));
}

// ---- hardware matching -------------------------------------------------------------------------

TEST_CASE("device names match hardware files") {
  const HardwareRegistry& registry = fixture::gpus();
  const auto id_of = [&registry](std::string_view name) -> std::string {
    const HardwareMatch m = match_hardware(name, registry);
    return m.spec == nullptr ? "" : m.spec->id;
  };
  CHECK(id_of("NVIDIA H200") == "h200-sxm");
  CHECK(id_of("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(id_of("NVIDIA H100 PCIe") == "h100-pcie");
  CHECK(id_of("NVIDIA H100 NVL") == "h100-nvl");
  CHECK(id_of("NVIDIA A100-SXM4-40GB") == "a100-sxm4-40gb");
  CHECK(id_of("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb");
  CHECK(id_of("NVIDIA GeForce RTX 4090") == "rtx-4090");
  CHECK(id_of("Tesla V100-SXM2-32GB") == "v100-sxm2");
  CHECK(id_of("NVIDIA B200") == "b200");
  // Not in the database: no guess, and the detail says what to do.
  CHECK(id_of("NVIDIA H200 NVL").empty());
  CHECK_THAT(match_hardware("NVIDIA H200 NVL", registry).detail, Contains("--gpu"));
  CHECK(id_of("").empty());
}

// ---- test data ---------------------------------------------------------------------------------

TEST_CASE("test data: exact 16-bit levels, fp32 from 1 to 2, a bijective permutation") {
  // -128/256 = -0.5: bf16 0xBF00, fp16 0xB800; 1/256 = 2^-8: bf16 0x3B80, fp16 exponent 7 -> 0x1C00.
  CHECK(testdata::level_bf16_bits(-128) == 0xBF00);
  CHECK(testdata::level_fp16_bits(-128) == 0xB800);
  CHECK(testdata::level_bf16_bits(1) == 0x3B80);
  CHECK(testdata::level_fp16_bits(1) == 0x1C00);
  CHECK(testdata::level_fp16_bits(0) == 0);
  for (int lvl = -128; lvl < 128; ++lvl) {
    INFO(lvl);
    CHECK(testdata::bf16_bits_to_float(testdata::level_bf16_bits(lvl)) == static_cast<float>(lvl) / 256.0F);
    CHECK(testdata::fp16_bits_to_float(testdata::level_fp16_bits(lvl)) == static_cast<float>(lvl) / 256.0F);
  }
  CHECK(testdata::fp16_bits_to_float(0x0001) == std::ldexp(1.0F, -24));  // smallest subnormal
  CHECK(testdata::fp16_bits_to_float(0x3C00) == 1.0F);
  CHECK(std::isinf(testdata::fp16_bits_to_float(0x7C00)));
  CHECK(std::isnan(testdata::fp16_bits_to_float(0xFFFF)));  // the poison pattern
  CHECK(std::isnan(testdata::bf16_bits_to_float(0xFFFF)));
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const float v = std::bit_cast<float>(testdata::unit_f32_bits(7, i));
    CHECK((v >= 1.0F && v < 2.0F));
    const int lvl = testdata::level(7, i);
    CHECK((lvl >= -128 && lvl <= 127));
  }
  std::set<std::uint64_t> seen;
  for (std::uint64_t x = 0; x < 1024; ++x) {
    const std::uint64_t y = testdata::permute(x, 10, 99);
    CHECK(y < 1024);
    seen.insert(y);
  }
  CHECK(seen.size() == 1024);
  CHECK(testdata::bits32(1, 2) != testdata::bits32(2, 1));
}

TEST_CASE("a --filter that matches nothing is bad input, before any GPU is touched") {
  RunOptions options;
  options.suites = select_suites("memory");
  options.filters = {"no-such-case"};
  if (cuda_benchmarks_built()) {
    CHECK_THROWS_AS(run_benchmarks(options, fixture::gpus()), InputError);
  } else {
    CHECK_THROWS_AS(run_benchmarks(options, fixture::gpus()), NoDeviceError);
  }
}

// ---- the compute suite -------------------------------------------------------------------------

namespace {

const BenchmarkResult& result_named(const BenchRun& run, std::string_view id) {
  for (const BenchmarkResult& r : run.results) {
    if (r.id == id) return r;
  }
  throw std::invalid_argument("no result " + std::string(id));
}

const compute::GemmCase& gemm_case(std::string_view id) {
  for (const compute::GemmCase& c : compute::all_gemm_cases()) {
    if (compute::case_id(c) == id) return c;
  }
  throw std::invalid_argument("no case " + std::string(id));
}

const compute::AttentionCase& attention_case(std::string_view id) {
  for (const compute::AttentionCase& c : compute::attention_cases) {
    if (compute::case_id(c) == id) return c;
  }
  throw std::invalid_argument("no case " + std::string(id));
}

}  // namespace

TEST_CASE("compute cases: unique ids, the whole ladder per square size, a quick subset") {
  std::set<std::string> ids;
  std::size_t quick = 0;
  for (const compute::PeakCase& c : compute::peak_cases) {
    CHECK(ids.insert(compute::case_id(c.impl)).second);
    quick += c.quick ? 1 : 0;
  }
  for (const compute::GemmCase& c : compute::all_gemm_cases()) {
    INFO(compute::case_id(c));
    CHECK(ids.insert(compute::case_id(c)).second);
    quick += c.quick ? 1 : 0;
  }
  for (const compute::AttentionCase& c : compute::attention_cases) {
    INFO(compute::case_id(c));
    CHECK(ids.insert(compute::case_id(c)).second);
    quick += c.quick ? 1 : 0;
  }
  // GEMM: 5 bf16 squares x 5 kernels, fp16 4096^3 and 8192^3 x 3 (tensor cores and cuBLAS), fp16
  // 256x512x1024 x 5 + the swapped GEMV (m <= 256), 4 skinny shapes x 3 + the swapped GEMV at
  // m = 64 and 128, the ragged shape x 5; LLaMA-3 70B's qkv, gate_up and down at m = 64 and 128 and
  // those with o_proj (8192^2) at m = 256 x 4 (mma.sync, wgmma, swapped, cuBLAS), at m = 512 x 3;
  // and the wgmma GEMM's skinny plan where it differs from the plain one on 132 SMs (other tile
  // widths, pairs, or a split k): 512^3, 1024^3, fp16 256x512x1024, the ragged shape and 2100 x 2000 x
  // 200 (quick), 64 and 128 x 8192 x 8192, qkv (10240 x 8192) and down (8192 x 28672) at m = 64 and
  // 128, o_proj, qkv and down at m = 256, qkv at m = 512 (15); the paired kernel's odd tile rows, 2100
  // x 2000 x 200 (mma.sync, wgmma, cuBLAS; quick).
  CHECK(compute::gemm_cases.size() == 25 + 6 + 6 + 14 + 5 + 2 * 3 * 4 + 4 * 4 + 4 * 3 + 15 + 3);
  // FP8: 204 problems with both implementations -- the 3 --quick ones, the squares 2048..8192, the
  // 160 LLaMA prefill shapes (8 deployments x 4 projections x 5 token counts) less LLaMA-3.1 8B's
  // qkv at m = 128 (a --quick one) and 70B's o_proj at m = 8192 (the 8192^3 square), and
  // DeepSeek-V3's 8 projections at TP 8 x 5 token counts (40) -- and 128 decode-only ones
  // (cuBLASLt): the --quick 4x8192x8192, 70B's 4 projections x 9 token counts at TP 1 less the 4 at
  // m = 128 (prefill shapes) and the --quick one (32), the same at TP 8 less its 4 at m = 128 (32),
  // and DeepSeek-V3's 8 x 9 less its 8 at m = 128 (64).
  CHECK(compute::all_gemm_cases().size() == compute::gemm_cases.size() + 204 * 2 + 32 + 32 + 64);
  // Attention: 2 head dims x causal or not x 7 lengths, GQA x 2, fp16 x 2, N = 32768 with B = 4,
  // B = 4 at N 1k, 2k, 8k, 16k (causal and full) and full 32k, head dim 256 x causal or not x 5
  // lengths, GQA at d 64 and 256 x causal or not, and 3 head dims x 2 x 2 small shapes and fp16
  // N = 512; each with standard and the three flash kernels. FP8 (flash_wgmma alone), causal or not:
  // d 128 at B 4 and 5 lengths, GQA, d 256 at 3 lengths, and 2 small shapes at each head dim. MLA
  // expanded (d 192, V 128; standard and flash_wgmma): causal at 16 heads x 5 lengths and 128 heads x 3,
  // full at one shape of each, and 2 small shapes x 2 masks (--quick). The Hopper kernel alone on a
  // shape of several query tiles a block (B 2, H 32, KV 8, N 1000): bf16 at 3 head dims x 2 masks,
  // FP8 at 2 x 2 (--quick).
  CHECK(compute::attention_cases.size() ==
        4 * (28 + 2 + 2 + 1 + 9 + 10 + 4 + 12 + 1) + 2 * (5 + 1 + 3 + 4) + 2 * (5 + 3 + 2 + 4) + 3 * 2 + 2 * 2);
  // FP8 --quick: 3 problems x 2 implementations, 1 padded decode call; attention's 56 + 6 of several
  // query tiles a block; FP8 attention's 8 small shapes + 4 of several tiles; MLA expanded's 8.
  CHECK(quick == 3 + 32 + 7 + 62 + 12 + 8);
  for (std::string_view id :
       {"gemm.bf16.8192x8192x8192.naive", "gemm.bf16.8192x8192x8192.smemtiled", "gemm.bf16.8192x8192x8192.mmasync",
        "gemm.bf16.8192x8192x8192.wgmma", "gemm.bf16.8192x8192x8192.cublas", "gemm.bf16.64x8192x8192.wgmma",
        "gemm.bf16.256x57344x8192.swapab", "attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma",
        "attn.bf16.full.d64.b1h32kv32.n32768.standard", "attn.bf16.causal.d128.b4h32kv8.n4096.flashw4r32",
        "peak.wgmma.bf16"}) {
    CHECK(ids.contains(std::string(id)));
  }
  CHECK_FALSE(ids.contains("gemm.fp16.8192x8192x8192.naive"));  // the CUDA-core rungs run bf16 only
  CHECK(gemm_case("gemm.bf16.4096x4096x4096.wgmma").quick);
  CHECK_FALSE(gemm_case("gemm.bf16.4096x4096x4096.naive").quick);  // 0.15 s a launch: not under a sanitizer
  for (const Target& t : compute::suite().targets) {
    if (!t.reference.empty()) CHECK(ids.contains(std::string(t.reference)));
    for (std::string_view id : t.candidates) {
      if (!id.empty()) CHECK(ids.contains(std::string(id)));
    }
  }
}

TEST_CASE("every id of every suite is a dotted lower-case name the schema accepts") {
  // Format names (fp8_e4m3, int4_g128) carry an underscore; the schema rows of the groups that
  // have them (gemv_quant, decode_attention_fp8) accept it.
  const std::regex pattern("^[a-z0-9]+(\\.[A-Za-z0-9_]+)+$");
  for (const SuiteInfo* suite : select_suites("all")) {
    for (const CaseInfo& c : suite->cases()) {
      INFO(c.id);
      CHECK(std::regex_match(c.id, pattern));
    }
  }
  for (const layer::Case& c : layer::cases) {
    for (const BenchmarkResult& r : layer::make_results(c)) {
      INFO(r.id);
      CHECK(std::regex_match(r.id, pattern));
    }
  }
}

TEST_CASE("GEMM cases count HBM bytes with the kernel's own tile") {
  const auto bytes = [](std::string_view id) { return compute::case_cost(gemm_case(id)).bytes(); };
  // 8192^3 bf16: 2 x 8192^3 FLOPs; each 8192^2 operand is 134217728 B.
  const double operand = 134217728.0;
  CHECK(compute::case_cost(gemm_case("gemm.bf16.8192x8192x8192.wgmma")).flops == 1099511627776.0);
  // cuBLAS: the minimum, A and B read once, C written once.
  CHECK(bytes("gemm.bf16.8192x8192x8192.cublas") == 3 * operand);
  // naive (1 x 1 tile): both operands loaded for each of the 8192^3 multiply-adds (2 x 2 B), C once.
  CHECK(bytes("gemm.bf16.8192x8192x8192.naive") == 8192.0 * 8192 * 8192 * 4 + operand);
  // wgmma, 128 x 256 tiles: A read 8192 / 256 = 32 times, B 8192 / 128 = 64 times.
  CHECK(bytes("gemm.bf16.8192x8192x8192.wgmma") == operand * 32 + operand * 64 + operand);
  // smem tiled and mma.sync, 128 x 128: 64 times each.
  CHECK(bytes("gemm.bf16.8192x8192x8192.smemtiled") == operand * 64 + operand * 64 + operand);
  CHECK(bytes("gemm.bf16.8192x8192x8192.mmasync") == bytes("gemm.bf16.8192x8192x8192.smemtiled"));
  // Ragged 333 x 264 x 200 with 128 x 256 tiles: A (133200 B) read ceil(264/256) = 2 times, B
  // (105600 B) ceil(333/128) = 3 times, C 175824 B.
  CHECK(bytes("gemm.bf16.333x264x200.wgmma") == 133200.0 * 2 + 105600.0 * 3 + 175824.0);
  // The tiles are the ones the kernels are built from.
  CHECK(compute::tiling_of(compute::GemmImpl::wgmma)->tile_n == kernel_tiles::gemm_wgmma.tile_n);
  CHECK_FALSE(compute::tiling_of(compute::GemmImpl::cublas).has_value());

  const BenchmarkResult r = compute::make_result(gemm_case("gemm.bf16.8192x8192x8192.wgmma"));
  CHECK(r.group == "gemm");
  CHECK(r.reference_id == "gemm.bf16.8192x8192x8192.cublas");
  CHECK(r.ceiling_id == "peak.wgmma.bf16");
  CHECK(r.ceiling_metric == Metric::flop_rate);
  CHECK(std::get<std::string>(r.parameter("tile")) == "128x256");
  CHECK(std::get<double>(r.parameter("min_bytes")) == 3 * operand);
  CHECK(std::get<double>(r.parameter("naive_bytes")) == 8192.0 * 8192 * 8192 * 4 + operand);
  CHECK(compute::make_result(gemm_case("gemm.bf16.8192x8192x8192.naive")).ceiling_id == "peak.fma.fp32");
  CHECK(compute::make_result(gemm_case("gemm.bf16.8192x8192x8192.cublas")).reference_id.empty());
}

TEST_CASE(
    "FP8 GEMM cases: the projections of the bundled presets as llm describes them, and the bytes of e4m3 operands") {
  const auto shapes = [](std::string_view model, std::int64_t tp) {
    std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> out;
    for (const compute::LinearShape& l : compute::w8a8_linears(model, tp)) out.emplace_back(l.name, l.n, l.k);
    return out;
  };
  using Shapes = std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>;
  // LLaMA-3.1 70B (hidden 8192, 64 heads, 8 KV heads, head_dim 128, FFN 28672) at TP 1:
  // qkv (64 + 2 x 8) x 128 = 10240 outputs; o_proj 64 x 128 = 8192 inputs; gate_up 2 x 28672.
  CHECK(shapes("llama-3.1-70b", 1) == Shapes{{"qkv_proj", 10240, 8192},
                                             {"o_proj", 8192, 8192},
                                             {"ffn_gate_up", 57344, 8192},
                                             {"ffn_down", 8192, 28672}});
  // At TP 8: qkv (8 + 2 x 1) x 128 = 1280, o_proj 8 x 128 = 1024 inputs, gate_up 57344 / 8 = 7168,
  // down 28672 / 8 = 3584 inputs.
  CHECK(
      shapes("llama-3.1-70b", 8) ==
      Shapes{{"qkv_proj", 1280, 8192}, {"o_proj", 8192, 1024}, {"ffn_gate_up", 7168, 8192}, {"ffn_down", 8192, 3584}});
  // 405B (hidden 16384, 128 heads, 8 KV heads, FFN 53248) at TP 8: qkv 144 x 128 / 8 = 2304, down
  // 53248 / 8 = 6656 inputs.
  const std::vector<compute::LinearShape> tp8 = compute::w8a8_linears("llama-3.1-405b", 8);
  REQUIRE(tp8.size() == 4);
  CHECK(tp8[0].n == 2304);
  CHECK(tp8[0].k == 16384);
  CHECK(tp8[3].n == 16384);
  CHECK(tp8[3].k == 6656);
  // DeepSeek-V3 (hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, rope 64, nope 128,
  // v 128, dense FFN 18432, one shared expert of 2048) at TP 8, 16 heads a GPU: q_down 1536 x 7168,
  // q_up 16 x (128 + 64) = 3072 outputs of 1536, kv_down 512 + 64 = 576 outputs, o_proj 16 x 128 =
  // 2048 inputs; the three dense layers' gate_up 2 x 18432 / 8 = 4608 and down 2304 inputs; the
  // shared expert's gate_up 2 x 2048 / 8 = 512 and down 256 inputs. Not W8A8: the absorbed q_absorb
  // and v_up (per-head, 16-bit), the router (16-bit inputs), the routed experts (a grouped GEMM).
  CHECK(shapes("deepseek-v3", 8) == Shapes{{"q_down", 1536, 7168},
                                           {"q_up", 3072, 1536},
                                           {"kv_down", 576, 7168},
                                           {"o_proj", 7168, 2048},
                                           {"ffn_gate_up", 4608, 7168},
                                           {"ffn_down", 7168, 2304},
                                           {"shared_gate_up", 512, 7168},
                                           {"shared_down", 7168, 256}});
  CHECK_THROWS_AS(compute::w8a8_linears("llama-3.1-70b", 3), InputError);  // 64 heads do not split 3 ways

  // 70B gate_up at 8192 tokens, both implementations; decode sizes through cuBLASLt only.
  CHECK(gemm_case("gemm.fp8e4m3.8192x57344x8192.wgmma").dtype == DType::fp8_e4m3);
  CHECK(gemm_case("gemm.fp8e4m3.8192x57344x8192.cublaslt").output == DType::bf16);
  const compute::GemmCase& decode = gemm_case("gemm.fp8e4m3.1x8192x28672.cublaslt");
  CHECK(decode.rows_run() == 16);  // cuBLASLt's FP8 GEMM runs m in multiples of 16
  CHECK_THROWS_AS(gemm_case("gemm.fp8e4m3.1x8192x28672.wgmma"), std::invalid_argument);
  // DeepSeek-V3's q_up (3072 outputs of 1536) at TP 8: prefill sizes with both implementations.
  CHECK(gemm_case("gemm.fp8e4m3.2048x3072x1536.wgmma").k == 1536);
  CHECK(gemm_case("gemm.fp8e4m3.128x3072x1536.cublaslt").m == 128);
  CHECK_THROWS_AS(gemm_case("gemm.fp8e4m3.64x3072x1536.wgmma"), std::invalid_argument);
  CHECK(gemm_case("gemm.fp8e4m3.333x272x208.wgmma").quick);
  CHECK(gemm_case("gemm.fp8e4m3.333x272x208.cublaslt").rows_run() == 336);
  CHECK(gemm_case("gemm.fp8e4m3.333x272x208.wgmma").rows_run() == 333);

  // 8192^3: 2 x 8192^3 FLOPs; e4m3 A and B are 8192^2 = 67108864 B each, bf16 C twice that.
  const double operand = 67108864.0;
  const compute::GemmCase& lt = gemm_case("gemm.fp8e4m3.8192x8192x8192.cublaslt");
  CHECK(compute::case_cost(lt).flops == 1099511627776.0);
  CHECK(compute::case_cost(lt).bytes() == 4 * operand);
  // wgmma, 128 x 256 tiles: A read 8192 / 256 = 32 times, B 8192 / 128 = 64 times, C once.
  CHECK(compute::case_cost(gemm_case("gemm.fp8e4m3.8192x8192x8192.wgmma")).bytes() ==
        operand * 32 + operand * 64 + 2 * operand);
  // Decode m = 1 at 70B's down projection: the FLOPs of the one row asked for, 2 x 8192 x 28672;
  // bytes: x 28672 B, W 8192 x 28672 B, y 8192 x 2 B.
  CHECK(compute::case_cost(decode).flops == 469762048.0);
  CHECK(compute::case_cost(decode).bytes() == 28672.0 + 234881024.0 + 16384.0);

  const BenchmarkResult r = compute::make_result(gemm_case("gemm.fp8e4m3.8192x8192x8192.wgmma"));
  CHECK(r.group == "gemm_fp8");
  CHECK(r.implementation == "roofline");
  CHECK(r.reference_id == "gemm.fp8e4m3.8192x8192x8192.cublaslt");
  CHECK(r.ceiling_id.empty());  // no FP8 ceiling is measured
  CHECK(std::get<std::string>(r.parameter("output")) == "bf16");
  CHECK(std::get<std::string>(r.parameter("tile")) == "128x256");
  const BenchmarkResult d = compute::make_result(decode);
  CHECK(d.implementation == "cublaslt");
  CHECK(std::get<std::int64_t>(d.parameter("m")) == 1);
  CHECK(std::get<std::int64_t>(d.parameter("m_run")) == 16);

  // What calibrate learns from an FP8 result: the table an FP8 x FP8 linear looks up
  // (calibration_tables::gemm(fp8_e4m3, fp8_e4m3)), with the FLOPs and bytes of the m asked for.
  const nlohmann::json parameters = {{"kernel", "cublaslt"}, {"dtype", "fp8_e4m3"}, {"output", "bf16"}, {"m", 1},
                                     {"m_run", 16},          {"n", 8192},           {"k", 28672}};
  const RecordedResult recorded{"gemm_fp8", "gemm.fp8e4m3.1x8192x28672.cublaslt", "cublaslt", parameters, std::nullopt,
                                "test"};
  const BasisOrReason basis = compute::suite().basis(recorded);
  REQUIRE(std::holds_alternative<Basis>(basis));
  const Basis& b = std::get<Basis>(basis);
  CHECK(b.best_table == "gemm.fp8_e4m3");
  CHECK(b.table == "gemm.fp8_e4m3.cublaslt");
  CHECK(b.problem == "gemm.fp8e4m3.1x8192x28672");
  CHECK(b.cost.flops == 469762048.0);
  CHECK(b.cost.bytes() == 28672.0 + 234881024.0 + 16384.0);
}

namespace {

const compute::GroupedGemmCase& grouped_case(std::string_view id) {
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    if (compute::case_id(c) == id) return c;
  }
  throw std::invalid_argument("no case " + std::string(id));
}

}  // namespace

TEST_CASE("grouped GEMM cases: ids, splits, and the model's cost of the experts touched") {
  std::set<std::string> ids;
  std::size_t quick = 0;
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    const std::string id = compute::case_id(c);
    INFO(id);
    CHECK(ids.insert(id).second);
    CHECK(id.find('_') == std::string::npos);
    CHECK(id.starts_with("gemm.grouped."));
    quick += c.quick ? 1 : 0;
  }
  // --quick: 3 shapes x bf16/fp8 x uniform/skewed x 2 implementations, and the third shape's 4
  // split-K cases (4 experts x 1 token, n 272, k 2048: 8 or 6 tiles, k split 8 ways in bf16, 4 in
  // fp8), and 10 swapped ones (below). The grid: 4 models x 2 projections x 5 token counts x the same
  // 8, whole and split 8 ways over TP.
  CHECK(quick == 3 * 8 + 4 + 10);
  // Quick 16; 4 models x 2 projections x 2 (whole, TP 8) x 5 token counts x 8 (2 formats x 2 splits x
  // 2 implementations); the decode cases: the 3 models of more than 16 experts (DeepSeek-V3, both
  // Qwen3) x 4 projections x 3 expert counts x 8; and the 54 grid cases whose wgmma plan splits k on
  // 132 SMs (the decode shapes of one token an expert: see the loop below).
  std::size_t split = 0;
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    split += c.impl == compute::GroupedGemmImpl::splitk ? 1 : 0;
  }
  CHECK(split == 4 + 54);
  // The swapped kernel where no expert holds more than 32 tokens (a skewed split of E t tokens gives
  // the first expert E t / H_E):
  // - quick: Qwen3-30B's 128 x 2 uniform only (skewed: 256 / H_128 = 256 / 5.43 = 47); both 16 x 3
  //   splits (48 / H_16 = 14.2) and both 4 x 1: 5 shapes x 2 formats = 10;
  // - the grid, per projection, whole or TP 8, and format: uniform at 1, 4 and 16 tokens for the 4
  //   models (12), skewed at 1 and 4 for Mixtral's 8 experts (8 / H_8 = 2.9, 32 / H_8 = 11.8; 16
  //   tokens give 47), at 1 for both Qwen3 (128 / H_128 = 23.6) and none for DeepSeek-V3's 256
  //   (256 / H_256 = 41.8): 16, x 2 x 2 x 2 = 128;
  // - the decode cases, all of them (64 experts of one token, skewed: 64 / H_64 = 13.5): 3 x 4 x 3 x 4 = 144.
  std::size_t swapped = 0;
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    swapped += c.impl == compute::GroupedGemmImpl::swapab ? 1 : 0;
  }
  CHECK(swapped == 10 + 128 + 144);
  CHECK(compute::grouped_gemm_cases().size() == 3 * 8 + 4 + 2 * 4 * 2 * 5 * 8 + 3 * 4 * 3 * 8 + 54 + 10 + 128 + 144);
  CHECK(compute::case_id(grouped_case("gemm.grouped.fp8e4m3.e4.t1.uniform.4x512x7168.swapab")) ==
        "gemm.grouped.fp8e4m3.e4.t1.uniform.4x512x7168.swapab");
  // DeepSeek-V3's gate_up at TP 8 over 4 experts of one token: 4 x ceil(512 / 256) = 8 tiles of
  // 128 x 256. fp8: k 7168 is 56 blocks of 128 bytes; min(132 / 8, 56 / 4, 16) = 14 splits of 4.
  // bf16: 112 blocks; min(16, 28, 16) = 16 splits of 7.
  const auto fp8_plan = compute::grouped_split_k_plan(
      grouped_case("gemm.grouped.fp8e4m3.e4.t1.uniform.4x512x7168.splitk"), compute::gemm_split_k_listed_sms);
  CHECK(fp8_plan.tiles == 8);
  CHECK(fp8_plan.splits == 14);
  CHECK(fp8_plan.k_blocks_per_split == 4);
  // The same through the swapped kernel (kernel_tiles::grouped_gemv_wgmma_split): N 16 (one token);
  // 4 x ceil(512 / 64) = 32 tiles of 64 rows fit 132 SMs, so 64-row tiles, aimed at every SM:
  // 132 / 32 = 4 splits (at most 4 for 64 rows; 56 / 4 = 14 allowed), 56 / 4 = 14 blocks each of
  // fp8's 56; 128 blocks, one an SM. bf16: 112 blocks of 128 bytes, 28 a split.
  const kernel_tiles::GemvWgmmaSplit fp8_swapped = kernel_tiles::grouped_gemv_wgmma_split(4, 512, 7168, 1, 1, 132);
  CHECK(fp8_swapped.tile_n == 16);
  CHECK(fp8_swapped.rows == 64);
  CHECK(fp8_swapped.tiles == 32);
  CHECK(fp8_swapped.splits == 4);
  CHECK(fp8_swapped.k_blocks_per_split == 14);
  CHECK(fp8_swapped.blocks_per_sm == 1);
  CHECK(kernel_tiles::grouped_gemv_wgmma_split(4, 512, 7168, 2, 1, 132).k_blocks_per_split == 28);
  // 64 experts of one token, down at TP 8 (n 7168, k 256): 64 x 112 tiles of 64 rows are more than
  // the SMs, so 64 x 56 = 3,584 tiles of 128; fp8 k is 2 blocks (fewer than a split's 4): unsplit,
  // and two blocks an SM (3,584 > 132).
  const kernel_tiles::GemvWgmmaSplit down = kernel_tiles::grouped_gemv_wgmma_split(64, 7168, 256, 1, 1, 132);
  CHECK(down.rows == 128);
  CHECK(down.tiles == 3584);
  CHECK(down.splits == 1);
  CHECK(down.blocks_per_sm == 2);
  const auto bf16_plan = compute::grouped_split_k_plan(
      grouped_case("gemm.grouped.bf16.e4.t1.uniform.4x512x7168.splitk"), compute::gemm_split_k_listed_sms);
  CHECK(bf16_plan.splits == 16);
  CHECK(bf16_plan.k_blocks_per_split == 7);
  // Its down projection at TP 8 (k 256: 2 fp8 blocks, fewer than a split's 4) is not split, and a
  // prefill-sized grid (256 experts x 256 tokens: 256 x 2 x 2 = 1,024 tiles) fills the SMs unsplit.
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    if (c.impl != compute::GroupedGemmImpl::splitk) continue;
    INFO(compute::case_id(c));
    CHECK_FALSE((c.n == 7168 && c.k == 256));
    CHECK(c.tokens == 1);
  }
  // DeepSeek-V3's experts split 8 ways (expert FFN 2048): gate_up n = 2 x 2048 / 8 = 512 at k = 7168,
  // down n = 7168 at k = 2048 / 8 = 256.
  const compute::GroupedGemmCase& tp_gate_up =
      grouped_case("gemm.grouped.fp8e4m3.e256.t256.uniform.65536x512x7168.wgmma");
  CHECK(tp_gate_up.model == "deepseek-v3");
  CHECK(tp_gate_up.projection == "gate_up, TP 8");
  CHECK(grouped_case("gemm.grouped.fp8e4m3.e256.t256.uniform.65536x7168x256.cublaslt").projection == "down, TP 8");
  // Qwen3-30B-A3B's down at TP 8: k = 768 / 8 = 96, a multiple of 16 as the FP8 kernels need.
  CHECK(grouped_case("gemm.grouped.fp8e4m3.e128.t4.skewed.512x2048x96.wgmma").k == 96);

  // The shapes from the bundled presets: Mixtral 8x7B gate_up, n = 2 x 14336, k = 4096, 8 experts.
  const compute::GroupedGemmCase& mixtral = grouped_case("gemm.grouped.bf16.e8.t16.uniform.128x28672x4096.cublas");
  CHECK(mixtral.model == "mixtral-8x7b");
  CHECK(mixtral.projection == "gate_up");
  // DeepSeek-V3's down projection: n = hidden 7168, k = moe_intermediate_size 2048, 256 experts.
  CHECK(grouped_case("gemm.grouped.fp8e4m3.e256.t1.skewed.256x7168x2048.cublaslt").model == "deepseek-v3");
  CHECK(grouped_case("gemm.grouped.bf16.e128.t2.skewed.256x2048x768.wgmma").quick);

  // Skewed split of 4 experts x 3 tokens: shares 12 / (H_4 (e + 1)) with H_4 = 25/12 are 5.76, 2.88,
  // 1.92, 1.44; the floors 5, 2, 1, 1 leave 3 tokens for the largest remainders (.92, .88, .76).
  CHECK(compute::expert_tokens(4, 3, compute::ExpertSplit::skewed) == std::vector<std::int64_t>{6, 3, 2, 1});
  CHECK(compute::expert_tokens(4, 3, compute::ExpertSplit::uniform) == std::vector<std::int64_t>{3, 3, 3, 3});
  // 8 experts x 1 token: shares 2.94, 1.47, 0.98, 0.74, 0.59, 0.49, 0.42, 0.37; floors 2, 1 leave 5
  // for remainders .98, .94, .74, .59, .49: the last two experts get none.
  const std::vector<std::int64_t> sparse = compute::expert_tokens(8, 1, compute::ExpertSplit::skewed);
  CHECK(sparse == std::vector<std::int64_t>{3, 1, 1, 1, 1, 1, 0, 0});
  CHECK_THROWS_AS(compute::expert_tokens(0, 1, compute::ExpertSplit::uniform), InputError);

  // The synthetic uniform case, 16 experts x 3 tokens, n 272, k 208, bf16: 2 x 48 x 272 x 208
  // FLOPs; per expert A 3 x 208 x 2 = 1248 B, B 272 x 208 x 2 = 113152 B, C 3 x 272 x 2 = 1632 B.
  const compute::GroupedGemmCase& ragged = grouped_case("gemm.grouped.bf16.e16.t3.uniform.48x272x208.cublas");
  CHECK(compute::case_cost(ragged).flops == 5431296.0);
  CHECK(compute::case_cost(ragged).bytes() == 16 * (1248.0 + 113152.0 + 1632.0));
  // The same shape split {3, 1, 1, 1, 1, 1, 0, 0}: 8 tokens, but only 6 experts' weights are read.
  const Basis sparse_basis = grouped_gemm_basis({sparse, 272, 208, DType::bf16, DType::bf16, DType::bf16});
  CHECK(sparse_basis.cost.flops == 2.0 * 8 * 272 * 208);
  CHECK(sparse_basis.cost.bytes() == 6 * 113152.0 + 8 * 208 * 2 + 8 * 272 * 2);
  CHECK(sparse_basis.best_table == "gemm_grouped.bf16");
  CHECK_THAT(sparse_basis.model, Contains("over 6 of 8 experts"));
  // cuBLASLt computes each expert's rows rounded up to 16: 16 experts x 16 rows for 48 tokens.
  CHECK(compute::rows_run(grouped_case("gemm.grouped.fp8e4m3.e16.t3.uniform.48x272x208.cublaslt")) == 256);
  CHECK(compute::rows_run(grouped_case("gemm.grouped.fp8e4m3.e16.t3.uniform.48x272x208.wgmma")) == 48);

  const BenchmarkResult r = compute::make_result(grouped_case("gemm.grouped.bf16.e16.t3.skewed.48x272x208.wgmma"));
  CHECK(r.group == "gemm_grouped");
  CHECK(r.implementation == "roofline");
  CHECK(r.reference_id == "gemm.grouped.bf16.e16.t3.skewed.48x272x208.cublas");
  CHECK(r.ceiling_id == "peak.wgmma.bf16");
  CHECK(std::get<std::string>(r.parameter("split")) == "skewed");
  const BenchmarkResult lib = compute::make_result(grouped_case("gemm.grouped.bf16.e16.t3.skewed.48x272x208.cublas"));
  CHECK(std::get<std::string>(lib.parameter("call")) == "cublasGemmGroupedBatchedEx");
  CHECK(lib.reference_id.empty());
  const BenchmarkResult fp8 =
      compute::make_result(grouped_case("gemm.grouped.fp8e4m3.e16.t3.uniform.48x272x208.wgmma"));
  CHECK(fp8.reference_id == "gemm.grouped.fp8e4m3.e16.t3.uniform.48x272x208.cublaslt");
  CHECK(fp8.ceiling_id.empty());  // no FP8 ceiling is measured
  // e4m3 operands of 1 byte: per expert A 3 x 208, B 272 x 208, C (bf16) 3 x 272 x 2.
  CHECK(fp8.cost.bytes() == 16 * (624.0 + 56576.0 + 1632.0));

  // What calibrate learns from a grouped result: gemm_grouped.<dtype>.<kernel>, the split rebuilt
  // from (experts, tokens per expert, split).
  const nlohmann::json parameters = {{"kernel", "wgmma"},      {"dtype", "bf16"},   {"output", "bf16"}, {"experts", 8},
                                     {"tokens_per_expert", 1}, {"split", "skewed"}, {"n", 272},         {"k", 208}};
  const RecordedResult recorded{
      "gemm_grouped", "gemm.grouped.bf16.e8.t1.skewed.8x272x208.wgmma", "wgmma", parameters, std::nullopt, "test"};
  const BasisOrReason basis = compute::suite().basis(recorded);
  REQUIRE(std::holds_alternative<Basis>(basis));
  const Basis& b = std::get<Basis>(basis);
  CHECK(b.table == "gemm_grouped.bf16.wgmma");
  CHECK(b.problem == "gemm.grouped.bf16.e8.t1.skewed.8x272x208");
  CHECK(b.cost.bytes() == sparse_basis.cost.bytes());
  const nlohmann::json bad = {{"kernel", "wgmma"},      {"dtype", "bf16"}, {"output", "bf16"}, {"experts", 8},
                              {"tokens_per_expert", 1}, {"split", "zipf"}, {"n", 272},         {"k", 208}};
  CHECK_THROWS_AS(compute::suite().basis({"gemm_grouped", "x.wgmma", "wgmma", bad, std::nullopt, "test"}), InputError);
}

TEST_CASE("attention cases count FLOPs and HBM bytes with the model's functions") {
  const compute::AttentionCase& standard = attention_case("attn.bf16.causal.d128.b4h32kv32.n4096.standard");
  const compute::AttentionCase& flash = attention_case("attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma");
  // Causal N = 4096: 4096 x 4097 / 2 = 8390656 pairs, 4 d = 512 FLOPs each, B x H = 128 heads.
  CHECK(compute::case_cost(standard).flops == 512.0 * 128 * 8390656);
  CHECK(compute::case_cost(flash).flops == compute::case_cost(standard).flops);
  // Standard: Q, O (134217728 B each), K and V once per query head (134217728 B each), and S and P
  // (4 x 32 x 4096^2 x 2 = 4294967296 B) written, read, written, read.
  CHECK(compute::case_cost(standard).bytes() == 4 * 134217728.0 + 4 * 4294967296.0);
  // Flash: Q, K, V read once, O written once.
  CHECK(compute::case_cost(flash).bytes() == 4 * 134217728.0);
  // Non-causal N = 512, B 32, H 32, d 128 with 128-row query tiles: each of the 4 query tiles of a
  // head loads all 512 keys of K and V: 2 x 1024 heads x 4 x 512 x 128 x 2 B.
  const BenchmarkResult w8 = compute::make_result(attention_case("attn.bf16.full.d128.b32h32kv32.n512.flashw8r16"));
  CHECK(std::get<double>(w8.parameter("kv_load_bytes")) == 2.0 * 1024 * 4 * 512 * 128 * 2);
  CHECK(std::get<std::string>(w8.parameter("tile")) == "128x64");
  CHECK(w8.reference_id == "attn.bf16.full.d128.b32h32kv32.n512.standard");
  const BenchmarkResult s = compute::make_result(standard);
  CHECK(std::get<double>(s.parameter("scores_bytes")) == 4 * 4294967296.0);
  CHECK(std::holds_alternative<std::monostate>(s.parameter("kv_load_bytes")));
  // GQA: K and V are read once per KV head by flash (8 of 32 heads: a quarter of MHA's).
  const compute::AttentionCase& gqa = attention_case("attn.bf16.causal.d128.b4h32kv8.n4096.flashwgmma");
  CHECK(compute::case_cost(gqa).bytes() == 2 * 134217728.0 + 2 * 134217728.0 / 4);
  // The tiles: 32-key tiles for two m16 tiles per warp at d = 128.
  CHECK(compute::tiling_of(attention_case("attn.bf16.causal.d128.b4h32kv32.n4096.flashw4r32"))->block_n == 32);
  CHECK(compute::tiling_of(attention_case("attn.bf16.causal.d64.b4h32kv32.n4096.flashw4r32"))->block_n == 64);
  // The Hopper kernel: q_stages x Q (128 x d) + 2 stages x (K + V) of block_n x d, 2 bytes an
  // element, + (2 q_stages + 8) mbarriers of 8 bytes + 1024 of slack; two Q stages where that stays
  // within 232448 bytes (227 KB). d 128: 2 x 32768 + 131072 + 96 + 1024 = 197728; d 64 (128-key
  // tiles): 2 x 16384 + 65536 + 1120 = 99424; d 256 (80-key tiles, 40960 bytes each of K and V):
  // two Q stages would be 2 x 65536 + 163840 + 1120 = 296032, too many, so one: 65536 + 163840 + 80
  // + 1024 = 230480, within 232448.
  const compute::AttentionCase& d128 = attention_case("attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma");
  CHECK(compute::tiling_of(d128)->smem_bytes == 197728);
  CHECK(compute::tiling_of(d128)->q_stages == 2);
  CHECK(compute::tiling_of(attention_case("attn.bf16.causal.d64.b4h32kv32.n4096.flashwgmma"))->smem_bytes == 99424);
  const compute::AttentionCase& d256 = attention_case("attn.bf16.causal.d256.b4h32kv32.n4096.flashwgmma");
  CHECK(compute::tiling_of(d256)->smem_bytes == 230480);
  CHECK(compute::tiling_of(d256)->q_stages == 1);
  CHECK(compute::tiling_of(d256)->block_n == 80);
  // FP8: 1 byte an element and 128-key tiles at both head dims, two Q stages. d 128: 2 x 16384 + 2 x
  // 2 x 16384 + 1120 = 99424 (d 64's bytes at 16 bits); d 256: 2 x 32768 + 2 x 2 x 32768 + 1120 = 197728.
  const compute::AttentionCase& fp8 = attention_case("attn.fp8_e4m3.causal.d128.b4h32kv32.n4096.flashwgmma");
  CHECK(compute::tiling_of(fp8)->smem_bytes == 99424);
  const compute::AttentionCase& fp8_d256 = attention_case("attn.fp8_e4m3.causal.d256.b4h32kv32.n4096.flashwgmma");
  CHECK(compute::tiling_of(fp8_d256)->smem_bytes == 197728);
  CHECK(compute::tiling_of(fp8_d256)->block_n == 128);
  // Its reference is the bf16 kernel on the same problem; no FP8 ceiling is measured.
  const BenchmarkResult fp8_result = compute::make_result(fp8);
  CHECK(fp8_result.reference_id == "attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma");
  CHECK(fp8_result.ceiling_id.empty());
}

TEST_CASE("FLOP-rate results relate to the peak probes and to cuBLAS") {
  const BenchRun run = sample::sample_run();
  // wgmma GEMM: 1.0995e12 FLOPs in 1.7 ms = 646.77 TFLOP/s; the probe 9e12 / 10 ms = 900 TFLOP/s.
  const BenchmarkResult& wgmma = result_named(run, "gemm.bf16.8192x8192x8192.wgmma");
  CHECK(*wgmma.flop_rate() == Approx(1099511627776.0 / 1.7e-3));
  CHECK(*wgmma.ceiling_fraction == Approx(1099511627776.0 / 1.7e-3 / 9e14));
  CHECK(*wgmma.reference_speedup == Approx(1.4 / 1.7));
  // naive: judged against the FMA probe (6e11 / 10 ms = 60 TFLOP/s).
  CHECK(*result_named(run, "gemm.bf16.8192x8192x8192.naive").ceiling_fraction == Approx(1099511627776.0 / 1.2 / 6e13));
  // flash vs standard: 6.2 / 1.35.
  CHECK(*result_named(run, "attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma").reference_speedup == Approx(6.2 / 1.35));
}

TEST_CASE("targets by FLOP rate, relative and absolute") {
  const BenchRun run = sample::sample_run();
  const std::vector<TargetResult> t = evaluate_targets(compute::suite().targets, run.results);
  REQUIRE(t.size() == 4);
  // GEMM: 1.4 / 1.7 = 82.4% of cuBLAS >= 70%.
  CHECK(t[0].metric == Metric::flop_rate);
  CHECK(t[0].candidate == std::optional<std::string>("gemm.bf16.8192x8192x8192.wgmma"));
  CHECK(*t[0].ratio == Approx(1.4 / 1.7));
  CHECK(t[0].met == std::optional<bool>(true));
  // Flash: 549890031616 FLOPs / 1.35 ms = 407.3 TFLOP/s against a fixed 300 (w8r16 failed, so
  // flash_wgmma is the only candidate).
  CHECK(t[1].reference == "fixed");
  CHECK(*t[1].reference_rate == 300e12);
  CHECK(t[1].candidate == std::optional<std::string>("attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma"));
  CHECK(*t[1].ratio == Approx(549890031616.0 / 1.35e-3 / 300e12));
  CHECK(t[1].required == 1.0);
  CHECK(t[1].met == std::optional<bool>(true));
  CHECK(*t[2].ratio == Approx(6.2 / 1.35));
  // FP8: the sample run has no FP8 GEMM, so the target is not evaluated.
  CHECK_FALSE(t[3].met.has_value());
  // The targets table shows TFLOP/s for these and TB/s for bandwidth targets, never both.
  const Report report = make_report(run, nlohmann::json::object());
  const Table& targets = table_named(report, "targets");
  const std::vector<Cell>& gemm_row = targets.rows[7];
  CHECK(std::get<std::string>(gemm_row[column_index(targets, "metric")]) == "flop_rate");
  CHECK(std::get<double>(gemm_row[column_index(targets, "candidate_tflops")]) ==
        Approx(1099511627776.0 / 1.7e-3 * 1e-12));
  CHECK(std::holds_alternative<std::monostate>(gemm_row[column_index(targets, "candidate_tbps")]));
  CHECK(std::holds_alternative<std::monostate>(targets.rows[0][column_index(targets, "candidate_tflops")]));
}

TEST_CASE("the compute tables: % of cuBLAS, % of peak, and attention by N") {
  const Report report = make_report(sample::sample_run(), nlohmann::json::object());
  const Table& gemm = table_named(report, "gemm");
  REQUIRE(gemm.rows.size() == 3);
  // Rows in run order: naive, wgmma, cuBLAS.
  CHECK(std::get<double>(gemm.rows[1][column_index(gemm, "pct_of_cublas")]) == Approx(100 * 1.4 / 1.7));
  CHECK(std::get<double>(gemm.rows[1][column_index(gemm, "pct_of_peak")]) == Approx(100 * 646.7715457505883 / 900));
  CHECK(std::get<double>(gemm.rows[1][column_index(gemm, "tflops")]) == Approx(646.7715457505883));
  CHECK(std::holds_alternative<std::monostate>(gemm.rows[2][column_index(gemm, "pct_of_cublas")]));

  const Table& by_n = table_named(report, "attention_by_n");
  REQUIRE(by_n.rows.size() == 2);  // N = 4096 and N = 32768
  const auto& row = by_n.rows[0];
  CHECK(std::get<std::int64_t>(row[column_index(by_n, "seq")]) == 4096);
  // Standard: 549890031616 / 6.2 ms = 88.69 TFLOP/s; flash_wgmma 407.33; w8r16 failed: empty.
  CHECK(std::get<double>(row[column_index(by_n, "standard_tflops")]) == Approx(88.69194058322581));
  CHECK(std::get<double>(row[column_index(by_n, "flash_wgmma_tflops")]) == Approx(407.32594934518517));
  CHECK(std::holds_alternative<std::monostate>(row[column_index(by_n, "flash_w8r16_tflops")]));
  CHECK(std::get<std::string>(row[column_index(by_n, "best_flash")]) == "flash_wgmma");
  CHECK(std::get<double>(row[column_index(by_n, "speedup")]) == Approx(6.2 / 1.35));
  // The source texts' comparison: 17716740096 B standard vs 536870912 B flash = 33.0x.
  CHECK(std::get<double>(row[column_index(by_n, "standard_hbm_bytes")]) == 4 * 134217728.0 + 4 * 4294967296.0);
  CHECK(std::get<double>(row[column_index(by_n, "flash_hbm_bytes")]) == 4 * 134217728.0);
  CHECK(std::get<double>(row[column_index(by_n, "traffic_ratio")]) == Approx(33.0));
  CHECK(std::get<std::string>(by_n.rows[1][column_index(by_n, "standard_status")]) ==
        "not_supported: does not fit: S and P need 256.0 GiB");
}

// ---- the layer suite ---------------------------------------------------------------------------

TEST_CASE("layer cases: decode batches, long contexts, prefill lengths, both linear implementations") {
  CHECK(layer::cases.size() == 2 * 7 + 2 * 2 + 2 * 4 + 2 * (4 * 2 + 5));  // bf16, then FP8 (test_layer_suite.cpp)
  std::set<std::string> ids;
  for (const layer::Case& c : layer::cases) CHECK(ids.insert(layer::case_id(c)).second);
  CHECK(ids.contains("layer.decode.b1.ctx4096.roofline"));
  CHECK(ids.contains("layer.decode.b64.ctx4096.cublas"));
  CHECK(ids.contains("layer.decode.b16.ctx32768.roofline"));
  CHECK(ids.contains("layer.prefill.n4096.roofline"));
  CHECK(layer::stages(sample::sample_layer).size() == 10);
  const layer::Case prefill{layer::Phase::prefill, 1, 4096, 4096, layer::Linear::cublas, false, layer::bf16_layer};
  CHECK(layer::stages(prefill).size() == 11);
  CHECK(layer::stage_id(prefill, "attn_merge") == "layer.prefill.n4096.cublas.attnmerge");
  // The ids runs have recorded since the first: kv_append is "kvwrite", ffn_gate_up "gateup".
  CHECK(layer::stage_id(sample::sample_layer, "kv_append") == "layer.decode.b1.ctx4096.roofline.kvwrite");
  CHECK(layer::stage_id(sample::sample_layer, "ffn_gate_up") == "layer.decode.b1.ctx4096.roofline.gateup");
  CHECK(layer::stage_id(sample::sample_layer, "attn_norm") == "layer.decode.b1.ctx4096.roofline.attnnorm");
}

TEST_CASE("layer stages count FLOPs and bytes with the model's functions") {
  // LLaMA-3-70B decode, batch 1, context 4096 (hand-derived; bf16, 2 bytes an element).
  const std::vector<layer::StagePlan> s = layer::stages(sample::sample_layer);
  std::vector<std::string> names;
  for (const layer::StagePlan& p : s) names.emplace_back(p.name);
  CHECK(names == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "kv_append", "attention", "o_proj",
                                          "ffn_norm", "ffn_gate_up", "ffn_act", "ffn_down"});
  // Residual add + RMSNorm of one row of 8192: 4 FLOPs an element for the norm and 1 for the add,
  // + 3 a row; reads the row, the residual and gamma, writes the row and the new residual.
  CHECK(s[0].model == "norm_cost");
  CHECK(s[0].cost.flops == 5.0 * 8192 + 3);
  CHECK(s[0].cost.bytes() == 5 * 16384.0);
  // QKV: (64 + 2 x 8) x 128 = 10240 outputs of 8192 inputs; W once (167772160 B), x and y once.
  CHECK(s[1].model == "gemv_cost");
  CHECK(s[1].cost.flops == 2.0 * 10240 * 8192);
  CHECK(s[1].cost.bytes() == 167772160.0 + 16384 + 20480);
  // Rope on the 64 + 8 query and key heads of 128: 9216 elements read and written, 3 FLOPs each.
  CHECK(s[2].cost.flops == 3.0 * 9216);
  CHECK(s[2].cost.bytes() == 2 * 9216 * 2.0);
  // KV append: 2 x 8 x 128 elements read and written.
  CHECK(s[3].model == "kv_append_cost");
  CHECK(s[3].cost.bytes() == 2 * 2048 * 2.0);
  // Attention over 4096 positions: 4 x 128 x 64 heads x 4096 FLOPs; q (16384 B) and o, and K and V
  // of the 8 KV heads read once (2 x 8 x 4096 x 128 x 2 = 16777216 B).
  CHECK(s[4].model == "flash_attention_cost");
  CHECK(s[4].cost.flops == 4.0 * 128 * 64 * 4096);
  CHECK(s[4].cost.bytes() == 16384 + 16777216.0 + 16384);
  // O projection 8192 x 8192; the second residual add + RMSNorm as the first.
  CHECK(s[5].cost.bytes() == 134217728.0 + 16384 + 16384);
  CHECK(s[6].cost.bytes() == 5 * 16384.0);
  // gate and up: 2 x 28672 = 57344 outputs; SwiGLU 28672 elements, 2 in 1 out, 5 FLOPs each;
  // down: 8192 outputs of 28672 inputs.
  CHECK(s[7].cost.bytes() == 57344.0 * 8192 * 2 + 16384 + 114688);
  CHECK(s[8].cost.flops == 5.0 * 28672);
  CHECK(s[8].cost.bytes() == 3 * 57344.0);
  CHECK(s[9].cost.bytes() == 8192.0 * 28672 * 2 + 57344 + 16384);
  double flops = 0;
  double bytes = 0;
  for (const layer::StagePlan& p : s) {
    flops += p.cost.flops;
    bytes += p.cost.bytes();
  }
  CHECK(layer::layer_cost(sample::sample_layer).flops == flops);
  CHECK(layer::layer_cost(sample::sample_layer).bytes() == bytes);
  // The weights dominate: 2 x (10240 + 8192 + 57344 + 28672) x 8192 = 1711276032 B of 1.73 GB.
  CHECK(bytes > 1711276032.0);
  CHECK(bytes < 1711276032.0 * 1.02);

  // Prefill of 4096 tokens: the QKV projection as a GEMM (A 4096 x 8192, W 10240 x 8192, C 4096 x
  // 10240) and causal attention over 4096 x 4097 / 2 pairs.
  const layer::Case prefill{layer::Phase::prefill, 1, 4096, 4096, layer::Linear::roofline, false, layer::bf16_layer};
  const std::vector<layer::StagePlan> p = layer::stages(prefill);
  CHECK(p[1].model == "gemm_cost");
  CHECK(p[1].cost.flops == 2.0 * 4096 * 10240 * 8192);
  CHECK(p[1].cost.bytes() == 67108864.0 + 167772160.0 + 83886080.0);
  CHECK(p[2].name == "rope");
  CHECK(p[3].name == "kv_append");
  CHECK(p[4].cost.flops == 4.0 * 128 * 64 * 8390656);
  // The flash kernel writes head-major outputs: attn_merge moves them back, 4096 x 8192 read and written.
  CHECK(p[5].name == "attn_merge");
  CHECK(p[5].cost.bytes() == 2.0 * 4096 * 8192 * 2);
}

TEST_CASE("a layer stage's implementation table names the calibration table of the kernel that ran it") {
  const layer::Case prefill{layer::Phase::prefill, 1, 1024, 1024, layer::Linear::roofline, false, layer::bf16_layer};
  const std::vector<layer::StagePlan> p = layer::stages(prefill);
  // Prefill stages: attn_norm, qkv_proj (GEMM), rope, kv_append, attention (causal flash, d 128, bf16), ...
  CHECK(layer::implementation_table(prefill, p[1], "wgmma") == "gemm.bf16.wgmma");
  CHECK(layer::implementation_table(prefill, p[4], "flashwgmma") == "attention.flashwgmma.bf16.d128.causal");
  CHECK(layer::implementation_table(prefill, p[0], "").empty());
  const std::vector<layer::StagePlan> d = layer::stages(sample::sample_layer);
  CHECK(layer::implementation_table(sample::sample_layer, d[1], "cublas") == "gemv.bf16.cublas");
}

TEST_CASE("a layer's results: the whole step and one row per stage") {
  const std::vector<layer::StageKernel> kernels{{"add + rmsnorm (roofline)", ""}, {"gemv stag (roofline)", "stag"}};
  const std::vector<BenchmarkResult> r = layer::make_results(sample::sample_layer, kernels);
  REQUIRE(r.size() == 11);
  CHECK(r[0].group == "layer");
  CHECK(r[0].id == "layer.decode.b1.ctx4096.roofline");
  CHECK(r[0].cost.bytes() == layer::layer_cost(sample::sample_layer).bytes());
  CHECK(std::get<std::int64_t>(r[0].parameter("tokens")) == 1);
  CHECK(r[2].group == "layer_stages");
  CHECK(r[2].id == "layer.decode.b1.ctx4096.roofline.qkv");
  CHECK(std::get<std::string>(r[2].parameter("layer")) == "layer.decode.b1.ctx4096.roofline");
  CHECK(std::get<std::int64_t>(r[2].parameter("index")) == 1);
  CHECK(std::get<std::string>(r[2].parameter("kernel")) == "gemv stag (roofline)");
  // The stage's GEMV is gemv_basis of 10240 x 8192 bf16, best table gemv.bf16; the kernel's own is .stag.
  CHECK(std::get<std::string>(r[2].parameter("table")) == "gemv.bf16.stag");
  CHECK(std::holds_alternative<std::monostate>(r[1].parameter("table")));   // the norm: no implementation table
  CHECK(std::holds_alternative<std::monostate>(r[3].parameter("kernel")));  // not named: empty
  CHECK(std::holds_alternative<std::monostate>(r[3].parameter("table")));
  CHECK(std::get<double>(r[2].parameter("intensity")) == Approx(r[2].cost.flops / r[2].cost.bytes()));

  const Report report = make_report(sample::sample_run(), nlohmann::json::object());
  const Table& stages = table_named(report, "layer_stages");
  REQUIRE(stages.rows.size() == 10);
  // Stage i took (i + 1) x 10 us of 550 us.
  CHECK(std::get<double>(stages.rows[0][column_index(stages, "share_pct")]) == Approx(100.0 * 10 / 550));
  CHECK(std::get<double>(stages.rows[9][column_index(stages, "median_us")]) == Approx(100.0));
  const Table& layer_table = table_named(report, "layer");
  CHECK(std::get<double>(layer_table.rows[0][column_index(layer_table, "stages_sum_us")]) == Approx(550.0));
  CHECK(std::get<double>(layer_table.rows[0][column_index(layer_table, "median_us")]) == Approx(450.0));
}

TEST_CASE("decode attention splits the context to cover the SMs, then to fill their resident blocks") {
  // Batch 1, 8 KV heads, 4096 keys (64 tiles) on 132 SMs, 2 blocks per SM: cover = ceil(132 / 8) =
  // 17, fill = min(264 / 8 = 33, 64 / 4 = 16) = 16; 17 wanted, so ceil(64 / 17) = 4 tiles a split
  // and 16 splits (128 blocks).
  const kernel_tiles::DecodeSplit one = kernel_tiles::decode_attention_split(1, 8, 4096, 132, 2);
  CHECK(one.tiles_per_split == 4);
  CHECK(one.splits == 16);
  // Batch 64: 512 blocks already (cover 1, fill 264 / 512 = 0), one split of all 64 tiles.
  const kernel_tiles::DecodeSplit many = kernel_tiles::decode_attention_split(64, 8, 4096, 132, 2);
  CHECK(many.splits == 1);
  CHECK(many.tiles_per_split == 64);
  // A context of 100 keys: 2 tiles, never an empty split.
  const kernel_tiles::DecodeSplit tiny = kernel_tiles::decode_attention_split(1, 8, 100, 132, 2);
  CHECK(tiny.splits == 2);
  CHECK(tiny.tiles_per_split == 1);
  // Batch 16 at 32768 keys (512 tiles): cover ceil(132 / 128) = 2, fill 264 / 128 = 2: 2 splits of 256.
  const kernel_tiles::DecodeSplit long_context = kernel_tiles::decode_attention_split(16, 8, 32768, 132, 2);
  CHECK(long_context.splits == 2);
  CHECK(long_context.tiles_per_split == 256);
  // Batch 1 at 32768 keys: fill min(33, 128) = 33 beats cover 17; ceil(512 / 33) = 16 tiles a
  // split, 32 splits, 256 blocks in the 264 slots.
  const kernel_tiles::DecodeSplit long_one = kernel_tiles::decode_attention_split(1, 8, 32768, 132, 2);
  CHECK(long_one.splits == 32);
  CHECK(long_one.tiles_per_split == 16);
  // Batch 4, e4m3 cache (3 blocks per SM): fill min(396 / 32 = 12, 128) = 12; ceil(512 / 12) = 43
  // tiles, 12 splits, 384 blocks.
  const kernel_tiles::DecodeSplit fp8 = kernel_tiles::decode_attention_split(4, 8, 32768, 132, 3);
  CHECK(fp8.splits == 12);
  CHECK(fp8.tiles_per_split == 43);
  // One block per SM is the cover rule alone: batch 1 at 32768 keys, 17 splits of ceil(512 / 17) = 31.
  CHECK(kernel_tiles::decode_attention_split(1, 8, 32768, 132, 1).splits == 17);
}

TEST_CASE(
    "latent attention splits the context into one wave of blocks over the SMs, a tile at least a split (four at 64 "
    "heads)") {
  // Batch 1, 16 heads (one group), 2048 keys = 32 tiles on 132 SMs: 132 / 1 = 132 > 32 tiles, so 32
  // splits of one tile (32 blocks).
  const kernel_tiles::DecodeSplit one = kernel_tiles::latent_attention_split(1, 1, 2048, 132);
  CHECK(one.splits == 32);
  CHECK(one.tiles_per_split == 1);
  // Batch 4, 128 heads (2 groups of 64), 4096 keys = 64 tiles: floor(132 / 8) = 16 splits wanted;
  // ceil(64 / 16) = 4 tiles a split, 16 splits (128 blocks, one wave).
  CHECK(kernel_tiles::latent_attention_m_tiles(128, 4, 4096, 132) == 4);  // 4 x 2 x 64 = 512 items >= 132
  const kernel_tiles::DecodeSplit heads = kernel_tiles::latent_attention_split(4, 2, 4096, 132);
  CHECK(heads.tiles_per_split == 4);
  CHECK(heads.splits == 16);
  // Batch 32 x 8 groups = 256 blocks already: one split. 32 pairs: 4 splits (128 blocks), not the 5
  // (160 blocks, a second wave of 28) that covering the SMs would take.
  CHECK(kernel_tiles::latent_attention_split(32, 8, 16384, 132).splits == 1);
  CHECK(kernel_tiles::latent_attention_split(32, 1, 4096, 132).splits == 4);
  // 1000 keys: 16 tiles (the last partial), 132 / 4 = 33 wanted, never an empty split.
  const kernel_tiles::DecodeSplit ragged = kernel_tiles::latent_attention_split(2, 2, 1000, 132);
  CHECK(ragged.splits == 16);
  CHECK(ragged.tiles_per_split == 1);
  // At most 16 heads a block up to 16 heads, 32 up to 32, else 64; fewer where batch x groups x
  // 64-key tiles would not give each of the 132 SMs one: 128 heads at batch 1 over 1024 keys (16
  // tiles) give 2 x 16 = 32 items in 64-head groups, 4 x 16 = 64 in 32-head ones: 16-head blocks
  // (8 x 16 = 128 blocks); over 4096 keys 2 x 64 = 128 < 132 but 4 x 64 = 256: 32-head blocks; over
  // 16384 keys 2 x 256: 64-head blocks.
  CHECK(kernel_tiles::latent_attention_m_tiles(16, 1, 1024, 132) == 1);
  CHECK(kernel_tiles::latent_attention_m_tiles(24, 16, 1000, 132) == 2);
  // The suite's second ragged case, for the Hopper kernel's 64-head blocks: 96 heads at batch 8 over
  // 1000 keys (16 tiles) give 8 x 2 x 16 = 256 >= 132 items in 64-head groups (the second group 32
  // heads); floor(132 / 16) = 8 splits wanted, but 64-head blocks read 4 tiles a split at least:
  // 16 / 4 = 4 splits of 4 tiles. In 16-head blocks the same context takes 8 splits of 2.
  CHECK(kernel_tiles::latent_attention_m_tiles(96, 8, 1000, 132) == 4);
  CHECK(kernel_tiles::latent_attention_split(8, 2, 1000, 132, 64).splits == 4);
  CHECK(kernel_tiles::latent_attention_split(8, 2, 1000, 132, 64).tiles_per_split == 4);
  CHECK(kernel_tiles::latent_attention_split(8, 2, 1000, 132).splits == 8);
  // 128 heads at batch 1 over 16384 keys (256 tiles), 64-head blocks: 66 splits wanted, 4 tiles each
  // at least: ceil(256 / 66) = 4, 64 splits. Over 4096 keys (64 tiles): 16 splits of 4, not 64 of 1.
  CHECK(kernel_tiles::latent_attention_split(1, 2, 16384, 132, 64).splits == 64);
  CHECK(kernel_tiles::latent_attention_split(1, 2, 4096, 132, 64).splits == 16);
  // The Hopper kernel's blocks where they cover half the SMs: 2 x 1 x 2 groups x 64 tiles = 256 >= 132
  // over 4096 keys; over 1024 keys 2 x 2 x 16 = 64 < 132 (the mma.sync kernel's 16-head blocks).
  CHECK(kernel_tiles::latent_attention_wgmma_fills(128, 1, 4096, 132));
  CHECK_FALSE(kernel_tiles::latent_attention_wgmma_fills(128, 1, 1024, 132));
  CHECK(kernel_tiles::latent_attention_m_tiles(48, 16, 1024, 132) == 4);
  CHECK(kernel_tiles::latent_attention_m_tiles(48, 8, 1024, 132) == 2);  // 1 x 8 x 16 = 128 < 132
  CHECK(kernel_tiles::latent_attention_m_tiles(128, 1, 1024, 132) == 1);
  CHECK(kernel_tiles::latent_attention_m_tiles(128, 1, 4096, 132) == 2);
  CHECK(kernel_tiles::latent_attention_m_tiles(128, 1, 16384, 132) == 4);
  // Two stages of 64 rows of 576 bf16 values, Q (16 rows), P (16 x 64 bf16), 8 key groups x 16
  // floats; at 64 heads Q and P have 64 rows, 2 key groups: 229,888 B, within the 227 KiB an SM gives.
  CHECK(kernel_tiles::latent_attention_smem_bytes(1) == (16 + 2 * 64) * 1152 + 16 * 128 + 8 * 16 * 4);
  CHECK(kernel_tiles::latent_attention_smem_bytes(4) == (64 + 2 * 64) * 1152 + 64 * 128 + 2 * 64 * 4);
  CHECK(kernel_tiles::latent_attention_smem_bytes(4) <= 227 * 1024);
}

TEST_CASE("latent attention cases: DeepSeek-V3's latent, the model's cost, and the table llm looks up") {
  const auto found = std::find_if(memory::cases.begin(), memory::cases.end(), [](const memory::Case& c) {
    return c.kernel == memory::Kernel::latent_attention && c.heads == 16 && c.batch == 8 && c.context == 4096;
  });
  REQUIRE(found != memory::cases.end());
  const memory::Sizes sizes = memory::plan_sizes(60 << 20, 132, false);
  CHECK(memory::case_id(*found) == "attention.latent_decode.bf16.h16.b8.ctx4096.flashdecode");
  CHECK(memory::group_of(*found) == "latent_attention");
  // 8 x 16 query rows against 4096 cached rows each: FLOPs 8 x 16 x 4096 x 2 x (576 + 512) =
  // 1,140,850,688; bytes: q 8 x 16 x 576 x 2 = 147,456, the cache 8 x 4096 x 576 x 2 = 37,748,736,
  // out 8 x 16 x 512 x 2 = 131,072.
  const OpCost cost = memory::case_cost(*found, sizes);
  CHECK(cost.flops == Approx(1140850688.0));
  CHECK(cost.bytes_read == Approx(147456.0 + 37748736.0));
  CHECK(cost.bytes_written == Approx(131072.0));
  const BenchmarkResult r = memory::make_result(*found, sizes);
  const Basis b = latent_decode_basis(memory::latent_attention_shape(*found), r.cost);
  CHECK(b.best_table == "attention.latent_decode.bf16.d576");
  CHECK(b.series == 16.0);
  CHECK(b.roof_bytes == Approx(r.cost.bytes()));
}

TEST_CASE("the wgmma GEMV: 64-row tiles where they fit one per SM, split k towards the SMs") {
  // 132 SMs. 8192 x 8192 at batch 64: 8192 / 64 = 128 tiles of 64 rows <= 132, so 64-row tiles;
  // their target is all 132 SMs, rounded down: 132 / 128 = 1 split of all 128 k blocks (k = 8192 / 64).
  const kernel_tiles::GemvWgmmaSplit o_proj = kernel_tiles::gemv_wgmma_split(8192, 8192, 64, 132);
  CHECK(o_proj.tile_n == 64);
  CHECK(o_proj.rows == 64);
  CHECK(o_proj.tiles == 128);
  CHECK(o_proj.splits == 1);
  CHECK(o_proj.k_blocks_per_split == 128);
  CHECK(o_proj.blocks_per_sm == 1);
  // 10240 rows: 160 tiles of 64 > 132, so 80 tiles of 128, aimed at half the SMs: (66 + 40) / 80 = 1.
  const kernel_tiles::GemvWgmmaSplit qkv1 = kernel_tiles::gemv_wgmma_split(10240, 8192, 64, 132);
  CHECK(qkv1.rows == 128);
  CHECK(qkv1.tiles == 80);
  CHECK(qkv1.splits == 1);
  // 4096 x 4096 at batch 16: 64 tiles of 64, 132 / 64 = 2 splits of 32 k blocks, 128 blocks.
  const kernel_tiles::GemvWgmmaSplit square = kernel_tiles::gemv_wgmma_split(4096, 4096, 16, 132);
  CHECK(square.tile_n == 16);
  CHECK(square.tiles == 64);
  CHECK(square.splits == 2);
  CHECK(square.k_blocks_per_split == 32);
  // 1280 x 8192 at batch 16 (LLaMA-3-70B's qkv at TP 8): 20 tiles of 64, 132 / 20 = 6, held to 4
  // splits of 128 / 4 = 32 k blocks: 80 blocks.
  const kernel_tiles::GemvWgmmaSplit qkv8 = kernel_tiles::gemv_wgmma_split(1280, 8192, 16, 132);
  CHECK(qkv8.rows == 64);
  CHECK(qkv8.tiles == 20);
  CHECK(qkv8.splits == 4);
  CHECK(qkv8.k_blocks_per_split == 32);
  CHECK(qkv8.blocks_per_sm == 1);
  // 3072 x 4096 at batch 64: 48 tiles, 132 / 48 = 2 splits (rounded down: 3 would be 144 blocks,
  // more than the SMs), 96 blocks, one per SM. Two vector groups would give the same 96 blocks over the
  // whole of a long k (4096 > 2048): one group.
  const kernel_tiles::GemvWgmmaSplit qkv8b = kernel_tiles::gemv_wgmma_split(3072, 4096, 64, 132);
  CHECK(qkv8b.tile_n == 64);
  CHECK(qkv8b.vector_groups == 1);
  CHECK(qkv8b.splits == 2);
  CHECK(qkv8b.blocks_per_sm == 1);
  // A short k (1024 <= 2048) takes two groups: 4096 x 1024 at batch 32 is 64 tiles x 2 groups of 16
  // vectors, 128 blocks over all 16 k blocks, where one group would split k in 2.
  const kernel_tiles::GemvWgmmaSplit small = kernel_tiles::gemv_wgmma_split(4096, 1024, 32, 132);
  CHECK(small.tile_n == 16);
  CHECK(small.vector_groups == 2);
  CHECK(small.splits == 1);
  CHECK(small.k_blocks_per_split == 16);
  // A batch of 33 is two groups of 32 (the second holds one vector).
  const kernel_tiles::GemvWgmmaSplit odd = kernel_tiles::gemv_wgmma_split(3072, 2048, 33, 132);
  CHECK(odd.vector_groups == 2);
  CHECK(odd.tile_n == 32);
  // A long k takes two groups where the splits alone leave more than half the SMs idle: 768 x 4096 at
  // batch 64 is 12 tiles x 4 splits (the most) = 48 < 66 blocks; in groups 24 x 4 = 96. 1280 x 8192 is
  // 20 x 4 = 80 >= 66: one group.
  const kernel_tiles::GemvWgmmaSplit qkv8_8b = kernel_tiles::gemv_wgmma_split(768, 4096, 64, 132);
  CHECK(qkv8_8b.vector_groups == 2);
  CHECK(qkv8_8b.splits == 4);
  CHECK(kernel_tiles::gemv_wgmma_split(1280, 8192, 64, 132).vector_groups == 1);
  // k = 512 is 8 blocks: at most 8 / 4 = 2 splits, whatever the target (768 rows, 12 tiles in two
  // groups: 24 row blocks, want 132 / 24 = 5).
  const kernel_tiles::GemvWgmmaSplit short_k = kernel_tiles::gemv_wgmma_split(768, 512, 64, 132);
  CHECK(short_k.vector_groups == 2);
  CHECK(short_k.splits == 2);
  // Batch 16 (N 16 has no half) and grids that twice the tiles would overfill keep one group:
  // 8192 rows (128 tiles; 256 > 132) at batch 64.
  CHECK(kernel_tiles::gemv_wgmma_split(4096, 1024, 16, 132).vector_groups == 1);
  CHECK(o_proj.vector_groups == 1);
  // The grouped GEMM of experts never groups vectors (an expert's tokens are its batch): DeepSeek's
  // gate_up at TP 8 over 4 experts of 64 tokens keeps N 64.
  const kernel_tiles::GemvWgmmaSplit experts = kernel_tiles::grouped_gemv_wgmma_split(4, 512, 7168, 2, 64, 132);
  CHECK(experts.tile_n == 64);
  CHECK(experts.vector_groups == 1);
  // 28672 x 8192 at batch 32: 448 tiles of 64 do not fit; 224 of 128 outnumber the SMs: no split,
  // two blocks per SM (one wave).
  const kernel_tiles::GemvWgmmaSplit gate_up = kernel_tiles::gemv_wgmma_split(28672, 8192, 32, 132);
  CHECK(gate_up.tile_n == 32);
  CHECK(gate_up.rows == 128);
  CHECK(gate_up.splits == 1);
  CHECK(gate_up.blocks_per_sm == 2);
  // A skinny GEMM of m = 128 rows over n = 8192 (the batch 128, N = 128): 128-row tiles only; the
  // target is all 132 SMs, (132 + 32) / 64 = 2 splits of 64 k blocks, one block per SM (N > 64 has
  // no two-block form).
  const kernel_tiles::GemvWgmmaSplit skinny = kernel_tiles::gemv_wgmma_split(8192, 8192, 128, 132);
  CHECK(skinny.tile_n == 128);
  CHECK(skinny.rows == 128);
  CHECK(skinny.splits == 2);
  CHECK(skinny.k_blocks_per_split == 64);
  CHECK(skinny.blocks_per_sm == 1);
  // An unknown SM count is taken as the H200's 132.
  CHECK(kernel_tiles::gemv_wgmma_split(1280, 8192, 16, 0).splits == 4);
  // What a result's detail says of the plan: 4096 x 1024 at batch 64 is 64 tiles x 2 groups of N 32
  // over all 16 k blocks; 8192^2 at batch 64 one group of N 64 over 128 k blocks.
  CHECK(memory::gemv_wgmma_plan_note(4096, 1024, 64, 132) ==
        "; 64 tiles of 64 rows x 2 vector groups of N 32, k in 1 split of 16 blocks, 1 block per SM on 132 SMs");
  CHECK(memory::gemv_wgmma_plan_note(8192, 8192, 64, 132) ==
        "; 128 tiles of 64 rows x 1 vector group of N 64, k in 1 split of 128 blocks, 1 block per SM on 132 SMs");
}

TEST_CASE("the wgmma GEMM in pairs: two tile rows or more, at least a wave of pair tiles") {
  // 132 SMs, 128 x 256 tiles; a wave of pairs is 66. 4096^3: 32 x 16 tiles, 16 x 16 = 256 pair tiles.
  CHECK(kernel_tiles::gemm_wgmma_pairs(4096, 4096, 132) == 256);
  // 8192^3: 64 x 32 tiles, 32 x 32 = 1024.
  CHECK(kernel_tiles::gemm_wgmma_pairs(8192, 8192, 132) == 1024);
  // 2048^3: 16 x 8 tiles, 8 x 8 = 64 < 66: alone. 512^3: 2 x 2 = 4: alone.
  CHECK(kernel_tiles::gemm_wgmma_pairs(2048, 2048, 132) == 0);
  CHECK(kernel_tiles::gemm_wgmma_pairs(512, 512, 132) == 0);
  // 256 x 8192 x 8192: 2 x 32 tiles, 1 x 32 = 32 pair tiles: alone. 512 x 10240: 4 x 40 tiles, 2 x 40
  // = 80: paired. 128 rows are one tile row: alone whatever n.
  CHECK(kernel_tiles::gemm_wgmma_pairs(256, 8192, 132) == 0);
  CHECK(kernel_tiles::gemm_wgmma_pairs(512, 10240, 132) == 80);
  CHECK(kernel_tiles::gemm_wgmma_pairs(128, 57344, 132) == 0);
  // An odd tile-row count rounds up: 2100 rows are 17 tile rows, 9 pair rows; 2000 columns are 8
  // tiles: 72 pair tiles.
  CHECK(kernel_tiles::gemm_wgmma_pairs(2100, 2000, 132) == 72);
  // An unknown SM count is taken as the H200's 132.
  CHECK(kernel_tiles::gemm_wgmma_pairs(2048, 2048, 0) == 0);
  // What a result's detail says of it: 2048^3 is 16 x 8 = 128 tiles, a block each.
  CHECK(compute::gemm_wgmma_plan_note(4096, 4096, 132) ==
        "; 256 pair tiles of 2 x 128 x 256 (clusters of two blocks multicasting B) on 132 SMs");
  CHECK(compute::gemm_wgmma_plan_note(2048, 2048, 132) ==
        "; 128 tiles of 128 x 256, a block each (persistent) on 132 SMs");
}

TEST_CASE("the split-K wgmma GEMM: one wave of blocks, splits of at least 8 k blocks, at most 8") {
  // Per tile width. 128 x 8192 x 8192 on 132 SMs, 128 x 256 tiles: 32 tiles; 132 / 32 = 4 splits of
  // the 128 k blocks (8192 / 64), 32 each: 128 blocks.
  const kernel_tiles::GemmSplitK wide = kernel_tiles::gemm_wgmma_split_k(128, 8192, 8192, 132, 256);
  CHECK(wide.tiles == 32);
  CHECK(wide.splits == 4);
  CHECK(wide.k_blocks_per_split == 32);
  // 128 x 128 tiles: 64 tiles, 132 / 64 = 2 splits of 64: 128 blocks too.
  const kernel_tiles::GemmSplitK narrow = kernel_tiles::gemm_wgmma_split_k(128, 8192, 8192, 132, 128);
  CHECK(narrow.tiles == 64);
  CHECK(narrow.splits == 2);
  CHECK(narrow.k_blocks_per_split == 64);
  // qkv at m = 128, wide: 10240 / 256 = 40 tiles; 132 / 40 = 3 splits: ceil(128 / 3) = 43 k blocks,
  // so ceil(128 / 43) = 3 splits (43, 43, 42).
  const kernel_tiles::GemmSplitK qkv = kernel_tiles::gemm_wgmma_split_k(128, 10240, 8192, 132, 256);
  CHECK(qkv.splits == 3);
  CHECK(qkv.k_blocks_per_split == 43);
  // A short k caps it: 256 x 512 x 1024 wide is 2 x 2 = 4 tiles (132 / 4 = 33) but 16 k blocks, at
  // most 16 / 8 = 2 splits of 8.
  const kernel_tiles::GemmSplitK short_k = kernel_tiles::gemm_wgmma_split_k(256, 512, 1024, 132, 256);
  CHECK(short_k.splits == 2);
  CHECK(short_k.k_blocks_per_split == 8);
  // Long k and few tiles: 128 x 256 x 65536 narrow is 2 tiles, 1024 k blocks: capped at 8 splits of 128.
  const kernel_tiles::GemmSplitK capped = kernel_tiles::gemm_wgmma_split_k(128, 256, 65536, 132, 128);
  CHECK(capped.splits == 8);
  CHECK(capped.k_blocks_per_split == 128);
}

TEST_CASE("the skinny wgmma GEMM plan: the tile width and pairing whose busiest SM finishes first") {
  // A k block's cost, in the time an SM reads one 128-byte row from L2: max(1.27 x tile_n for the
  // MMAs, A's rows + B's rows, the shared one halved in a pair).
  using kernel_tiles::GemmPairing;
  CHECK(kernel_tiles::gemm_k_block_cost(256, GemmPairing::none, 4096) == Approx(384));        // 128 + 256 > 325.12
  CHECK(kernel_tiles::gemm_k_block_cost(256, GemmPairing::share_b, 4096) == Approx(325.12));  // 128 + 128 < 325.12
  CHECK(kernel_tiles::gemm_k_block_cost(160, GemmPairing::share_b, 256) == Approx(208));      // 128 + 80 > 203.2
  CHECK(kernel_tiles::gemm_k_block_cost(64, GemmPairing::share_a, 128) == Approx(128));       // 64 + 64 > 81.28
  // m = 64: TMA reads A's 64 rows only: 32 + 64 = 96.
  CHECK(kernel_tiles::gemm_k_block_cost(64, GemmPairing::share_a, 64) == Approx(96));

  // HBM's floor, the same rows: 2 bytes x (m k + n k + m n) / 128 x 2.06 / 132 SMs. 128 x 8192 x
  // 8192: 138,412,032 bytes, 16875.52.
  CHECK(kernel_tiles::gemm_hbm_cost(128, 8192, 8192, 132) == Approx(16875.52));

  // 128 x 8192 x 8192 (128 k blocks) on 132 SMs. Wide tiles, 4 splits of 32 (128 blocks, one wave):
  // 32 x 384 + partials 4 x 256 x (1 + 4) = 12288 + 5120 = 17408. Narrow, 2 splits of 64: 64 x 256 +
  // 4 x 128 x 3 = 17920. 128 x 64 tiles in 64 horizontal pairs (128 blocks in 66 pair slots): 128 x
  // 128 = 16384, under HBM's 16875.52: 3% under the wide plan, the plan (cuBLAS's for this shape).
  const kernel_tiles::GemmSplitK o_proj_128 = kernel_tiles::gemm_wgmma_skinny_plan(128, 8192, 8192, 132);
  CHECK(o_proj_128.tile_n == 64);
  CHECK(o_proj_128.pairing == GemmPairing::share_a);
  CHECK(o_proj_128.splits == 1);
  CHECK(o_proj_128.tiles == 128);
  CHECK(kernel_tiles::gemm_plan_l2_cost(o_proj_128, 128, 8192, 8192, 132) == Approx(16384));
  CHECK(kernel_tiles::gemm_plan_cost(o_proj_128, 128, 8192, 8192, 132) == Approx(16875.52));
  CHECK(kernel_tiles::gemm_plan_cost(
            kernel_tiles::gemm_wgmma_plan_of({256, GemmPairing::none, true}, 128, 8192, 8192, 132), 128, 8192, 8192,
            132) == Approx(17408));
  // qkv at m = 128: 10240 / 80 = 128 tiles of 128 x 80, 64 pairs: 128 x max(101.6, 64 + 80) = 18432;
  // wide 40 tiles x 3 splits: 43 x 384 + 4 x 256 x 4 = 16512 + 4096 = 20608. Both under HBM's 2 x
  // 86,245,376 bytes / 128 x 2.06 / 132 = 21030.4: a tie, and the pairs have no split.
  const kernel_tiles::GemmSplitK qkv_128 = kernel_tiles::gemm_wgmma_skinny_plan(128, 10240, 8192, 132);
  CHECK(qkv_128.tile_n == 80);
  CHECK(qkv_128.pairing == GemmPairing::share_a);
  CHECK(kernel_tiles::gemm_plan_l2_cost(qkv_128, 128, 10240, 8192, 132) == Approx(18432));
  CHECK(kernel_tiles::gemm_plan_cost(qkv_128, 128, 10240, 8192, 132) == Approx(21030.4));
  // qkv at m = 256: wide tiles are 2 x 40 = 80 (52 SMs idle): 128 x 384 = 49152. 128 x 160 tiles, 2 x
  // 64 = 128 in 64 vertical pairs: 128 x max(203.2, 128 + 80) = 26624.
  const kernel_tiles::GemmSplitK qkv_256 = kernel_tiles::gemm_wgmma_skinny_plan(256, 10240, 8192, 132);
  CHECK(qkv_256.tile_n == 160);
  CHECK(qkv_256.pairing == GemmPairing::share_b);
  CHECK(kernel_tiles::gemm_plan_blocks(qkv_256, 256, 10240) == 128);
  CHECK(kernel_tiles::gemm_plan_cost(qkv_256, 256, 10240, 8192, 132) == Approx(26624));
  // qkv at m = 512: wide 4 x 40 = 160 tiles, under two waves (264): the planner's. 128 x 160: 4 x 64 =
  // 256 tiles, 128 pairs, two waves of 66 pair slots: 2 x 26624 = 53248; wide pairs: 80 pairs, two
  // waves of 128 x 325.12: 83230.72.
  const kernel_tiles::GemmSplitK qkv_512 = kernel_tiles::gemm_wgmma_skinny_plan(512, 10240, 8192, 132);
  CHECK(qkv_512.tile_n == 160);
  CHECK(kernel_tiles::gemm_plan_cost(qkv_512, 512, 10240, 8192, 132) == Approx(53248));
  // o_proj at m = 256: 128 x 128 tiles in 64 vertical pairs, 128 x max(162.56, 128 + 64) = 24576,
  // against 128 narrow tiles alone (128 x 256 = 32768) and 128 x 64 in pairs sharing A (2 x 128 = 256
  // tiles, 128 pairs, two waves of 128 x 128 = 32768).
  const kernel_tiles::GemmSplitK o_proj_256 = kernel_tiles::gemm_wgmma_skinny_plan(256, 8192, 8192, 132);
  CHECK(o_proj_256.tile_n == 128);
  CHECK(o_proj_256.pairing == GemmPairing::share_b);
  // down at m = 128 (k = 28672, 448 k blocks) is HBM's: 2 x 239,599,616 bytes / 128 x 2.06 / 132 =
  // 58425.3. Under it or within 1%: wide, 4 splits of 112 (112 x 384 + 5120 = 48128), narrow, 2
  // splits of 224 (224 x 256 + 1536 = 58880), 128 x 64 pairs unsplit (448 x 128 = 57344); of the
  // unsplit ones (80-wide pairs: 448 x 144 = 64512, over), the pairs of 64.
  const kernel_tiles::GemmSplitK down_128 = kernel_tiles::gemm_wgmma_skinny_plan(128, 8192, 28672, 132);
  CHECK(kernel_tiles::gemm_hbm_cost(128, 8192, 28672, 132) == Approx(58425.3));
  CHECK(down_128.tile_n == 64);
  CHECK(down_128.splits == 1);
  // From two waves of wide tiles on, the plain kernel's plan: 256 x 57344 x 8192 is 448 wide tiles,
  // 224 pairs (a wave of pairs or more: paired); 4096^3 512 tiles, 256 pairs.
  const kernel_tiles::GemmSplitK gate_up = kernel_tiles::gemm_wgmma_skinny_plan(256, 57344, 8192, 132);
  CHECK(gate_up.tile_n == 256);
  CHECK(gate_up.splits == 1);
  CHECK(gate_up.pairing == GemmPairing::share_b);
  CHECK(kernel_tiles::gemm_wgmma_skinny_plan(4096, 4096, 4096, 132).pairing == GemmPairing::share_b);
  // Long k and few tiles: 128 x 256 x 65536 (1024 k blocks). Narrow, 2 tiles x 8 splits of 128: 128
  // x 256 + 4 x 128 x 9 = 37376; wide, 1 tile x 8: 128 x 384 + 4 x 256 x 9 = 58368; 128 x 64 in 2
  // pairs, k whole: 1024 x 128 = 131072.
  const kernel_tiles::GemmSplitK capped = kernel_tiles::gemm_wgmma_skinny_plan(128, 256, 65536, 132);
  CHECK(capped.tile_n == 128);
  CHECK(capped.splits == 8);
  CHECK(capped.pairing == GemmPairing::none);
  // An odd tile column count pairs up to a spare tile: 333 x 264 at 128 x 64 is 3 x 5 tiles, 3 x 3
  // pairs, 18 blocks.
  const kernel_tiles::GemmSplitK ragged = kernel_tiles::gemm_wgmma_skinny_plan(333, 264, 200, 132);
  CHECK(ragged.pairing == GemmPairing::share_a);
  CHECK(kernel_tiles::gemm_plan_blocks(ragged, 333, 264) == 18);
  // Wide tiles pair only from a wave of pairs, as in the plain kernel: 512 x 8192 x 8192 is 4 x 32 =
  // 128 wide tiles, 64 pairs (under 66): alone, one wave of 128 x 384 = 49152, tied with 128 x 128
  // tiles in 128 vertical pairs (two waves of 128 x 192): the earlier shape, the plain kernel's plan.
  CHECK(kernel_tiles::gemm_wgmma_plan_of({256, GemmPairing::share_b, false}, 512, 8192, 8192, 132).tiles == 0);
  const kernel_tiles::GemmSplitK o_proj_512 = kernel_tiles::gemm_wgmma_skinny_plan(512, 8192, 8192, 132);
  CHECK(o_proj_512.tile_n == 256);
  CHECK(o_proj_512.pairing == GemmPairing::none);
  CHECK(o_proj_512.splits == 1);
  // Nor pairs sharing A where A has 64 rows or fewer: 64 x 8192 x 8192 keeps the narrow split plan
  // (64 x 192 + 1536 = 13824 under HBM's 16620, the fewer splits of the tie).
  const kernel_tiles::GemmSplitK o_proj_64 = kernel_tiles::gemm_wgmma_skinny_plan(64, 8192, 8192, 132);
  CHECK(o_proj_64.tile_n == 128);
  CHECK(o_proj_64.splits == 2);
  CHECK(o_proj_64.pairing == GemmPairing::none);
  // The suite lists the case where the plan differs from the plain wgmma GEMM on 132 SMs.
  CHECK(compute::gemm_split_k_listed(128, 8192, 8192));
  CHECK(compute::gemm_split_k_listed(256, 8192, 8192));
  CHECK_FALSE(compute::gemm_split_k_listed(512, 8192, 8192));
  CHECK_FALSE(compute::gemm_split_k_listed(256, 57344, 8192));
  CHECK_FALSE(compute::gemm_split_k_listed(4096, 4096, 4096));
  CHECK(compute::tiling_of(compute::GemmCase{.impl = compute::GemmImpl::splitk, .m = 256, .n = 10240, .k = 8192})
            ->tile_n == 160);
  // What a result's detail says of the plan.
  CHECK(compute::gemm_skinny_plan_note(o_proj_128, 128, 8192, 132) ==
        "; 64 pair tiles of 128 x 2 x 64 (clusters of two blocks multicasting A) on 132 SMs");
  CHECK(compute::gemm_skinny_plan_note(qkv_256, 256, 10240, 132) ==
        "; 64 pair tiles of 2 x 128 x 160 (clusters of two blocks multicasting B) on 132 SMs");
  CHECK(compute::gemm_skinny_plan_note(capped, 128, 256, 132) ==
        "; 2 tiles of 128 x 128, k split 8 ways (128 blocks of 64 each) on 132 SMs");
}

TEST_CASE("the memcpy ceiling is reported as measured, and flagged when a copy kernel beats it") {
  BenchRun run = sample::sample_run();
  const Report report = make_report(run, nlohmann::json::object());
  for (const std::string& note : report.notes) CHECK_THAT(note, !Contains("WARNING"));
  // The first H200 run: memcpy timed in a graph at 2.77 TB/s against a 4.13 TB/s copy kernel.
  for (BenchmarkResult& r : run.results) {
    if (r.id == "memcpy.d2d") r.timing->seconds.median = 0.000775;
  }
  relate(run.results);
  const Report flagged = make_report(run, nlohmann::json::object());
  bool warned = false;
  for (const std::string& note : flagged.notes) warned = warned || note.find("WARNING") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("the registry holds every suite once, in run order, each able to rebuild the basis of its results") {
  std::vector<std::string_view> names;
  std::set<std::string_view> groups;
  std::size_t group_count = 0;
  for (const SuiteInfo& suite : suites()) {
    names.push_back(suite.name);
    CHECK(suite.basis != nullptr);
    CHECK(suite.cases != nullptr);
    for (const GroupLayout& layout : suite.groups) {
      groups.insert(layout.name);
      ++group_count;
    }
  }
  CHECK(names == std::vector<std::string_view>{"memory", "compute", "layer", "collectives"});
  // A measured result finds its suite by its group: no group may belong to two suites.
  CHECK(groups.size() == group_count);
  // Only the layer suite is validated against the tables rather than learnt by calibrate.
  CHECK(find_suite("layer").not_learnt.starts_with("the decoder layer"));
  CHECK(find_suite("memory").not_learnt.empty());
}

TEST_CASE("the bench report schema states exactly the columns of every result table, and requires them") {
  // A column is declared once, in its suite's GroupLayout; the schema (docs/schema/bench.v1) must
  // follow. The value types are checked where sample reports are validated against the schema
  // (tests/cli/check_report_schemas.py); here, that no column is missing or extra, and which are
  // required.
  std::ifstream in(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "docs/schema/bench.v1.schema.json");
  const nlohmann::json schema = nlohmann::json::parse(in);
  const nlohmann::json& groups = schema["properties"]["results"]["properties"];
  for (const SuiteInfo& suite : suites()) {
    for (const GroupLayout& layout : suite.groups) {
      INFO(suite.name << " group " << layout.name);
      REQUIRE(groups.contains(std::string(layout.name)));
      const std::string ref = groups[std::string(layout.name)]["items"]["$ref"].get<std::string>();
      const nlohmann::json& row = schema["definitions"][ref.substr(ref.rfind('/') + 1)];
      std::set<std::string> declared;
      for (const auto& column : layout.columns) declared.emplace(column.column.key);
      for (const auto& column : columns::measurement) declared.emplace(column.column.key);  // on every table
      std::set<std::string> stated;
      for (const auto& [key, value] : row["properties"].items()) stated.insert(key);
      CHECK(stated == declared);
      // A column added after runs were committed stays optional, so that those runs still validate:
      // the layer stages' "table" (the implementation table each stage ran) came after run 2, the
      // measurement columns (clocks, noise, cold L2) after the runs of 2026-12-01.
      std::set<std::string> expected_required = declared;
      if (layout.name == "layer_stages") expected_required.erase("table");
      for (const auto& column : columns::measurement) expected_required.erase(std::string(column.column.key));
      std::set<std::string> required(row["required"].begin(), row["required"].end());
      CHECK(required == expected_required);
    }
  }
}
