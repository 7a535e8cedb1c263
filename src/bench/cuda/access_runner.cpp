// The memory suite's access patterns: strided reads (one sector further each launch) and random
// gather and scatter over a table, checked word by word on the host.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>

#include "kernels/access.hpp"
#include "memory_family.hpp"
#include "roofline/bench/testdata.hpp"

namespace roofline::bench::cuda::memory_family {
namespace {

using memory::Case;
using memory::Kernel;
using memory::Sizes;
using memory::Variant;

int log2_exact(std::int64_t n) {
  return std::countr_zero(static_cast<std::uint64_t>(n));
}

}  // namespace

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

}  // namespace roofline::bench::cuda::memory_family
