// How the harness times a case: the policy, its warm-up, its samples, when sampling stops, which
// samples are re-taken as throttled, and how the L2 is kept cold. Host code: the CUDA harness
// (src/bench/cuda/harness.cpp) calls it with real launches and NVML, the unit tests with their own.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {

TimingPolicy timing_policy(bool quick, const TimingFlags& flags) {
  TimingPolicy policy;
  if (quick) {
    // --quick checks every kernel and gives rough figures fast (also under compute-sanitizer):
    // a small fixed plan, no noise criterion.
    policy.samples = 5;
    policy.min_warmup_launches = 2;
    policy.min_warmup_s = 0.001;
    policy.target_sample_s = 0.0002;
    policy.max_launches_per_sample = 100;
    policy.max_case_s = 0.5;
    policy.max_noise.reset();
  }
  if (flags.samples) {
    if (*flags.samples < 1 || *flags.samples > 100000) throw InputError("--samples: must be between 1 and 100000");
    policy.samples = *flags.samples;
  }
  if (flags.min_samples) {
    if (*flags.min_samples < 1 || *flags.min_samples > 100000) {
      throw InputError("--min-samples: must be between 1 and 100000");
    }
    policy.min_samples = *flags.min_samples;
  }
  if (flags.min_time_s) {
    if (!(*flags.min_time_s >= 0 && *flags.min_time_s <= 3600)) {
      throw InputError("--min-time: must be between 0 and 3600 seconds");
    }
    policy.min_time_s = *flags.min_time_s;
    // A longer minimum than the budget would never be reached: the budget grows with it.
    policy.max_case_s = std::max(policy.max_case_s, *flags.min_time_s / 0.75);
  }
  if (flags.max_noise_pct) {
    if (!(*flags.max_noise_pct > 0 && *flags.max_noise_pct <= 100)) {
      throw InputError("--max-noise: must be a percentage above 0 and at most 100");
    }
    policy.max_noise = *flags.max_noise_pct / 100;
  }
  if (policy.min_samples > policy.samples) {
    if (flags.min_samples) {
      throw InputError(fmt::format("--min-samples: {} is more than the {} samples a case takes at most (--samples)",
                                   policy.min_samples, policy.samples));
    }
    policy.min_samples = policy.samples;  // a smaller --samples (or --quick) lowers the default minimum
  }
  policy.keep_throttled = flags.keep_throttled;
  return policy;
}

TimingPolicy timing_policy(bool quick, std::optional<int> samples) {
  return timing_policy(quick, TimingFlags{.samples = samples});
}

int warmup_launches(const TimingPolicy& policy, double first_launch_s) {
  const double first = std::max(first_launch_s, 1e-7);
  const double wanted =
      std::max(std::ceil(policy.min_warmup_s / first), static_cast<double>(policy.min_warmup_launches));
  const double cap = std::max(1.0, std::floor(0.25 * policy.max_case_s / first));
  return static_cast<int>(std::clamp(wanted, 1.0, cap));
}

SamplePlan sample_plan(const TimingPolicy& policy, double launch_s, int rotation, ColdL2 cold_l2) {
  const double launch = std::max(launch_s, 1e-7);
  rotation = std::max(rotation, 1);
  SamplePlan plan;
  plan.batch = static_cast<int>(
      std::clamp(std::ceil(policy.target_sample_s / launch), 1.0, static_cast<double>(policy.max_launches_per_sample)));
  if (rotation > 1) plan.batch = std::max(plan.batch, rotation) / rotation * rotation;  // whole rotations
  if (cold_l2 == ColdL2::flush) plan.batch = rotation;  // a second pass would find its inputs in L2
  const double fit = std::floor(0.75 * policy.max_case_s / (launch * plan.batch));
  plan.samples =
      static_cast<int>(std::clamp(fit, static_cast<double>(std::min(policy.budget_min_samples, policy.samples)),
                                  static_cast<double>(policy.samples)));
  return plan;
}

ColdL2 cold_l2_method(bool claims_hbm, double bytes_per_launch, int rotation, std::int64_t l2_bytes) {
  if (!claims_hbm) return ColdL2::not_claimed;
  // Launch i reads input set i % rotation; by the time a set comes round again the launches in
  // between have streamed rotation x bytes through the L2. Twice its size evicts it (an LRU-like
  // policy keeps at most one L2 of it), the margin DESIGN.md asks of HBM figures.
  const double span = bytes_per_launch * std::max(rotation, 1);
  return span >= 2.0 * static_cast<double>(l2_bytes) ? ColdL2::rotation : ColdL2::flush;
}

bool is_throttled(std::optional<double> sm_clock_mhz, std::optional<double> default_sm_clock_mhz) {
  return sm_clock_mhz && default_sm_clock_mhz && *default_sm_clock_mhz > 0 &&
         *sm_clock_mhz < throttle_clock_fraction * *default_sm_clock_mhz;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  mask &= ~nvml_reason_gpu_idle;
  for (const ThrottleReason& reason : throttle_reasons) {
    if ((mask & reason.bit) != 0) names.emplace_back(reason.name);
    mask &= ~reason.bit;
  }
  for (int bit = 0; bit < 64; ++bit) {
    if ((mask >> bit & 1U) != 0) names.push_back(fmt::format("reason_{:#x}", std::uint64_t{1} << bit));
  }
  return names;
}

double relative_noise(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (mean <= 0) return 0;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1)) / mean;
}

namespace {

// The running decision of one case's sampling loop.
class Sampling {
 public:
  Sampling(const TimingPolicy& policy, const SamplePlan& plan, std::optional<double> default_sm_clock_mhz)
      : policy_(policy), plan_(plan), default_mhz_(default_sm_clock_mhz), budget_s_(0.75 * policy.max_case_s) {}

  // One sample's seconds per launch and the SM clock read after it.
  void add(double per_launch_s, std::optional<double> sm_clock_mhz) {
    const double sample_s = per_launch_s * plan_.batch;
    sampled_s_ += sample_s;
    const bool throttled = is_throttled(sm_clock_mhz, default_mhz_);
    if (throttled && !policy_.keep_throttled && retaken_ < policy_.max_throttle_retakes && sampled_s_ < budget_s_) {
      ++retaken_;
      return;
    }
    kept_.push_back(per_launch_s);
    kept_s_ += sample_s;
    if (sm_clock_mhz) clocks_.push_back(*sm_clock_mhz);
    throttled_ = throttled_ || throttled;
  }

  // Why sampling stops now; nullopt while it goes on.
  [[nodiscard]] std::optional<StopReason> stop() const {
    const int kept = static_cast<int>(kept_.size());
    if (policy_.max_noise && kept >= policy_.min_samples && kept_s_ >= policy_.min_time_s && kept >= 2 &&
        relative_noise(kept_) <= *policy_.max_noise) {
      return StopReason::noise;
    }
    if (kept >= plan_.samples) return StopReason::samples;
    if (sampled_s_ >= budget_s_ && kept >= std::min(policy_.budget_min_samples, plan_.samples)) {
      return StopReason::budget;
    }
    return std::nullopt;
  }

  [[nodiscard]] Timing timing(StopReason stopped_on) const {
    Timing t;
    t.seconds = summarize(kept_);
    t.noise = relative_noise(kept_);
    t.stopped_on = stopped_on;
    t.retaken = retaken_;
    t.throttled = throttled_;
    if (!clocks_.empty()) {
      t.sm_clock_mhz = median(clocks_);
      t.sm_clock_min_mhz = *std::min_element(clocks_.begin(), clocks_.end());
    }
    return t;
  }

 private:
  const TimingPolicy& policy_;
  SamplePlan plan_;
  std::optional<double> default_mhz_;
  double budget_s_;
  double sampled_s_ = 0;  // every sample taken, the dropped ones too
  double kept_s_ = 0;
  std::vector<double> kept_;
  std::vector<double> clocks_;
  int retaken_ = 0;
  bool throttled_ = false;
};

}  // namespace

Timing take_samples(const TimingPolicy& policy, const SamplePlan& plan, std::optional<double> default_sm_clock_mhz,
                    GpuMonitor& monitor, const std::function<double()>& take_sample) {
  std::optional<std::uint64_t> reasons;
  const auto note_reasons = [&reasons](const GpuState& state) {
    if (state.throttle_reasons) reasons = reasons.value_or(0) | *state.throttle_reasons;
  };
  note_reasons(monitor.state());
  Sampling sampling(policy, plan, default_sm_clock_mhz);
  std::optional<StopReason> stopped;
  while (!(stopped = sampling.stop())) {
    const double per_launch_s = take_sample();
    const GpuState after = monitor.sample_state();
    note_reasons(after);
    sampling.add(per_launch_s, after.sm_clock_mhz);
  }
  Timing timing = sampling.timing(*stopped);
  const GpuState end = monitor.state();
  note_reasons(end);
  timing.memory_clock_mhz = end.memory_clock_mhz;
  timing.power_w = end.power_w;
  if (reasons) timing.throttle_reasons = throttle_reason_names(*reasons);
  return timing;
}

std::string throttle_note(const Timing& timing, const TimingPolicy& policy,
                          std::optional<double> default_sm_clock_mhz) {
  if (!timing.throttled || !default_sm_clock_mhz) return {};
  const double floor_mhz = throttle_clock_fraction * *default_sm_clock_mhz;
  const std::string clocks =
      fmt::format("SM clock down to {:.0f} MHz, below {:.0f}% of the default {:.0f} MHz",
                  timing.sm_clock_min_mhz.value_or(0), throttle_clock_fraction * 100, *default_sm_clock_mhz);
  if (policy.keep_throttled)
    return fmt::format("throttled: {}; samples below {:.0f} MHz kept (--keep-throttled)", clocks, floor_mhz);
  return fmt::format(
      "throttled: {}; samples below {:.0f} MHz kept after {} retake{} (the case's retakes or budget ran out)", clocks,
      floor_mhz, timing.retaken, timing.retaken == 1 ? "" : "s");
}

}  // namespace roofline::bench
