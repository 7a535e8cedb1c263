#pragma once

// Calibration: how far real kernels on one GPU stay from the roofline, learnt from a bench run
// (roofline/calibrate.hpp) and applied to the model's predictions (here: the tables, their
// lookup and their file, with no dependence on benchmarks or measured runs).
//
// Every measured benchmark with a prediction (roofline/validate.hpp) gives one point of its
// table: x = the roofline's lower-bound time of the problem on the calibration's roofs (so that
// a bigger problem lies further right, whatever bounds it), an optional second axis (the series:
// GEMV batch, access stride) and its efficiency = roofline time / measured
// median time. There is a table per implementation ("gemv.bf16.mma": what validate uses) and a
// table of the best implementation of each problem ("gemv.bf16": what op, llm and plan use).
//
// A query interpolates: within a series, the efficiency is linear in log(x) between the two
// nearest measured x (points at the same x are averaged); across series, linear in log(series)
// between the two nearest series (a series of one size is left out where others hold several: it
// says nothing of how the efficiency moves with size). Outside the measured range it is clamped to the end value and
// says so; a table whose series measured different ranges of x may instead carry its series' end
// on, where that series did not measure a query's size, by the trend of the nearest series on each
// side that did (CalibrationTable::neighbours_outside_range, which calibrate chooses by leave-one-out). A table
// may hold every query to its fastest measured time (CalibrationTable::fastest_time_floor, also chosen by
// leave-one-out). The expected time is then the roofline time on the GPU's (possibly overridden) roofs divided
// by that efficiency.
//
// The file (schema roofline.calibration.v1, docs/schema/calibration.v1.schema.json) records the
// roofs it was learnt against, its sources, the measured ceilings and every table; the loader
// validates it and names the key of the first problem (exit code 2).

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "roofline/basis/basis.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/model/collective_tables.hpp"

namespace roofline {

struct CalibrationPoint {
  double ideal_s = 0;            // x: the roofline time on the calibration's roofs
  std::optional<double> series;  // the second axis, where the table has one
  double efficiency = 0;         // ideal_s / measured_s
  std::string benchmark;         // the measured id this point comes from
  double measured_s = 0;         // its median per-launch time
  double spread = 0;             // its (max - min) / median
  // Leave one out: predicted / measured - 1 for this point when the table without it predicts it
  // (nullopt where nothing else is left to predict from).
  std::optional<double> loo_error;
  // The problem behind x (absent in files written before it was recorded): what a transfer to
  // another GPU re-expresses x with (calibration_transfer.hpp).
  struct Problem {
    double flops = 0;
    double roof_bytes = 0;
    std::optional<PeakClass> peak;  // the class bounding its FLOPs, if any is charged
  };
  std::optional<Problem> problem = std::nullopt;
};

// The curves interpolate reads and the problems measured_problem reads, made from the points once
// (calibration.cpp): a plan or serve run looks a table up millions of times.
struct PreparedTable;

struct CalibrationTable {
  std::string name;
  std::string pattern;
  bool best = false;        // the best implementation of each problem (what op/llm/plan use)
  std::string series_name;  // empty: the table has one axis
  // Where the query's series measured no problem of its size (x outside the series' range), carry
  // the series' end value on by the trend of the nearest series below and above that measured both
  // sizes (their efficiency at x over at the end, in log(series)), bounded by the end and their
  // values at x: a GEMM's k measured only at decode sizes says little of a prefill problem of that
  // k. Only where such a pair exists; file key "outside_series_range": "neighbour_series".
  bool neighbours_outside_range = false;
  // No query runs faster than the table's fastest measured problem: what a launch costs, which
  // holding an efficiency onto a smaller problem forgets (an FP8 GEMM 32 x 576 x 1536 held k 1536's
  // 0.29 at 0.2 us of roofline time: 0.69 us, where no FP8 GEMM on the H200 ran under 2.5). File key
  // "time_floor": "fastest_measured".
  bool fastest_time_floor = false;
  std::vector<CalibrationPoint> points;  // sorted by series, then x
  // Set by sort_points, which ends every construction; a lookup reads it only while it was made
  // from as many points as the table holds, and otherwise works from the points themselves.
  std::shared_ptr<const PreparedTable> prepared;
};

struct Interpolated {
  double efficiency = 0;
  bool clamped = false;  // the query lay outside the measured range of x or of the series
  std::string detail;    // where it lay: "x between 32.1 and 139 us; batch 8 (measured)"
};

// Whether a lookup writes its detail: a simulator that keeps only the time skips the text.
enum class Explain : std::uint8_t { yes, no };

// The efficiency at (ideal_s, series); nullopt when the table has no points (or none but `skip`,
// the index of a point to leave out). A table with a series needs a series in the query; a
// query's series on a table without one is ignored.
[[nodiscard]] std::optional<Interpolated> interpolate(const CalibrationTable& table, double ideal_s,
                                                      std::optional<double> series,
                                                      std::optional<std::size_t> skip = std::nullopt,
                                                      Explain explain = Explain::yes);

// A problem that was measured is predicted by its own measurement: the mean efficiency of the
// table's points whose benchmark is `problem` run by some implementation ("<problem>.<impl>",
// e.g. gemv.bf16.28672x8192.b1.simt for problem gemv.bf16.28672x8192.b1), at the query's series;
// nullopt when there is none. Interpolation averages points of equal size, and two shapes of one
// size (28672 x 8192 and 8192 x 28672) need not run alike.
[[nodiscard]] std::optional<Interpolated> measured_problem(const CalibrationTable& table, std::string_view problem,
                                                           std::optional<double> series,
                                                           Explain explain = Explain::yes);

// Sorts a table's points by series, then x, then benchmark (the order interpolation reads), and
// prepares what its lookups read. Call it whenever the points change.
void sort_points(CalibrationTable& table);

// Ceilings measured in the run: the roofs as this GPU delivers them.
struct MeasuredCeilings {
  std::optional<double> stream_bytes_per_s;  // the fastest stream kernel: achievable HBM bandwidth
  std::string stream_benchmark;
  std::optional<double> l2_bytes_per_s;
  std::optional<double> smem_bytes_per_s;
  std::array<std::optional<double>, peak_class_names.size()> peaks{};  // FLOP/s of the peak probes
};

// How a source run was measured: its bench report's device and run rows. Texts the run did not
// record read not_recorded; clocks it did not record are nullopt.
inline constexpr std::string_view not_recorded = "not recorded";
struct RunProvenance {
  std::string gpu_name;
  std::string compute_capability;
  std::string driver_version;        // the CUDA version the driver supports, "13.0"
  std::string cuda_runtime_version;  // "13.0"
  std::string cublas_version;        // "13.1.0"
  std::optional<double> sm_clock_start_mhz;
  std::optional<double> sm_clock_end_mhz;
  std::optional<double> memory_clock_start_mhz;
  std::optional<double> memory_clock_end_mhz;
  std::string tool_commit;  // the roofline commit that measured the run
  std::string command_line;
};

struct CalibrationSource {
  std::string file;
  std::string format;
  std::string device_name;
  std::string started_utc;
  bool quick = false;
  int points = 0;                                          // benchmarks that became points
  std::optional<RunProvenance> provenance = std::nullopt;  // absent in files written before it was recorded
};

// The error band a validation supports: the layer check out of sample on the calibration's GPU.
struct ErrorBand {
  std::string summary;  // "layers within 10% out of sample, 25/26"
  double within_pct = 0;
  int within = 0;
  int layers = 0;
  std::string run;  // the layer run it was checked on
};

// Where a transferred calibration came from (calibration_transfer.hpp).
struct TransferOrigin {
  std::string from_gpu;
  std::string from_file;
  int points = 0;           // points re-expressed on the target's roofs
  int points_dropped = 0;   // points whose peak the target does not state, or without their problem
  std::string collectives;  // what became of the measured collectives, and why
};

struct Calibration {
  std::string gpu_id;
  std::string gpu_name;
  std::string hardware_origin;
  Roofs roofs;  // what every x and efficiency is relative to
  std::vector<CalibrationSource> sources;
  std::map<std::string, CalibrationTable> tables;
  MeasuredCeilings ceilings;
  // Measured collectives (the collectives suite), by op and rank count: what llm and plan charge
  // for TP and PP communication in place of the ring model (collective_tables.hpp).
  CollectiveTables collectives;
  std::optional<ErrorBand> validation;     // set by calibrate --layer-check
  std::optional<TransferOrigin> transfer;  // set in a calibration transferred from another GPU
  std::string file;                        // where it was loaded from; empty when built in memory

  [[nodiscard]] const CalibrationTable* table(std::string_view name) const;
};

// "NVIDIA H200 (cc 9.0), driver 13.0, CUDA 13.0, cuBLAS 13.1.0, SM 1980 -> 1965 MHz, memory 3201 ->
// 3201 MHz, commit not recorded".
[[nodiscard]] std::string provenance_text(const RunProvenance& provenance);
// Where a calibration's tables come from, for a report: "measured on h200-sxm (2026-12-01, ...)",
// or "transferred to h100-sxm from h200-sxm, measured ...".
[[nodiscard]] std::string origin_text(const Calibration& calibration);

[[nodiscard]] nlohmann::json to_json(const Calibration& calibration);
// Validates against the embedded schema, then the meaning (sorted points, known peak classes);
// throws InputError naming `name` and the key.
[[nodiscard]] Calibration calibration_from_json(const nlohmann::json& document, const std::string& name);
// The same from text (`name` stands for the file in messages), and from a file.
[[nodiscard]] Calibration parse_calibration(std::string_view text, const std::string& name);
[[nodiscard]] Calibration load_calibration(const std::filesystem::path& file);
// docs/schema/calibration.v1.schema.json, compiled into the binary.
[[nodiscard]] const nlohmann::json& calibration_schema();

// The expected time of an operation under a calibration: what op, llm and plan call.
struct CalibratedTime {
  double time_s = 0;   // ideal_s / efficiency
  double ideal_s = 0;  // the roofline time on `roofs`
  double efficiency = 0;
  std::string table;
  bool clamped = false;
  std::string detail;
};
struct NotCalibrated {
  std::string reason;  // "the calibration is for h200-sxm", "no table gemv.int4"
};
using CalibratedOrNot = std::variant<CalibratedTime, NotCalibrated>;

enum class TableChoice : std::uint8_t {
  best,            // basis.best_table: the fastest implementation (an operation of the model)
  implementation,  // basis.table: that implementation (a benchmark)
};

// The table is looked up at the basis's roofline time on the calibration's own roofs (so that a
// --set what-if does not move the lookup); the expected time is the roofline time on `roofs`
// (the GPU as the command sees it) over the efficiency found.
[[nodiscard]] CalibratedOrNot calibrated_time(const Calibration& calibration, const Basis& basis, const Roofs& roofs,
                                              TableChoice choice = TableChoice::best, Explain explain = Explain::yes);

// Shorthands for the operations of the model, on `gpu` as given (overrides applied).
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const GemmShape& shape);
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const GemvShape& shape);
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const ElementwiseShape& shape);
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const NormShape& shape);
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const SoftmaxShape& shape);
[[nodiscard]] CalibratedOrNot expected_time(const Calibration& c, const GpuSpec& gpu, const AttentionShape& shape,
                                            AttentionImpl impl);

}  // namespace roofline
