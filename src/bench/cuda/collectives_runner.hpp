#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "roofline/bench/collectives_suite.hpp"
#include "roofline/bench/mpi.hpp"
#include "roofline/model/comm.hpp"

namespace roofline::bench::cuda {

// Whether this build can run the suite (NCCL's header was found at configure time).
[[nodiscard]] bool collectives_built();
// Why the suite cannot run in this build ("not built with NCCL ..."); empty where it can.
[[nodiscard]] std::string collectives_missing();

// The ranks a run spans: the MPI world under MPI, else every visible GPU of this host.
[[nodiscard]] int collective_ranks(const mpi::Session* session);

// Runs the cases through NCCL: under MPI one GPU per rank (`device`, chosen by the caller), else
// one communicator per visible GPU driven by this thread (ncclCommInitAll and group calls). Every
// rank records the same results (times agreed as the slowest rank's per sample). `link` is the
// model's link for the side-by-side prediction.
void run_collectives_suite(const std::vector<const collectives::Case*>& cases, const TimingPolicy& policy,
                           const mpi::Session* session, int device, const std::optional<LinkSpec>& link,
                           Recorder& recorder, std::vector<std::string>& notes);

}  // namespace roofline::bench::cuda
