// Runs the memory suite's cases (roofline/memory_suite.hpp): builds inputs on the host from
// roofline/testdata.hpp, uploads them, checks each kernel's output against a host reference,
// and times it. Groups share their buffers; a group's set-up failure marks its cases.
#include "memory_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>

#include "kernels/access.hpp"
#include "kernels/gemv.hpp"
#include "kernels/hierarchy.hpp"
#include "kernels/layer.hpp"
#include "kernels/stream.hpp"
#include "kernels/verify.hpp"
#include "roofline/testdata.hpp"

namespace roofline::bench::cuda {
namespace {

using memory::Case;
using memory::Kernel;
using memory::Sizes;
using memory::Variant;

// Seeds of the separate input streams of one run.
enum class Stream : std::uint64_t {
  x = 1,
  y,
  strided,
  table,
  indices,
  values,
  l2,
  smem,
  gemv_w,
  gemv_x,
  attention_qkv,
  attention_k,
  attention_v
};
std::uint64_t seed_of(std::uint64_t run_seed, Stream s, std::uint64_t sub = 0) {
  return testdata::mix64(run_seed ^ (static_cast<std::uint64_t>(s) << 56) ^ (sub * 0x9E3779B97F4A7C15ULL));
}

std::size_t as_size(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

// Marks every case of a group whose set-up failed.
void record_setup_failure(Recorder& recorder, std::span<const Case* const> cases, const Sizes& sizes,
                          Disposition disposition, const std::string& reason) {
  for (const Case* c : cases) {
    BenchmarkResult r = memory::make_result(*c, sizes);
    r.disposition = disposition;
    r.detail = reason;
    recorder.record(std::move(r));
  }
}

// Runs `body`; a failure to set the group up becomes the disposition of all its cases.
template <typename Body>
void guarded_group(Context& ctx, Recorder& recorder, std::span<const Case* const> cases, const Sizes& sizes,
                   Body&& body) {
  if (cases.empty()) return;
  try {
    body();
  } catch (const NotEnoughMemory& e) {
    record_setup_failure(recorder, cases, sizes, Disposition::not_run, e.what());
  } catch (const CudaError& e) {
    ctx.recover();
    record_setup_failure(recorder, cases, sizes, Disposition::failed, fmt::format("set-up failed: {}", e.what()));
  }
}

// ---- stream ----------------------------------------------------------------------------------

kernels::StreamOp stream_op(Kernel k) {
  switch (k) {
    case Kernel::scale: return kernels::StreamOp::scale;
    case Kernel::add: return kernels::StreamOp::add;
    case Kernel::triad: return kernels::StreamOp::triad;
    case Kernel::dot: return kernels::StreamOp::dot;
    default: return kernels::StreamOp::copy;
  }
}

float stream_expected(Kernel k, float x, float y) {
  const float s = memory::stream_scalar;
  switch (k) {
    case Kernel::scale: return s * x;
    case Kernel::add: return x + y;
    case Kernel::triad: return x + s * y;
    default: return x;
  }
}

// Element-wise check of a stream result; copies must be bit-exact, arithmetic within 1e-6
// relative (a triad may be fused into one FMA on the device and not on the host).
std::string check_stream(Kernel k, std::span<const float> out, std::span<const float> x, std::span<const float> y) {
  const bool exact = k == Kernel::copy || k == Kernel::memcpy_d2d;
  constexpr double tolerance = 1e-6;
  std::atomic<std::int64_t> bad{0};
  std::mutex lock;
  std::int64_t first_bad = -1;
  double worst = 0;
  parallel_for(static_cast<std::int64_t>(out.size()), [&](std::int64_t begin, std::int64_t end) {
    double local_worst = 0;
    std::int64_t local_bad = 0;
    std::int64_t local_first = -1;
    for (std::int64_t i = begin; i < end; ++i) {
      const float want = stream_expected(k, x[as_size(i)], y[as_size(i)]);
      const float got = out[as_size(i)];
      const double err = std::abs(static_cast<double>(got) - want) / std::abs(static_cast<double>(want));
      const bool ok = exact ? std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want)
                            : (err <= tolerance);  // NaN fails
      if (!ok) {
        ++local_bad;
        if (local_first < 0) local_first = i;
      } else {
        local_worst = std::max(local_worst, err);
      }
    }
    bad += local_bad;
    const std::lock_guard<std::mutex> guard(lock);
    worst = std::max(worst, local_worst);
    if (local_first >= 0 && (first_bad < 0 || local_first < first_bad)) first_bad = local_first;
  });
  if (bad > 0) {
    const std::size_t i = as_size(first_bad);
    throw VerificationFailed(fmt::format("{} of {} elements wrong; first at {}: got {}, want {}", bad.load(),
                                         out.size(), first_bad, out[i], stream_expected(k, x[i], y[i])));
  }
  return exact ? fmt::format("all {} elements bit-exact", out.size())
               : fmt::format("all {} elements within {:.0e} (max relative error {:.1e})", out.size(), tolerance, worst);
}

double host_dot(std::span<const float> x, std::span<const float> y) {
  // Per-thread sums of 4096-element blocks keep the double rounding error near 1e-13.
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const std::int64_t blocks = (n + 4095) / 4096;
  std::vector<double> partial(as_size(blocks));
  parallel_for(blocks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b) {
      double sum = 0;
      for (std::int64_t i = b * 4096; i < std::min(n, (b + 1) * 4096); ++i) {
        sum += static_cast<double>(x[as_size(i)]) * static_cast<double>(y[as_size(i)]);
      }
      partial[as_size(b)] = sum;
    }
  });
  return std::accumulate(partial.begin(), partial.end(), 0.0);
}

void run_stream(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                Recorder& recorder) {
  guarded_group(ctx, recorder, cases, sizes, [&] {
    const std::int64_t n = sizes.stream_elements;
    const std::size_t bytes = as_size(n) * sizeof(float);
    std::vector<float> x(as_size(n));
    std::vector<float> y(as_size(n));
    const std::uint64_t sx = seed_of(seed, Stream::x);
    const std::uint64_t sy = seed_of(seed, Stream::y);
    parallel_for(n, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        x[as_size(i)] = std::bit_cast<float>(testdata::unit_f32_bits(sx, static_cast<std::uint64_t>(i)));
        y[as_size(i)] = std::bit_cast<float>(testdata::unit_f32_bits(sy, static_cast<std::uint64_t>(i)));
      }
    });
    DeviceBuffer dx = ctx.allocate(bytes);
    DeviceBuffer dy = ctx.allocate(bytes);
    DeviceBuffer dout = ctx.allocate(bytes);
    const int max_blocks = 64 * ctx.device().sms;
    DeviceBuffer partials = ctx.allocate(as_size(max_blocks) * sizeof(double));
    DeviceBuffer counter = ctx.allocate(sizeof(unsigned));
    DeviceBuffer result = ctx.allocate(sizeof(double));
    check(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned), ctx.stream()), "cudaMemsetAsync");
    ctx.upload(dx, x.data(), bytes);
    ctx.upload(dy, y.data(), bytes);
    std::vector<float> out(as_size(n));
    std::map<std::int64_t, double> dot_references;  // by element count

    for (const Case* c : cases) {
      if (ctx.health().lost) {
        record_setup_failure(recorder, std::span(&c, 1), sizes, Disposition::not_run, "the CUDA context was lost");
        continue;
      }
      const std::int64_t elements = memory::stream_elements(*c, sizes);
      if (elements > n) {
        record_setup_failure(recorder, std::span(&c, 1), sizes, Disposition::not_run,
                             fmt::format("its {} MiB arrays do not fit in this run's {} MiB stream arrays",
                                         elements * 4 >> 20, n * 4 >> 20));
        continue;
      }
      const std::size_t case_bytes = as_size(elements) * sizeof(float);
      const memory::StreamRotation rotation = memory::stream_rotation(*c, sizes);
      kernels::StreamArgs args;
      args.op = stream_op(c->kernel);
      args.schedule = c->variant == Variant::tile        ? kernels::StreamSchedule::tile
                      : c->variant == Variant::streaming ? kernels::StreamSchedule::persistent_streaming
                                                         : kernels::StreamSchedule::persistent;
      args.vector_bytes = c->vector_bytes;
      args.x = dx.as<float>();
      args.y = dy.as<float>();
      args.out = dout.as<float>();
      args.scalar = memory::stream_scalar;
      args.elements = elements;
      args.blocks = std::min(
          max_blocks, kernels::stream_persistent_blocks(args.op, args.schedule, c->vector_bytes, ctx.device().sms));
      args.partials = partials.as<double>();
      args.counter = counter.as<unsigned>();
      args.result = result.as<double>();
      const bool is_memcpy = c->kernel == Kernel::memcpy_d2d;
      // The ceiling is timed as a user calls cudaMemcpyAsync; captured into a graph the same call
      // becomes a memcpy node on a copy engine (the memcpy.d2d.graph case shows how much slower).
      const TimingMode mode = is_memcpy && c->variant == Variant::runtime ? TimingMode::direct : TimingMode::graph;
      const int copies = rotation.copies;
      const Launch launch = [&, args, is_memcpy, copies, elements](cudaStream_t s, int iteration) {
        if (is_memcpy) return cudaMemcpyAsync(dout.get(), dx.get(), bytes, cudaMemcpyDeviceToDevice, s);
        kernels::StreamArgs a = args;
        const std::size_t offset = as_size(elements) * as_size(iteration % copies);
        a.x = args.x + offset;
        a.y = args.y + offset;
        a.out = args.out + offset;
        return kernels::launch_stream(a, s);
      };
      const auto verify = [&, c, elements, case_bytes]() -> std::string {
        const std::span<const float> xs(x.data(), as_size(elements));
        const std::span<const float> ys(y.data(), as_size(elements));
        if (c->kernel == Kernel::dot) {
          ctx.poison(result);
          check(launch(ctx.stream(), 0), "dot");
          double got = 0;
          ctx.download(&got, result, sizeof(double));
          auto reference = dot_references.find(elements);
          if (reference == dot_references.end()) reference = dot_references.emplace(elements, host_dot(xs, ys)).first;
          const double want = reference->second;
          const double err = std::abs(got - want) / want;
          if (!(err <= 1e-10)) {
            throw VerificationFailed(
                fmt::format("dot = {:.17g}, reference {:.17g} (relative error {:.1e} > 1e-10)", got, want, err));
          }
          return fmt::format("sum of {} products within {:.1e} of the host's", elements, err);
        }
        ctx.poison(dout);
        check(launch(ctx.stream(), 0), std::string(memory::kernel_name(c->kernel)));
        ctx.download(out.data(), dout, case_bytes);
        return check_stream(c->kernel, std::span<const float>(out.data(), as_size(elements)), xs, ys);
      };
      BenchmarkResult r = run_case(ctx, memory::make_result(*c, sizes), verify, launch, copies, mode);
      if (r.disposition == Disposition::passed && rotation.wanted > 1) {
        r.detail += rotation.copies < rotation.wanted
                        ? fmt::format(
                              "; launches rotate through {} copies of the arrays ({}; {} would keep every read "
                              "out of L2)",
                              rotation.copies,
                              rotation.copies == memory::max_stream_rotation
                                  ? "the suite's cap on a rotation"
                                  : fmt::format("all that fit in the suite's {} MiB arrays", n * 4 >> 20),
                              rotation.wanted)
                        : fmt::format(
                              "; launches rotate through {} copies of the arrays, so that every read "
                              "comes from HBM",
                              rotation.copies);
      }
      recorder.record(std::move(r));
    }
  });
}

// ---- access patterns ---------------------------------------------------------------------------

int log2_exact(std::int64_t n) {
  return std::countr_zero(static_cast<std::uint64_t>(n));
}

void run_access(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                Recorder& recorder) {
  std::vector<const Case*> strided;
  std::vector<const Case*> random;
  for (const Case* c : cases) (c->kernel == Kernel::strided_read ? strided : random).push_back(c);
  const int blocks = kernels::access_blocks(ctx.device().sms);

  guarded_group(ctx, recorder, strided, sizes, [&] {
    const std::int64_t words = sizes.strided_span_bytes / 4;
    std::vector<std::uint32_t> data(as_size(words));
    const std::uint64_t s0 = seed_of(seed, Stream::strided);
    parallel_for(words, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) data[as_size(i)] = testdata::bits32(s0, static_cast<std::uint64_t>(i));
    });
    DeviceBuffer ddata = ctx.allocate(as_size(words) * 4);
    DeviceBuffer partials = ctx.allocate(as_size(blocks) * 4);
    DeviceBuffer counter = ctx.allocate(sizeof(unsigned));
    DeviceBuffer result = ctx.allocate(4);
    check(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned), ctx.stream()), "cudaMemsetAsync");
    ctx.upload(ddata, data.data(), as_size(words) * 4);
    for (const Case* c : strided) {
      if (ctx.health().lost) {
        record_setup_failure(recorder, std::span(&c, 1), sizes, Disposition::not_run, "the CUDA context was lost");
        continue;
      }
      const std::int64_t stride = c->stride;
      const std::int64_t accesses = memory::strided_accesses(stride, sizes);
      const int offsets = memory::strided_offsets(stride);
      kernels::StridedReadArgs args{
          ddata.as<std::uint32_t>(), accesses, stride, 0, blocks, partials.as<std::uint32_t>(), counter.as<unsigned>(),
          result.as<std::uint32_t>()};
      const Launch launch = [args, offsets](cudaStream_t s, int iteration) {
        kernels::StridedReadArgs a = args;
        a.offset = static_cast<std::int64_t>(iteration % offsets) * 8;  // one sector further each launch
        return kernels::launch_strided_read(a, s);
      };
      const auto verify = [&]() -> std::string {
        ctx.poison(result);
        check(launch(ctx.stream(), 0), "strided read");
        std::uint32_t got = 0;
        ctx.download(&got, result, 4);
        std::atomic<std::uint32_t> want{0};
        parallel_for(accesses, [&](std::int64_t b, std::int64_t e) {
          std::uint32_t sum = 0;
          for (std::int64_t i = b; i < e; ++i) sum += data[as_size(i * stride)];
          want += sum;
        });
        if (got != want.load()) {
          throw VerificationFailed(fmt::format("sum of {} words at stride {} is {:#010x}, want {:#010x}", accesses,
                                               stride, got, want.load()));
        }
        return fmt::format("wrapping sum of {} words matches", accesses);
      };
      recorder.record(run_case(ctx, memory::make_result(*c, sizes), verify, launch, offsets));
    }
  });

  guarded_group(ctx, recorder, random, sizes, [&] {
    const std::int64_t table_words = sizes.gather_table_elements;
    const std::int64_t count = sizes.gather_accesses;
    const int sets = sizes.gather_index_sets;
    const int bits = log2_exact(table_words);
    // Values never equal the 0xFFFFFFFF poison, so the scatter check can tell written from not.
    std::vector<std::uint32_t> table(as_size(table_words));
    const std::uint64_t st = seed_of(seed, Stream::table);
    parallel_for(table_words, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        table[as_size(i)] = testdata::bits32(st, static_cast<std::uint64_t>(i)) & 0x7FFFFFFFU;
      }
    });
    std::vector<std::uint32_t> indices(as_size(count) * as_size(sets));
    std::vector<std::uint32_t> values(as_size(count));
    const std::uint64_t si = seed_of(seed, Stream::indices);
    const std::uint64_t sv = seed_of(seed, Stream::values);
    parallel_for(count * sets, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        indices[as_size(i)] = static_cast<std::uint32_t>(testdata::permute(static_cast<std::uint64_t>(i), bits, si));
        if (i < count) values[as_size(i)] = testdata::bits32(sv, static_cast<std::uint64_t>(i)) & 0x7FFFFFFFU;
      }
    });
    DeviceBuffer dtable = ctx.allocate(as_size(table_words) * 4);
    DeviceBuffer dindices = ctx.allocate(indices.size() * 4);
    DeviceBuffer dvalues = ctx.allocate(as_size(count) * 4);
    ctx.upload(dtable, table.data(), table.size() * 4);
    ctx.upload(dindices, indices.data(), indices.size() * 4);
    std::vector<std::uint32_t> host_values(as_size(count));
    for (const Case* c : random) {
      if (ctx.health().lost) {
        record_setup_failure(recorder, std::span(&c, 1), sizes, Disposition::not_run, "the CUDA context was lost");
        continue;
      }
      const bool gather = c->kernel == Kernel::gather;
      const Launch launch = [&, gather](cudaStream_t s, int iteration) {
        const kernels::RandomAccessArgs a{dtable.as<std::uint32_t>(),
                                          dindices.as<std::uint32_t>() + as_size(count) * as_size(iteration % sets),
                                          dvalues.as<std::uint32_t>(), count, blocks};
        return gather ? kernels::launch_gather(a, s) : kernels::launch_scatter(a, s);
      };
      const auto verify = [&]() -> std::string {
        if (gather) {
          ctx.poison(dvalues);
          check(launch(ctx.stream(), 0), "gather");
          ctx.download(host_values.data(), dvalues, as_size(count) * 4);
          for (std::int64_t i = 0; i < count; ++i) {
            const std::uint32_t want = table[indices[as_size(i)]];
            if (host_values[as_size(i)] != want) {
              throw VerificationFailed(fmt::format("out[{}] = {:#x}, want table[{}] = {:#x}", i,
                                                   host_values[as_size(i)], indices[as_size(i)], want));
            }
          }
          return fmt::format("all {} gathered words match", count);
        }
        // Scatter: the table becomes the output. Its gather contents are no longer needed.
        ctx.upload(dvalues, values.data(), as_size(count) * 4);
        ctx.poison(dtable);
        check(launch(ctx.stream(), 0), "scatter");
        ctx.download(table.data(), dtable, table.size() * 4);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::uint32_t got = table[indices[as_size(i)]];
          if (got != values[as_size(i)]) {
            throw VerificationFailed(fmt::format("table[{}] = {:#x}, want value[{}] = {:#x}", indices[as_size(i)], got,
                                                 i, values[as_size(i)]));
          }
        }
        const auto written =
            std::count_if(table.begin(), table.end(), [](std::uint32_t v) { return v != 0xFFFFFFFFU; });
        if (written != count) {
          throw VerificationFailed(fmt::format("{} table words written, want exactly {}", written, count));
        }
        return fmt::format("all {} scattered words landed, no other word written", count);
      };
      recorder.record(run_case(ctx, memory::make_result(*c, sizes), verify, launch, sets));
    }
  });
}

// ---- GEMV ------------------------------------------------------------------------------------

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
                       std::int64_t batch, DType dtype) {
  const auto to_float = [dtype](std::uint16_t bits) {
    return dtype == DType::bf16 ? testdata::bf16_bits_to_float(bits) : testdata::fp16_bits_to_float(bits);
  };
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

cudaDataType_t cuda_type(DType dtype) {
  return dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
}

std::uint16_t level_bits(DType dtype, int lvl) {
  return dtype == DType::bf16 ? testdata::level_bf16_bits(lvl) : testdata::level_fp16_bits(lvl);
}

// Cases of one weight matrix (same dtype, m, k), all batches and implementations.
void run_gemv_matrix(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                     Recorder& recorder, std::vector<std::string>& notes) {
  const Case& first = *cases.front();
  const DType dtype = first.dtype;
  const std::int64_t m = first.m;
  const std::int64_t k = first.k;
  const std::int64_t elements = m * k;
  const std::size_t matrix_bytes = as_size(elements) * 2;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(matrix_bytes), sizes);
  const std::int64_t max_batch = (*std::max_element(cases.begin(), cases.end(), [](const Case* a, const Case* b) {
                                   return a->batch < b->batch;
                                 }))->batch;

  DeviceBuffer dw = ctx.allocate(matrix_bytes * as_size(copies));
  DeviceBuffer dx = ctx.allocate(as_size(max_batch * k) * 2);
  DeviceBuffer dy = ctx.allocate(as_size(max_batch * m) * 2);
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
        staging[as_size(i)] = level_bits(dtype, lvl);
      }
    });
    check(cudaMemcpyAsync(dw.as<std::uint16_t>() + as_size(elements) * as_size(copy), staging.data(), matrix_bytes,
                          cudaMemcpyHostToDevice, ctx.stream()),
          "upload W");
    ctx.wait("upload W");
  }
  staging = {};
  if (copies > 1) {
    notes.push_back(
        fmt::format("gemv {} {}x{}: launches rotate through {} copies of W ({:.0f} MB) so that L2 never "
                    "holds the next launch's weights",
                    name_of(dtype), m, k, copies, static_cast<double>(matrix_bytes) * copies / 1e6));
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
      x_bits[j] = level_bits(dtype, lvl);
    }
    ctx.upload(dx, x_bits.data(), x_bits.size() * 2);
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
        const std::int64_t words = elements / 2;
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
          a.data = reinterpret_cast<const std::uint32_t*>(dw.as<std::uint16_t>() +
                                                          as_size(elements) * as_size(iteration % copies));
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
              sum += static_cast<std::uint32_t>(level_bits(dtype, w_levels[as_size(2 * word)])) |
                     (static_cast<std::uint32_t>(level_bits(dtype, w_levels[as_size(2 * word + 1)])) << 16);
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
          const void* w = dw.as<std::uint16_t>() + as_size(elements) * as_size(iteration % copies);
          // Row-major W (m x k) is column-major k x m: y^T (m x batch) = W^T-op(k x m) . x (k x batch).
          check(cublas.gemm_ex(cublas.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(batch),
                               static_cast<int>(k), &one, w, cuda_type(dtype), static_cast<int>(k), dx.get(),
                               cuda_type(dtype), static_cast<int>(k), &zero, dy.get(), cuda_type(dtype),
                               static_cast<int>(m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
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
        const kernels::GemvArgs args{kernel,
                                     dtype == DType::bf16 ? kernels::StorageFormat::bf16 : kernels::StorageFormat::fp16,
                                     dtype == DType::bf16 ? kernels::StorageFormat::bf16 : kernels::StorageFormat::fp16,
                                     dw.get(),
                                     dx.get(),
                                     dy.get(),
                                     m,
                                     k,
                                     batch,
                                     ctx.device().sms};
        launch = [&, args](cudaStream_t s, int iteration) {
          kernels::GemvArgs a = args;
          a.w = dw.as<std::uint16_t>() + as_size(elements) * as_size(iteration % copies);
          return kernels::launch_gemv(a, s);
        };
      }
      const auto verify = [&]() -> std::string {
        ctx.poison(dy);
        check(launch(ctx.stream(), 0), "gemv");
        ctx.download(y.data(), dy, y.size() * 2);
        if (!reference) {
          reference = gemv_reference(w_levels, x_levels, m, k, batch, seed_of(seed, Stream::gemv_x, 1000 + batch));
        }
        return check_gemv(y, *reference, m, batch, dtype);
      };
      const TimingMode mode = c->variant == Variant::cublasdirect ? TimingMode::direct : TimingMode::graph;
      recorder.record(run_case(ctx, std::move(result), verify, launch, copies, mode));
    }
  }
}

void run_gemv(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
              Recorder& recorder, std::vector<std::string>& notes) {
  std::size_t i = 0;
  while (i < cases.size()) {
    std::size_t end = i;
    const auto same_matrix = [&](const Case* c) {
      return c->dtype == cases[i]->dtype && c->m == cases[i]->m && c->k == cases[i]->k;
    };
    while (end < cases.size() && same_matrix(cases[end])) ++end;
    const std::span<const Case* const> group = cases.subspan(i, end - i);
    i = end;
    if (ctx.health().lost) {
      record_setup_failure(recorder, group, sizes, Disposition::not_run, "the CUDA context was lost");
      continue;
    }
    // Results recorded before a set-up failure stay; the rest of the group gets the reason.
    const std::size_t before = recorder.count();
    try {
      run_gemv_matrix(ctx, group, sizes, seed, recorder, notes);
    } catch (const NotEnoughMemory& e) {
      record_setup_failure(recorder, group.subspan(recorder.count() - before), sizes, Disposition::not_run, e.what());
    } catch (const CudaError& e) {
      ctx.recover();
      record_setup_failure(recorder, group.subspan(recorder.count() - before), sizes, Disposition::failed,
                           fmt::format("set-up failed: {}", e.what()));
    }
  }
}

// ---- decode attention --------------------------------------------------------------------------

// One case: random bf16 qkv rows and K/V caches, the new token's k and v written into the last
// position (as the layer's kv_write stage does), checked against the fp32 reference, then timed
// with launches rotating through copies of the caches so that every launch reads them from HBM.
void run_decode_attention_case(Context& ctx, const Case& c, const Sizes& sizes, std::uint64_t seed,
                               Recorder& recorder) {
  const kernels::Half16 type = kernels::Half16::bf16;
  const AttentionShape shape = memory::decode_attention_shape(c);
  const kernels::HeadLayout layout{static_cast<int>(shape.heads), static_cast<int>(shape.kv_heads),
                                   static_cast<int>(shape.head_dim)};
  const int batch = static_cast<int>(shape.batch);
  const int context = static_cast<int>(shape.kv_seq);
  BenchmarkResult result = memory::make_result(c, sizes);
  if (const char* why = kernels::decode_attention_unsupported(layout, context)) {
    result.disposition = Disposition::not_supported;
    result.detail = why;
    recorder.record(std::move(result));
    return;
  }
  const std::int64_t qkv_elements = shape.batch * layout.qkv_width();
  const std::int64_t out_elements = shape.batch * shape.heads * shape.head_dim;
  const std::int64_t cache_elements = shape.batch * shape.kv_heads * shape.kv_seq * shape.head_dim;
  const int copies = memory::rotation_count(static_cast<std::int64_t>(result.cost.bytes()), sizes);
  // Fails as NotEnoughMemory (the case is not run) when the copies do not fit.
  DeviceBuffer k_cache = ctx.allocate(as_size(cache_elements) * 2 * as_size(copies));
  DeviceBuffer v_cache = ctx.allocate(as_size(cache_elements) * 2 * as_size(copies));
  DeviceBuffer qkv = ctx.allocate(as_size(qkv_elements) * 2);
  DeviceBuffer qkv_f32 = ctx.allocate(as_size(qkv_elements) * 4);
  DeviceBuffer out = ctx.allocate(as_size(out_elements) * 2);
  DeviceBuffer reference = ctx.allocate(as_size(out_elements) * 4);
  const kernels::DecodeAttentionPlan plan = kernels::decode_attention_plan(batch, layout, context, ctx.device().sms);
  DeviceBuffer workspace = ctx.allocate(plan.workspace_bytes);
  // Unit-variance queries, keys and values (uniform in +-sqrt(3)), as the layer's history.
  constexpr float unit = 1.7320508F;
  kernels::fill_uniform(type, qkv.get(), as_size(qkv_elements), seed_of(seed, Stream::attention_qkv), unit,
                        ctx.stream());
  kernels::fill_uniform(type, k_cache.get(), as_size(cache_elements) * as_size(copies),
                        seed_of(seed, Stream::attention_k), unit, ctx.stream());
  kernels::fill_uniform(type, v_cache.get(), as_size(cache_elements) * as_size(copies),
                        seed_of(seed, Stream::attention_v), unit, ctx.stream());
  // The new token's k and v into position context - 1 of every copy: each launch then attends
  // to the same keys as the reference, which takes key context - 1 from qkv.
  for (int copy = 0; copy < copies; ++copy) {
    const std::size_t offset = as_size(cache_elements) * as_size(copy);
    kernels::kv_write(type, qkv.get(), k_cache.as<std::uint16_t>() + offset, v_cache.as<std::uint16_t>() + offset,
                      batch, layout, context, context - 1, ctx.stream());
  }
  kernels::to_float(type, qkv.get(), qkv_f32.as<float>(), qkv_elements, ctx.stream());
  ctx.wait("decode attention inputs");

  const Launch launch = [&, batch, context, copies](cudaStream_t s, int iteration) {
    const std::size_t offset = as_size(cache_elements) * as_size(iteration % copies);
    kernels::decode_attention(type, qkv.get(), k_cache.as<std::uint16_t>() + offset,
                              v_cache.as<std::uint16_t>() + offset, out.get(), workspace.get(), batch, layout, context,
                              plan, s);
    return cudaGetLastError();
  };
  const auto verify = [&]() -> std::string {
    ctx.poison(out);
    check(launch(ctx.stream(), 0), "decode attention");
    kernels::decode_attention_reference(qkv_f32.as<float>(), type, k_cache.get(), v_cache.get(), reference.as<float>(),
                                        batch, layout, context, ctx.stream());
    ctx.wait("decode attention");
    std::vector<std::uint16_t> got_bits(as_size(out_elements));
    std::vector<float> want(as_size(out_elements));
    ctx.download(got_bits.data(), out, got_bits.size() * 2);
    ctx.download(want.data(), reference, want.size() * 4);
    std::vector<float> got(got_bits.size());
    std::transform(got_bits.begin(), got_bits.end(), got.begin(), testdata::bf16_bits_to_float);
    const ErrorNorm e = relative_error(got, want);
    const std::string what = fmt::format(
        "{} sequences x {} heads vs the fp32 reference: normwise error {:.2e} (tol {:.0e}), {} non-finite outputs; "
        "{} splits of {} key tiles",
        batch, layout.heads, e.error, kernels::attention_check_tolerance, e.nonfinite, plan.splits,
        plan.tiles_per_split);
    if (!(e.error <= kernels::attention_check_tolerance)) throw VerificationFailed(what);
    if (copies == 1) return what;
    return fmt::format(
        "{}; launches rotate through {} copies of the K/V caches ({:.0f} MB) so that every read "
        "comes from HBM",
        what, copies, static_cast<double>(cache_elements) * 4 * copies / 1e6);
  };
  recorder.record(run_case(ctx, std::move(result), verify, launch, copies));
}

void run_decode_attention(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                          Recorder& recorder) {
  for (const Case* c : cases) {
    guarded_group(ctx, recorder, std::span(&c, 1), sizes, [&] {
      if (ctx.health().lost) throw CudaError("the CUDA context was lost", cudaErrorUnknown);
      run_decode_attention_case(ctx, *c, sizes, seed, recorder);
    });
  }
}

// ---- cache levels ------------------------------------------------------------------------------

void run_hierarchy(Context& ctx, std::span<const Case* const> cases, const Sizes& sizes, std::uint64_t seed,
                   Recorder& recorder) {
  for (const Case* c : cases) {
    guarded_group(ctx, recorder, std::span(&c, 1), sizes, [&] {
      if (ctx.health().lost) throw CudaError("the CUDA context was lost", cudaErrorUnknown);
      const bool l2 = c->kernel == Kernel::l2_read;
      const std::int64_t bytes = l2 ? sizes.l2_blocks * sizes.l2_slice_bytes
                                    : static_cast<std::int64_t>(sizes.smem_blocks) * memory::smem_block_bytes;
      const std::int64_t words = bytes / 4;
      std::vector<std::uint32_t> data(as_size(words));
      const std::uint64_t sd = seed_of(seed, l2 ? Stream::l2 : Stream::smem);
      for (std::int64_t i = 0; i < words; ++i) data[as_size(i)] = testdata::bits32(sd, static_cast<std::uint64_t>(i));
      DeviceBuffer ddata = ctx.allocate(as_size(bytes));
      ctx.upload(ddata, data.data(), as_size(bytes));
      const int blocks = l2 ? sizes.l2_blocks : sizes.smem_blocks;
      DeviceBuffer partials = ctx.allocate(as_size(blocks) * 4);
      DeviceBuffer counter = ctx.allocate(sizeof(unsigned));
      DeviceBuffer result = ctx.allocate(4);
      check(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned), ctx.stream()), "cudaMemsetAsync");
      Launch launch;
      if (l2) {
        const kernels::L2ReadArgs args{ddata.get(),
                                       sizes.l2_slice_bytes,
                                       blocks,
                                       sizes.l2_passes,
                                       partials.as<std::uint32_t>(),
                                       counter.as<unsigned>(),
                                       result.as<std::uint32_t>()};
        launch = [args](cudaStream_t s, int) { return kernels::launch_l2_read(args, s); };
      } else {
        const kernels::SharedReadArgs args{ddata.get(), blocks, sizes.smem_rounds, partials.as<std::uint32_t>()};
        launch = [args](cudaStream_t s, int) { return kernels::launch_shared_read(args, s); };
      }
      const auto verify = [&]() -> std::string {
        if (l2) {
          ctx.poison(result);
          check(launch(ctx.stream(), 0), "L2 read");
          std::uint32_t got = 0;
          ctx.download(&got, result, 4);
          std::uint32_t sum = 0;
          for (std::uint32_t v : data) sum += v;
          const std::uint32_t want = sum * static_cast<std::uint32_t>(sizes.l2_passes);
          if (got != want) {
            throw VerificationFailed(
                fmt::format("sum of {} passes is {:#010x}, want {:#010x}", sizes.l2_passes, got, want));
          }
          return fmt::format("wrapping sum of {} passes over {} bytes matches", sizes.l2_passes, bytes);
        }
        ctx.poison(partials);
        check(launch(ctx.stream(), 0), "shared-memory read");
        std::vector<std::uint32_t> got(as_size(blocks));
        ctx.download(got.data(), partials, got.size() * 4);
        const std::int64_t block_words = memory::smem_block_bytes / 4;
        const auto sweeps = static_cast<std::uint32_t>(sizes.smem_rounds / 8);
        for (int b = 0; b < blocks; ++b) {
          std::uint32_t sum = 0;
          for (std::int64_t i = 0; i < block_words; ++i) sum += data[as_size(b * block_words + i)];
          if (got[as_size(b)] != sum * sweeps) {
            throw VerificationFailed(
                fmt::format("block {}: sum {:#010x}, want {:#010x}", b, got[as_size(b)], sum * sweeps));
          }
        }
        return fmt::format("per-block wrapping sums of {} blocks match", blocks);
      };
      recorder.record(run_case(ctx, memory::make_result(*c, sizes), verify, launch));
    });
  }
}

}  // namespace

void run_memory_suite(Context& ctx, std::span<const memory::Case* const> cases, bool quick, std::uint64_t seed,
                      Recorder& recorder, std::vector<std::string>& notes) {
  const Sizes sizes = memory::plan_sizes(ctx.device().l2_bytes, ctx.device().sms, quick);
  notes.push_back(fmt::format(
      "memory suite sizes: stream arrays {} MiB each, strided span {} MiB, random table {} MiB ({} accesses per "
      "launch, {} index sets), L2 buffer {:.1f} MiB, shared memory {} blocks x 32 KiB",
      sizes.stream_elements * 4 >> 20, sizes.strided_span_bytes >> 20, sizes.gather_table_elements * 4 >> 20,
      sizes.gather_accesses, sizes.gather_index_sets,
      static_cast<double>(sizes.l2_blocks * sizes.l2_slice_bytes) / (1 << 20), sizes.smem_blocks));
  std::vector<const Case*> stream;
  std::vector<const Case*> access;
  std::vector<const Case*> gemv;
  std::vector<const Case*> hierarchy;
  std::vector<const Case*> decode_attention;
  for (const Case* c : cases) {
    const std::string_view group = memory::group_of(*c);
    if (group == "stream") {
      stream.push_back(c);
    } else if (group == "access") {
      access.push_back(c);
    } else if (group == "gemv") {
      gemv.push_back(c);
    } else if (group == "decode_attention") {
      decode_attention.push_back(c);
    } else {
      hierarchy.push_back(c);
    }
  }
  run_stream(ctx, stream, sizes, seed, recorder);
  run_access(ctx, access, sizes, seed, recorder);
  run_gemv(ctx, gemv, sizes, seed, recorder, notes);
  run_decode_attention(ctx, decode_attention, sizes, seed, recorder);
  run_hierarchy(ctx, hierarchy, sizes, seed, recorder);
}

kernels::GemvKernel gemv_kernel_of(Variant v) {
  switch (v) {
    case Variant::stag: return kernels::GemvKernel::stag;
    case Variant::pipe: return kernels::GemvKernel::pipe;
    case Variant::pdl: return kernels::GemvKernel::pdl;
    case Variant::simt: return kernels::GemvKernel::simt;
    default: return kernels::GemvKernel::mma;
  }
}

}  // namespace roofline::bench::cuda
