// End-to-end tests: run the real binary and parse what it prints.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

CommandResult roofline(const std::string& args) {
  return run_command(std::string(ROOFLINE_BINARY) + " " + args);
}

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("roofline-cli-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

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

TEST_CASE("-o writes the report atomically and leaves nothing on failure") {
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

TEST_CASE("bench --list needs no GPU and bad bench flags are bad input") {
  const CommandResult list = roofline("bench --list --quick --format json");
  REQUIRE(list.exit_code == 0);
  const json report = json::parse(list.out);
  CHECK(report.at("schema") == "roofline.bench-cases.v1");
  CHECK(report.at("results").at("cases").size() == 35);
  CHECK_THAT(roofline("bench --list --filter gemv.fp16.16384").out, Contains("gemv.fp16.16384x16384.b64.cublas"));
  for (const char* args : {"bench --suite nope", "bench --samples 0", "bench --timeout 0", "bench --filter ,"}) {
    INFO(args);
    const CommandResult bad = roofline(args);
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.empty());
  }
  CHECK_THAT(roofline("bench --help").out, Contains("bytes read + bytes written"));
}
