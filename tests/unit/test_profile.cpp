// The Nsight Compute reader on the real output committed in tests/data/ncu/ (ncu 2025.3.1 on the
// H200: a PyTorch bf16 GEMM 4096^2, a softmax, an add and their helper kernels).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.hpp"
#include "commands/profile.hpp"
#include "fixture.hpp"
#include "roofline/core/error.hpp"
#include "roofline/profile/ncu.hpp"
#include "roofline/profile/placement.hpp"

using namespace roofline;
using Catch::Matchers::Contains;

namespace {

std::string sample(const char* name) {
  std::ifstream in(std::filesystem::path(ROOFLINE_SOURCE_DIR) / "tests/data/ncu" / name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::vector<ncu::Kernel>& sample_kernels() {
  static const std::vector<ncu::Kernel> k = ncu::kernels(ncu::parse_raw_csv(sample("ncu-raw.csv"), "raw"), "raw");
  return k;
}

}  // namespace

TEST_CASE("ncu raw CSV: the table after the program's output, units under the header") {
  const ncu::RawCsv csv = ncu::parse_raw_csv(sample("ncu-raw.csv"), "raw");
  CHECK(csv.header.size() == 1313);
  CHECK(csv.units.size() == 1313);
  CHECK(csv.rows.size() == 12);
  // Four lines before the table: ncu's notes and the program's own print.
  REQUIRE(csv.other_lines.size() >= 4);
  CHECK_THAT(csv.other_lines[0], Contains("==WARNING=="));
}

TEST_CASE("ncu: the bf16 GEMM 4096^2 kernel, by hand") {
  const ncu::Kernel& gemm = sample_kernels().at(2);
  CHECK(gemm.id == 2);
  CHECK(gemm.short_name == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  CHECK(gemm.device == "NVIDIA H200");
  CHECK(gemm.grid == "(2, 66, 1)");
  // gpu__time_duration.sum = 175,712 ns.
  CHECK(gemm.duration_s == Approx(175.712e-6));
  // Tensor-core operations from bf16 sources: 2 x 4096^3 = 137,438,953,472, the GEMM's FLOPs exactly.
  REQUIRE(gemm.tensor.size() == 1);
  CHECK(gemm.tensor[0].source == "bf16_dst_fp32");
  CHECK(gemm.tensor[0].peak == PeakClass::bf16);
  CHECK(gemm.tensor_flops() == 2.0 * 4096 * 4096 * 4096);
  CHECK(gemm.fp32_flops == 0);
  CHECK(gemm.flops() == 2.0 * 4096 * 4096 * 4096);
  // 2^37 FLOPs / 175.712 us = 782.18 TFLOP/s.
  CHECK(gemm.flops() / gemm.duration_s == Approx(782.183e12).epsilon(1e-5));
  // DRAM: 1,001,407,393,917.32 B/s x 175.712 us = 175,959,296 B; intensity 2^37 / that = 781.08.
  REQUIRE(gemm.dram_bytes);
  CHECK(*gemm.dram_bytes == Approx(175959296.0).epsilon(1e-9));
  CHECK(gemm.flops() / *gemm.dram_bytes == Approx(781.084).epsilon(1e-5));
  // L2 to the SMs: 4,835,232,198,142.42 B/s x 175.712 us = 849.6 MB.
  CHECK(*gemm.l2_bytes == Approx(849608320.0).epsilon(1e-6));
}

TEST_CASE("ncu: vector FLOPs from instruction counts per cycle") {
  // The bf16 add d = a + b of 4096^2 elements: PyTorch computes a + alpha b as one fp32 FMA per
  // element, 2 FLOPs: 2 x 16,777,216 = 33,554,432. From the counters: 2 x 363.93 ffma per cycle x
  // 1,965,389,097.32 cycles/s x 23.456 us = 33,554,489 (the per-cycle rate is printed to 2 decimals).
  const ncu::Kernel& add = sample_kernels().at(5);
  CHECK(add.short_name == "vectorized_elementwise_kernel");
  CHECK(add.fp32_flops == Approx(33554432.0).epsilon(1e-5));
  CHECK(add.tensor.empty());
  // A copy does no arithmetic.
  CHECK(sample_kernels().at(3).flops() == 0);
  CHECK(sample_kernels().at(3).short_name == "unrolled_elementwise_kernel");
  CHECK(sample_kernels().at(4).short_name == "cunn_SoftMaxForwardReg");
}

TEST_CASE("ncu: short kernel names") {
  CHECK(ncu::short_kernel_name("void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, "
                               "void (float)>(long, T3)") == "distribution_elementwise_grid_stride_kernel");
  CHECK(ncu::short_kernel_name("gemv_mma_kernel") == "gemv_mma_kernel");
  CHECK(ncu::short_kernel_name("void roofline::flash<128>(const bf16*, int)") == "flash");
}

TEST_CASE("ncu: what is not a raw table is bad input naming the problem") {
  CHECK_THROWS_WITH(ncu::parse_raw_csv("hello\nworld\n", "x.csv"), Contains("x.csv: no Nsight Compute metric table"));
  // The details page has a "Kernel Name" header too, one metric per line.
  CHECK_THROWS_WITH(ncu::parse_raw_csv(sample("ncu-details.csv"), "details.csv"),
                    Contains("details.csv: this is Nsight Compute's details page"));
  // A raw table without the time the roofline needs.
  const std::string no_time = "\"ID\",\"Kernel Name\",\"x\"\n\"\",\"\",\"\"\n\"0\",\"k\",\"1\"\n";
  CHECK_THROWS_WITH(ncu::kernels(ncu::parse_raw_csv(no_time, "t.csv"), "t.csv"),
                    Contains("t.csv: the ncu table has no column gpu__time_duration.sum"));
  CHECK_THROWS_WITH(ncu::parse_raw_csv("\"ID\",\"Kernel Name\",\"x\"\n\"\",\"\",\"ns\"\n\"0\",\"k\"\n", "short.csv"),
                    Contains("short.csv: line 3: 2 fields where the header has 3"));
  const std::string bad_number =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"1x\"\n";
  CHECK_THROWS_WITH(ncu::kernels(ncu::parse_raw_csv(bad_number, "n.csv"), "n.csv"), Contains("not a number"));
  const std::string bad_unit =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"fortnight\"\n\"0\",\"k\",\"1\"\n";
  CHECK_THROWS_WITH(ncu::kernels(ncu::parse_raw_csv(bad_unit, "u.csv"), "u.csv"), Contains("'fortnight'"));
  // Units with an SI prefix convert: 2 usecond = 2e-6 s, 3 Gbyte/second over it = 6000 B.
  const std::string scaled =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum.per_second\"\n"
      "\"\",\"\",\"usecond\",\"Gbyte/second\"\n\"0\",\"k\",\"2\",\"3\"\n";
  const auto k = ncu::kernels(ncu::parse_raw_csv(scaled, "s.csv"), "s.csv");
  CHECK(k.at(0).duration_s == Approx(2e-6));
  CHECK(*k.at(0).dram_bytes == Approx(6000));
}

TEST_CASE("profile report: bound and % of the roof on the H200's hardware file") {
  const HardwareRegistry& registry = fixture::gpus();
  cli::ProfileOptions options;
  options.from_csv = "raw";
  options.common.format = "json";
  const auto json = to_json(cli::profile_report(options, sample_kernels(), registry.find("h200"), "raw"));
  CHECK(json.at("schema") == "roofline.profile.v1");
  const auto& gemm = json.at("results").at("kernels").at(2);
  CHECK(gemm.at("pipe") == "tensor bf16_dst_fp32");
  CHECK(gemm.at("peak_class") == "bf16");
  // AI 781 FLOP/B is above the H200 bf16 ridge (989.4 / 4.8 = 206): compute-bound, and 782.18 of
  // 989.4 TFLOP/s is 79.06% of the roof.
  CHECK(gemm.at("bound") == "compute");
  CHECK(gemm.at("roof_pct").get<double>() == Approx(79.056).epsilon(1e-4));
  // The copy kernel does no FLOPs: 1.555 TB/s of DRAM traffic is 32.4% of 4.8 TB/s.
  const auto& copy = json.at("results").at("kernels").at(3);
  CHECK(copy.at("pipe") == "none");
  CHECK(copy.at("bound") == "memory");
  CHECK(copy.at("roof_pct").get<double>() == Approx(1555.400660066 / 4800 * 100).epsilon(1e-6));
  // The bf16 add: 0.39 FLOP/B, far below the fp32 ridge (67 / 4.8 = 14): memory-bound at 76.4%.
  const auto& add = json.at("results").at("kernels").at(5);
  CHECK(add.at("bound") == "memory");
  CHECK(add.at("roof_pct").get<double>() == Approx(3666.139154161 / 4800 * 100).epsilon(1e-6));
  CHECK(json.at("results").at("tensor_ops").size() == 1);

  const std::string svg = cli::profile_chart(sample_kernels(), registry.find("h200"));
  CHECK_THAT(svg, Contains("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"));
  CHECK_THAT(svg, Contains("reduce_kernel #8"));  // repeated names are told apart by their ID
}

TEST_CASE("profile: the ncu command line") {
  cli::ProfileOptions options;
  options.kernel = "gemv";
  options.launch_count = 3;
  const std::vector<std::string> args = cli::ncu_arguments(options);
  const auto has = [&](const std::string& a, const std::string& b) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == a && args[i + 1] == b) return true;
    }
    return false;
  };
  CHECK(has("--clock-control", "none"));
  CHECK(has("--page", "raw"));
  CHECK(has("--print-units", "base"));
  CHECK(has("--section", "SpeedOfLight_HierarchicalTensorRooflineChart"));
  CHECK(has("--kernel-name", "regex:gemv"));
  CHECK(has("--launch-count", "3"));
}

TEST_CASE("placement: the GEMM on the H200's roofs, bound by the bf16 tensor peak") {
  const Roofs roofs = Roofs::of(fixture::gpus().find("h200"));
  const ncu::Placement gemm = ncu::place(sample_kernels().at(2), roofs);
  CHECK(gemm.pipe == "tensor bf16_dst_fp32");
  CHECK(gemm.peak_class == PeakClass::bf16);
  CHECK(*gemm.peak == Approx(989.4e12));
  CHECK(gemm.bandwidth == Approx(4.8e12));
  // AI 781.08 FLOP/B is above the ridge 989.4 / 4.8 = 206: compute-bound at the peak, and
  // 782.18 TFLOP/s is 79.06% of it.
  CHECK(*gemm.intensity == Approx(781.084).epsilon(1e-5));
  CHECK(gemm.bound == Bound::compute);
  CHECK(*gemm.attainable == Approx(989.4e12));
  CHECK(*gemm.roof_fraction == Approx(0.79056).epsilon(1e-4));
  CHECK(gemm.note.empty());
}

TEST_CASE("placement: memory-bound, missing peaks and kernels without FLOPs, by hand") {
  Roofs roofs;
  roofs.gpu_id = "test-gpu";
  roofs.bandwidth = 5e12;
  roofs.peaks[static_cast<std::size_t>(PeakClass::fp32)] = 10e12;
  ncu::Kernel k;
  k.duration_s = 1e-3;
  k.fp32_flops = 1e9;
  k.dram_bytes = 4e9;
  // 1e9 FLOPs over 4e9 bytes: AI 0.25, attainable min(10, 0.25 x 5 = 1.25) TFLOP/s, memory-bound;
  // 1e9 FLOPs in 1 ms = 1 TFLOP/s is 80% of it.
  const ncu::Placement p = ncu::place(k, roofs);
  CHECK(p.pipe == "fp32");
  CHECK(p.bound == Bound::memory);
  CHECK(*p.attainable == Approx(1.25e12));
  CHECK(*p.roof_fraction == Approx(0.8));

  // Without an fp32 peak only the memory roof applies: the same 1.25 TFLOP/s.
  Roofs no_peak = roofs;
  no_peak.peaks = {};
  const ncu::Placement memory_only = ncu::place(k, no_peak);
  CHECK_FALSE(memory_only.peak);
  CHECK(memory_only.bound == Bound::memory);
  CHECK(*memory_only.attainable == Approx(1.25e12));
  CHECK(memory_only.note == "test-gpu states no fp32 peak: memory roof only");

  // No FLOPs: 4e9 B in 1 ms = 4 TB/s is 80% of the 5 TB/s roof.
  ncu::Kernel copy = k;
  copy.fp32_flops = 0;
  const ncu::Placement c = ncu::place(copy, roofs);
  CHECK(c.pipe == "none");
  CHECK_FALSE(c.intensity);
  CHECK(*c.roof_fraction == Approx(0.8));

  // Repeated names are told apart by their ID.
  ncu::Kernel a = k;
  a.short_name = "reduce";
  a.id = 3;
  ncu::Kernel b = a;
  b.id = 8;
  ncu::Kernel other = k;
  other.short_name = "gemm";
  const std::vector<ncu::Placement> all = ncu::place_all({a, b, other}, roofs);
  CHECK(all[0].label == "reduce #3");
  CHECK(all[1].label == "reduce #8");
  CHECK(all[2].label == "gemm");
}
