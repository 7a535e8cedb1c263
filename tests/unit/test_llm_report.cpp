// The figures `roofline llm` and `roofline plan` report, from the library functions that compute
// them: the batch that fits, what each weight/KV format buys at the same deployment (the levers),
// and the planner's rejections by reason, derived by hand in each test.
#include "catch.hpp"
#include "llm_fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/llm_report.hpp"
#include "roofline/llm/plan.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

// Llama 3.1 8B on one H100 (80 GB), bf16, every request 4096 tokens long.
LlmReport llama_8b_on_h100(std::int64_t batch) {
  const ModelSpec& model = llm_fixture::models().find("llama-3.1-8b");
  const GpuSpec& gpu = llm_fixture::gpus().find("h100");
  const DeploymentConfig config;  // TP 1, PP 1, bf16 everywhere, 3 GB reserve, 2 GB workspace
  return llm_report(model, gpu, shard(model, 1, 1), config, {4096, 4096, batch, true}, {});
}

}  // namespace

TEST_CASE("llm report: Llama 3.1 8B in bf16 on one H100 holds 109 requests of 4096 tokens") {
  // Elements per layer: attention 4096 x 4096 (Q) + 2 x 4096 x 1024 (K, V) + 4096 x 4096 (O) =
  // 41,943,040; gated FFN 3 x 4096 x 14336 = 176,160,768; norms 2 x 4096. 32 layers, the final
  // norm 4096, embedding and head 128256 x 4096 each: 8,030,261,248 elements = 16,060,522,496 B.
  // KV: 2 x 8 heads x 128 x 2 B x 32 layers = 131,072 B per token, 536,870,912 B per request.
  // Free: 80e9 - 16,060,522,496 - 3e9 - 2e9 = 58,939,477,504 B: floor(109.78) = 109 requests.
  const LlmReport r = llama_8b_on_h100(0);
  CHECK(r.memory.heaviest().weights.total() == 16'060'522'496.0);
  CHECK(r.kv_bytes_per_token_gpu == 131'072.0);
  CHECK(r.max_requests == 109);
  CHECK(r.batch == 109);  // batch 0: as many as fit
  // One replica of one GPU: tokens/s = batch / TPOT.
  CHECK(r.tokens_per_s == Approx(109.0 / r.decode.time_s));
  // A decode step reads every weight once: at least 16.06 GB / 3.35 TB/s = 4.794 ms.
  CHECK(r.decode.time_s > 16'060'522'496.0 / 3.35e12);

  CHECK_THROWS_WITH(llama_8b_on_h100(110), Contains("--batch 110: only 109 requests of 4096 tokens fit"));
}

TEST_CASE("llm report: the levers, every weight format with a bf16 and an fp8 KV cache") {
  const LlmReport r = llama_8b_on_h100(0);
  REQUIRE(r.levers.size() == 10);
  const DType weights[] = {DType::bf16, DType::fp8_e4m3, DType::int8, DType::int4_g128, DType::nvfp4};
  for (std::size_t i = 0; i < r.levers.size(); ++i) {
    CHECK(r.levers[i].weights == weights[i / 2]);
    CHECK(r.levers[i].kv == (i % 2 == 0 ? DType::bf16 : DType::fp8_e4m3));
  }
  // The first row is the deployment itself.
  CHECK(r.levers[0].max_requests == 109);
  CHECK(*r.levers[0].batch == 109);
  CHECK(*r.levers[0].tpot_s == r.decode.time_s);

  // fp8 weights and KV: the 6,979,321,856 matrix elements take 1 B each; norms (266,240) and the
  // embedding and head (1,050,673,152) stay bf16: 9,081,200,640 B. An fp8 request holds
  // 268,435,456 B of KV; free 80e9 - 9,081,200,640 - 5e9 = 65,918,799,360 B: floor(245.56) = 245.
  const FormatLever& fp8 = r.levers[3];
  CHECK(fp8.weight_bytes_per_gpu == 9'081'200'640.0);
  CHECK(fp8.max_requests == 245);
  REQUIRE(fp8.batch);
  CHECK(*fp8.batch == 245);
  // One GPU: tokens/s per GPU = batch / TPOT.
  CHECK(*fp8.tokens_per_s_per_gpu == Approx(245.0 / *fp8.tpot_s));
  CHECK(fp8.bottleneck.find("math") == std::string::npos);  // the H100 multiplies fp8 itself

  // int4_g128 is widened to bf16 before the multiply (W4A16), and the H100 has no fp4 rate.
  CHECK_THAT(r.levers[6].bottleneck, Contains("(bf16 math)"));
  CHECK_THAT(r.levers[8].bottleneck, Contains("(bf16 math)"));
}

TEST_CASE("llm report: a lever's batch is the one asked for, or what fits") {
  // --batch 100: the bf16 deployment holds 109, so 100; fp8/fp8 holds 245, so 100 again.
  const LlmReport r = llama_8b_on_h100(100);
  CHECK(*r.levers[0].batch == 100);
  CHECK(*r.levers[3].batch == 100);

  // Llama 3.1 70B with int4_g128 weights fits one H100, its bf16 weights (141 GB) do not.
  const ModelSpec& model = llm_fixture::models().find("llama-3.1-70b");
  DeploymentConfig config;
  config.weights = DType::int4_g128;
  const LlmReport big =
      llm_report(model, llm_fixture::gpus().find("h100"), shard(model, 1, 1), config, {1024, 1024, 1, true}, {});
  CHECK(big.levers[0].bottleneck == "weights do not fit");
  CHECK_FALSE(big.levers[0].batch);
  CHECK_FALSE(big.levers[0].tpot_s);
  CHECK(big.levers[6].batch == 1);  // int4_g128 with a bf16 KV cache: the deployment itself
}

TEST_CASE("llm report: op counts of a step, and how many a calibration set") {
  StepTime step;
  step.groups.push_back({"layer", 80, {StepOp{}, StepOp{}, StepOp{}}});
  step.groups.push_back({"embedding + head", 1, {StepOp{}}});
  step.groups[0].ops[1].calibration = OpCalibration{true, "gemv.bf16", 0.8, false, ""};
  step.groups[0].ops[2].calibration = OpCalibration{false, "", 0, false, "no table"};
  CHECK(op_count(step) == 4);             // ops of each group once, whatever its count
  CHECK(calibrated_op_count(step) == 1);  // a calibration that was not applied does not count
}

TEST_CASE("plan: rejected candidates counted by reason, in name order, the first of each the example") {
  PlanResult result;
  const auto rejected = [&](std::string gpu, int tp, Rejection why, std::string reason) {
    PlanCandidate c;
    c.gpu = std::move(gpu);
    c.tp = tp;
    c.weights = DType::fp8_e4m3;
    c.rejection = why;
    c.reason = std::move(reason);
    result.rejected.push_back(c);
  };
  rejected("v100", 1, Rejection::format, "v100 has no fp8_e4m3 tensor rate");
  rejected("h100", 3, Rejection::sharding, "--tp 3 does not divide the 32 attention heads of llama-3.1-8b");
  rejected("a100-80gb", 1, Rejection::format, "a100-80gb has no fp8_e4m3 tensor rate");
  const std::vector<RejectionCount> summary = rejection_summary(result);
  REQUIRE(summary.size() == 2);
  CHECK(summary[0].reason == "format");  // "format" sorts before "sharding"
  CHECK(summary[0].count == 2);
  CHECK(summary[0].example == "v100 TP 1 PP 1 fp8_e4m3/bf16: v100 has no fp8_e4m3 tensor rate");
  CHECK(summary[1].reason == "sharding");
  CHECK(summary[1].count == 1);
  CHECK(summary[1].example ==
        "h100 TP 3 PP 1 fp8_e4m3/bf16: --tp 3 does not divide the 32 attention heads of llama-3.1-8b");
}
