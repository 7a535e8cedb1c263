#pragma once

// The requests a serving simulation runs: their arrival times and lengths, drawn from fixed
// lengths or distributions with a seeded generator (the same seed gives the same requests, bit
// for bit), or read from a trace file (docs/serve.md states the format).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

struct RequestSpec {
  double arrival_s = 0;
  std::int64_t prompt = 1;  // tokens
  std::int64_t output = 1;  // tokens generated, the first one by the prefill
  // Tokens whose KV arrives with the request, loaded when it is first admitted: a disaggregated
  // decode pool's request, prefilled elsewhere (prompt - 1: its first step runs the last prompt
  // token and yields the first output token, as vLLM's KV connectors hand it over). 0: none.
  std::int64_t cached_on_arrival = 0;
};

// A length distribution: fixed N; uniform:LO,HI (integers, both included); normal:MEAN,SD;
// lognormal:MEAN,SD (the mean and standard deviation of the lengths themselves). Draws are
// rounded to the nearest integer and raised to at least 1.
struct LengthDistribution {
  enum class Kind : std::uint8_t { fixed, uniform, normal, lognormal };
  Kind kind = Kind::fixed;
  double a = 1;                                   // fixed: the length; uniform: LO; normal, lognormal: the mean
  double b = 0;                                   // uniform: HI; normal, lognormal: the standard deviation
  [[nodiscard]] std::int64_t max_length() const;  // the longest a draw can be (normal: none, INT64_MAX)
};
// Parses "uniform:LO,HI", "normal:MEAN,SD" or "lognormal:MEAN,SD"; InputError naming `flag`.
[[nodiscard]] LengthDistribution parse_length_distribution(std::string_view text, std::string_view flag);

// Uniform, exponential and normal draws from a 64-bit Mersenne Twister, computed here rather than
// by the standard distributions, whose algorithms differ between standard libraries.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  [[nodiscard]] double uniform();  // [0, 1), 53 bits
  [[nodiscard]] double exponential(double rate);
  [[nodiscard]] double normal();  // mean 0, standard deviation 1 (Box-Muller)
  [[nodiscard]] std::int64_t length(const LengthDistribution& distribution);

 private:
  std::mt19937_64 engine_;
  std::optional<double> spare_normal_;
};

// How requests arrive: all at time 0 (the offline max-throughput benchmark), a Poisson process of
// `rate` requests per second, or the times the trace states. (Closed-loop concurrency is the
// engine's: EngineConfig::concurrency.)
struct Arrivals {
  enum class Kind : std::uint8_t { all_at_once, poisson, trace };
  Kind kind = Kind::all_at_once;
  double rate = 0;
};

// Sets the requests' arrival times: all 0, or Poisson (the first at 0, then exponential gaps of
// mean 1 / rate drawn from `random`); a trace's own times are kept.
void apply_arrivals(std::vector<RequestSpec>& requests, const Arrivals& arrivals, Random& random);

// Lengths drawn for every request, then the arrivals, from one generator seeded by `seed`.
struct SyntheticWorkload {
  std::int64_t requests = 1;
  LengthDistribution prompt;
  LengthDistribution output;
  Arrivals arrivals;
  std::uint64_t seed = 0;
};
[[nodiscard]] std::vector<RequestSpec> synthetic_requests(const SyntheticWorkload& workload);

// A trace: CSV with the header arrival_s,prompt,output (columns in any order, others ignored), or
// JSON Lines with those keys (a .jsonl or .ndjson file). Times in seconds, non-decreasing; lengths
// positive integers. InputError naming the file and line.
[[nodiscard]] std::vector<RequestSpec> read_trace(const std::filesystem::path& path);

// Where the engine takes its requests from, one at a time as its clock reaches them, so that a
// simulation holds the requests in flight and not the whole workload.
class RequestSource {
 public:
  RequestSource() = default;
  RequestSource(const RequestSource&) = delete;
  RequestSource& operator=(const RequestSource&) = delete;
  virtual ~RequestSource() = default;
  // The next request in the workload's order; none once it is exhausted.
  [[nodiscard]] virtual std::optional<RequestSpec> next() = 0;
};

// The requests of a vector, in order (tests, and runs that replay a workload: the overhead fit).
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(const std::vector<RequestSpec>& requests) : requests_(requests) {}
  [[nodiscard]] std::optional<RequestSpec> next() override;

 private:
  const std::vector<RequestSpec>& requests_;
  std::size_t next_ = 0;
};

// synthetic_requests(workload), request by request, bit for bit: the lengths from a generator
// seeded by `seed`, the arrival gaps from a second one that starts where the first stands after
// every length was drawn (found by drawing them once, keeping none).
class SyntheticSource final : public RequestSource {
 public:
  explicit SyntheticSource(const SyntheticWorkload& workload);
  [[nodiscard]] std::optional<RequestSpec> next() override;

 private:
  SyntheticWorkload w_;
  Random lengths_;
  Random gaps_;
  std::int64_t drawn_ = 0;
  double now_ = 0;
};

// A trace read line by line (read_trace's format and checks), its first `limit` requests (all
// without one; InputError at the end when it holds fewer); with `arrivals` (all at once or
// Poisson from `seed`), those replace the trace's times, as apply_arrivals would.
class TraceSource final : public RequestSource {
 public:
  TraceSource(const std::filesystem::path& path, std::optional<std::int64_t> limit, std::optional<Arrivals> arrivals,
              std::uint64_t seed);
  ~TraceSource() override;
  [[nodiscard]] std::optional<RequestSpec> next() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roofline
