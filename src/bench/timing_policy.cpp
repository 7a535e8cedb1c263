// How the harness times a case: the policy, its warm-up and its samples.
#include <algorithm>
#include <cmath>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {

TimingPolicy timing_policy(bool quick, std::optional<int> samples) {
  TimingPolicy policy;
  if (quick) {
    // --quick checks every kernel and gives rough figures fast (also under compute-sanitizer).
    policy.samples = 5;
    policy.min_warmup_launches = 2;
    policy.min_warmup_s = 0.001;
    policy.target_sample_s = 0.0002;
    policy.max_launches_per_sample = 100;
    policy.max_case_s = 0.5;
  }
  if (samples) {
    if (*samples < 1 || *samples > 100000) throw InputError("--samples: must be between 1 and 100000");
    policy.samples = *samples;
  }
  return policy;
}

int warmup_launches(const TimingPolicy& policy, double first_launch_s) {
  const double first = std::max(first_launch_s, 1e-7);
  const double wanted =
      std::max(std::ceil(policy.min_warmup_s / first), static_cast<double>(policy.min_warmup_launches));
  const double cap = std::max(1.0, std::floor(0.25 * policy.max_case_s / first));
  return static_cast<int>(std::clamp(wanted, 1.0, cap));
}

SamplePlan sample_plan(const TimingPolicy& policy, double launch_s, int rotation) {
  const double launch = std::max(launch_s, 1e-7);
  rotation = std::max(rotation, 1);
  SamplePlan plan;
  plan.batch = static_cast<int>(
      std::clamp(std::ceil(policy.target_sample_s / launch), 1.0, static_cast<double>(policy.max_launches_per_sample)));
  if (rotation > 1) plan.batch = std::max(plan.batch, rotation) / rotation * rotation;  // whole rotations
  const double fit = std::floor(0.75 * policy.max_case_s / (launch * plan.batch));
  plan.samples = static_cast<int>(std::clamp(fit, static_cast<double>(std::min(policy.min_samples, policy.samples)),
                                             static_cast<double>(policy.samples)));
  return plan;
}

}  // namespace roofline::bench
