// roofline train: does training fit in GPU memory, and what to change when it does not.
#include "train.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/train.hpp"

namespace roofline::cli {
namespace {

struct ComponentRow {
  std::string component;
  double gb = 0;
  std::string accounting;
};

constexpr std::array<ColumnOf<ComponentRow>, 3> component_columns{{
    {{"component", "per GPU", 0}, [](const ComponentRow& r) { return Cell{r.component}; }},
    {{"memory_gb", "GB", 2}, [](const ComponentRow& r) { return Cell{r.gb}; }},
    {{"accounting", "accounting", 0}, [](const ComponentRow& r) { return Cell{r.accounting}; }},
}};

struct OptionRow {
  int zero = 0;
  bool recompute = false;
  TrainMemory memory;
};

constexpr std::array<ColumnOf<OptionRow>, 9> option_columns{{
    {{"zero", "ZeRO", 0}, [](const OptionRow& r) { return Cell{std::int64_t{r.zero}}; }},
    {{"recompute", "recompute", 0}, [](const OptionRow& r) { return Cell{r.recompute}; }},
    {{"weights_gb", "weights [GB]", 2}, [](const OptionRow& r) { return Cell{r.memory.weights_bytes / 1e9}; }},
    {{"gradients_gb", "grads [GB]", 2}, [](const OptionRow& r) { return Cell{r.memory.gradients_bytes / 1e9}; }},
    {{"optimizer_gb", "Adam [GB]", 2}, [](const OptionRow& r) { return Cell{r.memory.optimizer_bytes / 1e9}; }},
    {{"activations_gb", "activations [GB]", 2},
     [](const OptionRow& r) { return Cell{r.memory.activations_bytes / 1e9}; }},
    {{"other_gb", "other [GB]", 2},
     [](const OptionRow& r) {
       return Cell{(r.memory.gathered_bytes + r.memory.logits_bytes + r.memory.reserve_bytes) / 1e9};
     }},
    {{"total_gb", "total [GB]", 2}, [](const OptionRow& r) { return Cell{r.memory.total() / 1e9}; }},
    {{"fits", "fits", 0}, [](const OptionRow& r) { return Cell{r.memory.fits()}; }},
}};

}  // namespace

Report run_train(const TrainOptions& options, const HardwareRegistry& registry) {
  const ModelSpec model = resolve_model(options.model);
  const GpuSpec gpu = apply_overrides(registry.find(options.parallelism.gpu), options.what_if);
  require_positive(options.parallelism.gpus, "--gpus", max_batch);
  require_positive(options.seq, "--seq");
  const std::string long_context = check_context(model, options.seq, options.model, "--seq");
  require_positive(options.micro_batch, "--micro-batch", max_batch);
  if (!(options.reserve_gb >= 0)) throw InputError(fmt::format("--reserve-gb {}: must be >= 0", options.reserve_gb));

  TrainConfig config;
  config.gpus = options.parallelism.gpus;
  config.tp = options.parallelism.tp;
  config.pp = options.parallelism.pp;
  config.zero = options.zero;
  config.recompute = options.recompute;
  config.seq = options.seq;
  config.micro_batch = options.micro_batch;
  config.reserve_bytes = options.reserve_gb * 1e9;
  const TrainMemory m = train_memory(model, gpu, config);

  Report report;
  report.kind = "train";
  report.inputs = {{"model", model_summary(model)},
                   {"gpu", gpu.id},
                   {"gpus", options.parallelism.gpus},
                   {"tp", options.parallelism.tp},
                   {"pp", options.parallelism.pp},
                   {"data_parallel", m.data_parallel},
                   {"zero", options.zero},
                   {"recompute", options.recompute},
                   {"seq", options.seq},
                   {"micro_batch", options.micro_batch},
                   {"reserve_gb", options.reserve_gb},
                   {"set", options.what_if}};
  report.hardware.push_back({gpu.id, gpu.origin});

  const auto sharded = [&](int stage) {
    return options.zero >= stage ? fmt::format(" / {} data-parallel (ZeRO-{})", m.data_parallel, options.zero)
                                 : std::string();
  };
  const double psi = m.parameters_per_gpu;
  std::vector<ComponentRow> rows{
      {"weights (bf16)", m.weights_bytes / 1e9, fmt::format("{:.4g} params x 2 B{}", psi, sharded(3))},
      {"gradients (bf16)", m.gradients_bytes / 1e9, fmt::format("{:.4g} params x 2 B{}", psi, sharded(2))},
      {"Adam states (fp32)", m.optimizer_bytes / 1e9,
       fmt::format("{:.4g} params x 12 B (master, momentum, variance){}", psi, sharded(1))},
      {"gathered weights", m.gathered_bytes / 1e9,
       options.zero >= 3 ? "two layers' bf16 weights (in use + prefetched)" : "none below ZeRO-3"},
      {options.recompute ? "activations (recomputed)" : "activations", m.activations_bytes / 1e9,
       options.recompute ? "each layer's input kept, one layer rebuilt at a time"
                         : fmt::format("seq {} x micro-batch {} / TP {}, all layers of the stage", options.seq,
                                       options.micro_batch, options.parallelism.tp)},
      {"logits (fp32)", m.logits_bytes / 1e9, "seq x micro-batch x vocab / TP x 4 B, last stage"},
      {"reserve", m.reserve_bytes / 1e9, "CUDA context, NCCL and allocator (--reserve-gb)"},
      {"total", m.total() / 1e9, m.fits() ? "fits" : "does NOT fit"},
      {"capacity", m.capacity_bytes / 1e9, gpu.name},
  };
  report.tables.push_back(Table::from_rows<ComponentRow>(
      "memory",
      fmt::format("Training memory per GPU: {} on {} x {} (TP {}, PP {}, data-parallel {}), heaviest stage", model.id,
                  options.parallelism.gpus, gpu.id, options.parallelism.tp, options.parallelism.pp, m.data_parallel),
      component_columns, rows));

  std::vector<OptionRow> alternatives;
  for (bool recompute : {false, true}) {
    for (int zero = 0; zero <= 3; ++zero) {
      TrainConfig other = config;
      other.zero = zero;
      other.recompute = recompute;
      alternatives.push_back({zero, recompute, train_memory(model, gpu, other)});
    }
  }
  report.tables.push_back(Table::from_rows<OptionRow>(
      "options", "Every ZeRO stage, with and without recomputation, on the same GPUs", option_columns, alternatives));

  const std::vector<std::string> suggestions = train_suggestions(model, gpu, config);
  report.extra_results = {{"fits", m.fits()},
                          {"total_gb", m.total() / 1e9},
                          {"capacity_gb", m.capacity_bytes / 1e9},
                          {"activations_full_gb", m.activations_full_bytes / 1e9},
                          {"activations_recompute_gb", m.activations_recompute_bytes / 1e9},
                          {"suggestions", suggestions}};
  if (m.fits()) {
    report.notes.push_back(fmt::format("fits: {:.1f} of {:.1f} GB per GPU", m.total() / 1e9, m.capacity_bytes / 1e9));
  } else {
    report.notes.push_back(
        fmt::format("does NOT fit: {:.1f} GB per GPU > {:.1f} GB", m.total() / 1e9, m.capacity_bytes / 1e9));
    for (const std::string& s : suggestions) report.notes.push_back("try " + s);
  }
  report.notes.push_back(
      "mixed-precision Adam, 16 bytes per parameter: bf16 weights 2 + bf16 gradients 2 + fp32 master weights, "
      "momentum and variance 12 (Rajbhandari et al., ZeRO, SC'20); ZeRO-1 shards the 12, ZeRO-2 also the "
      "gradients, ZeRO-3 (FSDP full sharding) also the weights, over the data-parallel GPUs");
  report.notes.push_back(
      "activations: Korthikanti et al. (MLSys 2023) with flash attention (no score matrix stored), no dropout, "
      "sequence parallelism with TP, 1F1B pipeline (stage i keeps PP - i micro-batches); docs/llm.md derives it");
  if (model.checkpoint) {
    // Full training upcasts a quantized checkpoint on load: its format sets no byte of the above.
    report.notes.push_back(fmt::format(
        "weights: the checkpoint stores {}; training holds the bf16 weights and fp32 master copy above, as "
        "mixed-precision training of a dequantized checkpoint does (training the quantized weights, as QLoRA "
        "does, is not modelled)",
        model.checkpoint->description));
  }
  if (!long_context.empty()) report.notes.push_back(long_context);
  return report;
}

void setup_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* command = app.add_subcommand(
      "train", "Training memory per GPU: weights, gradients, Adam states, ZeRO 0-3 / FSDP, activations");
  add_model_options(*command, options->model);
  add_context_limit_option(*command, options->model);
  add_parallelism_flags(*command, options->parallelism, "GPUs in the job (a multiple of TP x PP)", true);
  command->add_option("--zero", options->zero, "ZeRO stage: 0 none, 1 optimizer, 2 + gradients, 3 (FSDP) + weights")
      ->capture_default_str();
  command->add_flag("--recompute", options->recompute, "Full activation recomputation (keep only layer inputs)");
  command->add_option("--seq", options->seq, "Tokens per sequence")->capture_default_str();
  command->add_option("--micro-batch", options->micro_batch, "Sequences per micro-batch")->capture_default_str();
  command->add_option("--reserve-gb", options->reserve_gb, "GB per GPU kept for CUDA context, NCCL, allocator")
      ->capture_default_str();
  add_what_if_option(*command, options->what_if);
  add_common_options(*command, options->common);
  command->callback([options] { emit(run_train(*options, load_registry(options->common)), options->common); });
}

}  // namespace roofline::cli
