// Prints the JSON report of a synthetic benchmark run (tests/support/bench_sample.hpp), built
// by the same code as a real run's report. The schema test validates it where no GPU exists.
#include <iostream>
#include <string>

#include "bench_sample.hpp"

// Arguments: "table" for the human form; "collectives" for a collectives run (2 GPUs).
int main(int argc, char** argv) {
  const auto has = [argc, argv](const std::string& word) {
    for (int i = 1; i < argc; ++i) {
      if (argv[i] == word) return true;
    }
    return false;
  };
  const roofline::bench::BenchRun run =
      has("collectives") ? roofline::bench::sample::sample_collectives_run() : roofline::bench::sample::sample_run();
  const nlohmann::json inputs = {{"suite", "all"},     {"quick", false}, {"filter", nlohmann::json::array()},
                                 {"samples", nullptr}, {"seed", 42},     {"check_only", false},
                                 {"device", 0},        {"gpu", nullptr}, {"command_line", "bench_report_sample"}};
  const roofline::Report report = roofline::bench::make_report(run, inputs);
  // "table": the human form, to look at the layout.
  const bool table = has("table");
  roofline::make_printer(table ? roofline::Format::table : roofline::Format::json)
      ->print(table ? roofline::bench::readable(report) : report, std::cout);
  return 0;
}
