// The collectives' formulas (comm.hpp), the suite's sizes (collectives_suite.hpp), measured
// tables (collective_tables.hpp), learning them from a run and the calibration file round trip,
// and their use by the LLM model, against values derived by hand in each test.
#include <cmath>

#include "catch.hpp"
#include "fixture.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/bench/collectives_suite.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/llm.hpp"
#include "roofline/model/collective_tables.hpp"
#include "roofline/model/comm.hpp"
#include "roofline/validate/calibrate.hpp"
#include "roofline/validate/collective_validation.hpp"

using namespace roofline;
using Catch::Matchers::Contains;
using fixture::gpus;
using fixture::models;

namespace {

// An all-reduce over 2 ranks: 1 KiB in 10 us, 4 KiB in 20 us.
CollectiveTables two_point_table() {
  CollectiveTables t;
  t.add(Collective::all_reduce, 2, "fp32", {4096, 20e-6, "allreduce.fp32.4KiB"});
  t.add(Collective::all_reduce, 2, "fp32", {1024, 10e-6, "allreduce.fp32.1KiB"});
  return t;
}

}  // namespace

TEST_CASE("bus bandwidth factors and ring steps (nccl-tests' convention)") {
  // All-reduce = reduce-scatter + all-gather, each n - 1 steps of bytes / n: 2 (n - 1) / n.
  CHECK(bus_factor(Collective::all_reduce, 2) == 1.0);
  CHECK(bus_factor(Collective::all_reduce, 8) == 1.75);
  CHECK(bus_factor(Collective::all_gather, 8) == 0.875);
  CHECK(bus_factor(Collective::reduce_scatter, 4) == 0.75);
  CHECK(bus_factor(Collective::all_reduce, 1) == 0.0);
  CHECK(ring_steps(Collective::all_reduce, 8) == 14);
  CHECK(ring_steps(Collective::all_gather, 8) == 7);
  CHECK(ring_steps(Collective::reduce_scatter, 1) == 0);
  // 1 GB in 10 ms: algbw 100 GB/s; busbw over 8 GPUs 175 GB/s (all-reduce), 87.5 GB/s (all-gather).
  CHECK(algorithm_bandwidth(1e9, 0.01) == Approx(1e11));
  CHECK(bus_bandwidth(Collective::all_reduce, 8, 1e9, 0.01) == Approx(1.75e11));
  CHECK(bus_bandwidth(Collective::all_gather, 8, 1e9, 0.01) == Approx(0.875e11));
  CHECK(bus_bandwidth(Collective::all_reduce, 2, 1e9, 0.01) == Approx(1e11));
  CHECK(collective_from_name("reduce_scatter") == Collective::reduce_scatter);
  CHECK_FALSE(collective_from_name("broadcast").has_value());
}

TEST_CASE("ring model: steps x latency + bus factor x bytes / link bandwidth") {
  const LinkSpec link{"NVLink", 450e9, 1e-6};
  // All-reduce of 1 MiB over 4: 6 steps x 1 us + 1.5 x 1,048,576 / 450e9 = 6 us + 3.49525 us.
  CHECK(ring_time(Collective::all_reduce, 1048576, 4, link) == Approx(6e-6 + 1572864.0 / 450e9));
  CHECK(ring_time(Collective::all_reduce, 1048576, 4, link) == Approx(9.49525e-6).epsilon(1e-5));
  // All-gather (and reduce-scatter) of 1 MiB over 4: 3 us + 0.75 x 1 MiB / 450e9 = 3 us + 1.74763 us.
  CHECK(ring_time(Collective::all_gather, 1048576, 4, link) == Approx(3e-6 + 786432.0 / 450e9));
  CHECK(ring_time(Collective::reduce_scatter, 1048576, 4, link) == ring_time(Collective::all_gather, 1048576, 4, link));
  CHECK(ring_time(Collective::all_reduce, 1048576, 1, link) == 0.0);
  // The older names are the same formula.
  CHECK(ring_allreduce_time(1048576, 4, link) == ring_time(Collective::all_reduce, 1048576, 4, link));
  CHECK(ring_allgather_time(1048576, 4, link) == ring_time(Collective::all_gather, 1048576, 4, link));
  // H200: NVLink 900 GB/s both ways = 450 GB/s per direction, 1 us per step by default.
  const LinkSpec h200 = bench::collectives::model_link(gpus().find("h200"));
  CHECK(h200.bandwidth_bytes_per_s == Approx(450e9));
  CHECK(h200.latency_s == Approx(1e-6));
}

TEST_CASE("the collectives suite's cases and buffer sizes") {
  namespace col = bench::collectives;
  CHECK(col::cases.size() == 3 * 31);  // 2^3 .. 2^33 bytes per op
  CHECK(std::count_if(col::cases.begin(), col::cases.end(), [](const col::Case& c) { return c.quick; }) == 36);
  CHECK(col::case_id(col::cases.front()) == "allreduce.fp32.8B");
  CHECK(col::case_id(col::cases.back()) == "reducescatter.fp32.8GiB");
  // 8 B over 2 ranks: 2 floats; all-gather sends 1 and receives 2, reduce-scatter the reverse.
  const col::Buffers ar = col::buffers(Collective::all_reduce, 8, 2);
  CHECK(ar.bytes == 8);
  CHECK(ar.send_elements == 2);
  CHECK(ar.recv_elements == 2);
  CHECK(ar.chunk_elements == 1);
  const col::Buffers ag = col::buffers(Collective::all_gather, 8, 2);
  CHECK(ag.send_elements == 1);
  CHECK(ag.recv_elements == 2);
  const col::Buffers rs = col::buffers(Collective::reduce_scatter, 8, 2);
  CHECK(rs.send_elements == 2);
  CHECK(rs.recv_elements == 1);
  // 64 B over 3 ranks: 16 floats rounded down to 15, 5 per rank, 60 B run; 8 B over 3: nothing.
  const col::Buffers odd = col::buffers(Collective::all_gather, 64, 3);
  CHECK(odd.bytes == 60);
  CHECK(odd.chunk_elements == 5);
  CHECK(col::buffers(Collective::all_reduce, 8, 3).bytes == 0);
  // A planned result carries the model's time: all-reduce of 1 MiB over 2 H200s =
  // 2 x 1 us + 1 x 1,048,576 / 450e9 = 4.330 us.
  const col::Case c{Collective::all_reduce, 1048576, false};
  const bench::BenchmarkResult r = col::make_result(c, 2, col::model_link(gpus().find("h200")));
  CHECK(std::get<double>(r.parameter("model_us")) == Approx(2.0 + 1048576.0 / 450e9 * 1e6));
  CHECK(r.cost.bytes() == 1048576.0);
  CHECK(r.group == "all_reduce");
}

TEST_CASE("measured collective tables interpolate bus bandwidth in log(bytes)") {
  const CollectiveTables t = two_point_table();
  REQUIRE(t.find(Collective::all_reduce, 2) != nullptr);
  CHECK(t.find(Collective::all_reduce, 2)->points.front().bytes == 1024);  // sorted on insertion
  CHECK(t.find(Collective::all_reduce, 4) == nullptr);
  CHECK(t.find(Collective::all_gather, 2) == nullptr);
  // busbw (factor 1 over 2 ranks): 1024 / 10 us = 102.4 MB/s; 4096 / 20 us = 204.8 MB/s. 2 KiB is
  // half-way in log(bytes): 153.6 MB/s, so 2048 / 153.6e6 = 13.333 us.
  const auto mid = measured_collective(t, Collective::all_reduce, 2048, 2);
  REQUIRE(mid);
  CHECK(mid->time_s == Approx(2048.0 / 153.6e6));
  CHECK_FALSE(mid->clamped);
  CHECK_THAT(mid->detail, Contains("between 1 KiB and 4 KiB"));
  const auto exact = measured_collective(t, Collective::all_reduce, 4096, 2);
  CHECK(exact->time_s == Approx(20e-6));
  // Below the smallest size: its time (a latency floor); above the largest: its bus bandwidth.
  const auto small = measured_collective(t, Collective::all_reduce, 16, 2);
  CHECK(small->time_s == Approx(10e-6));
  CHECK(small->clamped);
  const auto large = measured_collective(t, Collective::all_reduce, 8192, 2);
  CHECK(large->time_s == Approx(40e-6));
  CHECK(large->clamped);
  CHECK_FALSE(measured_collective(t, Collective::all_reduce, 2048, 8).has_value());
  // A second measurement of a size keeps the faster one.
  CollectiveTables again = two_point_table();
  again.add(Collective::all_reduce, 2, "fp32", {1024, 8e-6, "faster"});
  again.add(Collective::all_reduce, 2, "fp32", {1024, 12e-6, "slower"});
  CHECK(again.find(Collective::all_reduce, 2)->points.size() == 2);
  CHECK(again.find(Collective::all_reduce, 2)->points.front().benchmark == "faster");
}

TEST_CASE("collective_cost: the measured table where it covers the group, else the ring") {
  const CollectiveTables t = two_point_table();
  const LinkSpec link{"NVLink", 450e9, 1e-6};
  const CollectiveCost measured = collective_cost(Collective::all_reduce, 2048, 2, link, &t);
  CHECK(measured.measured);
  CHECK(measured.time_s == Approx(2048.0 / 153.6e6));
  // Ring: 2 x 1 us + 2048 / 450e9.
  const CollectiveCost ring = collective_cost(Collective::all_reduce, 2048, 2, link, nullptr);
  CHECK_FALSE(ring.measured);
  CHECK(ring.time_s == Approx(2e-6 + 2048.0 / 450e9));
  CHECK_FALSE(collective_cost(Collective::all_reduce, 2048, 4, link, &t).measured);         // no table for 4 ranks
  CHECK_FALSE(collective_cost(Collective::all_reduce, 2048, 2, link, &t, false).measured);  // beyond scale-up
  CHECK(collective_cost(Collective::all_reduce, 2048, 1, link, &t).time_s == 0.0);
}

TEST_CASE("calibrate learns collective tables from a run and the calibration file keeps them") {
  MeasuredRun run;
  run.file = "bench-collectives.json";
  run.format = "roofline.bench.v1";
  run.device_name = "NVIDIA H200";
  run.hardware_id = "h200-sxm";
  const auto add = [&run](const char* op, const char* id, double bytes, double median_s, int ranks) {
    Measurement m;
    m.suite = "collectives";
    m.group = op;
    m.id = id;
    m.implementation = "nccl";
    m.status = "passed";
    m.parameters = {{"op", op}, {"ranks", ranks}, {"dtype", "fp32"}};
    m.recorded_bytes = bytes;
    m.timing = MeasuredTiming{median_s, median_s * 0.9, median_s * 1.2, 20};
    m.where = std::string("bench-collectives.json /results/") + op;
    run.results.push_back(std::move(m));
  };
  add("all_reduce", "allreduce.fp32.1KiB", 1024, 10e-6, 2);
  add("all_reduce", "allreduce.fp32.4KiB", 4096, 20e-6, 2);
  add("all_gather", "allgather.fp32.1MiB", 1048576, 8e-6, 2);
  const std::vector<MeasuredRun> runs{run};
  const CalibrationBuild build = build_calibration(runs, gpus().find("h200"));
  const Calibration& c = build.calibration;
  CHECK(c.tables.empty());  // collectives only
  REQUIRE(c.collectives.tables.size() == 2);
  CHECK(c.sources.front().points == 3);
  CHECK(measured_collective(c.collectives, Collective::all_reduce, 2048, 2)->time_s == Approx(2048.0 / 153.6e6));

  // Round trip through the file format (validated against the embedded schema on load).
  const nlohmann::json file = to_json(c);
  CHECK(file.at("collectives").at(0).at("points").at(0).at("busbw_gbps") == Approx(1024 / 10e-6 / 1e9));
  const Calibration back = calibration_from_json(file, "cal.json");
  REQUIRE(back.collectives.tables.size() == 2);
  const CollectiveTable* ag = back.collectives.find(Collective::all_gather, 2);
  REQUIRE(ag != nullptr);
  CHECK(ag->points.at(0).time_s == Approx(8e-6));
  CHECK(ag->points.at(0).benchmark == "allgather.fp32.1MiB");

  // Sizes must ascend; the op must be known.
  nlohmann::json bad = file;
  bad["collectives"][0]["points"][1]["bytes"] = 512;
  CHECK_THROWS_WITH(calibration_from_json(bad, "cal.json"), Contains("/collectives/0/points/1/bytes"));
  bad = file;
  bad["collectives"][0]["op"] = "broadcast";
  CHECK_THROWS_AS(calibration_from_json(bad, "cal.json"), InputError);

  // validate's comparison: the ring over the H200 link for the all-gather of 1 MiB over 2 =
  // 1 us + 0.5 x 1,048,576 / 450e9 = 2.165 us, against 8 us measured.
  const std::vector<CollectiveComparison> rows =
      compare_collectives(runs, bench::collectives::model_link(gpus().find("h200")), &back.collectives);
  REQUIRE(rows.size() == 3);
  CHECK(rows[2].model_s == Approx(1e-6 + 524288.0 / 450e9));
  CHECK(rows[2].model_error() == Approx((1e-6 + 524288.0 / 450e9) / 8e-6 - 1));
  CHECK(*rows[2].calibrated_s == Approx(8e-6));
}

TEST_CASE("llm: TP all-reduces and PP transfers from measured tables when given") {
  const ModelSpec& m = models().find("llama-3.1-70b");
  const GpuSpec& h200 = gpus().find("h200");
  DeploymentConfig c;
  c.tp = 2;
  c.pp = 2;
  // Decode batch 1: the all-reduce message is 1 x 8192 x 2 B = 16 KiB; the PP transfer 16 KiB.
  const StepTime ring = decode_step(m, h200, shard(m, 2, 2), c, 1, 4096);
  const auto op_time = [](const StepTime& step, std::string_view group, std::string_view name) {
    for (const LayerGroup& g : step.groups) {
      if (g.name != group) continue;
      for (const StepOp& op : g.ops) {
        if (op.name == name) return op.time_s;
      }
    }
    return -1.0;
  };
  // Ring over 450 GB/s with 1 us per step: 2 us + 16384 / 450e9; the PP send: 1 us + 16384 / 450e9.
  CHECK(op_time(ring, "layer", "attn_allreduce") == Approx(2e-6 + 16384.0 / 450e9));
  CHECK(op_time(ring, "pipeline", "pp_send") == Approx(1e-6 + 16384.0 / 450e9));

  auto tables = std::make_shared<CollectiveTables>();
  tables->add(Collective::all_reduce, 2, "fp32", {16384, 12e-6, "allreduce.fp32.16KiB"});
  // PP: a 2-rank all-gather of 32 KiB is one step in which each GPU sends 16 KiB.
  tables->add(Collective::all_gather, 2, "fp32", {32768, 7e-6, "allgather.fp32.32KiB"});
  c.collectives = tables;
  c.collectives_gpu = h200.id;
  const StepTime measured = decode_step(m, h200, shard(m, 2, 2), c, 1, 4096);
  CHECK(op_time(measured, "layer", "attn_allreduce") == Approx(12e-6));
  CHECK(op_time(measured, "layer", "ffn_allreduce") == Approx(12e-6));
  CHECK(op_time(measured, "pipeline", "pp_send") == Approx(7e-6));
  CHECK(measured.tp_comm_s > ring.tp_comm_s);
  // Tables of another GPU are not used.
  c.collectives_gpu = "h100-sxm";
  const StepTime other = decode_step(m, h200, shard(m, 2, 2), c, 1, 4096);
  CHECK(op_time(other, "layer", "attn_allreduce") == Approx(2e-6 + 16384.0 / 450e9));
}
