// plan's flags read alike by its two modes (plan_inputs.hpp).
#include "plan_inputs.hpp"

#include <fmt/format.h>

#include <map>

#include "commands.hpp"

namespace roofline::cli::plan_detail {
namespace {

// --speculate K,K,... with one --acceptance (a rate, or one per position up to the largest K: a
// smaller K takes the first K rates, the acceptance of a position not depending on how many follow).
// Without --speculate, a model whose checkpoint ships MTP layers is tried with K = its layers, at
// --acceptance or else at the rates its model file states with their source; a model that states
// none gets a note naming the flags. --speculate none tries no speculation. `note` says what was done.
std::vector<Speculation> parse_speculation(const PlanOptions& options, const ModelSpec& model, std::string& note) {
  if (to_lower(options.speculate) == "none") {
    if (!options.acceptance.empty() || options.draft_model) {
      throw InputError("--speculate none: leave out --acceptance and --draft-model");
    }
    return {};
  }
  if (options.speculate.empty()) {
    if (options.draft_model) throw InputError("--draft-model needs --speculate K[,K...]");
    if (!model.mtp) {
      if (!options.acceptance.empty()) throw InputError("--acceptance and --draft-model need --speculate K[,K...]");
      return {};
    }
    const int k = static_cast<int>(model.mtp->layers);
    if (!options.acceptance.empty()) {
      SpeculationFlags flags;
      flags.draft_tokens = k;
      flags.acceptance = options.acceptance;
      note = fmt::format(
          "speculation: {} ships {} MTP layer(s): tried with --speculate {} (MTP) at --acceptance {} beside none "
          "(--speculate none leaves it out)",
          model.id, k, k, options.acceptance);
      return {*resolve_speculation(flags, options.model.models_dirs)};
    }
    if (model.mtp->acceptance.empty()) {
      note = fmt::format(
          "speculation: {} ships {} MTP layer(s) but states no acceptance rate; --speculate {} --acceptance A tries "
          "them",
          model.id, k, k);
      return {};
    }
    Speculation s{k, model.mtp->acceptance, std::nullopt};
    check_speculation(s);
    note = fmt::format(
        "speculation: {} ships {} MTP layer(s): tried with --speculate {} at acceptance {} beside none, the rate its "
        "model file states ({}); --speculate none leaves it out, --speculate K --acceptance A sets another",
        model.id, k, k, fmt::join(s.acceptance, ","), model.mtp->acceptance_source);
    return {s};
  }
  const std::vector<int> drafts = parse_list<int>(options.speculate, "--speculate", parse_degree);
  SpeculationFlags flags;
  flags.draft_tokens = *std::max_element(drafts.begin(), drafts.end());
  flags.acceptance = options.acceptance;
  flags.draft_model = options.draft_model;
  const std::optional<Speculation> longest = resolve_speculation(flags, options.model.models_dirs);
  std::vector<Speculation> out;
  for (int k : drafts) {
    Speculation s = *longest;
    s.draft_tokens = k;
    if (s.acceptance.size() > 1) s.acceptance.resize(static_cast<std::size_t>(k));
    check_speculation(s);
    out.push_back(std::move(s));
  }
  return out;
}

constexpr double max_price_usd_per_hour = 1e6;

std::map<std::string, double> parse_prices(const std::vector<std::string>& entries, const std::vector<GpuSpec>& gpus,
                                           const HardwareRegistry& registry) {
  std::map<std::string, double> prices;
  std::optional<double> fallback;
  for (const std::string& entry : entries) {
    for (const std::string& item : split(entry, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw InputError(fmt::format("--price '{}': expected GPU=USD_PER_HOUR, e.g. --price h100=2.5", item));
      }
      const std::string name = item.substr(0, eq);
      const std::vector<double> value = parse_positive_numbers("--price " + name, item.substr(eq + 1));
      // No GPU rents for a million dollars an hour; beyond that, costs of large fleets overflow
      // to inf.
      if (value.front() > max_price_usd_per_hour) {
        throw InputError(fmt::format("--price {}: {} USD per GPU-hour is beyond any offer (at most {:g})", name,
                                     item.substr(eq + 1), max_price_usd_per_hour));
      }
      // Two prices for one GPU (by id or alias): the last would win without a word.
      const bool repeated = to_lower(name) == "all" ? fallback.has_value()
                                                    : !prices.emplace(registry.find(name).id, value.front()).second;
      if (repeated) throw InputError(fmt::format("--price {}: given twice", name));
      if (to_lower(name) == "all") fallback = value.front();
    }
  }
  std::vector<std::string> missing;
  for (const GpuSpec& gpu : gpus) {
    if (prices.count(gpu.id) > 0) continue;
    if (fallback) {
      prices[gpu.id] = *fallback;
    } else {
      missing.push_back(gpu.id);
    }
  }
  if (!missing.empty()) {
    throw InputError(
        fmt::format("--price: no price for {}; give --price GPU=USD_PER_HOUR for each GPU (or --price "
                    "all=USD_PER_HOUR): roofline ships no prices, they depend on the provider and the date",
                    fmt::join(missing, ", ")));
  }
  return prices;
}

CheckpointNotes apply_checkpoint(const ModelSpec& model, const PlanOptions& options, PlanSpace& space) {
  CheckpointNotes notes;
  if (model.checkpoint && options.weights_given) {
    notes.weights = fmt::format("weights: --weights {}, tried as given; the checkpoint stores {}", options.weights,
                                model.checkpoint->description);
  } else if (model.checkpoint) {
    notes.weights = apply_checkpoint_format(model, false, space.base);
    space.weights = {space.base.weights};
  }
  notes.long_context =
      check_context(model, options.prompt + options.output, options.model, "--prompt-tokens + --output-tokens");
  return notes;
}

}  // namespace

int parse_degree(const std::string& text, std::string_view flag) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1) throw InputError(fmt::format("{}: '{}' is not a positive integer", flag, text));
  return value;
}

DType parse_format_flag(const std::string& text, std::string_view flag) {
  return parse_storage_dtype(text, flag);
}

// The report's calibration blocks, one per GPU --calibration was resolved for (empty without it).
nlohmann::json calibrations_json(const std::vector<CalibrationChoice>& choices) {
  nlohmann::json out = nlohmann::json::array();
  for (const CalibrationChoice& choice : choices) out.push_back(calibration_block(choice));
  return out;
}

nlohmann::json gpu_ids_json(const std::vector<GpuSpec>& gpus) {
  nlohmann::json out = nlohmann::json::array();
  for (const GpuSpec& gpu : gpus) out.push_back(gpu.id);
  return out;
}

nlohmann::json speculation_list_json(const std::vector<Speculation>& speculation) {
  nlohmann::json out = nlohmann::json::array();
  for (const Speculation& s : speculation) out.push_back(speculation_json(s));
  return out;
}

nlohmann::json space_json(const PlanSpace& space) {
  const auto names = [](const std::vector<DType>& formats) {
    nlohmann::json out = nlohmann::json::array();
    for (DType t : formats) out.push_back(name_of(t));
    return out;
  };
  return {{"weights", names(space.weights)},
          {"kv", names(space.kv)},
          {"tp", space.tp},
          {"pp", space.pp},
          {"ep", space.ep.empty() ? nlohmann::json("auto") : nlohmann::json(space.ep)},
          {"attention_dp", space.attention_dp},
          {"speculation", speculation_list_json(space.speculation)}};
}

const std::optional<Calibration>& PlanInputs::calibration() const {
  static const std::optional<Calibration> none;
  return choices.empty() || !space.calibration_by_gpu.empty() ? none : choices.front().calibration;
}

PlanInputs read_plan_inputs(const PlanOptions& options, const HardwareRegistry& registry, bool prices_required) {
  PlanInputs in;
  in.model = resolve_model(options.model);
  const ModelSpec& model = in.model;
  PlanSpace& space = in.space;
  space.gpus = selected_gpus(registry, options.gpus, options.what_if);
  if (prices_required || !options.prices.empty()) {
    space.usd_per_gpu_hour = parse_prices(options.prices, space.gpus, registry);
  }
  space.weights = parse_list<DType>(options.weights, "--weights", parse_format_flag);
  in.checkpoint = apply_checkpoint(model, options, space);
  space.kv = parse_list<DType>(options.kv, "--kv", parse_format_flag);
  space.tp = parse_list<int>(options.tp, "--tp", parse_degree);
  space.pp = parse_list<int>(options.pp, "--pp", parse_degree);
  if (to_lower(options.ep) != "auto") space.ep = parse_list<int>(options.ep, "--ep", parse_degree);
  space.attention_dp = !options.no_attention_dp;
  space.speculation = parse_speculation(options, model, in.speculation_note);
  // A file holds one GPU's tables; auto resolves one calibration per candidate GPU.
  if (std::optional<CalibrationChoice> first =
          apply_deployment_flags(options.deployment, space.base, space.gpus.front(), registry)) {
    in.choices.push_back(std::move(*first));
    const bool per_gpu = *options.deployment.calibration == auto_calibration_flag;
    for (std::size_t i = 1; per_gpu && i < space.gpus.size(); ++i) {
      in.choices.push_back(choose_calibration(*options.deployment.calibration, space.gpus[i], registry));
    }
    if (per_gpu) {
      for (const CalibrationChoice& choice : in.choices) {
        if (choice.calibration) space.calibration_by_gpu[choice.gpu] = &*choice.calibration;
      }
    }
  }
  apply_time_flags(options.deployment, in.calibration(), space.time);
  return in;
}

}  // namespace roofline::cli::plan_detail
