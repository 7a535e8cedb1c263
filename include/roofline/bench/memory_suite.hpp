#pragma once

// The memory suite, described as data: one constexpr table of cases (cudaMemcpy, the
// BabelStream kernels, strided and random access, GEMV against cuBLAS, GEMV with fp8 and int4
// weights, the W8A8 GEMV (fp8 W and x), decode attention over bf16 and fp8 KV caches, L2 and shared-memory
// ceilings), the sizes each case runs at on
// a given device, and each case's bytes and FLOPs from the model's own functions (ops.hpp, access.hpp). The CUDA runner
// (src/bench/cuda/memory_runner.cpp) times and verifies these cases; everything here is host
// code and unit-tested without a GPU.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "roofline/bench/bench.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/model/attention.hpp"

namespace roofline::bench::memory {

enum class Kernel : std::uint8_t {
  memcpy_d2d,        // cudaMemcpyAsync device to device: the in-run ceiling (runtime variant)
  copy,              // out = x
  scale,             // out = s * x
  add,               // out = x + y
  triad,             // out = x + s * y
  dot,               // sum of x * y (read-only reduction)
  strided_read,      // sum of x[i * stride]
  gather,            // out[i] = table[index[i]]
  scatter,           // table[index[i]] = value[i]
  gemv,              // y[b, m] = sum_k W[m, k] x[b, k]; the read variant streams W's bytes only (the floor)
  l2_read,           // repeated reads of a buffer a quarter of the L2's size
  smem_read,         // repeated reads of shared memory
  decode_attention,  // the decoder layer's flash-decoding attention over a KV cache (kernels/layer.hpp)
  latent_attention,  // multi-head latent attention (DeepSeek's MLA) at decode, absorbed, flash-decoding
};

// Who wrote the code and how it is scheduled.
enum class Variant : std::uint8_t {
  runtime,       // the CUDA runtime (cudaMemcpyAsync), launched directly as a user calls it
  graph,         // the same call captured into a CUDA graph, where it becomes a memcpy node
  tile,          // one tile of vectors per thread block, as many blocks as tiles
  persistent,    // one block per resident slot, looping over the tiles
  streaming,     // persistent, with evict-first (cache-streaming) loads and stores
  mma,           // GEMV on tensor cores (mma.sync, fp32 accumulation), split-K inside a block
  stag,          // mma with each block starting its k sweep at a different offset (staggered)
  pipe,          // stag with the loads of the next step issued before the current one is used
  pdl,           // stag launched with programmatic dependent launch (its W loads overlap the previous kernel)
  simt,          // GEMV on CUDA cores, one warp per row
  wgmma,         // GEMV on Hopper wgmma, W and x staged by TMA, the batch as wgmma's N, split-K over blocks
  cublas,        // cublasGemmEx, timed like every kernel (captured into CUDA graphs)
  cublasdirect,  // the same call timed as launched directly (a check that the graph changes nothing)
  read,          // a streaming read of W's bytes alone (no x, no y): the floor of any GEMV of that size
  flashdecode,   // flash-decoding: the context split across blocks, the splits merged by a second kernel
};

struct Case {
  Kernel kernel = Kernel::copy;
  Variant variant = Variant::tile;
  int vector_bytes = 0;     // stream kernels: bytes per load and store (4, 8, 16)
  std::int64_t stride = 0;  // strided_read: elements between accesses
  std::int64_t m = 0;       // gemv: rows of W (outputs per vector)
  std::int64_t k = 0;       // gemv: columns of W (the reduction)
  std::int64_t batch = 0;   // gemv: vectors
  // gemv: x and y; decode_attention: q and the output.
  DType activations = DType::fp32;
  DType weights = DType::fp32;   // gemv: W (the activations' format, or fp8_e4m3 / int4_g128; W8A8: both fp8_e4m3)
  DType kv = DType::fp32;        // decode_attention: the KV cache (bf16, or fp8_e4m3 with a per-tensor scale)
  bool quick = false;            // part of --quick
  std::int64_t array_bytes = 0;  // stream kernels: bytes per array (0: Sizes::stream_elements, the HBM size)
  std::int64_t context = 0;      // decode_attention, latent_attention: KV positions per sequence
  std::int64_t heads = 0;        // latent_attention: query heads on the GPU
};

inline constexpr std::array<std::int64_t, 15> strides{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256, 512, 1024};
inline constexpr std::array<std::int64_t, 7> gemv_batches{1, 2, 4, 8, 16, 32, 64};
struct GemvShapeMK {
  std::int64_t m;
  std::int64_t k;
};
// Square 8192 and 16384 (the targets), and LLaMA-3-70B's FFN projections (hidden 8192,
// intermediate 28672): the up/gate matrix (28672 x 8192) and the down matrix (8192 x 28672).
inline constexpr std::array<GemvShapeMK, 4> gemv_shapes{{{8192, 8192}, {16384, 16384}, {28672, 8192}, {8192, 28672}}};
// Issue 21's GEMV target: the decode linears of LLaMA-3-8B and LLaMA-3-70B (qkv, o_proj, gate_up
// fused, down; N x K) at TP 1, 2, 4 and 8, in bf16, beside cuBLAS. The models' dimensions are the
// bundled presets' (models/llama-3.1-8b.json, llama-3.1-70b.json; tests/unit/test_bench.cpp checks
// them against the decoder-step description); shapes gemv_shapes already holds, or that repeat, run
// once.
struct GemvDecodeModel {
  std::int64_t hidden, heads, kv_heads, head_dim, ffn;
};
inline constexpr std::array<GemvDecodeModel, 2> gemv_decode_models{{
    {.hidden = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128, .ffn = 14336},  // LLaMA-3-8B
    {.hidden = 8192, .heads = 64, .kv_heads = 8, .head_dim = 128, .ffn = 28672},  // LLaMA-3-70B
}};
inline constexpr std::array<std::int64_t, 4> gemv_decode_tp{1, 2, 4, 8};
// The four linears of one model at one TP degree, in the layer's order.
constexpr std::array<GemvShapeMK, 4> gemv_decode_linears(const GemvDecodeModel& model, std::int64_t tp) {
  return {{{(model.heads + 2 * model.kv_heads) * model.head_dim / tp, model.hidden},
           {model.hidden, model.heads * model.head_dim / tp},
           {2 * model.ffn / tp, model.hidden},
           {model.hidden, model.ffn / tp}}};
}
template <typename F>
constexpr void for_each_gemv_decode_shape(F&& f) {
  std::array<GemvShapeMK, gemv_decode_models.size() * gemv_decode_tp.size() * 4 + gemv_shapes.size()> seen{};
  std::size_t count = 0;
  for (const GemvShapeMK& s : gemv_shapes) seen[count++] = s;
  for (const GemvDecodeModel& model : gemv_decode_models) {
    for (std::int64_t tp : gemv_decode_tp) {
      for (const GemvShapeMK& s : gemv_decode_linears(model, tp)) {
        const bool repeat = std::any_of(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(count),
                                        [&](const GemvShapeMK& o) { return o.m == s.m && o.k == s.k; });
        if (repeat) continue;
        seen[count++] = s;
        f(s);
      }
    }
  }
}
// The formats GEMV runs in (weights and activations alike), each with its own choice of cases: the
// batches --quick keeps at the quick shape, and whether the tuned tensor-core variants (stag,
// pipe, pdl) and the cuBLAS-direct and read checks run. A new format states its own.
struct GemvFormat {
  DType dtype;
  std::array<std::int64_t, 4> quick_batches;  // 0: unused
  bool tuned;
};
inline constexpr std::array<GemvFormat, 2> gemv_formats{{
    {.dtype = DType::bf16, .quick_batches = {1, 2, 8, 64}, .tuned = true},
    {.dtype = DType::fp16, .quick_batches = {1, 0, 0, 0}, .tuned = false},
}};
// Weight-only quantised GEMV (bf16 x and y), as an fp8 or a 4-bit deployment decodes: the shapes of
// LLaMA-3-70B's decode linears, N x K (bench::layer::layer_model, the bundled llama-3.1-70b: hidden
// 8192, 64 + 2 x 8 heads of 128, FFN 28672; tests/unit/test_bench.cpp checks them against the
// decoder-step description) at TP 1 and TP 8, qkv, o_proj, gate_up (fused), down; o_proj at TP 1
// is the 8192^2 target.
inline constexpr std::array<GemvShapeMK, 8> gemv_quantised_shapes{{
    {10240, 8192},  // TP 1: qkv
    {8192, 8192},   //       o_proj
    {57344, 8192},  //       gate_up
    {8192, 28672},  //       down
    {1280, 8192},   // TP 8: qkv
    {8192, 1024},   //       o_proj
    {7168, 8192},   //       gate_up
    {8192, 3584},   //       down
}};
// The quantised weight formats, each with its batches: fp8 up to 256 (the batches an FP8 engine
// decodes at; above the tensor-core kernel's 64 no project kernel runs, and the result says so:
// the compute suite measures cuBLASLt's FP8 GEMM at those M), int4 up to 64 (at 32 and 64 on
// tensor-core shapes of their own that hold its decoded pieces without spilling: kernels/gemv.cu,
// Mma4Grouped and Mma8Grouped).
struct GemvQuantisedFormat {
  DType weights;
  std::array<std::int64_t, 9> batches;  // 0: unused
  bool read_floor;                      // a read of W alone (fp8: W is m x k bytes, nothing else)
};
inline constexpr std::array<GemvQuantisedFormat, 2> gemv_quantised_formats{{
    {.weights = DType::fp8_e4m3, .batches = {1, 2, 4, 8, 16, 32, 64, 128, 256}, .read_floor = true},
    {.weights = DType::int4_g128, .batches = {1, 2, 4, 8, 16, 32, 64, 0, 0}, .read_floor = false},
}};
inline constexpr DType gemv_quantised_activations = DType::bf16;
// W8A8 GEMV (fp8 e4m3 W and x with per-tensor scales, bf16 y: FP8 checkpoints as TensorRT-LLM and vLLM
// serve them), the project's kernels only: mma at every batch of gemv_batches, stag and pdl up to
// gemv_tuned_max_batch. Shapes: LLaMA-3-70B's decode linears at TP 1 (qkv, o_proj, gate_up, down;
// the compute suite times cuBLASLt's FP8 GEMM at the same N x K and M = 1 .. 256, which is the
// library reference: docs/bench.md); and a ragged shape off every tile (m not a multiple of 16, k
// not of 64, more 16-row tiles than 4 blocks per SM hold on 132 SMs) at batches that reach each of
// the kernels' shapes, for --quick.
inline constexpr std::array<GemvShapeMK, 4> gemv_w8a8_shapes{
    {{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}}};
inline constexpr DType gemv_w8a8_format = DType::fp8_e4m3;  // W and x
inline constexpr DType gemv_w8a8_output = DType::bf16;      // y
inline constexpr std::array<std::int64_t, 3> gemv_w8a8_quick_batches{1, 16, 64};
inline constexpr GemvShapeMK gemv_w8a8_ragged_shape{9000, 1104};
inline constexpr std::array<std::int64_t, 4> gemv_w8a8_ragged_batches{5, 13, 24, 40};
// A ragged shape for the wgmma GEMV's edges, bf16, beside cuBLAS, for --quick: m not a multiple of 64,
// k not of 64, and batches whose second vector group is partly filled (kernel_tiles::gemv_wgmma_split:
// 16 tiles of 64 rows x 2 groups x 4 splits of k).
inline constexpr GemvShapeMK gemv_wgmma_ragged_shape{1000, 1104};
inline constexpr std::array<std::int64_t, 2> gemv_wgmma_ragged_batches{24, 40};
inline constexpr GemvShapeMK gemv_quick_shape{8192, 8192};
// The tuned tensor-core variants run up to this batch (one or two n-tiles of 8 vectors).
inline constexpr std::int64_t gemv_tuned_max_batch = 16;
// The wgmma variant (16-bit formats) runs at gemv_shapes from this batch on: below it a 16-wide
// wgmma N is mostly padding, and the mma.sync kernels already stream W at the memcpy rate there.
// On the decode shapes it runs at every batch: where W is a few tens of MB (LLaMA-3's linears at
// TP 4 and 8) its 64-row tiles over every SM beat the mma.sync kernels at batches 8 and 16 where
// those trailed cuBLAS at batches 1-4 (docs/results/2026-12-02-h200-decode-shapes).
inline constexpr std::int64_t gemv_wgmma_min_batch = 8;
inline constexpr float stream_scalar = 0.4F;

// The size ladder of the stream kernels: arrays from 4 KiB to 256 MiB, the sizes of a decoder
// layer's norms, residual adds, K/V writes and SwiGLU (4 KiB: one token's K and V; 16 KiB: one
// token's hidden state), where a kernel's fixed cost (launch, ramp-up, tail) is most of its time.
// Launches read cold memory (the runner rotates copies), up to max_stream_rotation copies.
inline constexpr std::array<std::int64_t, 9> stream_ladder_bytes{
    std::int64_t{4} << 10,   std::int64_t{16} << 10, std::int64_t{64} << 10,
    std::int64_t{256} << 10, std::int64_t{1} << 20,  std::int64_t{4} << 20,
    std::int64_t{16} << 20,  std::int64_t{64} << 20, std::int64_t{256} << 20};
// At most this many copies per rotation: every sample replays a whole rotation, and 4 KiB arrays
// would want 30720 (a 30720-node graph per sample). Their copies then span 32 MiB, inside the L2,
// so the smallest sizes may read from L2: as a decoder layer's small kernels do, which read what
// the kernel before them wrote. Their time is the fixed cost either way.
inline constexpr int max_stream_rotation = 4096;
// Decode attention on LLaMA-3-70B's heads (bench::layer::llama3_70b), at contexts other than the
// layer suite's 4096 so that the layer check interpolates between them.
inline constexpr std::array<std::int64_t, 5> decode_attention_batches{1, 4, 16, 64, 256};
// 1k to 32k positions, issue 21's range (PyTorch's SDPA on the same shapes:
// scripts/gpu/torch_decode_attention.py).
inline constexpr std::array<std::int64_t, 5> decode_attention_contexts{1024, 2048, 8192, 16384, 32768};
// The KV-cache formats decode attention runs over (bf16 q and output): the layer's bf16, and e4m3
// with a per-tensor scale, as FP8 serving engines keep it.
inline constexpr std::array<DType, 2> decode_attention_kv_formats{DType::bf16, DType::fp8_e4m3};
inline constexpr std::int64_t decode_attention_ragged_context = 1000;

// Latent attention on DeepSeek-V3's latent (512 + 64 rotary), bf16: 16 query heads (its 128 at TP 8)
// and 128 (attention data parallelism, one GPU holding every head), batches up to a TensorRT-LLM
// rank's 128 requests; the ids and shapes of scripts/gpu/torch_latent_attention.py.
inline constexpr std::array<std::int64_t, 2> latent_attention_heads{16, 128};
inline constexpr std::array<std::int64_t, 4> latent_attention_batches{1, 8, 32, 128};
inline constexpr std::array<std::int64_t, 3> latent_attention_contexts{1024, 4096, 16384};

// One GEMV case: `batch` vectors of x in `activations` against W (shape.m x shape.k) in `weights`.
constexpr Case gemv_case(Variant v, GemvShapeMK shape, std::int64_t batch, DType activations, DType weights,
                         bool quick) {
  return Case{.kernel = Kernel::gemv,
              .variant = v,
              .m = shape.m,
              .k = shape.k,
              .batch = batch,
              .activations = activations,
              .weights = weights,
              .quick = quick};
}

// Calls f(case) for every case, in run order.
template <typename F>
constexpr void for_each_case(F&& f) {
  using enum Kernel;
  f(Case{.kernel = memcpy_d2d, .variant = Variant::runtime, .vector_bytes = 16, .quick = true});
  f(Case{.kernel = memcpy_d2d, .variant = Variant::graph, .vector_bytes = 16, .quick = true});
  for (Kernel op : {copy, scale, add, triad}) {
    for (int width : {4, 8, 16}) {
      f(Case{.kernel = op, .variant = Variant::tile, .vector_bytes = width, .quick = width == 16 || width == 4});
    }
    f(Case{.kernel = op, .variant = Variant::persistent, .vector_bytes = 16, .quick = op == copy || op == triad});
    if (op == copy || op == triad) f(Case{.kernel = op, .variant = Variant::streaming, .vector_bytes = 16});
  }
  for (int width : {4, 8, 16}) {
    f(Case{.kernel = dot, .variant = Variant::persistent, .vector_bytes = width, .quick = width != 8});
  }
  for (std::int64_t bytes : stream_ladder_bytes) {
    const bool quick = bytes == (std::int64_t{64} << 10);
    f(Case{.kernel = copy, .variant = Variant::tile, .vector_bytes = 16, .quick = quick, .array_bytes = bytes});
    f(Case{.kernel = add, .variant = Variant::tile, .vector_bytes = 16, .array_bytes = bytes});
    f(Case{.kernel = dot, .variant = Variant::persistent, .vector_bytes = 16, .array_bytes = bytes});
  }
  for (std::int64_t s : strides) {
    f(Case{.kernel = strided_read,
           .variant = Variant::persistent,
           .vector_bytes = 4,
           .stride = s,
           .quick = s == 1 || s == 3 || s == 8 || s == 32 || s == 256});
  }
  f(Case{.kernel = gather, .variant = Variant::persistent, .vector_bytes = 4, .quick = true});
  f(Case{.kernel = scatter, .variant = Variant::persistent, .vector_bytes = 4, .quick = true});
  for (const GemvFormat& format : gemv_formats) {
    for (const GemvShapeMK& shape : gemv_shapes) {
      for (std::int64_t batch : gemv_batches) {
        const bool quick =
            shape.m == gemv_quick_shape.m && shape.k == gemv_quick_shape.k &&
            std::find(format.quick_batches.begin(), format.quick_batches.end(), batch) != format.quick_batches.end();
        const auto gemv = [&](Variant v) { return gemv_case(v, shape, batch, format.dtype, format.dtype, quick); };
        f(gemv(Variant::mma));
        if (format.tuned && batch <= gemv_tuned_max_batch) {
          for (Variant v : {Variant::stag, Variant::pipe, Variant::pdl}) f(gemv(v));
        }
        if (batch <= 4) f(gemv(Variant::simt));
        if (batch >= gemv_wgmma_min_batch) f(gemv(Variant::wgmma));
        f(gemv(Variant::cublas));
        if (format.tuned && batch == 1) {
          f(gemv(Variant::cublasdirect));
          f(gemv(Variant::read));
        }
      }
    }
  }
  for (std::int64_t batch : gemv_wgmma_ragged_batches) {
    for (Variant v : {Variant::wgmma, Variant::cublas}) {
      f(gemv_case(v, gemv_wgmma_ragged_shape, batch, DType::bf16, DType::bf16, true));
    }
  }
  // The decode shapes in bf16: the project's tensor-core kernels and cuBLAS (the CUDA-core kernel and
  // the read floor are measured on gemv_shapes).
  for_each_gemv_decode_shape([&f](const GemvShapeMK& shape) {
    for (std::int64_t batch : gemv_batches) {
      const auto gemv = [&](Variant v) { return gemv_case(v, shape, batch, DType::bf16, DType::bf16, false); };
      f(gemv(Variant::mma));
      if (batch <= gemv_tuned_max_batch) {
        for (Variant v : {Variant::stag, Variant::pipe, Variant::pdl}) f(gemv(v));
      }
      f(gemv(Variant::wgmma));
      f(gemv(Variant::cublas));
    }
  });
  for (const GemvQuantisedFormat& format : gemv_quantised_formats) {
    for (const GemvShapeMK& shape : gemv_quantised_shapes) {
      for (std::int64_t batch : format.batches) {
        if (batch == 0) continue;
        const bool quick_shape = shape.m == gemv_quick_shape.m && shape.k == gemv_quick_shape.k;
        const auto gemv = [&](Variant v, bool quick) {
          return gemv_case(v, shape, batch, gemv_quantised_activations, format.weights, quick_shape && quick);
        };
        // --quick: batch 1's kernels, and the tensor-core kernel's shapes for batches above 16.
        f(gemv(Variant::mma, batch == 1 || batch == 32 || batch == 64));
        if (batch <= gemv_tuned_max_batch) {
          for (Variant v : {Variant::stag, Variant::pipe, Variant::pdl}) f(gemv(v, batch == 1 && v == Variant::stag));
        }
        if (batch <= 4) f(gemv(Variant::simt, batch == 1));
        if (format.read_floor && batch == 1) f(gemv(Variant::read, true));
      }
    }
  }
  const auto w8a8_cases = [&f](GemvShapeMK shape, std::int64_t batch, bool quick) {
    const auto w8a8_case = [&](Variant v) {
      return gemv_case(v, shape, batch, gemv_w8a8_format, gemv_w8a8_format, quick);
    };
    f(w8a8_case(Variant::mma));
    if (batch <= gemv_tuned_max_batch) {
      for (Variant v : {Variant::stag, Variant::pdl}) {
        Case c = w8a8_case(v);
        c.quick = quick && (batch == 1 || shape.m == gemv_w8a8_ragged_shape.m);
        f(c);
      }
    }
  };
  for (const GemvShapeMK& shape : gemv_w8a8_shapes) {
    for (std::int64_t batch : gemv_batches) {
      const bool quick = shape.m == gemv_quick_shape.m && shape.k == gemv_quick_shape.k &&
                         std::find(gemv_w8a8_quick_batches.begin(), gemv_w8a8_quick_batches.end(), batch) !=
                             gemv_w8a8_quick_batches.end();
      w8a8_cases(shape, batch, quick);
    }
  }
  for (std::int64_t batch : gemv_w8a8_ragged_batches) w8a8_cases(gemv_w8a8_ragged_shape, batch, true);
  for (DType kv : decode_attention_kv_formats) {
    for (std::int64_t batch : decode_attention_batches) {
      for (std::int64_t context : decode_attention_contexts) {
        f(Case{.kernel = decode_attention,
               .variant = Variant::flashdecode,
               .batch = batch,
               .activations = DType::bf16,
               .kv = kv,
               .quick = batch == 1 && context == 2048,
               .context = context});
      }
    }
    // A partial last key tile (1000 = 15 x 64 + 40 keys, the last of 4 splits): the kernel copies a
    // whole tile by its own path and zero-fills the rows past the cache's end. Checked under --quick.
    f(Case{.kernel = decode_attention,
           .variant = Variant::flashdecode,
           .batch = 4,
           .activations = DType::bf16,
           .kv = kv,
           .quick = true,
           .context = decode_attention_ragged_context});
  }
  const auto latent = [&f](std::int64_t heads, std::int64_t batch, std::int64_t context, bool quick) {
    f(Case{.kernel = latent_attention,
           .variant = Variant::flashdecode,
           .batch = batch,
           .activations = DType::bf16,
           .kv = DType::bf16,
           .quick = quick,
           .context = context,
           .heads = heads});
  };
  for (std::int64_t heads : latent_attention_heads) {
    for (std::int64_t batch : latent_attention_batches) {
      for (std::int64_t context : latent_attention_contexts) {
        latent(heads, batch, context, context == 1024 && (batch == 1 || (heads == 128 && batch == 8)));
      }
    }
  }
  // A partial head group and a partial key tile: checked under --quick; on the Hopper kernel (64-head
  // blocks, split) too.
  latent(24, 2, 1000, true);
  latent(96, 8, 1000, true);
  f(Case{.kernel = l2_read, .variant = Variant::persistent, .vector_bytes = 16, .quick = true});
  f(Case{.kernel = smem_read, .variant = Variant::persistent, .vector_bytes = 16, .quick = true});
}

constexpr std::size_t case_count() {
  std::size_t n = 0;
  for_each_case([&n](const Case&) { ++n; });
  return n;
}

// The table of cases.
inline constexpr auto cases = [] {
  std::array<Case, case_count()> table{};
  std::size_t i = 0;
  for_each_case([&](const Case& c) { table[i++] = c; });
  return table;
}();

// Sizes of the buffers the cases run on, derived from the device (its L2 and SM count) so that
// HBM figures come from buffers many times the L2 and ceilings from buffers that fit in it.
struct Sizes {
  std::int64_t stream_elements = 0;        // fp32 elements of each stream array
  std::int64_t strided_span_bytes = 0;     // the buffer strided reads walk through
  std::int64_t gather_table_elements = 0;  // u32 elements of the random-access table (a power of two)
  std::int64_t gather_accesses = 0;        // accesses per launch
  int gather_index_sets = 0;               // launches rotate through this many index arrays
  int l2_blocks = 0;                       // thread blocks of the L2 kernel (one slice each)
  std::int64_t l2_slice_bytes = 0;         // bytes each block reads per pass
  int l2_passes = 0;                       // passes over the whole buffer per launch
  int smem_blocks = 0;                     // thread blocks of the shared-memory kernel
  int smem_rounds = 0;                     // rounds of reads per block (a multiple of 8)
  std::int64_t rotation_floor_bytes = 0;   // a launch's rotating inputs span at least this much
  std::int64_t l2_bytes = 0;               // the device's L2
};
inline constexpr std::int64_t smem_block_bytes = 32 * 1024;  // shared memory each block reads
inline constexpr int smem_threads = 256;
inline constexpr int l2_threads = 256;

[[nodiscard]] Sizes plan_sizes(std::int64_t l2_bytes, int sms, bool quick);

// How many distinct copies of an input of `bytes` launches must rotate through so that a copy
// is evicted from L2 before it is read again: enough copies to span rotation_floor_bytes.
[[nodiscard]] int rotation_count(std::int64_t bytes, const Sizes& sizes);

// A ladder case's launches rotate through copies of its arrays placed one after another inside
// the suite's x, y and out arrays (launch i uses copy i % copies): `wanted` is rotation_count of
// the bytes one launch touches, `copies` as many of them as fit in the arrays (fewer under
// --quick, whose arrays are 32 MiB). A case at the suite's size has one copy.
struct StreamRotation {
  int copies = 1;
  int wanted = 1;
};
[[nodiscard]] StreamRotation stream_rotation(const Case& c, const Sizes& sizes);

// Strided reads: accesses per launch, and how many sector offsets launches rotate through.
[[nodiscard]] std::int64_t strided_accesses(std::int64_t stride, const Sizes& sizes);
[[nodiscard]] int strided_offsets(std::int64_t stride);

// fp32 elements of each array of a stream case: its own size on the ladder, else the suite's.
[[nodiscard]] std::int64_t stream_elements(const Case& c, const Sizes& sizes);
// "64KiB", "256MiB": a ladder size as it appears in case ids.
[[nodiscard]] std::string size_name(std::int64_t bytes);

// The attention of a decode_attention case: the layer suite's decode attention stage
// (bench::layer::attention_shape) at the case's batch and context, over the case's KV format; its
// cost is that stage's.
[[nodiscard]] AttentionShape decode_attention_shape(const Case& c);

// The attention of a latent_attention case: absorbed, one query per sequence, DeepSeek-V3's latent.
[[nodiscard]] LatentAttentionShape latent_attention_shape(const Case& c);
// The softmax scale the runner (and scripts/gpu/torch_latent_attention.py) uses: 1 / sqrt(128 + 64),
// DeepSeek-V3's query-key width (its YaRN factor left out).
inline constexpr double latent_attention_softmax_scale = 0.07216878364870323;

// Whether a GEMV case's W is quantised (its own group, "gemv_quant": bf16 x and y).
[[nodiscard]] bool quantised_gemv(const Case& c);
// Whether a GEMV case is W8A8 (fp8 W and x, bf16 y: its own group, "gemv_w8a8").
[[nodiscard]] bool w8a8_gemv(const Case& c);

[[nodiscard]] std::string case_id(const Case& c);
// How the wgmma GEMV cuts an m x k W at a batch on `sms` SMs (kernel_tiles::gemv_wgmma_split), for a
// result's detail: "; 64 tiles of 64 rows x 2 vector groups of N 16, k in 1 split of 16 blocks, 1 block
// per SM on 132 SMs".
[[nodiscard]] std::string gemv_wgmma_plan_note(std::int64_t m, std::int64_t k, std::int64_t batch, int sms);
[[nodiscard]] std::string_view group_of(const Case& c);
[[nodiscard]] std::string_view implementation_of(const Case& c);
[[nodiscard]] std::string_view kernel_name(Kernel k);
[[nodiscard]] std::string_view variant_name(Variant v);

// The model's count of one launch: FLOPs and bytes read and written.
[[nodiscard]] OpCost case_cost(const Case& c, const Sizes& sizes);
// Sectors moved by one launch of an access-pattern case (nullopt for the others).
[[nodiscard]] std::optional<SectorTraffic> case_sectors(const Case& c, const Sizes& sizes);

// A not-yet-run result for `c`: id, group, parameters, model cost, ceiling and reference.
[[nodiscard]] BenchmarkResult make_result(const Case& c, const Sizes& sizes);

inline constexpr std::string_view ceiling_id = "memcpy.d2d";

// The suite's description for the framework.
[[nodiscard]] const SuiteInfo& suite();

}  // namespace roofline::bench::memory
