#pragma once

// A chart of quantities over time: panels stacked over one time axis, each with its own linear
// y axis from 0 and one line per series (serve's timeline: requests running and waiting, KV cache
// use, tokens/s). Like the roofline chart, a pure function of its data: the same chart, the same
// bytes.

#include <string>
#include <vector>

namespace roofline::plot {

struct TimelineLine {
  std::string name;
  std::vector<double> values;  // one per time point
};

struct TimelinePanel {
  std::string label;  // the y axis, with its unit
  std::vector<TimelineLine> lines;
};

struct TimelineChart {
  std::string title;
  std::vector<double> time_s;  // ascending
  std::vector<TimelinePanel> panels;
};

// Round steps of 1, 2 or 5 x 10^k from 0 to at least `max` (4 to 8 of them); {0, 1} for max <= 0.
[[nodiscard]] std::vector<double> linear_ticks(double max);

// The standalone SVG. Throws InputError on no time point, no panel, a panel without lines, a line whose
// length is not the time axis's, or a value that is negative or not finite.
[[nodiscard]] std::string render_timeline_svg(const TimelineChart& chart);

}  // namespace roofline::plot
