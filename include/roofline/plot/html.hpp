#pragma once

// The HTML form of a report: one self-contained page (no network, no external script, style or
// font) with the report's figures as inline SVG, every table sortable by a click on its header,
// and one filter box that hides the table rows and chart marks whose text does not match.
// Charts carry their numbers in SVG <title> tooltips and data-* attributes.

#include <memory>

#include "roofline/report/report.hpp"

namespace roofline::plot {

[[nodiscard]] std::unique_ptr<Printer> make_html_printer();

}  // namespace roofline::plot
