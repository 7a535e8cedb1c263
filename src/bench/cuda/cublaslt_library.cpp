#include "cublaslt_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>
#include <type_traits>

#include "kernels/gemm.hpp"

namespace roofline::bench::cuda {

CublasLtLibrary::CublasLtLibrary(DeviceBuffer workspace) : workspace_(std::move(workspace)) {
  const std::string soname = ROOFLINE_CUBLASLT_SONAME;
  library_ = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    library_ = dlopen((std::string(ROOFLINE_CUDA_LIBRARY_DIR) + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (library_ == nullptr) {
    throw CudaError(fmt::format("cannot load {} (not on the loader's path nor in {}): {}", soname,
                                ROOFLINE_CUDA_LIBRARY_DIR, dlerror()),
                    cudaErrorUnknown);
  }
  try {
    const auto bind = [this](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(library_, name));
      if (slot == nullptr) throw CudaError(fmt::format("cuBLASLt: no symbol {}", name), cudaErrorUnknown);
    };
    decltype(&cublasLtCreate) create = nullptr;
    decltype(&cublasLtGetVersion) get_version = nullptr;
    bind(create, "cublasLtCreate");
    bind(destroy_, "cublasLtDestroy");
    bind(get_version, "cublasLtGetVersion");
    bind(api_.matmul_desc_create, "cublasLtMatmulDescCreate");
    bind(api_.matmul_desc_destroy, "cublasLtMatmulDescDestroy");
    bind(api_.matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
    bind(api_.matrix_layout_create, "cublasLtMatrixLayoutCreate");
    bind(api_.matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
    bind(api_.preference_create, "cublasLtMatmulPreferenceCreate");
    bind(api_.preference_destroy, "cublasLtMatmulPreferenceDestroy");
    bind(api_.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
    bind(api_.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(api_.matmul, "cublasLtMatmul");
    check(create(&api_.handle), "cublasLtCreate");
    version_ = get_version();
    api_.workspace = workspace_.get();
    api_.workspace_bytes = workspace_.bytes();
    api_.plans = kernels::make_blaslt_plans(api_);
  } catch (...) {
    if (api_.handle != nullptr) destroy_(api_.handle);
    dlclose(library_);
    throw;
  }
}

CublasLtLibrary::~CublasLtLibrary() {
  api_.plans.reset();  // its descriptors are destroyed through the library's entry points
  if (api_.handle != nullptr) destroy_(api_.handle);
  dlclose(library_);
}

}  // namespace roofline::bench::cuda
