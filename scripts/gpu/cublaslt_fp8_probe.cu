// Which condition makes cublasLtMatmul refuse an FP8 (e4m3 x e4m3 -> bf16) product that
// torch._scaled_mm runs on the same GPU? One product, called from a baseline set-up (PyTorch's: the
// legacy stream, a 1 MiB workspace, one scale buffer for both operands, C null, no alignment
// preferences) and from roofline's (a non-blocking stream, 32 MiB, the two scales 4 bytes apart,
// C = D, alignment preferences), then with one condition changed at a time. cuBLASLt is loaded
// with dlopen, as roofline loads it. Prints one line per variant: its status and the first
// algorithm that ran. A diagnostic for docs/results, not part of the build:
//   nvcc -std=c++17 -arch=sm_90a -O2 scripts/gpu/cublaslt_fp8_probe.cu -o probe -ldl && ./probe
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                               \
  do {                                                              \
    cudaError_t e_ = (x);                                           \
    if (e_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                 \
    }                                                               \
  } while (0)

struct Lt {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtGetVersion) version;
};

template <class F>
void bind(void* lib, F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "no symbol %s\n", name);
    std::exit(1);
  }
}

struct Variant {
  const char* name;
  bool nonblocking_stream;
  std::size_t workspace;
  int b_scale_offset_floats;  // from the a scale; 0 = the same address
  bool pass_c;
  bool alignment_prefs;
  bool pass_algo_workspace;  // the algorithm's own workspace size (else the whole workspace)
  bool fast_accum;
  bool scale_modes;
  int m;
};

int main() {
  void* lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("/usr/local/cuda/lib64/libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  Lt lt{};
  bind(lib, lt.create, "cublasLtCreate");
  bind(lib, lt.desc_create, "cublasLtMatmulDescCreate");
  bind(lib, lt.desc_destroy, "cublasLtMatmulDescDestroy");
  bind(lib, lt.desc_set, "cublasLtMatmulDescSetAttribute");
  bind(lib, lt.layout_create, "cublasLtMatrixLayoutCreate");
  bind(lib, lt.pref_create, "cublasLtMatmulPreferenceCreate");
  bind(lib, lt.pref_set, "cublasLtMatmulPreferenceSetAttribute");
  bind(lib, lt.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  bind(lib, lt.matmul, "cublasLtMatmul");
  bind(lib, lt.version, "cublasLtGetVersion");
  CHECK_CUDA(cudaSetDevice(0));
  cublasLtHandle_t handle = nullptr;
  if (lt.create(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  std::printf("cuBLASLt version %zu\n", lt.version());

  const int n = 4096, k = 4096, max_m = 512;
  void *a = nullptr, *b = nullptr, *d = nullptr, *ws = nullptr;
  float* scales = nullptr;
  CHECK_CUDA(cudaMalloc(&a, std::size_t(max_m) * k));
  CHECK_CUDA(cudaMalloc(&b, std::size_t(n) * k));
  CHECK_CUDA(cudaMalloc(&d, std::size_t(max_m) * n * 2));
  CHECK_CUDA(cudaMalloc(&ws, std::size_t(32) << 20));
  CHECK_CUDA(cudaMalloc(&scales, 256 * sizeof(float)));
  CHECK_CUDA(cudaMemset(a, 0x38, std::size_t(max_m) * k));  // e4m3 0x38 = 1.0
  CHECK_CUDA(cudaMemset(b, 0x38, std::size_t(n) * k));
  std::vector<float> ones(256, 1.0f);
  CHECK_CUDA(cudaMemcpy(scales, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t nonblocking = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));

  const Variant torch_like{"torch-like baseline", false, 1 << 20, 0, false, false, true, true, false, 256};
  const Variant roofline_like{"roofline-like baseline", true, 32 << 20, 1, true, true, false, true, false, 256};
  std::vector<Variant> variants{torch_like, roofline_like};
  auto from = [&](Variant v, const char* name) {
    v.name = name;
    return v;
  };
  Variant v;
  v = from(torch_like, "torch-like, non-blocking stream"), v.nonblocking_stream = true, variants.push_back(v);
  v = from(torch_like, "torch-like, 32 MiB workspace"), v.workspace = 32 << 20, variants.push_back(v);
  v = from(torch_like, "torch-like, workspace 0"), v.workspace = 0, variants.push_back(v);
  v = from(torch_like, "torch-like, b scale +4 B"), v.b_scale_offset_floats = 1, variants.push_back(v);
  v = from(torch_like, "torch-like, b scale +16 B"), v.b_scale_offset_floats = 4, variants.push_back(v);
  v = from(torch_like, "torch-like, b scale +256 B"), v.b_scale_offset_floats = 64, variants.push_back(v);
  v = from(torch_like, "torch-like, C = D"), v.pass_c = true, variants.push_back(v);
  v = from(torch_like, "torch-like, alignment prefs"), v.alignment_prefs = true, variants.push_back(v);
  v = from(torch_like, "torch-like, whole workspace size passed"), v.pass_algo_workspace = false, variants.push_back(v);
  v = from(torch_like, "torch-like, exact accumulation"), v.fast_accum = false, variants.push_back(v);
  v = from(torch_like, "torch-like, scale modes stated"), v.scale_modes = true, variants.push_back(v);
  v = from(torch_like, "torch-like, m 16"), v.m = 16, variants.push_back(v);
  v = from(roofline_like, "roofline-like, b scale +256 B"), v.b_scale_offset_floats = 64, variants.push_back(v);
  v = from(roofline_like, "roofline-like, algorithm's workspace passed"), v.pass_algo_workspace = true,
  variants.push_back(v);
  v = from(roofline_like, "roofline-like, legacy stream"), v.nonblocking_stream = false, variants.push_back(v);
  v = from(roofline_like, "roofline-like, C null"), v.pass_c = false, variants.push_back(v);
  v = from(roofline_like, "roofline-like, no alignment prefs"), v.alignment_prefs = false, variants.push_back(v);
  v = from(roofline_like, "roofline-like, scale +256, algo ws, C null"), v.b_scale_offset_floats = 64,
  v.pass_algo_workspace = true, v.pass_c = false, variants.push_back(v);

  for (const Variant& var : variants) {
    cublasLtMatmulDesc_t desc = nullptr;
    lt.desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    const std::int8_t fast = var.fast_accum ? 1 : 0;
    const float* a_scale = scales;
    const float* b_scale = scales + var.b_scale_offset_floats;
    lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
    lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn));
    lt.desc_set(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast));
    lt.desc_set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale, sizeof(b_scale));
    lt.desc_set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale, sizeof(a_scale));
    if (var.scale_modes) {
      const std::int32_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
      lt.desc_set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &scalar, sizeof(scalar));
      lt.desc_set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &scalar, sizeof(scalar));
    }
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    lt.layout_create(&la, CUDA_R_8F_E4M3, k, n, k);
    lt.layout_create(&lb, CUDA_R_8F_E4M3, k, var.m, k);
    lt.layout_create(&ld, CUDA_R_16BF, n, var.m, n);
    cublasLtMatmulPreference_t pref = nullptr;
    lt.pref_create(&pref);
    const std::uint64_t wsb = var.workspace;
    lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb));
    if (var.alignment_prefs) {
      const std::uint32_t align = 256;
      for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        lt.pref_set(pref, attr, &align, sizeof(align));
    }
    cublasLtMatmulHeuristicResult_t results[16] = {};
    int found = 0;
    const cublasStatus_t hs = lt.heuristic(handle, desc, la, lb, ld, ld, pref, 16, results, &found);
    cudaStream_t stream = var.nonblocking_stream ? nonblocking : nullptr;
    int ran = -1;
    int first_status = -1;
    int last_status = -1;
    for (int i = 0; i < found; ++i) {
      const float alpha = 1.0f, beta = 0.0f;
      const std::size_t pass_ws = var.pass_algo_workspace ? results[i].workspaceSize : var.workspace;
      const cublasStatus_t s = lt.matmul(handle, desc, &alpha, b, la, a, lb, &beta, var.pass_c ? d : nullptr, ld, d, ld,
                                         &results[i].algo, var.workspace > 0 ? ws : nullptr, pass_ws, stream);
      if (i == 0) first_status = s;
      last_status = s;
      if (s == CUBLAS_STATUS_SUCCESS) {
        ran = i;
        break;
      }
    }
    const cudaError_t sync = cudaDeviceSynchronize();
    float first = 0;
    if (ran >= 0) {
      __nv_bfloat16 v0;
      cudaMemcpy(&v0, d, 2, cudaMemcpyDeviceToHost);
      first = __bfloat162float(v0);
    }
    std::printf("%-48s heuristic %d (%d algos, ws[0] %zu)  first %d  last %d  ran %d  sync %s  d[0] %.0f (want %d)\n",
                var.name, int(hs), found, found > 0 ? results[0].workspaceSize : 0, first_status, last_status, ran,
                cudaGetErrorString(sync), first, k);
    lt.desc_destroy(desc);
  }
  return 0;
}
