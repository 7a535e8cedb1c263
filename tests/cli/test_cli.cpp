// End-to-end tests: run the real binary and parse what it prints.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {}  // namespace

TEST_CASE("ridge prints 295.3 FLOP/byte for H100 bf16, as table and as JSON") {
  const CommandResult table = roofline("ridge --gpu h100 --dtype bf16");
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("295.3"));

  const CommandResult result = roofline("ridge --gpu h100 --dtype bf16 --format json");
  REQUIRE(result.exit_code == 0);
  const json report = json::parse(result.out);
  CHECK(report.at("schema") == "roofline.ridge.v1");
  CHECK(report.at("results").at("ridge").at(0).at("ridge_flop_per_byte").get<double>() ==
        Approx(295.343).epsilon(1e-5));
  CHECK(report.at("hardware").at(0).at("file") == "bundled:hardware/h100-sxm.json");
  CHECK(result.err.empty());
}

TEST_CASE("CSV output has a header of unit-carrying keys") {
  const CommandResult result = roofline("attainable --gpu h100 --ai 1 --format csv");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.starts_with("gpu,dtype,intensity_flop_per_byte,"));
}

TEST_CASE("bad input exits 2 with one clear line on stderr and nothing on stdout") {
  for (const char* args : {"ridge --gpu h1000", "ridge --gpu h100 --dtype fp9", "ridge --gpu h100 --format xml",
                           "attainable --gpu h100 --ai -3", "attainable --gpu h100", "nosuchcommand",
                           "ridge --gpu h100 --set nonsense=1"}) {
    INFO(args);
    const CommandResult result = roofline(args);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK_FALSE(result.err.empty());
  }
  CHECK_THAT(roofline("ridge --gpu h100-sx").err, Contains("did you mean"));
}

TEST_CASE("the -o report is written atomically and nothing is left on failure") {
  const auto dir = scratch("output");
  const auto file = dir / "ridge.json";
  CHECK(roofline("ridge --gpu h100 --format json -o " + file.string()).exit_code == 0);
  CHECK(json::parse(slurp(file)).at("schema") == "roofline.ridge.v1");
  // A failed run does not touch an existing file.
  CHECK(roofline("ridge --gpu nope --format json -o " + file.string()).exit_code == 2);
  CHECK(json::parse(slurp(file)).at("schema") == "roofline.ridge.v1");
  // An unwritable path is bad input, and no temporary file is left behind.
  const CommandResult missing_dir = roofline("ridge --gpu h100 -o " + (dir / "no/such/dir.json").string());
  CHECK(missing_dir.exit_code == 2);
  CHECK_THAT(missing_dir.err, Contains("cannot be written"));
  std::size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) entries += entry.is_regular_file() ? 1 : 0;
  CHECK(entries == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("hw check exits 1 on an invalid file and names the key") {
  const auto dir = scratch("check");
  std::ofstream(dir / "bad.json") << R"({"schema": "roofline.hardware.v1", "id": "x"})";
  const CommandResult result = roofline("hw check --format json " + (dir / "bad.json").string());
  CHECK(result.exit_code == 1);
  const json report = json::parse(result.out);
  CHECK(report.at("results").at("summary").at("invalid") == 1);
  CHECK_THAT(report.at("results").at("findings").dump(), Contains("/name"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hw check passes on the bundled files") {
  const CommandResult result = roofline("hw check");
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.out, Contains("0 invalid"));
}

TEST_CASE("a user hardware file overrides the bundled one and the report says so") {
  const auto dir = scratch("override");
  json spec = json::parse(slurp(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "hardware/h100-sxm.json"));
  spec["memory"]["bandwidth_tbps"]["value"] = 4.0;
  std::ofstream(dir / "h100-sxm.json") << spec.dump();

  const CommandResult flag = roofline("ridge --gpu h100 --dtype bf16 --format json --hardware-dir " + dir.string());
  REQUIRE(flag.exit_code == 0);
  const json report = json::parse(flag.out);
  // 989.4 / 4.0 = 247.35 FLOP/B.
  CHECK(report.at("results").at("ridge").at(0).at("ridge_flop_per_byte").get<double>() == Approx(247.35));
  CHECK(report.at("hardware").at(0).at("file") == (dir / "h100-sxm.json").string());
  CHECK_THAT(flag.err, Contains("replaces bundled:hardware/h100-sxm.json"));

  const CommandResult env =
      run_command("ROOFLINE_HARDWARE_PATH=" + dir.string() + " " + ROOFLINE_BINARY + " ridge --gpu h100 --format json");
  REQUIRE(env.exit_code == 0);
  CHECK(json::parse(env.out).at("hardware").at(0).at("file") == (dir / "h100-sxm.json").string());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the version flag prints the project version") {
  const CommandResult result = roofline("--version");
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.out, Contains("0."));
}

TEST_CASE("every hw check warning is explained in docs/hardware.md") {
  const CommandResult result = roofline("hw check --format json");
  REQUIRE(result.exit_code == 0);
  const std::string all = slurp(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "docs/hardware.md");
  const auto section = all.find("## Warnings that `roofline hw check` prints");
  REQUIRE(section != std::string::npos);
  const std::string doc = all.substr(section);
  const json report = json::parse(result.out);
  REQUIRE_FALSE(report.at("results").at("findings").empty());
  for (const json& finding : report.at("results").at("findings")) {
    // file "bundled:hardware/<id>.json", key "/peak_tflops/<class>" -> a row "| <id> | ...<class>... |".
    const std::string file = finding.at("file");
    const std::string id = file.substr(file.rfind('/') + 1, file.size() - file.rfind('/') - 6);
    const std::string key = finding.at("key");
    const std::string leaf = key.substr(key.rfind('/') + 1);
    const auto row = doc.find("\n| " + id + " | ");
    INFO(id << " " << key);
    REQUIRE(row != std::string::npos);
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    const std::string peaks =
        line.substr(line.find(" | ") + 3, line.find(" | ", line.find(" | ") + 3) - line.find(" | ") - 3);
    CHECK_THAT(peaks, Contains(leaf));
  }
}

namespace {

// Exit code 0 when `file` is well-formed XML whose root is an SVG element (Python's expat).
int check_svg_xml(const std::filesystem::path& file) {
  return run_command(std::string(ROOFLINE_TEST_PYTHON) +
                     " -c \"import sys, xml.etree.ElementTree as E; root = E.parse(sys.argv[1]).getroot(); "
                     "sys.exit(0 if root.tag == '{http://www.w3.org/2000/svg}svg' else 1)\" " +
                     file.string())
      .exit_code;
}

// The command that draws docs/images/roofline-h100.svg (docs/plot.md shows it too).
const std::string docs_chart_args =
    "plot --gpu h100 --dtype bf16,fp8,fp32,fp64 --point 'GEMV batch 1:1:3.35' --point 'RMSNorm:1.25:4.1875' "
    "--point 'GEMM 4096\xC2\xB3:1365:989.4'";

}  // namespace

TEST_CASE("plot writes a well-formed standalone SVG to -o, or to stdout") {
  const auto dir = scratch("plot");
  const auto file = dir / "chart.svg";
  const std::string args =
      "plot --gpu h100 --l2-tbps 7 --point 'GEMV <b=1> & co:1:3.35' "
      "--measured-point 'cuBLAS GEMM:1365:741'";
  const CommandResult written = roofline(args + " -o " + file.string());
  REQUIRE(written.exit_code == 0);
  CHECK(written.out.empty());
  CHECK(written.err.empty());
  CHECK(check_svg_xml(file) == 0);
  const std::string svg = slurp(file);
  CHECK_THAT(svg, Contains("GEMV &lt;b=1&gt; &amp; co"));
  CHECK_THAT(svg, Contains("L2: 7 TB/s"));

  const CommandResult printed = roofline(args);
  REQUIRE(printed.exit_code == 0);
  CHECK(printed.out == svg);  // deterministic, and stdout carries the same document

  // A malformed document would fail here: a truncated copy is not well-formed.
  std::ofstream(dir / "broken.svg") << svg.substr(0, svg.size() / 2);
  CHECK(check_svg_xml(dir / "broken.svg") != 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("plot --format json prints the chart's data") {
  const CommandResult result = roofline("plot --gpu h100 --dtype bf16 --point 'GEMV:1:3.35' --format json");
  REQUIRE(result.exit_code == 0);
  const json report = json::parse(result.out);
  CHECK(report.at("schema") == "roofline.plot.v1");
  const json& results = report.at("results");
  // 989.4 TFLOP/s / 3.35 TB/s = 295.343 FLOP/B.
  CHECK(results.at("compute_roofs").at(0).at("ridge_flop_per_byte").get<double>() == Approx(295.343).epsilon(1e-5));
  CHECK(results.at("memory_roofs").size() == 1);  // HBM only: L2 and shared memory need flags
  CHECK(results.at("points").at(0).at("kind") == "model");
  CHECK(results.at("axes").at("intensity_max_flop_per_byte").get<double>() == Approx(1000));
}

TEST_CASE("plot: bad input exits 2 with one line and writes no file") {
  const auto dir = scratch("plot-bad");
  const auto file = dir / "chart.svg";
  for (const char* args : {"plot --gpu h1000", "plot --gpu h100 --point x:0:1", "plot --gpu h100 --point x:1:-5",
                           "plot --gpu h100 --point nolabel", "plot --gpu h100 --dtype nvfp4",
                           "plot --gpu h100 --l2-tbps 0", "plot --gpu h100,a100"}) {
    INFO(args);
    const CommandResult result = roofline(std::string(args) + " -o " + file.string());
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.starts_with("roofline: "));
    CHECK(result.err.find('\n') == result.err.size() - 1);  // exactly one line
    CHECK_FALSE(std::filesystem::exists(file));
  }
  CHECK(roofline("plot --gpu h100 --format xml").exit_code == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("docs/images/roofline-h100.svg is what plot draws today") {
  const CommandResult result = roofline(docs_chart_args);
  REQUIRE(result.exit_code == 0);
  INFO("regenerate with: roofline " << docs_chart_args << " -o docs/images/roofline-h100.svg");
  CHECK(result.out == slurp(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "docs/images/roofline-h100.svg"));
}

TEST_CASE("bench without a GPU or CUDA build exits 3 with one clear line, with one it runs") {
  // One cheap case, so that on the GPU machine this is a real (short) run.
  const CommandResult result = roofline("bench --quick --filter memcpy.d2d --samples 2 --format json");
  if (result.exit_code == 3) {
    CHECK(result.out.empty());
    CHECK_THAT(result.err, Contains("roofline: "));
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  } else {
    REQUIRE(result.exit_code == 0);
    const json report = json::parse(result.out);
    CHECK(report.at("results").at("stream").at(0).at("status") == "passed");
  }
}

TEST_CASE("bench --suite collectives without two GPUs exits 3 with one clear line") {
  const CommandResult result = roofline("bench --suite collectives --quick --samples 2 --format json");
  if (result.exit_code == 0) return;  // a machine with two GPUs and NCCL: the GPU test checks the run
  CHECK(result.exit_code == 3);
  CHECK(result.out.empty());
  CHECK_THAT(result.err, Contains("roofline: "));
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  // Every reason names what is missing: CUDA, NCCL, a GPU or the second GPU.
  const bool named = result.err.find("CUDA") != std::string::npos || result.err.find("NCCL") != std::string::npos ||
                     result.err.find("GPU") != std::string::npos;
  CHECK(named);
}

TEST_CASE("bench --list --suite collectives: three collectives, 8 B to 8 GiB") {
  const CommandResult list = roofline("bench --list --suite collectives --format json");
  REQUIRE(list.exit_code == 0);
  const json report = json::parse(list.out);
  CHECK(report.at("results").at("cases").size() == 3 * 31);
  CHECK_THAT(list.out, Contains("allreduce.fp32.8B"));
  CHECK_THAT(list.out, Contains("allgather.fp32.8GiB"));
  CHECK_THAT(list.out, Contains("reducescatter.fp32.64KiB"));
  // --mpi runs the collectives suite only.
  const CommandResult bad = roofline("bench --mpi --suite memory");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("--mpi"));
}

TEST_CASE("bench --list: the FP8 layer cases, all and --quick, selected by --filter .fp8.") {
  const auto ids = [](const std::string& args) {
    const CommandResult r = roofline(args + " --format json");
    REQUIRE(r.exit_code == 0);
    const json report = json::parse(r.out);
    std::vector<std::string> out;
    for (const json& c : report.at("results").at("cases")) out.push_back(c.at("id").get<std::string>());
    return out;
  };
  // 2 implementations x (decode: 4 batches x 2 contexts + prefill: 5 lengths).
  CHECK(ids("bench --list --suite layer --filter .fp8.").size() == 26);
  CHECK(ids("bench --list --suite layer --filter .fp8. --quick") ==
        std::vector<std::string>{"layer.decode.fp8.b1.ctx1024.roofline", "layer.decode.fp8.b16.ctx1024.cublas",
                                 "layer.prefill.fp8.n512.roofline", "layer.prefill.fp8.n512.cublas"});
  // The bf16 ids are unchanged.
  CHECK(ids("bench --list --suite layer --filter layer.decode.b1.ctx4096.roofline").size() == 1);
}

TEST_CASE("bench --list needs no GPU and bad bench flags are bad input") {
  const CommandResult list = roofline("bench --list --quick --format json");
  REQUIRE(list.exit_code == 0);
  const json report = json::parse(list.out);
  CHECK(report.at("schema") == "roofline.bench-cases.v1");
  // --quick of the memory (63 + 2 decode attention over 1000 keys + 13 W8A8 GEMVs + 5 latent attention + 4
  // ragged wgmma GEMVs), compute (104, 62 of
  // them attention, + 38 grouped GEMMs + 12 FP8 flash attention: 3 shapes x 2 masks x 2 head dims + 8 MLA expanded
  // attention: 2 shapes x 2 masks x standard and flash_wgmma), layer (5 bf16 + 4 FP8) and collectives (3 ops x 12
  // sizes) suites.
  CHECK(report.at("results").at("cases").size() == 63 + 2 + 13 + 5 + 4 + 104 + 38 + 12 + 8 + 5 + 4 + 36);
  CHECK_THAT(roofline("bench --list --quick --filter 64KiB").out, Contains("stream.copy.16B.tile.64KiB"));
  CHECK_THAT(roofline("bench --list --filter attention.decode").out,
             Contains("attention.decode.bf16.b64.ctx32768.flashdecode"));
  CHECK_THAT(roofline("bench --list --filter gemv.fp16.16384").out, Contains("gemv.fp16.16384x16384.b64.cublas"));
  const CommandResult compute = roofline("bench --list --suite compute --filter gemm.bf16.8192x8192x8192");
  REQUIRE(compute.exit_code == 0);
  for (const char* kernel : {"naive", "smemtiled", "mmasync", "wgmma", "cublas"}) {
    CHECK_THAT(compute.out, Contains(std::string("gemm.bf16.8192x8192x8192.") + kernel));
  }
  CHECK_THAT(roofline("bench --list --suite layer").out, Contains("layer.prefill.n4096.roofline"));
  // The timing flags are recorded with the inputs.
  const json timing =
      json::parse(roofline("bench --list --max-noise 1 --min-samples 5 --min-time 0.1 --format json").out);
  CHECK(timing.at("inputs").at("max_noise_pct") == 1.0);
  CHECK(timing.at("inputs").at("min_samples") == 5);
  CHECK(timing.at("inputs").at("min_time_s") == 0.1);
  CHECK(timing.at("inputs").at("keep_throttled") == false);
  for (const char* args :
       {"bench --suite nope", "bench --samples 0", "bench --timeout 0", "bench --filter ,", "bench --max-noise 0",
        "bench --min-samples 40", "bench --min-time -1", "bench --samples 5 --min-samples 6"}) {
    INFO(args);
    const CommandResult bad = roofline(args);
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.empty());
  }
  CHECK_THAT(roofline("bench --help").out, Contains("bytes read + bytes written"));
}
