#pragma once

// What the memory suite's kernel families share: one file each runs a family's cases
// (stream_runner.cpp, access_runner.cpp, gemv_runner.cpp, decode_attention_runner.cpp,
// latent_attention_runner.cpp, hierarchy_runner.cpp); memory_runner.cpp plans the sizes and deals
// the cases out. Here: the seeds of the input streams and how a set-up failure becomes the
// disposition of a group's cases.

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "roofline/bench/memory_suite.hpp"
#include "runner_support.hpp"

namespace roofline::bench::cuda {

namespace memory_family {

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
[[nodiscard]] std::uint64_t seed_of(std::uint64_t run_seed, Stream s, std::uint64_t sub = 0);

// Marks every case of a group whose set-up failed.
void record_setup_failure(Recorder& recorder, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                          Disposition disposition, const std::string& reason);

// Runs `body`; a failure to set the group up becomes the disposition of all its cases.
template <typename Body>
void guarded_group(Context& ctx, Recorder& recorder, std::span<const memory::Case* const> cases,
                   const memory::Sizes& sizes, Body&& body) {
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

// Runs run(case) for each case on its own (guarded_group of one): a case whose set-up fails is
// that case's disposition, and a lost CUDA context fails the cases after it without running them.
template <typename RunCase>
void run_each_case(Context& ctx, Recorder& recorder, std::span<const memory::Case* const> cases,
                   const memory::Sizes& sizes, RunCase&& run) {
  for (const memory::Case* c : cases) {
    guarded_group(ctx, recorder, std::span(&c, 1), sizes, [&] {
      if (ctx.health().lost) throw CudaError("the CUDA context was lost", cudaErrorUnknown);
      run(*c);
    });
  }
}

// The families, each over its cases in table order.
void run_stream(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                std::uint64_t seed, Recorder& recorder);
void run_access(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                std::uint64_t seed, Recorder& recorder);
void run_gemv(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes, std::uint64_t seed,
              Recorder& recorder, std::vector<std::string>& notes);
void run_decode_attention(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                          std::uint64_t seed, Recorder& recorder);
void run_latent_attention(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                          std::uint64_t seed, Recorder& recorder);
void run_hierarchy(Context& ctx, std::span<const memory::Case* const> cases, const memory::Sizes& sizes,
                   std::uint64_t seed, Recorder& recorder);

}  // namespace memory_family
}  // namespace roofline::bench::cuda
