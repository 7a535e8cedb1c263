// The collectives suite through NCCL (see roofline/collectives_suite.hpp and docs/collectives.md).
// NCCL is loaded when the suite runs (nccl_library.hpp). NVLink multicast (NVLS) is switched off
// unless the user set NCCL_NVLS_ENABLE: on shared hosts it can break the machine, and the ring/tree
// algorithms the model describes do not use it.
#include "collectives_runner.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "kernels/collectives.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/collective_tables.hpp"

#if ROOFLINE_HAVE_NCCL
#include "nccl_library.hpp"
#endif

namespace roofline::bench::cuda {

#if !ROOFLINE_HAVE_NCCL

bool collectives_built() {
  return false;
}

std::string collectives_missing() {
  return "the collectives suite was not built with NCCL: nccl.h was not found at configure time; install NCCL into "
         "the CUDA toolkit (or pass -DROOFLINE_NCCL_INCLUDE_DIR=DIR) and reconfigure";
}

int collective_ranks(const mpi::Session* session) {
  if (session != nullptr) return session->size();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

void run_collectives_suite(const std::vector<const collectives::Case*>& /*cases*/, const TimingPolicy& /*policy*/,
                           const mpi::Session* /*session*/, int /*device*/, const std::optional<LinkSpec>& /*link*/,
                           Recorder& /*recorder*/, std::vector<std::string>& /*notes*/) {
  throw NoDeviceError(collectives_missing());
}

#else

namespace {

namespace col = collectives;

// One GPU of the collective as this process drives it.
struct Member {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  unsigned long long* counters = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

class Group {
 public:
  Group(const Nccl& nccl, const mpi::Session* session, int device, double timeout_s)
      : nccl_(nccl), session_(session), timeout_s_(timeout_s) {
    if (session != nullptr) {
      members_.push_back(Member{.device = device, .rank = session->rank()});
      ranks_ = session->size();
      ncclUniqueId id{};
      if (session->rank() == 0) nccl_.check(nccl_.get_unique_id(&id), "ncclGetUniqueId");
      session->broadcast(&id, sizeof id);
      check(cudaSetDevice(device), "cudaSetDevice");
      nccl_.check(nccl_.comm_init_rank(&members_[0].comm, ranks_, id, session->rank()), "ncclCommInitRank");
    } else {
      int count = 0;
      check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
      ranks_ = count;
      std::vector<ncclComm_t> comms(static_cast<std::size_t>(count));
      std::vector<int> devices(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i) devices[static_cast<std::size_t>(i)] = i;
      nccl_.check(nccl_.comm_init_all(comms.data(), count, devices.data()), "ncclCommInitAll");
      for (int i = 0; i < count; ++i) {
        members_.push_back(Member{.device = i, .rank = i, .comm = comms[static_cast<std::size_t>(i)]});
      }
    }
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreate(&m.start), "cudaEventCreate");
      check(cudaEventCreate(&m.stop), "cudaEventCreate");
      check(cudaMalloc(reinterpret_cast<void**>(&m.counters), 2 * sizeof(unsigned long long)), "cudaMalloc");
    }
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() {
    if (hung_) return;  // a stuck collective: nothing may wait on it
    for (Member& m : members_) {
      cudaSetDevice(m.device);
      if (m.comm != nullptr) nccl_.comm_destroy(m.comm);
      release(m);
      if (m.counters != nullptr) cudaFree(m.counters);
      if (m.start != nullptr) cudaEventDestroy(m.start);
      if (m.stop != nullptr) cudaEventDestroy(m.stop);
      if (m.stream != nullptr) cudaStreamDestroy(m.stream);
    }
  }

  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] const std::vector<Member>& members() const { return members_; }

  // Free device memory of the tightest GPU of the collective (every rank agrees under MPI).
  [[nodiscard]] std::int64_t free_bytes() const {
    std::int64_t least = -1;
    for (const Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      std::size_t free = 0;
      std::size_t total = 0;
      check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
      const auto f = static_cast<std::int64_t>(free);
      if (least < 0 || f < least) least = f;
    }
    return session_ != nullptr ? -session_->max(-least) : least;
  }

  void allocate(std::int64_t send_bytes, std::int64_t recv_bytes) {
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      check(cudaMalloc(&m.send, static_cast<std::size_t>(std::max<std::int64_t>(send_bytes, 4))), "cudaMalloc");
      check(cudaMalloc(&m.recv, static_cast<std::size_t>(std::max<std::int64_t>(recv_bytes, 4))), "cudaMalloc");
    }
  }

  // One collective on every member, as one NCCL group.
  void launch(Collective op, const col::Buffers& b) const {
    nccl_.check(nccl_.group_start(), "ncclGroupStart");
    for (const Member& m : members_) {
      ncclResult_t r = ncclSuccess;
      switch (op) {
        case Collective::all_reduce:
          r = nccl_.all_reduce(m.send, m.recv, static_cast<std::size_t>(b.send_elements), ncclFloat32, ncclSum, m.comm,
                               m.stream);
          break;
        case Collective::all_gather:
          r = nccl_.all_gather(m.send, m.recv, static_cast<std::size_t>(b.send_elements), ncclFloat32, m.comm,
                               m.stream);
          break;
        case Collective::reduce_scatter:
          r = nccl_.reduce_scatter(m.send, m.recv, static_cast<std::size_t>(b.recv_elements), ncclFloat32, ncclSum,
                                   m.comm, m.stream);
          break;
      }
      if (r != ncclSuccess) {
        (void)nccl_.group_end();
        nccl_.check(r, fmt::format("nccl {}", name_of(op)));
      }
    }
    nccl_.check(nccl_.group_end(), "ncclGroupEnd");
  }

  // Waits for every member's stream, within the timeout.
  void wait(std::string_view what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (const Member& m : members_) {
      while (true) {
        const cudaError_t status = cudaStreamQuery(m.stream);
        if (status == cudaSuccess) break;
        if (status != cudaErrorNotReady) check(status, what);
        if (std::chrono::steady_clock::now() > deadline) {
          hung_ = true;
          throw GpuHang(fmt::format("{}: the collective did not finish within {:.0f} s", what, timeout_s_));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }

  // Fills the inputs, poisons the outputs, runs the collective once and checks every output
  // element on the device. Returns the mismatches summed over all ranks and the first (rank,
  // index) found.
  std::string verify(Collective op, const col::Buffers& b) {
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      kernels::fill_collective_input(static_cast<float*>(m.send), b.send_elements, m.rank, m.stream);
      check(cudaMemsetAsync(m.recv, 0xFF, static_cast<std::size_t>(b.recv_elements * col::element_bytes), m.stream),
            "cudaMemsetAsync");
    }
    wait("input fill");
    launch(op, b);
    wait("verification run");
    const auto kind = static_cast<kernels::CollectiveKind>(op);
    std::int64_t wrong = 0;
    std::string first;
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      kernels::check_collective_output(static_cast<const float*>(m.recv), b.recv_elements, kind, m.rank, ranks_,
                                       b.chunk_elements, m.counters, m.stream);
    }
    wait("output check");
    for (Member& m : members_) {
      unsigned long long counters[2] = {0, 0};
      check(cudaSetDevice(m.device), "cudaSetDevice");
      check(cudaMemcpy(counters, m.counters, sizeof counters, cudaMemcpyDeviceToHost), "download");
      if (counters[0] != 0 && first.empty()) first = fmt::format("rank {} first at element {}", m.rank, counters[1]);
      wrong += static_cast<std::int64_t>(counters[0]);
    }
    const std::int64_t total_wrong = session_ != nullptr ? session_->sum(wrong) : wrong;
    const std::int64_t elements = static_cast<std::int64_t>(ranks_) * b.recv_elements;
    if (total_wrong != 0) {
      throw VerificationFailed(fmt::format("{} of {} output elements wrong over {} ranks{}", total_wrong, elements,
                                           ranks_, first.empty() ? "" : " (" + first + ")"));
    }
    return fmt::format("every output element exact on every rank ({} elements over {} ranks; inputs: integers -8..8)",
                       elements, ranks_);
  }

  // Seconds per collective of `batch` back-to-back launches: CUDA events on every member's
  // stream, the slowest member (and rank, under MPI) counting, as nccl-tests count.
  double sample(Collective op, const col::Buffers& b, int batch) {
    if (session_ != nullptr) session_->barrier();
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      check(cudaEventRecord(m.start, m.stream), "cudaEventRecord");
    }
    for (int i = 0; i < batch; ++i) launch(op, b);
    for (Member& m : members_) {
      check(cudaSetDevice(m.device), "cudaSetDevice");
      check(cudaEventRecord(m.stop, m.stream), "cudaEventRecord");
    }
    wait("timed collectives");
    double slowest = 0;
    for (Member& m : members_) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, m.start, m.stop), "cudaEventElapsedTime");
      slowest = std::max(slowest, static_cast<double>(ms) * 1e-3);
    }
    if (session_ != nullptr) slowest = session_->max(slowest);
    return slowest / batch;
  }

 private:
  static void release(Member& m) {
    if (m.send != nullptr) cudaFree(m.send);
    if (m.recv != nullptr) cudaFree(m.recv);
    m.send = m.recv = nullptr;
  }

  const Nccl& nccl_;
  const mpi::Session* session_;
  double timeout_s_;
  int ranks_ = 0;
  bool hung_ = false;
  std::vector<Member> members_;
};

Timing time_case(Group& group, Collective op, const col::Buffers& b, const TimingPolicy& policy) {
  const double first = std::max(group.sample(op, b, 1), 1e-7);
  const int warmup = warmup_launches(policy, first);
  const double estimate = std::max(group.sample(op, b, warmup), 1e-7);
  const SamplePlan plan = sample_plan(policy, estimate, 1);
  std::vector<double> per_launch;
  per_launch.reserve(static_cast<std::size_t>(plan.samples));
  for (int s = 0; s < plan.samples; ++s) per_launch.push_back(group.sample(op, b, plan.batch));
  return Timing{summarize(per_launch), plan.batch, false};
}

// Memory NCCL and the runtime need besides the buffers.
constexpr std::int64_t memory_margin = std::int64_t{2} << 30;

}  // namespace

bool collectives_built() {
  return true;
}

std::string collectives_missing() {
  return {};
}

int collective_ranks(const mpi::Session* session) {
  if (session != nullptr) return session->size();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

void run_collectives_suite(const std::vector<const col::Case*>& cases, const TimingPolicy& policy,
                           const mpi::Session* session, int device, const std::optional<LinkSpec>& link,
                           Recorder& recorder, std::vector<std::string>& notes) {
  const int ranks = collective_ranks(session);
  if (ranks < 2) {
    for (const col::Case* c : cases) {
      BenchmarkResult r = col::make_result(*c, ranks, link);
      r.disposition = Disposition::not_supported;
      r.detail = "needs at least 2 GPUs (one host's GPUs, or one GPU per rank under mpirun)";
      recorder.record(std::move(r));
    }
    return;
  }
  // NVLink multicast stays off unless asked for (see the top of this file).
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const Nccl nccl = load_nccl();
  Group group(nccl, session, device, policy.timeout_s);
  notes.push_back(fmt::format("collectives: NCCL {}.{}.{} over {} ranks ({}), NCCL_NVLS_ENABLE={}",
                              nccl.version / 10000, nccl.version / 100 % 100, nccl.version % 100, ranks,
                              session != nullptr ? fmt::format("MPI, {} per host", session->local_size())
                                                 : "one process driving every GPU of this host",
                              std::getenv("NCCL_NVLS_ENABLE")));

  // The largest buffers any case that fits needs, allocated once and reused.
  const std::int64_t budget = group.free_bytes() - memory_margin;
  std::vector<const col::Case*> fitting;
  std::int64_t send_max = 0;
  std::int64_t recv_max = 0;
  for (const col::Case* c : cases) {
    const col::Buffers b = col::buffers(c->op, c->bytes, ranks);
    const std::int64_t send = b.send_elements * col::element_bytes;
    const std::int64_t recv = b.recv_elements * col::element_bytes;
    if (std::max(send, send_max) + std::max(recv, recv_max) > budget) continue;
    send_max = std::max(send, send_max);
    recv_max = std::max(recv, recv_max);
    fitting.push_back(c);
  }
  group.allocate(send_max, recv_max);

  for (const col::Case* c : cases) {
    BenchmarkResult r = col::make_result(*c, ranks, link);
    const col::Buffers b = col::buffers(c->op, c->bytes, ranks);
    if (b.bytes == 0) {
      r.disposition = Disposition::not_supported;
      r.detail = fmt::format("{} B do not split into {} ranks of fp32 elements", c->bytes, ranks);
    } else if (std::find(fitting.begin(), fitting.end(), c) == fitting.end()) {
      r.disposition = Disposition::not_run;
      r.detail = fmt::format("needs {} of device memory per GPU (send + receive); {} free after a {} margin",
                             size_text(static_cast<double>((b.send_elements + b.recv_elements) * col::element_bytes)),
                             size_text(static_cast<double>(std::max<std::int64_t>(budget, 0))),
                             size_text(static_cast<double>(memory_margin)));
    } else {
      try {
        r.detail = group.verify(c->op, b);
        if (!policy.check_only) r.timing = time_case(group, c->op, b, policy);
        r.disposition = Disposition::passed;
      } catch (const GpuHang&) {
        throw;
      } catch (const VerificationFailed& e) {
        r.disposition = Disposition::failed;
        r.detail = e.what();
      } catch (const std::exception& e) {
        r.disposition = Disposition::failed;
        r.detail = e.what();
      }
    }
    recorder.record(std::move(r));
  }
}

#endif

}  // namespace roofline::bench::cuda
