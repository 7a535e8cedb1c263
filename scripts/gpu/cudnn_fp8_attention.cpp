// cuDNN's FP8 SDPA forward (e4m3 Q, K, V with per-tensor descales) through the cuDNN frontend's C++
// graph API: the library side of issue 21's FP8 flash-attention comparison, where the machine's cuDNN
// has the engine but no Python binding to reach it (docs/results/2026-12-03-h200-flash-fp8).
//
//   cudnn_fp8_attention OUT.json
//
// Built on the GPU machine by scripts/gpu/run-attention.sh fp8 against the cuDNN frontend's headers
// (github.com/NVIDIA/cudnn-frontend, include/, header-only; not part of this project: the script
// finds them at $CUDNN_FRONTEND_INCLUDE) and the cuDNN that PyTorch ships (nvidia/cudnn/{include,lib}).
//
// The shapes are roofline's FP8 attention cases (include/roofline/bench/compute_suite.hpp), laid out
// [batch][heads][seq][d] as roofline's kernel reads them, inputs uniform as its runner fills them
// (q up to 2, K and V up to 1) rounded to e4m3, descales q 0.5, k 3, v 0.25. cuDNN on Hopper writes
// O in e4m3; scale_o = 16 keeps |O| <= 4 in e4m3's normal range. P is taken to e4m3 as 448 P
// (scale_s 448, descale_s 1/448). Each shape is checked on sampled rows against float64 attention of
// the dequantised inputs (relative error below 0.1: e4m3 rounding of P and of O), then timed with
// CUDA events around loops of launches (about 20 ms each), the median of 9 loops after 2 warm-ups.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <cudnn_frontend.h>

namespace fe = cudnn_frontend;

namespace {

constexpr float kDescaleQ = 0.5F;
constexpr float kDescaleK = 3.0F;
constexpr float kDescaleV = 0.25F;
constexpr float kScaleS = 448.0F;
constexpr float kScaleO = 16.0F;
constexpr int kSamples = 9;

struct Shape {
  int64_t batch, heads, kv_heads, seq, head_dim;
  bool causal;
};

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cudnn_fp8_attention: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// The value of an e4m3 byte (bias 7, subnormals, 0x7F and 0xFF NaN).
double e4m3_value(uint8_t bits) {
  const int sign = bits >> 7;
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return NAN;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}

// The nearest e4m3 byte to x (round to nearest even, saturating at 448).
uint8_t e4m3_of(double x) {
  static const std::vector<double> values = [] {
    std::vector<double> v(128);
    for (int b = 0; b < 127; ++b) v[static_cast<std::size_t>(b)] = e4m3_value(static_cast<uint8_t>(b));
    v[127] = INFINITY;
    return v;
  }();
  const uint8_t sign = x < 0 ? 0x80 : 0;
  const double a = std::min(std::fabs(x), 448.0);
  int best = 0;
  for (int b = 1; b < 127; ++b) {
    if (std::fabs(values[static_cast<std::size_t>(b)] - a) < std::fabs(values[static_cast<std::size_t>(best)] - a) ||
        (std::fabs(values[static_cast<std::size_t>(b)] - a) == std::fabs(values[static_cast<std::size_t>(best)] - a) &&
         (b & 1) == 0)) {
      best = b;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

// Uniform e4m3 values in [-scale, scale) from a 64-bit LCG, through a 4096-entry table of roundings.
std::vector<uint8_t> uniform_e4m3(std::size_t count, double scale, uint64_t seed) {
  std::vector<uint8_t> table(4096);
  for (int i = 0; i < 4096; ++i) table[static_cast<std::size_t>(i)] = e4m3_of(((i + 0.5) / 2048.0 - 1.0) * scale);
  std::vector<uint8_t> out(count);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = table[(state >> 40) & 4095];
  }
  return out;
}

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check_cuda(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 1)), "malloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Relative error of O (e4m3, times 1 / scale_o) on 4 query rows of the first and last (b, h) against
// float64 attention of the dequantised inputs.
double sampled_error(const Shape& s, const std::vector<uint8_t>& q, const std::vector<uint8_t>& k,
                     const std::vector<uint8_t>& v, const std::vector<uint8_t>& o) {
  const int64_t n = s.seq, d = s.head_dim, group = s.heads / s.kv_heads;
  double num = 0, den = 0;
  for (int64_t bh : {int64_t{0}, s.batch * s.heads - 1}) {
    const int64_t kv = (bh / s.heads) * s.kv_heads + (bh % s.heads) / group;
    for (int64_t row : {int64_t{0}, n / 3, n / 2, n - 1}) {
      const int64_t keys = s.causal ? row + 1 : n;
      std::vector<double> score(static_cast<std::size_t>(keys));
      double top = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < d; ++t) {
          dot += e4m3_value(q[static_cast<std::size_t>((bh * n + row) * d + t)]) *
                 e4m3_value(k[static_cast<std::size_t>((kv * n + j) * d + t)]);
        }
        score[static_cast<std::size_t>(j)] = dot * kDescaleQ * kDescaleK / std::sqrt(static_cast<double>(d));
        top = std::max(top, score[static_cast<std::size_t>(j)]);
      }
      double total = 0;
      for (double& x : score) total += (x = std::exp(x - top));
      for (int64_t t = 0; t < d; ++t) {
        double want = 0;
        for (int64_t j = 0; j < keys; ++j) {
          want += score[static_cast<std::size_t>(j)] * e4m3_value(v[static_cast<std::size_t>((kv * n + j) * d + t)]);
        }
        want = want / total * kDescaleV;
        const double got = e4m3_value(o[static_cast<std::size_t>((bh * n + row) * d + t)]) / kScaleO;
        num += (got - want) * (got - want);
        den += want * want;
      }
    }
  }
  return std::sqrt(num / den);
}

std::string run_shape(cudnnHandle_t handle, const Shape& s) {
  char head[256];
  std::snprintf(head, sizeof head,
                "{\"batch\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"seq\": %lld, \"head_dim\": %lld, "
                "\"causal\": %s, \"backend\": \"cudnn_fp8\"",
                static_cast<long long>(s.batch), static_cast<long long>(s.heads), static_cast<long long>(s.kv_heads),
                static_cast<long long>(s.seq), static_cast<long long>(s.head_dim), s.causal ? "true" : "false");
  const auto not_run = [&](const std::string& why) {
    std::string detail = why.substr(0, 300);
    std::replace(detail.begin(), detail.end(), '"', '\'');
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    return std::string(head) + ", \"status\": \"not_supported\", \"detail\": \"" + detail + "\"}";
  };
  const int64_t b = s.batch, h = s.heads, hk = s.kv_heads, n = s.seq, d = s.head_dim;

  fe::graph::Graph graph;
  graph.set_io_data_type(fe::DataType_t::FP8_E4M3)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const auto tensor = [&](const char* name, int64_t heads) {
    return graph.tensor(fe::graph::Tensor_attributes()
                            .set_name(name)
                            .set_dim({b, heads, n, d})
                            .set_stride({heads * n * d, n * d, d, 1}));
  };
  auto Q = tensor("Q", h);
  auto K = tensor("K", hk);
  auto V = tensor("V", hk);
  const auto scalar = [&](const char* name) {
    return graph.tensor(fe::graph::Tensor_attributes()
                            .set_name(name)
                            .set_dim({1, 1, 1, 1})
                            .set_stride({1, 1, 1, 1})
                            .set_data_type(fe::DataType_t::FLOAT));
  };
  auto descale_q = scalar("descale_q"), descale_k = scalar("descale_k"), descale_v = scalar("descale_v");
  auto descale_s = scalar("descale_s"), scale_s = scalar("scale_s"), scale_o = scalar("scale_o");
  auto options = fe::graph::SDPA_fp8_attributes()
                     .set_name("sdpa_fp8")
                     .set_generate_stats(false)
                     .set_causal_mask(s.causal)
                     .set_attn_scale(1.0F / std::sqrt(static_cast<float>(d)));
  auto [O, stats, amax_s, amax_o] =
      graph.sdpa_fp8(Q, K, V, descale_q, descale_k, descale_v, descale_s, scale_s, scale_o, options);
  O->set_output(true).set_dim({b, h, n, d}).set_stride({h * n * d, n * d, d, 1});
  amax_s->set_output(true).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1}).set_data_type(fe::DataType_t::FLOAT);
  amax_o->set_output(true).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1}).set_data_type(fe::DataType_t::FLOAT);

  const std::vector<std::function<fe::error_t()>> steps = {
      [&] { return graph.validate(); }, [&] { return graph.build_operation_graph(handle); },
      [&] { return graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}); },
      [&] { return graph.check_support(handle); }, [&] { return graph.build_plans(handle); }};
  for (const auto& step : steps) {  // in order, stopping at the first that fails
    fe::error_t status = step();
    if (!status.is_good()) return not_run(status.get_message());
  }
  int64_t workspace_bytes = 0;
  if (!graph.get_workspace_size(workspace_bytes).is_good()) return not_run("get_workspace_size failed");

  const std::size_t q_count = static_cast<std::size_t>(b * h * n * d);
  const std::size_t kv_count = static_cast<std::size_t>(b * hk * n * d);
  const uint64_t seed = static_cast<uint64_t>(b * 100003 + n * 7 + hk + d + (s.causal ? 1 : 0));
  const std::vector<uint8_t> q = uniform_e4m3(q_count, 2.0, seed);
  const std::vector<uint8_t> k = uniform_e4m3(kv_count, 1.0, seed + 1);
  const std::vector<uint8_t> v = uniform_e4m3(kv_count, 1.0, seed + 2);
  DeviceBuffer dq(q_count), dk(kv_count), dv(kv_count), dout(q_count), ws(static_cast<std::size_t>(workspace_bytes));
  DeviceBuffer scalars(8 * sizeof(float));
  check_cuda(cudaMemcpy(dq.ptr, q.data(), q_count, cudaMemcpyHostToDevice), "upload q");
  check_cuda(cudaMemcpy(dk.ptr, k.data(), kv_count, cudaMemcpyHostToDevice), "upload k");
  check_cuda(cudaMemcpy(dv.ptr, v.data(), kv_count, cudaMemcpyHostToDevice), "upload v");
  const float values[8] = {kDescaleQ, kDescaleK, kDescaleV, 1.0F / kScaleS, kScaleS, kScaleO, 0.0F, 0.0F};
  check_cuda(cudaMemcpy(scalars.ptr, values, sizeof values, cudaMemcpyHostToDevice), "upload scales");
  float* sc = static_cast<float*>(scalars.ptr);
  std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
      {Q, dq.ptr},         {K, dk.ptr},         {V, dv.ptr},         {O, dout.ptr},
      {descale_q, sc + 0}, {descale_k, sc + 1}, {descale_v, sc + 2}, {descale_s, sc + 3},
      {scale_s, sc + 4},   {scale_o, sc + 5},   {amax_s, sc + 6},    {amax_o, sc + 7}};
  const auto run = [&] { return graph.execute(handle, pack, ws.ptr); };
  if (fe::error_t e = run(); !e.is_good()) return not_run(e.get_message());
  check_cuda(cudaDeviceSynchronize(), "first run");
  std::vector<uint8_t> out(q_count);
  check_cuda(cudaMemcpy(out.data(), dout.ptr, q_count, cudaMemcpyDeviceToHost), "download o");
  const double error = sampled_error(s, q, k, v, out);

  const double keys = s.causal ? n * (n + 1) / 2.0 : static_cast<double>(n) * n;
  const double flops = 4.0 * b * h * keys * d;
  const int launches = static_cast<int>(std::clamp(std::lround(20e-3 / (flops / 800e12)), 1L, 100L));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 2; ++i) static_cast<void>(run());
  std::vector<double> us;
  for (int sample = 0; sample < kSamples; ++sample) {
    cudaEventRecord(start);
    for (int i = 0; i < launches; ++i) static_cast<void>(run());
    cudaEventRecord(stop);
    check_cuda(cudaEventSynchronize(stop), "timing");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    us.push_back(1e3 * ms / launches);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(us.begin(), us.end());
  const double median = us[us.size() / 2];
  char tail[512];
  std::snprintf(tail, sizeof tail,
                ", \"status\": \"%s\", \"relative_error\": %.4g, \"flops\": %.6g, \"launches\": %d, \"median_us\": %.4f, "
                "\"min_us\": %.4f, \"max_us\": %.4f, \"tflops\": %.2f}",
                error < 0.1 ? "passed" : "failed", error, flops, launches, median, us.front(), us.back(),
                flops / (median * 1e-6) / 1e12);
  return std::string(head) + tail;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cudnn_fp8_attention OUT.json\n");
    return 2;
  }
  cudnnHandle_t handle;
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "cudnn_fp8_attention: cudnnCreate failed\n");
    return 1;
  }
  std::vector<Shape> shapes;
  for (bool causal : {true, false}) {
    for (int64_t n : {1024, 2048, 4096, 8192, 16384}) shapes.push_back({4, 32, 32, n, 128, causal});
    shapes.push_back({4, 32, 8, 4096, 128, causal});
    for (int64_t n : {1024, 4096, 16384}) shapes.push_back({16384 / n, 32, 32, n, 256, causal});
  }
  std::string json = "{\"cudnn\": " + std::to_string(cudnnGetVersion()) + ", \"results\": [\n";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string row = run_shape(handle, shapes[i]);
    std::fprintf(stderr, "%s\n", row.c_str());
    json += row + (i + 1 < shapes.size() ? ",\n" : "\n");
  }
  json += "]}\n";
  FILE* f = std::fopen(argv[1], "w");
  if (f == nullptr) return 1;
  std::fputs(json.c_str(), f);
  std::fclose(f);
  cudnnDestroy(handle);
  return 0;
}
