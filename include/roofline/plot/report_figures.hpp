#pragma once

// The charts of a report, drawn from the report's own tables (never from the computation behind
// them), so that the HTML page's charts show exactly the numbers its tables hold.

#include <string>
#include <vector>

#include "roofline/core/dtype.hpp"
#include "roofline/hardware/hardware.hpp"
#include "roofline/plot/charts.hpp"
#include "roofline/plot/plot.hpp"
#include "roofline/report/report.hpp"

namespace roofline::plot {

// "bf16", "fp8 e4m3": a peak class as a roof's label.
[[nodiscard]] std::string roof_label(PeakClass peak);

// The roofline of a GPU: every peak its file states, and its main memory.
[[nodiscard]] Chart gpu_roofline(const GpuSpec& gpu, std::string title);

// An SVG document as an element to inline in HTML (the XML declaration dropped).
[[nodiscard]] std::string inline_svg(std::string_view svg);

// llm: the decode and prefill ops on the GPU's roofline, the two steps broken down by op
// (stacked shares), and memory per GPU by pipeline stage (weights, KV of the batch, free, reserve).
[[nodiscard]] std::vector<Figure> llm_figures(const Report& report, const GpuSpec& gpu);

// serve: the timeline (requests, KV cache use, tokens/s) and the latency percentiles per metric.
[[nodiscard]] std::vector<Figure> serve_figures(const Report& report);

// plan: its ranked candidates, TPOT against cost per million output tokens, one series per GPU,
// with the TPOT target. Reusable for any set of candidates given as a table with tpot_ms,
// usd_per_million_output_tokens and gpu columns.
[[nodiscard]] ScatterChart plan_candidates_chart(const Table& candidates, double tpot_target_ms, std::string title);
[[nodiscard]] std::vector<Figure> plan_figures(const Report& report);

// plan --pareto: x = tokens/s per user, y = tokens/s per GPU, log-log, from the report's "front" and
// "dominated_sample" tables: the front as a line through its points (the runners-up), the chosen
// point larger in red, the dominated sample small and grey, and the --tpot-ms target where given.
[[nodiscard]] ScatterChart pareto_front_chart(const Report& report);
[[nodiscard]] std::string render_pareto_svg(const Report& report);
[[nodiscard]] std::vector<Figure> pareto_figures(const Report& report);

// validate: each benchmark's prediction (roofline, and calibrated where there is one) against
// its measured time, log-log, with the line predicted = measured.
[[nodiscard]] std::vector<Figure> validate_figures(const Report& report);

}  // namespace roofline::plot
