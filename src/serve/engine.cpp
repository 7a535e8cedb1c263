// The serving engine, step by step (roofline/serve/engine.hpp; docs/serve.md).
#include "roofline/serve/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

#include "roofline/core/error.hpp"
#include "roofline/llm/deployment.hpp"
#include "roofline/serve/kv_blocks.hpp"

namespace roofline {
namespace {

// A request's state inside the engine, from its arrival to its finish (a slot, reused after).
struct Live {
  RequestRecord record;
  std::size_t index = 0;       // in the workload's order
  std::int64_t computed = 0;   // tokens whose keys and values are in the cache
  std::int64_t generated = 0;  // output tokens produced
  std::int64_t blocks = 0;     // KV blocks it holds
  double last_token_s = 0;
  double accepted = 0;      // speculation: expected tokens accepted and not yet emitted (below 1)
  bool kv_pending = false;  // its cached_on_arrival tokens are still to be loaded, at its first admission
  bool scheduled = false;   // ever
  bool done = false;
};

struct Scheduled {
  std::size_t id = 0;
  std::int64_t tokens = 0;
  bool decode = false;  // one token (with speculation, a verify step's 1 + drafts) on its cache
};

// Folds steps into at most 2 x timeline_points points, each `stride` steps; when the points fill
// up, neighbours merge and the stride doubles (memory bounded, whatever the run's length).
class Timeline {
 public:
  void add(double end_s, double span_s, std::int64_t running, std::int64_t waiting, std::int64_t kv_blocks,
           std::int64_t output_tokens, std::int64_t prefill_tokens) {
    current_.time_s = end_s;
    current_.span_s += span_s;
    current_.steps += 1;
    current_.running += static_cast<double>(running) * span_s;
    current_.waiting += static_cast<double>(waiting) * span_s;
    current_.kv_blocks += static_cast<double>(kv_blocks) * span_s;
    current_.output_tokens += output_tokens;
    current_.prefill_tokens += prefill_tokens;
    if (current_.steps == stride_) close();
    if (points_.size() == 2 * timeline_points) {
      std::vector<TimelinePoint> merged;
      merged.reserve(timeline_points);
      for (std::size_t i = 0; i + 1 < points_.size(); i += 2) merged.push_back(merge(points_[i], points_[i + 1]));
      points_ = std::move(merged);
      stride_ *= 2;
    }
  }

  std::vector<TimelinePoint> take() && {
    if (current_.steps > 0) close();
    return std::move(points_);
  }

 private:
  void close() {
    if (current_.span_s > 0) {
      current_.running /= current_.span_s;
      current_.waiting /= current_.span_s;
      current_.kv_blocks /= current_.span_s;
    }
    points_.push_back(current_);
    current_ = {};
  }

  static TimelinePoint merge(const TimelinePoint& a, const TimelinePoint& b) {
    TimelinePoint m;
    m.time_s = b.time_s;
    m.span_s = a.span_s + b.span_s;
    m.steps = a.steps + b.steps;
    const auto mean = [&](double x, double y) { return m.span_s > 0 ? (x * a.span_s + y * b.span_s) / m.span_s : x; };
    m.running = mean(a.running, b.running);
    m.waiting = mean(a.waiting, b.waiting);
    m.kv_blocks = mean(a.kv_blocks, b.kv_blocks);
    m.output_tokens = a.output_tokens + b.output_tokens;
    m.prefill_tokens = a.prefill_tokens + b.prefill_tokens;
    return m;
  }

  std::vector<TimelinePoint> points_;
  TimelinePoint current_;
  std::int64_t stride_ = 1;
};

// The most tokens one step runs of a request holding `held` tokens: a chunk of the budget, or
// without chunks its whole prefill (a recompute's included).
std::int64_t most_step_tokens(const EngineConfig& c, std::int64_t held) {
  return c.chunked_prefill ? std::min(held, c.max_num_tokens) : held;
}

// The checks of one request as it arrives (index: its place in the workload).
void check_request(std::size_t i, const RequestSpec& r, const EngineConfig& c, const ModelSpec& model,
                   const KvBlockLayout& kv) {
  if (model.max_context && r.prompt + r.output > *model.max_context) {
    throw InputError(fmt::format("serve: request {}: prompt {} + output {} tokens is more than {}'s context of {}", i,
                                 r.prompt, r.output, model.id, *model.max_context));
  }
  // The most a request holds: its prompt and every output token but the last (and, speculating,
  // the drafts of its last verify step).
  const std::int64_t held = r.prompt + r.output - 1 + c.draft_tokens;
  const std::int64_t blocks = kv.peak(held, most_step_tokens(c, held));
  if (blocks > c.kv_blocks) {
    throw InputError(fmt::format(
        "serve: request {}: {} tokens (prompt {} + output {} - 1) need {} KV blocks of {} tokens; the cache holds {}",
        i, held, r.prompt, r.output, blocks, c.block_size, c.kv_blocks));
  }
  // Without chunks a prefill runs whole: the prompt, or after a preemption everything recomputed
  // (none when admission guarantees no eviction).
  if (!c.chunked_prefill && c.policy == CapacityPolicy::guaranteed_no_evict && r.prompt > c.max_num_tokens) {
    throw InputError(
        fmt::format("serve: request {}: without chunked prefill, its prompt of {} tokens must fit "
                    "--max-num-tokens {}",
                    i, r.prompt, c.max_num_tokens));
  }
  if (!c.chunked_prefill && c.policy == CapacityPolicy::max_utilization && held > c.max_num_tokens) {
    throw InputError(fmt::format(
        "serve: request {}: without chunked prefill, prompt {} + output {} - 1 tokens (what a recompute prefills) "
        "must fit --max-num-tokens {}",
        i, r.prompt, r.output, c.max_num_tokens));
  }
}

// One engine: its requests, its KV blocks, its scheduler. The driver (step_in_lockstep) runs it
// a step at a time, alone or as one attention-DP rank of a group whose step the slowest sets.
class Engine {
 public:
  // `source` may hold no request (an attention-DP rank dealt none: it runs dummy steps only).
  Engine(RequestSource& source, const EngineConfig& config, const ModelSpec& model, FinishedRequest on_finish)
      : c_(config),
        model_(model),
        cache_bound_(model.cache_bound()),
        source_(source),
        on_finish_(std::move(on_finish)),
        kv_(model, config.block_size),
        free_blocks_(config.kv_blocks),
        released_(config.concurrency ? static_cast<std::size_t>(*config.concurrency) : 0) {
    if (config.kv_blocks < 1) throw InputError("serve: the KV cache holds no block");
    pending_ = source_.next();
  }

  [[nodiscard]] bool has_requests() const { return pending_.has_value() || entered_ > 0; }
  [[nodiscard]] bool has_work() const { return !running_.empty() || !waiting_.empty(); }
  [[nodiscard]] bool done() const { return !pending_ && !has_work(); }
  // When the next request arrives (closed loop: a slot is always free when the engine has no work).
  [[nodiscard]] std::optional<double> next_arrival() const {
    if (!pending_) return std::nullopt;
    return pending_->arrival_s;
  }
  void wait_until(double t) { now_ = std::max(now_, t); }
  [[nodiscard]] double step_overhead_s() const { return c_.step_overhead_s; }

  // Requests whose arrival the clock has reached (closed loop: as many as there are free slots,
  // arriving now) enter the waiting queue, each in a free slot.
  void admit_arrivals() {
    while (pending_) {
      RequestSpec spec = *pending_;
      if (c_.concurrency) {
        if (entered_ >= released_) return;
        spec.arrival_s = entered_ < static_cast<std::size_t>(*c_.concurrency) ? 0.0 : now_;
      } else if (spec.arrival_s > now_) {
        return;
      }
      check_request(entered_, spec, c_, model_, kv_);
      std::size_t id = 0;
      if (free_slots_.empty()) {
        id = live_.size();
        live_.emplace_back();
      } else {
        id = free_slots_.back();
        free_slots_.pop_back();
      }
      live_[id] = Live{};
      live_[id].record.spec = spec;
      live_[id].index = entered_;
      live_[id].kv_pending = spec.cached_on_arrival > 0;
      if (entered_ == 0) out_.start_s = spec.arrival_s;
      ++entered_;
      waiting_.push_back(id);
      pending_ = source_.next();
      if (pending_ && !c_.concurrency && pending_->arrival_s < spec.arrival_s) {
        throw InputError(fmt::format("serve: request {} arrives before request {}: arrivals must be sorted", entered_,
                                     entered_ - 1));
      }
    }
  }

  // This step's batch (vLLM V1's schedule(), engine.hpp), valid until the next call; none when
  // the engine has no work.
  [[nodiscard]] const MixedBatch* schedule_step() {
    if (!has_work()) return nullptr;
    schedule();
    if (scheduled_.empty()) throw std::logic_error("serve: a step scheduled nothing");
    batch_.chunks = chunks_;
    return &batch_;
  }

  // The scheduled batch ran for `seconds`: its tokens are emitted, its finished requests leave.
  void end_step(double seconds) {
    const double start = now_;
    const std::int64_t tokens = batch_.tokens();
    now_ += seconds;

    EngineStats& e = out_.engine;
    const std::int64_t kv_used = c_.kv_blocks - free_blocks_;
    ++e.steps;
    e.busy_s += seconds;
    e.batch_max = std::max(e.batch_max, static_cast<std::int64_t>(scheduled_.size()));
    e.tokens_max = std::max(e.tokens_max, tokens);
    e.kv_blocks_peak = std::max(e.kv_blocks_peak, kv_used);
    const std::int64_t decode_tokens = batch_.decode_requests * batch_.decode_queries;
    e.decode_tokens += decode_tokens;
    e.prefill_tokens += tokens - decode_tokens;
    batch_sum_ += static_cast<double>(scheduled_.size());
    tokens_sum_ += static_cast<double>(tokens);
    kv_sum_ += static_cast<double>(kv_used);
    const auto running = static_cast<std::int64_t>(running_.size());
    const auto waiting = static_cast<std::int64_t>(waiting_.size());

    std::int64_t emitted = 0;
    bool any_finished = false;
    for (const Scheduled& s : scheduled_) {
      Live& r = live_[s.id];
      RequestRecord& record = r.record;
      std::int64_t accepted = 1;
      if (s.decode && c_.draft_tokens > 0) {
        // The verify step's expected accepted tokens, emitted as whole tokens; the cache keeps
        // what was accepted (the rejected drafts' slots are reused).
        r.accepted += c_.accepted_per_verify;
        accepted = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(r.accepted)), 1,
                                            record.spec.output - r.generated);
        r.accepted = std::max(0.0, r.accepted - static_cast<double>(accepted));
        r.computed += accepted;
      } else {
        r.computed += s.tokens;
        if (r.computed < known(s.id)) continue;  // a prefill chunk short of the prompt's end
      }
      r.generated += accepted;
      emitted += accepted;
      if (r.generated == accepted) {
        record.first_token_s = now_;
      } else {
        out_.itl_s.add(now_ - r.last_token_s);
      }
      r.last_token_s = now_;
      if (r.generated < record.spec.output) continue;
      r.done = true;
      any_finished = true;
      record.finish_s = now_;
      free_blocks_ += r.blocks;
      r.blocks = 0;
      ++out_.finished;
      ++released_;  // closed loop: the next request takes its place
      out_.end_s = std::max(out_.end_s, now_);
      if (on_finish_) on_finish_(r.index, record);
    }
    if (any_finished) {
      running_.erase(std::remove_if(running_.begin(), running_.end(),
                                    [&](std::size_t id) {
                                      if (!live_[id].done) return false;
                                      free_slots_.push_back(id);
                                      return true;
                                    }),
                     running_.end());
    }
    timeline_.add(now_, now_ - start, running, waiting, kv_used, emitted, tokens - decode_tokens);
  }

  // A step of the group in which this engine scheduled nothing: a dummy pass, for the MoE layers'
  // collectives, through the group's step.
  void idle_step(double seconds) {
    now_ += seconds;
    ++out_.engine.dummy_steps;
    timeline_.add(now_, seconds, 0, static_cast<std::int64_t>(waiting_.size()), c_.kv_blocks - free_blocks_, 0, 0);
  }

  EngineRun finish() && {
    EngineStats& e = out_.engine;
    if (e.steps > 0) {
      e.batch_mean = batch_sum_ / static_cast<double>(e.steps);
      e.tokens_mean = tokens_sum_ / static_cast<double>(e.steps);
      e.kv_blocks_mean = kv_sum_ / static_cast<double>(e.steps);
    }
    out_.in_flight_peak = static_cast<std::int64_t>(live_.size());
    out_.timeline = std::move(timeline_).take();
    return std::move(out_);
  }

 private:
  [[nodiscard]] std::int64_t known(std::size_t id) const { return live_[id].record.spec.prompt + live_[id].generated; }

  void preempt(std::size_t id) {
    Live& r = live_[id];
    free_blocks_ += r.blocks;
    r.blocks = 0;
    r.computed = 0;  // recompute: prompt and generated tokens are prefilled again on resumption
    ++r.record.preemptions;
    ++out_.engine.preemptions;
    waiting_.push_front(id);
  }

  // The blocks a request must add to run `tokens` more (fewer than none where its windows moved
  // past blocks it holds): those of its cache after them, each group's out-of-window blocks freed,
  // or, when admission guarantees no eviction, the most its whole life holds, from the start.
  [[nodiscard]] std::int64_t blocks_needed(std::size_t id, std::int64_t tokens) const {
    const RequestSpec& spec = live_[id].record.spec;
    if (c_.policy == CapacityPolicy::guaranteed_no_evict) {
      const std::int64_t life = spec.prompt + spec.output - 1 + c_.draft_tokens;
      return kv_.peak(life, most_step_tokens(c_, life)) - live_[id].blocks;
    }
    return kv_.held(live_[id].computed, tokens) - live_[id].blocks;
  }

  // Whether the request's next step is a decode step: one token left to run on its cache, after
  // its first output token or on a cache that arrived with it.
  [[nodiscard]] bool decodes(std::size_t id) const {
    const Live& r = live_[id];
    return known(id) - r.computed == 1 && (r.generated >= 1 || r.record.spec.cached_on_arrival > 0);
  }

  // The tokens the request runs in this step (0: it does not fit the budget).
  [[nodiscard]] std::int64_t step_tokens(std::size_t id, std::int64_t budget) const {
    if (decodes(id)) {
      const std::int64_t verify = 1 + c_.draft_tokens;
      return verify <= budget ? verify : 0;
    }
    return std::min(known(id) - live_[id].computed, budget);
  }

  void take(std::size_t id, std::int64_t tokens) {
    Live& r = live_[id];
    const std::int64_t need = blocks_needed(id, tokens);
    free_blocks_ -= need;
    r.blocks += need;
    r.kv_pending = false;
    if (!r.scheduled) {
      r.scheduled = true;
      r.record.scheduled_s = now_;
    }
    const bool decode = decodes(id);
    scheduled_.push_back({id, tokens, decode});
    if (decode) {
      ++batch_.decode_requests;
      const std::int64_t context = r.computed + 1;
      batch_.decode_kv_tokens +=
          cache_bound_ ? std::min(context, *cache_bound_) : context;  // the model's cached_tokens
    } else {
      chunks_.push_back({tokens, r.computed});
    }
  }

  // vLLM V1's schedule(): running requests in order, then waiting ones (see engine.hpp).
  void schedule() {
    scheduled_.clear();
    chunks_.clear();
    batch_ = {};
    batch_.decode_queries = 1 + c_.draft_tokens;
    std::int64_t budget = c_.max_num_tokens;
    bool preempted = false;
    for (std::size_t i = 0; i < running_.size() && budget > 0;) {
      const std::size_t id = running_[i];
      const std::int64_t tokens = step_tokens(id, budget);
      if (tokens == 0) break;
      const std::int64_t need = blocks_needed(id, tokens);
      bool self = false;
      while (need > free_blocks_) {
        const std::size_t victim = running_.back();
        running_.pop_back();
        preempt(victim);
        preempted = true;
        if (victim == id) {
          self = true;
          break;
        }
      }
      if (self) break;
      take(id, tokens);
      budget -= tokens;
      ++i;
    }
    if (preempted) return;
    while (!waiting_.empty() && static_cast<std::int64_t>(running_.size()) < c_.max_batch && budget > 0) {
      const std::size_t id = waiting_.front();
      Live& r = live_[id];
      // A cache that arrives with the request is loaded when it is first admitted.
      if (r.kv_pending) r.computed = r.record.spec.cached_on_arrival;
      const std::int64_t remaining = known(id) - r.computed;
      const std::int64_t tokens = step_tokens(id, budget);
      if ((!c_.chunked_prefill && remaining > budget) || tokens == 0 || blocks_needed(id, tokens) > free_blocks_) {
        if (r.kv_pending) r.computed = 0;
        break;
      }
      waiting_.pop_front();
      running_.push_back(id);
      take(id, tokens);
      budget -= tokens;
    }
  }

  const EngineConfig& c_;
  const ModelSpec& model_;
  const std::optional<std::int64_t> cache_bound_;  // model_.cache_bound(), read per request and step
  RequestSource& source_;
  FinishedRequest on_finish_;
  KvBlockLayout kv_;
  std::optional<RequestSpec> pending_;  // the next request of the source, not yet arrived
  std::vector<Live> live_;              // slots: the requests in flight and free ones
  std::vector<std::size_t> free_slots_;
  EngineRun out_;
  std::vector<std::size_t> running_;
  std::deque<std::size_t> waiting_;
  std::size_t entered_ = 0;  // requests taken from the source
  std::int64_t free_blocks_ = 0;
  // Closed loop: requests allowed in (the concurrency, and one more per finished request).
  std::size_t released_ = 0;
  double now_ = 0;
  std::vector<Scheduled> scheduled_;
  std::vector<PrefillChunk> chunks_;
  MixedBatch batch_;
  double batch_sum_ = 0;
  double tokens_sum_ = 0;
  double kv_sum_ = 0;
  Timeline timeline_;
};

// Steps the engines together until every one is done: each schedules its own batch, the step
// lasts as long as the slowest one's (its batch, the MoE layers over every engine's tokens, and
// its overhead), and every engine advances by it; one that scheduled nothing runs a dummy step.
// While none has work they wait for the next arrival at any. Returns the group's steps.
std::int64_t step_in_lockstep(std::deque<Engine>& ranks, StepCoster& coster) {
  const bool group = ranks.size() > 1;
  std::vector<const MixedBatch*> batches(ranks.size(), nullptr);
  std::int64_t steps = 0;
  for (;;) {
    bool left = false;
    bool work = false;
    for (Engine& rank : ranks) {
      rank.admit_arrivals();
      left = left || !rank.done();
      work = work || rank.has_work();
    }
    if (!left) return steps;
    if (!work) {
      double next = std::numeric_limits<double>::infinity();
      for (const Engine& rank : ranks) {
        if (const std::optional<double> arrival = rank.next_arrival()) next = std::min(next, *arrival);
      }
      for (Engine& rank : ranks) rank.wait_until(next);
      continue;
    }
    std::int64_t group_tokens = 0;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      batches[i] = ranks[i].schedule_step();
      if (batches[i]) group_tokens += batches[i]->tokens();
    }
    double seconds = 0;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (!batches[i]) continue;
      MixedBatch batch = *batches[i];
      if (group) batch.group_tokens = group_tokens;
      seconds = std::max(seconds, coster.time_s(batch) + ranks[i].step_overhead_s());
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (batches[i]) {
        ranks[i].end_step(seconds);
      } else {
        ranks[i].idle_step(seconds);
      }
    }
    ++steps;
  }
}

}  // namespace

std::optional<double> RequestRecord::tpot_s() const {
  if (spec.output < 2) return std::nullopt;
  return (e2e_s() - ttft_s()) / static_cast<double>(spec.output - 1);
}

namespace {

// `value` on the grid of Distribution::steps_per_octave steps per octave (0 and below kept).
double on_grid(double value) {
  if (!(value > 0)) return value;
  return std::exp2(std::round(std::log2(value) * Distribution::steps_per_octave) / Distribution::steps_per_octave);
}

}  // namespace

void Distribution::add(double value, std::int64_t count) {
  if (count <= 0) return;
  max_ = count_ == 0 ? value : std::max(max_, value);
  count_ += count;
  sum_ += value * static_cast<double>(count);
  const double kept = rounded_ ? on_grid(value) : value;
  if (!runs_.empty() && runs_.back().first == kept) {
    runs_.back().second += count;
  } else {
    if (!runs_.empty() && kept < runs_.back().first) sorted_ = false;
    runs_.emplace_back(kept, count);
  }
  if (runs_.size() > merge_at_) {
    // From here on values are rounded to the grid; the runs so far are moved onto it, and equal
    // values merge, so the runs stay within the grid points a latency's range spans.
    if (!rounded_) {
      for (auto& run : runs_) run.first = on_grid(run.first);
      rounded_ = true;
    }
    sort_and_merge();
    merge_at_ = std::max(exact_runs, 2 * runs_.size());
  }
}

void Distribution::merge(const Distribution& other) {
  if (other.count_ == 0) return;
  const double max = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  const double sum = sum_ + other.sum_;
  for (const auto& [value, count] : other.runs_) add(value, count);
  // The runs of a rounded sample are on the grid: the exact sum and maximum are other's own.
  max_ = max;
  sum_ = sum;
}

void Distribution::sort_and_merge() {
  if (!sorted_) std::sort(runs_.begin(), runs_.end());
  sorted_ = true;
  std::size_t out = 0;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (out > 0 && runs_[out - 1].first == runs_[i].first) {
      runs_[out - 1].second += runs_[i].second;
    } else {
      runs_[out++] = runs_[i];
    }
  }
  runs_.resize(out);
}

double Distribution::percentile(double p) {
  if (count_ == 0) return 0;
  if (!sorted_) sort_and_merge();
  // numpy's linear method: h = (n - 1) p / 100 between the order statistics floor(h) and floor(h) + 1.
  const double h = static_cast<double>(count_ - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto lo = static_cast<std::int64_t>(std::floor(h));
  const std::int64_t hi = std::min(lo + 1, count_ - 1);
  double x_lo = runs_.back().first;
  double x_hi = x_lo;
  std::int64_t seen = 0;
  bool found_lo = false;
  for (const auto& [value, count] : runs_) {
    seen += count;
    if (!found_lo && lo < seen) {
      x_lo = value;
      found_lo = true;
    }
    if (hi < seen) {
      x_hi = value;
      break;
    }
  }
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

KvCache kv_cache(const ModelSpec& model, const GpuSpec& gpu, const DeploymentConfig& config, std::int64_t block_size,
                 double fraction, const std::optional<Speculation>& speculation) {
  const Sharding sharding = shard(model, config);
  const MemoryPlan memory = plan_memory(model, gpu, sharding, config, 1);
  double draft_weights = 0;
  double draft_kv_per_token = 0;
  if (speculation) {
    // At one request of one cached token: the drafter's weights, and its cache per token.
    const SpeculativeDecode draft = speculative_decode(model, gpu, sharding, config, 1, 1, *speculation);
    draft_weights = draft.draft_weight_bytes;
    draft_kv_per_token = draft.draft_kv_bytes_per_request / static_cast<double>(model.cached_tokens(1));
  }
  KvCache out;
  out.draft_weight_bytes = draft_weights;
  // A block holds block_size tokens of one group's layers (kv_blocks.hpp): on a stage, of the most
  // layers any one group has there; a model whose layers attend alike, of all the stage's layers.
  // The drafter's cache per token is counted in every block (once per group: an overcount on a
  // model of several groups).
  const KvBlockLayout layout(model, block_size);
  const double kv_layer = kv_bytes_per_token_layer_gpu(model, sharding, config.kv);
  bool first = true;
  for (const StageMemory& stage : memory.stages) {
    const auto block_layers =
        static_cast<double>(layout.layers_per_block(stage.layers.first_layer, stage.layers.layers()));
    const double per_block = (kv_layer * block_layers + draft_kv_per_token) * static_cast<double>(block_size);
    const double free = stage.free_bytes - draft_weights;
    const double blocks = per_block > 0 ? std::floor(fraction * std::max(free, 0.0) / per_block) : 0.0;
    if (first || blocks < static_cast<double>(out.blocks)) {
      // Capped where doubles still count whole blocks exactly (a what-if of absurd memory).
      out.blocks = static_cast<std::int64_t>(std::min(blocks, 9.0e15));
      out.bytes_per_block = per_block;
      out.free_bytes = free;
      first = false;
    }
  }
  if (out.free_bytes <= 0) {
    throw InputError(fmt::format("serve: {} does not fit {} x {} (TP {}, PP {}): no memory is left for the KV cache",
                                 model.id, config.tp * config.pp, gpu.id, config.tp, config.pp));
  }
  return out;
}

LockstepRun simulate_lockstep(const std::vector<LockstepRank>& ranks, StepCoster& coster, const ModelSpec& model) {
  std::deque<Engine> engines;
  for (const LockstepRank& rank : ranks) engines.emplace_back(*rank.source, rank.engine, model, rank.on_finish);
  if (std::none_of(engines.begin(), engines.end(), [](const Engine& e) { return e.has_requests(); })) {
    throw InputError("serve: no requests");
  }
  LockstepRun out;
  out.steps = step_in_lockstep(engines, coster);
  out.ranks.reserve(engines.size());
  for (Engine& engine : engines) out.ranks.push_back(std::move(engine).finish());
  return out;
}

EngineRun simulate(RequestSource& source, const EngineConfig& engine, StepCoster& coster, const ModelSpec& model,
                   const FinishedRequest& on_finish) {
  LockstepRun run = simulate_lockstep({{&source, engine, on_finish}}, coster, model);
  return std::move(run.ranks.front());
}

Simulation simulate(const std::vector<RequestSpec>& requests, const EngineConfig& engine, StepCoster& coster,
                    const ModelSpec& model) {
  Simulation out;
  out.requests.resize(requests.size());
  VectorSource source(requests);
  static_cast<EngineRun&>(out) = simulate(source, engine, coster, model,
                                          [&](std::size_t index, const RequestRecord& r) { out.requests[index] = r; });
  return out;
}

}  // namespace roofline
