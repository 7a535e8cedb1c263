// Pools of engines and disaggregated prefill/decode (roofline/serve/pools.hpp; docs/serve.md).
#include "roofline/serve/pools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "roofline/core/error.hpp"

namespace roofline {
namespace {

// Every `stride`-th request of a stream, from `offset` on (the first read ahead: a lane may get none).
class DealtSource final : public RequestSource {
 public:
  DealtSource(std::unique_ptr<RequestSource> inner, std::int64_t stride, std::int64_t offset)
      : inner_(std::move(inner)), stride_(stride), offset_(offset) {
    ahead_ = take();
  }
  [[nodiscard]] bool empty() const { return !ahead_; }
  [[nodiscard]] std::optional<RequestSpec> next() override {
    std::optional<RequestSpec> r = ahead_;
    if (r) ahead_ = take();
    return r;
  }

 private:
  std::optional<RequestSpec> take() {
    while (std::optional<RequestSpec> r = inner_->next()) {
      const std::int64_t index = seen_++;
      if (index % stride_ == offset_) return r;
    }
    return std::nullopt;
  }
  std::unique_ptr<RequestSource> inner_;
  std::int64_t stride_;
  std::int64_t offset_;
  std::int64_t seen_ = 0;
  std::optional<RequestSpec> ahead_;
};

void add_lane(PoolRun& pool, EngineRun&& lane, bool first) {
  EngineStats& p = pool.engine;
  const EngineStats& l = lane.engine;
  const auto weighted = [&](double mean, double lane_mean) {
    const auto steps = static_cast<double>(p.steps + l.steps);
    return steps > 0 ? (mean * static_cast<double>(p.steps) + lane_mean * static_cast<double>(l.steps)) / steps : 0.0;
  };
  p.batch_mean = weighted(p.batch_mean, l.batch_mean);
  p.tokens_mean = weighted(p.tokens_mean, l.tokens_mean);
  p.kv_blocks_mean = weighted(p.kv_blocks_mean, l.kv_blocks_mean);
  p.steps += l.steps;
  p.batch_max = std::max(p.batch_max, l.batch_max);
  p.tokens_max = std::max(p.tokens_max, l.tokens_max);
  p.prefill_tokens += l.prefill_tokens;
  p.decode_tokens += l.decode_tokens;
  p.kv_blocks_peak = std::max(p.kv_blocks_peak, l.kv_blocks_peak);
  p.preemptions += l.preemptions;
  p.busy_s += l.busy_s;
  pool.itl_s.merge(lane.itl_s);
  p.dummy_steps += l.dummy_steps;
  if (lane.finished > 0) {  // an attention-DP rank dealt no request has no span of its own
    pool.start_s = pool.finished == 0 ? lane.start_s : std::min(pool.start_s, lane.start_s);
    pool.end_s = pool.finished == 0 ? lane.end_s : std::max(pool.end_s, lane.end_s);
  }
  pool.finished += lane.finished;
  pool.in_flight_peak += lane.in_flight_peak;
  pool.running_peak += l.batch_max;
  if (first) pool.timeline = std::move(lane.timeline);
}

}  // namespace

double PoolRun::utilisation() const {
  const double span = end_s - start_s;
  return span > 0 ? engine.busy_s / (static_cast<double>(lanes) * span) : 0.0;
}

PoolRun simulate_pool(const SourceFactory& source, const PoolEngines& pool, const FinishedRequest& on_finish) {
  if (pool.lanes < 1) throw InputError("serve: a pool of no engines");
  if (pool.ranks < 1 || pool.lanes % pool.ranks != 0) {
    throw std::logic_error("serve: a pool's engines are not whole replicas of its attention-DP ranks");
  }
  PoolRun out;
  out.lanes = pool.lanes;
  out.ranks = pool.ranks;
  const auto lanes = static_cast<std::size_t>(pool.lanes);
  const std::vector<RequestSpec> none;
  bool first = true;
  for (std::int64_t replica = 0; replica < pool.lanes / pool.ranks; ++replica) {
    // The replica's ranks, lanes replica x ranks on (request i to lane i mod lanes).
    std::vector<std::unique_ptr<RequestSource>> sources;
    std::vector<LockstepRank> ranks;
    bool dealt_any = false;
    for (std::int64_t rank = 0; rank < pool.ranks; ++rank) {
      const std::int64_t lane = replica * pool.ranks + rank;
      LockstepRank r;
      r.engine = pool.engine;
      bool clients = true;
      if (r.engine.concurrency) {
        // The pool's clients, dealt as the requests are: lane i gets every lanes-th.
        const std::int64_t c = *r.engine.concurrency;
        r.engine.concurrency = c / pool.lanes + (lane < c % pool.lanes ? 1 : 0);
        clients = *r.engine.concurrency > 0;
      }
      auto dealt = std::make_unique<DealtSource>(source(), pool.lanes, lane);
      if (!clients || dealt->empty()) {
        sources.push_back(std::make_unique<VectorSource>(none));
      } else {
        dealt_any = true;
        sources.push_back(std::move(dealt));
      }
      r.source = sources.back().get();
      const auto lane_index = static_cast<std::size_t>(lane);
      r.on_finish = [&on_finish, lanes, lane_index](std::size_t index, const RequestRecord& record) {
        if (on_finish) on_finish(index * lanes + lane_index, record);
      };
      ranks.push_back(std::move(r));
    }
    if (!dealt_any && !first) continue;  // fewer requests (or clients) than lanes
    LockstepRun run = simulate_lockstep(ranks, *pool.coster, *pool.model);
    out.lockstep_steps += run.steps;
    for (EngineRun& lane : run.ranks) {
      add_lane(out, std::move(lane), first);
      first = false;
    }
  }
  return out;
}

DisaggregatedRun simulate_disaggregated(const SourceFactory& source, const PoolEngines& prefill,
                                        const PoolEngines& decode, const KvLink& link,
                                        const FinishedRequest& on_finish) {
  if (prefill.engine.concurrency || decode.engine.concurrency) {
    throw InputError("--concurrency with --disaggregate: a closed loop is not modelled across two pools; give --rate");
  }
  struct Handoff {
    RequestSpec spec;
    RequestRecord prefilled;
    double decode_arrival_s = 0;
    std::size_t index = 0;
  };
  std::vector<Handoff> handoffs;
  // The full lengths, kept by index for the decode pass; the prefill pool runs each prompt and
  // its first token (which the decode pool makes again, as the client sees it there).
  std::vector<RequestSpec> specs;
  {
    std::unique_ptr<RequestSource> all = source();
    while (std::optional<RequestSpec> r = all->next()) specs.push_back(*r);
  }
  std::vector<RequestSpec> prompts = specs;
  for (RequestSpec& r : prompts) r.output = 1;
  const SourceFactory prompt_source = [&]() -> std::unique_ptr<RequestSource> {
    return std::make_unique<VectorSource>(prompts);
  };
  DisaggregatedRun out;
  handoffs.resize(specs.size());
  try {
    out.prefill = simulate_pool(prompt_source, prefill, [&](std::size_t index, const RequestRecord& r) {
      Handoff& h = handoffs.at(index);
      h.spec = specs.at(index);
      h.prefilled = r;
      h.index = index;
      const double transfer = link.transfer_s(h.spec.prompt);
      h.decode_arrival_s = r.first_token_s + transfer;
      out.prefill_s.add(r.first_token_s - r.spec.arrival_s);
      out.transfer_s.add(transfer);
    });
  } catch (const InputError& e) {
    throw InputError(fmt::format("prefill pool: {}", e.what()));
  }
  std::stable_sort(handoffs.begin(), handoffs.end(),
                   [](const Handoff& a, const Handoff& b) { return a.decode_arrival_s < b.decode_arrival_s; });
  std::vector<RequestSpec> arrivals;
  arrivals.reserve(handoffs.size());
  for (const Handoff& h : handoffs) {
    arrivals.push_back(
        {h.decode_arrival_s, h.spec.prompt, h.spec.output, std::max<std::int64_t>(0, h.spec.prompt - 1)});
  }
  const SourceFactory decodes = [&]() -> std::unique_ptr<RequestSource> {
    return std::make_unique<VectorSource>(arrivals);
  };
  try {
    out.decode = simulate_pool(decodes, decode, [&](std::size_t order, const RequestRecord& r) {
      const Handoff& h = handoffs.at(order);
      RequestRecord client;
      client.spec = h.spec;
      client.scheduled_s = h.prefilled.scheduled_s;
      client.first_token_s = r.first_token_s;
      client.finish_s = r.finish_s;
      client.preemptions = h.prefilled.preemptions + r.preemptions;
      out.decode_queue_s.add(r.scheduled_s - r.spec.arrival_s);
      if (on_finish) on_finish(h.index, client);
    });
  } catch (const InputError& e) {
    throw InputError(fmt::format("decode pool: {}", e.what()));
  }
  out.overall.itl_s = out.decode.itl_s;
  out.overall.engine = out.decode.engine;
  out.overall.engine.preemptions += out.prefill.engine.preemptions;
  out.overall.start_s = out.prefill.start_s;
  out.overall.end_s = out.decode.end_s;
  out.overall.finished = out.decode.finished;
  out.overall.in_flight_peak = out.prefill.in_flight_peak + out.decode.in_flight_peak;
  out.overall.timeline = out.decode.timeline;
  return out;
}

}  // namespace roofline
