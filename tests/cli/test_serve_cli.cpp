// End-to-end tests of serve: the real binary, its JSON, its per-request CSV and its bad input.
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
