// End-to-end tests of llm, train and plan: the real binary, its exit codes and its JSON.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const char* plan_70b =
    "plan --model llama-3.1-70b --gpus h100,h200,a100-sxm4-80gb --rps 5 --prompt 2048 --output 256 --tpot-ms 50 "
    "--ttft-ms 2000 --price h100=2.5,h200=3.5 --price a100=1.5";

}  // namespace

TEST_CASE("llm: Llama 3 70B, FP8 weights and KV, TP 8 on H100, 4096 tokens") {
  const json r = json_report("llm --model llama-3-70b --gpu h100 --tp 8 --weights fp8 --kv fp8 --context 4096");
  CHECK(r.at("schema") == "roofline.llm.v1");
  const json& res = r.at("results");
  // 2 x 80 layers x 8 KV heads x 128 x 1 B = 163,840 B per token; x 4096 = 671,088,640 B per request
  // (the whole model); one GPU holds one KV head: 83,886,080 B.
  CHECK(res.at("kv_per_token_model_bytes").get<double>() == 163840.0);
  CHECK(res.at("kv_per_request_model_bytes").get<double>() == 671088640.0);
  CHECK(res.at("kv_per_request_gpu_bytes").get<double>() == 83886080.0);
  // 9,084,354,560 B of weights (unit test); (80e9 - 9.08e9 - 5e9) / 83,886,080 = 785.8.
  CHECK(res.at("weights_per_gpu_bytes").get<double>() == 9084354560.0);
  CHECK(res.at("max_requests") == 785);
  CHECK(res.at("batch") == 785);  // --batch max is the default
  CHECK(res.at("decode_bottleneck").is_string());
  CHECK(res.at("tpot_ms").get<double>() > 0);
  // Every op row of the decode step carries FLOPs, bytes, bound and time.
  for (const json& op : res.at("decode")) {
    CHECK(op.at("time_us").get<double>() >= 0);
    CHECK(op.at("bound").is_string());
  }
}

TEST_CASE("llm: the levers table shows what each format buys") {
  const json r = json_report("llm --model llama-3.1-70b --gpu h100 --tp 8 --context 4096 --batch 1");
  const json& levers = r.at("results").at("levers");
  REQUIRE(levers.size() == 10);
  double bf16 = 0;
  double fp8 = 0;
  for (const json& row : levers) {
    if (row.at("kv") != "bf16") continue;
    if (row.at("weights") == "bf16") bf16 = row.at("tpot_ms").get<double>();
    if (row.at("weights") == "fp8_e4m3") fp8 = row.at("tpot_ms").get<double>();
  }
  // At batch 1 decode streams the weights: halving their bytes nearly halves the time.
  CHECK(fp8 < 0.75 * bf16);
}

TEST_CASE("llm: a batch that does not fit, weights that do not fit, TP that does not divide: exit 2") {
  const CommandResult batch = roofline("llm --model llama-3.1-70b --gpu h100 --tp 8 --context 4096 --batch 100000");
  CHECK(batch.exit_code == 2);
  CHECK_THAT(batch.err, Contains("--batch 100000: only 341 requests of 4096 tokens fit"));
  const CommandResult weights = roofline("llm --model llama-3.1-405b --gpu h100 --tp 8 --context 4096");
  CHECK(weights.exit_code == 2);
  CHECK_THAT(weights.err, Contains("does not fit on 8 x h100-sxm"));
  const CommandResult tp = roofline("llm --model llama-3.1-70b --gpu h100 --tp 3 --context 4096");
  CHECK(tp.exit_code == 2);
  CHECK_THAT(tp.err, Contains("--tp 3 does not divide the 64 attention heads of llama-3.1-70b"));
  const CommandResult model = roofline("llm --model llama-9 --gpu h100 --context 4096");
  CHECK(model.exit_code == 2);
  CHECK_THAT(model.err, Contains("unknown model 'llama-9'"));
  // Absurd sizes are refused before any arithmetic could overflow.
  const CommandResult context = roofline("llm --model llama-3.1-8b --gpu h100 --context 100000000");
  CHECK(context.exit_code == 2);
  CHECK_THAT(context.err, Contains("--context 100000000: more than the 16777216 roofline models"));
  for (const CommandResult& r : {batch, weights, tp, model, context}) CHECK(r.out.empty());
}

TEST_CASE("llm --hf-config reads a config.json, and a malformed one names the file and key") {
  const auto dir = scratch("hf");
  const auto good = dir / "config.json";
  std::ofstream(good) << R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32768,
      "max_position_embeddings": 32768, "sliding_window": null, "tie_word_embeddings": false})";
  const json r = json_report("llm --hf-config " + good.string() + " --gpu h100 --context 8192 --batch 8");
  CHECK(r.at("inputs").at("model").at("file") == "hf-config:" + good.string());
  // No window: all 8192 tokens cached; 2 x 32 x 8 x 128 x 2 B x 8192 = 1,073,741,824 B.
  CHECK(r.at("results").at("kv_per_request_model_bytes").get<double>() == 1073741824.0);

  const auto broken = dir / "broken.json";
  std::ofstream(broken) << R"({"model_type": "llama", "hidden_size": 4096,)";
  const CommandResult bad = roofline("llm --hf-config " + broken.string() + " --gpu h100 --context 1024");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains(broken.string() + ": malformed JSON"));
  const auto missing = dir / "missing.json";
  std::ofstream(missing) << R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2})";
  const CommandResult key = roofline("llm --hf-config " + missing.string() + " --gpu h100 --context 1024");
  CHECK(key.exit_code == 2);
  CHECK_THAT(key.err, Contains(missing.string() + ": key 'vocab_size' is missing"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a models directory adds a model and replaces a preset of the same id") {
  const auto dir = scratch("models");
  json doc = json::parse(slurp(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "models/llama-3.1-8b.json"));
  doc["id"] = "tiny";
  doc["aliases"] = json::array();
  doc["layers"] = 2;
  std::ofstream(dir / "tiny.json") << doc.dump();
  const json r = json_report("train --model tiny --models-dir " + dir.string() + " --gpu h100 --gpus 1");
  CHECK(r.at("inputs").at("model").at("layers") == 2);
  doc["id"] = "llama-3.1-8b";
  std::ofstream(dir / "tiny.json") << doc.dump();
  const CommandResult replaced =
      roofline("train --model llama-3.1-8b --models-dir " + dir.string() + " --gpu h100 --gpus 1 --format json");
  CHECK(replaced.exit_code == 0);
  CHECK_THAT(replaced.err, Contains("replaces bundled:models/llama-3.1-8b.json"));
  std::ofstream(dir / "tiny.json") << R"({"schema": "roofline.model.v1", "id": "bad"})";
  const CommandResult invalid = roofline("train --model bad --models-dir " + dir.string() + " --gpu h100 --gpus 1");
  CHECK(invalid.exit_code == 2);
  CHECK_THAT(invalid.err, Contains("tiny.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("train: the book's 70B example, and suggestions when it does not fit") {
  const json fits = json_report("train --model llama-3.1-70b --gpu h100 --gpus 64 --tp 8 --zero 3");
  CHECK(fits.at("results").at("fits") == true);
  const json no = json_report("train --model llama-3.1-70b --gpu h100 --gpus 8 --tp 8");
  CHECK(no.at("results").at("fits") == false);
  CHECK_THAT(no.at("results").at("suggestions").at(0).get<std::string>(), Contains("--gpus 16"));
}

TEST_CASE("plan: a chosen configuration, runners-up and every rejected candidate with a reason") {
  const json r = json_report(plan_70b);
  CHECK(r.at("schema") == "roofline.plan.v1");
  const json& res = r.at("results");
  const json& chosen = res.at("chosen");
  CHECK(chosen.at("usd_per_million_output_tokens").get<double>() > 0);
  CHECK(chosen.at("tpot_ms").get<double>() <= 50.0);
  CHECK(chosen.at("ttft_ms").get<double>() <= 2000.0);
  for (const json& other : res.at("runners_up")) {
    CHECK(other.at("usd_per_million_output_tokens").get<double>() >=
          chosen.at("usd_per_million_output_tokens").get<double>());
  }
  // 3 GPUs x 4 TP x 3 PP x 4 weight formats x 2 KV formats.
  CHECK(res.at("counts").at("configurations") == 288);
  CHECK(res.at("counts").at("feasible").get<std::size_t>() + res.at("rejected").size() == 288);
  for (const json& c : res.at("rejected")) CHECK_FALSE(c.at("reason").get<std::string>().empty());
  // A100 has no fp8 tensor rate: its fp8 candidates are rejected for the format.
  bool a100_fp8 = false;
  for (const json& c : res.at("rejected")) {
    a100_fp8 = a100_fp8 ||
               (c.at("gpu") == "a100-sxm4-80gb" && c.at("weights") == "fp8_e4m3" && c.at("reason_kind") == "format");
  }
  CHECK(a100_fp8);
}

TEST_CASE("plan: bad input exits 2") {
  const CommandResult nowhere = roofline(
      "plan --model llama-3.1-405b --gpus rtx-4090 --rps 1 --prompt 1024 --output 128 --tpot-ms 100 "
      "--ttft-ms 5000 --price all=1 --tp 1,2 --pp 1");
  CHECK(nowhere.exit_code == 2);
  CHECK_THAT(nowhere.err, Contains("llama-3.1-405b: no configuration fits and meets the targets"));
  CHECK(nowhere.out.empty());
  const CommandResult price = roofline(
      "plan --model llama-3.1-8b --gpus h100,h200 --rps 1 --prompt 1024 --output 128 --tpot-ms 100 "
      "--ttft-ms 5000 --price h100=2");
  CHECK(price.exit_code == 2);
  CHECK_THAT(price.err, Contains("no price for h200-sxm"));
  const CommandResult rps = roofline(
      "plan --model llama-3.1-8b --gpus h100 --rps 1e12 --prompt 1024 --output 128 --tpot-ms 100 "
      "--ttft-ms 5000 --price all=2");
  CHECK(rps.exit_code == 2);
  CHECK_THAT(rps.err, Contains("--rps"));
  const CommandResult targets = roofline(
      "plan --model llama-3.1-8b --gpus h100 --rps 1 --prompt 1024 --output 128 --tpot-ms 0 "
      "--ttft-ms 5000 --price all=2");
  CHECK(targets.exit_code == 2);
}

TEST_CASE("llm and plan --calibration: calibrated op times from the H200 tables, the roofline beside them") {
  const std::filesystem::path source = ROOFLINE_SOURCE_DIR;
  const auto dir = scratch("calibration");
  const std::string cal = (dir / "h200.cal.json").string();
  REQUIRE(roofline("calibrate --measured " + (source / "tests/data/bench/h200-memory-2026-11-30-run2.json").string() +
                   " --measured " + (source / "tests/data/bench/h200-compute-2026-11-30-run2.json").string() + " -o " +
                   cal)
              .exit_code == 0);

  const json bare = json_report("llm --model llama-3.1-70b --gpu h200 --tp 2 --context 4096 --batch 16");
  const json r =
      json_report("llm --model llama-3.1-70b --gpu h200 --tp 2 --context 4096 --batch 16 --calibration " + cal);
  CHECK(r.at("inputs").at("deployment").at("calibration") == cal);
  CHECK(bare.at("inputs").at("deployment").at("calibration").is_null());
  const json& res = r.at("results");
  CHECK(res.at("calibration").at("file") == cal);
  CHECK(res.at("calibration").at("gpu") == "h200-sxm");
  // The roofline figures are the uncalibrated report's; measured kernels are slower than it.
  CHECK(res.at("tpot_roofline_ms").get<double>() == Approx(bare.at("results").at("tpot_ms").get<double>()));
  CHECK(res.at("ttft_roofline_ms").get<double>() == Approx(bare.at("results").at("ttft_ms").get<double>()));
  CHECK(res.at("tpot_ms").get<double>() > res.at("tpot_roofline_ms").get<double>());
  CHECK(res.at("ttft_ms").get<double>() > res.at("ttft_roofline_ms").get<double>());
  CHECK(res.at("tokens_per_s").get<double>() < res.at("tokens_per_s_roofline").get<double>());
  CHECK_FALSE(bare.at("results").contains("tpot_roofline_ms"));
  // Per op: the table used (or why none), the efficiency, and time = roofline / efficiency.
  int covered = 0;
  for (const json& op : res.at("decode")) {
    INFO(op.at("name"));
    if (op.at("calibration_table").is_null()) {
      CHECK(op.at("time_us").get<double>() == Approx(op.at("roofline_us").get<double>()));
      CHECK_FALSE(op.at("calibration_note").get<std::string>().empty());
      // Decode attention has its own table, learnt from the memory suite's decode-attention
      // benchmark, which these runs predate.
      if (op.at("name") == "attention") {
        CHECK_THAT(op.at("calibration_note").get<std::string>(), Contains("attention.decode.bf16.d128"));
      }
      continue;
    }
    ++covered;
    CHECK(op.at("time_us").get<double>() ==
          Approx(op.at("roofline_us").get<double>() / op.at("efficiency").get<double>()));
    if (op.at("name") == "qkv_proj") CHECK(op.at("calibration_table") == "gemv.bf16");
    if (op.at("name") == "attention") FAIL("decode attention has no table in these runs");
    if (op.at("name") == "attn_allreduce") FAIL("the all-reduce keeps the link model");
  }
  CHECK(covered == res.at("calibration").at("decode_ops_calibrated").get<int>());
  CHECK(covered > 0);
  const std::string notes = r.at("notes").dump();
  CHECK_THAT(notes, Contains("calibrated with " + cal));

  // The planner: candidates timed with calibrated times, the roofline's in the JSON beside them.
  const json p = json_report(
      "plan --model llama-3.1-70b --gpus h200 --rps 5 --prompt 2048 --output 256 --tpot-ms 50 --ttft-ms 2000 "
      "--price all=3 --calibration " +
      cal);
  const json& chosen = p.at("results").at("chosen");
  CHECK(chosen.at("tpot_ms").get<double>() > chosen.at("tpot_roofline_ms").get<double>());
  CHECK(chosen.at("ttft_ms").get<double>() > chosen.at("ttft_roofline_ms").get<double>());
  CHECK_THAT(p.at("notes").dump(), Contains("ranked with calibrated times"));
  const json mixed = json_report(
      "plan --model llama-3.1-70b --gpus h200,h100 --rps 5 --prompt 2048 --output 256 --tpot-ms 50 --ttft-ms 2000 "
      "--price all=3 --calibration " +
      cal);
  CHECK_THAT(mixed.at("notes").dump(), Contains("h100-sxm keep roofline times"));

  // --efficiency and --calibration both set the expected time; a broken file names the key.
  const CommandResult both =
      roofline("llm --model llama-3.1-8b --gpu h200 --context 1024 --efficiency memory=0.8 --calibration " + cal);
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Contains("give one of them"));
  std::ofstream(dir / "broken.json") << "{}";
  const CommandResult broken = roofline(
      "plan --model llama-3.1-8b --gpus h200 --rps 1 --prompt 1024 --output 128 --tpot-ms 100 --ttft-ms "
      "5000 --price all=2 --calibration " +
      (dir / "broken.json").string());
  CHECK(broken.exit_code == 2);
  CHECK_THAT(broken.err, Contains("broken.json"));
  CHECK(broken.out.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("llm and plan --calibration with op tables and measured collectives: one file sets both") {
  // The committed H200 calibration: the kernel tables of H200 run 2 and the collectives measured on
  // two H200s (docs/results/2026-11-30-h200x2-collectives/README.md).
  const std::string cal = (std::filesystem::path(ROOFLINE_SOURCE_DIR) /
                           "docs/results/2026-11-30-h200x2-collectives/calibration-h200-with-collectives.json")
                              .string();
  const std::string deployment = "llm --model llama-3.1-70b --gpu h200 --tp 2 --context 8192 --batch 32 --no-levers";
  const json bare = json_report(deployment);
  const json r = json_report(deployment + " --calibration " + cal);
  const auto decode_op = [](const json& from, const std::string& name) {
    for (const json& op : from.at("results").at("decode")) {
      if (op.at("name") == name) return op;
    }
    FAIL("no decode op " << name);
    return json();
  };

  // The op tables: the QKV GEMV of one GPU (5120 rows of 8192, batch 32, bf16) moves weights
  // 2 x 5120 x 8192 = 83,886,080 B + x 32 x 8192 x 2 = 524,288 B + y 32 x 5120 x 2 = 327,680 B =
  // 84,738,048 B: 17.654 us at 4.8 TB/s, the bare report's time; calibrated, that over the
  // efficiency the gemv.bf16 table gives.
  const json qkv = decode_op(r, "qkv_proj");
  CHECK(decode_op(bare, "qkv_proj").at("time_us").get<double>() == Approx(84738048.0 / 4.8e12 * 1e6));
  CHECK(qkv.at("roofline_us").get<double>() == Approx(84738048.0 / 4.8e12 * 1e6));
  REQUIRE(qkv.at("calibration_table") == "gemv.bf16");
  CHECK(qkv.at("efficiency").get<double>() < 1);
  CHECK(qkv.at("time_us").get<double>() ==
        Approx(qkv.at("roofline_us").get<double>() / qkv.at("efficiency").get<double>()));

  // The collectives: the decode all-reduce of 32 x 8192 x 2 B = 524,288 B over 2 GPUs. The ring
  // model: 2 steps x 1 us + 2 x 1/2 x 524,288 B / 450e9 B/s = 3.165 us. Measured: 512 KiB is a
  // size of the suite, so the table gives its median, 23.553 us (allreduce.fp32.512KiB).
  CHECK(decode_op(bare, "attn_allreduce").at("time_us").get<double>() == Approx(2 + 524288.0 / 450e9 * 1e6));
  const json allreduce = decode_op(r, "attn_allreduce");
  CHECK(allreduce.at("time_us").get<double>() == Approx(23.553).epsilon(1e-4));
  CHECK_THAT(allreduce.at("shape").get<std::string>(), Contains("(measured)"));
  CHECK(allreduce.at("calibration_table").is_null());  // the op tables do not time transfers
  CHECK_THAT(allreduce.at("calibration_note").get<std::string>(), Contains("measured collectives"));

  const std::string notes = r.at("notes").dump();
  CHECK_THAT(notes, Contains("measured collectives of " + cal));
  CHECK_THAT(notes, Contains("calibrated with " + cal));

  // plan reads the same file for both: its notes name the collectives and the calibrated ranking.
  const json p = json_report(
      "plan --model llama-3.1-70b --gpus h200 --tp 2 --rps 5 --prompt 2048 --output 256 --tpot-ms 50 "
      "--ttft-ms 2000 --price all=3 --calibration " +
      cal);
  const std::string plan_notes = p.at("notes").dump();
  CHECK_THAT(plan_notes, Contains("--calibration " + cal + ": candidates on h200-sxm charge TP/PP communication"));
  CHECK_THAT(plan_notes, Contains("ranked with calibrated times"));
}
