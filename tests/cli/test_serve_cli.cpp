// End-to-end tests of serve: the real binary, its JSON, its per-request CSV and its bad input.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string base = "serve --model llama-3.1-8b --gpu h100 --weights fp8 --kv fp8 ";

}  // namespace

TEST_CASE("serve: identical requests at rate inf: the issue's JSON fields, equal latencies") {
  const json r = json_report(base + "--prompt-tokens 128 --output-tokens 16 --requests 8 --rate inf");
  CHECK(r.at("schema") == "roofline.serve.v1");
  const json& res = r.at("results");
  for (const char* key : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "queue_ms"}) {
    for (const char* stat : {"mean", "p50", "p90", "p99", "max"}) CHECK(res.at(key).at(stat).is_number());
  }
  // 8 x 128 tokens fit one step: all 8 prefilled together, then decoded together.
  CHECK(res.at("ttft_ms").at("p50") == res.at("ttft_ms").at("max"));
  CHECK(res.at("tpot_ms").at("mean").get<double>() == Approx(res.at("tpot_ms").at("max").get<double>()));
  // 8 requests x 16 tokens over the duration.
  CHECK(res.at("output_tokens_per_s").get<double>() ==
        Approx(128.0 / res.at("duration_s").get<double>()).epsilon(1e-12));
  CHECK(res.at("output_tokens_per_s_per_gpu") == res.at("output_tokens_per_s"));
  CHECK(res.at("requests_per_s").get<double>() == Approx(8.0 / res.at("duration_s").get<double>()));
  CHECK(res.at("preemptions") == 0);
  CHECK(res.at("calibration").at("source") == "none");
  CHECK(res.at("engine").at("steps") == 16);
  CHECK(res.at("engine").at("batch_max") == 8);
  CHECK(res.at("timeline").size() == 16);
}

TEST_CASE("serve: the same seed gives the same report, --requests-csv one row per request, --timeline-svg a chart") {
  const std::filesystem::path dir = scratch("serve-csv");
  const std::string csv = (dir / "requests.csv").string();
  const std::string args =
      base + "--prompt-dist normal:512,100 --output-dist lognormal:128,64 --requests 30 --rate 10 --seed 3";
  const std::string svg = (dir / "timeline.svg").string();
  const json a = json_report(args + " --requests-csv " + csv + " --timeline-svg " + svg);
  std::ifstream chart(svg);
  std::stringstream text;
  text << chart.rdbuf();
  CHECK(text.str().rfind("<svg xmlns=", 0) == 0);
  CHECK_THAT(text.str(), Contains("KV cache in use [%]"));
  const json b = json_report(args);
  CHECK(a.at("results") == b.at("results"));
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line == "request,arrival_s,prompt,output,queue_ms,ttft_ms,tpot_ms,e2e_ms,finish_s,preemptions");
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  CHECK(rows == 30);
  const json c = json_report(base +
                             "--prompt-dist normal:512,100 --output-dist lognormal:128,64 --requests 30 "
                             "--rate 10 --seed 4");
  CHECK(c.at("results").at("duration_s") != a.at("results").at("duration_s"));
}

TEST_CASE("serve: the bundled trace, CSV and JSONL, give the same report") {
  const std::string dir = std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/serve/";
  const json csv = json_report("serve --model llama-3.1-8b --gpu h200 --trace " + dir + "example-trace.csv");
  const json jsonl = json_report("serve --model llama-3.1-8b --gpu h200 --trace " + dir + "example-trace.jsonl");
  CHECK(csv.at("results").at("requests") == 24);
  CHECK(csv.at("results").at("e2e_ms") == jsonl.at("results").at("e2e_ms"));
  CHECK(csv.at("inputs").at("workload").at("arrivals") == "the trace's times");
}

TEST_CASE("serve: goodput under --slo counts the requests within both targets") {
  const json loose =
      json_report(base + "--prompt-tokens 256 --output-tokens 32 --requests 20 --rate 5 --slo ttft=100000,tpot=1000");
  CHECK(loose.at("results").at("goodput").at("requests") == 20);
  CHECK(loose.at("results").at("goodput").at("fraction") == 1.0);
  const json tight =
      json_report(base + "--prompt-tokens 256 --output-tokens 32 --requests 20 --rate 5 --slo ttft=0.001");
  CHECK(tight.at("results").at("goodput").at("requests") == 0);
}

TEST_CASE("serve: bad input is one line and exit 2") {
  const std::filesystem::path dir = scratch("serve-bad");
  const auto trace = [&](const std::string& name, const std::string& text) {
    write_file(dir / name, text);
    return (dir / name).string();
  };
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 5 --rate 0"), "--rate '0'");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 5 --rate -2"), "--rate '-2'");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 5 --rate 1 --concurrency 2"),
                   "--rate and --concurrency");
  expect_bad_input(roofline(base + "--trace " + trace("unsorted.csv", "arrival_s,prompt,output\n1,10,10\n0.5,10,10\n")),
                   "unsorted.csv:3: arrival_s 0.5 is before the previous row's 1");
  expect_bad_input(roofline(base + "--trace " + trace("negative.csv", "arrival_s,prompt,output\n0,-5,10\n")),
                   "negative.csv:2: prompt must be a whole number of tokens");
  expect_bad_input(roofline(base + "--trace " + trace("missing.jsonl", "{\"arrival_s\": 0, \"prompt\": 5}\n")),
                   "missing.jsonl:1: missing \"output\"");
  expect_bad_input(roofline(base + "--prompt-tokens 200000 --output-tokens 10 --requests 1"), "context of 131072");
  expect_bad_input(roofline(base + "--prompt-tokens 100000 --output-tokens 10 --requests 1 --kv-memory-fraction 0.001"),
                   "KV blocks of 16 tokens; the cache holds");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --requests 1"), "--output-tokens or --output-dist");
  expect_bad_input(roofline(base + "--prompt-dist gamma:1,2 --output-tokens 10 --requests 1"),
                   "unknown distribution 'gamma'");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 1 --slo ttft=fast"),
                   "--slo 'ttft=fast'");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 4 --fit-step-overhead 1e9"),
                   "already slower than the run");
  expect_bad_input(
      roofline(base +
               "--prompt-tokens 100 --output-tokens 10 --requests 4 --fit-step-overhead 10 --step-overhead-us 5"),
      "give one of them");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 4 --capacity-policy fifo"),
                   "--capacity-policy 'fifo'");
  // Nothing half-written: a failed run leaves no CSV.
  const std::string csv = (dir / "never.csv").string();
  expect_bad_input(roofline(base + "--prompt-tokens 200000 --output-tokens 10 --requests 1 --requests-csv " + csv),
                   "context");
  CHECK(!std::filesystem::exists(csv));
}

TEST_CASE("plan --rps: the feasible candidates ranked by simulation, targets on p90, cost per million tokens") {
  const json r = json_report(
      "plan --model llama-3.1-70b --gpus h100,h200 --rps 5 --prompt-tokens 2048 --output-tokens 256 --tpot-ms 50 "
      "--ttft-ms 2000 "
      "--price all=2.5 --sim-requests 300 --top 3");
  CHECK(r.at("inputs").at("ranking").at("simulated") == true);
  const json& res = r.at("results");
  const json& sim = res.at("simulation");
  CHECK(sim.at("percentile") == 90.0);
  // Simulated in the closed form's order until --top + 1 = 4 meet the targets.
  CHECK(sim.at("meeting") == 4);
  CHECK(sim.at("simulated").get<int>() == 4 + static_cast<int>(sim.at("missed").size()));
  const json& chosen = res.at("chosen");
  const json& s = chosen.at("simulated");
  CHECK(s.at("meets") == true);
  CHECK(s.at("ttft_ms").get<double>() <= 2000);
  CHECK(s.at("tpot_ms").get<double>() <= 50);
  CHECK(s.at("ttft_ms") == s.at("ttft_ms_stats").at("p90"));  // the targets' percentile is p90
  CHECK(chosen.at("usd_per_million_output_tokens").get<double>() > 0);
  REQUIRE(res.at("runners_up").size() == 3);
  double previous = chosen.at("usd_per_million_output_tokens").get<double>();
  for (const json& c : res.at("runners_up")) {
    CHECK(c.at("simulated").at("meets") == true);
    CHECK(c.at("usd_per_million_output_tokens").get<double>() >= previous);
    previous = c.at("usd_per_million_output_tokens").get<double>();
  }
  for (const json& c : sim.at("missed")) CHECK_THAT(c.at("simulated").at("missed").get<std::string>(), Contains("p90"));
  // p50 targets are easier to meet than p99 ones: the same chosen or a cheaper one.
  const json p99 = json_report(
      "plan --model llama-3.1-70b --gpus h100,h200 --rps 5 --prompt-tokens 2048 --output-tokens 256 --tpot-ms 50 "
      "--ttft-ms 2000 "
      "--price all=2.5 --sim-requests 300 --top 0 --percentile 99");
  CHECK(p99.at("results").at("chosen").at("simulated").at("percentile") == 99.0);
  CHECK(p99.at("results").at("chosen").at("usd_per_million_output_tokens").get<double>() >=
        chosen.at("usd_per_million_output_tokens").get<double>());
  // --closed-form: the closed form's ranking, nothing simulated.
  const json closed = json_report(
      "plan --model llama-3.1-70b --gpus h100,h200 --rps 5 --prompt-tokens 2048 --output-tokens 256 --tpot-ms 50 "
      "--ttft-ms 2000 "
      "--price all=2.5 --closed-form");
  CHECK(closed.at("inputs").at("ranking").at("simulated") == false);
  CHECK_FALSE(closed.at("results").contains("simulation"));
  CHECK_FALSE(closed.at("results").at("chosen").contains("simulated"));
  const std::string plan8 =
      "plan --model llama-3.1-8b --gpus h100 --rps 5 --prompt-tokens 512 --output-tokens 64 --tpot-ms 50 --ttft-ms "
      "2000 "
      "--price all=2 ";
  expect_bad_input(roofline(plan8 + "--percentile 0"), "--percentile 0");
  expect_bad_input(roofline(plan8 + "--sim-requests 0"), "--sim-requests 0");
  expect_bad_input(roofline(plan8 + "--sim-candidates 0"), "--sim-candidates 0");
}

TEST_CASE("plan: hardening II #9: a tiny --rps still buys one replica, not zero GPUs at $0") {
  const json r = json_report(
      "plan --model llama-3.1-8b --gpus h100 --rps 1e-8 --prompt-tokens 512 --output-tokens 64 --tpot-ms 50 --ttft-ms "
      "2000 "
      "--price all=2 --sim-requests 20");
  const json& c = r.at("results").at("chosen");
  CHECK(c.at("replicas") == 1);
  CHECK(c.at("gpus_total").get<int>() >= 1);
  // One GPU at $2/hour serving 1e-8 x 64 tokens/s: 2 / (1e-8 x 64 x 3600) x 1e6 = 8.68e8 $/M tokens.
  CHECK(c.at("usd_per_hour").get<double>() == Approx(2.0 * c.at("gpus_total").get<double>()));
  CHECK(c.at("utilization").get<double>() > 0);
  CHECK(c.at("utilization").get<double>() < 1e-6);
  CHECK(std::isfinite(c.at("usd_per_million_output_tokens").get<double>()));
  if (c.at("gpus_total") == 1)
    CHECK(c.at("usd_per_million_output_tokens").get<double>() == Approx(8.6806e8).epsilon(1e-4));
}

TEST_CASE("plan: hardening II #2: the lists are capped and the JSON bounded by what is reported") {
  std::string tp = "1";
  for (int i = 2; i <= 65; ++i) tp.append(",").append(std::to_string(i));
  expect_bad_input(
      roofline("plan --model llama-3.1-8b --gpus h100 --rps 5 --prompt-tokens 512 --output-tokens 64 --tpot-ms 50 "
               "--ttft-ms 2000 --price all=2 --closed-form --tp " +
               tp),
      "--tp: 65 entries, more than the 64");
  // 64 TP degrees x 3 PP x 4 weights x 2 KV = 1,536 configurations, most rejected: the JSON lists
  // the first 1,024 of them and counts every one.
  tp = "1";
  for (int i = 2; i <= 64; ++i) tp.append(",").append(std::to_string(i));
  const json r = json_report(
      "plan --model llama-3.1-8b --gpus h100 --rps 5 --prompt-tokens 512 --output-tokens 64 --tpot-ms 50 --ttft-ms "
      "2000 "
      "--price all=2 --closed-form --tp " +
      tp);
  const json& counts = r.at("results").at("counts");
  CHECK(counts.at("configurations") == 1536);
  CHECK(counts.at("rejected_listed") == std::min<std::int64_t>(1024, counts.at("rejected").get<std::int64_t>()));
  CHECK(r.at("results").at("rejected").size() == counts.at("rejected_listed").get<std::size_t>());
  CHECK(counts.at("feasible").get<std::int64_t>() + counts.at("rejected").get<std::int64_t>() == 1536);
}

TEST_CASE("serve --layers: one layer, one request, on the H200 reproduces the layer suite's FP8 decode") {
  // llama-3.1-70b, FP8 weights and KV, one request whose single decode step reads 4,096 cached
  // tokens: TPOT of a 4,095-token prompt with 2 output tokens. The difference of a 2-layer and a
  // 1-layer run is one layer (the embedding and head, once per step, cancel).
  const auto tpot_ms = [](int layers) {
    const json r = json_report(
        "serve --model llama-3.1-70b --gpu h200 --weights fp8 --kv fp8 --prompt-tokens 4095 --output-tokens 2 "
        "--requests 1 "
        "--calibration " +
        (std::filesystem::path(ROOFLINE_SOURCE_DIR) / "calibrations/h200-sxm.json").string() + " --layers " +
        std::to_string(layers));
    CHECK(r.at("inputs").at("layers") == layers);
    CHECK(r.at("inputs").at("model").at("layers") == layers);
    return r.at("results").at("tpot_ms").at("mean").get<double>();
  };
  const double layer_us = (tpot_ms(2) - tpot_ms(1)) * 1e3;
  // layer.decode.fp8.b1.ctx4096.roofline in docs/results/2026-12-01-h200-fp8kv-attention/
  // bench-layer.json: 273.42 us measured (median); the simulation is validate's best-table sum of
  // the same stages, 251.6 us (-8.0%).
  CHECK(layer_us == Approx(273.42).epsilon(0.10));
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 1 --layers 0"), "--layers 0");
  expect_bad_input(roofline(base + "--prompt-tokens 100 --output-tokens 10 --requests 1 --layers 33"), "--layers 33");
}

TEST_CASE("serve --fp8-kernels like-16-bit: FP8 ops at the bf16 kernels' efficiency, recorded in the inputs") {
  const std::string run =
      base + "--prompt-tokens 1000 --output-tokens 200 --requests 64 --rate inf --calibration auto ";
  const json measured = json_report(run);
  const json like = json_report(run + "--fp8-kernels like-16-bit");
  CHECK(measured.at("inputs").at("engine").at("fp8_kernels") == "measured");
  CHECK(like.at("inputs").at("engine").at("fp8_kernels") == "like-16-bit");
  // The bundled FP8 GEMM and FP8-KV attention kernels run below the bf16 ones' fraction of the
  // roofline: the engine that keeps that fraction is faster.
  CHECK(like.at("results").at("output_tokens_per_s").get<double>() >
        measured.at("results").at("output_tokens_per_s").get<double>());
  const json attention = json_report(run + "--fp8-kernels attention-like-16-bit");
  CHECK(attention.at("inputs").at("engine").at("fp8_kernels") == "attention-like-16-bit");
  CHECK(attention.at("results").at("output_tokens_per_s").get<double>() >
        measured.at("results").at("output_tokens_per_s").get<double>());
  expect_bad_input(roofline(run + "--fp8-kernels fast"), "--fp8-kernels 'fast'");
}

TEST_CASE("plan --rps: the queueing the closed form leaves out turns cheaper candidates down") {
  // Llama 3.1 8B on H100 at 20 requests/s of 2048 + 256 tokens: the closed form's cheapest
  // candidates prefill one prompt in about 19 ms (< 30 ms), but at their share of the rate prompts
  // queue behind each other, and the simulated p90 TTFT is above 30 ms: they miss, and the chosen
  // one is a dearer candidate that meets it.
  const json r = json_report(
      "plan --model llama-3.1-8b --gpus h100 --prompt-tokens 2048 --output-tokens 256 --rps 20 --ttft-ms 30 --tpot-ms "
      "30 "
      "--price all=2.5 --sim-requests 300 --top 1");
  const json& res = r.at("results");
  const json& missed = res.at("simulation").at("missed");
  REQUIRE_FALSE(missed.empty());
  const json& chosen = res.at("chosen");
  CHECK(chosen.at("simulated").at("ttft_ms").get<double>() <= 30);
  for (const json& m : missed) {
    CHECK(m.at("ttft_ms").get<double>() <= 30);                 // the closed form accepted it
    CHECK(m.at("simulated").at("ttft_ms").get<double>() > 30);  // the simulation does not
    CHECK(m.at("usd_per_million_output_tokens").get<double>() <=
          chosen.at("usd_per_million_output_tokens").get<double>());
  }
}
