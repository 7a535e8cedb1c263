// Runs the memory suite's cases (roofline/memory_suite.hpp): plans the sizes for this device and deals
// the cases out to their kernel families (memory_family.hpp), each of which builds inputs on the host
// from roofline/testdata.hpp, uploads them, checks each kernel's output against a host reference, and
// times it. Groups share their buffers; a group's set-up failure marks its cases.
#include "memory_runner.hpp"

#include <fmt/format.h>

#include "memory_family.hpp"
#include "roofline/bench/testdata.hpp"

namespace roofline::bench::cuda {

namespace memory_family {

std::uint64_t seed_of(std::uint64_t run_seed, Stream s, std::uint64_t sub) {
  return testdata::mix64(run_seed ^ (static_cast<std::uint64_t>(s) << 56) ^ (sub * 0x9E3779B97F4A7C15ULL));
}

void record_setup_failure(Recorder& recorder, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                          Disposition disposition, const std::string& reason) {
  for (const memory::Case* c : cases) {
    BenchmarkResult r = memory::make_result(*c, sizes);
    r.disposition = disposition;
    r.detail = reason;
    recorder.record(std::move(r));
  }
}

}  // namespace memory_family

using memory::Case;
using memory::Sizes;

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
  std::vector<const Case*> latent_attention;
  // By kernel, every enumerator named: a new kernel fails to compile here (-Wswitch) rather than
  // fall to another family's runner (the W8A8 GEMV's group once reached the hierarchy runner, which
  // timed its shared-memory probe under the GEMV's ids).
  for (const Case* c : cases) {
    switch (c->kernel) {
      case memory::Kernel::memcpy_d2d:
      case memory::Kernel::copy:
      case memory::Kernel::scale:
      case memory::Kernel::add:
      case memory::Kernel::triad:
      case memory::Kernel::dot: stream.push_back(c); break;
      case memory::Kernel::strided_read:
      case memory::Kernel::gather:
      case memory::Kernel::scatter: access.push_back(c); break;
      case memory::Kernel::gemv: gemv.push_back(c); break;
      case memory::Kernel::l2_read:
      case memory::Kernel::smem_read: hierarchy.push_back(c); break;
      case memory::Kernel::decode_attention: decode_attention.push_back(c); break;
      case memory::Kernel::latent_attention: latent_attention.push_back(c); break;
    }
  }
  memory_family::run_stream(ctx, stream, sizes, seed, recorder);
  memory_family::run_access(ctx, access, sizes, seed, recorder);
  memory_family::run_gemv(ctx, gemv, sizes, seed, recorder, notes);
  memory_family::run_decode_attention(ctx, decode_attention, sizes, seed, recorder);
  memory_family::run_latent_attention(ctx, latent_attention, sizes, seed, recorder);
  memory_family::run_hierarchy(ctx, hierarchy, sizes, seed, recorder);
}

}  // namespace roofline::bench::cuda
