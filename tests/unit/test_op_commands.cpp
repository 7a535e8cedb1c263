// The op subcommands as functions: reports, sweeps, what-ifs and the streamed CSV.
#include <fmt/format.h>

#include <random>
#include <sstream>

#include "catch.hpp"
#include "commands/op.hpp"
#include "commands/op_engine.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"

using namespace roofline;
using namespace roofline::cli;
using Catch::Matchers::Contains;

namespace {

// The JSON report (table output leaves out the detail columns).
template <class Options>
Report run_json(Options options, const HardwareRegistry& r) {
  options.op.common.format = "json";
  return run_op(options, r);
}

nlohmann::json rows_of(const Report& report, const std::string& table) {
  return to_json(report).at("results").at(table);
}

double number(const nlohmann::json& row, const char* key) {
  return row.at(key).get<double>();
}

GemmOptions gemm(const std::string& gpu = "h100") {
  GemmOptions o;
  o.op.gpus = gpu;
  o.m = o.n = o.k = "4096";
  return o;
}

AttentionOptions attention() {
  AttentionOptions o;
  o.op.gpus = "h100";
  o.heads = "1";
  o.head_dim = "128";
  o.seq = "4096";
  return o;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("op gemm 4096^3 bf16 on H100: AI 1365.3, compute-bound, 138.9 us") {
  const auto rows = rows_of(run_json(gemm(), fixture::gpus()), "gemm");
  REQUIRE(rows.size() == 1);
  const auto& r = rows[0];
  CHECK(number(r, "flops") == 137438953472.0);
  CHECK(number(r, "read_bytes") == 67108864.0);
  CHECK(number(r, "written_bytes") == 33554432.0);
  CHECK(number(r, "intensity_flop_per_byte") == Approx(1365.333));
  CHECK(number(r, "ridge_flop_per_byte") == Approx(295.343).epsilon(1e-5));  // 989.4 / 3.35
  CHECK(r.at("bound") == "compute");
  CHECK(r.at("binding") == "bf16 tensor peak");
  CHECK(number(r, "attainable_tflops") == Approx(989.4));
  CHECK(number(r, "time_us") == Approx(138.911).epsilon(1e-5));  // 137.44e9 / 989.4e12
  CHECK(number(r, "memory_time_us") == Approx(30.049).epsilon(1e-4));
  CHECK_FALSE(r.contains("expected_time_us"));
}

TEST_CASE("op gemm: mixed types run the math in the activation type") {
  GemmOptions o = gemm();
  o.m = "16";
  o.weights = "int4";  // W4A16: bf16 math, int4 bytes
  auto r = rows_of(run_json(o, fixture::gpus()), "gemm")[0];
  CHECK(r.at("peak_class") == "bf16");
  CHECK(number(r, "read_bytes") == 131072.0 + 8388608.0);
  o.act = "fp8";  // W4A8: the fp8 rate, 1978.9 TFLOP/s on H100
  r = rows_of(run_json(o, fixture::gpus()), "gemm")[0];
  CHECK(r.at("peak_class") == "fp8");
  CHECK(number(r, "peak_tflops") == Approx(1978.9));
  // int4 math on H100, which states no int4 rate: the time columns are empty, with a note.
  o.op.dtype = "int4";
  o.act.reset();
  o.weights.reset();
  const Report report = run_json(o, fixture::gpus());
  CHECK(rows_of(report, "gemm")[0].at("time_us").is_null());
  CHECK_THAT(fmt::format("{}", fmt::join(report.notes, "|")), Contains("h100-sxm states no peak"));
}

TEST_CASE("op gemm sweeps: one row per point of the cartesian product, GPUs outermost") {
  GemmOptions o = gemm("h100,h200");
  o.m = "1024,2048,4096";
  o.k = "1024:4096:+1024";
  const auto rows = rows_of(run_json(o, fixture::gpus()), "gemm");
  REQUIRE(rows.size() == 2 * 3 * 4);
  CHECK(rows[0].at("gpu") == "h100-sxm");
  CHECK(rows[0].at("m") == 1024);
  CHECK(rows[0].at("k") == 1024);
  CHECK(rows[1].at("k") == 2048);
  CHECK(rows[4].at("m") == 2048);
  CHECK(rows[12].at("gpu") == "h200-sxm");
}

TEST_CASE("what-ifs (--set) reach every op kind") {
  const auto memory_time = [](auto options, const char* table) {
    options.op.what_if = {"hbm_bandwidth_tbps=8"};
    const double what_if = number(rows_of(run_json(options, fixture::gpus()), table)[0], "memory_time_us");
    options.op.what_if.clear();
    const double bundled = number(rows_of(run_json(options, fixture::gpus()), table)[0], "memory_time_us");
    // H100's 3.35 TB/s -> 8 TB/s: memory time x 3.35 / 8.
    CHECK(what_if == Approx(bundled * 3.35 / 8));
  };
  memory_time(gemm(), "gemm");
  GemvOptions gv;
  gv.op.gpus = "h100";
  gv.m = gv.k = "8192";
  memory_time(gv, "gemv");
  ElementwiseOptions e;
  e.op.gpus = "h100";
  e.elements = "1000000";
  memory_time(e, "elementwise");
  NormOptions n;
  n.op.gpus = "h100";
  n.rows = n.hidden = "4096";
  memory_time(n, "norm");
  SoftmaxOptions s;
  s.op.gpus = "h100";
  s.rows = s.cols = "4096";
  memory_time(s, "softmax");
  memory_time(attention(), "attention");
  // Compute what-if: bf16 at 2000 TFLOP/s halves (about) the GEMM's compute-bound time.
  GemmOptions g = gemm();
  g.op.what_if = {"bf16_tflops=2000"};
  CHECK(number(rows_of(run_json(g, fixture::gpus()), "gemm")[0], "time_us") == Approx(137438953472.0 / 2000e12 * 1e6));
  // fuse: its own column names.
  FuseOptions f;
  f.op.gpus = "h100";
  f.chain = "gelu";
  f.rows = f.hidden = "4096";
  const double before = number(rows_of(run_json(f, fixture::gpus()), "fuse")[0], "fused_time_us");
  f.op.what_if = {"hbm_bandwidth_tbps=6.7"};
  CHECK(number(rows_of(run_json(f, fixture::gpus()), "fuse")[0], "fused_time_us") == Approx(before / 2));
}

TEST_CASE("an efficiency (--efficiency) adds the expected time") {
  GemvOptions o;
  o.op.gpus = "h100";
  o.m = o.k = "8192";
  o.op.efficiency = "compute=0.8,memory=0.9";
  const auto r = rows_of(run_json(o, fixture::gpus()), "gemv")[0];
  // 40.075 us / 0.9 = 44.528 us; 134,217,728 FLOPs / 44.528 us = 3.014 TFLOP/s.
  CHECK(number(r, "expected_time_us") == Approx(44.528).epsilon(1e-4));
  CHECK(number(r, "expected_tflops") == Approx(3.0142).epsilon(1e-4));
  o.op.efficiency = "compute=1.2";
  CHECK_THROWS_AS(run_op(o, fixture::gpus()), InputError);
}

TEST_CASE("elementwise, norm and softmax are bounded by the vector fp32 peak") {
  ElementwiseOptions e;
  e.op.gpus = "h100";
  e.elements = "1000000";
  e.fn = "gelu";
  e.op.dtype = "fp32";
  auto r = rows_of(run_json(e, fixture::gpus()), "elementwise")[0];
  CHECK(r.at("function") == "gelu");
  CHECK(r.at("inputs") == 1);
  CHECK(number(r, "flops_per_element") == 9);
  CHECK(r.at("peak_class") == "fp32");
  // H100 fp32 vector 67 TFLOP/s: ridge 67 / 3.35 = 20; AI 9 / 8 = 1.125 -> 3.769 TFLOP/s.
  CHECK(number(r, "ridge_flop_per_byte") == Approx(20.0));
  CHECK(number(r, "attainable_tflops") == Approx(3.76875));
  e.inputs = "3";  // overrides the function's count
  CHECK(rows_of(run_json(e, fixture::gpus()), "elementwise")[0].at("inputs") == 3);
  e.op.dtype = "fp64";
  CHECK(rows_of(run_json(e, fixture::gpus()), "elementwise")[0].at("peak_class") == "fp64");

  NormOptions n;
  n.op.gpus = "h100";
  n.rows = "4096";
  n.hidden = "8192";
  n.kind = "layernorm";
  r = rows_of(run_json(n, fixture::gpus()), "norm")[0];
  CHECK(number(r, "flops") == 234897408.0);
  CHECK(r.at("binding") == "HBM bandwidth");

  SoftmaxOptions s;
  s.op.gpus = "h100";
  s.rows = s.cols = "4096";
  r = rows_of(run_json(s, fixture::gpus()), "softmax")[0];
  CHECK(number(r, "intensity_flop_per_byte") == Approx(1.25).epsilon(1e-4));
  CHECK(r.at("peak_class") == "fp32");
}

TEST_CASE("op attention prints both implementations and the reduction factor") {
  const auto rows = rows_of(run_json(attention(), fixture::gpus()), "attention");
  REQUIRE(rows.size() == 2);
  const auto& standard = rows[0];
  const auto& flash = rows[1];
  CHECK(standard.at("impl") == "standard");
  CHECK(flash.at("impl") == "flash");
  CHECK(number(standard, "read_bytes") + number(standard, "written_bytes") == 138412032.0);
  CHECK(number(standard, "scores_bytes") == 134217728.0);
  CHECK(standard.at("tile_q").is_null());
  CHECK(number(flash, "read_bytes") + number(flash, "written_bytes") == 4194304.0);
  CHECK(number(flash, "hbm_reduction") == 33.0);
  // H100 default tile 128 (Q + double-buffered K, V = 163,840 B of 233,472), 31 re-reads of 2 MiB.
  CHECK(flash.at("tile_q") == 128);
  CHECK(flash.at("tile_fits_smem") == true);
  CHECK(number(flash, "kv_reread_bytes") == 65011712.0);
  CHECK(flash.at("l2_holds_kv") == true);
  // Standard is memory-bound at 41.3 us (138.4 MB / 3.35 TB/s), flash compute-bound at 8.68 us.
  CHECK(number(standard, "time_us") == Approx(41.317).epsilon(1e-4));
  CHECK(number(flash, "time_us") == Approx(8.682).epsilon(1e-3));
  CHECK(number(flash, "time_reduction") == Approx(41.317 / 8.682).epsilon(1e-3));

  AttentionOptions o = attention();
  o.impl = "flash";
  o.tile = "64";
  o.heads = "64";
  o.kv_heads = "8";
  o.causal = true;
  const auto only_flash = rows_of(run_json(o, fixture::gpus()), "attention");
  REQUIRE(only_flash.size() == 1);
  CHECK(only_flash[0].at("tile_kv") == 64);
  CHECK(only_flash[0].at("kv_heads") == 8);
  // 64 heads x 4,296,015,872 causal FLOPs.
  CHECK(number(only_flash[0], "flops") == 64 * 4296015872.0);
  o.impl = "fast";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("--impl"));
}

TEST_CASE("op attention validates the sweep before any row") {
  AttentionOptions o = attention();
  o.heads = "32,40";
  o.kv_heads = "8,16";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("--kv-heads 16 does not divide --heads 40"));
  o = attention();
  o.causal = true;
  o.seq = "1024,8192";
  o.kv_seq = "4096";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("--seq 8192 exceeds --kv-seq 4096"));
  o = attention();
  o.tile = "2000000";
  CHECK_THROWS_AS(run_op(o, fixture::gpus()), InputError);
  o = attention();
  o.seq = "3000000000";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("64 bits"));
}

TEST_CASE("op fuse: summary and per-step tables") {
  FuseOptions o;
  o.op.gpus = "h100";
  o.chain = "linear,gelu,layernorm";
  o.rows = o.hidden = "4096";
  const Report report = run_json(o, fixture::gpus());
  const auto r = rows_of(report, "fuse")[0];
  CHECK(number(r, "unfused_bytes") == 234897408.0);
  CHECK(number(r, "fused_bytes") == 100679680.0);
  CHECK(number(r, "on_chip_bytes") == 67108864.0);
  CHECK(r.at("kept_on_chip") == "linear->gelu, gelu->layernorm");
  // Unfused: GEMM 138.911 us (compute) + GELU 20.032 us + LayerNorm 20.037 us (memory) = 178.98 us;
  // fused: the GEMM's compute time dominates (100.7 MB / 3.35 TB/s = 30.05 us).
  CHECK(number(r, "unfused_time_us") == Approx(178.981).epsilon(1e-5));
  CHECK(number(r, "fused_time_us") == Approx(138.911).epsilon(1e-5));
  CHECK(r.at("fused_binding") == "bf16 tensor peak");
  const auto steps = rows_of(report, "steps");
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].at("element") == "gelu");
  CHECK(steps[1].at("output_on_chip") == true);
  CHECK(steps[2].at("output_on_chip") == false);
  o.chain = "";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("empty"));
  o.chain = "linear,dropout";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("unknown element 'dropout'"));
}

TEST_CASE("table and JSON cap the rows and CSV streams them with the same cells") {
  GemmOptions o = gemm();
  o.m = "1:400";
  o.n = "1:300";
  CHECK_THROWS_WITH(run_op(o, fixture::gpus()), Contains("use --format csv"));
  std::ostringstream out, notes;
  CHECK(stream_op_csv(o, fixture::gpus(), out, notes) == 120000);
  const auto text = lines(out.str());
  REQUIRE(text.size() == 120001);
  CHECK(text[0].starts_with("gpu,m,n,k,batch,act_dtype,weight_dtype,out_dtype,flops,read_bytes,"));
  CHECK(text[1].starts_with("h100-sxm,1,1,4096,1,bf16,bf16,bf16,8192,"));
  CHECK_THAT(notes.str(), Contains("roofline: note: FLOPs = 2 m n k batch"));

  // The streamed rows equal the report's CSV printer, cell for cell.
  o.m = "1,7,4096";
  o.n = "3:5";
  o.op.common.format = "csv";
  std::ostringstream streamed, ignored, printed;
  (void)stream_op_csv(o, fixture::gpus(), streamed, ignored);
  make_printer(Format::csv)->print(run_op(o, fixture::gpus()), printed);
  CHECK(streamed.str() == printed.str());

  AttentionOptions a = attention();
  a.seq = "1024:32768:x2";
  a.op.common.format = "csv";
  std::ostringstream a_streamed, a_printed;
  CHECK(stream_op_csv(a, fixture::gpus(), a_streamed, ignored) == 12);  // 6 lengths x 2 implementations
  make_printer(Format::csv)->print(run_op(a, fixture::gpus()), a_printed);
  CHECK(a_streamed.str() == a_printed.str());
}

TEST_CASE("streamed CSV survives long texts and many buffer flushes") {
  // Sixteen elements: the kept_on_chip text is longer than any remembered text; 3000 rows of
  // about 600 bytes cross the 128 KiB buffer many times.
  FuseOptions o;
  o.op.gpus = "h100,mi300x";
  o.op.common.format = "csv";
  o.chain = "add,relu,gelu,silu,relu,gelu,silu,relu,gelu,silu,relu,gelu,silu,rmsnorm,layernorm,softmax";
  o.rows = "1:1500";
  o.hidden = "4096";
  std::ostringstream streamed, notes, printed;
  CHECK(stream_op_csv(o, fixture::gpus(), streamed, notes) == 3000);
  make_printer(Format::csv)->print(run_op(o, fixture::gpus()), printed);
  CHECK(streamed.str().size() > 1'000'000);
  CHECK(streamed.str() == printed.str());
}

TEST_CASE("the CSV number fast path writes what fmt's {} writes") {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> exponent(-30, 30);
  std::vector<double> values{0.0,  1.0,    3.35,  295.343283582, 1e15 - 1, 1e15, 1e16, 123456789012345.0,
                             1e-5, 0.0001, 2.5e-7};
  for (int i = 0; i < 200000; ++i) {
    double v = std::pow(10.0, exponent(random));
    if (i % 3 == 0) v = std::round(v);
    values.push_back(v);
  }
  for (double v : values) {
    std::array<char, 32> text{};
    char* end = op_detail::format_csv_number(text.data(), v);
    INFO(v);
    REQUIRE(std::string(text.data(), static_cast<std::size_t>(end - text.data())) == fmt::format("{}", v));
  }
}
