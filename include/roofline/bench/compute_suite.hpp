#pragma once

// The compute suite, described as data: the GEMM ladder (naive -> shared-memory tiled -> mma.sync
// -> wgmma, with cuBLAS as the in-run reference), the FP8 GEMM (the wgmma kernel vs cuBLASLt, at
// the linear layers of LLaMA-3 prefill and decode), attention forward (standard, materialised, vs
// three flash kernels), and the compute-ceiling probes. Each case's FLOPs and bytes come from the
// model's functions -- gemm_cost, gemm_naive_cost, gemm_tiled_cost with the tiles the kernel
// actually uses (roofline/kernel_tiles.hpp), standard_attention_cost and flash_attention_cost --
// so the report shows next to each time the HBM traffic the model predicts for that kernel. The
// CUDA runner (src/bench/cuda/compute_runner.cpp) times and verifies the cases; everything here is
// host code, unit-tested without a GPU.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/bench/bench.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/model/attention.hpp"
#include "roofline/model/kernel_tiles.hpp"

namespace roofline::bench::compute {

// ---- GEMM: C[m x n] = A[m x k] . B[n x k]^T, fp32 accumulation ----------------------------------
// 16-bit operands (C in their type), or e4m3 operands with per-tensor scales and a bf16 C (FP8).

// swapab: a skinny GEMM (m <= gemm_swapab_max_m) run as the wgmma GEMV with A and B swapped.
// splitk: the wgmma kernel's plan for skinny products (kernel_tiles::gemm_wgmma_skinny_plan: tiles of
// 128 x 256, 160, 128, 80 or 64, alone with k split or in clusters of two sharing A or B), listed
// where that plan differs from the plain wgmma GEMM's (128 x 256 over the whole k, paired where
// kernel_tiles::gemm_wgmma_pairs says) on a GPU of gemm_split_k_listed_sms multiprocessors (an H100
// or H200); the run applies the rule to its own GPU's SMs. (The id keeps its first plan's name.)
enum class GemmImpl : std::uint8_t { cublas, naive, smem_tiled, mma_sync, wgmma, cublaslt, swapab, splitk };
inline constexpr std::int64_t gemm_swapab_max_m = 256;
inline constexpr int gemm_split_k_listed_sms = 132;
[[nodiscard]] constexpr bool gemm_split_k_listed(std::int64_t m, std::int64_t n, std::int64_t k) {
  const kernel_tiles::GemmSplitK plan = kernel_tiles::gemm_wgmma_skinny_plan(m, n, k, gemm_split_k_listed_sms);
  const kernel_tiles::GemmSplitK plain = kernel_tiles::gemm_wgmma_plain_plan(m, n, k, gemm_split_k_listed_sms);
  return plan.splits != plain.splits || plan.tile_n != plain.tile_n || plan.pairing != plain.pairing;
}
inline constexpr std::array<GemmImpl, 5> gemm_ladder{GemmImpl::naive, GemmImpl::smem_tiled, GemmImpl::mma_sync,
                                                     GemmImpl::wgmma, GemmImpl::cublas};
// The FP8 GEMM: the wgmma kernel against cuBLASLt (cuBLAS's FP8 path).
inline constexpr std::array<GemmImpl, 2> fp8_gemm_impls{GemmImpl::wgmma, GemmImpl::cublaslt};

struct GemmCase {
  GemmImpl impl = GemmImpl::cublas;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType dtype = DType::bf16;  // the operands' format (A and B)
  bool quick = false;
  DType output = DType::bf16;  // C's format: the operands' for 16-bit GEMMs, bf16 for FP8
  // The rows the call computes when it pads m (cuBLASLt's FP8 GEMM takes m in multiples of 16);
  // FLOPs and bytes stay those of the m rows asked for, so the padding shows as lost rate.
  std::int64_t m_run = 0;
  [[nodiscard]] std::int64_t rows_run() const { return m_run > 0 ? m_run : m; }
};

// The rows cuBLASLt's FP8 GEMM runs for m: m rounded up to a multiple of 16.
[[nodiscard]] constexpr std::int64_t cublaslt_fp8_rows(std::int64_t m) {
  return (m + 15) / 16 * 16;
}

// ---- grouped GEMM (MoE experts) ----------------------------------------------------------------
// E experts, expert e multiplying its t_e tokens by its own weight: C_e[t_e x n] = A_e[t_e x k] .
// B_e[n x k]^T, stacked as MoE engines run it (tokens sorted by expert; kernels/gemm.hpp), bf16 or
// e4m3 operands with per-tensor scales and a bf16 C.
//   wgmma:    the project's grouped kernel, one launch over every expert's tiles;
//   splitk:   the same kernel with each tile's k split (kernel_tiles::grouped_gemm_split_k), listed
//             where the plan splits on gemm_split_k_listed_sms multiprocessors: a decode step's
//             experts of a token or two, whose tiles leave most SMs idle;
//   swapab:   the wgmma GEMV over each expert's weights, tokens as wgmma's N (gemm_grouped_swap_ab),
//             listed where no expert holds more than grouped_swap_ab_most_tokens tokens (the
//             plain kernel's 64-row tiles are then at least half padding);
//   cublas:   bf16, cublasGemmStridedBatchedEx for a uniform split, cublasGemmGroupedBatchedEx for
//             a skewed one;
//   cublaslt: fp8, one cublasLtMatmul per expert with tokens (no grouped FP8 call of cuBLASLt is
//             used), each expert's rows rounded up to 16 as cuBLASLt's FP8 kernels need.

enum class GroupedGemmImpl : std::uint8_t { wgmma, splitk, swapab, cublas, cublaslt };
inline constexpr std::int64_t grouped_swap_ab_most_tokens = 32;
// How the tokens spread over the experts: uniform, t each; skewed, shares of E t in proportion to
// 1 / (e + 1) (a Zipf law over the experts: the first one gets the most, the last ones may get none).
enum class ExpertSplit : std::uint8_t { uniform, skewed };
inline constexpr std::array<ExpertSplit, 2> expert_splits{ExpertSplit::uniform, ExpertSplit::skewed};

struct GroupedGemmCase {
  GroupedGemmImpl impl = GroupedGemmImpl::wgmma;
  std::string_view model;       // the model the expert shape is from ("mixtral-8x7b"), or "synthetic"
  std::string_view projection;  // "gate_up" (n = 2 moe_ffn, k = hidden), "down" (n = hidden, k = moe_ffn), "ragged"
  std::int64_t experts = 0;
  std::int64_t tokens = 0;  // per expert on average: E x tokens rows in all
  ExpertSplit split = ExpertSplit::uniform;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType dtype = DType::bf16;  // the operands' format; C is bf16
  bool quick = false;
  [[nodiscard]] std::int64_t total_tokens() const { return experts * tokens; }
};

// The tokens of each expert: E x tokens in all, as `split` spreads them (for skewed, the largest
// remainders of the Zipf shares get the leftover tokens, ties to the lower expert).
[[nodiscard]] std::vector<std::int64_t> expert_tokens(std::int64_t experts, std::int64_t tokens, ExpertSplit split);

// The split-K plan of a grouped case's wgmma kernel on `sms` multiprocessors: its 128 x 256 tiles
// over the experts' rows, k in blocks of 128 bytes.
[[nodiscard]] kernel_tiles::GemmSplitK grouped_split_k_plan(const GroupedGemmCase& c, int sms);

// The routed experts of an MoE model: width of the residual stream, of one expert's FFN, the
// routed experts and how many a token reaches.
struct MoeExperts {
  std::string_view model;
  std::int64_t hidden = 0;
  std::int64_t expert_ffn = 0;
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;
};
// Mixtral 8x7B and DeepSeek-V3 from the bundled presets, Qwen3-30B-A3B and Qwen3-235B-A22B from
// their config.json (not bundled). Throws InputError when a preset is missing.
[[nodiscard]] std::array<MoeExperts, 4> grouped_gemm_models();
inline constexpr std::array<std::int64_t, 5> grouped_tokens_per_expert{1, 4, 16, 64, 256};
// Engines that split each expert's width over TP instead of placing whole experts (vLLM without
// --enable-expert-parallel, roofline's --ep 1) multiply every expert at n = 2 x expert_ffn / TP
// (gate_up) and k = expert_ffn / TP (down): DeepSeek-V3 at TP 8 is [512 x 7168] and [7168 x 256].
// The grid runs each model's experts at this TP too (docs/results/gpustack-moe-validation.md: a
// table measured on whole experts priced these shapes).
inline constexpr std::int64_t grouped_tp_split = 8;
// A decode step reaches a few experts with a token or two each (DeepSeek-V3 at batch 1 with EP 4:
// about 3 of a GPU's 64). The grid's smallest case reaches every expert, so at a deep k (7168) no
// measured point lay near such a step's size; these expert counts, one token each, put some there,
// for the models with more than 16 experts (DeepSeek-V3, both Qwen3 MoE models).
inline constexpr std::array<std::int64_t, 3> grouped_decode_experts{4, 16, 64};
// The models whose decode shapes the grid runs: those with more experts than this.
inline constexpr std::int64_t grouped_decode_min_experts = 16;

// Every grouped case: --quick first (a real expert count at Qwen3-30B-A3B's down projection, 2
// tokens per expert, a synthetic 16 experts x 3 tokens at n = 272, k = 208, off the wgmma tile
// in n and k and across expert boundaries in B, and a synthetic 4 experts x 1 token at n = 272,
// k = 2048, which the split-K kernel splits; each uniform and skewed, bf16 and fp8), then each
// model's gate_up and down, whole and split grouped_tp_split ways, at each of
// grouped_tokens_per_expert, uniform and skewed, bf16 and fp8; then the four projections of the
// models with more than 16 experts over grouped_decode_experts experts of one token each.
// Built on first use (the presets are parsed then).
[[nodiscard]] const std::vector<GroupedGemmCase>& grouped_gemm_cases();

[[nodiscard]] std::string_view id_name(GroupedGemmImpl impl);  // "cublaslt"
[[nodiscard]] std::string_view split_name(ExpertSplit split);  // "skewed"
// gemm.grouped.bf16.e128.t2.skewed.256x2048x768.wgmma: operands, experts, tokens per expert,
// split, then (sum t_e) x n x k.
[[nodiscard]] std::string case_id(const GroupedGemmCase& c);
// The rows each expert's call computes: t_e, or for cuBLASLt t_e rounded up to 16.
[[nodiscard]] std::int64_t rows_run(const GroupedGemmCase& c);
// The model's grouped_gemm_basis of the case's split: the weights of the experts with tokens,
// their tokens in and out, 2 sum(t_e) n k FLOPs.
[[nodiscard]] OpCost case_cost(const GroupedGemmCase& c);
[[nodiscard]] BenchmarkResult make_result(const GroupedGemmCase& c);

// ---- attention forward ----------------------------------------------------------------------

enum class AttentionImpl : std::uint8_t { standard, flash_w8r16, flash_w4r32, flash_wgmma };
inline constexpr std::array<AttentionImpl, 4> attention_impls{AttentionImpl::standard, AttentionImpl::flash_w8r16,
                                                              AttentionImpl::flash_w4r32, AttentionImpl::flash_wgmma};

struct AttentionCase {
  AttentionImpl impl = AttentionImpl::standard;
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t seq = 1;
  std::int64_t head_dim = 128;  // Q and K
  bool causal = false;
  DType dtype = DType::bf16;
  bool quick = false;
  std::int64_t head_dim_v = 0;  // V and O where narrower (MLA expanded: 192 with 128); 0: head_dim
};

// ---- compute-ceiling probes -----------------------------------------------------------------

enum class PeakImpl : std::uint8_t { fma_fp32, mma_sync_bf16, wgmma_bf16 };
struct PeakCase {
  PeakImpl impl = PeakImpl::fma_fp32;
  bool quick = true;
};

// ---- the case tables ------------------------------------------------------------------------

struct GemmShapeMNK {
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
};

// The 16-bit GEMM ladder.
template <typename F>
constexpr void for_each_gemm_case(F&& f) {
  const auto all = [&f](GemmShapeMNK s, DType dtype, bool quick, bool cuda_cores, bool quick_cuda_cores) {
    for (GemmImpl impl : gemm_ladder) {
      const bool cuda_core = impl == GemmImpl::naive || impl == GemmImpl::smem_tiled;
      if (cuda_core && !cuda_cores) continue;
      f(GemmCase{.impl = impl,
                 .m = s.m,
                 .n = s.n,
                 .k = s.k,
                 .dtype = dtype,
                 .quick = quick && (!cuda_core || quick_cuda_cores),
                 .output = dtype});
      // Beside wgmma, where m fits one swapped tile (cuBLAS's own choice for such shapes).
      if (impl == GemmImpl::wgmma && s.m <= gemm_swapab_max_m) {
        f(GemmCase{
            .impl = GemmImpl::swapab, .m = s.m, .n = s.n, .k = s.k, .dtype = dtype, .quick = quick, .output = dtype});
      }
      if (impl == GemmImpl::wgmma && gemm_split_k_listed(s.m, s.n, s.k)) {
        f(GemmCase{
            .impl = GemmImpl::splitk, .m = s.m, .n = s.n, .k = s.k, .dtype = dtype, .quick = quick, .output = dtype});
      }
    }
  };
  // The skinny shapes of prefill chunks and large decode batches: m = 64 .. 512 tokens through
  // LLaMA-3 70B's projections at TP 1 (qkv, gate_up, down; o_proj is the 8192^2 row below), the
  // tensor-core kernels and cuBLAS.
  const auto skinny = [&f](GemmShapeMNK s) {
    for (GemmImpl impl : {GemmImpl::mma_sync, GemmImpl::wgmma, GemmImpl::swapab, GemmImpl::splitk, GemmImpl::cublas}) {
      if (impl == GemmImpl::swapab && s.m > gemm_swapab_max_m) continue;
      if (impl == GemmImpl::splitk && !gemm_split_k_listed(s.m, s.n, s.k)) continue;
      f(GemmCase{
          .impl = impl, .m = s.m, .n = s.n, .k = s.k, .dtype = DType::bf16, .quick = false, .output = DType::bf16});
    }
  };
  // The ladder at every square size (the naive kernel at 8192^3 takes about a second a launch).
  for (std::int64_t n : {512, 1024, 2048, 4096, 8192}) {
    all({n, n, n}, DType::bf16, n == 512 || n == 1024 || n == 4096, true, n <= 1024);
  }
  all({4096, 4096, 4096}, DType::fp16, false, false, false);
  all({8192, 8192, 8192}, DType::fp16, false, false, false);
  all({256, 512, 1024}, DType::fp16, true, true, true);
  // Skinny shapes: decode-sized batches through a square layer, a short k, tall and narrow.
  all({64, 8192, 8192}, DType::bf16, false, false, false);
  all({128, 8192, 8192}, DType::bf16, false, false, false);
  all({8192, 8192, 256}, DType::bf16, false, false, false);
  all({16384, 1024, 4096}, DType::bf16, false, false, false);
  for (std::int64_t m : {64, 128, 256, 512}) {
    if (m > 128) skinny({m, 8192, 8192});
    for (const GemmShapeMNK nk :
         {GemmShapeMNK{0, 10240, 8192}, GemmShapeMNK{0, 57344, 8192}, GemmShapeMNK{0, 8192, 28672}}) {
      skinny({m, nk.n, nk.k});
    }
  }
  // Ragged edges in m, n and k.
  all({333, 264, 200}, DType::bf16, true, true, true);
  // The wgmma kernel in pairs (kernel_tiles::gemm_wgmma_pairs) over an odd count of tile rows: 17 rows
  // x 8 columns of 128 x 256 tiles are 9 x 8 = 72 pair tiles, a wave on 132 SMs, and the last pair
  // row's lower tile lies below m; n off 256, k off 64.
  all({2100, 2000, 200}, DType::bf16, true, false, false);
}

template <typename F>
constexpr void for_each_attention_case(F&& f) {
  const auto one = [&f](AttentionImpl impl, std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t n,
                        std::int64_t d, bool causal, DType dtype, bool quick) {
    f(AttentionCase{.impl = impl,
                    .batch = b,
                    .heads = h,
                    .kv_heads = hkv,
                    .seq = n,
                    .head_dim = d,
                    .causal = causal,
                    .dtype = dtype,
                    .quick = quick});
  };
  const auto all = [&one](std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t n, std::int64_t d, bool causal,
                          DType dtype, bool quick) {
    for (AttentionImpl impl : attention_impls) one(impl, b, h, hkv, n, d, causal, dtype, quick);
  };
  // Standard vs flash by N at 16K tokens per batch (B = 16384 / N), 32 heads: the source texts' table.
  // The target shape (B 4, H 32, N 4096, d 128, causal) is part of --quick.
  for (std::int64_t d : {128, 64}) {
    for (bool causal : {true, false}) {
      for (std::int64_t n = 512; n <= 32768; n *= 2) {
        const bool target = d == 128 && causal && n == 4096;
        all(std::max<std::int64_t>(1, 16384 / n), 32, 32, n, d, causal, DType::bf16, target);
      }
    }
  }
  all(4, 32, 8, 4096, 128, true, DType::bf16, false);  // GQA: 4 query heads per KV head
  all(4, 32, 8, 4096, 128, false, DType::bf16, false);
  all(4, 32, 32, 4096, 128, true, DType::fp16, false);
  all(4, 32, 32, 4096, 64, true, DType::fp16, false);
  all(4, 32, 32, 32768, 128, true, DType::bf16, false);  // S would need 256 GiB: standard does not fit
  // Issue 21's target, B x H = 128 at every N from 1k to 32k (N 4096 and causal 32768 are above).
  for (bool causal : {true, false}) {
    for (std::int64_t n : {1024, 2048, 8192, 16384, 32768}) {
      if (!(causal && n == 32768)) all(4, 32, 32, n, 128, causal, DType::bf16, false);
    }
  }
  // Head dim 256 (Gemma's; the Hopper kernel alone runs it): 16K tokens per batch, 32 heads, and GQA.
  for (bool causal : {true, false}) {
    for (std::int64_t n : {1024, 2048, 4096, 8192, 16384}) all(16384 / n, 32, 32, n, 256, causal, DType::bf16, false);
    all(4, 32, 8, 4096, 64, causal, DType::bf16, false);
    all(4, 32, 8, 4096, 256, causal, DType::bf16, false);
  }
  // Small shapes of every path (--quick): whole tiles, and ragged ones (N = 1000) with GQA.
  for (std::int64_t d : {64, 128, 256}) {
    for (bool causal : {false, true}) {
      all(2, 4, 4, 256, d, causal, DType::bf16, true);
      all(2, 4, 2, 1000, d, causal, DType::bf16, true);
      // The Hopper kernel's persistent blocks taking several query tiles each (512 tiles on one
      // block an SM: its chained tiles and its second Q stage), ragged and GQA.
      one(AttentionImpl::flash_wgmma, 2, 32, 8, 1000, d, causal, DType::bf16, true);
    }
  }
  all(1, 4, 4, 512, 128, true, DType::fp16, true);
  // DeepSeek-V3's latent attention expanded for prefill: Q and K 192 wide (128 + 64 rotary), V 128,
  // as many KV heads as query heads; 16 heads a GPU at TP 8 and 128 at TP 1 (or attention DP). Standard
  // attention (the reference) and the Hopper kernel run it.
  const auto mla = [&f](std::int64_t b, std::int64_t h, std::int64_t n, bool causal, bool quick) {
    for (AttentionImpl impl : {AttentionImpl::standard, AttentionImpl::flash_wgmma}) {
      f(AttentionCase{.impl = impl,
                      .batch = b,
                      .heads = h,
                      .kv_heads = h,
                      .seq = n,
                      .head_dim = 192,
                      .causal = causal,
                      .dtype = DType::bf16,
                      .quick = quick,
                      .head_dim_v = 128});
    }
  };
  for (std::int64_t n : {1024, 2048, 4096, 8192, 16384}) mla(std::max<std::int64_t>(1, 16384 / n), 16, n, true, false);
  for (std::int64_t n : {1024, 4096, 8192}) mla(std::max<std::int64_t>(1, 8192 / n), 128, n, true, false);
  mla(4, 16, 4096, false, false);
  mla(1, 128, 4096, false, false);
  for (bool causal : {false, true}) {
    mla(2, 4, 256, causal, true);
    mla(2, 4, 1000, causal, true);
  }
  // FP8 (e4m3 Q, K, V; bf16 O): the Hopper kernel alone, at head dims 128 and 256, on shapes of the
  // 16-bit table above (whose bf16 flash_wgmma case is each one's reference).
  const auto fp8 = [&one](std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t n, std::int64_t d, bool causal,
                          bool quick) {
    one(AttentionImpl::flash_wgmma, b, h, hkv, n, d, causal, DType::fp8_e4m3, quick);
  };
  for (bool causal : {true, false}) {
    for (std::int64_t n : {1024, 2048, 4096, 8192, 16384}) fp8(4, 32, 32, n, 128, causal, false);
    fp8(4, 32, 8, 4096, 128, causal, false);
    for (std::int64_t n : {1024, 4096, 16384}) fp8(16384 / n, 32, 32, n, 256, causal, false);
    for (std::int64_t d : {128, 256}) {
      fp8(2, 4, 4, 256, d, causal, true);
      fp8(2, 4, 2, 1000, d, causal, true);
      fp8(2, 32, 8, 1000, d, causal, true);
    }
  }
}

inline constexpr std::array<PeakCase, 3> peak_cases{
    {{PeakImpl::fma_fp32, true}, {PeakImpl::mma_sync_bf16, true}, {PeakImpl::wgmma_bf16, true}}};

template <typename Case, typename ForEach>
constexpr std::size_t count_of(ForEach for_each) {
  std::size_t n = 0;
  for_each([&n](const Case&) { ++n; });
  return n;
}

// The 16-bit ladder (all_gemm_cases() adds the FP8 cases).
inline constexpr auto gemm_cases = [] {
  std::array<GemmCase, count_of<GemmCase>([](auto f) { for_each_gemm_case(f); })> table{};
  std::size_t i = 0;
  for_each_gemm_case([&](const GemmCase& c) { table[i++] = c; });
  return table;
}();

// The FP8 cases (fp8_e4m3 operands, bf16 C), derived from the bundled model presets through the
// projections llm describes for them (w8a8_linears):
//   prefill: m in prefill_tokens at the projections of each model of fp8_prefill_deployments at each
//     of its tensor-parallel degrees (one case per distinct shape), both implementations; DeepSeek-V3's
//     eight at TP 8 have k of 256 to 2304, which no LLaMA shape has: measured at decode sizes alone,
//     a k says nothing of its prefill problems;
//   decode: m in decode_tokens at the projections of each model of fp8_decode_deployments at each of
//     its degrees, cuBLASLt only (cuBLASLt pads m to 16; the project's FP8 decode path is the GEMV of
//     the memory suite): LLaMA-3.1 70B at TP 1 and 8, and DeepSeek-V3's at TP 8, whose 0.3-3 us
//     projections are smaller than any prefill case;
//   squares 1024..8192, both implementations;
//   --quick: 1024^3, a ragged 333x272x208 (m, n and k off the wgmma tile, m off cuBLASLt's 16; n
//     and k multiples of 16, which cuBLASLt's FP8 kernels need), LLaMA-3.1 8B's qkv at
//     m = 128, and one padded decode call (m = 4).
// Built on first use (the model files are parsed then). Throws InputError when a preset is missing.
struct Fp8Deployment {
  std::string_view model;            // a bundled preset's id
  std::array<std::int64_t, 4> tp{};  // tensor-parallel degrees (0: none)
};
inline constexpr std::array<Fp8Deployment, 4> fp8_prefill_deployments{{
    {"llama-3.1-8b", {1, 2, 0, 0}},
    {"llama-3.1-70b", {1, 2, 4, 8}},
    {"llama-3.1-405b", {4, 8, 0, 0}},
    {"deepseek-v3", {8, 0, 0, 0}},
}};
inline constexpr std::array<Fp8Deployment, 2> fp8_decode_deployments{{
    {"llama-3.1-70b", {1, 8, 0, 0}},
    {"deepseek-v3", {8, 0, 0, 0}},
}};
inline constexpr std::array<std::int64_t, 5> prefill_tokens{128, 512, 2048, 8192, 16384};
inline constexpr std::array<std::int64_t, 9> decode_tokens{1, 2, 4, 8, 16, 32, 64, 128, 256};

// A projection C[tokens x n] = X[tokens x k] W^T of a decoder layer on one GPU.
struct LinearShape {
  std::string_view name;  // the op's name in llm's step: "qkv_proj", "o_proj", "ffn_gate_up", "q_down", ...
  std::int64_t n = 0;
  std::int64_t k = 0;
};
// The distinct projections that run as W8A8 GEMMs in a decode step of `model` at tensor-parallel
// degree tp with FP8 weights, in the step's order, as llm describes them (describe_step at a batch
// above w8a16_gemv_max_batch, where every FP8 projection of the blocks is W8A8; the 16-bit output
// head, the router and the absorbed per-head products are not): a dense GQA model's qkv_proj,
// o_proj, ffn_gate_up and ffn_down; DeepSeek-V3's q_down, q_up, kv_down, o_proj, then its dense
// layers' and shared expert's gate_up and down. Throws InputError where tp does not divide the model.
[[nodiscard]] std::vector<LinearShape> w8a8_linears(std::string_view model, std::int64_t tp);

// Every GEMM case: the ladder (gemm_cases), then the FP8 cases.
[[nodiscard]] const std::vector<GemmCase>& all_gemm_cases();

inline constexpr auto attention_cases = [] {
  std::array<AttentionCase, count_of<AttentionCase>([](auto f) { for_each_attention_case(f); })> table{};
  std::size_t i = 0;
  for_each_attention_case([&](const AttentionCase& c) { table[i++] = c; });
  return table;
}();

// ---- names, tiles, costs ----------------------------------------------------------------------

[[nodiscard]] std::string_view impl_name(GemmImpl impl);       // "mma_sync"
[[nodiscard]] std::string_view impl_name(AttentionImpl impl);  // "flash_w8r16"
[[nodiscard]] std::string_view impl_name(PeakImpl impl);       // "wgmma_bf16"
// The implementation as the last word of a case id (and so of its calibration table): "mmasync".
[[nodiscard]] std::string_view id_name(GemmImpl impl);
[[nodiscard]] std::string_view id_name(AttentionImpl impl);  // "flashwgmma"
[[nodiscard]] std::string case_id(const GemmCase& c);        // gemm.bf16.8192x8192x8192.wgmma
[[nodiscard]] std::string case_id(const AttentionCase& c);   // attn.bf16.causal.d128.b4h32kv8.n4096.flashwgmma
[[nodiscard]] std::string case_id(PeakImpl impl);            // peak.wgmma.bf16
// How the wgmma GEMM covers an m x n output on `sms` SMs (kernel_tiles::gemm_wgmma_plain_plan), for a
// result's detail: "; 256 pair tiles of 2 x 128 x 256 (clusters of two blocks multicasting B) on 132 SMs".
[[nodiscard]] std::string gemm_wgmma_plan_note(std::int64_t m, std::int64_t n, int sms);
// The same for any plan (the skinny plan's): "; 64 pair tiles of 128 x 2 x 64 (clusters of two blocks multicasting
// A) on 132 SMs", "; 40 tiles of 128 x 256, k split 3 ways (43 blocks of 64 each) on 132 SMs".
[[nodiscard]] std::string gemm_skinny_plan_note(const kernel_tiles::GemmSplitK& plan, std::int64_t m, std::int64_t n,
                                                int sms);

// The block tile of a GEMM kernel (nullopt for cuBLAS, whose tiles are its own); splitk's depends on
// the shape: tiling_of(case) gives a case's (its plan on gemm_split_k_listed_sms SMs).
[[nodiscard]] std::optional<kernel_tiles::GemmTiling> tiling_of(GemmImpl impl);
[[nodiscard]] std::optional<kernel_tiles::GemmTiling> tiling_of(const GemmCase& c);
// The tiles of a case's flash kernel at its head_dim and dtype (nullopt for standard attention).
[[nodiscard]] std::optional<kernel_tiles::FlashTiling> tiling_of(const AttentionCase& c);

[[nodiscard]] GemmShape model_shape(const GemmCase& c);
[[nodiscard]] AttentionShape model_shape(const AttentionCase& c);
// The model's count of one launch: gemm_naive_cost (naive), gemm_tiled_cost with the kernel's
// tiles (smem_tiled, mma_sync, wgmma), gemm_cost (cuBLAS: the minimum); standard_attention_cost or
// flash_attention_cost (.hbm) for attention.
[[nodiscard]] OpCost case_cost(const GemmCase& c);
[[nodiscard]] OpCost case_cost(const AttentionCase& c);

// Not-yet-run results: id, group, parameters, model cost, ceiling (the peak probe of the unit the
// kernel runs on) and reference (cuBLAS for GEMMs, standard attention for flash).
[[nodiscard]] BenchmarkResult make_result(const GemmCase& c);
[[nodiscard]] BenchmarkResult make_result(const AttentionCase& c);
// A probe's FLOPs and bytes are the kernel's own (kernels/peak.hpp: iterations x blocks x ...).
[[nodiscard]] BenchmarkResult make_result(PeakImpl impl, const OpCost& probe_cost);

// The tensor-core and FMA ceilings, measured in the same run.
inline constexpr std::string_view tensor_peak_id = "peak.wgmma.bf16";
inline constexpr std::string_view fma_peak_id = "peak.fma.fp32";

// The table of the source texts: per attention problem (dtype, causal, d, B, H, Hkv, N) the
// TFLOP/s of standard attention and of each flash kernel, and the HBM traffic the model predicts
// for standard and for flash.
[[nodiscard]] std::vector<Table> derived_tables(std::span<const BenchmarkResult> results);

[[nodiscard]] const SuiteInfo& suite();

}  // namespace roofline::bench::compute
