#pragma once

// Pools of engines (docs/serve.md section 7): replicas and attention-DP ranks, and a prefill pool
// handing its requests to a decode pool (disaggregated prefill/decode).
//
// A pool is `lanes` identical engines (replicas x attention-DP ranks; each rank schedules its own
// requests in its own KV blocks, as SGLang's and TensorRT-LLM's DP-attention schedulers do), the
// workload dealt round-robin: request i to lane i mod lanes (SGLang's round_robin load balancing,
// Dynamo's round-robin router). The replicas run on their own; the ranks of one replica step in
// lockstep (simulate_lockstep): the slowest rank's step, its MoE layers over every rank's tokens,
// sets every rank's, and a rank with nothing scheduled runs a dummy step.
//
// Disaggregated: every request is prefilled in the prefill pool (an engine run of the prompt and
// one output token, its own queue), then its KV moves over the link between the pools (the
// model's KV bytes per token x prompt tokens, over bandwidth, plus the link's latency; transfers
// do not share the link), then it joins the decode pool's queue with its cache (all but the last
// prompt token, RequestSpec::cached_on_arrival) and is decoded there. TTFT ends at the decode
// pool's first step of the request, which yields the first output token (vLLM's KV connectors and
// Dynamo: the decode worker streams every output token); TPOT counts decode steps only.

#include <cstdint>
#include <functional>
#include <memory>

#include "roofline/llm/disaggregation.hpp"  // KvLink: the link between the pools
#include "roofline/serve/engine.hpp"

namespace roofline {

// Makes the workload's stream afresh (each lane reads its own share of it).
using SourceFactory = std::function<std::unique_ptr<RequestSource>()>;

// One pool's engines: their settings (concurrency: the pool's, split over the lanes), their step
// cost and model (kept by reference), and how many.
struct PoolEngines {
  EngineConfig engine;
  StepCoster* coster = nullptr;
  const ModelSpec* model = nullptr;
  std::int64_t lanes = 1;
  std::int64_t ranks = 1;  // attention-DP ranks per replica, in lockstep (lanes: whole replicas)
};

// The pool's run over its lanes: sums (steps, tokens, busy time, preemptions, dummy steps, requests
// in flight at their peaks), maxima (batch, tokens per step, KV blocks of one lane), means weighted
// by steps, every inter-token gap; the timeline is lane 0's.
struct PoolRun : EngineRun {
  std::int64_t lanes = 1;
  std::int64_t ranks = 1;
  std::int64_t running_peak = 0;    // sum over the lanes of each one's largest batch
  std::int64_t lockstep_steps = 0;  // the replicas' steps (each of `ranks` rank steps, busy or dummy)
  // Busy time over (lanes x (first arrival to last finish)).
  [[nodiscard]] double utilisation() const;
};

// Runs the stream through the pool; `on_finish` gets each request's index in the workload.
// InputError as simulate() does (the pool's KV cache, the model's context).
[[nodiscard]] PoolRun simulate_pool(const SourceFactory& source, const PoolEngines& pool,
                                    const FinishedRequest& on_finish);

struct DisaggregatedRun {
  PoolRun prefill;
  PoolRun decode;
  EngineRun overall;       // first arrival to last finish; the decode pool's gaps; both pools' preemptions
  Distribution prefill_s;  // arrival to the end of the prefill (the prefill pool's queue and prefill)
  Distribution transfer_s;
  Distribution decode_queue_s;  // arrival at the decode pool to its first step there
};

// Every request through both pools. `on_finish` gets the request as the client sees it: arrival,
// scheduled (in the prefill pool), first output token and finish (in the decode pool), the
// preemptions of both. Closed-loop concurrency is refused (InputError): a client's next request
// depends on the decode pool's finishes, which this two-pass run does not feed back. Memory: one
// record per request between the passes.
[[nodiscard]] DisaggregatedRun simulate_disaggregated(const SourceFactory& source, const PoolEngines& prefill,
                                                      const PoolEngines& decode, const KvLink& link,
                                                      const FinishedRequest& on_finish);

}  // namespace roofline
