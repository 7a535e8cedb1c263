#pragma once

// NCCL as the collectives suite uses it: loaded with dlopen when the suite runs (as cuBLAS is:
// linking it would load a large library into every command), its entry points bound by name.
// Only built where nccl.h was found at configure time (ROOFLINE_HAVE_NCCL).

#include <nccl.h>

#include <string_view>

namespace roofline::bench::cuda {

struct Nccl {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  int version = 0;

  // Throws std::runtime_error naming `what` and NCCL's error string unless status is ncclSuccess.
  void check(ncclResult_t status, std::string_view what) const;
};

// Loads NCCL (libnccl.so.2, else the library found at configure time) and binds every entry point;
// throws NoDeviceError when it cannot. The library stays loaded to the end of the process: NCCL's
// proxy threads may outlive ncclCommDestroy, and unloading the code under them would crash.
[[nodiscard]] Nccl load_nccl();

}  // namespace roofline::bench::cuda
