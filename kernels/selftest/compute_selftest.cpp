// compute_selftest: runs every compute kernel (GEMM ladder, flash and standard attention, the
// compute-ceiling probes) at small and medium sizes, verifies each result against a reference,
// times the verified ones with CUDA events, and prints one line per case (and JSON lines to --json).
//
//   compute_selftest [--quick | --sanitize] [--json FILE] [--only TEXT] [--device N]
//
// Exit codes: 0 all verified, 1 a verification failed or a CUDA error occurred, 2 bad arguments,
// 77 no CUDA device (the CTest SKIP code).
//
// Verification: random inputs (never zeros), the output poisoned with NaN before every checked run,
// then (GEMM) the whole output compared with cuBLAS plus sampled entries against a float64 host dot
// product, (attention) sampled rows against a float64 host attention and the whole output checked
// for unwritten/non-finite elements, (probes) the exactly predictable result. The error is the
// normwise relative error ||out - ref|| / ||ref||. A case that fails is reported and not timed.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attention.hpp"
#include "compute_types.hpp"
#include "device_utils.hpp"
#include "gemm.hpp"
#include "peak.hpp"

namespace rk = roofline::kernels;

namespace {

constexpr int kExitNoDevice = 77;

// ---- errors and device memory ----------------------------------------------------------------

// A CUDA error that poisons the context (a fault or trap inside a kernel): nothing after it can be
// trusted, so the run stops.
class StickyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const std::string message =
      std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  // After a kernel fault every later call returns the same error: tell the two kinds apart.
  if (cudaDeviceSynchronize() != cudaSuccess) {
    throw StickyError(message +
                      " -- the CUDA context is unusable (a kernel faulted or trapped; a wgmma/TMA "
                      "pipeline that waited on an mbarrier for ~2 s traps on purpose)");
  }
  throw rk::KernelError(message);
}

// Synchronises and turns a kernel fault into StickyError.
void sync_checked(const char* what) {
  check(cudaDeviceSynchronize(), what);
}

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t size) : bytes(size) { check(cudaMalloc(&ptr, size), "cudaMalloc"); }
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void poison() const { check(cudaMemset(ptr, 0xFF, bytes), "cudaMemset (poison)"); }  // 0xFFFF: NaN in bf16/fp16
};

// ---- 16-bit values on the host ----------------------------------------------------------------

float half16_to_float(rk::Half16 type, std::uint16_t bits) {
  std::uint32_t out = 0;
  if (type == rk::Half16::bf16) {
    out = static_cast<std::uint32_t>(bits) << 16;
  } else {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0x1F) {
      out = sign | 0x7F800000u | (mantissa << 13);
    } else if (exponent == 0) {
      if (mantissa == 0) {
        out = sign;
      } else {  // subnormal: normalise
        int shift = 0;
        while ((mantissa & 0x400u) == 0) {
          mantissa <<= 1;
          ++shift;
        }
        mantissa &= 0x3FFu;
        out = sign | (static_cast<std::uint32_t>(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
      }
    } else {
      exponent += 127 - 15;
      out = sign | (exponent << 23) | (mantissa << 13);
    }
  }
  float value = 0;
  std::memcpy(&value, &out, sizeof(value));
  return value;
}

std::vector<float> download(rk::Half16 type, const void* device, std::size_t offset_elements, std::size_t count) {
  std::vector<std::uint16_t> raw(count);
  check(cudaMemcpy(raw.data(), static_cast<const std::uint16_t*>(device) + offset_elements, count * 2,
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy (download)");
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = half16_to_float(type, raw[i]);
  return values;
}

// ---- timing ---------------------------------------------------------------------------------

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int reps = 0;
};

struct TimingPolicy {
  int warmup = 2;
  double budget_ms = 300;  // timed repetitions fill about this much GPU time
  int min_reps = 3;
  int max_reps = 50;
};

struct EventPair {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  [[nodiscard]] double elapsed_ms() const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  }
};

// Warm-up (module load, cuBLAS heuristics, caches), one run to size the repetitions, then
// `reps` runs each bracketed by its own events; median, min and max of those.
Timing time_kernel(const std::function<void()>& launch, const TimingPolicy& policy) {
  for (int i = 0; i < policy.warmup; ++i) launch();
  sync_checked("warm-up");
  double estimate = 0;
  {
    EventPair probe;
    check(cudaEventRecord(probe.start), "cudaEventRecord");
    launch();
    check(cudaEventRecord(probe.stop), "cudaEventRecord");
    sync_checked("timing probe");
    estimate = std::max(probe.elapsed_ms(), 1e-3);
  }
  const int reps = std::clamp(static_cast<int>(policy.budget_ms / estimate), policy.min_reps, policy.max_reps);
  std::vector<std::unique_ptr<EventPair>> events;
  for (int i = 0; i < reps; ++i) events.push_back(std::make_unique<EventPair>());
  for (auto& pair : events) {
    check(cudaEventRecord(pair->start), "cudaEventRecord");
    launch();
    check(cudaEventRecord(pair->stop), "cudaEventRecord");
  }
  sync_checked("timed runs");
  std::vector<double> times;
  for (auto& pair : events) times.push_back(pair->elapsed_ms());
  std::sort(times.begin(), times.end());
  Timing timing;
  timing.reps = reps;
  timing.min_ms = times.front();
  timing.max_ms = times.back();
  timing.median_ms =
      reps % 2 == 1 ? times[static_cast<std::size_t>(reps / 2)]
                    : 0.5 * (times[static_cast<std::size_t>(reps / 2 - 1)] + times[static_cast<std::size_t>(reps / 2)]);
  return timing;
}

// ---- results -------------------------------------------------------------------------------

enum class Status { passed, failed, unsupported, skipped, error };

const char* status_name(Status status) {
  switch (status) {
    case Status::passed: return "passed";
    case Status::failed: return "failed";
    case Status::unsupported: return "unsupported";
    case Status::skipped: return "skipped";
    case Status::error: return "error";
  }
  return "?";
}

struct Record {
  std::string group;  // peak | gemm | attention
  std::string kernel;
  std::string dtype;
  std::string shape;
  std::vector<std::pair<std::string, double>> fields;  // shape and tiling numbers for JSON
  Status status = Status::skipped;
  double rel_err = NAN;
  double tolerance = NAN;
  Timing timing;
  double flop = 0;
  double tflops = NAN;
  double reference_ms = NAN;  // GEMM: cuBLAS; attention: standard attention
  std::string note;
};

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

std::string to_json(const Record& r) {
  std::string out = "{\"record\":\"compute_selftest.v1\",\"group\":\"" + json_escape(r.group) + "\",\"kernel\":\"" +
                    json_escape(r.kernel) + "\",\"dtype\":\"" + r.dtype + "\",\"shape\":\"" + json_escape(r.shape) +
                    "\"";
  for (const auto& [key, value] : r.fields) out += ",\"" + key + "\":" + json_number(value);
  out += ",\"verification\":\"" + std::string(status_name(r.status)) + "\"";
  out += ",\"rel_err\":" + json_number(r.rel_err) + ",\"tolerance\":" + json_number(r.tolerance);
  if (r.timing.reps > 0) {
    out += ",\"median_ms\":" + json_number(r.timing.median_ms) + ",\"min_ms\":" + json_number(r.timing.min_ms) +
           ",\"max_ms\":" + json_number(r.timing.max_ms) + ",\"reps\":" + std::to_string(r.timing.reps) +
           ",\"flop\":" + json_number(r.flop) + ",\"tflops\":" + json_number(r.tflops);
    if (std::isfinite(r.reference_ms)) {
      const char* key = r.group == "gemm" ? "pct_of_cublas" : "speedup_vs_standard";
      const double value =
          r.group == "gemm" ? 100.0 * r.reference_ms / r.timing.median_ms : r.reference_ms / r.timing.median_ms;
      out += ",\"" + std::string(key) + "\":" + json_number(value);
    }
  }
  if (!r.note.empty()) out += ",\"note\":\"" + json_escape(r.note) + "\"";
  out += "}";
  return out;
}

std::string format_line(const Record& r) {
  char buffer[512];
  std::string time = "-";
  std::string rate = "-";
  std::string versus = "";
  if (r.timing.reps > 0) {
    char t[64];
    std::snprintf(t, sizeof(t), "%.4f ms", r.timing.median_ms);
    time = t;
    std::snprintf(t, sizeof(t), "%.1f TFLOP/s", r.tflops);
    rate = t;
    if (std::isfinite(r.reference_ms)) {
      if (r.group == "gemm") {
        std::snprintf(t, sizeof(t), "%.1f%% cuBLAS", 100.0 * r.reference_ms / r.timing.median_ms);
      } else {
        std::snprintf(t, sizeof(t), "%.1fx standard", r.reference_ms / r.timing.median_ms);
      }
      versus = t;
    }
  }
  char err[32] = "-";
  if (std::isfinite(r.rel_err)) std::snprintf(err, sizeof(err), "%.1e", r.rel_err);
  std::snprintf(buffer, sizeof(buffer), "%-9s %-13s %-4s %-30s %-11s err %-8s %12s %17s %s%s%s", r.group.c_str(),
                r.kernel.c_str(), r.dtype.c_str(), r.shape.c_str(), status_name(r.status), err, time.c_str(),
                rate.c_str(), versus.c_str(), r.note.empty() ? "" : "  # ", r.note.c_str());
  return buffer;
}

struct Options {
  enum class Mode { full, quick, sanitize } mode = Mode::full;
  std::string json_path;
  std::string only;
  int device = 0;
};

class Runner {
 public:
  explicit Runner(const Options& options) : options_(options) {
    if (!options.json_path.empty()) {
      json_ = std::fopen(options.json_path.c_str(), "w");
      if (json_ == nullptr) throw std::runtime_error("cannot open " + options.json_path + " for writing");
    }
    switch (options.mode) {
      case Options::Mode::full: break;
      case Options::Mode::quick: policy_ = {1, 30, 3, 10}; break;
      case Options::Mode::sanitize: policy_ = {0, 0, 1, 1}; break;
    }
  }
  ~Runner() {
    if (json_ != nullptr) std::fclose(json_);
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  [[nodiscard]] const Options& options() const { return options_; }
  [[nodiscard]] const TimingPolicy& policy() const { return policy_; }
  [[nodiscard]] bool wanted(const std::string& group, const std::string& kernel) const {
    return options_.only.empty() || group.find(options_.only) != std::string::npos ||
           kernel.find(options_.only) != std::string::npos;
  }

  void report(const Record& record) {
    std::printf("%s\n", format_line(record).c_str());
    std::fflush(stdout);
    if (json_ != nullptr) {
      std::fprintf(json_, "%s\n", to_json(record).c_str());
      std::fflush(json_);
    }
    if (record.status == Status::failed || record.status == Status::error) ++failures_;
    records_.push_back(record);
  }

  void write_json(const std::string& line) {
    if (json_ == nullptr) return;
    std::fprintf(json_, "%s\n", line.c_str());
    std::fflush(json_);
  }

  [[nodiscard]] int failures() const { return failures_; }
  [[nodiscard]] const std::vector<Record>& records() const { return records_; }

 private:
  Options options_;
  TimingPolicy policy_;
  std::FILE* json_ = nullptr;
  int failures_ = 0;
  std::vector<Record> records_;
};

// Runs `body` for one record; a non-sticky error becomes an "error" record, a sticky one stops.
void guarded(Runner& runner, Record record, const std::function<void(Record&)>& body) {
  try {
    body(record);
  } catch (const StickyError&) {
    throw;
  } catch (const std::exception& e) {
    record.status = Status::error;
    record.note = e.what();
    cudaGetLastError();  // clear a non-sticky error (e.g. an allocation failure)
  }
  runner.report(record);
}

double tolerance_for(rk::Half16 type) {
  return type == rk::Half16::bf16 ? 1e-2 : 5e-3;
}

// ---- compute-ceiling probes -----------------------------------------------------------------

void run_peaks(Runner& runner, int sm_count) {
  const bool quick = runner.options().mode != Options::Mode::full;
  for (rk::PeakProbe probe : rk::all_peak_probes) {
    const std::string name = rk::peak_probe_name(probe);
    if (!runner.wanted("peak", name)) continue;
    Record record;
    record.group = "peak";
    record.kernel = name;
    record.dtype = probe == rk::PeakProbe::fma_fp32 ? "fp32" : "bf16";
    guarded(runner, record, [&](Record& r) {
      if (!rk::peak_probe_supported(probe, runner.options().device)) {
        r.status = Status::unsupported;
        r.note = "needs sm_90a code and a compute capability 9.0 device";
        return;
      }
      const rk::PeakProbeConfig config = rk::peak_probe_config(probe, sm_count, quick);
      r.shape = std::to_string(config.blocks) + " blocks x " + std::to_string(config.threads) + " thr x " +
                std::to_string(config.iterations) + " it";
      r.fields = {{"blocks", config.blocks}, {"threads", config.threads}, {"iterations", config.iterations}};
      const std::vector<unsigned char> input = rk::peak_probe_input(probe, config, 0x5eed0001u);
      DeviceBuffer in(config.input_bytes);
      DeviceBuffer out(config.output_bytes);
      check(cudaMemcpy(in.ptr, input.data(), input.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
      out.poison();
      rk::peak_probe_launch(probe, config, in.ptr, out.ptr);
      sync_checked("peak probe");
      std::vector<unsigned char> output(config.output_bytes);
      check(cudaMemcpy(output.data(), out.ptr, output.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
      r.rel_err = rk::peak_probe_max_error(probe, config, input.data(), output.data());
      r.tolerance = 0;
      r.note = "err = max |out - exact|";
      if (!(r.rel_err == 0.0)) {
        r.status = Status::failed;
        return;
      }
      r.status = Status::passed;
      r.timing = time_kernel([&] { rk::peak_probe_launch(probe, config, in.ptr, out.ptr); }, runner.policy());
      r.flop = config.flops;
      r.tflops = config.flops / (r.timing.median_ms * 1e-3) / 1e12;
    });
  }
}

// ---- GEMM -------------------------------------------------------------------------------------

struct GemmCase {
  int m;
  int n;
  int k;
  rk::Half16 type;
  bool cuda_core;  // also run the naive and smem_tiled kernels
};

// Float64 reference of C[i][j] for sampled (i, j), including the four corners.
struct GemmSamples {
  std::vector<std::pair<int, int>> positions;
  std::vector<double> reference;
};

GemmSamples sample_gemm(const GemmCase& c, const void* a, const void* b, int count, std::uint64_t seed) {
  GemmSamples samples;
  samples.positions = {{0, 0}, {c.m - 1, c.n - 1}, {c.m - 1, 0}, {0, c.n - 1}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.positions.size()) < count) {
    samples.positions.emplace_back(static_cast<int>(rng() % static_cast<std::uint64_t>(c.m)),
                                   static_cast<int>(rng() % static_cast<std::uint64_t>(c.n)));
  }
  const auto k = static_cast<std::size_t>(c.k);
  for (const auto& [i, j] : samples.positions) {
    const std::vector<float> row = download(c.type, a, static_cast<std::size_t>(i) * k, k);
    const std::vector<float> col = download(c.type, b, static_cast<std::size_t>(j) * k, k);
    double dot = 0;
    for (std::size_t t = 0; t < k; ++t) dot += static_cast<double>(row[t]) * col[t];
    samples.reference.push_back(dot);
  }
  return samples;
}

double sampled_error(const GemmCase& c, const GemmSamples& samples, const void* out) {
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t s = 0; s < samples.positions.size(); ++s) {
    const auto [i, j] = samples.positions[s];
    const float got = download(
        c.type, out, static_cast<std::size_t>(i) * static_cast<std::size_t>(c.n) + static_cast<std::size_t>(j), 1)[0];
    if (!std::isfinite(got)) return INFINITY;
    const double d = got - samples.reference[s];
    diff2 += d * d;
    ref2 += samples.reference[s] * samples.reference[s];
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

std::string gemm_shape(const GemmCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
}

void run_gemm_case(Runner& runner, rk::Cublas& blas, const GemmCase& c) {
  const auto elements = [](int rows, int cols) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  };
  const double flop = 2.0 * c.m * static_cast<double>(c.n) * c.k;
  const double tol = tolerance_for(c.type);
  DeviceBuffer a(elements(c.m, c.k) * 2);
  DeviceBuffer b(elements(c.n, c.k) * 2);
  DeviceBuffer c_ref(elements(c.m, c.n) * 2);
  DeviceBuffer c_out(elements(c.m, c.n) * 2);
  rk::selftest::fill_uniform(c.type, a.ptr, elements(c.m, c.k), 11u + static_cast<std::uint64_t>(c.m), 1.0f);
  rk::selftest::fill_uniform(c.type, b.ptr, elements(c.n, c.k), 23u + static_cast<std::uint64_t>(c.n), 1.0f);
  sync_checked("fill");
  const int sample_count = runner.options().mode == Options::Mode::full ? 48 : 24;
  const GemmSamples samples = sample_gemm(c, a.ptr, b.ptr, sample_count, 99u);

  auto base_record = [&](const std::string& kernel) {
    Record r;
    r.group = "gemm";
    r.kernel = kernel;
    r.dtype = rk::half16_name(c.type);
    r.shape = gemm_shape(c);
    r.fields = {{"m", c.m}, {"n", c.n}, {"k", c.k}};
    r.flop = flop;
    r.tolerance = tol;
    return r;
  };

  // cuBLAS first: it is the reference of the other kernels, checked itself on the host samples.
  double cublas_ms = NAN;
  bool cublas_ok = false;
  guarded(runner, base_record("cublas"), [&](Record& r) {
    c_ref.poison();
    blas.gemm(c.type, a.ptr, b.ptr, c_ref.ptr, c.m, c.n, c.k);
    sync_checked("cublas gemm");
    const std::uint64_t bad = rk::selftest::count_nonfinite(c.type, c_ref.ptr, elements(c.m, c.n));
    r.rel_err = sampled_error(c, samples, c_ref.ptr);
    if (bad != 0 || !(r.rel_err <= tol)) {
      r.status = Status::failed;
      r.note = std::to_string(bad) + " non-finite outputs";
      return;
    }
    r.status = Status::passed;
    r.timing = time_kernel([&] { blas.gemm(c.type, a.ptr, b.ptr, c_ref.ptr, c.m, c.n, c.k); }, runner.policy());
    r.tflops = flop / (r.timing.median_ms * 1e-3) / 1e12;
    cublas_ms = r.timing.median_ms;
    cublas_ok = true;
  });

  for (rk::GemmKernel kernel : rk::all_gemm_kernels) {
    const bool cuda_core = kernel == rk::GemmKernel::naive || kernel == rk::GemmKernel::smem_tiled;
    if (cuda_core && !c.cuda_core) continue;
    const std::string name = rk::gemm_kernel_name(kernel);
    if (!runner.wanted("gemm", name)) continue;
    Record record = base_record(name);
    const rk::GemmTiling tiling = rk::gemm_tiling(kernel);
    record.fields.insert(record.fields.end(), {{"tile_m", tiling.tile_m},
                                               {"tile_n", tiling.tile_n},
                                               {"tile_k", tiling.tile_k},
                                               {"stages", tiling.stages},
                                               {"threads", tiling.threads}});
    guarded(runner, record, [&](Record& r) {
      if (!rk::gemm_kernel_supported(kernel, runner.options().device)) {
        r.status = Status::unsupported;
        r.note = "not built for or not runnable on this device";
        return;
      }
      c_out.poison();
      rk::gemm(kernel, c.type, a.ptr, b.ptr, c_out.ptr, c.m, c.n, c.k);
      sync_checked("gemm kernel");
      const rk::selftest::Comparison cmp = rk::selftest::compare(c.type, c_out.ptr, c_ref.ptr, elements(c.m, c.n));
      const double vs_cublas = std::sqrt(cmp.sum_sq_diff / std::max(cmp.sum_sq_ref, 1e-300));
      const double vs_host = sampled_error(c, samples, c_out.ptr);
      r.rel_err = std::max(vs_host, cublas_ok ? vs_cublas : 0.0);
      r.fields.emplace_back("rel_err_vs_cublas", vs_cublas);
      r.fields.emplace_back("rel_err_vs_host_samples", vs_host);
      if (cmp.nonfinite != 0 || !(r.rel_err <= tol)) {
        r.status = Status::failed;
        r.note = std::to_string(cmp.nonfinite) + " non-finite outputs; max |diff| vs cuBLAS " +
                 std::to_string(cmp.max_abs_diff);
        return;
      }
      r.status = Status::passed;
      r.timing =
          time_kernel([&] { rk::gemm(kernel, c.type, a.ptr, b.ptr, c_out.ptr, c.m, c.n, c.k); }, runner.policy());
      r.tflops = flop / (r.timing.median_ms * 1e-3) / 1e12;
      r.reference_ms = cublas_ms;
    });
  }
}

// ---- attention --------------------------------------------------------------------------------

struct AttentionCase {
  rk::AttentionShape shape;
  rk::Half16 type;
  bool standard;  // also run the materialised path (when it fits)
};

std::string attention_shape(const rk::AttentionShape& s) {
  std::string text = "B" + std::to_string(s.batch) + " H" + std::to_string(s.heads);
  if (s.kv_heads != s.heads) text += "/" + std::to_string(s.kv_heads);
  text += " N" + std::to_string(s.seq) + " d" + std::to_string(s.head_dim) + (s.causal ? " causal" : "");
  return text;
}

// Causal FLOPs count only the unmasked half: 4*B*H*N^2*d/2.
double attention_flop(const rk::AttentionShape& s) {
  const double full = 4.0 * s.batch * s.heads * static_cast<double>(s.seq) * s.seq * s.head_dim;
  return s.causal ? full / 2 : full;
}

struct AttentionSamples {
  std::vector<std::pair<int, int>> rows;  // (batch*heads + head, query)
  std::vector<double> reference;          // rows.size() x head_dim
};

AttentionSamples sample_attention(const AttentionCase& c, const void* q, const void* k, const void* v, int count,
                                  std::uint64_t seed) {
  const rk::AttentionShape& s = c.shape;
  const auto n = static_cast<std::size_t>(s.seq);
  const auto d = static_cast<std::size_t>(s.head_dim);
  const int bh_count = s.batch * s.heads;
  AttentionSamples samples;
  samples.rows = {{0, 0}, {bh_count - 1, s.seq - 1}, {bh_count / 2, s.seq / 2}};
  std::mt19937_64 rng(seed);
  while (static_cast<int>(samples.rows.size()) < count) {
    samples.rows.emplace_back(static_cast<int>(rng() % static_cast<std::uint64_t>(bh_count)),
                              static_cast<int>(rng() % static_cast<std::uint64_t>(s.seq)));
  }
  const float scale = s.scale > 0 ? s.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  std::map<int, std::pair<std::vector<float>, std::vector<float>>> kv_cache;  // kv head index -> (K, V)
  const int group = s.heads / s.kv_heads;
  for (const auto& [bh, i] : samples.rows) {
    const int kv_index = (bh / s.heads) * s.kv_heads + (bh % s.heads) / group;
    auto found = kv_cache.find(kv_index);
    if (found == kv_cache.end()) {
      const std::size_t offset = static_cast<std::size_t>(kv_index) * n * d;
      found =
          kv_cache
              .emplace(kv_index, std::make_pair(download(c.type, k, offset, n * d), download(c.type, v, offset, n * d)))
              .first;
    }
    const std::vector<float>& kh = found->second.first;
    const std::vector<float>& vh = found->second.second;
    const std::vector<float> qrow =
        download(c.type, q, (static_cast<std::size_t>(bh) * n + static_cast<std::size_t>(i)) * d, d);
    const std::size_t keys = s.causal ? static_cast<std::size_t>(i) + 1 : n;
    std::vector<double> score(keys);
    double top = -INFINITY;
    for (std::size_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (std::size_t t = 0; t < d; ++t) dot += static_cast<double>(qrow[t]) * kh[j * d + t];
      score[j] = dot * scale;
      top = std::max(top, score[j]);
    }
    double total = 0;
    for (double& x : score) {
      x = std::exp(x - top);
      total += x;
    }
    std::vector<double> out(d, 0.0);
    for (std::size_t j = 0; j < keys; ++j) {
      for (std::size_t t = 0; t < d; ++t) out[t] += score[j] * vh[j * d + t];
    }
    for (std::size_t t = 0; t < d; ++t) samples.reference.push_back(out[t] / total);
  }
  return samples;
}

double attention_error(const AttentionCase& c, const AttentionSamples& samples, const void* o) {
  const auto n = static_cast<std::size_t>(c.shape.seq);
  const auto d = static_cast<std::size_t>(c.shape.head_dim);
  double diff2 = 0;
  double ref2 = 0;
  for (std::size_t r = 0; r < samples.rows.size(); ++r) {
    const auto [bh, i] = samples.rows[r];
    const std::vector<float> got =
        download(c.type, o, (static_cast<std::size_t>(bh) * n + static_cast<std::size_t>(i)) * d, d);
    for (std::size_t t = 0; t < d; ++t) {
      if (!std::isfinite(got[t])) return INFINITY;
      const double ref = samples.reference[r * d + t];
      diff2 += (got[t] - ref) * (got[t] - ref);
      ref2 += ref * ref;
    }
  }
  return std::sqrt(diff2 / std::max(ref2, 1e-300));
}

void run_attention_case(Runner& runner, rk::Cublas& blas, const AttentionCase& c) {
  const rk::AttentionShape& s = c.shape;
  const std::size_t q_elements = static_cast<std::size_t>(s.batch) * s.heads * s.seq * s.head_dim;
  const std::size_t kv_elements = static_cast<std::size_t>(s.batch) * s.kv_heads * s.seq * s.head_dim;
  const double flop = attention_flop(s);
  const double tol = tolerance_for(c.type);
  DeviceBuffer q(q_elements * 2);
  DeviceBuffer k(kv_elements * 2);
  DeviceBuffer v(kv_elements * 2);
  DeviceBuffer o(q_elements * 2);
  // |q| up to 2: scores of std ~0.7 give softmax rows far from uniform, so the running max matters.
  rk::selftest::fill_uniform(c.type, q.ptr, q_elements, 101u + static_cast<std::uint64_t>(s.seq), 2.0f);
  rk::selftest::fill_uniform(c.type, k.ptr, kv_elements, 202u + static_cast<std::uint64_t>(s.seq), 1.0f);
  rk::selftest::fill_uniform(c.type, v.ptr, kv_elements, 303u + static_cast<std::uint64_t>(s.seq), 1.0f);
  sync_checked("fill");
  const int sample_count = runner.options().mode == Options::Mode::full ? 24 : 16;
  const AttentionSamples samples = sample_attention(c, q.ptr, k.ptr, v.ptr, sample_count, 7u);

  auto base_record = [&](const std::string& kernel) {
    Record r;
    r.group = "attention";
    r.kernel = kernel;
    r.dtype = rk::half16_name(c.type);
    r.shape = attention_shape(s);
    r.fields = {{"batch", s.batch}, {"heads", s.heads},       {"kv_heads", s.kv_heads},
                {"seq", s.seq},     {"head_dim", s.head_dim}, {"causal", s.causal ? 1 : 0}};
    r.flop = flop;
    r.tolerance = tol;
    return r;
  };
  auto verify = [&](Record& r, const char* what) {
    sync_checked(what);
    const std::uint64_t bad = rk::selftest::count_nonfinite(c.type, o.ptr, q_elements);
    r.rel_err = attention_error(c, samples, o.ptr);
    if (bad != 0 || !(r.rel_err <= tol)) {
      r.status = Status::failed;
      r.note = std::to_string(bad) + " non-finite (unwritten) outputs";
      return false;
    }
    r.status = Status::passed;
    return true;
  };

  double standard_ms = NAN;
  if (c.standard && runner.wanted("attention", "standard")) {
    guarded(runner, base_record("standard"), [&](Record& r) {
      const std::size_t workspace_bytes = rk::standard_attention_workspace_bytes(s);
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
      r.fields.emplace_back("workspace_bytes", static_cast<double>(workspace_bytes));
      const std::size_t margin = std::size_t{1} << 30;
      if (workspace_bytes + margin > free_bytes) {
        char note[160];
        std::snprintf(note, sizeof(note), "does not fit: S needs %.1f GiB, %.1f GiB free",
                      static_cast<double>(workspace_bytes) / (1 << 30), static_cast<double>(free_bytes) / (1 << 30));
        r.status = Status::skipped;
        r.note = note;
        return;
      }
      DeviceBuffer workspace(workspace_bytes);
      o.poison();
      rk::standard_attention_forward(blas, c.type, s, q.ptr, k.ptr, v.ptr, o.ptr, workspace.ptr);
      if (!verify(r, "standard attention")) return;
      r.timing = time_kernel(
          [&] { rk::standard_attention_forward(blas, c.type, s, q.ptr, k.ptr, v.ptr, o.ptr, workspace.ptr); },
          runner.policy());
      r.tflops = flop / (r.timing.median_ms * 1e-3) / 1e12;
      standard_ms = r.timing.median_ms;
    });
  }

  for (rk::FlashVariant variant : rk::all_flash_variants) {
    const std::string name = rk::flash_variant_name(variant);
    if (!runner.wanted("attention", name)) continue;
    Record record = base_record(name);
    const rk::FlashTiling tiling = rk::flash_tiling(variant, s.head_dim);
    record.fields.insert(record.fields.end(), {{"block_m", tiling.block_m},
                                               {"block_n", tiling.block_n},
                                               {"warps", tiling.warps},
                                               {"smem_bytes", tiling.smem_bytes}});
    guarded(runner, record, [&](Record& r) {
      if (!rk::flash_variant_supported(variant, s.head_dim, runner.options().device)) {
        r.status = Status::unsupported;
        r.note = "not built for this device or head_dim";
        return;
      }
      o.poison();
      rk::flash_attention_forward(variant, c.type, s, q.ptr, k.ptr, v.ptr, o.ptr);
      if (!verify(r, "flash attention")) {
        if (variant == rk::FlashVariant::wgmma) {
          // Tell a wrong guess of the V descriptor's offsets apart from other bugs.
          Record retry = r;
          o.poison();
          rk::flash_wgmma_v_offsets_swapped(c.type, s, q.ptr, k.ptr, v.ptr, o.ptr);
          const bool swapped_ok = verify(retry, "flash attention (V descriptor offsets swapped)");
          char note[200];
          std::snprintf(note, sizeof(note), "%s; with V descriptor offsets swapped: %s (err %.1e)", r.note.c_str(),
                        swapped_ok ? "PASSES -- swap them in flash_wgmma.cu" : "fails too", retry.rel_err);
          r.note = note;
        }
        return;
      }
      r.timing = time_kernel([&] { rk::flash_attention_forward(variant, c.type, s, q.ptr, k.ptr, v.ptr, o.ptr); },
                             runner.policy());
      r.tflops = flop / (r.timing.median_ms * 1e-3) / 1e12;
      r.reference_ms = standard_ms;
    });
  }
}

// ---- the case lists ---------------------------------------------------------------------------

std::vector<GemmCase> gemm_cases(Options::Mode mode) {
  using rk::Half16;
  switch (mode) {
    case Options::Mode::sanitize: return {{128, 256, 128, Half16::bf16, true}, {200, 264, 136, Half16::fp16, true}};
    case Options::Mode::quick:
      return {{512, 512, 512, Half16::bf16, true},
              {333, 264, 200, Half16::bf16, true},  // ragged edges in m, n and k
              {1024, 1024, 1024, Half16::bf16, true},
              {256, 512, 1024, Half16::fp16, true},
              {4096, 4096, 4096, Half16::bf16, false}};
    case Options::Mode::full: break;
  }
  return {{1024, 1024, 1024, Half16::bf16, true},   {2048, 2048, 2048, Half16::bf16, true},
          {4096, 4096, 4096, Half16::bf16, true},   {8192, 8192, 8192, Half16::bf16, true},
          {4096, 4096, 4096, Half16::fp16, false},  {8192, 8192, 8192, Half16::fp16, false},
          {128, 8192, 8192, Half16::bf16, false},    // skinny m: a batch of 128 tokens through a square layer
          {8192, 8192, 256, Half16::bf16, false},    // short k: low arithmetic intensity
          {16384, 1024, 4096, Half16::bf16, false},  // tall and narrow
          {333, 264, 200, Half16::bf16, true}};
}

std::vector<AttentionCase> attention_cases(Options::Mode mode) {
  using rk::Half16;
  auto make = [](int batch, int heads, int kv_heads, int seq, int d, bool causal) {
    rk::AttentionShape s;
    s.batch = batch;
    s.heads = heads;
    s.kv_heads = kv_heads;
    s.seq = seq;
    s.head_dim = d;
    s.causal = causal;
    return s;
  };
  std::vector<AttentionCase> cases;
  switch (mode) {
    case Options::Mode::sanitize:
      cases.push_back({make(1, 2, 1, 200, 64, true), Half16::bf16, true});
      cases.push_back({make(1, 2, 2, 136, 128, false), Half16::fp16, true});
      return cases;
    case Options::Mode::quick:
      for (int d : {64, 128}) {
        for (bool causal : {false, true}) {
          cases.push_back({make(2, 4, 4, 256, d, causal), Half16::bf16, true});
          cases.push_back({make(2, 4, 2, 1000, d, causal), Half16::bf16, true});  // ragged tiles, GQA
        }
      }
      cases.push_back({make(1, 4, 4, 512, 128, true), Half16::fp16, true});
      cases.push_back({make(4, 32, 32, 4096, 128, true), Half16::bf16, true});  // the target shape
      return cases;
    case Options::Mode::full: break;
  }
  // Standard vs flash by N at a fixed 16K tokens per batch (B = 16384 / N), 32 heads.
  for (int d : {128, 64}) {
    for (bool causal : {true, false}) {
      for (int seq = 512; seq <= 32768; seq *= 2) {
        cases.push_back({make(std::max(1, 16384 / seq), 32, 32, seq, d, causal), Half16::bf16, true});
      }
    }
  }
  cases.push_back({make(4, 32, 8, 4096, 128, true), Half16::bf16, true});  // GQA, 4 query heads per kv head
  cases.push_back({make(4, 32, 8, 4096, 128, false), Half16::bf16, true});
  cases.push_back({make(4, 32, 32, 4096, 128, true), Half16::fp16, true});
  cases.push_back({make(4, 32, 32, 4096, 64, true), Half16::fp16, false});
  cases.push_back({make(4, 32, 32, 32768, 128, true), Half16::bf16, true});  // S would need 256 GiB
  cases.push_back({make(2, 4, 2, 1000, 128, true), Half16::bf16, true});     // ragged tiles
  return cases;
}

void print_summary(const Runner& runner) {
  std::printf("\n==== compute selftest summary ====\n");
  std::printf("%-9s %-13s %-4s %-30s %-11s %10s %10s %s\n", "group", "kernel", "type", "shape", "verified", "median ms",
              "TFLOP/s", "vs reference");
  int passed = 0;
  int failed = 0;
  int other = 0;
  for (const Record& r : runner.records()) {
    char ms[32] = "-";
    char tf[32] = "-";
    char vs[48] = "";
    if (r.timing.reps > 0) {
      std::snprintf(ms, sizeof(ms), "%.4f", r.timing.median_ms);
      std::snprintf(tf, sizeof(tf), "%.1f", r.tflops);
      if (std::isfinite(r.reference_ms)) {
        if (r.group == "gemm") {
          std::snprintf(vs, sizeof(vs), "%.1f%% of cuBLAS", 100.0 * r.reference_ms / r.timing.median_ms);
        } else {
          std::snprintf(vs, sizeof(vs), "%.1fx standard", r.reference_ms / r.timing.median_ms);
        }
      }
    }
    std::printf("%-9s %-13s %-4s %-30s %-11s %10s %10s %s\n", r.group.c_str(), r.kernel.c_str(), r.dtype.c_str(),
                r.shape.c_str(), status_name(r.status), ms, tf, vs);
    if (r.status == Status::passed) {
      ++passed;
    } else if (r.status == Status::failed || r.status == Status::error) {
      ++failed;
    } else {
      ++other;
    }
  }
  std::printf("%d passed, %d failed, %d skipped or unsupported\n", passed, failed, other);
}

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--quick | --sanitize] [--json FILE] [--only TEXT] [--device N]\n"
               "  --quick     small sizes, short timing (seconds)\n"
               "  --sanitize  smallest sizes, one run each (for compute-sanitizer)\n"
               "  --json FILE write one JSON object per case to FILE\n"
               "  --only TEXT run only cases whose group or kernel contains TEXT (peak, gemm, wgmma, flash, ...)\n",
               program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.mode = Options::Mode::quick;
    } else if (arg == "--sanitize") {
      options.mode = Options::Mode::sanitize;
    } else if ((arg == "--json" || arg == "--only" || arg == "--device") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--json") options.json_path = value;
      if (arg == "--only") options.only = value;
      if (arg == "--device") {
        try {
          options.device = std::stoi(value);
        } catch (const std::exception&) {
          std::fprintf(stderr, "compute_selftest: --device needs an integer, got '%s'\n", value.c_str());
          return 2;
        }
      }
    } else {
      std::fprintf(stderr, "compute_selftest: unknown or incomplete argument '%s'\n", arg.c_str());
      return usage(argv[0]);
    }
  }

  int device_count = 0;
  const cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "compute_selftest: no CUDA device (%s); skipping\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return kExitNoDevice;
  }
  if (options.device < 0 || options.device >= device_count) {
    std::fprintf(stderr, "compute_selftest: --device %d out of range (%d devices)\n", options.device, device_count);
    return 2;
  }

  try {
    check(cudaSetDevice(options.device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, options.device), "cudaGetDeviceProperties");
    int driver = 0;
    int runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.0f MB L2, %.1f GiB, driver %d, runtime %d\n", options.device,
                prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
                static_cast<double>(prop.totalGlobalMem) / (1 << 30), driver, runtime);
    const char* mode_name = options.mode == Options::Mode::full    ? "full"
                            : options.mode == Options::Mode::quick ? "quick"
                                                                   : "sanitize";
    std::printf("mode %s; errors are ||out - ref|| / ||ref|| (bf16 tolerance 1e-2, fp16 5e-3)\n\n", mode_name);

    Runner runner(options);
    runner.write_json("{\"record\":\"compute_selftest_device.v1\",\"device\":\"" + json_escape(prop.name) +
                      "\",\"sm\":\"" + std::to_string(prop.major) + std::to_string(prop.minor) +
                      "\",\"multiprocessors\":" + std::to_string(prop.multiProcessorCount) + ",\"l2_bytes\":" +
                      std::to_string(prop.l2CacheSize) + ",\"memory_bytes\":" + std::to_string(prop.totalGlobalMem) +
                      ",\"driver\":" + std::to_string(driver) + ",\"runtime\":" + std::to_string(runtime) +
                      ",\"mode\":\"" + mode_name + "\"}");
    rk::Cublas blas;
    const auto started = std::chrono::steady_clock::now();
    int exit_code = 0;
    try {
      run_peaks(runner, prop.multiProcessorCount);
      for (const GemmCase& c : gemm_cases(options.mode)) {
        if (runner.wanted("gemm", "cublas naive smem_tiled mma_sync wgmma")) run_gemm_case(runner, blas, c);
      }
      for (const AttentionCase& c : attention_cases(options.mode)) {
        if (runner.wanted("attention", "standard flash_w8r16 flash_w4r32 flash_wgmma"))
          run_attention_case(runner, blas, c);
      }
    } catch (const StickyError& e) {
      std::fprintf(stderr, "compute_selftest: stopping after a fatal CUDA error: %s\n", e.what());
      std::printf("STOPPED EARLY: %s\n", e.what());
      exit_code = 1;
    }
    print_summary(runner);
    std::printf("wall time %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return runner.failures() == 0 ? exit_code : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compute_selftest: %s\n", e.what());
    return 1;
  }
}
