// Prints the JSON report of a synthetic benchmark run (tests/support/bench_sample.hpp), built
// by the same code as a real run's report. The schema test validates it where no GPU exists.
#include <iostream>

#include "bench_sample.hpp"

int main() {
  const roofline::bench::BenchRun run = roofline::bench::sample::sample_run();
  const nlohmann::json inputs = {{"suite", "all"},     {"quick", false}, {"filter", nlohmann::json::array()},
                                 {"samples", nullptr}, {"seed", 42},     {"check_only", false},
                                 {"device", 0},        {"gpu", nullptr}, {"command_line", "bench_report_sample"}};
  std::cout << roofline::to_json(roofline::bench::make_report(run, inputs)).dump(2) << '\n';
  return 0;
}
