// Prints the JSON report of a synthetic benchmark run (tests/support/bench_sample.hpp), built
// by the same code as a real run's report. The schema test validates it where no GPU exists.
#include <iostream>
#include <string>

#include "bench_sample.hpp"

int main(int argc, char** argv) {
  const roofline::bench::BenchRun run = roofline::bench::sample::sample_run();
  const nlohmann::json inputs = {{"suite", "all"},     {"quick", false}, {"filter", nlohmann::json::array()},
                                 {"samples", nullptr}, {"seed", 42},     {"check_only", false},
                                 {"device", 0},        {"gpu", nullptr}, {"command_line", "bench_report_sample"}};
  const roofline::Report report = roofline::bench::make_report(run, inputs);
  // "table": the human form, to look at the layout.
  const bool table = argc > 1 && std::string(argv[1]) == "table";
  roofline::make_printer(table ? roofline::Format::table : roofline::Format::json)->print(report, std::cout);
  return 0;
}
