// Requests of a serving simulation: distributions, arrivals, traces (roofline/serve/workload.hpp).
#include "roofline/serve/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/llm/model.hpp"

namespace roofline {
namespace {

constexpr double two_pi = 6.283185307179586476925286766559;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::optional<double> parse_number(std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::int64_t trace_length(const std::string& where, std::string_view what, std::optional<double> value) {
  if (!value || *value < 1 || *value > static_cast<double>(max_tokens) || std::floor(*value) != *value) {
    throw InputError(fmt::format("{}: {} must be a whole number of tokens from 1 to {}", where, what, max_tokens));
  }
  return static_cast<std::int64_t>(*value);
}

// A trace line longer than this is not a row of three numbers: refused rather than buffered.
constexpr std::size_t max_trace_line_bytes = std::size_t{1} << 20;

}  // namespace

// One line at a time: a CSV header names the columns (arrival_s, prompt, output, in any order),
// then each row is checked (a finite time >= 0, not before the previous row's, and lengths that
// are positive integers within the model's bounds); JSON Lines carry the names in every row.
struct TraceSource::Impl {
  std::ifstream in;
  std::string origin;
  bool jsonl = false;
  std::optional<std::int64_t> limit;
  std::optional<Arrivals> arrivals;
  Random gaps{0};
  double now = 0;
  std::size_t line_number = 0;
  std::int64_t rows = 0;
  std::optional<double> previous_arrival;
  std::size_t columns = 0;  // CSV: fields per row, 0 before the header
  std::size_t arrival_column = 0, prompt_column = 0, output_column = 0;
  bool exhausted = false;

  std::optional<RequestSpec> parse_csv(std::string_view line) {
    if (line.front() == '#') return std::nullopt;
    const std::vector<std::string_view> fields = split(line, ',');
    if (columns == 0) {
      std::optional<std::size_t> arrival, prompt, output;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string_view name = trim(fields[i]);
        if (name == "arrival_s") arrival = i;
        if (name == "prompt") prompt = i;
        if (name == "output") output = i;
      }
      if (!arrival || !prompt || !output) {
        throw InputError(
            fmt::format("{}:{}: the header must name the columns arrival_s, prompt and output", origin, line_number));
      }
      columns = fields.size();
      arrival_column = *arrival;
      prompt_column = *prompt;
      output_column = *output;
      return std::nullopt;
    }
    if (fields.size() != columns) {
      throw InputError(fmt::format("{}:{}: {} fields, the header has {}", origin, line_number, fields.size(), columns));
    }
    return row(parse_number(fields[arrival_column]), parse_number(fields[prompt_column]),
               parse_number(fields[output_column]));
  }

  std::optional<RequestSpec> parse_jsonl(std::string_view line) {
    const std::string where = fmt::format("{}:{}", origin, line_number);
    const nlohmann::json row_json = parse_json_document(line, where);
    if (!row_json.is_object()) throw InputError(fmt::format("{}: each line must be a JSON object", where));
    for (const char* key : {"arrival_s", "prompt", "output"}) {
      if (!row_json.contains(key)) throw InputError(fmt::format("{}: missing \"{}\"", where, key));
    }
    const auto number = [&](const char* key) -> std::optional<double> {
      if (!row_json.at(key).is_number()) return std::nullopt;
      return row_json.at(key).get<double>();
    };
    return row(number("arrival_s"), number("prompt"), number("output"));
  }

  RequestSpec row(std::optional<double> arrival, std::optional<double> prompt, std::optional<double> output) {
    const std::string where = fmt::format("{}:{}", origin, line_number);
    if (!arrival || *arrival < 0) throw InputError(fmt::format("{}: arrival_s must be a number >= 0", where));
    if (previous_arrival && *arrival < *previous_arrival) {
      throw InputError(
          fmt::format("{}: arrival_s {} is before the previous row's {} (the trace must be sorted by time)", where,
                      *arrival, *previous_arrival));
    }
    previous_arrival = arrival;
    return {*arrival, trace_length(where, "prompt", prompt), trace_length(where, "output", output)};
  }

  std::optional<RequestSpec> next() {
    if (exhausted || (limit && rows >= *limit)) return std::nullopt;
    std::string text;
    while (std::getline(in, text)) {
      ++line_number;
      if (text.size() > max_trace_line_bytes) {
        throw InputError(fmt::format("{}:{}: a line of more than {} bytes", origin, line_number, max_trace_line_bytes));
      }
      const std::string_view line = trim(text);
      if (line.empty()) continue;
      std::optional<RequestSpec> r = jsonl ? parse_jsonl(line) : parse_csv(line);
      if (!r) continue;
      if (arrivals) {
        // As apply_arrivals: the first at once, then exponential gaps (none when all at once).
        r->arrival_s = now;
        if (arrivals->kind == Arrivals::Kind::poisson) now += gaps.exponential(arrivals->rate);
      }
      ++rows;
      return r;
    }
    if (in.bad()) throw InputError(fmt::format("{}: cannot be read (read error)", origin));
    exhausted = true;
    if (!jsonl && columns == 0) throw InputError(fmt::format("{}: no header (arrival_s,prompt,output)", origin));
    if (rows == 0) throw InputError(fmt::format("{}: the trace has no requests", origin));
    if (limit && rows < *limit) {
      throw InputError(fmt::format("--requests {}: the trace {} has only {}", *limit, origin, rows));
    }
    return std::nullopt;
  }
};

std::int64_t LengthDistribution::max_length() const {
  switch (kind) {
    case Kind::fixed: return static_cast<std::int64_t>(a);
    case Kind::uniform: return static_cast<std::int64_t>(b);
    case Kind::normal:
    case Kind::lognormal: break;
  }
  return std::numeric_limits<std::int64_t>::max();
}

LengthDistribution parse_length_distribution(std::string_view text, std::string_view flag) {
  const auto bad = [&](std::string_view why) {
    return InputError(
        fmt::format("{} '{}': {} (expected uniform:LO,HI, normal:MEAN,SD or lognormal:MEAN,SD)", flag, text, why));
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) throw bad("no distribution name");
  const std::string_view name = text.substr(0, colon);
  const std::vector<std::string_view> values = split(text.substr(colon + 1), ',');
  if (values.size() != 2) throw bad("two parameters are needed");
  const std::optional<double> a = parse_number(values[0]);
  const std::optional<double> b = parse_number(values[1]);
  if (!a || !b) throw bad("the parameters must be numbers");
  LengthDistribution d;
  d.a = *a;
  d.b = *b;
  const auto limit = static_cast<double>(max_tokens);
  if (name == "uniform") {
    d.kind = LengthDistribution::Kind::uniform;
    if (d.a < 1 || d.b < d.a || d.b > limit || std::floor(d.a) != d.a || std::floor(d.b) != d.b) {
      throw bad(fmt::format("LO and HI must be whole numbers with 1 <= LO <= HI <= {}", max_tokens));
    }
    return d;
  }
  if (name == "normal" || name == "lognormal") {
    d.kind = name == "normal" ? LengthDistribution::Kind::normal : LengthDistribution::Kind::lognormal;
    if (d.a < 1 || d.a > limit || d.b < 0) throw bad("MEAN must be at least 1 and SD at least 0");
    return d;
  }
  throw bad(fmt::format("unknown distribution '{}'", name));
}

double Random::uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double Random::exponential(double rate) {
  return -std::log1p(-uniform()) / rate;
}

double Random::normal() {
  if (spare_normal_) {
    const double z = *spare_normal_;
    spare_normal_.reset();
    return z;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = r * std::sin(two_pi * u2);
  return r * std::cos(two_pi * u2);
}

std::int64_t Random::length(const LengthDistribution& d) {
  double value = d.a;
  switch (d.kind) {
    case LengthDistribution::Kind::fixed: return static_cast<std::int64_t>(d.a);
    case LengthDistribution::Kind::uniform:
      // LO + floor(u (HI - LO + 1)): every integer of [LO, HI] equally likely.
      return static_cast<std::int64_t>(d.a) +
             std::min(static_cast<std::int64_t>(uniform() * (d.b - d.a + 1.0)), static_cast<std::int64_t>(d.b - d.a));
    case LengthDistribution::Kind::normal: value = d.a + d.b * normal(); break;
    case LengthDistribution::Kind::lognormal: {
      // The lengths' mean m and deviation s: sigma^2 = ln(1 + s^2 / m^2), mu = ln m - sigma^2 / 2.
      const double sigma2 = std::log1p(d.b * d.b / (d.a * d.a));
      value = std::exp(std::log(d.a) - sigma2 / 2.0 + std::sqrt(sigma2) * normal());
      break;
    }
  }
  return static_cast<std::int64_t>(std::clamp(std::round(value), 1.0, static_cast<double>(max_tokens)));
}

void apply_arrivals(std::vector<RequestSpec>& requests, const Arrivals& arrivals, Random& random) {
  if (arrivals.kind == Arrivals::Kind::trace) return;
  // As vLLM's benchmark client sends them: the first at once, then exponential gaps.
  double now = 0;
  for (RequestSpec& r : requests) {
    r.arrival_s = now;
    if (arrivals.kind == Arrivals::Kind::poisson) now += random.exponential(arrivals.rate);
  }
}

std::vector<RequestSpec> synthetic_requests(const SyntheticWorkload& w) {
  Random random(w.seed);
  std::vector<RequestSpec> requests;
  requests.reserve(static_cast<std::size_t>(w.requests));
  for (std::int64_t i = 0; i < w.requests; ++i) {
    RequestSpec r;
    r.prompt = random.length(w.prompt);
    r.output = random.length(w.output);
    requests.push_back(r);
  }
  apply_arrivals(requests, w.arrivals, random);
  return requests;
}

std::vector<RequestSpec> read_trace(const std::filesystem::path& path) {
  TraceSource source(path, std::nullopt, std::nullopt, 0);
  std::vector<RequestSpec> requests;
  while (std::optional<RequestSpec> r = source.next()) requests.push_back(*r);
  return requests;
}

TraceSource::TraceSource(const std::filesystem::path& path, std::optional<std::int64_t> limit,
                         std::optional<Arrivals> arrivals, std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  Impl& t = *impl_;
  t.origin = path.string();
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw InputError(fmt::format("{}: no such file", t.origin));
  }
  if (std::filesystem::is_directory(status)) throw InputError(fmt::format("{}: is a directory, not a file", t.origin));
  t.in.open(path, std::ios::binary);
  if (!t.in) throw InputError(fmt::format("{}: cannot be read", t.origin));
  const std::string extension = path.extension().string();
  t.jsonl = extension == ".jsonl" || extension == ".ndjson";
  t.limit = limit;
  if (arrivals && arrivals->kind != Arrivals::Kind::trace) t.arrivals = arrivals;
  t.gaps = Random(seed);
}

TraceSource::~TraceSource() = default;

std::optional<RequestSpec> TraceSource::next() {
  return impl_->next();
}

std::optional<RequestSpec> VectorSource::next() {
  if (next_ >= requests_.size()) return std::nullopt;
  return requests_[next_++];
}

SyntheticSource::SyntheticSource(const SyntheticWorkload& workload)
    : w_(workload), lengths_(workload.seed), gaps_(workload.seed) {
  if (w_.arrivals.kind != Arrivals::Kind::poisson) return;
  // synthetic_requests draws every length before the first gap: the gap generator starts there.
  for (std::int64_t i = 0; i < w_.requests; ++i) {
    (void)gaps_.length(w_.prompt);
    (void)gaps_.length(w_.output);
  }
}

std::optional<RequestSpec> SyntheticSource::next() {
  if (drawn_ >= w_.requests) return std::nullopt;
  ++drawn_;
  RequestSpec r;
  r.prompt = lengths_.length(w_.prompt);
  r.output = lengths_.length(w_.output);
  r.arrival_s = now_;
  if (w_.arrivals.kind == Arrivals::Kind::poisson) now_ += gaps_.exponential(w_.arrivals.rate);
  return r;
}

}  // namespace roofline
