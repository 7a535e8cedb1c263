// How many sweep rows per second `roofline op KIND ... --format csv` produces on one core.
//
// Runs the same code path as the CLI (stream_op_csv: plan, cost every point, format and write
// each row), single-threaded, into a sink that discards the bytes (so the figure is the tool's
// own cost, not the terminal's or the disk's) and, with --devnull, into /dev/null through an
// ofstream (adds the write system calls). Each kind is run --repeats times; the median, min and
// max of the rows per CPU second of the benchmark's thread are printed (and the median per
// wall-clock second, which on a busy machine also counts other processes). The goal is at least 1,000,000 rows per
// second for every kind.
//
//   op_sweep_bench [--rows N] [--repeats R]
//                  [--kind gemm|gemv|elementwise|norm|softmax|attention|attn-flash|fuse|all]
//                  [--devnull]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <streambuf>
#include <string>
#include <vector>

#include "commands/op.hpp"
#include "roofline/core/error.hpp"

namespace {

using namespace roofline;
using namespace roofline::cli;

// Discards what is written but counts it, so the compiler cannot drop the formatting.
class CountingBuffer final : public std::streambuf {
 public:
  std::uint64_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::uint64_t>(n);
    return n;
  }
  int_type overflow(int_type ch) override {
    ++bytes;
    return ch;
  }
};

struct Case {
  std::string kind;
  std::string command;  // the equivalent command line, for the record
  std::function<std::uint64_t(const HardwareRegistry&, std::ostream&, std::ostream&)> run;
};

// Sweeps of about `rows` rows each (the side of a square sweep is rounded).
std::vector<Case> cases(std::uint64_t rows) {
  const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(rows)));
  const std::string range = "1:" + std::to_string(side);
  std::vector<Case> all;
  {
    GemmOptions o;
    o.op.gpus = "h100";
    o.m = range;
    o.n = range;
    o.k = "4096";
    all.push_back({"gemm", "op gemm --gpu h100 --m " + range + " --n " + range + " --k 4096 --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    GemvOptions o;
    o.op.gpus = "h100";
    o.m = range;
    o.k = range;
    all.push_back({"gemv", "op gemv --gpu h100 --m " + range + " --k " + range + " --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    ElementwiseOptions o;
    o.op.gpus = "h100";
    o.elements = range;
    o.fn = "gelu";
    o.flops_per_element = range;
    all.push_back(
        {"elementwise",
         "op elementwise --gpu h100 --fn gelu --elements " + range + " --flops-per-element " + range + " --format csv",
         [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
           return stream_op_csv(o, r, out, notes);
         }});
  }
  {
    NormOptions o;
    o.op.gpus = "h100";
    o.rows = range;
    o.hidden = range;
    all.push_back({"norm", "op norm --gpu h100 --rows " + range + " --hidden " + range + " --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    SoftmaxOptions o;
    o.op.gpus = "h100";
    o.rows = range;
    o.cols = range;
    all.push_back({"softmax", "op softmax --gpu h100 --rows " + range + " --cols " + range + " --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    // Two rows (standard and flash) per point; causal with GQA exercises the tile walk.
    AttentionOptions o;
    o.op.gpus = "h100";
    o.heads = "32";
    o.kv_heads = "8";
    o.head_dim = "128";
    o.batch = "1:" + std::to_string(std::max<std::int64_t>(1, side / 2));
    o.seq = "1:" + std::to_string(side);
    o.causal = true;
    all.push_back({"attention",
                   "op attention --gpu h100 --heads 32 --kv-heads 8 --head-dim 128 --causal --batch " + o.batch +
                       " --seq " + o.seq + " --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    // The same sweep, flash only: one row per point.
    AttentionOptions o;
    o.op.gpus = "h100";
    o.heads = "32";
    o.kv_heads = "8";
    o.head_dim = "128";
    o.batch = range;
    o.seq = range;
    o.causal = true;
    o.impl = "flash";
    all.push_back({"attn-flash",
                   "op attention --gpu h100 --heads 32 --kv-heads 8 --head-dim 128 --causal --impl flash --batch " +
                       range + " --seq " + range + " --format csv",
                   [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
                     return stream_op_csv(o, r, out, notes);
                   }});
  }
  {
    FuseOptions o;
    o.op.gpus = "h100";
    o.chain = "linear,gelu,layernorm";
    o.rows = range;
    o.hidden = "2:" + std::to_string(2 * side) + ":+2";
    all.push_back(
        {"fuse",
         "op fuse --gpu h100 --chain linear,gelu,layernorm --rows " + range + " --hidden " + o.hidden + " --format csv",
         [o](const HardwareRegistry& r, std::ostream& out, std::ostream& notes) {
           return stream_op_csv(o, r, out, notes);
         }});
  }
  return all;
}

// CPU time of the calling thread: on a shared machine the wall clock also counts the time other
// processes hold the core; "rows per second on one core" is rows per CPU second.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int run(int argc, char** argv) {
  std::uint64_t rows = 1'000'000;
  int repeats = 7;
  std::string only = "all";
  bool devnull = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--rows" && has_value) {
      rows = std::stoull(argv[++i]);
    } else if (arg == "--repeats" && has_value) {
      repeats = std::stoi(argv[++i]);
    } else if (arg == "--kind" && has_value) {
      only = argv[++i];
    } else if (arg == "--devnull") {
      devnull = true;
    } else {
      std::cerr << "usage: op_sweep_bench [--rows N] [--repeats R] [--kind KIND|all] [--devnull]\n";
      return 2;
    }
  }
  if (repeats < 1 || rows < 1) {
    std::cerr << "op_sweep_bench: --rows and --repeats must be positive\n";
    return 2;
  }
  const HardwareRegistry registry = HardwareRegistry::bundled_only();
  std::printf("%-12s %10s %8s %14s %14s %14s %14s  %s\n", "kind", "rows", "B/row", "median rows/s", "min rows/s",
              "max rows/s", "wall rows/s", "equivalent command");
  bool all_fast = true;
  for (const Case& c : cases(rows)) {
    if (only != "all" && only != c.kind) continue;
    std::vector<double> rates;       // per second of this thread's CPU time
    std::vector<double> wall_rates;  // per second of wall-clock time
    std::uint64_t produced = 0;
    std::uint64_t bytes = 0;
    for (int r = 0; r < repeats; ++r) {
      CountingBuffer counter;
      std::ofstream null_file;
      if (devnull) null_file.open("/dev/null", std::ios::binary);
      std::ostream counted(&counter);
      std::ostream& out = devnull ? static_cast<std::ostream&>(null_file) : counted;
      std::ostream notes(&counter);
      const double cpu_start = thread_cpu_seconds();
      const auto start = std::chrono::steady_clock::now();
      produced = c.run(registry, out, notes);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      const double cpu = thread_cpu_seconds() - cpu_start;
      rates.push_back(static_cast<double>(produced) / cpu);
      wall_rates.push_back(static_cast<double>(produced) / elapsed.count());
      bytes = counter.bytes;
    }
    const double mid = median(rates);
    all_fast = all_fast && mid >= 1e6;
    std::printf("%-12s %10llu %8.0f %14.0f %14.0f %14.0f %14.0f  roofline %s\n", c.kind.c_str(),
                static_cast<unsigned long long>(produced),
                devnull ? 0.0 : static_cast<double>(bytes) / static_cast<double>(produced), mid,
                *std::min_element(rates.begin(), rates.end()), *std::max_element(rates.begin(), rates.end()),
                median(wall_rates), c.command.c_str());
  }
  std::printf("goal (median >= 1,000,000 rows/s for every kind): %s\n", all_fast ? "met" : "NOT met");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const roofline::Error& e) {
    std::cerr << "op_sweep_bench: " << e.what() << '\n';
    return 2;
  }
}
