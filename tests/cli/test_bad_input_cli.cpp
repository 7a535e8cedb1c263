// Every class of bad input in docs/bad-input.md, run through the real binary: the answer is exit
// code 2 with one line on stderr naming the file or flag, nothing on stdout, and no output file
// (nor a temporary one) left behind. Each TEST_CASE name is the row's name in that table.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string source_dir = ROOFLINE_SOURCE_DIR;

// A command line prefix that runs the binary without root's permission bypass, so that a
// chmod 000 folder is unreadable even when the tests run as root (containers, CI). Empty when
// not root; nullopt when root cannot drop the capabilities (the caller then cannot test it).
std::optional<std::string> without_root_bypass() {
  if (::geteuid() != 0) return std::string();
  const std::string setpriv = "setpriv --bounding-set -dac_override,-dac_read_search ";
  if (run_command(setpriv + "true").exit_code != 0) return std::nullopt;
  return setpriv;
}

}  // namespace

TEST_CASE("bad input: malformed JSON") {
  const auto dir = scratch("malformed");
  write_file(dir / "gpu.json", R"({"schema": "roofline.hardware.v1", "id": })");
  expect_bad_input(roofline("ridge --gpu h100 --hardware-dir " + dir.string()), "gpu.json: malformed JSON");
  write_file(dir / "config.json", R"({"model_type": "llama",, "hidden_size": 4096})");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "config.json: malformed JSON");
  write_file(dir / "cal.json", "{\"schema\": \"roofline.calibration.v1\" ]");
  expect_bad_input(roofline("op gemm --m 1 --n 1 --k 1 --gpu h200 --calibration " + (dir / "cal.json").string()),
                   "cal.json: not valid JSON");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: truncated JSON") {
  const auto dir = scratch("truncated");
  const std::string whole = user_gpu().dump(2);
  write_file(dir / "gpu.json", whole.substr(0, whole.rfind(',', whole.size() / 2) + 1));  // cut after a value
  const CommandResult result = roofline("ridge --gpu h100 --hardware-dir " + dir.string());
  expect_bad_input(result, "malformed JSON");
  CHECK_THAT(result.err, Contains("unexpected end of input"));
  const std::string memory = slurp(std::filesystem::path(source_dir) / "tests/data/bench/h200-memory-2026-11-30.json");
  write_file(dir / "bench.json", memory.substr(0, memory.size() - 100));
  expect_bad_input(roofline("validate --measured " + (dir / "bench.json").string()), "not valid JSON");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: an empty file") {
  const auto dir = scratch("empty");
  write_file(dir / "config.json", "");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "config.json: malformed JSON");
  write_file(dir / "bench.json", "");
  expect_bad_input(roofline("validate --measured " + (dir / "bench.json").string()), "bench.json: is empty");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: a huge file") {
  // 17 MiB of spaces, made sparse by resize_file: the cap is checked before anything is read.
  const auto dir = scratch("huge");
  write_file(dir / "gpu.json", "{}");
  std::filesystem::resize_file(dir / "gpu.json", std::uintmax_t{17} << 20);
  expect_bad_input(roofline("ridge --gpu h100 --hardware-dir " + dir.string()),
                   "gpu.json: 17825792 bytes, more than the 16 MiB an input file may have");
  std::filesystem::copy_file(dir / "gpu.json", dir / "config.json");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "more than the 16 MiB");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: deeply nested JSON") {
  // 100,000 nested arrays: refused before parsing (copying or printing them would recurse
  // 100,000 deep), by every JSON loader.
  const auto dir = scratch("nested");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_file(dir / "gpu.json", deep);
  expect_bad_input(roofline("ridge --gpu h100 --hardware-dir " + dir.string()),
                   "gpu.json: JSON nested deeper than 256 levels");
  write_file(dir / "config.json", R"({"model_type": "llama", "x": )" + deep + "}");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "nested deeper than 256");
  write_file(dir / "cal.json", deep);
  expect_bad_input(roofline("op gemm --m 1 --n 1 --k 1 --gpu h200 --calibration " + (dir / "cal.json").string()),
                   "nested deeper than 256");
  write_file(dir / "bench.json", deep);
  expect_bad_input(roofline("validate --measured " + (dir / "bench.json").string()), "nested deeper than 256");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: binary garbage") {
  const auto dir = scratch("garbage");
  std::mt19937 random(12345);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  write_file(dir / "gpu.json", bytes);
  expect_bad_input(roofline("ridge --gpu h100 --hardware-dir " + dir.string()), "gpu.json: malformed JSON");
  write_file(dir / "ncu.csv", bytes);
  expect_bad_input(roofline("profile --from-csv " + (dir / "ncu.csv").string()), "ncu.csv");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: wrong types") {
  const auto dir = scratch("types");
  json spec = user_gpu();
  spec["memory"]["bandwidth_tbps"]["value"] = "fast";
  write_file(dir / "gpu.json", spec.dump());
  expect_bad_input(roofline("ridge --gpu my-gpu --hardware-dir " + dir.string()), "/memory/bandwidth_tbps/value");
  write_file(dir / "config.json", R"({"model_type": "llama", "hidden_size": "4096", "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256})");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "hidden_size");
  expect_bad_input(roofline("op gemm --m twelve --n 1 --k 1 --gpu h100"), "--m");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: unknown keys") {
  const auto dir = scratch("unknown");
  json spec = user_gpu();
  spec["memory"]["bandwith_tbps"] = spec["memory"]["bandwidth_tbps"];  // a typo is not silently ignored
  write_file(dir / "gpu.json", spec.dump());
  expect_bad_input(roofline("ridge --gpu my-gpu --hardware-dir " + dir.string()), "bandwith_tbps");
  json model = json::parse(slurp(std::filesystem::path(source_dir) / "models/mistral-7b.json"));
  model["layer"] = 32;
  std::filesystem::create_directories(dir / "models");
  write_file(dir / "models" / "mistral-7b.json", model.dump());
  expect_bad_input(
      roofline("llm --model mistral-7b --models-dir " + (dir / "models").string() + " --gpu h100 --context 1024"),
      "/layer: is not a known key (did you mean 'layers'?)");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: NaN and infinities") {
  // JSON has no NaN: a file that writes one is malformed; flags refuse nan and inf.
  const auto dir = scratch("nan");
  const std::string spec = user_gpu().dump();
  std::string with_nan = spec;
  const std::string key = "\"bandwidth_tbps\":{";
  const std::size_t at = with_nan.find(key);
  REQUIRE(at != std::string::npos);
  const std::size_t value = with_nan.find("\"value\":", at) + 8;
  with_nan.replace(value, with_nan.find_first_of(",}", value) - value, "NaN");
  write_file(dir / "gpu.json", with_nan);
  expect_bad_input(roofline("ridge --gpu my-gpu --hardware-dir " + dir.string()), "malformed JSON");
  expect_bad_input(roofline("ridge --gpu h100 --set hbm_bandwidth_tbps=nan"), "hbm_bandwidth_tbps");
  expect_bad_input(roofline("ridge --gpu h100 --set bf16_tflops=inf"), "bf16_tflops");
  expect_bad_input(roofline("attainable --gpu h100 --ai nan"), "--ai");
  expect_bad_input(roofline("attainable --gpu h100 --ai inf"), "--ai");
  expect_bad_input(roofline("op gemm --m 1 --n 1 --k 1 --gpu h100 --efficiency compute=nan,memory=0.8"),
                   "--efficiency");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: zero, negative and overflowing sizes") {
  expect_bad_input(roofline("op gemm --m 0 --n 4096 --k 4096 --gpu h100"), "--m");
  expect_bad_input(roofline("op gemm --m -4096 --n 4096 --k 4096 --gpu h100"), "--m");
  expect_bad_input(roofline("op gemm --m 99999999999999999999999 --n 4096 --k 4096 --gpu h100"), "--m");
  // Each size fits in 64 bits, their product does not.
  expect_bad_input(roofline("op gemm --m 4294967296 --n 4294967296 --k 4294967296 --gpu h100"), "");
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 0"), "--context");
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 4096 --batch -1"),
                   "--batch: '-1' is not a batch from 1 to 1048576 or 'max'");
  expect_bad_input(roofline("attainable --gpu h100 --ai 0"), "--ai");
  const auto dir = scratch("sizes");
  write_file(dir / "config.json", R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": -32, "num_key_value_heads": 8, "vocab_size": 128256})");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "num_hidden_layers");
  write_file(dir / "config.json", R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 1e300, "num_key_value_heads": 8, "vocab_size": 128256})");
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
                   "num_hidden_layers");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: a missing file") {
  const auto dir = scratch("missing");
  expect_bad_input(roofline("llm --hf-config " + (dir / "none.json").string() + " --gpu h100 --context 1024"),
                   "none.json: no such file");
  expect_bad_input(roofline("validate --measured " + (dir / "none.json").string()), "none.json: no such file");
  expect_bad_input(roofline("op gemm --m 1 --n 1 --k 1 --gpu h200 --calibration " + (dir / "none.json").string()),
                   "none.json: no such file");
  expect_bad_input(roofline("ridge --gpu h100 --hardware-dir " + (dir / "none").string()), "not a readable directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: an unreadable folder or file") {
  const std::optional<std::string> prefix = without_root_bypass();
  if (!prefix) {
    // Root that cannot drop CAP_DAC_OVERRIDE reads everything: the row cannot be shown here.
    WARN("running as root without setpriv's capability drop: permissions do not apply; not tested");
    return;
  }
  const auto dir = scratch("unreadable");
  std::filesystem::create_directories(dir / "locked");
  write_file(dir / "locked" / "gpu.json", user_gpu().dump());
  std::filesystem::permissions(dir / "locked", std::filesystem::perms::none);
  const CommandResult folder =
      run_command(*prefix + ROOFLINE_BINARY + " ridge --gpu h100 --hardware-dir " + (dir / "locked").string());
  expect_bad_input(folder, "locked");
  CHECK_THAT(folder.err, Contains("ermission denied"));
  std::filesystem::permissions(dir / "locked", std::filesystem::perms::owner_all);
  write_file(dir / "config.json", "{}");
  std::filesystem::permissions(dir / "config.json", std::filesystem::perms::none);
  const CommandResult file = run_command(*prefix + ROOFLINE_BINARY + " llm --gpu h100 --context 1024 --hf-config " +
                                         (dir / "config.json").string());
  expect_bad_input(file, "config.json: cannot be read (Permission denied)");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: a directory where a file is expected") {
  const auto dir = scratch("directory");
  expect_bad_input(roofline("llm --hf-config " + dir.string() + " --gpu h100 --context 1024"),
                   dir.string() + ": is a directory, not a file");
  expect_bad_input(roofline("validate --measured " + dir.string()), "is a directory, not a file");
  expect_bad_input(roofline("profile --from-csv " + dir.string()), "is a directory, not a file");
  expect_bad_input(roofline("ridge --gpu h100 -o " + dir.string()), "-o " + dir.string() + ": is a directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: conflicting flags") {
  const auto dir = scratch("conflict");
  write_file(dir / "config.json", "{}");
  expect_bad_input(
      roofline("llm --model llama-3.1-8b --hf-config " + (dir / "config.json").string() + " --gpu h100 --context 1024"),
      "--model and --hf-config: give one of them, not both");
  expect_bad_input(roofline("profile --from-csv " + (dir / "config.json").string() + " -- true"), "not both");
  expect_bad_input(roofline("ridge --gpu h100 --format json --format xml"), "--format");
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: an output path that cannot be written") {
  const auto dir = scratch("unwritable");
  expect_bad_input(roofline("ridge --gpu h100 -o " + (dir / "no/such/dir/r.json").string()),
                   "r.json: cannot be written (No such file or directory)");
  expect_bad_input(
      roofline("op gemm --m 1:64:x2 --n 8 --k 8 --gpu h100 --format csv -o " + (dir / "no/such/sweep.csv").string()),
      "cannot be written");
  expect_bad_input(roofline("calibrate --measured " + source_dir + "/tests/data/bench/h200-memory-2026-11-30.json -o " +
                            (dir / "no/cal.json").string()),
                   "cannot be written");
  CHECK(entries(dir).empty());
  const std::optional<std::string> prefix = without_root_bypass();
  if (prefix) {
    std::filesystem::create_directories(dir / "read-only");
    std::filesystem::permissions(dir / "read-only",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    expect_bad_input(
        run_command(*prefix + ROOFLINE_BINARY + " ridge --gpu h100 -o " + (dir / "read-only" / "r.json").string()),
        "cannot be written (Permission denied)");
    CHECK(entries(dir / "read-only").empty());
    std::filesystem::permissions(dir / "read-only", std::filesystem::perms::owner_all);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: a failed run leaves no output file and no temporary file") {
  const auto dir = scratch("failed-run");
  const std::string memory = source_dir + "/tests/data/bench/h200-memory-2026-11-30.json";
  write_file(dir / "broken.json", "{\"schema\": ");
  for (const std::string& args :
       {"ridge --gpu nope -o " + (dir / "r.json").string(),
        "op gemm --m 1:1048576:+1 --n 8 --k 8 --gpu nope --format csv -o " + (dir / "sweep.csv").string(),
        "op gemm --m 1:64:x2 --n 8 --k 8 --gpu h100 --format csv --calibration " + (dir / "broken.json").string() +
            " -o " + (dir / "sweep.csv").string(),
        "calibrate --measured " + (dir / "broken.json").string() + " -o " + (dir / "cal.json").string(),
        "calibrate --measured " + memory + " --gpu nope -o " + (dir / "cal.json").string(),
        "plot --gpu nope -o " + (dir / "r.svg").string(),
        "validate --measured " + (dir / "broken.json").string() + " -o " + (dir / "v.json").string(),
        "profile --from-csv " + (dir / "broken.json").string() + " --chart " + (dir / "c.svg").string() + " -o " +
            (dir / "p.json").string()}) {
    INFO(args);
    const CommandResult result = roofline(args);
    CHECK(result.exit_code == 2);
    CHECK(entries(dir) == std::vector<std::string>{"broken.json"});
  }
  // A file that exists stays as it was.
  write_file(dir / "r.json", "earlier report\n");
  CHECK(roofline("ridge --gpu nope --format json -o " + (dir / "r.json").string()).exit_code == 2);
  CHECK(slurp(dir / "r.json") == "earlier report\n");
  std::filesystem::remove_all(dir);
}
