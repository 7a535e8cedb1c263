// roofline op: the command tree of the op subcommands and the machinery they share. Each kind
// lives in its own file (op_matrix.cpp, op_vector.cpp, op_attention.cpp, op_fuse.cpp).
#include "op.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "op_engine.hpp"
#include "roofline/error.hpp"
#include "roofline/output_file.hpp"

namespace roofline::cli {
namespace op_detail {

namespace {

// The vector (CUDA-core) rates a hardware file states are fp64 and fp32; the others are
// tensor-core rates.
constexpr bool is_vector_peak(PeakClass peak) {
  return peak == PeakClass::fp64 || peak == PeakClass::fp32;
}

}  // namespace

std::string_view binding_name(const std::optional<PeakClass>& peak, Bound bound) {
  if (bound == Bound::memory || !peak) return "HBM bandwidth";
  // Built once: rows hold views of these texts.
  static const std::array<std::string, peak_class_names.size()> names = [] {
    std::array<std::string, peak_class_names.size()> built;
    for (std::size_t i = 0; i < built.size(); ++i) {
      const auto p = static_cast<PeakClass>(i);
      built[i] = fmt::format("{} {} peak", name_of(p), is_vector_peak(p) ? "vector" : "tensor");
    }
    return built;
  }();
  return names[static_cast<std::size_t>(*peak)];
}

Timing time_on(const OpCost& cost, const Roofs& roofs, const MathRoof& math,
               const std::optional<Efficiency>& efficiency) {
  Timing t;
  t.cost = cost;
  t.roofs = &roofs;
  t.peak = math.resolve(roofs);
  if (t.has_peak()) {
    t.time = roofline_time(cost, t.peak_flops(), roofs.bandwidth);
    if (efficiency) t.expected_s = expected_time_s(t.time, *efficiency);
  } else {
    t.time.memory_s = cost.bytes() / roofs.bandwidth;
  }
  return t;
}

void apply_calibration(Timing& t, const OpSetup& setup, const Basis& basis) {
  if (!setup.calibration) return;
  CalibratedOrNot c = calibrated_time(*setup.calibration, basis, *t.roofs);
  if (CalibratedTime* found = std::get_if<CalibratedTime>(&c)) {
    t.expected_s = found->time_s;
    if (found->clamped) t.calibration_note = found->detail;
    t.calibrated = std::move(*found);
  } else {
    t.expected_s = 0;
    t.calibration_note = std::move(std::get<NotCalibrated>(c).reason);
  }
}

OpSetup setup_op(std::string kind, const OpCommonOptions& options, const HardwareRegistry& registry) {
  OpSetup setup;
  setup.format = parse_format(options.common.format);
  setup.gpus = selected_gpus(registry, options.gpus, options.what_if);
  for (const GpuSpec& gpu : setup.gpus) setup.roofs.push_back(Roofs::of(gpu));
  if (options.efficiency && options.calibration) {
    throw InputError("--efficiency and --calibration both set the expected time: give one of them");
  }
  if (options.efficiency) setup.efficiency = parse_efficiency(*options.efficiency);
  if (options.calibration) setup.calibration = load_calibration(*options.calibration);
  setup.report.kind = std::move(kind);
  nlohmann::json efficiency = nullptr;
  if (setup.efficiency) efficiency = {{"compute", setup.efficiency->compute}, {"memory", setup.efficiency->memory}};
  setup.report.inputs = {{"gpu", options.gpus},
                         {"dtype", options.dtype},
                         {"set", options.what_if},
                         {"efficiency", efficiency},
                         {"calibration", options.calibration ? nlohmann::json(*options.calibration) : nullptr}};
  add_hardware_origins(setup.report, setup.gpus);
  if (setup.calibration) {
    const Calibration& c = *setup.calibration;
    std::vector<std::string> sources;
    for (const CalibrationSource& s : c.sources) sources.push_back(s.file);
    setup.report.notes.push_back(fmt::format(
        "expected: calibrated with {} (learnt on {} from {}): the roofline time divided by the efficiency the best "
        "implementation measured reached at this size (its table), interpolated in log(size) and clamped at the ends",
        c.file, c.gpu_id, fmt::join(sources, ", ")));
    for (const GpuSpec& gpu : setup.gpus) {
      if (gpu.id != c.gpu_id) {
        setup.report.notes.push_back(
            fmt::format("{}: the calibration is for {}, so its expected time is left empty", gpu.id, c.gpu_id));
      }
    }
  }
  return setup;
}

void check_report_rows(std::uint64_t rows) {
  if (rows > max_report_rows) {
    throw InputError(
        fmt::format("the sweep gives {} rows; table and JSON output hold at most {} "
                    "(use --format csv, which streams any number)",
                    rows, max_report_rows));
  }
}

void add_roof_notes(Report& report, std::span<const Roofs> roofs, const MathRoof& math, std::string_view math_text) {
  report.notes.push_back(fmt::format(
      "time >= max(FLOPs / peak, bytes / HBM bandwidth) with the {}; bytes = read + written; 1 TB/s = 1e12 B/s; "
      "peaks are dense (no 2:4 sparsity)",
      math_text));
  for (const Roofs& gpu : roofs) {
    if (!math.resolve(gpu)) {
      report.notes.push_back(
          fmt::format("{} states no peak for this math: its peak and time columns are empty", gpu.gpu_id));
    }
  }
}

void add_dtype_notes(Report& report, std::initializer_list<DType> types) {
  std::vector<DType> seen;
  for (DType type : types) {
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) continue;
    seen.push_back(type);
    const DTypeInfo& i = info(type);
    if (i.block_elements == 0) continue;
    report.notes.push_back(
        fmt::format("{} counts {:g} bits per element: {:g} of payload and a {:g}-bit scale per {} "
                    "elements",
                    i.name, i.bytes_per_element() * 8, i.element_bits, i.scale_bits_per_block, i.block_elements));
  }
}

char* format_csv_number(char* out, double value) {
  // fmt writes a whole number below 1e16 in fixed notation with no fraction, like an integer.
  if (value > 0 && value < 1e15 && value == std::floor(value)) {
    return std::to_chars(out, out + 32, static_cast<std::int64_t>(value)).ptr;
  }
  return fmt::format_to(out, FMT_COMPILE("{}"), value);
}

Cell to_cell(const OpCell& cell) {
  return std::visit(
      [](const auto& value) -> Cell {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          return Cell{std::string(value)};
        } else {
          return Cell{value};
        }
      },
      cell);
}

// Writes a cell row() found no remembered text for, and remembers it.
void CsvStream::append(Memo& memo, const OpCell& cell) {
  // The cell was not among those remembered (row() looked).
  ++memo.misses;
  memo.off = memo.off || (memo.misses >= 4 && memo.misses > 2 * memo.hits);
  char* const start = end_;
  const std::uint64_t flushes = flushes_;
  if (const double* number = std::get_if<double>(&cell)) {
    end_ = format_csv_number(end_, *number);
  } else if (const std::int64_t* integer = std::get_if<std::int64_t>(&cell)) {
    end_ = std::to_chars(end_, end_ + 32, *integer).ptr;
  } else if (std::holds_alternative<std::monostate>(cell)) {
    // empty, as write_csv_cell leaves it
  } else if (const bool* flag = std::get_if<bool>(&cell)) {
    const std::string_view text = *flag ? "true" : "false";
    end_ = std::copy(text.begin(), text.end(), end_);
  } else if (const std::string_view* text = std::get_if<std::string_view>(&cell);
             text != nullptr && text->find_first_of(",\"\n\r") == std::string_view::npos) {
    put(text->data(), text->size());  // what write_csv_cell does with text needing no quotes
  } else {
    std::string quoted;
    write_csv_cell(quoted, to_cell(cell));
    put(quoted.data(), quoted.size());
  }
  // A long text may have flushed the buffer; only a short one written in place is remembered.
  const auto size = static_cast<std::size_t>(end_ - start);
  Seen& slot = memo.seen[memo.next];
  if (!memo.off && flushes == flushes_ && size <= slot.text.size()) {
    std::memcpy(slot.text.data(), start, size);
    slot.size = size;
    slot.cell = cell;
    slot.valid = true;
    memo.next ^= 1;
  }
}

void CsvStream::put(const char* data, std::size_t size) {
  if (size > room()) {
    flush();
    if (size > room()) {
      out_.write(data, static_cast<std::streamsize>(size));
      return;
    }
  }
  std::memcpy(end_, data, size);
  end_ += size;
}

void CsvStream::flush() {
  out_.write(storage_.get(), end_ - storage_.get());
  end_ = storage_.get();
  ++flushes_;
}

void write_notes(std::ostream& notes, const Report& report) {
  for (const std::string& note : report.notes) notes << "roofline: note: " << note << '\n';
}

std::int64_t max_of(const std::vector<std::int64_t>& values) {
  return *std::max_element(values.begin(), values.end());
}

std::int64_t min_of(const std::vector<std::int64_t>& values) {
  return *std::min_element(values.begin(), values.end());
}

}  // namespace op_detail

namespace {

// CSV goes out as it is produced: to stdout, or to -o FILE atomically (a failed run leaves no
// partial file).
void write_streamed(const std::optional<std::string>& path, const std::function<void(std::ostream&)>& write) {
  if (!path) {
    write(std::cout);
    std::cout.flush();
    return;
  }
  write_file_atomically(*path, write);
}

template <class Options>
void run_command(const Options& options) {
  const HardwareRegistry registry = load_registry(options.op.common);
  if (parse_format(options.op.common.format) == Format::csv) {
    write_streamed(options.op.common.output,
                   [&](std::ostream& out) { (void)stream_op_csv(options, registry, out, std::cerr); });
  } else {
    emit(run_op(options, registry), options.op.common);
  }
}

constexpr const char* sweep_help = " (a value, a list a,b,c, or a range start:stop:x2 or start:stop:+step)";

std::string sweep(const char* what) {
  return std::string(what) + sweep_help;
}

void add_op_common(CLI::App& command, OpCommonOptions& options, bool calibratable) {
  command.add_option("--gpu", options.gpus, "GPU id or alias, a comma-separated list, or 'all'")->required();
  command
      .add_option("--dtype", options.dtype,
                  "Data type of every tensor unless a finer flag (--weights, --act, --kv) sets it: fp64 fp32 tf32 "
                  "fp16 bf16 fp8 (e4m3/e5m2) int8 int4 int4_g128 fp4 nvfp4 mxfp8 mxfp6 mxfp4")
      ->capture_default_str();
  command.add_option("--efficiency", options.efficiency,
                     "Fractions of peak and bandwidth a real kernel reaches, compute=X,memory=Y: adds the expected "
                     "time max(compute time / X, memory time / Y)");
  if (calibratable) {
    command.add_option("--calibration", options.calibration,
                       "A calibration file (roofline calibrate): adds the expected time the best measured "
                       "implementation reaches at this size on the calibrated GPU");
  }
  add_what_if_option(command, options.what_if);
  add_common_options(command, options.common);
}

template <class Options>
CLI::App* add_kind(CLI::App& op, const char* name, const char* description, std::shared_ptr<Options> options,
                   bool calibratable = true) {
  CLI::App* command = op.add_subcommand(name, description);
  add_op_common(*command, options->op, calibratable);
  command->callback([options] { run_command(*options); });
  return command;
}

}  // namespace

void setup_op_command(CLI::App& app) {
  CLI::App* op = app.add_subcommand(
      "op",
      "FLOPs, bytes (read + written), arithmetic intensity and roofline time of one operation; every numeric flag "
      "sweeps (a list or a range), one row per point");
  op->require_subcommand(1);

  {
    auto o = std::make_shared<GemmOptions>();
    CLI::App* c = add_kind(*op, "gemm",
                           "C[m x n] = A[m x k] . B[k x n] (A: activations, B: weights), bounded by the tensor peak "
                           "of the activation type",
                           o);
    c->add_option("--m", o->m, sweep("Rows of A and C (tokens)"))->required();
    c->add_option("--n", o->n, sweep("Columns of B and C (output features)"))->required();
    c->add_option("--k", o->k, sweep("The reduction dimension (input features)"))->required();
    c->add_option("--batch", o->batch, sweep("Independent products"))->capture_default_str();
    c->add_option("--weights", o->weights, "Type of B (default --dtype)");
    c->add_option("--act", o->act, "Type of A, and of the math (default --dtype)");
    c->add_option("--out", o->out, "Type of C (default: the activation type)");
  }
  {
    auto o = std::make_shared<GemvOptions>();
    CLI::App* c =
        add_kind(*op, "gemv", "y[batch x m] = W[m x k] . x[batch x k]: W read once for the whole batch (decode)", o);
    c->add_option("--m", o->m, sweep("Rows of W (output features)"))->required();
    c->add_option("--k", o->k, sweep("Columns of W (input features)"))->required();
    c->add_option("--batch", o->batch, sweep("Vectors sharing W"))->capture_default_str();
    c->add_option("--weights", o->weights, "Type of W (default --dtype)");
    c->add_option("--act", o->act, "Type of x and y, and of the math (default --dtype)");
  }
  {
    auto o = std::make_shared<ElementwiseOptions>();
    CLI::App* c = add_kind(*op, "elementwise",
                           "I inputs read, O outputs written, F FLOPs per element; bounded by the vector (non-tensor) "
                           "peak",
                           o);
    c->add_option("--elements", o->elements, sweep("Elements of each array"))->required();
    c->add_option("--fn", o->fn,
                  "A named function: copy add mul relu gelu silu swiglu (sets inputs, outputs and FLOPs per "
                  "element; the flags below override it)");
    c->add_option("--inputs", o->inputs, sweep("Arrays read (default 1, or the function's)"));
    c->add_option("--outputs", o->outputs, sweep("Arrays written (default 1, or the function's)"));
    c->add_option("--flops-per-element", o->flops_per_element,
                  sweep("FLOPs per element (default 1, or the function's)"));
  }
  {
    auto o = std::make_shared<NormOptions>();
    CLI::App* c =
        add_kind(*op, "norm", "RMSNorm or LayerNorm over rows x hidden; bounded by the vector (non-tensor) peak", o);
    c->add_option("--rows", o->rows, sweep("Rows (tokens)"))->required();
    c->add_option("--hidden", o->hidden, sweep("Elements per row"))->required();
    c->add_option("--kind", o->kind, "rmsnorm or layernorm")->capture_default_str();
    c->add_flag("--residual", o->residual, "Fused residual add: also reads the residual and writes the sum");
  }
  {
    auto o = std::make_shared<SoftmaxOptions>();
    CLI::App* c = add_kind(*op, "softmax", "Softmax over each row of rows x cols; bounded by the vector peak", o);
    c->add_option("--rows", o->rows, sweep("Rows"))->required();
    c->add_option("--cols", o->cols, sweep("Elements per row"))->required();
  }
  {
    auto o = std::make_shared<AttentionOptions>();
    CLI::App* c = add_kind(*op, "attention",
                           "softmax(Q K^T / sqrt(d)) V, standard (S and P in HBM) vs flash (tiled, on chip), and the "
                           "reduction factor",
                           o);
    c->add_option("--batch", o->batch, sweep("Sequences"))->capture_default_str();
    c->add_option("--heads", o->heads, sweep("Query heads"))->required();
    c->add_option("--kv-heads", o->kv_heads, sweep("K/V heads: = heads MHA, a divisor GQA, 1 MQA (default: heads)"));
    c->add_option("--head-dim", o->head_dim, sweep("Head dimension d"))->required();
    c->add_option("--seq", o->seq, sweep("Query length (the prompt; 1 for decode)"))->required();
    c->add_option("--kv-seq", o->kv_seq, sweep("Key/value length (the context; default: seq)"));
    c->add_flag("--causal", o->causal,
                "Causal mask: the queries are the last seq positions; each attends to itself and earlier keys");
    c->add_option("--impl", o->impl, "standard, flash or both (each row says which; both give the reduction)")
        ->capture_default_str();
    c->add_option("--tile", o->tile,
                  sweep("Flash query tile rows (and K/V tile rows unless --tile-kv); default: the "
                        "largest power of two whose tiles fit the GPU's shared memory"));
    c->add_option("--tile-kv", o->tile_kv, sweep("Flash K/V tile rows (default: the query tile)"));
    c->add_option("--act", o->act, "Type of Q, O, S, P and of the math (default --dtype)");
    c->add_option("--kv", o->kv, "Type of K and V, the KV cache (default --dtype)");
  }
  {
    auto o = std::make_shared<FuseOptions>();
    // No --calibration: no fused kernel was measured, so nothing calibrates one.
    CLI::App* c = add_kind(
        *op, "fuse", "A chain of operations on one activation tensor: separate kernels vs one fused kernel", o, false);
    c->add_option("--chain", o->chain,
                  "Comma-separated elements: linear[:N] gelu silu relu swiglu add rmsnorm layernorm softmax "
                  "(linear:N sets its output width, default --hidden)")
        ->required();
    c->add_option("--rows", o->rows, sweep("Rows of the activation tensor (tokens)"))->required();
    c->add_option("--hidden", o->hidden, sweep("Width of the chain's input"))->required();
    c->add_option("--weights", o->weights, "Type of the linear weights (default --dtype)");
    c->add_option("--act", o->act, "Type of the activations and of the math (default --dtype)");
  }
}

}  // namespace roofline::cli
