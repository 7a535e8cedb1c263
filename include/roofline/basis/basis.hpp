#pragma once

// What the model predicts for a measured benchmark, and for any operation, on one GPU.
//
// A Basis is an operation as the model sees it: its FLOPs and bytes (from ops.hpp,
// attention.hpp, access.hpp: the functions `roofline op` uses), which roofs bound it, and the
// calibration table it belongs to. The same basis functions serve a benchmark (rebuilt from the
// parameters it recorded) and an operation of `op` or `llm`, so a calibration learnt from
// benchmarks applies to operations by construction.
//
// The roofline's prediction is the bare lower bound: max(FLOPs / peak, bytes / bandwidth) with
// the hardware file's figures. A calibrated prediction divides that bound by an efficiency
// learnt from measurements (roofline/calibration.hpp).

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "roofline/core/dtype.hpp"
#include "roofline/core/roofline.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/model/attention.hpp"
#include "roofline/model/ops.hpp"

namespace roofline {

// The figures a prediction uses: main-memory bandwidth and the stated peaks of one GPU.
struct Roofs {
  std::string gpu_id;
  double bandwidth = 0;                                                // B/s, read + write
  std::array<std::optional<double>, peak_class_names.size()> peaks{};  // FLOP/s
  // On chip, for flash attention's tiles and their L2 residency (not in a calibration file).
  std::optional<double> smem_bytes_per_unit;  // shared memory per SM
  double l2_bytes = 0;
  int units = 0;  // SMs or CUs

  [[nodiscard]] static Roofs of(const GpuSpec& gpu);
  [[nodiscard]] std::optional<double> peak(PeakClass peak) const { return peaks[static_cast<std::size_t>(peak)]; }
  // The class bounding matrix math in `type` (the first of DTypeInfo::matrix_peaks stated), as
  // GpuSpec::matrix_peak_class does.
  [[nodiscard]] std::optional<PeakClass> matrix_class(DType type) const;
};

// Which compute roof bounds an operation's FLOPs.
struct MathRoof {
  enum class Unit : std::uint8_t { none, matrix, vector };
  Unit unit = Unit::none;  // none: the FLOPs are not charged (memory-only access patterns)
  DType type = DType::fp32;
  [[nodiscard]] std::optional<PeakClass> resolve(const Roofs& roofs) const;
};

struct Basis {
  std::string pattern;           // the family results are summarised by: stream, access.strided, gemv, gemm, ...
  std::string table;             // the calibration table of this implementation ("gemv.bf16.mma")
  std::string best_table;        // the table of the best implementation, which op/llm use ("gemv.bf16"); may be empty
  std::optional<double> series;  // the table's second axis (GEMV batch, access stride), if it has one
  std::string series_name;       // "batch", "stride"
  // The axis is offered, not imposed: calibrate keeps it for a table only where leave-one-out
  // predicts the table's points better with it than by size alone (a GEMM's k).
  bool series_optional = false;
  OpCost cost;            // the problem's FLOPs and HBM bytes (read + written), from the model
  double roof_bytes = 0;  // bytes charged at the memory roof (moved sectors for access patterns)
  MathRoof math;
  std::string model;    // the model call, for the reader: "gemv_cost{m 8192, k 8192, batch 1, bf16}"
  std::string problem;  // a benchmark's problem without its implementation: the best table keeps the fastest
  std::string note;     // a remark on this prediction (a substituted table, a byte count that drifted)
};

// A measured result the model has no prediction for, and why (a ceiling is itself a roof).
struct NoBasis {
  std::string reason;
  bool ceiling = false;
};

using BasisOrReason = std::variant<Basis, NoBasis>;

// The bare roofline's lower bound on the time of a basis on these roofs.
struct IdealTime {
  double compute_s = 0;  // 0 when the FLOPs are not charged or the peak is not stated
  double memory_s = 0;
  double time_s = 0;
  Bound bound = Bound::memory;
  std::optional<PeakClass> peak;  // the peak used, if any
  bool peak_missing = false;      // the math needs a peak these roofs do not state
};
[[nodiscard]] IdealTime ideal_time(const Basis& basis, const Roofs& roofs);

// ---- Bases of operations (what op and llm predict) ----
[[nodiscard]] Basis gemm_basis(const GemmShape& shape);
[[nodiscard]] Basis gemv_basis(const GemvShape& shape);
// A grouped GEMM (MoE experts): expert e multiplies its tokens_per_expert[e] rows by its own
// [n x k] weight. Its cost is gemm_cost of each expert with tokens, summed (an expert without
// tokens reads no weights); its table calibration_tables::grouped_gemm(a, b).
struct GroupedGemmShape {
  std::span<const std::int64_t> tokens_per_expert;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType a = DType::bf16;
  DType b = DType::bf16;
  DType c = DType::bf16;
};
[[nodiscard]] Basis grouped_gemm_basis(const GroupedGemmShape& shape);
// What calibrates a grouped GEMM of `a` activations and `b` weights at depth k (its table, math roof
// and k axis), without a cost: for callers that count the cost their own way (the decoder step's
// routed experts, at their expected reach).
[[nodiscard]] Basis grouped_gemm_lookup(DType a, DType b, std::int64_t k);
// Vector work reading `inputs` and writing `outputs` arrays: its table is the stream kernel class
// with the nearest share of writes (read-only, 1 read : 1 write, 2 reads : 1 write).
[[nodiscard]] Basis vector_basis(const OpCost& cost, int inputs, int outputs, DType dtype, std::string model);
[[nodiscard]] Basis elementwise_basis(const ElementwiseShape& shape);
[[nodiscard]] Basis norm_basis(const NormShape& shape);
[[nodiscard]] Basis softmax_basis(const SoftmaxShape& shape);
[[nodiscard]] Basis attention_basis(const AttentionShape& shape, AttentionImpl impl);
// The table of one attention kernel (the last word of its benchmark id): "attention.flashwgmma.bf16.d128.causal".
// `head_dim_v`: V's width where it is narrower ("...d192v128.causal"; 0: as wide as Q and K).
[[nodiscard]] std::string attention_implementation_table(std::string_view kernel, DType dtype, std::int64_t head_dim,
                                                         bool causal, std::int64_t head_dim_v = 0);
// Flash attention as a model step runs it, `cost` being its traffic with the kernel's tiles.
// Prefill (seq > 1) takes the flash attention tables. A decode step (one query row per sequence
// against its cache) takes attention.decode.<act>[.kv<kv>].d<head_dim>, the table of the memory
// suite's decode-attention benchmark, which gets its basis from this same function; its series
// is batch x kv_heads (the kernel's streams).
[[nodiscard]] Basis flash_step_basis(const AttentionShape& shape, const OpCost& cost);
// Latent (MLA) attention at decode, absorbed (shape.absorbed): the table of the memory suite's
// latent-attention benchmark, attention.latent_decode.<act>[.kv<kv>].d<latent + rope>, which gets
// its basis from this same function; its series is the query rows per cached row (heads x queries
// per sequence), which set the arithmetic intensity (16 read the cache at 30 FLOP/B, 128 at 240).
// `cost`: the op's (serve's steps give their exact sums over requests of unequal caches, the
// shape the mean cache only).
[[nodiscard]] Basis latent_decode_basis(const LatentAttentionShape& shape, const OpCost& cost);

}  // namespace roofline
