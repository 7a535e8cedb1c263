#include "roofline/bench/mpi.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "roofline/core/error.hpp"

#if ROOFLINE_HAVE_MPI
#include <mpi.h>
#endif

namespace roofline::mpi {

bool launched() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

#if ROOFLINE_HAVE_MPI

namespace {
void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(fmt::format("{} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}
}  // namespace

bool built() {
  return true;
}

Session::Session() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized != 0) throw std::logic_error("MPI is already initialized: one mpi::Session per process");
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
  MPI_Comm_free(&local);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  host_.assign(name, static_cast<std::size_t>(length));
}

Session::~Session() {
  MPI_Finalize();
}

void Session::broadcast(void* data, std::size_t bytes, int root) const {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

double Session::max(double value) const {
  double out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

std::int64_t Session::max(std::int64_t value) const {
  std::int64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

std::int64_t Session::sum(std::int64_t value) const {
  std::int64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

void Session::barrier() const {
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void Session::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#else

bool built() {
  return false;
}

Session::Session() {
  throw NoDeviceError(
      "this roofline was built without MPI, so it cannot run one rank per GPU; install an MPI (Debian: "
      "libopenmpi-dev openmpi-bin) and reconfigure (cmake -DROOFLINE_MPI=ON)");
}

Session::~Session() = default;
void Session::broadcast(void* /*data*/, std::size_t /*bytes*/, int /*root*/) const {}
double Session::max(double value) const {
  return value;
}
std::int64_t Session::max(std::int64_t value) const {
  return value;
}
std::int64_t Session::sum(std::int64_t value) const {
  return value;
}
void Session::barrier() const {}
void Session::abort(int code) const {
  std::_Exit(code);
}

#endif

std::string selftest(const Session& session) {
  // A token only rank 0 knows: the other ranks see it only if the broadcast really happened.
  std::int64_t token = session.rank() == 0 ? 0x5eed1234 + session.size() : -1;
  session.broadcast(&token, sizeof token);
  const std::int64_t expected = 0x5eed1234 + session.size();
  const std::int64_t wrong = session.sum(token == expected ? 0 : 1);
  const std::int64_t ranks_sum = session.sum(session.rank());
  const std::int64_t n = session.size();
  if (wrong != 0 || ranks_sum != n * (n - 1) / 2) {
    throw CheckFailed(fmt::format("MPI selftest: {} rank(s) received another token; sum of ranks {} (expected {})",
                                  wrong, ranks_sum, n * (n - 1) / 2));
  }
  if (session.rank() != 0) return {};
  return fmt::format("MPI selftest: {} ranks, token {:#x} broadcast by rank 0 and received by all, sum of ranks {}", n,
                     token, ranks_sum);
}

}  // namespace roofline::mpi
