// Calibrated times in the LLM model and the planner, and the decoder-layer check, against
// calibrations built here with constant efficiencies, so that every expected time is the roofline
// time over a known factor: a table at efficiency 0.5 doubles its ops' times, one at 0.25
// quadruples them, and an op without a table keeps its roofline time.
#include <cmath>

#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/llm/plan.hpp"
#include "roofline/validate/calibrate.hpp"
#include "roofline/validate/layer_check.hpp"

using namespace roofline;
using namespace roofline::llm_fixture;
using Catch::Matchers::Contains;

namespace {

// A table whose efficiency is `efficiency` at every size (and batch, where it has a series): its
// points span far wider than any op of these tests, so no lookup is clamped.
CalibrationTable constant_table(const std::string& name, std::string pattern, double efficiency, bool series) {
  CalibrationTable t;
  t.name = name;
  t.pattern = std::move(pattern);
  t.best = true;
  if (series) t.series_name = "batch";
  for (double batch : {1.0, 4096.0}) {
    for (double x : {1e-12, 1e3}) {
      t.points.push_back({x, series ? std::optional(batch) : std::nullopt, efficiency, name, x / efficiency, 0, {}});
    }
    if (!series) break;
  }
  return t;
}

Calibration constant_calibration(const GpuSpec& gpu) {
  Calibration c;
  c.gpu_id = gpu.id;
  c.gpu_name = gpu.name;
  c.roofs = Roofs::of(gpu);
  c.file = "constant.json";
  c.tables["gemv.bf16"] = constant_table("gemv.bf16", "gemv", 0.5, true);
  c.tables["stream.r1w1"] = constant_table("stream.r1w1", "stream", 0.25, false);
  return c;
}

}  // namespace

TEST_CASE("llm with a calibration: GEMVs at efficiency 0.5 take twice the roofline, the rest as their tables say") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h100 = gpus().find("h100");
  const Calibration cal = constant_calibration(h100);
  DeploymentConfig c;
  c.tp = 2;
  const Sharding s = shard(m, 2, 1);
  TimeOptions calibrated;
  calibrated.calibration = &cal;
  const StepTime bare = decode_step(m, h100, s, c, 8, 4096);
  const StepTime step = decode_step(m, h100, s, c, 8, 4096, calibrated);

  // QKV on one GPU of TP 2: 32 + 2 x 4 heads of 128 = 5120 rows of 8192, batch 8, bf16. Bytes:
  // weights 2 x 5120 x 8192 = 83,886,080 + x 8 x 8192 x 2 = 131,072 + y 8 x 5120 x 2 = 81,920 =
  // 84,099,072; memory-bound at 3.35 TB/s: 25.104 us; at efficiency 0.5: 50.208 us.
  const StepOp& qkv = find_op(step, "layer", "qkv_proj");
  CHECK(qkv.cost.bytes() == 84099072.0);
  CHECK(qkv.roofline_s == Approx(84099072.0 / 3.35e12));
  CHECK(qkv.time_s == Approx(2 * 84099072.0 / 3.35e12));
  REQUIRE(qkv.calibration);
  CHECK(qkv.calibration->applied);
  CHECK(qkv.calibration->table == "gemv.bf16");
  CHECK(qkv.calibration->efficiency == Approx(0.5));
  CHECK_FALSE(qkv.calibration->clamped);

  // The fused add + RMSNorm reads and writes two arrays: the 1 read : 1 write stream class, x 4.
  const StepOp& norm = find_op(step, "layer", "attn_norm");
  CHECK(norm.calibration->table == "stream.r1w1");
  CHECK(norm.time_s == Approx(4 * norm.roofline_s));

  // Decode attention has its own table (the memory suite's decode-attention benchmark), which
  // this calibration lacks.
  const StepOp& attention = find_op(step, "layer", "attention");
  CHECK_FALSE(attention.calibration->applied);
  CHECK_THAT(attention.calibration->detail, Contains("no table attention.decode.bf16.d128"));
  CHECK(attention.time_s == attention.roofline_s);

  // The all-reduce keeps the link model.
  const StepOp& allreduce = find_op(step, "layer", "attn_allreduce");
  CHECK_FALSE(allreduce.calibration->applied);
  CHECK_THAT(allreduce.calibration->detail, Contains("link model"));
  CHECK(allreduce.time_s == allreduce.roofline_s);

  // The roofline figures are those of the step without a calibration; the step's expected time is
  // the roofline plus one more roofline for every GEMV and three more for every r1w1 op.
  CHECK(step.roofline_s == Approx(bare.time_s));
  CHECK_FALSE(find_op(bare, "layer", "qkv_proj").calibration.has_value());
  double expected = 0;
  for (const LayerGroup& g : step.groups) {
    for (const StepOp& op : g.ops) {
      const double factor = !op.calibration->applied ? 1.0 : op.calibration->table == "gemv.bf16" ? 2.0 : 4.0;
      expected += op.roofline_s * factor * static_cast<double>(g.count);
    }
  }
  CHECK(step.time_s == Approx(expected));
  // Per GPU the step reads about 70.5 GB of weights (x 2) and 5.4 GB of KV cache (kept: 2 x 4 KV heads
  // x 128 x 2 B x 80 layers x 4096 tokens x 8 requests): (2 x 70.5 + 5.4) / (70.5 + 5.4) = 1.93.
  CHECK(step.time_s > 1.85 * step.roofline_s);

  // Prefill runs GEMMs, which this calibration has no table for.
  const StepTime first = prefill(m, h100, s, c, 1024, calibrated);
  const StepOp& gemm = find_op(first, "layer", "qkv_proj");
  CHECK_FALSE(gemm.calibration->applied);
  CHECK_THAT(gemm.calibration->detail, Contains("no table gemm.bf16"));
  CHECK(gemm.time_s == gemm.roofline_s);
}

TEST_CASE("llm with a calibration of another GPU keeps every roofline time and says why") {
  const ModelSpec& m = models().find("llama-3.1-8b");
  const Calibration cal = constant_calibration(gpus().find("h200"));
  TimeOptions calibrated;
  calibrated.calibration = &cal;
  const StepTime step = decode_step(m, gpus().find("h100"), shard(m, 1, 1), DeploymentConfig{}, 1, 1024, calibrated);
  CHECK(step.time_s == Approx(step.roofline_s));
  const StepOp& qkv = find_op(step, "layer", "qkv_proj");
  CHECK_FALSE(qkv.calibration->applied);
  CHECK_THAT(qkv.calibration->detail, Contains("the calibration is for h200-sxm, not h100-sxm"));
}

TEST_CASE("the planner times and ranks candidates with calibrated times and keeps the roofline's") {
  const ModelSpec& m = models().find("llama-3.1-8b");
  const GpuSpec& h100 = gpus().find("h100");
  const Calibration cal = constant_calibration(h100);
  PlanSpace space;
  space.gpus = {h100};
  space.usd_per_gpu_hour = {{h100.id, 2.0}};
  space.weights = {DType::bf16};
  space.kv = {DType::bf16};
  space.tp = {1};
  space.pp = {1};
  const Workload w{1.0, 512, 128, 0.2, 5.0};
  const PlanResult bare = plan_deployment(m, w, space);
  space.time.calibration = &cal;
  const PlanResult calibrated = plan_deployment(m, w, space);
  REQUIRE(bare.ranked.size() == 1);
  REQUIRE(calibrated.ranked.size() == 1);
  const PlanCandidate& b = bare.ranked.front();
  const PlanCandidate& c = calibrated.ranked.front();
  // Prefill has no GEMM table here: only its norms, RoPE, K/V append and embedding copy (1 read : 1
  // write, x 4) slow down. TTFT at the roofline is the uncalibrated one.
  CHECK(c.ttft_roofline_s == Approx(b.ttft_s));
  CHECK(c.ttft_s > c.ttft_roofline_s);
  // The decode step at the chosen batch: its roofline figure is the uncalibrated step at that batch.
  const StepTime step = decode_step(m, h100, shard(m, 1, 1), DeploymentConfig{}, c.batch, 512 + 128);
  CHECK(c.step_roofline_s == Approx(step.time_s));
  CHECK(c.step_s > c.step_roofline_s);  // GEMVs x 2; attention over the cache has no table here
  CHECK(c.tpot_roofline_s == Approx(c.step_roofline_s + static_cast<double>(c.batch) * c.ttft_roofline_s / 128.0));
  // Slower steps serve fewer requests per replica: never cheaper than the roofline's plan.
  CHECK(c.usd_per_million_output_tokens >= b.usd_per_million_output_tokens);
}

namespace {

// A layer-suite run on the H200 with the decode layer at batch 1 timed end to end, and its stages.
// gemv_table: the implementation table the GEMV stages record (as the runner does), or none.
MeasuredRun synthetic_layer_run(double layer_s, double stage_s, const std::string& gemv_table = {}) {
  namespace layer = bench::layer;
  const layer::Case c{layer::Phase::decode, 1, 1, 4096, layer::Linear::roofline, true};
  MeasuredRun run;
  run.file = "layer.json";
  run.format = "roofline.bench.v1";
  run.device_name = "NVIDIA H200";
  run.hardware_id = "h200-sxm";
  Measurement whole;
  whole.suite = "layer";
  whole.group = "layer";
  whole.id = layer::case_id(c);
  whole.status = "passed";
  whole.timing = MeasuredTiming{layer_s, layer_s * 0.99, layer_s * 1.01, 100};
  run.results.push_back(whole);
  for (const layer::StagePlan& s : layer::stages(c)) {
    Measurement m;
    m.suite = "layer";
    m.group = "layer_stages";
    m.id = layer::stage_id(c, s.name);
    m.status = "passed";
    m.parameters = {{"layer", whole.id}, {"stage", std::string(s.name)}};
    if (!gemv_table.empty() && s.model == "gemv_cost") m.parameters["table"] = gemv_table;
    m.timing = MeasuredTiming{stage_s, stage_s, stage_s, 100};
    run.results.push_back(m);
  }
  return run;
}

}  // namespace

TEST_CASE("decoder-layer check: the layer predicted as the sum of its stages, calibrated") {
  const GpuSpec& h200 = gpus().find("h200");
  const Roofs roofs = Roofs::of(h200);
  Calibration cal = constant_calibration(h200);
  cal.tables["stream.r2w1"] = constant_table("stream.r2w1", "stream", 0.5, false);
  cal.tables["stream.r1w1"] = constant_table("stream.r1w1", "stream", 0.5, false);
  cal.tables["attention.decode.bf16.d128"] = constant_table("attention.decode.bf16.d128", "attention", 0.5, false);

  // At batch 1 every stage is memory-bound (GEMV at 1 FLOP/B, attention over the cache at 8 query
  // heads per K/V head), so the roofline of the layer is the model's bytes of the layer over
  // 4.8 TB/s. The QKV GEMV reads 10240 x 8192 bf16 weights (167,772,160 B) + x (16,384 B) and
  // writes y (20,480 B): 167,809,024 B.
  const bench::layer::Case& c = *bench::layer::find_case("layer.decode.b1.ctx4096.roofline");
  const double roofline = bench::layer::layer_cost(c).bytes() / 4.8e12;
  // Measured: twice the roofline end to end, 1 us per stage inside the layer.
  const std::vector<MeasuredRun> runs{synthetic_layer_run(2 * roofline, 1e-6)};
  const std::vector<LayerCheck> checks = check_layers(runs, roofs, &cal);
  REQUIRE(checks.size() == 1);
  const LayerCheck& l = checks.front();
  CHECK(l.stages.size() == 10);
  CHECK(l.roofline_s == Approx(roofline));
  CHECK(*l.roofline_error() == Approx(-0.5));
  // Every stage has a table at 0.5: the calibrated layer is twice its roofline, as measured.
  CHECK(l.calibrated_stages == 10);
  CHECK(l.expected_s == Approx(2 * roofline));
  CHECK(*l.calibrated_error() == Approx(0.0).margin(1e-12));
  CHECK(*l.stages_measured_s == Approx(10e-6));
  const LayerStageCheck& qkv = l.stages[1];
  CHECK(qkv.stage == "qkv_proj");
  CHECK(qkv.basis.cost.bytes() == 167809024.0);
  CHECK(qkv.roofline.time_s == Approx(167809024.0 / 4.8e12));
  CHECK(qkv.calibrated->table == "gemv.bf16");
  CHECK(*qkv.measured_s == 1e-6);
  const LayerStageCheck& attention = l.stages[4];
  CHECK(attention.stage == "attention");
  CHECK(attention.calibrated->table == "attention.decode.bf16.d128");

  // Without a calibration: no calibrated error. Without the stream tables: those stages keep the
  // roofline and the layer's expected time is the mix.
  CHECK_FALSE(check_layers(runs, roofs, nullptr).front().calibrated_error());
  const Calibration gemv_only = constant_calibration(h200);  // gemv.bf16 0.5, stream.r1w1 0.25
  const LayerCheck mixed = check_layers(runs, roofs, &gemv_only).front();
  double expected = 0;
  for (const LayerStageCheck& s : mixed.stages) {
    const double factor = !s.calibrated ? 1.0 : s.calibrated->table == "gemv.bf16" ? 2.0 : 4.0;
    expected += s.roofline.time_s * factor;
    if (!s.calibrated) CHECK_THAT(s.not_calibrated, Contains("no table"));
  }
  CHECK(mixed.expected_s == Approx(expected));
  CHECK(mixed.calibrated_stages < 10);
}

TEST_CASE("decoder-layer check: stages take the table of the kernel that ran them, and the best tables beside") {
  const GpuSpec& h200 = gpus().find("h200");
  const Roofs roofs = Roofs::of(h200);
  Calibration cal = constant_calibration(h200);  // best: gemv.bf16 at 0.5, stream.r1w1 at 0.25
  // The project's GEMV at 0.25: its own table, not the best (cuBLAS's, say).
  CalibrationTable stag = constant_table("gemv.bf16.stag", "gemv", 0.25, true);
  stag.best = false;
  cal.tables["gemv.bf16.stag"] = stag;
  const std::vector<MeasuredRun> runs{synthetic_layer_run(1e-3, 1e-6, "gemv.bf16.stag")};
  const LayerCheck l = check_layers(runs, roofs, &cal).front();
  // The four projections (qkv_proj, o_proj, ffn_gate_up, ffn_down) recorded gemv.bf16.stag: each takes 4 x its
  // roofline there and 2 x through the best table; every other stage is the same in both sums.
  CHECK(l.ran_table_stages == 4);
  double gemv_roofline = 0;
  for (const LayerStageCheck& s : l.stages) {
    if (s.ran_table.empty()) {
      CHECK(s.expected_s() == Approx(s.expected_best_s()));
      continue;
    }
    CHECK(s.ran_table == "gemv.bf16.stag");
    CHECK(s.calibrated->table == "gemv.bf16.stag");
    CHECK(s.best->table == "gemv.bf16");
    CHECK(s.expected_s() == Approx(4 * s.roofline.time_s));
    CHECK(s.expected_best_s() == Approx(2 * s.roofline.time_s));
    gemv_roofline += s.roofline.time_s;
  }
  CHECK(gemv_roofline > 0);
  CHECK(l.expected_s - l.expected_best_s == Approx(2 * gemv_roofline));
  CHECK(*l.calibrated_error() - *l.best_error() == Approx(2 * gemv_roofline / 1e-3));

  // The stage as a benchmark of validate predicts through the recorded table too.
  const MeasuredRun& run = runs.front();
  const Measurement* qkv = run.find("layer.decode.b1.ctx4096.roofline.qkv");
  REQUIRE(qkv != nullptr);
  const BasisOrReason basis = benchmark_basis(*qkv);
  REQUIRE(std::holds_alternative<Basis>(basis));
  CHECK(std::get<Basis>(basis).table == "gemv.bf16.stag");
  CHECK(std::get<Basis>(basis).best_table == "gemv.bf16");

  // A calibration without that table: the stages fall back to the best table, and say nothing ran.
  const Calibration without = constant_calibration(h200);
  const LayerCheck fallback = check_layers(runs, roofs, &without).front();
  CHECK(fallback.ran_table_stages == 0);
  CHECK(fallback.expected_s == Approx(fallback.expected_best_s));
}

TEST_CASE("layer-suite results in validate and calibrate: stages predicted, never learnt") {
  const std::vector<MeasuredRun> runs{synthetic_layer_run(1e-3, 1e-5)};
  const MeasuredRun& run = runs.front();
  const BasisOrReason layer = benchmark_basis(run.results.front());
  REQUIRE(std::holds_alternative<NoBasis>(layer));
  CHECK_THAT(std::get<NoBasis>(layer).reason, Contains("sum of its stages"));
  const BasisOrReason stage = benchmark_basis(run.results[2]);  // qkv
  REQUIRE(std::holds_alternative<Basis>(stage));
  CHECK(std::get<Basis>(stage).pattern == "layer.gemv");
  CHECK(std::get<Basis>(stage).table == "gemv.bf16");
  // A calibration learns nothing from the layer suite: every result is skipped, so none is left.
  CHECK_THROWS_AS(build_calibration(runs, gpus().find("h200")), InputError);
}
