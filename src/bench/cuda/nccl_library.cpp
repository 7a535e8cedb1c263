#include "nccl_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

#include "roofline/core/error.hpp"

namespace roofline::bench::cuda {

void Nccl::check(ncclResult_t status, std::string_view what) const {
  if (status != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, error_string(status)));
}

Nccl load_nccl() {
  void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen(ROOFLINE_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    throw NoDeviceError(fmt::format("the collectives suite needs NCCL: neither libnccl.so.2 nor {} can be loaded ({})",
                                    ROOFLINE_NCCL_LIBRARY, dlerror()));
  }
  Nccl n;
  const auto bind = [library](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)> >(dlsym(library, name));
    if (slot == nullptr) throw NoDeviceError(fmt::format("NCCL lacks {}", name));
  };
  bind(n.get_version, "ncclGetVersion");
  bind(n.get_unique_id, "ncclGetUniqueId");
  bind(n.comm_init_all, "ncclCommInitAll");
  bind(n.comm_init_rank, "ncclCommInitRank");
  bind(n.comm_destroy, "ncclCommDestroy");
  bind(n.all_reduce, "ncclAllReduce");
  bind(n.all_gather, "ncclAllGather");
  bind(n.reduce_scatter, "ncclReduceScatter");
  bind(n.group_start, "ncclGroupStart");
  bind(n.group_end, "ncclGroupEnd");
  bind(n.error_string, "ncclGetErrorString");
  n.check(n.get_version(&n.version), "ncclGetVersion");
  return n;
}

}  // namespace roofline::bench::cuda
