// End-to-end tests of roofline op: the real binary, its output and its exit codes.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

CommandResult op(const std::string& args) {
  return roofline("op " + args);
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("op gemm prints the book's GEMM: AI 1365.33, compute-bound on H100") {
  const CommandResult table = op("gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --gpu h100");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("1365.33"));
  CHECK_THAT(table.out, Contains("compute"));
  CHECK_THAT(table.out, Contains("bf16 tensor peak"));
  const CommandResult result = op("gemm --m 4096 --n 4096 --k 4096 --gpu h100 --format json");
  REQUIRE(result.exit_code == 0);
  const json report = json::parse(result.out);
  CHECK(report.at("schema") == "roofline.op-gemm.v1");
  CHECK(report.at("results").at("gemm").at(0).at("time_us").get<double>() == Approx(138.911).epsilon(1e-5));
  CHECK(result.err.empty());
}

TEST_CASE("op gemv prints AI 1.00 for the book's 8192^2 decode GEMV") {
  const CommandResult result = op("gemv --m 8192 --k 8192 --gpu h100");
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Contains("1.00"));
  CHECK_THAT(result.out, Contains("HBM bandwidth"));
}

TEST_CASE("every numeric flag sweeps: lists and ranges, one CSV row per point") {
  const CommandResult gemm = op("gemm --m 1024,2048,4096 --n 1024 --k 1024:4096:+1024 --gpu h100,h200 --format csv");
  REQUIRE(gemm.exit_code == 0);
  CHECK(count_lines(gemm.out) == 1 + 2 * 3 * 4);
  const CommandResult attention =
      op("attention --heads 32 --kv-heads 8 --head-dim 128 --seq 1024:32768:x2 --causal --gpu h100 --format csv");
  REQUIRE(attention.exit_code == 0);
  CHECK(count_lines(attention.out) == 1 + 6 * 2);
  CHECK(attention.out.starts_with("gpu,impl,batch,heads,kv_heads,head_dim,head_dim_v,seq,kv_seq,causal,"));
  // CSV notes go to stderr, never into the data.
  CHECK_THAT(attention.err, Contains("roofline: note: causal"));
  CHECK(op("norm --rows 1,2 --hidden 4096:8192:x2 --gpu h100 --format csv").out.size() > 0);
  CHECK(count_lines(op("elementwise --elements 1e3:1e6:x10 --fn add --gpu h100 --format csv").out) == 1 + 4);
  CHECK(count_lines(op("softmax --rows 4096 --cols 1:8 --gpu all --format csv").out) > 8);
  CHECK(count_lines(op("fuse --chain linear,gelu --rows 1:4 --hidden 4096 --gpu h100 --format csv").out) == 5);
}

TEST_CASE("op attention --head-dim-v: a V narrower than Q and K (MLA expanded for prefill)") {
  const CommandResult result =
      op("attention --heads 1 --head-dim 192 --head-dim-v 128 --seq 1024 --causal --impl flash --gpu h100 "
         "--format json");
  REQUIRE(result.exit_code == 0);
  const json row = json::parse(result.out).at("results").at("attention").at(0);
  CHECK(row.at("head_dim_v") == 128);
  // 1024 x 1025 / 2 pairs x 2 (192 + 128) = 335,872,000 FLOPs; Q and K 1024 x 192 x 2 B each, V 1024 x 128
  // x 2 B read; O 1024 x 128 x 2 B written.
  CHECK(row.at("flops").get<double>() == 335872000.0);
  CHECK(row.at("read_bytes").get<double>() == 393216.0 + 393216.0 + 262144.0);
  CHECK(row.at("written_bytes").get<double>() == 262144.0);
  // Without it V is as wide as Q and K.
  const json same = json::parse(op("attention --heads 1 --head-dim 192 --seq 1024 --causal --impl flash --gpu h100 "
                                   "--format json")
                                    .out)
                        .at("results")
                        .at("attention")
                        .at(0);
  CHECK(same.at("head_dim_v") == 192);
}

TEST_CASE("what-ifs (--set) and efficiency work on op commands") {
  const CommandResult result =
      op("gemv --m 8192 --k 8192 --gpu h100 --set hbm_bandwidth_tbps=8 "
         "--efficiency compute=0.8,memory=0.9 --format json");
  REQUIRE(result.exit_code == 0);
  const json row = json::parse(result.out).at("results").at("gemv").at(0);
  // 134,250,496 B / 8 TB/s = 16.78 us; / 0.9 = 18.65 us.
  CHECK(row.at("time_us").get<double>() == Approx(16.781).epsilon(1e-4));
  CHECK(row.at("expected_time_us").get<double>() == Approx(18.646).epsilon(1e-4));
}

TEST_CASE("op bad input: exit 2, one line on stderr, nothing on stdout") {
  for (const char* args : {
           "gemm --m 0 --n 1 --k 1 --gpu h100",
           "gemm --m -4 --n 1 --k 1 --gpu h100",
           "gemv --m 8192 --k 0 --gpu h100",
           "attention --heads 0 --head-dim 128 --seq 1 --gpu h100",
           "softmax --rows 1 --cols -1 --gpu h100",
           "gemm --m 4294967296 --n 4294967296 --k 2 --gpu h100",
           "attention --heads 1 --head-dim 128 --seq 3000000000 --gpu h100",
           "elementwise --elements 4611686018427387904 --inputs 2 --gpu h100",
           "gemm --m 1 --n 1 --k 1 --dtype fp9 --gpu h100",
           "gemm --m 1 --n 1 --k 1 --weights int3 --gpu h100",
           "attention --heads 1 --head-dim 128 --seq 1 --kv fp7 --gpu h100",
           "fuse --chain '' --rows 1 --hidden 1 --gpu h100",
           "fuse --chain linear,gleu --rows 1 --hidden 1 --gpu h100",
           "attention --heads 32 --kv-heads 5 --head-dim 128 --seq 8 --gpu h100",
           "attention --heads 1 --head-dim 128 --seq 8 --kv-seq 4 --causal --gpu h100",
           "attention --heads 1 --head-dim 128 --seq 8 --impl fast --gpu h100",
           "attention --heads 1 --head-dim 192 --head-dim-v 0 --seq 8 --gpu h100",
           "gemm --m 1:400 --n 1:300 --k 1 --gpu h100 --format json",
           "gemm --m 8:4 --n 1 --k 1 --gpu h100",
           "gemm --m 1 --n 1 --k 1 --gpu h100 --efficiency compute=2",
           "gemm --m 1 --n 1 --k 1 --gpu h1000",
           "norm --rows 1 --hidden 1 --kind batchnorm --gpu h100",
       }) {
    INFO(args);
    const CommandResult result = op(args);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(count_lines(result.err) == 1);
  }
  CHECK_THAT(op("gemm --m 4294967296 --n 4294967296 --k 2 --gpu h100").err, Contains("does not fit in 64 bits"));
  CHECK_THAT(op("fuse --chain '' --rows 1 --hidden 1 --gpu h100").err, Contains("--chain: the chain is empty"));
  CHECK_THAT(op("gemm --m 0 --n 1 --k 1 --gpu h100").err, Contains("--m"));
}

TEST_CASE("op CSV to -o is written whole or not at all") {
  const auto dir = std::filesystem::temp_directory_path() / ("roofline-op-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto file = dir / "sweep.csv";
  REQUIRE(op("gemm --m 1:100 --n 1:100 --k 64 --gpu h100 --format csv -o " + file.string()).exit_code == 0);
  CHECK(count_lines(slurp(file)) == 10001);
  // A failing run leaves the earlier file and no temporary behind.
  CHECK(op("gemm --m 1:100 --n 0 --k 64 --gpu h100 --format csv -o " + file.string()).exit_code == 2);
  CHECK(count_lines(slurp(file)) == 10001);
  std::size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) entries += entry.is_regular_file() ? 1 : 0;
  CHECK(entries == 1);
  std::filesystem::remove_all(dir);
}
