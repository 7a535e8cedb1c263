#include "roofline/bench/collectives_suite.hpp"

#include <fmt/format.h>

#include "roofline/llm/deployment.hpp"
#include "roofline/model/collective_tables.hpp"

namespace roofline::bench::collectives {
namespace {

using C = ColumnOf<BenchmarkResult>;
namespace col = columns;

std::optional<Collective> op_of(const BenchmarkResult& r) {
  const Cell op = r.parameter("op");
  if (const auto* name = std::get_if<std::string>(&op)) return collective_from_name(*name);
  return std::nullopt;
}

std::optional<int> ranks_of(const BenchmarkResult& r) {
  const Cell ranks = r.parameter("ranks");
  if (const auto* n = std::get_if<std::int64_t>(&ranks)) return static_cast<int>(*n);
  return std::nullopt;
}

// bytes / median time and x bus_factor, in GB/s (decimal).
Cell algbw_gbps(const BenchmarkResult& r) {
  if (!r.timing || r.timing->seconds.median <= 0) return Cell{};
  return Cell{algorithm_bandwidth(r.cost.bytes(), r.timing->seconds.median) / 1e9};
}
Cell busbw_gbps(const BenchmarkResult& r) {
  const auto op = op_of(r);
  const auto ranks = ranks_of(r);
  if (!r.timing || r.timing->seconds.median <= 0 || !op || !ranks) return Cell{};
  return Cell{bus_bandwidth(*op, *ranks, r.cost.bytes(), r.timing->seconds.median) / 1e9};
}
// (model - measured) / measured.
Cell model_error_pct(const BenchmarkResult& r) {
  const Cell model = r.parameter("model_us");
  const auto* us = std::get_if<double>(&model);
  if (!r.timing || r.timing->seconds.median <= 0 || us == nullptr) return Cell{};
  return Cell{(*us * 1e-6 / r.timing->seconds.median - 1.0) * 100.0};
}

constexpr std::array<C, 19> result_columns{{
    col::id,
    col::implementation,
    col::status,
    {{"op", "op", 0}, &param<"op">},
    {{"dtype", "dtype", 0}, &param<"dtype">},
    {{"ranks", "GPUs", 0}, &param<"ranks">},
    {{"size", "size", 0}, &param<"size">},
    col::model_bytes,
    {{"count", "elements", 0}, &param<"count">},
    col::median_us,
    col::min_us,
    col::max_us,
    col::spread_pct,
    col::samples,
    {{"algbw_gbps", "algbw GB/s", 2}, &algbw_gbps},
    {{"busbw_gbps", "busbw GB/s", 2}, &busbw_gbps},
    {{"model_us", "model [us]", 2}, &param<"model_us">},
    {{"model_error_pct", "model err %", 1}, &model_error_pct},
    col::detail,
}};

const std::array<GroupLayout, 3> group_layouts{{
    {"all_reduce",
     "All-reduce (fp32 sum, out of place): bytes = the buffer every rank holds; busbw = algbw x 2(n-1)/n; model = ring "
     "over the hardware file's scale-up link",
     result_columns},
    {"all_gather",
     "All-gather (fp32, out of place): bytes = the gathered output (n x each rank's input); busbw = algbw x (n-1)/n",
     result_columns},
    {"reduce_scatter",
     "Reduce-scatter (fp32 sum, out of place): bytes = each rank's input (n x its output); busbw = algbw x (n-1)/n",
     result_columns},
}};

std::vector<CaseInfo> list_cases() {
  std::vector<CaseInfo> list;
  for (const Case& c : cases) {
    list.push_back({"collectives", std::string(name_of(c.op)), case_id(c), "nccl", c.quick});
  }
  return list;
}

std::string compact_size(std::int64_t bytes) {
  std::string text = size_text(static_cast<double>(bytes));
  std::erase(text, ' ');
  return text;
}

BasisOrReason recorded_basis(const RecordedResult& /*recorded*/) {
  return NoBasis{"a collective: compared with the ring model under collectives"};
}

}  // namespace

std::string case_id(const Case& c) {
  std::string op(name_of(c.op));
  std::erase(op, '_');
  return fmt::format("{}.{}.{}", op, dtype, compact_size(c.bytes));
}

Buffers buffers(Collective op, std::int64_t bytes, int ranks) {
  Buffers b;
  const std::int64_t n = std::max(ranks, 1);
  const std::int64_t count = bytes / element_bytes / n * n;
  b.bytes = count * element_bytes;
  b.chunk_elements = count / n;
  b.send_elements = op == Collective::all_gather ? b.chunk_elements : count;
  b.recv_elements = op == Collective::reduce_scatter ? b.chunk_elements : count;
  return b;
}

LinkSpec model_link(const GpuSpec& gpu) {
  return scale_up_link(gpu, default_scale_up_latency_us * 1e-6);
}

BenchmarkResult make_result(const Case& c, int ranks, const std::optional<LinkSpec>& link) {
  const Buffers b = buffers(c.op, c.bytes, ranks);
  BenchmarkResult r;
  r.suite = "collectives";
  r.group = std::string(name_of(c.op));
  r.id = case_id(c);
  r.implementation = "nccl";
  r.cost = OpCost{0.0, static_cast<double>(b.bytes), 0.0};
  r.parameters = {{"op", Cell{std::string(name_of(c.op))}},
                  {"dtype", Cell{std::string(dtype)}},
                  {"ranks", Cell{std::int64_t{ranks}}},
                  {"size", Cell{compact_size(c.bytes)}},
                  {"count", Cell{b.send_elements > b.recv_elements ? b.send_elements : b.recv_elements}}};
  if (link && ranks > 1 && b.bytes > 0) {
    r.parameters.push_back({"model_us", Cell{ring_time(c.op, static_cast<double>(b.bytes), ranks, *link) * 1e6}});
  }
  return r;
}

const SuiteInfo& suite() {
  static const SuiteInfo info{"collectives",
                              "NCCL all-reduce, all-gather and reduce-scatter across the GPUs of this host (or one "
                              "GPU per MPI rank), 8 B to 8 GiB: algorithm and bus bandwidth next to the ring model",
                              group_layouts,
                              std::span<const Target>{},
                              &list_cases,
                              nullptr,
                              &recorded_basis};
  return info;
}

}  // namespace roofline::bench::collectives
