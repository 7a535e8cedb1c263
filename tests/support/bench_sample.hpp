#pragma once

// A synthetic benchmark run with every disposition and group of every suite, built through the
// real case tables and result types: the unit tests check its report, and bench_report_sample
// prints it so that the schema test validates a bench report on machines without a GPU.

#include <stdexcept>

#include "roofline/bench/bench.hpp"
#include "roofline/bench/collectives_suite.hpp"
#include "roofline/bench/compute_suite.hpp"
#include "roofline/bench/layer_suite.hpp"
#include "roofline/bench/memory_suite.hpp"

namespace roofline::bench::sample {

inline constexpr std::int64_t h200_l2_bytes = 62914560;  // 60 MiB, as the H200's driver reports
inline constexpr int h200_sms = 132;

inline const memory::Case& find_case(std::string_view id) {
  for (const memory::Case& c : memory::cases) {
    if (memory::case_id(c) == id) return c;
  }
  throw std::invalid_argument("no case " + std::string(id));
}

inline BenchmarkResult timed(std::string_view id, double median_s, double min_s, double max_s) {
  BenchmarkResult r = memory::make_result(find_case(id), memory::plan_sizes(h200_l2_bytes, h200_sms, false));
  r.disposition = Disposition::passed;
  r.detail = "synthetic";
  r.timing = Timing{Summary{30, median_s, min_s, max_s, median_s}, 4, true};
  return r;
}

inline BenchmarkResult untimed(std::string_view id, Disposition d, std::string detail) {
  BenchmarkResult r = memory::make_result(find_case(id), memory::plan_sizes(h200_l2_bytes, h200_sms, false));
  r.disposition = d;
  r.detail = std::move(detail);
  return r;
}

// A compute result by id (GEMM or attention), not yet run.
inline BenchmarkResult compute_result(std::string_view id) {
  for (const compute::GemmCase& c : compute::gemm_cases) {
    if (compute::case_id(c) == id) return compute::make_result(c);
  }
  for (const compute::AttentionCase& c : compute::attention_cases) {
    if (compute::case_id(c) == id) return compute::make_result(c);
  }
  for (const compute::GroupedGemmCase& c : compute::grouped_gemm_cases()) {
    if (compute::case_id(c) == id) return compute::make_result(c);
  }
  throw std::invalid_argument("no compute case " + std::string(id));
}

inline BenchmarkResult with_timing(BenchmarkResult r, double median_s) {
  r.disposition = Disposition::passed;
  r.detail = "synthetic";
  r.timing = Timing{Summary{30, median_s, median_s * 0.99, median_s * 1.02, median_s}, 1, true};
  return r;
}

inline BenchmarkResult with_disposition(BenchmarkResult r, Disposition d, std::string detail) {
  r.disposition = d;
  r.detail = std::move(detail);
  return r;
}

// The decode layer of the sample: LLaMA-3-70B, batch 1, context 4096, the project's kernels.
inline constexpr layer::Case sample_layer{layer::Phase::decode, 1, 1, 4096, layer::Linear::roofline, true,
                                          layer::bf16_layer};

// The layer replayed in 450 us; stage i (0-based) took (i + 1) x 10 us inside it, 10 stages:
// 550 us in all, 700 us the whole direct pass.
inline std::vector<BenchmarkResult> sample_layer_results() {
  std::vector<BenchmarkResult> results = layer::make_results(sample_layer);
  results[0] = with_timing(results[0], 450e-6);
  double sum = 0;
  for (std::size_t i = 1; i < results.size(); ++i) sum += static_cast<double>(i) * 10e-6;
  for (std::size_t i = 1; i < results.size(); ++i) {
    const double median = static_cast<double>(i) * 10e-6;
    results[i] = with_timing(results[i], median);
    results[i].timing->graph = false;
    results[i].parameters.push_back({"share_pct", Cell{median / sum * 100}});
  }
  results[0].parameters.push_back({"direct_us", Cell{700.0}});
  results[0].parameters.push_back({"stages_sum_us", Cell{sum * 1e6}});
  return results;
}

inline BenchRun sample_run() {
  BenchRun run;
  run.device.name = "NVIDIA H200";
  run.device.pci_bus_id = "00000000:19:00.0";
  run.device.compute_major = 9;
  run.device.compute_minor = 0;
  run.device.sms = h200_sms;
  run.device.sm_clock_max_mhz = 1980;
  run.device.memory_clock_max_mhz = 3201;
  run.device.memory_bus_bits = 6016;
  run.device.l2_bytes = h200_l2_bytes;
  run.device.memory_bytes = 150754820096;
  run.device.smem_per_sm_bytes = 233472;
  run.device.ecc = true;
  run.device.driver_version = 13000;
  run.device.runtime_version = 13000;
  run.device.cublas_version = 130000;
  run.device.sm_clock_start_mhz = 1980;
  run.hardware_id = "h200-sxm";
  run.hardware_origin = "bundled:hardware/h200-sxm.json";
  run.hardware_detail = "'NVIDIA H200' matches h200-sxm";
  run.hardware_bandwidth_tbps = 4.8;
  run.started_utc = "2026-11-30T12:00:00Z";
  run.duration_s = 95.5;
  run.seed = 42;
  run.suites = {"memory", "compute", "layer"};
  run.policy = timing_policy(false, std::nullopt);
  // memcpy: 2 GiB moved in 0.5 ms = 4.295 TB/s; the copy kernel 1% slower; triad failed.
  run.results.push_back(timed("memcpy.d2d", 0.0005, 0.00049, 0.00052));
  run.results.push_back(timed("stream.copy.16B.tile", 0.000505, 0.0005, 0.00051));
  run.results.push_back(untimed("stream.triad.16B.tile", Disposition::failed, "3 of 268435456 elements wrong"));
  // The 64 KiB copy of the size ladder: 128 KiB moved in 5 us (its fixed cost, not the bandwidth).
  run.results.push_back(timed("stream.copy.16B.tile.64KiB", 5e-6, 4.8e-6, 5.5e-6));
  run.results.push_back(timed("access.strided.s8", 0.0004, 0.0004, 0.0004));
  run.results.push_back(timed("access.gather", 0.0001, 0.0001, 0.00011));
  run.results.push_back(timed("gemv.bf16.8192x8192.b1.mma", 0.000037, 0.000036, 0.000038));
  run.results.push_back(timed("gemv.bf16.8192x8192.b1.cublas", 0.000044, 0.000043, 0.000046));
  run.results.push_back(untimed("gemv.bf16.8192x8192.b2.simt", Disposition::not_supported, "synthetic reason"));
  run.results.push_back(untimed("gemv.bf16.8192x8192.b4.simt", Disposition::not_run, "needs 2.00 GiB"));
  // Decode attention at batch 1 over 2048 positions (8.4 MB of K/V) in 12 us.
  run.results.push_back(timed("attention.decode.bf16.b1.ctx2048.flashdecode", 12e-6, 11.8e-6, 12.5e-6));
  // The same over an fp8 cache (4.2 MB of K/V) in 7 us; fp8 W 8192^2 (67 MB) at batch 1 in 17 us.
  run.results.push_back(timed("attention.decode.bf16.kvfp8_e4m3.b1.ctx2048.flashdecode", 7e-6, 6.9e-6, 7.4e-6));
  run.results.push_back(timed("gemv.bf16.wfp8_e4m3.8192x8192.b1.stag", 17e-6, 16.8e-6, 17.5e-6));
  // W8A8 (fp8 W and x, bf16 y) at 8192^2 batch 16 in 19 us.
  run.results.push_back(timed("gemv.fp8_e4m3.8192x8192.b16.mma", 19e-6, 18.8e-6, 19.6e-6));
  run.results.push_back(timed("hierarchy.l2.read", 0.0001, 0.0001, 0.0001));
  // Compute: probes at 900 and 60 TFLOP/s (9e12 and 6e11 FLOPs in 10 ms); GEMM 8192^3 bf16
  // (2 x 8192^3 = 1.0995e12 FLOPs): cuBLAS 1.4 ms, wgmma 1.7 ms, naive 1.2 s; attention at the
  // target shape: standard 6.2 ms, flash_wgmma 1.35 ms, flash_w8r16 failed; standard at N = 32768
  // does not fit.
  run.results.push_back(
      with_timing(compute::make_result(compute::PeakImpl::wgmma_bf16, OpCost{9e12, 41984, 8650752}), 0.01));
  run.results.push_back(
      with_timing(compute::make_result(compute::PeakImpl::fma_fp32, OpCost{6e11, 8200, 1081344}), 0.01));
  run.results.push_back(with_timing(compute_result("gemm.bf16.8192x8192x8192.naive"), 1.2));
  run.results.push_back(with_timing(compute_result("gemm.bf16.8192x8192x8192.wgmma"), 1.7e-3));
  run.results.push_back(with_timing(compute_result("gemm.bf16.8192x8192x8192.cublas"), 1.4e-3));
  // Grouped GEMM: Mixtral 8x7B's gate_up experts at 16 tokens each (2 x 128 x 28672 x 4096 =
  // 3.0065e10 FLOPs, 1.89 GB of weights: memory-bound): wgmma 520 us, cuBLAS (strided batched) 480 us.
  run.results.push_back(with_timing(compute_result("gemm.grouped.bf16.e8.t16.uniform.128x28672x4096.wgmma"), 520e-6));
  run.results.push_back(with_timing(compute_result("gemm.grouped.bf16.e8.t16.uniform.128x28672x4096.cublas"), 480e-6));
  run.results.push_back(with_timing(compute_result("attn.bf16.causal.d128.b4h32kv32.n4096.standard"), 6.2e-3));
  run.results.push_back(with_disposition(compute_result("attn.bf16.causal.d128.b4h32kv32.n4096.flashw8r16"),
                                         Disposition::failed, "synthetic failure"));
  run.results.push_back(with_timing(compute_result("attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma"), 1.35e-3));
  run.results.push_back(with_disposition(compute_result("attn.bf16.causal.d128.b4h32kv32.n32768.standard"),
                                         Disposition::not_supported, "does not fit: S and P need 256.0 GiB"));
  for (BenchmarkResult& r : sample_layer_results()) run.results.push_back(std::move(r));
  run.notes = {"synthetic run"};
  relate(run.results);
  return run;
}

// A collectives run over 2 H200s: every op at 1 KiB, 1 MiB and 1 GiB, taking 10 us + S / 300 GB/s
// (all-reduce twice that); the 8 GiB all-gather did not fit, the 8 B reduce-scatter failed.
inline BenchRun sample_collectives_run() {
  BenchRun run = sample_run();
  run.suites = {"collectives"};
  run.results.clear();
  run.notes = {"synthetic run", "collectives: NCCL 2.28.9 over 2 ranks (one process driving every GPU of this host)"};
  const LinkSpec link = collectives::model_link(HardwareRegistry::bundled_only().find("h200"));
  for (const collectives::Case& c : collectives::cases) {
    BenchmarkResult r = collectives::make_result(c, 2, link);
    const auto bytes = static_cast<double>(c.bytes);
    if (c.bytes == 1024 || c.bytes == 1048576 || c.bytes == 1073741824) {
      const double t = (c.op == Collective::all_reduce ? 2.0 : 1.0) * (10e-6 + bytes / 300e9);
      run.results.push_back(with_timing(std::move(r), t));
    } else if (c.op == Collective::all_gather && c.bytes == (std::int64_t{8} << 30)) {
      run.results.push_back(with_disposition(std::move(r), Disposition::not_run, "needs 12 GiB per GPU"));
    } else if (c.op == Collective::reduce_scatter && c.bytes == 8) {
      run.results.push_back(with_disposition(std::move(r), Disposition::failed, "1 of 2 output elements wrong"));
    }
  }
  return run;
}

}  // namespace roofline::bench::sample
