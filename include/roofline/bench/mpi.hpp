#pragma once

// MPI for the collectives suite across hosts: one rank per GPU, NCCL bootstrapped through MPI
// (rank 0's ncclUniqueId broadcast to all). Optional at configure time (ROOFLINE_MPI=AUTO|ON|OFF);
// without it a Session cannot be opened and says how to get one. Host code only: the CLI uses it
// for `bench --mpi-selftest` on machines without a GPU too.

#include <cstddef>
#include <cstdint>
#include <string>

namespace roofline::mpi {

// Whether this roofline was built with MPI.
[[nodiscard]] bool built();

// Whether the process was started by an MPI launcher (mpirun / mpiexec of Open MPI, MPICH or
// Slurm's PMI): the environment they set for every rank.
[[nodiscard]] bool launched();

// MPI_Init on construction, MPI_Finalize on destruction: one per process, opened by the command
// that needs it. Every call is collective over MPI_COMM_WORLD unless it says otherwise.
class Session {
 public:
  // Throws NoDeviceError (exit code 3) when built without MPI.
  Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  // This rank's index among the ranks of its host (picks the GPU: local_rank % devices).
  [[nodiscard]] int local_rank() const { return local_rank_; }
  [[nodiscard]] int local_size() const { return local_size_; }
  [[nodiscard]] const std::string& host() const { return host_; }

  void broadcast(void* data, std::size_t bytes, int root = 0) const;
  [[nodiscard]] double max(double value) const;
  [[nodiscard]] std::int64_t max(std::int64_t value) const;
  [[nodiscard]] std::int64_t sum(std::int64_t value) const;
  void barrier() const;
  // Ends every rank (MPI_Abort): after a failure that leaves other ranks waiting.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::string host_;
};

// `bench --mpi-selftest`: rank 0 broadcasts a token, every rank sums its rank and the token it
// received; rank 0 returns one line saying how many ranks talked (others return an empty line).
// Throws CheckFailed when a rank got another token or the sums disagree.
[[nodiscard]] std::string selftest(const Session& session);

}  // namespace roofline::mpi
