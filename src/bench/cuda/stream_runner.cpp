// The memory suite's streaming kernels (copy, scale, add, triad, dot, and cudaMemcpy as the
// ceiling): host arrays from roofline/testdata.hpp, bit-exact or 1e-6 checks, rotated copies so that
// every read comes from HBM.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>

#include "kernels/stream.hpp"
#include "memory_family.hpp"
#include "roofline/bench/testdata.hpp"

namespace roofline::bench::cuda::memory_family {
namespace {

using memory::Case;
using memory::Kernel;
using memory::Sizes;
using memory::Variant;

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

}  // namespace

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

}  // namespace roofline::bench::cuda::memory_family
