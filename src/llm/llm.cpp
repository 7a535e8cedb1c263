#include "roofline/llm/llm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "roofline/basis/basis.hpp"
#include "roofline/basis/calibration.hpp"
#include "roofline/core/error.hpp"
#include "roofline/llm/expert_parallel.hpp"
#include "roofline/llm/op_timer.hpp"

namespace roofline {
namespace {

constexpr std::string_view no_link_table = "a transfer between GPUs: the link model is kept";
constexpr std::string_view measured_link =
    "a transfer between GPUs: timed by the calibration's measured collectives (not by op tables)";

// Times the ops of a step's description (decoder_step.hpp) on one GPU: the roofline bound on the
// GPU's roofs, the calibrated time where a calibration's table covers the op, and transfers by
// the link model or the measured collectives.
class StepTimer {
 public:
  StepTimer(const GpuSpec& gpu, const DeploymentConfig& config, const TimeOptions& options, int tp)
      : gpu_(gpu),
        c_(config),
        o_(options),
        roofs_(Roofs::of(gpu)),
        tp_link_(group_link(gpu, config, tp)),
        measured_(config.collectives && config.collectives_gpu == gpu.id ? config.collectives.get() : nullptr) {
    // Every step has linear layers, the head, attention and vector work: a GPU that states no
    // rate for one of their formats is bad input before anything is timed.
    const DType act = config.activations;
    required(matrix_class(config.weights, act), name_of(matmul_dtype(gpu, config.weights, act)));
    required(matrix_class(config.embeddings, act), name_of(matmul_dtype(gpu, config.embeddings, act)));
    required(matrix_class(act, act), name_of(act));
    required(vector_class(act), "vector");
  }

  StepOp time(const DecoderOp& op) const {
    StepOp row;
    row.name = op.name;
    row.op = op.model;
    row.shape = op.shape_text;
    row.cost = op.cost;
    row.role = op.role;
    if (op.unit == MathUnit::link) {
      transfer(op, row);
      return row;
    }
    const double peak = op.unit == MathUnit::matrix ? required(matrix_class(op.weights, op.activations), "matrix")
                                                    : required(vector_class(op.activations), "vector");
    const OpTime t = roofline_time(op.cost, peak, roofs_.bandwidth);
    row.bound = name_of(t.bound);
    row.roofline_s = expected_time_s(t, o_.efficiency);
    row.time_s = row.roofline_s;
    if (o_.calibration != nullptr) row.calibration = calibrate(op, row);
    return row;
  }

 private:
  [[nodiscard]] std::optional<PeakClass> matrix_class(DType weights, DType act) const {
    return MathRoof{MathRoof::Unit::matrix, matmul_dtype(gpu_, weights, act)}.resolve(roofs_);
  }
  [[nodiscard]] std::optional<PeakClass> vector_class(DType act) const {
    return MathRoof{MathRoof::Unit::vector, act}.resolve(roofs_);
  }

  double required(std::optional<PeakClass> peak, std::string_view what) const {
    if (!peak) throw InputError(fmt::format("{} states no {} rate", gpu_.id, what));
    return *roofs_.peak(*peak);
  }

  // The op's basis names it to the calibration (its tables, roofs and series), with the cost this
  // model charges, so that the lookup sees exactly that work. No basis: no benchmark measures
  // such an op, and the reason says so.
  OpCalibration calibrate(const DecoderOp& op, StepOp& row) const {
    OpCalibration out;
    BasisOrReason made = basis_of(op);
    if (const NoBasis* none = std::get_if<NoBasis>(&made)) {
      out.detail = none->reason;
      return out;
    }
    Basis& basis = std::get<Basis>(made);
    basis.cost = row.cost;
    basis.roof_bytes = row.cost.bytes();
    if (const auto in_place = o_.table_in_place_of.find(basis.best_table); in_place != o_.table_in_place_of.end()) {
      if (o_.describe) {
        const std::string swap = fmt::format("table {} in place of {}", in_place->second, basis.best_table);
        basis.note = basis.note.empty() ? swap : fmt::format("{}; {}", basis.note, swap);
      }
      basis.best_table = in_place->second;
      basis.table = in_place->second;
    }
    // A planner's or simulator's run keeps the times alone: the lookup writes no detail.
    CalibratedOrNot found =
        calibrated_time(*o_.calibration, basis, roofs_, TableChoice::best, o_.describe ? Explain::yes : Explain::no);
    if (NotCalibrated* none = std::get_if<NotCalibrated>(&found)) {
      out.detail = std::move(none->reason);
      return out;
    }
    CalibratedTime& t = std::get<CalibratedTime>(found);
    out.applied = true;
    out.table = std::move(t.table);
    out.efficiency = t.efficiency;
    out.clamped = t.clamped;
    out.detail = basis.note.empty() || !o_.describe ? std::move(t.detail) : fmt::format("{}; {}", t.detail, basis.note);
    row.time_s = t.time_s;
    return out;
  }

  // Transfers between GPUs are timed by the link model or the measured collectives; the op
  // tables of a calibration do not apply to them.
  void transfer(const DecoderOp& op, StepOp& row) const {
    const auto& s = std::get<TransferShape>(op.shape);
    row.bound = "link";
    CollectiveCost cost;
    std::string how;
    if (op.kind == OpKind::send) {
      const LinkSpec link = group_link(gpu_, c_, s.group_gpus);
      row.link_bytes = s.bytes;
      cost.time_s = point_to_point_time(s.bytes, link);
      how = link.name;
      // A measured two-rank all-gather of 2 x bytes is one step in which each GPU sends `bytes` to
      // the other: the transfer the pipeline makes, measured.
      const CollectiveCost pair = communication(Collective::all_gather, 2 * s.bytes, 2, link, s.group_gpus);
      if (pair.measured) {
        cost = pair;
        how = pair.detail + " (one step: a transfer of the bytes)";
      }
    } else if (op.kind == OpKind::all_to_all) {
      const LinkSpec link = group_link(gpu_, c_, s.group_gpus);
      row.link_bytes = s.bytes;
      cost.time_s = all_to_all_time(s.bytes, s.ranks, link);
      how = fmt::format("all-to-all over {}", link.name);
    } else if (op.kind == OpKind::all_gather) {
      cost = communication(Collective::all_gather, s.bytes, s.ranks, tp_link_, s.group_gpus);
      row.link_bytes = s.bytes * bus_factor(Collective::all_gather, s.ranks);
      how = cost.detail;
    } else {
      cost = communication(Collective::all_reduce, s.bytes, s.ranks, tp_link_, s.group_gpus);
      row.link_bytes = ring_allreduce_bytes_per_rank(s.bytes, s.ranks);
      how = cost.detail;
    }
    row.time_s = cost.time_s;
    row.roofline_s = row.time_s;
    if (o_.describe) row.shape = fmt::format("{}, {}", op.shape_text, how);
    if (o_.calibration != nullptr) {
      row.calibration = OpCalibration{false, {}, 0, false, std::string(cost.measured ? measured_link : no_link_table)};
    }
  }

  // The measured table where one covers the collective and the group (of `group_gpus`) stays
  // within the scale-up domain the tables were measured in; else the ring over `link`.
  [[nodiscard]] CollectiveCost communication(Collective op, double bytes, int ranks, const LinkSpec& link,
                                             int group_gpus) const {
    return collective_cost(op, bytes, ranks, link, measured_, group_gpus <= c_.scale_up_domain);
  }

  const GpuSpec& gpu_;
  const DeploymentConfig& c_;
  const TimeOptions& o_;
  Roofs roofs_;  // the GPU's figures: bandwidth and peaks, for the roofline and calibrated times
  LinkSpec tp_link_;
  const CollectiveTables* measured_;
};

void account(StepTime& step) {
  step.time_s = 0;
  step.roofline_s = 0;
  for (const LayerGroup& group : step.groups) {
    const auto count = static_cast<double>(group.count);
    for (const StepOp& op : group.ops) {
      const double t = op.time_s * count;
      step.time_s += t;
      step.roofline_s += op.roofline_s * count;
      step.flops += op.cost.flops * count;
      step.bytes += op.cost.bytes() * count;
      if (op.role == OpRole::tp_comm) {
        step.tp_comm_s += t;
      } else if (op.role == OpRole::pp_comm) {
        step.pp_comm_s += t;
      } else if (op.role == OpRole::ep_comm) {
        step.ep_comm_s += t;
      } else if (op.bound == "compute") {
        step.compute_s += t;
      } else if (op.role == OpRole::weights) {
        step.weights_s += t;
      } else if (op.role == OpRole::kv_cache) {
        step.kv_cache_s += t;
      } else {
        step.activations_s += t;
      }
    }
  }
}

StepTime run_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding, const DeploymentConfig& config,
                  const TimeOptions& options, const StepShape& shape) {
  DescribeOptions describe;
  describe.text = options.describe;
  if (gpu.smem_per_unit_kb) describe.kernels.smem_per_unit_bytes = *gpu.smem_per_unit_kb * 1024.0;
  return time_layers(describe_step(model, sharding, StepFormats::of(config, gpu), shape, describe), gpu, sharding,
                     config, options);
}

}  // namespace

StepTime time_layers(const std::vector<DecoderLayer>& layers, const GpuSpec& gpu, const Sharding& sharding,
                     const DeploymentConfig& config, const TimeOptions& options) {
  const StepTimer timer(gpu, config, options, sharding.tp);
  StepTime step;
  for (const DecoderLayer& layer : layers) {
    LayerGroup group{layer.name, layer.count, {}};
    group.ops.reserve(layer.ops.size());
    for (const DecoderOp& op : layer.ops) group.ops.push_back(timer.time(op));
    step.groups.push_back(std::move(group));
  }
  account(step);
  return step;
}

// OpTimer (op_timer.hpp) is StepTimer with the config and options it refers to kept alongside.
struct OpTimer::Impl {
  Impl(const GpuSpec& gpu, const DeploymentConfig& c, const TimeOptions& o, int tp)
      : config(c), options(o), timer(gpu, config, options, tp) {}
  DeploymentConfig config;
  TimeOptions options;
  StepTimer timer;
};

OpTimer::OpTimer(const GpuSpec& gpu, const DeploymentConfig& config, const TimeOptions& options, int tp)
    : impl_(std::make_unique<const Impl>(gpu, config, options, tp)) {}
OpTimer::OpTimer(OpTimer&&) noexcept = default;
OpTimer& OpTimer::operator=(OpTimer&&) noexcept = default;
OpTimer::~OpTimer() = default;
StepOp OpTimer::time(const DecoderOp& op) const {
  return impl_->timer.time(op);
}

double LayerGroup::time_s() const {
  double t = 0;
  for (const StepOp& op : ops) t += op.time_s;
  return t;
}

double LayerGroup::roofline_s() const {
  double t = 0;
  for (const StepOp& op : ops) t += op.roofline_s;
  return t;
}

std::string_view StepTime::bottleneck() const {
  const std::array<std::pair<std::string_view, double>, 7> parts{{{"weight reads", weights_s},
                                                                  {"KV-cache reads", kv_cache_s},
                                                                  {"activation traffic", activations_s},
                                                                  {"compute", compute_s},
                                                                  {"TP all-reduce", tp_comm_s},
                                                                  {"PP transfers", pp_comm_s},
                                                                  {"EP all-to-all", ep_comm_s}}};
  return std::max_element(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

double StepTime::bottleneck_share() const {
  const double largest = std::max({weights_s, kv_cache_s, activations_s, compute_s, tp_comm_s, pp_comm_s, ep_comm_s});
  return time_s > 0 ? largest / time_s : 0.0;
}

StepTime decode_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                     const DeploymentConfig& config, std::int64_t batch, std::int64_t context,
                     const TimeOptions& options) {
  if (context < 1) throw InputError("--context: must be at least 1 token");
  return run_step(model, gpu, sharding, config, options, {StepPhase::decode, batch, context});
}

StepTime verify_step(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                     const DeploymentConfig& config, std::int64_t batch, std::int64_t queries, std::int64_t context,
                     const TimeOptions& options) {
  if (context < 1) throw InputError("--context: must be at least 1 token");
  return run_step(model, gpu, sharding, config, options, {StepPhase::decode, batch * queries, context, queries});
}

StepTime prefill(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding, const DeploymentConfig& config,
                 std::int64_t prompt, const TimeOptions& options) {
  return run_step(model, gpu, sharding, config, options, {StepPhase::prefill, prompt, prompt});
}

LinkSpec group_link(const GpuSpec& gpu, const DeploymentConfig& config, int ranks) {
  if (ranks <= config.scale_up_domain) return scale_up_link(gpu, config.scale_up_latency_s);
  return config.scale_out;
}

AllReduceCompare tp_allreduce(const ModelSpec& model, const GpuSpec& gpu, const Sharding& sharding,
                              const DeploymentConfig& config, std::int64_t tokens) {
  AllReduceCompare out;
  out.message_bytes = static_cast<double>(tokens * model.hidden) * bytes_per_element(config.activations);
  const int ranks = std::max(sharding.tp, 2);  // a TP of 1 has no all-reduce; show what 2 would cost
  out.scale_up_s = ring_allreduce_time(out.message_bytes, ranks, scale_up_link(gpu, config.scale_up_latency_s));
  out.scale_out_s = ring_allreduce_time(out.message_bytes, ranks, config.scale_out);
  return out;
}

}  // namespace roofline
