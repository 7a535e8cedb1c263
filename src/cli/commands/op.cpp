// roofline op: the command tree of the op subcommands and their flags. Each kind lives in its own
// file (op_matrix.cpp, op_vector.cpp, op_attention.cpp, op_fuse.cpp); what they share is in
// op_engine.cpp.
#include "op.hpp"

#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {

namespace {

// CSV goes out as it is produced: to stdout, or to -o FILE atomically (a failed run leaves no
// partial file).
void write_streamed(const std::optional<std::string>& path, const std::function<void(std::ostream&)>& write) {
  if (!path) {
    write_to_stdout(write);
    return;
  }
  write_file_atomically(*path, write);
}

template <class Options>
void run_command(const Options& options) {
  const HardwareRegistry& registry = load_registry(options.op.common);
  // CSV streams row by row; --table (docs/reports.md) picks from the whole report instead.
  if (parse_format(options.op.common.format) == Format::csv && !options.op.common.table) {
    // The notes (the formulas, on stderr: CSV has no place for them) follow the rows, once every
    // row is written: a run that fails says only why.
    std::ostringstream notes;
    write_streamed(options.op.common.output,
                   [&](std::ostream& out) { (void)stream_op_csv(options, registry, out, notes); });
    std::cerr << notes.str();
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
    c->add_option("--head-dim-v", o->head_dim_v,
                  "Width of V and O where narrower than Q and K (DeepSeek's MLA expanded for prefill: --head-dim 192 "
                  "--head-dim-v 128; default: the head dimension)");
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
