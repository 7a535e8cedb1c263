#pragma once

// Internal to the op subcommands: an operation's time on a GPU's roofs, the timing columns every
// operation reports, and the two ways rows leave a command: collected into a report table (table,
// JSON) or streamed as CSV (op_csv.hpp) without holding them.

#include <array>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../deployment_options.hpp"
#include "op.hpp"
#include "op_cell.hpp"
#include "op_csv.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/model/ops.hpp"
#include "roofline/model/sweep.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli::op_detail {

// "HBM bandwidth", or the peak that binds ("bf16 tensor peak", "fp32 vector peak").
[[nodiscard]] std::string_view binding_name(const std::optional<PeakClass>& peak, Bound bound);

// An operation's time on one GPU's roofs: the peak that bounds its math (MathRoof::resolve) and
// the HBM bandwidth.
struct Timing {
  OpCost cost;
  const Roofs* roofs = nullptr;
  std::optional<PeakClass> peak;  // unset: the GPU states no peak for this math
  OpTime time;                    // compute part valid only with a peak
  double expected_s = 0;          // > 0 when an expected time exists (--efficiency with a peak, or a calibrated time)
  std::optional<CalibratedTime> calibrated;  // with --calibration, where a table applies
  std::string calibration_note;              // with --calibration: why not, or where the lookup was clamped
  [[nodiscard]] bool has_peak() const { return peak.has_value(); }
  [[nodiscard]] double peak_flops() const { return *roofs->peak(*peak); }
};
// `roofs` must outlive the timing (it points to them).
[[nodiscard]] Timing time_on(const OpCost& cost, const Roofs& roofs, const MathRoof& math,
                             const std::optional<Efficiency>& efficiency);

// The columns every operation with one roofline time reports; Row has a member `Timing t`.
template <class Row>
inline constexpr std::array<OpColumn<Row>, 20> timing_columns{{
    {{"flops", "FLOPs", 0}, [](const Row& r) { return OpCell{r.t.cost.flops}; }},
    {{"read_bytes", "read [B]", 0}, [](const Row& r) { return OpCell{r.t.cost.bytes_read}; }},
    {{"written_bytes", "written [B]", 0}, [](const Row& r) { return OpCell{r.t.cost.bytes_written}; }},
    {{"intensity_flop_per_byte", "AI [FLOP/B]", 2}, [](const Row& r) { return OpCell{r.t.cost.intensity()}; }},
    {{"peak_class", "peak", 0},
     [](const Row& r) { return r.t.has_peak() ? text(name_of(*r.t.peak)) : OpCell{}; },
     Show::detail},
    {{"peak_tflops", "peak [TFLOP/s]", 1},
     [](const Row& r) { return number_if(r.t.has_peak(), r.t.peak_flops() / 1e12); },
     Show::detail},
    {{"bandwidth_tbps", "HBM [TB/s]", 2},
     [](const Row& r) { return OpCell{r.t.roofs->bandwidth / 1e12}; },
     Show::detail},
    {{"ridge_flop_per_byte", "ridge [FLOP/B]", 1},
     [](const Row& r) { return number_if(r.t.has_peak(), r.t.peak_flops() / r.t.roofs->bandwidth); }},
    {{"bound", "bound", 0}, [](const Row& r) { return r.t.has_peak() ? text(name_of(r.t.time.bound)) : OpCell{}; }},
    {{"attainable_tflops", "attainable [TFLOP/s]", 2},
     [](const Row& r) { return number_if(r.t.has_peak(), r.t.time.attainable_flops / 1e12); }},
    {{"compute_time_us", "compute [us]", 3},
     [](const Row& r) { return number_if(r.t.has_peak(), r.t.time.compute_s * 1e6); },
     Show::detail},
    {{"memory_time_us", "memory [us]", 3}, [](const Row& r) { return OpCell{r.t.time.memory_s * 1e6}; }, Show::detail},
    {{"time_us", "time >= [us]", 3}, [](const Row& r) { return number_if(r.t.has_peak(), r.t.time.time_s * 1e6); }},
    {{"binding", "binding", 0},
     [](const Row& r) { return r.t.has_peak() ? text(binding_name(r.t.peak, r.t.time.bound)) : OpCell{}; }},
    {{"expected_time_us", "expected [us]", 3},
     [](const Row& r) { return number_if(r.t.expected_s > 0, r.t.expected_s * 1e6); },
     Show::expected},
    {{"expected_tflops", "expected [TFLOP/s]", 2},
     [](const Row& r) { return number_if(r.t.expected_s > 0, r.t.cost.flops / r.t.expected_s / 1e12); },
     Show::expected},
    {{"calibration_table", "calibration", 0},
     [](const Row& r) { return r.t.calibrated ? text(r.t.calibrated->table) : OpCell{}; },
     Show::calibrated},
    {{"calibration_efficiency", "efficiency", 3},
     [](const Row& r) { return r.t.calibrated ? OpCell{r.t.calibrated->efficiency} : OpCell{}; },
     Show::calibrated},
    {{"calibration_clamped", "clamped", 0},
     [](const Row& r) { return r.t.calibrated ? OpCell{r.t.calibrated->clamped} : OpCell{}; },
     Show::calibrated},
    {{"calibration_note", "calibration note", 0},
     [](const Row& r) { return r.t.calibration_note.empty() ? OpCell{} : text(r.t.calibration_note); },
     Show::calibrated},
}};

// The columns an output shows, in order.
template <class Row>
[[nodiscard]] std::vector<const OpColumn<Row>*> select_columns(
    Format format, bool expected, std::initializer_list<std::span<const OpColumn<Row>>> groups,
    bool calibrated = false) {
  std::vector<const OpColumn<Row>*> selected;
  for (std::span<const OpColumn<Row>> group : groups) {
    for (const OpColumn<Row>& c : group) {
      if (c.show == Show::detail && format == Format::table) continue;
      if (c.show == Show::expected && !expected) continue;
      if (c.show == Show::calibrated && !calibrated) continue;
      selected.push_back(&c);
    }
  }
  return selected;
}

// What every op command sets up before it produces rows.
struct OpSetup {
  SelectedGpus gpus;
  std::vector<Roofs> roofs;  // one per GPU, in the same order
  std::optional<Efficiency> efficiency;
  // --calibration: a file (one choice, applied to the GPU it was learnt on) or auto (one per GPU).
  std::vector<CalibrationChoice> calibrations;
  Format format = Format::table;
  [[nodiscard]] bool calibrated() const { return !calibrations.empty(); }
  [[nodiscard]] bool expected() const { return efficiency.has_value() || calibrated(); }
  // The calibration to apply on `gpu_id`; null where auto found none for it.
  [[nodiscard]] const Calibration* calibration_for(std::string_view gpu_id) const;
  Report report;  // kind, common inputs, hardware origins
};
[[nodiscard]] OpSetup setup_op(std::string kind, const OpCommonOptions& options, const HardwareRegistry& registry);

// With --calibration: the calibrated expected time of an operation (what the best implementation
// measured at this size reached), or the reason there is none. A no-op without --calibration.
void apply_calibration(Timing& t, const OpSetup& setup, const Basis& basis);

// Throws InputError when a table or JSON report would exceed max_report_rows.
void check_report_rows(std::uint64_t rows);

// Collects rows into a report table. `generate(emit)` calls emit(const Row&) once per row.
template <class Row, class Generate>
[[nodiscard]] Table collect_table(std::string name, std::string title, const std::vector<const OpColumn<Row>*>& columns,
                                  std::uint64_t row_count, Generate&& generate) {
  check_report_rows(row_count);
  Table table{std::move(name), std::move(title), {}, {}};
  for (const OpColumn<Row>* c : columns) table.columns.push_back(c->column);
  table.rows.reserve(static_cast<std::size_t>(row_count));
  generate([&](const Row& row) {
    std::vector<Cell> cells;
    cells.reserve(columns.size());
    for (const OpColumn<Row>* c : columns) cells.push_back(to_cell(c->value(row)));
    table.rows.push_back(std::move(cells));
  });
  return table;
}

// Notes every op report carries: how time is bounded, which peak bounds the math (`math`,
// described by `math_text`), the GPUs that state no such peak, and the block scales of the data
// types in use.
void add_roof_notes(Report& report, std::span<const Roofs> roofs, const MathRoof& math, std::string_view math_text);
void add_dtype_notes(Report& report, std::initializer_list<DType> types);

// Writes notes to the stream the CLI shows on stderr.
void write_notes(std::ostream& notes, const Report& report);

// The report of an op kind: its first table holds one row per emitted Row.
template <class Row, class Generate>
[[nodiscard]] Report make_report(OpSetup& setup, std::uint64_t row_count, std::string name, std::string title,
                                 std::initializer_list<std::span<const OpColumn<Row>>> groups, Generate&& generate) {
  const auto columns = select_columns<Row>(setup.format, setup.expected(), groups, setup.calibrated());
  setup.report.tables.insert(setup.report.tables.begin(),
                             collect_table<Row>(std::move(name), std::move(title), columns, row_count, generate));
  return std::move(setup.report);
}

// The same rows as CSV, streamed; the notes go to `notes`.
template <class Row, class Generate>
std::uint64_t stream_rows(const OpSetup& setup, std::initializer_list<std::span<const OpColumn<Row>>> groups,
                          std::ostream& out, std::ostream& notes, Generate&& generate) {
  const auto columns = select_columns<Row>(Format::csv, setup.expected(), groups, setup.calibrated());
  write_notes(notes, setup.report);
  CsvStream csv(out);
  csv.header(columns);
  generate([&](const Row& row) { csv.row(columns, row); });
  csv.flush();
  return csv.rows();
}

// Values of a sweepable integer flag.
[[nodiscard]] inline std::vector<std::int64_t> axis(std::string_view flag, const std::string& text,
                                                    std::int64_t minimum = 1) {
  return parse_int_sweep(flag, text, minimum);
}
[[nodiscard]] std::int64_t max_of(const std::vector<std::int64_t>& values);
[[nodiscard]] std::int64_t min_of(const std::vector<std::int64_t>& values);

}  // namespace roofline::cli::op_detail
