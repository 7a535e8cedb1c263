#pragma once

// Measured results read back from files, for validate, calibrate and plot. Two formats:
//   - a `roofline bench` JSON report (schema roofline.bench.v1): every result table of every
//     suite, with the device the run matched;
//   - the JSON lines of the compute kernels' selftest (records compute_selftest.v1 and
//     compute_selftest_device.v1), until those kernels report through `bench --suite compute`.
// Both become one list of Measurement: an id, the parameters that define the problem, and the
// median, fastest and slowest per-launch times. What a measurement means to the model (its
// FLOPs, bytes and roofs) is worked out later from its parameters (roofline/validate.hpp), with
// the model's own functions; the byte count the run recorded is kept only to check that the two
// still agree.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// Per-launch seconds of the timed samples.
struct MeasuredTiming {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  std::int64_t samples = 0;

  // (max - min) / median, as bench reports it.
  [[nodiscard]] double spread() const { return median_s > 0 ? (max_s - min_s) / median_s : 0.0; }
};

struct Measurement {
  std::string suite;           // "memory", "compute"; empty for a group no suite of this build knows
  std::string group;           // "stream", "access", "gemv", "hierarchy", "gemm", "attention", "peak", ...
  std::string id;              // unique within a run, stable across runs
  std::string implementation;  // "roofline", "cublas", "cuda-runtime"
  std::string kernel;          // the variant that ran: "tile", "mma", "wgmma", "flash_w4r32", ...
  std::string status;          // "passed", "failed", "not_run", "not_supported"
  nlohmann::json parameters = nlohmann::json::object();  // what defines the problem (m, k, batch, dtype, ...)
  std::optional<double> recorded_bytes;                  // the run's model bytes per launch, if it recorded them
  std::optional<double> recorded_flops;                  // the run's FLOPs per launch, if it recorded them
  std::optional<MeasuredTiming> timing;                  // set for passed, timed results
  std::string where;                                     // "FILE /results/gemv/3", for messages

  [[nodiscard]] bool timed() const { return status == "passed" && timing.has_value(); }
};

struct MeasuredRun {
  std::string file;
  std::string format;  // "roofline.bench.v1" or "compute_selftest.v1"
  std::string device_name;
  std::optional<std::string> hardware_id;  // the hardware file the run matched, if it recorded one
  int sms = 0;
  std::int64_t l2_bytes = 0;
  bool quick = false;
  std::string started_utc;  // empty where the format does not record it
  std::vector<Measurement> results;

  [[nodiscard]] const Measurement* find(std::string_view id) const;
};

// Reads a bench report or compute selftest JSON lines; the format is told by the content.
// Throws InputError naming the file and the JSON pointer (or line) of the first problem.
[[nodiscard]] MeasuredRun load_measured(const std::filesystem::path& file);

// The same from text already read (`name` stands for the file in messages).
[[nodiscard]] MeasuredRun parse_measured(std::string_view text, const std::string& name);

// A bench report already in memory (what `validate` does when it runs the suite itself).
[[nodiscard]] MeasuredRun measured_from_bench_report(const nlohmann::json& report, const std::string& name);

}  // namespace roofline
