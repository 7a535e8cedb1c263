#!/usr/bin/env python3
"""The library side of roofline's latent-attention cases (attention.latent_decode.bf16.*), measured with
PyTorch on the GPU machine.

DeepSeek-V3's multi-head latent attention at decode in its absorbed form: H query heads of 576
(512 latent + 64 rotary) against one shared cache row of 576 per position, the first 512 also the
value; scale 1 / sqrt(192); bf16 q, cache and output; the cache [batch][context][576] as roofline's
kernel reads it. No library on the machine has an MLA kernel (FlashMLA and FlashInfer are not
installed), so the candidates are what an engine without one falls back to:

- `bmm`: the unfused form, scores = q @ cache^T (cuBLAS), softmax in fp32, out = p @ cache[..., :512]
  (cuBLAS): the scores make a round trip through HBM;
- SDPA's fused backends (memory-efficient, FlashAttention-2, cuDNN) with one KV head shared by H
  query heads (`enable_gqa`) and a value narrower than the key: a backend that refuses the shape is
  recorded as not_supported with its reason.

  python3 scripts/gpu/torch_latent_attention.py OUT.json

Cold cache: launches rotate through copies of the cache spanning at least 4 x the L2 (as roofline's
runner does), captured in one CUDA graph; the time is one replay's over its launches, median of
samples. Every output is checked against fp32 attention (relative Frobenius error below 2e-2).
"""
import json
import math
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_clock import sm_clock
from torch_graph_timing import time_graph

RANK, ROPE = 512, 64  # models/deepseek-v3.json: kv_lora_rank, qk_rope_head_dim
ROW = RANK + ROPE
SCALE = 1.0 / math.sqrt(128 + 64)  # qk_nope_head_dim + qk_rope_head_dim
HEADS = (16, 128)
BATCHES = (1, 8, 32, 128)
CONTEXTS = (1024, 4096, 16384)
BACKENDS = {
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}
ROTATION_FLOOR_L2S = 4
SAMPLES = 15


def l2_bytes():
    return torch.cuda.get_device_properties(0).L2_cache_size


def bmm_attention(q, cache):
    scores = torch.matmul(q, cache.transpose(1, 2)).float().mul_(SCALE)
    return torch.matmul(torch.softmax(scores, dim=-1).bfloat16(), cache[:, :, :RANK])


def sdpa_attention(backend, q, cache):
    with sdpa_kernel([backend]):
        return torch.nn.functional.scaled_dot_product_attention(
            q.unsqueeze(2), cache.unsqueeze(1), cache[:, :, :RANK].unsqueeze(1), scale=SCALE,
            enable_gqa=True).squeeze(2)


def reference_attention(q, cache):
    out = torch.empty(q.shape[0], q.shape[1], RANK, dtype=torch.float32, device=q.device)
    for b in range(q.shape[0]):
        c = cache[b].float()
        p = torch.softmax(q[b].float() @ c.T * SCALE, dim=-1)
        out[b] = p @ c[:, :RANK]
    return out


def relative_error(got, want):
    got, want = got.float(), want.float()
    return (torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want)).item()


def run_shape(heads, batch, context, rows):
    cache_bytes = batch * context * ROW * 2
    copies = max(1, math.ceil(ROTATION_FLOOR_L2S * l2_bytes() / cache_bytes))
    gen = torch.Generator(device="cuda").manual_seed(heads * 1000003 + batch * 100003 + context)
    unit = math.sqrt(3.0)  # unit variance, as roofline's runner fills them
    q = (torch.rand(batch, heads, ROW, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()
    caches = [(torch.rand(batch, context, ROW, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()
              for _ in range(copies)]
    reference = reference_attention(q, caches[0])
    flops = batch * heads * context * 2.0 * (ROW + RANK)
    model_bytes = batch * heads * ROW * 2 + cache_bytes + batch * heads * RANK * 2
    candidates = {"bmm": lambda c: bmm_attention(q, c)}
    for name, backend in BACKENDS.items():
        candidates[name] = lambda c, backend=backend: sdpa_attention(backend, q, c)
    for name, attend in candidates.items():
        row = {"heads": heads, "batch": batch, "context": context, "backend": name, "copies": copies,
               "model_flops": flops, "model_bytes": model_bytes}
        try:
            out = attend(caches[0])
        except RuntimeError as e:
            row.update(status="not_supported", detail=str(e).splitlines()[0][:200])
            rows.append(row)
            continue
        error = relative_error(out, reference)
        row.update(relative_error=error)
        if not error < 2e-2:
            row.update(status="failed", detail=f"relative error {error:.2e} against fp32 attention")
            rows.append(row)
            continue
        clock_before = sm_clock()
        median, low, high = time_graph(lambda i: attend(caches[i % copies]), max(copies, 8), SAMPLES)
        row.update(status="passed", median_us=median, min_us=low, max_us=high,
                   bandwidth_tbps=model_bytes / (median * 1e-6) / 1e12, tflops=flops / (median * 1e-6) / 1e12,
                   sm_clock_mhz=[clock_before, sm_clock()])
        rows.append(row)
        del out
    del caches
    torch.cuda.empty_cache()


def main():
    if len(sys.argv) != 2:
        print("usage: torch_latent_attention.py OUT.json", file=sys.stderr)
        sys.exit(2)
    rows = []
    for heads in HEADS:
        for batch in BATCHES:
            for context in CONTEXTS:
                run_shape(heads, batch, context, rows)
                best = min((r for r in rows if (r["heads"], r["batch"], r["context"]) == (heads, batch, context)
                            and r["status"] == "passed"), key=lambda r: r["median_us"], default=None)
                print(f"h{heads} b{batch} ctx{context}: best {best['backend'] if best else '-'} "
                      f"{best['median_us'] if best else float('nan'):.1f} us", file=sys.stderr)
    report = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(0), "latent": RANK, "rope": ROPE, "scale": SCALE,
              "results": rows}
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
