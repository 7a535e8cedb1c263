#!/usr/bin/env python3
"""The library side of issue 21's decode-attention target, measured with PyTorch on the GPU machine.

The fused backends of torch.nn.functional.scaled_dot_product_attention (FlashAttention-2,
memory-efficient, cuDNN; the math backend is the unfused reference, never the fastest) on the shapes of roofline's `attention.decode.bf16` cases: one new token per sequence,
LLaMA-3-70B's heads (64 query heads on 8 KV heads, head dim 128), bf16 q, K, V and output, the cache
laid out [batch][kv_heads][context][128] as roofline's kernel reads it.

  python3 scripts/gpu/torch_decode_attention.py OUT.json

- GQA: SDPA's own `enable_gqa` (K and V read once per KV head). A backend that refuses it is timed
  on K and V repeated to 64 heads beforehand (the repeat is not timed; the backend then reads 8x
  the cache bytes), where that copy fits in 16 GB; its row says `kv_expanded`.
- Cold cache: launches rotate through copies of K and V spanning at least 4 x the L2 (as roofline's
  runner does), captured in one CUDA graph; the time is one graph replay's over its launches,
  median of samples. The SM clock is read with nvidia-smi before and after.
- Every backend's output is checked against an fp32 attention computed per sequence in PyTorch ops
  (relative Frobenius error below 2e-2).
"""
import json
import math
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_clock import sm_clock
from torch_graph_timing import time_graph

HEADS, KV_HEADS, HEAD_DIM = 64, 8, 128  # models/llama-3.1-70b.json
BATCHES = (1, 4, 16, 64)
CONTEXTS = (1024, 2048, 8192, 16384, 32768)
BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}
ROTATION_FLOOR_L2S = 4
EXPANDED_LIMIT_BYTES = 16 << 30
SAMPLES = 15


def l2_bytes():
    return torch.cuda.get_device_properties(0).L2_cache_size


def attend(backend, q, k, v, gqa):
    with sdpa_kernel([backend]):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)


def reference_attention(q, k, v):
    """fp32 attention, one sequence at a time (the math backend would repeat K and V to 64 heads)."""
    group = HEADS // KV_HEADS
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b in range(q.shape[0]):
        qb = q[b, :, 0].float().view(KV_HEADS, group, HEAD_DIM)
        kb, vb = k[b].float(), v[b].float()
        scores = torch.softmax(qb @ kb.transpose(1, 2) / math.sqrt(HEAD_DIM), dim=-1)
        out[b, :, 0] = (scores @ vb).reshape(HEADS, HEAD_DIM)
    return out


def relative_error(got, want):
    got, want = got.float(), want.float()
    return (torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want)).item()


def run_shape(batch, context, rows):
    cache_bytes = 2 * batch * KV_HEADS * context * HEAD_DIM * 2  # K and V, bf16
    copies = max(1, math.ceil(ROTATION_FLOOR_L2S * l2_bytes() / cache_bytes))
    gen = torch.Generator(device="cuda").manual_seed(batch * 100003 + context)
    unit = math.sqrt(3.0)  # unit variance, as roofline's runner fills them
    q = (torch.rand(batch, HEADS, 1, HEAD_DIM, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()
    ks = [(torch.rand(batch, KV_HEADS, context, HEAD_DIM, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()
          for _ in range(copies)]
    vs = [(torch.rand(batch, KV_HEADS, context, HEAD_DIM, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()
          for _ in range(copies)]
    reference = reference_attention(q, ks[0], vs[0])
    launches = max(copies, 8)
    for name, backend in BACKENDS.items():
        row = {"batch": batch, "context": context, "backend": name, "copies": copies, "model_bytes": cache_bytes}
        gqa = True
        try:
            out = attend(backend, q, ks[0], vs[0], True)
        except RuntimeError as native_error:
            expanded = HEADS // KV_HEADS * cache_bytes
            if expanded > EXPANDED_LIMIT_BYTES:
                row.update(status="not_run", detail=f"no enable_gqa ({str(native_error).splitlines()[0][:160]}); "
                                                    f"K/V repeated to {HEADS} heads would take {expanded / 1e9:.1f} GB")
                rows.append(row)
                continue
            gqa = False
            try:
                # Rotated as the native cache is, so that a small expanded cache is not read from L2.
                expanded_copies = max(1, math.ceil(ROTATION_FLOOR_L2S * l2_bytes() / expanded))
                ke = [ks[i % copies].repeat_interleave(HEADS // KV_HEADS, dim=1) for i in range(expanded_copies)]
                ve = [vs[i % copies].repeat_interleave(HEADS // KV_HEADS, dim=1) for i in range(expanded_copies)]
                out = attend(backend, q, ke[0], ve[0], False)
            except RuntimeError as e:
                row.update(status="not_supported", detail=str(e).splitlines()[0][:200])
                rows.append(row)
                continue
        error = relative_error(out, reference)
        row.update(kv_expanded=not gqa, relative_error=error)
        if not error < 2e-2:
            row.update(status="failed", detail=f"relative error {error:.2e} against the math backend in fp32")
            rows.append(row)
            continue
        if gqa:
            fn = lambda i: attend(backend, q, ks[i % copies], vs[i % copies], True)  # noqa: E731
        else:
            fn = lambda i: attend(backend, q, ke[i % len(ke)], ve[i % len(ve)], False)  # noqa: E731
        clock_before = sm_clock()
        median, low, high = time_graph(fn, launches if gqa else max(len(ke), 8), SAMPLES)
        row.update(status="passed", median_us=median, min_us=low, max_us=high,
                   bandwidth_tbps=cache_bytes / (median * 1e-6) / 1e12,
                   sm_clock_mhz=[clock_before, sm_clock()])
        rows.append(row)
        del out
        if not gqa:
            del ke, ve
    del ks, vs
    torch.cuda.empty_cache()


def main():
    if len(sys.argv) != 2:
        print("usage: torch_decode_attention.py OUT.json", file=sys.stderr)
        sys.exit(2)
    rows = []
    for batch in BATCHES:
        for context in CONTEXTS:
            run_shape(batch, context, rows)
            best = min((r for r in rows if r["batch"] == batch and r["context"] == context and r["status"] == "passed"),
                       key=lambda r: r["median_us"], default=None)
            print(f"b{batch} ctx{context}: best "
                  f"{best['backend'] if best else '-'} {best['median_us'] if best else float('nan'):.1f} us",
                  file=sys.stderr)
    report = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(0), "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM,
              "results": rows}
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
