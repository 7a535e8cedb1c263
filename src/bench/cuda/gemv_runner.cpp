// The memory suite's GEMV cases: one weight matrix per group (rotated copies so that L2 never holds
// the next launch's W), every batch and implementation (the project's kernels, cuBLAS, the read
// floor), checked against exact integer-level references on the host.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>

#include "kernels/access.hpp"
#include "kernels/gemv.hpp"
#include "memory_family.hpp"
#include "memory_runner.hpp"
#include "roofline/bench/testdata.hpp"
#include "storage_formats.hpp"

namespace roofline::bench::cuda::memory_family {
namespace {

using memory::Case;
using memory::Kernel;
using memory::Sizes;
using memory::Variant;

struct GemvReference {
  std::vector<std::int64_t> rows;     // the rows checked
  std::vector<std::int64_t> sum;      // [row index][vector]: sum of level products (exact)
  std::vector<std::int64_t> abs_sum;  // [row index][vector]: sum of their magnitudes
};

// Rows whose results are checked: all of them while m x k x batch stays under ~2^28
// multiply-adds, else one random row per stratum (at least 256), so that every region of W
// and every block of the grid is sampled.
std::vector<std::int64_t> reference_rows(std::int64_t m, std::int64_t k, std::int64_t batch, std::uint64_t seed) {
  constexpr std::int64_t budget = std::int64_t{1} << 28;
  const std::int64_t wanted = std::clamp<std::int64_t>(budget / (k * batch), 256, m);
  std::vector<std::int64_t> rows;
  rows.reserve(as_size(wanted));
  for (std::int64_t i = 0; i < wanted; ++i) {
    const std::int64_t lo = i * m / wanted;
    const std::int64_t hi = (i + 1) * m / wanted;
    rows.push_back(lo + static_cast<std::int64_t>(testdata::bits32(seed, static_cast<std::uint64_t>(i)) %
                                                  static_cast<std::uint64_t>(hi - lo)));
  }
  return rows;
}

GemvReference gemv_reference(const std::vector<std::int8_t>& w, const std::vector<std::int8_t>& x, std::int64_t m,
                             std::int64_t k, std::int64_t batch, std::uint64_t seed) {
  GemvReference ref;
  ref.rows = reference_rows(m, k, batch, seed);
  const std::int64_t n = static_cast<std::int64_t>(ref.rows.size());
  ref.sum.assign(as_size(n * batch), 0);
  ref.abs_sum.assign(as_size(n * batch), 0);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int8_t* wr = w.data() + ref.rows[as_size(r)] * k;
      for (std::int64_t b = 0; b < batch; ++b) {
        const std::int8_t* xb = x.data() + b * k;
        std::int64_t sum = 0;
        std::int64_t abs_sum = 0;
        for (std::int64_t j = 0; j < k; ++j) {
          const std::int32_t p = static_cast<std::int32_t>(wr[j]) * xb[j];
          sum += p;
          abs_sum += p < 0 ? -p : p;
        }
        ref.sum[as_size(r * batch + b)] = sum;
        ref.abs_sum[as_size(r * batch + b)] = abs_sum;
      }
    }
  });
  return ref;
}

// Each checked output y must lie within 2^-7 |y_ref| (16-bit rounding of the result and
// headroom) plus 1e-5 of the sum of the magnitudes of its terms (fp32 accumulation); every
// output, checked or not, must be finite (the 0xFFFF poison is NaN in both formats).
std::string check_gemv(const std::vector<std::uint16_t>& y, const GemvReference& ref, std::int64_t m,
                       std::int64_t batch, kernels::StorageFormat format) {
  const auto to_float = [format](std::uint16_t bits) { return half16_to_float(format, bits); };
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(to_float(y[i]))) {
      throw VerificationFailed(fmt::format("y[vector {}, row {}] is not finite (bits {:#06x}): not written or overflow",
                                           static_cast<std::int64_t>(i) / m, static_cast<std::int64_t>(i) % m, y[i]));
    }
  }
  constexpr double scale = 1.0 / 65536;  // a level product is (a / 256)(b / 256)
  double worst = 0;
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    const std::int64_t row = ref.rows[r];
    for (std::int64_t b = 0; b < batch; ++b) {
      const double want = static_cast<double>(ref.sum[r * as_size(batch) + as_size(b)]) * scale;
      const double magnitude = static_cast<double>(ref.abs_sum[r * as_size(batch) + as_size(b)]) * scale;
      const double got = to_float(y[as_size(b * m + row)]);
      const double allowed = std::ldexp(std::abs(want), -7) + 1e-5 * magnitude + 1e-30;
      const double ratio = std::abs(got - want) / allowed;
      if (!(ratio <= 1)) {
        throw VerificationFailed(
            fmt::format("y[vector {}, row {}] = {:.6g}, want {:.6g} (error {:.3g}, allowed {:.3g})", b, row, got, want,
                        std::abs(got - want), allowed));
      }
      worst = std::max(worst, ratio);
    }
  }
  return fmt::format("{} of {} rows x {} vectors checked, all outputs finite; worst error {:.2f} of allowed",
                     ref.rows.size(), m, batch, worst);
}

// The model dtypes of W and of x and y in a GEMV case.
struct GemvDTypes {
  DType weights;
  DType activations;
  friend bool operator==(const GemvDTypes&, const GemvDTypes&) = default;
};
GemvDTypes dtypes_of(const Case& c) {
  return {c.dtype, c.dtype};
}

// The storage format a matrix group runs in (the project's kernels, cuBLAS and the read floor alike),
// or why it cannot run: the kernels take W, x and y in one format of gemv_formats.
FormatChoice gemv_format(const Case& c) {
  const GemvDTypes dtypes = dtypes_of(c);
  const FormatChoice weights = choose_format(dtypes.weights, kernels::gemv_formats, "GEMV");
  const FormatChoice activations = choose_format(dtypes.activations, kernels::gemv_formats, "GEMV");
  if (!weights.format) return weights;
  if (!activations.format) return activations;
  if (const char* why = kernels::gemv_formats_unsupported(*weights.format, *activations.format)) {
    return {std::nullopt, why};
  }
  return weights;
}

// Cases of one weight matrix (same formats, m, k) in the storage format `format`, all batches and
// implementations.
void run_gemv_matrix(Context& ctx, std::span<const Case* const> cases, kernels::StorageFormat format,
                     const Sizes& sizes, std::uint64_t seed, Recorder& recorder, std::vector<std::string>& notes) {
  const Case& first = *cases.front();
  const std::int64_t m = first.m;
  const std::int64_t k = first.k;
  const std::int64_t elements = m * k;
  const std::size_t element_bytes = as_size(kernels::bytes_of(format));
  const std::size_t matrix_bytes = as_size(elements) * element_bytes;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(matrix_bytes), sizes);
  const std::int64_t max_batch = (*std::max_element(cases.begin(), cases.end(), [](const Case* a, const Case* b) {
                                   return a->batch < b->batch;
                                 }))->batch;

  DeviceBuffer dw = ctx.allocate(matrix_bytes * as_size(copies));
  const auto w_copy = [&dw, matrix_bytes](int copy) -> void* {
    return dw.as<unsigned char>() + matrix_bytes * as_size(copy);
  };
  DeviceBuffer dx = ctx.allocate(as_size(max_batch * k) * element_bytes);
  DeviceBuffer dy = ctx.allocate(as_size(max_batch * m) * element_bytes);
  // The read floor's reduction: one partial per block, an arrival counter, the sum.
  const int read_blocks = kernels::access_blocks(ctx.device().sms);
  DeviceBuffer read_partials = ctx.allocate(as_size(read_blocks) * 4);
  DeviceBuffer read_counter = ctx.allocate(sizeof(unsigned));
  DeviceBuffer read_result = ctx.allocate(4);
  check(cudaMemsetAsync(read_counter.get(), 0, sizeof(unsigned), ctx.stream()), "cudaMemsetAsync");
  // Copy 0 is the one checked; its levels stay on the host for the reference.
  std::vector<std::int8_t> w_levels(as_size(elements));
  std::vector<std::uint16_t> staging(as_size(elements));
  for (int copy = 0; copy < copies; ++copy) {
    const std::uint64_t sw = seed_of(seed, Stream::gemv_w, static_cast<std::uint64_t>(copy));
    parallel_for(elements, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        const int lvl = testdata::level(sw, static_cast<std::uint64_t>(i));
        if (copy == 0) w_levels[as_size(i)] = static_cast<std::int8_t>(lvl);
        staging[as_size(i)] = half16_level_bits(format, lvl);
      }
    });
    check(cudaMemcpyAsync(w_copy(copy), staging.data(), matrix_bytes, cudaMemcpyHostToDevice, ctx.stream()),
          "upload W");
    ctx.wait("upload W");
  }
  staging = {};
  if (copies > 1) {
    notes.push_back(
        fmt::format("gemv {} {}x{}: launches rotate through {} copies of W ({:.0f} MB) so that L2 never "
                    "holds the next launch's weights",
                    name_of(dtypes_of(first).weights), m, k, copies, static_cast<double>(matrix_bytes) * copies / 1e6));
  }

  std::size_t i = 0;
  while (i < cases.size()) {
    const std::int64_t batch = cases[i]->batch;
    std::size_t end = i;
    while (end < cases.size() && cases[end]->batch == batch) ++end;
    const std::span<const Case* const> same_batch = cases.subspan(i, end - i);
    i = end;

    std::vector<std::int8_t> x_levels(as_size(batch * k));
    std::vector<std::uint16_t> x_bits(as_size(batch * k));
    const std::uint64_t sx = seed_of(seed, Stream::gemv_x, static_cast<std::uint64_t>(batch));
    for (std::size_t j = 0; j < x_levels.size(); ++j) {
      const int lvl = testdata::level(sx, j);
      x_levels[j] = static_cast<std::int8_t>(lvl);
      x_bits[j] = half16_level_bits(format, lvl);
    }
    ctx.upload(dx, x_bits.data(), x_bits.size() * element_bytes);
    std::optional<GemvReference> reference;
    std::vector<std::uint16_t> y(as_size(batch * m));

    for (const Case* c : same_batch) {
      BenchmarkResult result = memory::make_result(*c, sizes);
      if (ctx.health().lost) {
        result.disposition = Disposition::not_run;
        result.detail = "the CUDA context was lost";
        recorder.record(std::move(result));
        continue;
      }
      Launch launch;
      if (c->variant == Variant::read) {
        // W's bytes as 4-byte words, summed: the same rotated copies, nothing else read or written.
        const std::int64_t words = static_cast<std::int64_t>(matrix_bytes / 4);
        const kernels::StridedReadArgs args{nullptr,
                                            words,
                                            1,
                                            0,
                                            read_blocks,
                                            read_partials.as<std::uint32_t>(),
                                            read_counter.as<unsigned>(),
                                            read_result.as<std::uint32_t>()};
        launch = [&, args](cudaStream_t s, int iteration) {
          kernels::StridedReadArgs a = args;
          a.data = static_cast<const std::uint32_t*>(w_copy(iteration % copies));
          return kernels::launch_strided_read(a, s);
        };
        const auto verify = [&]() -> std::string {
          ctx.poison(read_result);
          check(launch(ctx.stream(), 0), "read of W");
          std::uint32_t got = 0;
          ctx.download(&got, read_result, 4);
          std::atomic<std::uint32_t> want{0};
          parallel_for(words, [&](std::int64_t b, std::int64_t e) {
            std::uint32_t sum = 0;
            for (std::int64_t word = b; word < e; ++word) {
              sum += static_cast<std::uint32_t>(half16_level_bits(format, w_levels[as_size(2 * word)])) |
                     (static_cast<std::uint32_t>(half16_level_bits(format, w_levels[as_size(2 * word + 1)])) << 16);
            }
            want += sum;
          });
          if (got != want.load()) {
            throw VerificationFailed(
                fmt::format("wrapping sum of W's {} words is {:#010x}, want {:#010x}", words, got, want.load()));
          }
          return fmt::format("wrapping sum of W's {} words matches (reads W only: the floor of this GEMV)", words);
        };
        recorder.record(run_case(ctx, std::move(result), verify, launch, copies));
        continue;
      }
      if (c->variant == Variant::cublas || c->variant == Variant::cublasdirect) {
        const Cublas* loaded = nullptr;
        try {
          loaded = &ctx.cublas();
        } catch (const CudaError& e) {
          result.disposition = Disposition::failed;
          result.detail = e.what();
          recorder.record(std::move(result));
          continue;
        }
        const Cublas& cublas = *loaded;
        launch = [&, batch](cudaStream_t, int iteration) {
          const float one = 1.0F;
          const float zero = 0.0F;
          const void* w = w_copy(iteration % copies);
          // Row-major W (m x k) is column-major k x m: y^T (m x batch) = W^T-op(k x m) . x (k x batch).
          check(cublas.gemm_ex(cublas.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(batch),
                               static_cast<int>(k), &one, w, kernels::cuda_data_type(format), static_cast<int>(k),
                               dx.get(), kernels::cuda_data_type(format), static_cast<int>(k), &zero, dy.get(),
                               kernels::cuda_data_type(format), static_cast<int>(m), CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
          return cudaGetLastError();
        };
      } else {
        const kernels::GemvKernel kernel = gemv_kernel_of(c->variant);
        if (const char* why = kernels::gemv_unsupported(kernel, m, k, batch)) {
          result.disposition = Disposition::not_supported;
          result.detail = why;
          recorder.record(std::move(result));
          continue;
        }
        const kernels::GemvArgs args{kernel,   format, format, dw.get(), dx.get(),
                                     dy.get(), m,      k,      batch,    ctx.device().sms};
        launch = [&, args](cudaStream_t s, int iteration) {
          kernels::GemvArgs a = args;
          a.w = w_copy(iteration % copies);
          return kernels::launch_gemv(a, s);
        };
      }
      const auto verify = [&]() -> std::string {
        ctx.poison(dy);
        check(launch(ctx.stream(), 0), "gemv");
        ctx.download(y.data(), dy, y.size() * element_bytes);
        if (!reference) {
          reference = gemv_reference(w_levels, x_levels, m, k, batch, seed_of(seed, Stream::gemv_x, 1000 + batch));
        }
        return check_gemv(y, *reference, m, batch, format);
      };
      const TimingMode mode = c->variant == Variant::cublasdirect ? TimingMode::direct : TimingMode::graph;
      recorder.record(run_case(ctx, std::move(result), verify, launch, copies, mode));
    }
  }
}

}  // namespace

void run_gemv(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
              Recorder& recorder, std::vector<std::string>& notes) {
  std::size_t i = 0;
  while (i < cases.size()) {
    std::size_t end = i;
    const auto same_matrix = [&](const Case* c) {
      return dtypes_of(*c) == dtypes_of(*cases[i]) && c->m == cases[i]->m && c->k == cases[i]->k;
    };
    while (end < cases.size() && same_matrix(cases[end])) ++end;
    const std::span<const Case* const> group = cases.subspan(i, end - i);
    i = end;
    if (ctx.health().lost) {
      record_setup_failure(recorder, group, sizes, Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    const FormatChoice format = gemv_format(*group.front());
    if (!format.format) {
      record_setup_failure(recorder, group, sizes, Disposition::not_supported, format.unsupported);
      continue;
    }
    // Results recorded before a set-up failure stay; the rest of the group gets the reason.
    const std::size_t before = recorder.count();
    try {
      run_gemv_matrix(ctx, group, *format.format, sizes, seed, recorder, notes);
    } catch (const NotEnoughMemory& e) {
      record_setup_failure(recorder, group.subspan(recorder.count() - before), sizes, Disposition::not_run, e.what());
    } catch (const CudaError& e) {
      ctx.recover();
      record_setup_failure(recorder, group.subspan(recorder.count() - before), sizes, Disposition::failed,
                           fmt::format("set-up failed: {}", e.what()));
    }
  }
}

}  // namespace roofline::bench::cuda::memory_family

namespace roofline::bench::cuda {

kernels::GemvKernel gemv_kernel_of(memory::Variant v) {
  switch (v) {
    case memory::Variant::stag: return kernels::GemvKernel::stag;
    case memory::Variant::pipe: return kernels::GemvKernel::pipe;
    case memory::Variant::pdl: return kernels::GemvKernel::pdl;
    case memory::Variant::simt: return kernels::GemvKernel::simt;
    default: return kernels::GemvKernel::mma;
  }
}

}  // namespace roofline::bench::cuda
