// The memory suite's GEMV cases: one weight matrix per group (rotated copies so that L2 never holds
// the next launch's W), every batch and implementation (the project's kernels, cuBLAS, the read
// floor), checked against exact integer references on the host. W is 16-bit, fp8 e4m3 with a
// per-tensor scale, or int4 with group scales (kernels/gemv.hpp), x and y 16-bit; or W8A8: W and x
// e4m3 with per-tensor scales, y bf16.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include "kernels/access.hpp"
#include "kernels/gemm.hpp"
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

// Copy 0 of W exactly as uploaded (and, for int4, its group scales), and how to read its values
// back as integers: every test weight is an integer times 2^unit_exponent (16-bit levels: 2^-8;
// e4m3: 2^-9, its smallest subnormal; int4: (q - 8) x a scale of the form (8 + j) x 2^-(e + 3),
// e in 4..7: 2^-10; W8A8's e4m3 check levels: 2^-3), so that a reference dot product is an exact
// integer sum.
struct WeightImage {
  kernels::StorageFormat format = kernels::StorageFormat::bf16;
  bool w8a8 = false;  // e4m3 W of a W8A8 GEMV: kernels::fp8_check_level levels / 8
  std::int64_t k = 0;
  std::vector<unsigned char> bytes;   // [m][row bytes]
  std::vector<std::uint16_t> scales;  // int4: bf16 bits [m][k / 128]
  int unit_exponent = -8;
  double per_tensor_scale = 1.0;  // fp8: the value behind GemvArgs::weight_scale

  [[nodiscard]] std::int64_t row_bytes() const { return k * kernels::bits_of(format) / 8; }

  // Row r's values in units of 2^unit_exponent.
  void integers_of_row(std::int64_t r, std::vector<std::int32_t>& out) const {
    out.resize(as_size(k));
    const unsigned char* row = bytes.data() + r * row_bytes();
    for (std::int64_t j = 0; j < k; ++j) {
      double value = 0;
      switch (format) {
        case kernels::StorageFormat::fp8_e4m3: value = e4m3_value(row[j]); break;
        case kernels::StorageFormat::int4_g128: {
          const int q = (row[j / 2] >> (4 * (j % 2))) & 0xF;
          const float scale = testdata::bf16_bits_to_float(
              scales[as_size(r * (k / kernels::gemv_int4_group) + j / kernels::gemv_int4_group)]);
          value = (q - 8) * static_cast<double>(scale);
          break;
        }
        default: {
          std::uint16_t bits = 0;
          std::memcpy(&bits, row + 2 * j, 2);
          value = half16_to_float(format, bits);
          break;
        }
      }
      const double units = std::ldexp(value, -unit_exponent);
      if (units != std::nearbyint(units)) throw std::logic_error("a GEMV test weight is not on its integer grid");
      out[as_size(j)] = static_cast<std::int32_t>(units);
    }
  }
};

// An int4 group scale: (8 + j) x 2^-(e + 3) for j in 0..7, e in 4..7 (1/16 .. 15/128), exact in bf16
// and 2^-10 times an integer; bf16 bits.
std::uint16_t int4_test_scale(std::uint32_t random) {
  const int j = static_cast<int>(random & 7U);
  const int e = 4 + static_cast<int>((random >> 3) & 3U);
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(std::ldexp(8.0F + static_cast<float>(j), -(e + 3))) >>
                                    16);
}

// The largest batch any project GEMV kernel runs (the tensor-core kernel's).
constexpr std::int64_t max_project_gemv_batch = 64;

// fp8 W's per-tensor scale in the runs: 3 x 2^-5, not a power of two, so that a kernel that skips
// it or applies it twice fails.
constexpr float fp8_test_scale = 0.09375F;
// W8A8 x's per-tensor scale: 5 x 2^-4, neither a power of two nor W's, so that a kernel that drops
// it, squares either scale or uses one for the other fails; the product with W's (15 x 2^-9) is
// exact in fp32.
constexpr float w8a8_x_test_scale = 0.3125F;

// W8A8 operands are e4m3 check levels (kernels/gemm.hpp: level / 8, level in [-8, 8]), whose products
// (multiples of 1/64, at most 1) sum exactly in the fp8 tensor cores' accumulation, which keeps
// fewer bits than fp32 (docs/compute-kernels.md): the check sees the kernel's indexing and scales,
// not the hardware's rounding. The levels in units of 2^-3.
constexpr int w8a8_unit_exponent = -3;

// Copy `copy` of W (and its scales) in `format`: 16-bit test levels, finite e4m3 codes, or int4
// nibbles with test group scales.
void fill_weights(WeightImage& image, std::int64_t m, std::uint64_t seed) {
  const std::int64_t k = image.k;
  const std::int64_t row_bytes = image.row_bytes();
  image.bytes.resize(as_size(m * row_bytes));
  switch (image.format) {
    case kernels::StorageFormat::fp8_e4m3:
      if (image.w8a8) {
        image.unit_exponent = w8a8_unit_exponent;
        image.per_tensor_scale = fp8_test_scale;
        parallel_for(m * k, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) {
            image.bytes[as_size(i)] = e4m3_of_eighths(kernels::fp8_check_level(seed, static_cast<std::uint64_t>(i)));
          }
        });
        break;
      }
      image.unit_exponent = -9;
      image.per_tensor_scale = fp8_test_scale;
      parallel_for(m * k, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          image.bytes[as_size(i)] = finite_e4m3(testdata::bits32(seed, static_cast<std::uint64_t>(i)));
        }
      });
      break;
    case kernels::StorageFormat::int4_g128: {
      image.unit_exponent = -10;
      parallel_for(m * row_bytes, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          image.bytes[as_size(i)] = static_cast<unsigned char>(testdata::bits32(seed, static_cast<std::uint64_t>(i)));
        }
      });
      const std::int64_t groups = m * (k / kernels::gemv_int4_group);
      image.scales.resize(as_size(groups));
      const std::uint64_t scale_seed = testdata::mix64(seed ^ 0x5CA1E5ULL);
      for (std::int64_t g = 0; g < groups; ++g) {
        image.scales[as_size(g)] = int4_test_scale(testdata::bits32(scale_seed, static_cast<std::uint64_t>(g)));
      }
      break;
    }
    default:
      image.unit_exponent = -8;
      parallel_for(m * k, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          const std::uint16_t bits =
              half16_level_bits(image.format, testdata::level(seed, static_cast<std::uint64_t>(i)));
          std::memcpy(image.bytes.data() + 2 * i, &bits, 2);
        }
      });
      break;
  }
}

struct GemvReference {
  std::vector<std::int64_t> rows;     // the rows checked
  std::vector<std::int64_t> sum;      // [row index][vector]: sum of integer products (exact)
  std::vector<std::int64_t> abs_sum;  // [row index][vector]: sum of their magnitudes
  double unit = 0;                    // the value of 1 in sum and abs_sum
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

// x's levels and what one of them is worth: 16-bit x holds level x 2^-8 (testdata::level); W8A8's
// e4m3 x holds level x 2^-3 and is scaled by its per-tensor scale.
struct XLevels {
  std::vector<std::int8_t> levels;  // [batch][k]
  int unit_exponent = -8;
  double scale = 1.0;
};

// The float64 reference of the checked rows: W's integers (dequantised on the host) times x's
// levels, summed exactly.
GemvReference gemv_reference(const WeightImage& w, const XLevels& x_levels, std::int64_t m, std::int64_t batch,
                             std::uint64_t seed) {
  const std::int64_t k = w.k;
  const std::vector<std::int8_t>& x = x_levels.levels;
  GemvReference ref;
  ref.rows = reference_rows(m, k, batch, seed);
  ref.unit = std::ldexp(w.per_tensor_scale * x_levels.scale, w.unit_exponent + x_levels.unit_exponent);
  const std::int64_t n = static_cast<std::int64_t>(ref.rows.size());
  ref.sum.assign(as_size(n * batch), 0);
  ref.abs_sum.assign(as_size(n * batch), 0);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int32_t> wr;
    for (std::int64_t r = begin; r < end; ++r) {
      w.integers_of_row(ref.rows[as_size(r)], wr);
      for (std::int64_t b = 0; b < batch; ++b) {
        const std::int8_t* xb = x.data() + b * k;
        std::int64_t sum = 0;
        std::int64_t abs_sum = 0;
        for (std::int64_t j = 0; j < k; ++j) {
          const std::int64_t p = static_cast<std::int64_t>(wr[as_size(j)]) * xb[j];
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
  double worst = 0;
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    const std::int64_t row = ref.rows[r];
    for (std::int64_t b = 0; b < batch; ++b) {
      const double want = static_cast<double>(ref.sum[r * as_size(batch) + as_size(b)]) * ref.unit;
      const double magnitude = static_cast<double>(ref.abs_sum[r * as_size(batch) + as_size(b)]) * ref.unit;
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
  return {c.weights, c.activations};
}

// The storage formats a matrix group runs in (the project's kernels, cuBLAS and the read floor
// alike), or why it cannot run.
struct GemvFormats {
  kernels::StorageFormat weights;
  kernels::StorageFormat activations;
};
std::variant<GemvFormats, std::string> gemv_formats_of(const Case& c) {
  const GemvDTypes dtypes = dtypes_of(c);
  if (memory::w8a8_gemv(c)) {
    const FormatChoice format = choose_format(dtypes.weights, kernels::gemv_quantised_weights, "GEMV");
    if (!format.format) return format.unsupported;
    if (const char* why = kernels::gemv_formats_unsupported(*format.format, *format.format)) return why;
    return GemvFormats{*format.format, *format.format};
  }
  const bool quantised = dtypes.weights != dtypes.activations;
  const FormatChoice weights =
      choose_format(dtypes.weights, quantised ? kernels::gemv_quantised_weights : kernels::gemv_formats, "GEMV");
  const FormatChoice activations = choose_format(dtypes.activations, kernels::gemv_formats, "GEMV");
  if (!weights.format) return weights.unsupported;
  if (!activations.format) return activations.unsupported;
  if (const char* why = kernels::gemv_formats_unsupported(*weights.format, *activations.format)) return why;
  return GemvFormats{*weights.format, *activations.format};
}

// Cases of one weight matrix (same formats, m, k) in the storage formats `formats`, all batches and
// implementations.
void run_gemv_matrix(Context& ctx, std::span<const Case* const> cases, GemvFormats formats, const Sizes& sizes,
                     std::uint64_t seed, Recorder& recorder, std::vector<std::string>& notes) {
  const Case& first = *cases.front();
  const std::int64_t m = first.m;
  const std::int64_t k = first.k;
  const bool w8a8 = kernels::gemv_is_w8a8(formats.weights, formats.activations);
  // x in the activations' format; y in it too, or bf16 (W8A8).
  const kernels::StorageFormat format = w8a8 ? kernels::gemv_w8a8_output : formats.activations;
  const std::size_t element_bytes = as_size(kernels::bytes_of(format));
  const std::size_t x_element_bytes = as_size(kernels::bytes_of(formats.activations));
  WeightImage image;
  image.format = formats.weights;
  image.w8a8 = w8a8;
  image.k = k;
  const std::size_t matrix_bytes = as_size(m * image.row_bytes());
  const bool int4 = formats.weights == kernels::StorageFormat::int4_g128;
  const std::size_t scales_bytes =
      int4 ? as_size(m * (k / kernels::gemv_int4_group) * kernels::group_scale_bits_of(formats.weights) / 8) : 0;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(matrix_bytes + scales_bytes), sizes);
  const std::int64_t max_batch = (*std::max_element(cases.begin(), cases.end(), [](const Case* a, const Case* b) {
                                   return a->batch < b->batch;
                                 }))->batch;

  DeviceBuffer dw = ctx.allocate(matrix_bytes * as_size(copies));
  const auto w_copy = [&dw, matrix_bytes](int copy) -> void* {
    return dw.as<unsigned char>() + matrix_bytes * as_size(copy);
  };
  DeviceBuffer dscales = ctx.allocate(std::max<std::size_t>(scales_bytes * as_size(copies), 16));
  const auto scales_copy = [&dscales, scales_bytes, int4](int copy) -> const void* {
    return int4 ? dscales.as<unsigned char>() + scales_bytes * as_size(copy) : nullptr;
  };
  DeviceBuffer dweight_scale = ctx.allocate(sizeof(float));
  const float weight_scale = fp8_test_scale;
  ctx.upload(dweight_scale, &weight_scale, sizeof(float));
  DeviceBuffer dactivation_scale = ctx.allocate(sizeof(float));
  const float activation_scale = w8a8_x_test_scale;
  ctx.upload(dactivation_scale, &activation_scale, sizeof(float));
  DeviceBuffer dx = ctx.allocate(as_size(max_batch * k) * x_element_bytes);
  DeviceBuffer dy = ctx.allocate(as_size(max_batch * m) * element_bytes);
  // The read floor's reduction: one partial per block, an arrival counter, the sum.
  const int read_blocks = kernels::access_blocks(ctx.device().sms);
  DeviceBuffer read_partials = ctx.allocate(as_size(read_blocks) * 4);
  DeviceBuffer read_counter = ctx.allocate(sizeof(unsigned));
  DeviceBuffer read_result = ctx.allocate(4);
  check(cudaMemsetAsync(read_counter.get(), 0, sizeof(unsigned), ctx.stream()), "cudaMemsetAsync");
  // Copy 0 is the one checked, and filled last: its image stays on the host for the reference.
  for (int copy = copies - 1; copy >= 0; --copy) {
    fill_weights(image, m, seed_of(seed, Stream::gemv_w, static_cast<std::uint64_t>(copy)));
    check(cudaMemcpyAsync(w_copy(copy), image.bytes.data(), matrix_bytes, cudaMemcpyHostToDevice, ctx.stream()),
          "upload W");
    if (int4) {
      check(cudaMemcpyAsync(const_cast<void*>(scales_copy(copy)), image.scales.data(), scales_bytes,
                            cudaMemcpyHostToDevice, ctx.stream()),
            "upload W's scales");
    }
    ctx.wait("upload W");
  }
  if (copies > 1) {
    const GemvDTypes dtypes = dtypes_of(first);
    const std::string formats_name =
        w8a8 ? fmt::format("{} W and x (W8A8)", name_of(dtypes.weights))
        : dtypes.weights == dtypes.activations
            ? std::string(name_of(dtypes.weights))
            : fmt::format("{} W, {} x", name_of(dtypes.weights), name_of(dtypes.activations));
    notes.push_back(
        fmt::format("gemv {} {}x{}: launches rotate through {} copies of W ({:.0f} MB) so that L2 never "
                    "holds the next launch's weights",
                    formats_name, m, k, copies, static_cast<double>(matrix_bytes + scales_bytes) * copies / 1e6));
  }
  std::size_t i = 0;
  while (i < cases.size()) {
    const std::int64_t batch = cases[i]->batch;
    std::size_t end = i;
    while (end < cases.size() && cases[end]->batch == batch) ++end;
    const std::span<const Case* const> same_batch = cases.subspan(i, end - i);
    i = end;

    XLevels x_levels;
    x_levels.levels.resize(as_size(batch * k));
    const std::uint64_t sx = seed_of(seed, Stream::gemv_x, static_cast<std::uint64_t>(batch));
    if (w8a8) {
      x_levels.unit_exponent = w8a8_unit_exponent;
      x_levels.scale = w8a8_x_test_scale;
      std::vector<std::uint8_t> x_bytes(x_levels.levels.size());
      for (std::size_t j = 0; j < x_bytes.size(); ++j) {
        const int lvl = kernels::fp8_check_level(sx, j);
        x_levels.levels[j] = static_cast<std::int8_t>(lvl);
        x_bytes[j] = e4m3_of_eighths(lvl);
      }
      ctx.upload(dx, x_bytes.data(), x_bytes.size());
    } else {
      std::vector<std::uint16_t> x_bits(x_levels.levels.size());
      for (std::size_t j = 0; j < x_bits.size(); ++j) {
        const int lvl = testdata::level(sx, j);
        x_levels.levels[j] = static_cast<std::int8_t>(lvl);
        x_bits[j] = half16_level_bits(format, lvl);
      }
      ctx.upload(dx, x_bits.data(), x_bits.size() * element_bytes);
    }
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
      std::string plan_note;   // how the wgmma GEMV cuts the problem
      DeviceBuffer workspace;  // the wgmma kernel's partial sums and tickets, zeroed once
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
              std::uint32_t value = 0;
              std::memcpy(&value, image.bytes.data() + 4 * word, 4);
              sum += value;
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
        if (w8a8 && !kernels::gemv_w8a8_supported(ctx.device().index)) {
          result.disposition = Disposition::not_supported;
          result.detail =
              "not built for this device (the W8A8 GEMV's e4m3 mma.sync needs compute capability 8.9 or later and "
              "kernels compiled for it)";
          recorder.record(std::move(result));
          continue;
        }
        if (!kernels::gemv_kernel_supported(kernel, ctx.device().index)) {
          result.disposition = Disposition::not_supported;
          result.detail =
              "not built for this device (the wgmma GEMV needs sm_90a code and a compute capability 9.0 device)";
          recorder.record(std::move(result));
          continue;
        }
        if (const char* why = kernels::gemv_unsupported(kernel, m, k, batch, formats.weights, formats.activations)) {
          result.disposition = Disposition::not_supported;
          result.detail = why;
          if (batch > max_project_gemv_batch && !w8a8) {
            result.detail +=
                "; no project kernel runs this batch (the compute suite measures cuBLASLt's FP8 GEMM at "
                "M = 16 .. 256)";
          }
          recorder.record(std::move(result));
          continue;
        }
        const kernels::GemvArgs args{.kernel = kernel,
                                     .weights = formats.weights,
                                     .activations = formats.activations,
                                     .w = dw.get(),
                                     .x = dx.get(),
                                     .y = dy.get(),
                                     .m = m,
                                     .k = k,
                                     .batch = batch,
                                     .sms = ctx.device().sms,
                                     .weight_scale = dweight_scale.as<float>(),
                                     .group_scales = nullptr,
                                     .workspace = nullptr,
                                     .activation_scale = dactivation_scale.as<float>()};
        if (const std::size_t bytes = kernels::gemv_workspace_bytes(args); bytes > 0) {
          workspace = ctx.allocate_zeroed(bytes);
        }
        if (kernel == kernels::GemvKernel::wgmma)
          plan_note = memory::gemv_wgmma_plan_note(m, k, batch, ctx.device().sms);
        launch = [&, args](cudaStream_t s, int iteration) {
          kernels::GemvArgs a = args;
          a.w = w_copy(iteration % copies);
          a.group_scales = scales_copy(iteration % copies);
          a.workspace = workspace.get();
          return kernels::launch_gemv(a, s);
        };
      }
      const auto verify = [&]() -> std::string {
        ctx.poison(dy);
        check(launch(ctx.stream(), 0), "gemv");
        ctx.download(y.data(), dy, y.size() * element_bytes);
        if (!reference) {
          reference = gemv_reference(image, x_levels, m, batch, seed_of(seed, Stream::gemv_x, 1000 + batch));
        }
        return check_gemv(y, *reference, m, batch, format) + plan_note;
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
    const std::variant<GemvFormats, std::string> formats = gemv_formats_of(*group.front());
    if (const std::string* why = std::get_if<std::string>(&formats)) {
      record_setup_failure(recorder, group, sizes, Disposition::not_supported, *why);
      continue;
    }
    // Results recorded before a set-up failure stay; the rest of the group gets the reason.
    const std::size_t before = recorder.count();
    try {
      run_gemv_matrix(ctx, group, std::get<GemvFormats>(formats), sizes, seed, recorder, notes);
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
    case memory::Variant::wgmma: return kernels::GemvKernel::wgmma;
    default: return kernels::GemvKernel::mma;
  }
}

}  // namespace roofline::bench::cuda
