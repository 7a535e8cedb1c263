// The memory suite's cache levels: repeated passes over an L2-resident buffer and over shared
// memory, checked by their wrapping sums.
#include <fmt/format.h>

#include <vector>

#include "kernels/hierarchy.hpp"
#include "memory_family.hpp"
#include "roofline/bench/testdata.hpp"

namespace roofline::bench::cuda::memory_family {

using memory::Case;
using memory::Kernel;
using memory::Sizes;

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

}  // namespace roofline::bench::cuda::memory_family
