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
