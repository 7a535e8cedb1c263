// The compute suite's grouped GEMMs of MoE experts (roofline/compute_suite.hpp): the wgmma grouped
// kernel against cuBLAS (bf16: cublasGemmStridedBatchedEx for a uniform split,
// cublasGemmGroupedBatchedEx for a skewed one) and cuBLASLt (FP8: one matmul per expert, each with
// its expert's weight scale; FP8 runs a per-tensor activation scale and per-expert weight scales that
// differ, compute_family.hpp's fp8_expert_scale). Every
// case is checked before it is timed, on the stacked layout (tokens sorted by expert): sampled
// entries against a float64 host dot product (for FP8, of check operands the tensor cores
// accumulate exactly, recomputed from their seeds), and the whole output against one library GEMM
// per expert (cuBLAS for bf16, cuBLASLt for FP8), itself checked on the samples.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>

#include "compute_family.hpp"
#include "kernels/gemm.hpp"
#include "kernels/verify.hpp"

namespace roofline::bench::cuda::compute_family {
namespace {

using compute::ExpertSplit;
using compute::GroupedGemmCase;
using compute::GroupedGemmImpl;

// The stacked problem: the experts' tokens and where each expert's rows begin.
struct Experts {
  std::vector<int> row_offsets;  // E + 1
  [[nodiscard]] int count() const { return static_cast<int>(row_offsets.size()) - 1; }
  [[nodiscard]] int rows(int e) const { return row_offsets[as_size(e) + 1] - row_offsets[as_size(e)]; }
  [[nodiscard]] int total() const { return row_offsets.back(); }
  // The expert whose rows hold `row`.
  [[nodiscard]] int of_row(int row) const {
    return static_cast<int>(std::upper_bound(row_offsets.begin(), row_offsets.end(), row) - row_offsets.begin()) - 1;
  }
};

struct Sample {
  int row = 0;  // of the stacked A and C
  int col = 0;
  int expert = 0;
  double reference = 0;
};

// The entries sampled: the first and last row of up to eight experts spread over the experts with
// tokens (the tiles' edges at the expert boundaries), the first and last entry of C, then random
// ones.
std::vector<Sample> sample_positions(const Experts& experts, int n, int count, std::uint64_t seed) {
  std::vector<int> touched;
  for (int e = 0; e < experts.count(); ++e) {
    if (experts.rows(e) > 0) touched.push_back(e);
  }
  std::vector<Sample> samples{{0, 0}, {experts.total() - 1, n - 1}};
  const std::size_t edges = std::min<std::size_t>(8, touched.size());
  for (std::size_t i = 0; i < edges; ++i) {
    const int e = touched[i * touched.size() / edges];
    samples.push_back({experts.row_offsets[as_size(e)], n - 1});
    samples.push_back({experts.row_offsets[as_size(e) + 1] - 1, 0});
  }
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.size()) < count) {
    samples.push_back({static_cast<int>(rng() % static_cast<std::uint64_t>(experts.total())),
                       static_cast<int>(rng() % static_cast<std::uint64_t>(n))});
  }
  for (Sample& s : samples) s.expert = experts.of_row(s.row);
  return samples;
}

// The normwise error of the sampled entries of a bf16 C.
double sampled_error(Context& ctx, const std::vector<Sample>& samples, int n, const DeviceBuffer& out) {
  double diff2 = 0;
  double ref2 = 0;
  for (const Sample& s : samples) {
    const float got =
        download_values(ctx, kernels::StorageFormat::bf16, out, as_size(s.row) * as_size(n) + as_size(s.col), 1)[0];
    if (!std::isfinite(got)) return INFINITY;
    diff2 += (got - s.reference) * (got - s.reference);
    ref2 += s.reference * s.reference;
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

// The host guards of every launch of the problem: sizes that the kernels' int arguments and the
// tensor maps' 32-bit coordinates hold.
void require_fits(const GroupedGemmCase& p) {
  const bool fits = p.total_tokens() + 16 <= INT_MAX && p.experts * p.n <= INT_MAX && p.n <= INT_MAX &&
                    p.k <= INT_MAX && p.experts <= INT_MAX;
  if (!fits) throw std::invalid_argument(fmt::format("{}: sizes beyond 32-bit indices", compute::case_id(p)));
}

}  // namespace

void run_grouped_gemm_problem(Context& ctx, std::span<const GroupedGemmCase* const> cases, bool quick,
                              std::uint64_t seed, Recorder& recorder) {
  const GroupedGemmCase& p = *cases.front();
  require_fits(p);
  const bool fp8 = p.dtype == DType::fp8_e4m3;
  const kernels::StorageFormat operand = fp8 ? kernels::fp8_gemm_operand_format : kernels::StorageFormat::bf16;
  const kernels::StorageFormat output = kernels::StorageFormat::bf16;
  const int n = static_cast<int>(p.n);
  const int k = static_cast<int>(p.k);
  Experts experts;
  experts.row_offsets.push_back(0);
  for (const std::int64_t t : compute::expert_tokens(p.experts, p.tokens, p.split)) {
    experts.row_offsets.push_back(experts.row_offsets.back() + static_cast<int>(t));
  }
  const int total = experts.total();
  // cuBLASLt's FP8 calls run each expert's rows rounded up to 16: the last one reads and writes up
  // to 15 rows past the stack, which A and C therefore hold.
  const std::size_t rows = as_size(total) + 16;
  const std::size_t element = as_size(kernels::bytes_of(operand));
  const std::size_t weights = as_size(p.experts) * as_size(p.n) * as_size(p.k);
  DeviceBuffer a = ctx.allocate(rows * as_size(k) * element);
  DeviceBuffer b = ctx.allocate(weights * element);
  DeviceBuffer c_ref = ctx.allocate(rows * as_size(n) * 2);
  DeviceBuffer c_out = ctx.allocate(rows * as_size(n) * 2);
  const std::vector<int> schedule = kernels::grouped_gemm_schedule(experts.row_offsets, n);
  DeviceBuffer schedule_buffer = ctx.allocate(schedule.size() * sizeof(int));
  ctx.upload(schedule_buffer, schedule.data(), schedule.size() * sizeof(int));
  const DeviceBuffer scales = ctx.upload_scalars(fp8_scales);
  const float* a_scale = scalar_slot(scales, 0);
  // The experts' weight scales: E contiguous floats for the grouped kernel (the engines' layout), and
  // each on its own 256-byte line for the per-expert cuBLASLt calls (cuBLASLt wants 16-byte aligned
  // scale pointers: docs/compute-kernels.md).
  std::vector<float> expert_scales(as_size(p.experts));
  for (std::size_t e = 0; e < expert_scales.size(); ++e) expert_scales[e] = fp8_expert_scale(static_cast<int>(e));
  DeviceBuffer b_scales = ctx.allocate(expert_scales.size() * sizeof(float));
  ctx.upload(b_scales, expert_scales.data(), expert_scales.size() * sizeof(float));
  const DeviceBuffer b_scale_slots = ctx.upload_scalars(expert_scales);

  const std::uint64_t problem_seed =
      seed_of(seed, 7,
              static_cast<std::uint64_t>(p.experts * 1000003 + p.tokens * 131 + p.n * 7 + p.k) * 2 +
                  static_cast<std::uint64_t>(p.split));
  const auto fill_random = [&] {
    kernels::fill_uniform(operand, a.get(), rows * as_size(k), problem_seed + 2, 1.0F, ctx.stream());
    kernels::fill_uniform(operand, b.get(), weights, problem_seed + 3, 1.0F, ctx.stream());
  };
  // FP8 is checked on the check operands (exact sums) and timed on random ones; bf16 is checked
  // and timed on the same random operands.
  const auto fill_check = [&] {
    if (!fp8) return;
    kernels::fill_fp8_check_operand(a.get(), rows * as_size(k), problem_seed, ctx.stream());
    kernels::fill_fp8_check_operand(b.get(), weights, problem_seed + 1, ctx.stream());
  };
  if (fp8) {
    fill_check();
  } else {
    fill_random();
  }
  std::vector<Sample> samples = sample_positions(experts, n, quick ? 24 : 48, problem_seed + 4);
  for (Sample& s : samples) {
    const std::size_t b_row = as_size(s.expert) * as_size(n) + as_size(s.col);
    if (fp8) {
      std::int64_t dot = 0;
      for (std::size_t t = 0; t < as_size(k); ++t) {
        dot += kernels::fp8_check_level(problem_seed, as_size(s.row) * as_size(k) + t) *
               kernels::fp8_check_level(problem_seed + 1, b_row * as_size(k) + t);
      }
      s.reference = static_cast<double>(fp8_scales[0]) * expert_scales[as_size(s.expert)] *
                    kernels::fp8_check_level_scale * kernels::fp8_check_level_scale * static_cast<double>(dot);
    } else {
      const std::vector<float> x = download_values(ctx, operand, a, as_size(s.row) * as_size(k), as_size(k));
      const std::vector<float> w = download_values(ctx, operand, b, b_row * as_size(k), as_size(k));
      double dot = 0;
      for (std::size_t t = 0; t < x.size(); ++t) dot += static_cast<double>(x[t]) * w[t];
      s.reference = dot;
    }
  }
  const double tolerance = fp8 ? fp8_gemm_tolerance : tolerance_for(output);

  const auto element_at = [](const DeviceBuffer& buffer, std::size_t offset, std::size_t bytes) {
    return static_cast<unsigned char*>(buffer.get()) + offset * bytes;
  };
  // One library GEMM per expert with tokens, in expert order (cuBLASLt's rounded-up rows of an
  // expert spill into the next experts' rows, which their own later calls overwrite).
  const kernels::BlasLtApi* lt = nullptr;
  const Cublas* blas = nullptr;
  const auto per_expert = [&](const DeviceBuffer& c, cudaStream_t s) {
    for (int e = 0; e < experts.count(); ++e) {
      const int t = experts.rows(e);
      if (t == 0) continue;
      const std::size_t row = as_size(experts.row_offsets[as_size(e)]);
      const void* a_e = element_at(a, row * as_size(k), element);
      const void* b_e = element_at(b, as_size(e) * as_size(n) * as_size(k), element);
      void* c_e = element_at(c, row * as_size(n), 2);
      if (fp8) {
        kernels::cublaslt_gemm_fp8(*lt,
                                   kernels::Fp8GemmArgs{.a = a_e,
                                                        .b = b_e,
                                                        .c = c_e,
                                                        .m = static_cast<int>(compute::cublaslt_fp8_rows(t)),
                                                        .n = n,
                                                        .k = k,
                                                        .a_scale = a_scale,
                                                        .b_scale = scalar_slot(b_scale_slots, as_size(e))},
                                   s);
      } else {
        kernels::cublas_gemm(*blas, operand, a_e, b_e, c_e, t, n, k, s);
      }
    }
  };

  // The whole-output reference, itself checked on the host samples.
  std::optional<double> reference_error;
  std::string reference_problem;
  try {
    if (fp8) {
      lt = &ctx.cublaslt();
    } else {
      blas = &ctx.cublas();
    }
    ctx.poison(c_ref);
    per_expert(c_ref, ctx.stream());
    ctx.wait("per-expert reference");
    const double error = sampled_error(ctx, samples, n, c_ref);
    if (error <= tolerance) {
      reference_error = error;
    } else {
      reference_problem =
          fmt::format("the per-expert reference is off the host samples (error {:.2e}): not used", error);
    }
  } catch (const GpuHang&) {
    throw;
  } catch (const std::exception& e) {
    ctx.recover();
    lt = nullptr;
    blas = nullptr;
    reference_problem = fmt::format("no per-expert {} reference: {}", fp8 ? "cuBLASLt" : "cuBLAS", e.what());
  }
  const char* library = fp8 ? "cuBLASLt" : "cuBLAS";

  DeviceBuffer pointers;
  for (const GroupedGemmCase* c : cases) {
    BenchmarkResult result = compute::make_result(*c);
    if (ctx.health().lost) {
      record_not(recorder, std::move(result), Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    Launch launch;
    DeviceBuffer workspace;  // split-K partials and tickets (splitk, swapab), zeroed once
    const auto allocate_zeroed = [&](std::size_t bytes) {
      if (bytes == 0) return;
      workspace = ctx.allocate_zeroed(bytes);
    };
    std::string plan_note;  // how the split-K kernel cut the problem
    // The library run as the reference (FP8: the same per-expert loop) is checked on the samples
    // alone; every other call also against the reference, whole output.
    bool is_reference_call = false;
    if (c->impl == GroupedGemmImpl::wgmma || c->impl == GroupedGemmImpl::splitk || c->impl == GroupedGemmImpl::swapab) {
      if (!kernels::gemm_kernel_supported(kernels::GemmKernel::wgmma, ctx.device().index)) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   "not built for this device (wgmma needs sm_90a code and a compute capability 9.0 device)");
        continue;
      }
      const kernels::GroupedGemmArgs call{.operands = operand,
                                          .a = a.get(),
                                          .b = b.get(),
                                          .c = c_out.get(),
                                          .n = n,
                                          .k = k,
                                          .row_offsets = experts.row_offsets,
                                          .schedule = schedule_buffer.as<int>(),
                                          .a_scale = a_scale,
                                          .b_scales = b_scales.as<float>()};
      if (c->impl == GroupedGemmImpl::wgmma) {
        launch = [call](cudaStream_t s, int) {
          kernels::gemm_grouped(kernels::GemmKernel::wgmma, call, s);
          return cudaSuccess;
        };
      } else if (c->impl == GroupedGemmImpl::swapab) {
        if (const char* why = kernels::grouped_gemm_swap_ab_unsupported(call); why != nullptr) {
          record_not(recorder, std::move(result), Disposition::not_supported, why);
          continue;
        }
        const int sms = ctx.device().sms;
        const kernel_tiles::GemvWgmmaSplit plan = kernels::grouped_gemm_swap_ab_plan(call, sms);
        plan_note = fmt::format(
            "; {} tiles of {} rows x N {}, k split {} ways ({} blocks of 128 bytes each), {} "
            "block(s) an SM on {} SMs",
            plan.tiles, plan.rows, plan.tile_n, plan.splits, plan.k_blocks_per_split, plan.blocks_per_sm, sms);
        allocate_zeroed(kernels::grouped_gemm_swap_ab_workspace_bytes(call, sms));
        launch = [call, sms, ws = workspace.get()](cudaStream_t s, int) {
          kernels::gemm_grouped_swap_ab(call, sms, ws, s);
          return cudaSuccess;
        };
      } else {
        const int sms = ctx.device().sms;
        const kernel_tiles::GemmSplitK plan = kernels::grouped_gemm_split_k_plan(call, sms);
        plan_note = fmt::format("; {} tiles of 128 x 256, k split {} ways ({} blocks of 128 bytes each) on {} SMs",
                                plan.tiles, plan.splits, plan.k_blocks_per_split, sms);
        allocate_zeroed(kernels::grouped_gemm_split_k_workspace_bytes(call, sms));
        launch = [call, sms, ws = workspace.get()](cudaStream_t s, int) {
          kernels::gemm_grouped_split_k(call, sms, ws, s);
          return cudaSuccess;
        };
      }
    } else if (lt == nullptr && blas == nullptr) {
      record_not(recorder, std::move(result), Disposition::failed, reference_problem);
      continue;
    } else if (c->impl == GroupedGemmImpl::cublaslt) {
      is_reference_call = true;
      launch = [&](cudaStream_t s, int) {
        per_expert(c_out, s);
        return cudaSuccess;
      };
    } else if (c->split == ExpertSplit::uniform) {
      launch = [&, blas](cudaStream_t s, int) {
        kernels::cublas_gemm_strided_batched(*blas, operand, a.get(), b.get(), c_out.get(), static_cast<int>(p.experts),
                                             static_cast<int>(p.tokens), n, k, s);
        return cudaSuccess;
      };
    } else {
      if (blas->gemm_grouped_batched_ex == nullptr) {
        record_not(recorder, std::move(result), Disposition::not_supported,
                   fmt::format("cuBLAS {} has no cublasGemmGroupedBatchedEx (12.5 and later)", blas->version));
        continue;
      }
      const std::vector<const void*> table =
          kernels::grouped_blas_pointers(operand, a.get(), b.get(), c_out.get(), experts.row_offsets, n, k);
      pointers = ctx.allocate(table.size() * sizeof(void*));
      ctx.upload(pointers, table.data(), table.size() * sizeof(void*));
      launch = [&, blas](cudaStream_t s, int) {
        kernels::cublas_gemm_grouped_batched(*blas,
                                             kernels::GroupedBlasArgs{.type = operand,
                                                                      .n = n,
                                                                      .k = k,
                                                                      .row_offsets = experts.row_offsets,
                                                                      .pointers = pointers.as<const void*>()},
                                             s);
        return cudaSuccess;
      };
    }
    const auto verify = [&]() -> std::string {
      fill_check();
      ctx.poison(c_out);
      check(launch(ctx.stream(), 0), "grouped gemm");
      ctx.wait("grouped gemm");
      const std::size_t outputs = as_size(total) * as_size(n);
      const std::string checked =
          check_whole_output(ctx,
                             {.format = output,
                              .output = c_out.get(),
                              .reference = c_ref.get(),
                              .elements = outputs,
                              .finite_elements = outputs,
                              .compare = !is_reference_call && reference_error.has_value(),
                              .versus = fmt::format("whole output vs {} per expert", library),
                              .otherwise = is_reference_call ? fmt::format("every output of the {} rows finite", total)
                                                             : "no whole-output comparison (" + reference_problem + ")",
                              .tolerance = tolerance},
                             samples.size(), sampled_error(ctx, samples, n, c_out));
      if (fp8) fill_random();
      return fmt::format("{} (tolerance {:.0e}{}){}", checked, tolerance,
                         fp8 ? "; a per-tensor activation scale and a weight scale per expert (0.5 .. 3); timed on "
                               "uniform random operands"
                             : "",
                         plan_note);
    };
    recorder.record(run_case(ctx, std::move(result), verify, launch));
  }
}

}  // namespace roofline::bench::cuda::compute_family
