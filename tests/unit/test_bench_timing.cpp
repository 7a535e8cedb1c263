// How the harness times a case, on the host: the policy and its flags, when sampling stops on
// noise, which samples are re-taken as throttled, how the L2 is kept cold, the names of NVML's
// throttle reasons, and how the report shows the clocks. The GPU side feeds take_samples real
// launches and NVML; here a scripted GpuMonitor and sample function stand in for them.
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>

#include "bench_sample.hpp"
#include "catch.hpp"
#include "roofline/bench/bench.hpp"
#include "roofline/core/error.hpp"
#include "roofline/validate/measured.hpp"

using namespace roofline;
using namespace roofline::bench;
using Catch::Matchers::Contains;

namespace {

// Clocks as a test scripts them: sample_state() hands out `sample_clocks` in order (repeating
// the last), state() the fixed before/after readings.
class ScriptedMonitor final : public GpuMonitor {
 public:
  std::deque<std::optional<double>> sample_clocks;
  std::optional<std::uint64_t> sample_reasons;
  GpuState before;
  GpuState after;
  int states = 0;

  GpuState state() override { return states++ == 0 ? before : after; }
  GpuState sample_state() override {
    GpuState s;
    s.throttle_reasons = sample_reasons;
    if (sample_clocks.empty()) return s;
    s.sm_clock_mhz = sample_clocks.front();
    if (sample_clocks.size() > 1) sample_clocks.pop_front();
    return s;
  }
};

// Samples of the given per-launch seconds, in turn (repeating), counting how many were taken.
struct ScriptedSamples {
  std::vector<double> seconds;
  int taken = 0;
  double operator()() { return seconds[static_cast<std::size_t>(taken++) % seconds.size()]; }
};

Timing run(const TimingPolicy& policy, SamplePlan plan, ScriptedMonitor& monitor, ScriptedSamples& samples,
           std::optional<double> default_mhz = 1980.0) {
  return take_samples(policy, plan, default_mhz, monitor, [&samples] { return samples(); });
}

TimingPolicy fixed_count(int samples) {
  TimingPolicy p;
  p.samples = samples;
  p.max_noise.reset();
  return p;
}

}  // namespace

TEST_CASE("the timing policy: defaults, --quick's fixed plan, and the flags") {
  const TimingPolicy standard = timing_policy(false, TimingFlags{});
  CHECK(standard.samples == 30);
  CHECK(standard.max_case_s == 2.0);
  CHECK(standard.budget_min_samples == 3);
  // nvbench's --min-samples 10 and --max-noise 0.5%; a shorter minimum time (its 0.5 s would be a
  // third of the whole 1.5 s budget of a case here).
  CHECK(standard.min_samples == 10);
  CHECK(standard.min_time_s == 0.02);
  CHECK(standard.max_noise == 0.005);
  CHECK_FALSE(standard.keep_throttled);
  const TimingPolicy quick = timing_policy(true, TimingFlags{});
  CHECK(quick.samples == 5);
  CHECK_FALSE(quick.max_noise.has_value());
  CHECK(quick.min_samples == 5);  // lowered with the count
  CHECK(timing_policy(true, TimingFlags{.max_noise_pct = 2.0}).max_noise == 0.02);
  CHECK(timing_policy(false, 3).samples == 3);
  CHECK(timing_policy(false, 3).min_samples == 3);
  const TimingPolicy flags = timing_policy(
      false,
      TimingFlags{.samples = 50, .min_samples = 20, .min_time_s = 3.0, .max_noise_pct = 1.0, .keep_throttled = true});
  CHECK(flags.samples == 50);
  CHECK(flags.min_samples == 20);
  CHECK(flags.min_time_s == 3.0);
  CHECK(flags.max_case_s == 4.0);  // 3 s / 0.75: the budget never ends sampling before the minimum time
  CHECK(flags.max_noise == 0.01);
  CHECK(flags.keep_throttled);
  CHECK_THROWS_AS(timing_policy(false, 0), InputError);
  CHECK_THROWS_AS(timing_policy(false, TimingFlags{.min_samples = 40}), InputError);  // above the 30 at most
  CHECK_THROWS_AS(timing_policy(false, TimingFlags{.min_samples = 0}), InputError);
  CHECK_THROWS_AS(timing_policy(false, TimingFlags{.min_time_s = -1.0}), InputError);
  CHECK_THROWS_AS(timing_policy(false, TimingFlags{.max_noise_pct = 0.0}), InputError);
  CHECK_THROWS_AS(timing_policy(false, TimingFlags{.max_noise_pct = NAN}), InputError);
}

TEST_CASE("warm-up, batches and samples follow the launch time") {
  const TimingPolicy policy = timing_policy(false, std::nullopt);
  // A 10 us launch: 25 ms of warm-up = 2500 launches (more than 10, below 0.5 s / 10 us = 50000);
  // 2 ms samples = 200 launches; 30 samples at most (1.5 s / 2 ms = 750 would fit).
  CHECK(warmup_launches(policy, 10e-6) == 2500);
  CHECK(sample_plan(policy, 10e-6, 1).batch == 200);
  CHECK(sample_plan(policy, 10e-6, 1).samples == 30);
  // Rotating 3 input sets: whole rotations, 198 launches.
  CHECK(sample_plan(policy, 10e-6, 3).batch == 198);
  // With an L2 flush before each sample, one pass over the 3 sets (a second would hit L2).
  CHECK(sample_plan(policy, 10e-6, 3, ColdL2::flush).batch == 3);
  CHECK(sample_plan(policy, 10e-6, 1, ColdL2::flush).batch == 1);
  // A 1 ms launch: 25 warm-up launches (25 ms asks for more than the 10-launch minimum), samples of 2.
  CHECK(warmup_launches(policy, 1e-3) == 25);
  CHECK(sample_plan(policy, 1e-3, 1).batch == 2);
  // The naive GEMM at 8192^3, 1.2 s a launch: one warm-up launch (a quarter of 2 s is less than a
  // launch), one launch a sample, 3 samples (1.5 s fits none; the budget's minimum wins).
  CHECK(warmup_launches(policy, 1.2) == 1);
  CHECK(sample_plan(policy, 1.2, 1).batch == 1);
  CHECK(sample_plan(policy, 1.2, 1).samples == 3);
  // 95 ms (standard attention at N = 32768): 5 warm-up launches (0.5 s / 95 ms), 15 samples.
  CHECK(warmup_launches(policy, 0.095) == 5);
  CHECK(sample_plan(policy, 0.095, 1).samples == 15);
  // --samples 2 is honoured even below the budget's minimum.
  CHECK(sample_plan(timing_policy(false, 2), 1.2, 1).samples == 2);
}

TEST_CASE("sampling stops on noise after the minimum count and time, else on the count or the budget") {
  ScriptedMonitor monitor;
  SECTION("steady samples: the noise criterion ends it at the minimum") {
    // 25 us x 100 launches = 2.5 ms a sample: 10 samples are 25 ms, past the 20 ms minimum; the
    // noise of equal samples is 0.
    ScriptedSamples samples{{25e-6}};
    const Timing t = run(timing_policy(false, TimingFlags{}), {.batch = 100, .samples = 30}, monitor, samples);
    CHECK(samples.taken == 10);
    CHECK(t.stopped_on == StopReason::noise);
    CHECK(t.seconds.count == 10);
    CHECK(t.noise == Approx(0).margin(1e-12));  // equal samples, up to the rounding of their mean
  }
  SECTION("the minimum time holds it past the minimum count") {
    // 2^-13 s x 8 launches = 2^-10 s (0.977 ms) a sample: 10 are 9.8 ms; 0.02 s / 2^-10 s = 20.48,
    // so the 21st reaches the 20 ms minimum.
    ScriptedSamples samples{{0.0001220703125}};
    const Timing t = run(timing_policy(false, TimingFlags{}), {.batch = 8, .samples = 30}, monitor, samples);
    CHECK(samples.taken == 21);
    CHECK(t.stopped_on == StopReason::noise);
  }
  SECTION("noisy samples run to the count") {
    // Alternating 20 and 30 us: mean 25, every deviation 5, so the sample standard deviation over
    // 30 samples is sqrt(30 x 25 / 29) = 5.0855 and the noise 5.0855 / 25 = 20.34%.
    ScriptedSamples samples{{20e-6, 30e-6}};
    const Timing t = run(timing_policy(false, TimingFlags{}), {.batch = 100, .samples = 30}, monitor, samples);
    CHECK(samples.taken == 30);
    CHECK(t.stopped_on == StopReason::samples);
    CHECK(t.noise == Approx(std::sqrt(30.0 * 25 / 29) / 25));
    CHECK(t.seconds.median == Approx(25e-6));
  }
  SECTION("long samples run out of budget") {
    // 2^-9 s x 128 launches = 0.25 s a sample; the budget is 0.75 x 2 s = 1.5 s: 6 samples.
    ScriptedSamples samples{{0.001953125}};
    const Timing t = run(fixed_count(30), {.batch = 128, .samples = 30}, monitor, samples);
    CHECK(samples.taken == 6);
    CHECK(t.stopped_on == StopReason::budget);
  }
  SECTION("a fixed plan (--quick) takes its count") {
    ScriptedSamples samples{{25e-6}};
    const Timing t = run(fixed_count(5), {.batch = 100, .samples = 5}, monitor, samples);
    CHECK(samples.taken == 5);
    CHECK(t.stopped_on == StopReason::samples);
  }
}

TEST_CASE("relative noise is the sample standard deviation over the mean") {
  // {1, 2, 3}: mean 2, squared deviations 1 + 0 + 1 over n - 1 = 2: standard deviation 1, noise 0.5.
  const std::vector<double> values{1, 2, 3};
  CHECK(relative_noise(values) == Approx(0.5));
  CHECK(relative_noise(std::vector<double>{4}) == 0);
}

TEST_CASE("a sample below 75% of the default SM clock is throttled") {
  // 0.75 x 1980 = 1485 MHz: 1485 itself is not below it, 1484 is.
  CHECK_FALSE(is_throttled(1485.0, 1980.0));
  CHECK(is_throttled(1484.0, 1980.0));
  CHECK_FALSE(is_throttled(std::nullopt, 1980.0));  // no NVML: nothing is judged
  CHECK_FALSE(is_throttled(1000.0, std::nullopt));
}

TEST_CASE("throttled samples are taken again, within the retakes, unless --keep-throttled") {
  ScriptedMonitor monitor;
  ScriptedSamples samples{{25e-6}};
  SECTION("one throttled sample is dropped and re-taken") {
    monitor.sample_clocks = {1400.0, 1980.0};
    const Timing t = run(fixed_count(5), {.batch = 100, .samples = 5}, monitor, samples);
    CHECK(samples.taken == 6);
    CHECK(t.retaken == 1);
    CHECK_FALSE(t.throttled);
    CHECK(t.sm_clock_mhz == 1980.0);
    CHECK(throttle_note(t, fixed_count(5), 1980.0).empty());
  }
  SECTION("a GPU that stays throttled: 5 retakes, then the samples are kept and flagged") {
    monitor.sample_clocks = {1400.0};
    const Timing t = run(fixed_count(5), {.batch = 100, .samples = 5}, monitor, samples);
    CHECK(samples.taken == 10);
    CHECK(t.retaken == 5);
    CHECK(t.throttled);
    CHECK(t.sm_clock_min_mhz == 1400.0);
    CHECK_THAT(throttle_note(t, fixed_count(5), 1980.0), Contains("kept after 5 retakes"));
  }
  SECTION("--keep-throttled keeps every sample, flagged") {
    monitor.sample_clocks = {1980.0, 1400.0, 1400.0, 1980.0, 1980.0};
    TimingPolicy keep = fixed_count(5);
    keep.keep_throttled = true;
    const Timing t = run(keep, {.batch = 100, .samples = 5}, monitor, samples);
    CHECK(samples.taken == 5);
    CHECK(t.retaken == 0);
    CHECK(t.throttled);
    // Clocks 1400, 1400, 1980, 1980, 1980: median 1980, lowest 1400.
    CHECK(t.sm_clock_mhz == 1980.0);
    CHECK(t.sm_clock_min_mhz == 1400.0);
    CHECK_THAT(throttle_note(t, keep, 1980.0), Contains("--keep-throttled"));
  }
  SECTION("retakes stop when the case's budget is spent") {
    // 2^-8 s x 128 = 0.5 s samples, all throttled: the first two are dropped, the third reaches
    // the 1.5 s budget and is kept, and two more make the budget's minimum of 3.
    ScriptedSamples long_samples{{0.00390625}};
    monitor.sample_clocks = {1400.0};
    const Timing t = run(fixed_count(30), {.batch = 128, .samples = 30}, monitor, long_samples);
    CHECK(t.retaken == 2);
    CHECK(long_samples.taken == 5);
    CHECK(t.seconds.count == 3);
    CHECK(t.stopped_on == StopReason::budget);
    CHECK(t.throttled);
  }
}

TEST_CASE("clocks, power and throttle reasons come from the monitor, or are absent") {
  ScriptedSamples samples{{25e-6}};
  SECTION("NVML readings") {
    ScriptedMonitor monitor;
    monitor.before.throttle_reasons = 0x1;  // idle before the case: not a throttle reason
    monitor.sample_reasons = 0x4;           // software power cap while it ran
    monitor.after =
        GpuState{.sm_clock_mhz = 1755, .memory_clock_mhz = 3201, .power_w = 612.5, .throttle_reasons = 0x40};
    monitor.sample_clocks = {1755.0};
    const Timing t = run(fixed_count(3), {.batch = 100, .samples = 3}, monitor, samples);
    CHECK(t.sm_clock_mhz == 1755.0);
    CHECK(t.memory_clock_mhz == 3201.0);
    CHECK(t.power_w == 612.5);
    REQUIRE(t.throttle_reasons.has_value());
    CHECK(*t.throttle_reasons == std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  }
  SECTION("no NVML: nothing recorded, nothing judged") {
    ScriptedMonitor monitor;
    const Timing t = run(fixed_count(3), {.batch = 100, .samples = 3}, monitor, samples, std::nullopt);
    CHECK_FALSE(t.sm_clock_mhz.has_value());
    CHECK_FALSE(t.power_w.has_value());
    CHECK_FALSE(t.throttle_reasons.has_value());
    CHECK_FALSE(t.throttled);
  }
}

TEST_CASE("throttle reasons are named bit by bit") {
  CHECK(throttle_reason_names(0).empty());
  CHECK(throttle_reason_names(0x1).empty());  // idle
  CHECK(throttle_reason_names(0x2 | 0x8 | 0x80) ==
        std::vector<std::string>{"applications_clocks_setting", "hw_slowdown", "hw_power_brake_slowdown"});
  CHECK(throttle_reason_names(0x100 | 0x10 | 0x20) ==
        std::vector<std::string>{"sync_boost", "sw_thermal_slowdown", "display_clock_setting"});
  CHECK(throttle_reason_names(0x400) == std::vector<std::string>{"reason_0x400"});  // a bit of a later driver
}

TEST_CASE("a case that claims HBM figures keeps L2 cold by its rotation, else by a flush") {
  const std::int64_t l2 = std::int64_t{60} << 20;  // the H200's 60 MiB
  CHECK(cold_l2_method(false, 1e9, 1, l2) == ColdL2::not_claimed);
  // A 4 KiB stream copy moves 8 KiB a launch; its 4096 copies span 32 MiB, under 2 x 60 MiB: flush.
  CHECK(cold_l2_method(true, 8192, 4096, l2) == ColdL2::flush);
  // 16 KiB arrays: 32 KiB x 4096 = 128 MiB, past the 120 MiB: the rotation suffices.
  CHECK(cold_l2_method(true, 32768, 4096, l2) == ColdL2::rotation);
  // Exactly twice the L2 is enough; one byte less is not.
  CHECK(cold_l2_method(true, static_cast<double>(2 * l2), 1, l2) == ColdL2::rotation);
  CHECK(cold_l2_method(true, static_cast<double>(2 * l2 - 1), 1, l2) == ColdL2::flush);
}

TEST_CASE("the memory suite declares which results are HBM claims") {
  const memory::Sizes sizes = memory::plan_sizes(sample::h200_l2_bytes, sample::h200_sms, false);
  for (const memory::Case& c : memory::cases) {
    const BenchmarkResult r = memory::make_result(c, sizes);
    INFO(r.id);
    CHECK(r.claims_hbm == (r.group != "hierarchy"));  // the L2 and shared-memory ceilings read caches
  }
}

TEST_CASE("the human table shows one clock column, starred where throttled and JSON keeps every field") {
  BenchRun run = sample::sample_run();
  REQUIRE(!run.results.empty());
  BenchmarkResult* timed = nullptr;
  for (BenchmarkResult& r : run.results) {
    if (r.timing && r.suite == "memory" && r.group == "stream") {
      timed = &r;
      break;
    }
  }
  REQUIRE(timed != nullptr);
  timed->timing->sm_clock_mhz = 1480.0;
  timed->timing->throttled = true;
  timed->timing->throttle_reasons = std::vector<std::string>{"sw_power_cap"};
  run.device.sm_clock_default_mhz = 1980.0;
  run.device.sm_clock_default_source = "nvml default applications clock";
  run.device.sm_clock_start_mhz = 1980.0;
  run.device.sm_clock_end_mhz = 1485.0;
  const Report full = make_report(run, nlohmann::json::object());
  const Report people = readable(full);
  for (std::size_t t = 0; t < full.tables.size(); ++t) {
    const Table& json_table = full.tables[t];
    const Table& human = people.tables[t];
    if (json_table.name != "stream") continue;
    std::vector<std::string_view> json_keys;
    for (const Column& c : json_table.columns) json_keys.push_back(c.key);
    for (const auto& c : columns::measurement) {
      CHECK(std::find(json_keys.begin(), json_keys.end(), c.column.key) != json_keys.end());
    }
    std::size_t clock = human.columns.size();
    for (std::size_t i = 0; i < human.columns.size(); ++i) {
      CHECK(human.columns[i].key != "throttle_reasons");
      if (human.columns[i].key == "clock") clock = i;
    }
    REQUIRE(clock < human.columns.size());
    // One measurement column (of 10) replaced by `clock`: 9 fewer.
    CHECK(human.columns.size() == json_table.columns.size() - 9);
    bool starred = false;
    for (const auto& row : human.rows) {
      REQUIRE(row.size() == human.columns.size());
      if (const auto* text = std::get_if<std::string>(&row[clock]); text != nullptr && *text == "1480*") starred = true;
    }
    CHECK(starred);
  }
  bool noted = false;
  for (const std::string& note : full.notes) {
    if (note.starts_with("SM clock 1980 MHz at the start, 1485 MHz at the end")) noted = true;
  }
  CHECK(noted);
}

TEST_CASE("the measurement fields are read back from a report, and runs without them still load") {
  BenchRun run = sample::sample_run();
  BenchmarkResult* timed = nullptr;
  for (BenchmarkResult& r : run.results) {
    if (r.timing && r.group == "stream") timed = &r;
  }
  REQUIRE(timed != nullptr);
  timed->timing->sm_clock_mhz = 1755.0;
  timed->timing->throttled = false;
  timed->timing->noise = 0.004;
  timed->timing->stopped_on = StopReason::noise;
  timed->timing->cold_l2 = ColdL2::rotation;
  timed->timing->throttle_reasons = std::vector<std::string>{"sw_power_cap", "hw_slowdown"};
  const nlohmann::json report = to_json(make_report(run, nlohmann::json::object()));
  bool found = false;
  for (const nlohmann::json& row : report.at("results").at("stream")) {
    if (row.at("id") != timed->id) continue;
    found = true;
    const RecordedMeasurement m = recorded_measurement(row, "/results/stream/0");
    CHECK(m.sm_clock_mhz == 1755.0);
    CHECK(m.throttled == false);
    CHECK(m.noise_pct == Approx(0.4));
    CHECK(m.stopped_on == "noise");
    CHECK(m.cold_l2 == "rotation");
    CHECK(m.throttle_reasons == "sw_power_cap,hw_slowdown");
    CHECK(m.retaken_samples == 0);
    CHECK_FALSE(m.power_w.has_value());  // not read: null, not zero
  }
  CHECK(found);
  CHECK_THROWS_AS(recorded_measurement(nlohmann::json{{"throttled", "yes"}}, "/results/stream/0"), InputError);

  // The committed run of 2026-11-30 predates the fields: every row reads as not recorded.
  std::ifstream in(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "tests/data/bench/h200-memory-2026-11-30-run2.json");
  const nlohmann::json old_run = nlohmann::json::parse(in);
  std::size_t rows = 0;
  for (const auto& [group, table] : old_run.at("results").items()) {
    if (group == "device" || group == "run" || group == "targets") continue;
    for (const nlohmann::json& row : table) {
      const RecordedMeasurement m = recorded_measurement(row, group);
      CHECK_FALSE(m.sm_clock_mhz.has_value());
      CHECK_FALSE(m.throttled.has_value());
      ++rows;
    }
  }
  CHECK(rows > 0);
}

TEST_CASE("validate reads the measurement fields as outcomes, never as parameters of the problem") {
  BenchRun run = sample::sample_run();
  for (BenchmarkResult& r : run.results) {
    if (r.timing) r.timing->sm_clock_mhz = 1755.0;
  }
  const MeasuredRun measured =
      measured_from_bench_report(to_json(make_report(run, nlohmann::json::object())), "sample.json");
  REQUIRE(!measured.results.empty());
  for (const Measurement& m : measured.results) {
    INFO(m.id);
    for (const auto& column : columns::measurement) CHECK_FALSE(m.parameters.contains(std::string(column.column.key)));
  }
}
