#pragma once

// The timer `llm` uses for the ops of a step's description (decoder_step.hpp), one op at a time:
// for callers that build their own steps from described ops (serve's mixed batches of prefill
// chunks and decode tokens) and must time each op exactly as `llm` times it.

#include <memory>

#include "roofline/llm/decoder_step.hpp"
#include "roofline/llm/llm.hpp"

namespace roofline {

class OpTimer {
 public:
  // Keeps copies of `config` and `options` (the calibration `options` points to must outlive the
  // timer) and a reference to `gpu`, which must too. `tp`: the TP group the all-reduces span.
  OpTimer(const GpuSpec& gpu, const DeploymentConfig& config, const TimeOptions& options, int tp);
  OpTimer(OpTimer&&) noexcept;
  OpTimer& operator=(OpTimer&&) noexcept;
  ~OpTimer();

  // The op timed as decode_step and prefill time it: roofline, calibrated, or over its link.
  [[nodiscard]] StepOp time(const DecoderOp& op) const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> impl_;
};

}  // namespace roofline
