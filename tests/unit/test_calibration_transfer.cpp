// Transfer of a calibration to another GPU of the same architecture (calibration_transfer.hpp),
// the bundled calibrations, --calibration auto's choice, and the provenance calibrate records.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/basis/calibration_transfer.hpp"
#include "roofline/validate/calibrate.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

// Two GPUs with round figures: the target has half the bandwidth and half the bf16 peak, and an
// SM clock of 1600 MHz against 2000.
GpuSpec synthetic_gpu(std::string id, double bandwidth_tbps, double bf16_tflops, double clock_mhz) {
  GpuSpec g;
  g.id = std::move(id);
  g.name = g.id;
  g.vendor = "nvidia";
  g.architecture = "Hopper";
  g.units = 100;
  g.boost_clock_mhz = clock_mhz;
  g.memory_bandwidth_tbps = bandwidth_tbps;
  g.peak_tflops[static_cast<std::size_t>(PeakClass::bf16)] = bf16_tflops;
  g.scale_up_name = "NVLink";
  g.scale_up_bidir_gbps = 900;
  return g;
}

CalibrationPoint point(std::string benchmark, double flops, double bytes, double ideal_s, double measured_s) {
  CalibrationPoint p;
  p.ideal_s = ideal_s;
  p.efficiency = ideal_s / measured_s;
  p.benchmark = std::move(benchmark);
  p.measured_s = measured_s;
  p.problem = CalibrationPoint::Problem{flops, bytes, PeakClass::bf16};
  return p;
}

Calibration source_calibration(const GpuSpec& gpu) {
  Calibration c;
  c.gpu_id = gpu.id;
  c.gpu_name = gpu.name;
  c.roofs = Roofs::of(gpu);
  c.file = "source.json";
  CalibrationTable t;
  t.name = "gemm.bf16";
  t.pattern = "gemm";
  t.best = true;
  // A: 1e9 FLOPs, 8e6 B: max(1e9 / 1e15, 8e6 / 4e12) = 2 us, memory-bound; measured 4 us (0.5).
  t.points.push_back(point("a", 1e9, 8e6, 2e-6, 4e-6));
  // B: 1e12 FLOPs, 4e8 B: max(1 ms, 0.1 ms) = 1 ms, compute-bound; measured 1.25 ms (0.8).
  t.points.push_back(point("b", 1e12, 4e8, 1e-3, 1.25e-3));
  // C: written before points carried their problem: it cannot be re-expressed.
  CalibrationPoint old = point("c", 0, 1, 1e-5, 2e-5);
  old.problem.reset();
  t.points.push_back(old);
  sort_points(t);
  c.tables.emplace(t.name, t);
  c.ceilings.stream_bytes_per_s = 3.6e12;
  c.ceilings.l2_bytes_per_s = 10e12;
  c.ceilings.peaks[static_cast<std::size_t>(PeakClass::bf16)] = 800e12;
  c.collectives.tables.push_back({Collective::all_reduce, 2, "bf16", {{1e6, 10e-6, "allreduce.1mb"}}});
  return c;
}

const CalibrationPoint& find_point(const Calibration& c, std::string_view benchmark) {
  for (const CalibrationPoint& p : c.table("gemm.bf16")->points) {
    if (p.benchmark == benchmark) return p;
  }
  FAIL("no point " << benchmark);
  throw;
}

}  // namespace

TEST_CASE("transfer: each point by its problem on the target's roofs, its fixed cost at the SM clock") {
  const GpuSpec source = synthetic_gpu("src", 4, 1000, 2000);
  const GpuSpec target = synthetic_gpu("dst", 2, 500, 1600);
  const Calibration moved = transfer_calibration(source_calibration(source), source, target);
  CHECK(moved.gpu_id == "dst");
  REQUIRE(moved.transfer);
  CHECK(moved.transfer->from_gpu == "src");
  CHECK(moved.transfer->points == 2);
  CHECK(moved.transfer->points_dropped == 1);  // C has no problem

  // The best efficiency of the curve is B's 0.8. A lost 4 - 2 / 0.8 = 1.5 us to fixed cost.
  // On the target: x = max(1e9 / 5e14, 8e6 / 2e12) = 4 us; time = 4 / 0.8 + 1.5 x 2000 / 1600
  // = 5 + 1.875 = 6.875 us; efficiency 4 / 6.875 = 0.5818.
  const CalibrationPoint& a = find_point(moved, "a");
  CHECK(a.ideal_s == Approx(4e-6));
  CHECK(a.measured_s == Approx(6.875e-6));
  CHECK(a.efficiency == Approx(0.581818).epsilon(1e-5));
  // B lost nothing below the best: x = max(1e12 / 5e14, 4e8 / 2e12) = 2 ms, time 2 / 0.8 = 2.5 ms.
  const CalibrationPoint& b = find_point(moved, "b");
  CHECK(b.ideal_s == Approx(2e-3));
  CHECK(b.efficiency == Approx(0.8));
  CHECK_FALSE(b.loo_error);

  // Ceilings by the datasheet ratios: HBM x 2 / 4, bf16 x 500 / 1000, L2 x (100 x 1600) / (100 x 2000).
  CHECK(*moved.ceilings.stream_bytes_per_s == Approx(1.8e12));
  CHECK(*moved.ceilings.peaks[static_cast<std::size_t>(PeakClass::bf16)] == Approx(400e12));
  CHECK(*moved.ceilings.l2_bytes_per_s == Approx(8e12));
  // The same scale-up link: the measured collectives come along.
  CHECK_FALSE(moved.collectives.empty());
  CHECK_THAT(moved.transfer->collectives, Contains("transferred: the same scale-up link"));

  // A GPU on another link keeps the ring model.
  GpuSpec pcie = target;
  pcie.scale_up_name = "NVLink bridge";
  pcie.scale_up_bidir_gbps = 600;
  const Calibration bridged = transfer_calibration(source_calibration(source), source, pcie);
  CHECK(bridged.collectives.empty());
  CHECK_THAT(bridged.transfer->collectives, Contains("not transferred"));
}

TEST_CASE("transfer: onto the GPU it was measured on, every point is itself") {
  const GpuSpec source = synthetic_gpu("src", 4, 1000, 2000);
  const Calibration original = source_calibration(source);
  const Calibration same = transfer_calibration(original, source, source);
  // time = x / best + (measured - x / best) x 1 = measured.
  CHECK(find_point(same, "a").efficiency == Approx(0.5));
  CHECK(find_point(same, "b").efficiency == Approx(0.8));
}

TEST_CASE("transfer: a table's rule past its series' ends comes along") {
  const GpuSpec source = synthetic_gpu("src", 4, 1000, 2000);
  Calibration original = source_calibration(source);
  CalibrationTable& table = original.tables.at("gemm.bf16");
  table.series_name = std::string("k");
  for (CalibrationPoint& p : table.points) p.series = 1024.0;
  table.neighbours_outside_range = true;
  sort_points(table);
  const Calibration moved = transfer_calibration(original, source, synthetic_gpu("dst", 2, 500, 1600));
  CHECK(moved.table("gemm.bf16")->series_name == "k");
  CHECK(moved.table("gemm.bf16")->neighbours_outside_range);
}

TEST_CASE("transfer: a point whose peak the target does not state is dropped") {
  const GpuSpec source = synthetic_gpu("src", 4, 1000, 2000);
  GpuSpec no_bf16 = synthetic_gpu("dst", 2, 500, 1600);
  no_bf16.peak_tflops[static_cast<std::size_t>(PeakClass::bf16)].reset();
  const Calibration moved = transfer_calibration(source_calibration(source), source, no_bf16);
  CHECK(moved.tables.empty());
  CHECK(moved.transfer->points_dropped == 3);
}

TEST_CASE("bundled calibrations: each is the calibration of the GPU its file is named after, with provenance") {
  const std::vector<std::string> ids = bundled_calibration_gpus();
  REQUIRE_FALSE(ids.empty());
  for (const std::string& id : ids) {
    const std::optional<Calibration> c = bundled_calibration(id);
    REQUIRE(c);
    CHECK(c->gpu_id == id);
    CHECK(c->validation);
    for (const CalibrationSource& s : c->sources) CHECK(s.provenance);
  }
  CHECK_FALSE(bundled_calibration("b200"));
}

TEST_CASE("calibration auto: measured on the H200, transferred to the H100s, none for Blackwell or Ampere") {
  const HardwareRegistry& gpus = fixture::gpus();
  const AutoCalibration h200 = auto_calibration(gpus.find("h200"), gpus);
  CHECK(h200.kind == AutoCalibration::Kind::measured);
  CHECK_THAT(h200.band, Contains("out of sample"));
  for (const char* hopper : {"h100-sxm", "h100-pcie", "h100-nvl"}) {
    const AutoCalibration h100 = auto_calibration(gpus.find(hopper), gpus);
    CHECK(h100.kind == AutoCalibration::Kind::transferred);
    REQUIRE(h100.calibration);
    CHECK(h100.calibration->gpu_id == hopper);
    CHECK(h100.calibration->transfer->from_gpu == "h200-sxm");
    CHECK(h100.calibration->transfer->points > 0);
    // calibrations/transfer/bands.json holds the H100 SXM comparison only (docs/calibration.md).
    CHECK_THAT(h100.band, Contains(std::string(hopper) == "h100-sxm" ? "-17% to +9%" : "not established"));
  }
  for (const char* other : {"b200", "a100-sxm4-80gb", "mi300x"}) {
    const AutoCalibration none = auto_calibration(gpus.find(other), gpus);
    CHECK(none.kind == AutoCalibration::Kind::none);
    CHECK_FALSE(none.calibration);
    CHECK_THAT(none.note, Contains("keeps the roofline times"));
  }
}

TEST_CASE("provenance: the bench report's device and run rows, 'not recorded' where a run lacks a field") {
  const nlohmann::json report = {{"inputs", {{"command_line", "roofline bench --suite memory"}}},
                                 {"results",
                                  {{"device",
                                    {{{"name", "NVIDIA H200"},
                                      {"compute_capability", "9.0"},
                                      {"driver_version", 12040},   // CUDA's 1000 x 12 + 10 x 4
                                      {"runtime_version", 13000},  // 13.0
                                      {"cublas_version", 120402},  // 10000 x 12 + 100 x 4 + 2
                                      {"sm_clock_start_mhz", 1980.0},
                                      {"sm_clock_end_mhz", 1485.0}}}},
                                   {"run", {{{"started_utc", "2026-12-01T09:26:37Z"}}}}}}};
  const std::optional<RunProvenance> p = run_provenance(report);
  REQUIRE(p);
  CHECK(p->driver_version == "12.4");
  CHECK(p->cuda_runtime_version == "13.0");
  CHECK(p->cublas_version == "12.4.2");
  CHECK(*p->sm_clock_end_mhz == 1485.0);
  CHECK_FALSE(p->memory_clock_start_mhz);
  CHECK(p->tool_commit == not_recorded);  // runs before the run row recorded it
  CHECK(provenance_text(*p) ==
        "NVIDIA H200 (cc 9.0), driver 12.4, CUDA 13.0, cuBLAS 12.4.2, SM 1980 -> 1485 MHz, memory not recorded, "
        "commit not recorded");
  nlohmann::json with_commit = report;
  with_commit["results"]["run"][0]["tool_commit"] = "d541644";
  CHECK(run_provenance(with_commit)->tool_commit == "d541644");
  CHECK_FALSE(run_provenance(nlohmann::json::object()));  // compute selftest lines have no device row
}

TEST_CASE("calibration files: provenance, problems, band and transfer survive a round trip and old files still load") {
  const GpuSpec source = synthetic_gpu("src", 4, 1000, 2000);
  Calibration c = transfer_calibration(source_calibration(source), source, synthetic_gpu("dst", 2, 500, 1600));
  RunProvenance p{"NVIDIA H200", "9.0", "13.0", "13.0", "13.1.0", 1980.0, 1965.0, 3201.0, 3201.0, "abc1234", "cmd"};
  c.sources.push_back({"run.json", "roofline.bench.v1", "NVIDIA H200", "2026-12-01T09:26:37Z", false, 2, p});
  c.validation = ErrorBand{"layers within 10% out of sample, 25/26", 10, 25, 26, "layer.json"};
  c.hardware_origin = "test";
  const Calibration back = calibration_from_json(to_json(c), "round-trip");
  REQUIRE(back.sources.front().provenance);
  CHECK(back.sources.front().provenance->tool_commit == "abc1234");
  CHECK(*back.sources.front().provenance->sm_clock_end_mhz == 1965.0);
  CHECK(back.validation->summary == c.validation->summary);
  CHECK(back.transfer->from_gpu == "src");
  CHECK(find_point(back, "a").problem->roof_bytes == 8e6);
  CHECK(find_point(back, "a").problem->peak == PeakClass::bf16);
  CHECK_THAT(origin_text(back), Contains("transferred to dst from src"));
  // A file written before provenance and problems: the refactor run's committed calibration.
  const Calibration old =
      load_calibration(std::string(ROOFLINE_SOURCE_DIR) + "/docs/results/2026-12-01-h200-refactor/calibration.json");
  CHECK_FALSE(old.sources.front().provenance);
  CHECK_THAT(origin_text(old), Contains("provenance not recorded"));
}
