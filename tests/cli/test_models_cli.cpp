// --model end to end: Hugging Face ids in a local cache, directories, stdin, the context limit and
// the checkpoint's weight format (docs/llm.md, "Naming a model").
#include <algorithm>
#include <filesystem>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;

namespace {

const std::filesystem::path hf_data = std::filesystem::path(ROOFLINE_SOURCE_DIR) / "tests" / "data" / "hf";

std::string with_cache(const std::string& args) {
  return "HF_HUB_CACHE=" + (hf_data / "cache").string() + " HF_HOME= HOME=/nonexistent " + ROOFLINE_BINARY + " " + args;
}

bool has_note(const nlohmann::json& report, const std::string& text) {
  return std::any_of(report.at("notes").begin(), report.at("notes").end(),
                     [&](const nlohmann::json& n) { return n.get<std::string>().find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("hardening II #13: llm --prompt-tokens longer than --context, and a context beyond the model's, exit 2") {
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 4096 --prompt-tokens 5000"),
                   "--prompt-tokens 5000: longer than --context 4096");
  // Llama 3.1: max_position_embeddings 131,072.
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 200000"),
                   "--context 200000: more than the 131072 tokens llama-3.1-8b supports");
  const nlohmann::json accepted =
      json_report("llm --model llama-3.1-8b --gpu h100 --context 200000 --allow-long-context");
  CHECK(has_note(accepted, "accepted by --allow-long-context"));
  // gpt-oss-20b: yarn factor 32 x 4,096 original positions = 131,072.
  expect_bad_input(run_command(with_cache("llm --model openai/gpt-oss-20b --gpu h100 --context 131073")),
                   "more than the 131072 tokens openai/gpt-oss-20b supports");
}

TEST_CASE("llm: a Hugging Face id ORG/NAME is read from the local cache, never the network") {
  const CommandResult run =
      run_command(with_cache("llm --model openai/gpt-oss-20b --gpu h100 --context 8192 --format json"));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(run.out);
  CHECK(report["inputs"]["model"]["id"] == "openai/gpt-oss-20b");
  // The checkpoint's mxfp4 experts are the default weight format, said in a note.
  CHECK(has_note(report, "weights: the checkpoint's, quantization_config mxfp4"));
  // The pattern in the model's description: sliding 128 and full, alternating.
  CHECK(report["inputs"]["model"]["attention"]["layers"][0]["attention"] == "sliding 128");
  CHECK(report["inputs"]["model"]["attention"]["layers"].size() == 24);

  const CommandResult pinned = run_command(
      with_cache("llm --model openai/gpt-oss-20b --revision 2222222222222222222222222222222222222222 --gpu h100 "
                 "--context 8192 --format json"));
  CHECK(pinned.exit_code == 0);
  expect_bad_input(run_command(with_cache("llm --model openai/gpt-oss-20b --revision 4444 --gpu h100 --context 8192")),
                   "has no config.json for revision '4444'");
  expect_bad_input(run_command(with_cache("llm --model meta-llama/Llama-3.1-8B-Instruct --gpu h100 --context 8192")),
                   "huggingface-cli download meta-llama/Llama-3.1-8B-Instruct config.json");
  expect_bad_input(roofline("llm --model llama-3.1-8b --revision main --gpu h100 --context 8192"),
                   "--revision: only with --model ORG/NAME");
  // A preset names the Hugging Face id it stands for as an alias.
  CHECK(json_report("llm --model meta-llama/Llama-3.1-8B --gpu h100 --context 8192")["inputs"]["model"]["id"] ==
        "llama-3.1-8b");
}

TEST_CASE("llm: a model named by its config.json, its directory, or stdin") {
  const std::string dir = (hf_data / "gemma-3-27b-it").string();
  const nlohmann::json from_dir = json_report("llm --model " + dir + " --gpu h200 --context 131072");
  const nlohmann::json from_file = json_report("llm --model " + dir + "/config.json --gpu h200 --context 131072");
  CHECK(from_dir["results"] == from_file["results"]);
  const CommandResult piped = run_command("cat " + dir + "/config.json | " + ROOFLINE_BINARY +
                                          " llm --model - --gpu h200 --context 131072 --format json");
  REQUIRE(piped.exit_code == 0);
  CHECK(nlohmann::json::parse(piped.out)["results"] == from_dir["results"]);
  expect_bad_input(roofline("llm --model ./no/such/config.json --gpu h200 --context 1024"),
                   "--model ./no/such/config.json: no such file or directory");
  // --weights overrides the checkpoint's format, and the report says so.
  const CommandResult overridden =
      run_command(with_cache("llm --model openai/gpt-oss-20b --weights bf16 --gpu h100 --context 8192 --format json"));
  REQUIRE(overridden.exit_code == 0);
  CHECK(has_note(nlohmann::json::parse(overridden.out), "weights: --weights bf16, not the checkpoint's"));
}

TEST_CASE("deepseek-v3 is planned in the fp8 its checkpoint ships, not in bf16") {
  const nlohmann::json report = json_report("llm --model deepseek-v3 --gpu h200 --tp 8 --context 4096");
  CHECK(report["inputs"]["weights"] == "fp8_e4m3");
  CHECK(has_note(report, "weight_block_size [128, 128]"));
}

TEST_CASE("serve, plan and train: one sequence beyond the model's context exits 2, --allow-long-context accepts") {
  // Llama 3.1: max_position_embeddings 131,072. serve: each request's prompt + output, as it arrives.
  expect_bad_input(roofline("serve --model llama-3.1-8b --gpu h100 --prompt-tokens 130000 --output-tokens 2000 "
                            "--requests 1"),
                   "request 0: prompt 130000 + output 2000 tokens is more than llama-3.1-8b's context of 131072");
  const nlohmann::json served = json_report(
      "serve --model llama-3.1-8b --gpu h100 --prompt-tokens 130000 --output-tokens 2000 --requests 1 "
      "--allow-long-context");
  CHECK(has_note(served, "--allow-long-context: requests beyond the 131072 tokens llama-3.1-8b supports"));
  CHECK(served["results"]["requests"] == 1);

  const std::string plan =
      "plan --model llama-3.1-8b --gpus h100 --rps 1 --tpot-ms 50 --ttft-ms 100000 --price h100=2 --closed-form ";
  expect_bad_input(roofline(plan + "--prompt-tokens 131000 --output-tokens 100"),
                   "--prompt-tokens + --output-tokens 131100: more than the 131072 tokens llama-3.1-8b supports");
  CHECK(roofline(plan + "--prompt-tokens 131000 --output-tokens 100 --allow-long-context").exit_code != 2);

  expect_bad_input(roofline("train --model llama-3.1-8b --gpu h100 --gpus 8 --seq 262144"),
                   "--seq 262144: more than the 131072 tokens llama-3.1-8b supports");
  CHECK(has_note(json_report("train --model llama-3.1-8b --gpu h100 --gpus 8 --seq 262144 --allow-long-context"),
                 "accepted by --allow-long-context"));
}

TEST_CASE("plan and train: the checkpoint's weight format, said in a note") {
  // gpt-oss-20b's checkpoint keeps attention in bf16 and its experts in mxfp4: plan tries that one
  // format where --weights is not given, and says so.
  const std::string plan =
      "plan --model openai/gpt-oss-20b --gpus h100 --rps 1 --prompt-tokens 512 --output-tokens 64 "
      "--tpot-ms 100 --ttft-ms 5000 --price h100=2 --tp 1 --pp 1 --closed-form --format json";
  const CommandResult chosen = run_command(with_cache(plan));
  INFO(chosen.err);
  REQUIRE(chosen.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(chosen.out);
  CHECK(has_note(report, "weights: the checkpoint's, quantization_config mxfp4"));
  CHECK(report["inputs"]["search"]["weights"] == nlohmann::json::array({"bf16"}));
  // 20.9B parameters of which 19.1B are mxfp4 experts: 13.75 GB, not bf16's 41.8 GB (test_hf_families).
  CHECK(report["results"]["chosen"]["weights_per_gpu_bytes"].get<double>() == Approx(13747853952.0).epsilon(1e-12));
  const CommandResult given = run_command(with_cache(plan + " --weights fp8"));
  REQUIRE(given.exit_code == 0);
  CHECK(has_note(nlohmann::json::parse(given.out), "weights: --weights fp8, tried as given; the checkpoint stores"));

  const CommandResult train =
      run_command(with_cache("train --model openai/gpt-oss-20b --gpu h100 --gpus 8 --seq 4096 --format json"));
  REQUIRE(train.exit_code == 0);
  CHECK(has_note(nlohmann::json::parse(train.out), "weights: the checkpoint stores quantization_config mxfp4"));
}

TEST_CASE("serve: gpt-oss-120b's KV cache in two groups, a block half the all-layers one") {
  // 18 sliding-128 and 18 full layers: two groups of 18 (tests/unit/test_kv_blocks.cpp); a block
  // of 16 tokens holds 18 layers x 2,048 B, 589,824 B, where one of every layer held 1,179,648.
  const nlohmann::json report = json_report("serve --model " + (hf_data / "gpt-oss-120b").string() +
                                            " --gpu h200 --prompt 1000 --output 8 --requests 4 --rate inf");
  CHECK(report.at("results").at("kv_cache").at("bytes_per_block_gpu").get<double>() == 589824.0);
  CHECK(has_note(report, "groups of 18 layers, 1 of sliding 128 (18 layers), 1 of full (18 layers)"));
}
