// The host side of the benchmarks: statistics, the sector model, the case table and its model
// costs, sizes, targets, hardware matching, test data, and result -> report conversion.
#include <set>

#include "bench_sample.hpp"
#include "catch.hpp"
#include "roofline/access.hpp"
#include "roofline/bench.hpp"
#include "roofline/bench_runner.hpp"
#include "roofline/error.hpp"
#include "roofline/memory_suite.hpp"
#include "roofline/stats.hpp"
#include "roofline/testdata.hpp"

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
  // 1 memcpy + 4 ops x (3 widths + persistent) + streaming copy and triad + 3 dots + 15 strides
  // + gather + scatter + 2 dtypes x 4 shapes x (7 mma + 3 simt + 7 cuBLAS) + L2 + shared memory.
  CHECK(memory::cases.size() == 1 + 16 + 2 + 3 + 15 + 2 + 2 * 4 * 17 + 2);
  CHECK(quick == 35);
  CHECK(ids.contains("memcpy.d2d"));
  CHECK(ids.contains("stream.triad.16B.tile"));
  CHECK(ids.contains("gemv.bf16.16384x16384.b1.mma"));
  CHECK(ids.contains("gemv.fp16.8192x28672.b64.cublas"));
  CHECK(ids.contains("access.strided.s1024"));
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
  CHECK(gemv.bytes() == gemv_cost({8192, 8192, 1, DType::bf16, DType::bf16}).bytes());
  // Gather of 2^23 words: index + value read (2 x 4 B), value written (4 B) each.
  CHECK(cost("access.gather").bytes() == 100663296.0);
  // L2: 64 passes x 528 slices x 28672 B = 968884224 B read.
  CHECK(cost("hierarchy.l2.read").bytes() == 968884224.0);
  // Shared memory: 528 blocks x 2048 rounds x 256 threads x 16 B.
  CHECK(cost("hierarchy.smem.read").bytes() == 4429185024.0);
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
  REQUIRE(t.size() == 5);
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
}

// ---- reports -----------------------------------------------------------------------------------

TEST_CASE("a run becomes a report: device, run, one table per group, targets") {
  const Report report = make_report(sample::sample_run(), {{"suite", "all"}});
  CHECK(report.kind == "bench");
  std::vector<std::string> names;
  for (const Table& t : report.tables) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"device", "run", "stream", "access", "gemv", "hierarchy", "targets"});
  const Table& stream = table_named(report, "stream");
  REQUIRE(stream.rows.size() == 3);
  CHECK(std::get<std::string>(stream.rows[2][column_index(stream, "status")]) == "failed");
  CHECK(std::holds_alternative<std::monostate>(stream.rows[2][column_index(stream, "median_us")]));
  CHECK(std::get<double>(stream.rows[0][column_index(stream, "median_us")]) == Approx(500.0));
  CHECK(std::get<double>(stream.rows[1][column_index(stream, "pct_of_memcpy")]) == Approx(100 * 0.5 / 0.505));
  const Table& gemv = table_named(report, "gemv");
  CHECK(std::get<double>(gemv.rows[0][column_index(gemv, "speedup_vs_cublas")]) == Approx(44.0 / 37.0));
  CHECK(std::get<std::string>(gemv.rows[2][column_index(gemv, "status")]) == "not_supported");
  const Table& run = table_named(report, "run");
  CHECK(std::get<std::int64_t>(run.rows[0][column_index(run, "passed")]) == 7);
  CHECK(std::get<std::int64_t>(run.rows[0][column_index(run, "failed")]) == 1);
  CHECK(report.hardware.size() == 1);
  // 4.294967 TB/s of the file's 4.8: 89.5%.
  CHECK(std::find(report.notes.begin(), report.notes.end(),
                  "cudaMemcpy D2D moved 4.295 TB/s: 89.5% of the 4.8 TB/s in h200-sxm") != report.notes.end());
  CHECK(failed_ids(sample::sample_run()) == std::vector<std::string>{"stream.triad.16B.tile"});
  // The JSON carries every table under results.
  const nlohmann::json json = to_json(report);
  CHECK(json.at("schema") == "roofline.bench.v1");
  CHECK(json.at("results").at("targets").size() == 5);
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
  CHECK(list.tables.front().rows.size() == 35);
  CHECK(selected_by_filters("gemv.bf16.8192x8192.b1.mma", {"8192x8192.b1", "nothing"}));
  CHECK_FALSE(selected_by_filters("gemv.bf16.8192x8192.b1.mma", {"fp16"}));
  CHECK(selected_by_filters("anything", {}));
}

TEST_CASE("timing policy") {
  CHECK(timing_policy(false, std::nullopt).samples == 30);
  CHECK(timing_policy(true, std::nullopt).samples == 5);
  CHECK(timing_policy(true, 3).samples == 3);
  CHECK_THROWS_AS(timing_policy(false, 0), InputError);
}

// ---- hardware matching -------------------------------------------------------------------------

TEST_CASE("device names match hardware files") {
  const HardwareRegistry registry = HardwareRegistry::bundled_only();
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
    CHECK_THROWS_AS(run_benchmarks(options, HardwareRegistry::bundled_only()), InputError);
  } else {
    CHECK_THROWS_AS(run_benchmarks(options, HardwareRegistry::bundled_only()), NoDeviceError);
  }
}

// The tensor-core GEMV (kernels/gemv.cu) feeds mma.m16n8k16 with 16-byte loads: thread
// (g, t) = (lane / 4, lane % 4) loads 8 consecutive k of W rows g and g + 8 and of vector g,
// and step s of a 32-k chunk uses elements 4s .. 4s + 3 as its fragment. This emulates the
// instruction from the PTX ISA's fragment layouts and checks that the pairing computes
// W . x exactly (the device test checks the kernel itself).
TEST_CASE("the GEMV mma operand permutation pairs W and x correctly") {
  int w[16][32];
  int x[8][32];
  for (int r = 0; r < 16; ++r) {
    for (int k = 0; k < 32; ++k) w[r][k] = testdata::level(1, static_cast<std::uint64_t>(r * 32 + k));
  }
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 32; ++k) x[n][k] = testdata::level(2, static_cast<std::uint64_t>(n * 32 + k));
  }
  long long d[16][8] = {};
  for (int step = 0; step < 2; ++step) {
    int a[16][16] = {};  // the logical A and B of this mma, assembled from every lane's registers
    int b[16][8] = {};
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4;
      const int t = lane % 4;
      const int* p = &w[g][8 * t];      // row g, 8 consecutive k
      const int* q = &w[g + 8][8 * t];  // row g + 8
      const int* v = &x[g][8 * t];      // vector g
      // Registers as the kernel builds them: {p.x, q.x, p.y, q.y} then {p.z, q.z, p.w, q.w}.
      const int a_elems[8] = {p[4 * step],     p[4 * step + 1], q[4 * step],     q[4 * step + 1],
                              p[4 * step + 2], p[4 * step + 3], q[4 * step + 2], q[4 * step + 3]};
      const int b_elems[4] = {v[4 * step], v[4 * step + 1], v[4 * step + 2], v[4 * step + 3]};
      // PTX: a_i at row g (+8 for i in 2, 3, 6, 7), column 2t + (i & 1) (+8 for i >= 4);
      // b_i at row 2t + (i & 1) (+8 for i >= 2), column g.
      for (int i = 0; i < 8; ++i) {
        const int row = g + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0);
        const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
        a[row][col] = a_elems[i];
      }
      for (int i = 0; i < 4; ++i) b[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = b_elems[i];
    }
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) {
        for (int c = 0; c < 16; ++c) d[r][n] += static_cast<long long>(a[r][c]) * b[c][n];
      }
    }
  }
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 8; ++n) {
      long long want = 0;
      for (int k = 0; k < 32; ++k) want += static_cast<long long>(w[r][k]) * x[n][k];
      INFO("row " << r << " vector " << n);
      CHECK(d[r][n] == want);
    }
  }
}
