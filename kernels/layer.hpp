#pragma once

// The pieces of a transformer decoder layer that are not matrix products (those come from
// gemm.hpp, gemv.hpp and cuBLAS): residual add + RMSNorm, rotary embedding, SwiGLU, the append of
// the new keys and values to the cache and the move of head-major attention outputs, flash-decoding
// attention over a KV cache, and fp32 reference versions of every step, which the layer benchmark
// checks its output against. Plain C++ launchers; the kernels live in layer/, one file per job
// (pointwise.cu, layout.cu, decode_attention.cu, reference.cu). Every launcher checks its
// arguments and the launch, and throws KernelError (compute_types.hpp).
//
// Layouts (row-major, 16-bit T, fp32 accumulation):
//   activations [tokens][hidden]; the fused projection's output qkv [tokens][(heads + 2 kv_heads) d],
//   each row q (heads x d), then k (kv_heads x d), then v (kv_heads x d);
//   KV cache [batch][kv_heads][context][d]; head-major prefill tensors [heads][tokens][d].
//
// e4m3 outputs (an FP8 deployment, static per-tensor scales): where a launcher takes `e4m3_scale`
// (a device pointer to the tensor's one float), a non-null scale makes it write its result as
// e4m3 of value / *e4m3_scale, rounded to nearest and saturated to +-448; the real value is the
// stored one times the scale. Null: the result is in the 16-bit `type`.

#include <cstddef>
#include <cstdint>

#include "compute_types.hpp"

namespace roofline::kernels {

struct HeadLayout {
  int heads = 64;
  int kv_heads = 8;
  int head_dim = 128;
  [[nodiscard]] int qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
};

// The residual add fused into RMSNorm, as engines run it: h = x + residual (fp32 arithmetic,
// stored in the 16-bit type as residual_out, the new residual stream), out[r] = h[r] /
// sqrt(mean(h[r]^2) + eps) * gamma; hidden a multiple of 8.
// With e4m3_scale, `out` (the normalised rows, what the next GEMM reads) is e4m3; residual_out stays 16-bit.
void add_rmsnorm(StorageFormat type, const void* x, const void* residual, const void* gamma, void* out,
                 void* residual_out, int rows, int hidden, float eps, Stream stream, const float* e4m3_scale = nullptr);
// Rotary embedding of the q and k heads of qkv rows (half-split pairs: element i with i + d/2,
// rotated by position x theta^(-2i/d)); row r is token r % tokens_per_sequence of its sequence, at
// position first_position + r % tokens_per_sequence. Keys are rotated in place; queries too, or,
// with q_head_major (one sequence), written rotated to q_head_major [heads][tokens][d] for a
// kernel that reads head-major queries. head_dim a multiple of 16.
void rope(StorageFormat type, void* qkv, void* q_head_major, int tokens, HeadLayout layout, int tokens_per_sequence,
          int first_position, float theta, Stream stream);
// out[r][j] = silu(gate_up[r][j]) * gate_up[r][ffn + j], silu(g) = g / (1 + exp(-g)); ffn a multiple of 8.
void swiglu(StorageFormat type, const void* gate_up, void* out, int rows, int ffn, Stream stream,
            const float* e4m3_scale = nullptr);
// in (16-bit `type`) -> out in e4m3 of in / *scale: the activations of an FP8 GEMM where the kernel
// before it writes 16 bits (the attention output). elements a multiple of 8.
void quantize_e4m3(StorageFormat type, const void* in, void* out, std::int64_t elements, const float* scale,
                   Stream stream);

// k and v of each qkv row into the cache [sequences][kv_heads][context][d]: row r belongs to
// sequence r / tokens_per_sequence at position first_position + r % tokens_per_sequence (decode:
// one row per sequence at position context - 1; prefill: one sequence, positions 0 .. tokens - 1).
// With e4m3_scale the cache is e4m3 (the scale convention of decode_attention's fp8 cache).
void kv_append(StorageFormat type, const void* qkv, void* k_cache, void* v_cache, int tokens, HeadLayout layout,
               int tokens_per_sequence, int context, int first_position, Stream stream,
               const float* e4m3_scale = nullptr);
// Prefill: o [heads][tokens][d] -> out [tokens][heads d]; with e4m3_scale, out is e4m3 (o_proj's input).
void attn_merge(StorageFormat type, const void* o, void* out, int tokens, int heads, int head_dim, Stream stream,
                const float* e4m3_scale = nullptr);

// The attention output against its fp32 reference, normwise: P is rounded to 16 bits before
// P.V, so about 2^-8 relative per term; what the layer and the decode-attention benchmark accept.
inline constexpr double attention_check_tolerance = 2e-2;

// Decode attention, flash-decoding style: one block per (sequence, KV head, split of the
// context) reads its K/V tiles once for all the query heads of the group (GQA: the heads are the
// rows of the tensor-core tile), keeps an online softmax per head, and writes an unnormalised
// partial output with its running max and sum; a second kernel merges the splits. Head dim 128.
struct DecodeAttentionPlan {
  int splits = 1;           // splits of the context per (sequence, KV head)
  int tiles_per_split = 1;  // 64-key tiles per split
  int blocks_per_sm = 1;    // the kernel's blocks resident on one SM (the split rule fills them)
  std::size_t workspace_bytes = 0;
};
// Splits so that batch x kv_heads x splits blocks cover the `sms` multiprocessors and fill their
// resident slots for the kernel of the `cache` format (kernel_tiles::decode_attention_split).
[[nodiscard]] DecodeAttentionPlan decode_attention_plan(int batch, HeadLayout layout, int context, int sms,
                                                        StorageFormat cache);
// Why decode_attention cannot run this shape, or nullptr.
[[nodiscard]] const char* decode_attention_unsupported(HeadLayout layout, int context);
// The KV cache decode attention reads: k and v [batch][kv_heads][context][d], in the format of the
// activations (bf16 or fp16) or in fp8_e4m3 with one per-tensor scale for both, a device pointer
// to one float: real value = stored e4m3 value x *scale (kv_append writes e4m3(value / *scale)).
struct KvCache {
  StorageFormat format = StorageFormat::bf16;
  const void* k = nullptr;
  const void* v = nullptr;
  const float* scale = nullptr;  // fp8_e4m3 only (nullptr for a 16-bit cache)
};
// q from qkv rows (token b = sequence b, in `type`); out [batch][heads d] in `type`. An e4m3 cache
// is widened to `type` in shared memory (exact) and its scale applied to the scores and the output
// in fp32.
void decode_attention(StorageFormat type, const void* qkv, const KvCache& cache, void* out, void* workspace, int batch,
                      HeadLayout layout, int context, const DecodeAttentionPlan& plan, Stream stream);
// The same over a 16-bit cache in `type`.
void decode_attention(StorageFormat type, const void* qkv, const void* k_cache, const void* v_cache, void* out,
                      void* workspace, int batch, HeadLayout layout, int context, const DecodeAttentionPlan& plan,
                      Stream stream);
// An e4m3 copy of `count` 16-bit values (`type`): cache[i] = e4m3(values[i] / *scale), rounded to
// nearest and saturated, and values[i] replaced by cache[i] x *scale in `type`, the history the fp8
// cache stands for (exact where the scale has at most 4 significant bits): what
// decode_attention_reference reads for an fp8 cache.
void quantize_kv_fp8(StorageFormat type, void* values, void* cache, std::size_t count, const float* scale,
                     Stream stream);

// Multi-head latent attention (DeepSeek-V2/V3) at decode, in its absorbed form: every query head
// attends over one cache row per position shared by all heads, the kv_lora_rank-wide latent
// followed by the rope_dim-wide rotary key, and the latent is also the value (the per-head up- and
// down-projections around it are the model's q_absorb and v_up GEMMs). Flash-decoding as above:
// one block per (sequence, 16-64 query heads, split of the context), a second kernel merges the
// splits. Layouts: q [batch][heads][rank + rope], cache [batch][context][rank + rope], out
// [batch][heads][rank], all in `type`.
struct LatentLayout {
  int heads = 16;  // query heads on this GPU
  int kv_lora_rank = 512;
  int rope_dim = 64;
};
// mma_sync: 8 warps on mma.sync, for 16-, 32- and 64-head blocks (any GPU from sm_80);
// wgmma: Hopper (sm_90a) only, 64-head blocks, a TMA producer warpgroup and two wgmma consumer
// warpgroups (latent_attention_wgmma.cu).
enum class LatentKernel : std::uint8_t { mma_sync, wgmma };
[[nodiscard]] const char* latent_kernel_name(LatentKernel kernel);
struct LatentAttentionPlan {
  int heads_per_block = 16;  // 16, 32 or 64 (kernel_tiles::latent_attention_m_tiles)
  int splits = 1;
  int tiles_per_split = 1;  // 64-key tiles per split
  std::size_t workspace_bytes = 0;
  LatentKernel kernel = LatentKernel::mma_sync;
};
// kernel_tiles::latent_attention_split over the `sms` multiprocessors; the wgmma kernel for 64-head
// blocks where the current device runs it.
[[nodiscard]] LatentAttentionPlan latent_attention_plan(int batch, LatentLayout layout, int context, int sms);
// Why latent_attention cannot run this shape, or nullptr (the kernel is built for rank 512, rope 64).
[[nodiscard]] const char* latent_attention_unsupported(LatentLayout layout, int context);
// scores = q . cache row x softmax_scale (DeepSeek: 1 / sqrt(qk_nope + qk_rope) times its YaRN factor).
void latent_attention(StorageFormat type, const void* q, const void* cache, void* out, void* workspace, int batch,
                      LatentLayout layout, int context, float softmax_scale, const LatentAttentionPlan& plan,
                      Stream stream);

// ---- fp32 references --------------------------------------------------------------------------

void to_float(StorageFormat type, const void* in, float* out, std::int64_t elements, Stream stream);
// An e4m3 tensor's real values: out[i] = e4m3 in[i] x *scale.
void dequantize_e4m3(const void* in, const float* scale, float* out, std::int64_t elements, Stream stream);
// The per-tensor scale that maps a 16-bit tensor onto e4m3's range: *scale = max |in| / 448 (448
// the largest finite e4m3), as FP8 checkpoints scale their weights.
void e4m3_scale_of(StorageFormat type, const void* in, std::int64_t elements, float* scale, Stream stream);
// In place: x = e4m3(x / *scale) x *scale, the rounding an e4m3 output applies, so that the fp32
// pipeline works on the values the kernels pass on.
void round_to_e4m3_reference(float* x, std::int64_t elements, const float* scale, Stream stream);
// out[i][:] = in[rows[i]][:] as fp32 (rows: device array of nrows indices).
void gather_rows_to_float(StorageFormat type, const void* in, const int* rows, int nrows, int cols, float* out,
                          Stream stream);
void rmsnorm_reference(const float* x, StorageFormat gamma_type, const void* gamma, float* out, int rows, int hidden,
                       float eps, Stream stream);
void add_reference(const float* a, const float* b, float* out, std::int64_t elements, Stream stream);
void swiglu_reference(const float* gate_up, float* out, int rows, int ffn, Stream stream);
// rope's rotation in double precision, in place on fp32 qkv rows (queries and keys).
void rope_reference(float* qkv_f32, int tokens, HeadLayout layout, int tokens_per_sequence, int first_position,
                    float theta, Stream stream);
// Decode: query row r of qkv_f32 (sequence r, fp32) against keys 0..context-2 of the cache and key
// context-1 from qkv_f32's own k and v; out [batch][heads d]. The cache is 16-bit, or with
// cache_type fp8_e4m3 e4m3 values times *cache_scale.
void decode_attention_reference(const float* qkv_f32, StorageFormat cache_type, const void* k_cache,
                                const void* v_cache, float* out, int batch, HeadLayout layout, int context,
                                Stream stream, const float* cache_scale = nullptr);
// Latent attention (the layouts of latent_attention), q in fp32: out [batch][heads][rank] in fp32.
void latent_attention_reference(const float* q_f32, StorageFormat cache_type, const void* cache, float* out, int batch,
                                LatentLayout layout, int context, float softmax_scale, Stream stream);
// Prefill, causal, one sequence of `tokens`: token rows[i] (< tokens) against keys 0..rows[i] from
// qkv_f32; out [nrows][heads d].
void prefill_attention_reference(const float* qkv_f32, const int* rows, int nrows, int tokens, float* out,
                                 HeadLayout layout, Stream stream);

}  // namespace roofline::kernels
