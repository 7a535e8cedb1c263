#!/usr/bin/env python3
"""The library side of issue 21's flash-attention target, measured with PyTorch on the GPU machine.

The fused backends of torch.nn.functional.scaled_dot_product_attention (cuDNN, FlashAttention-2,
memory-efficient; the math backend is the unfused reference, never the fastest) on the prefill
shapes of roofline's compute suite that its Hopper kernel runs (`attn.bf16.*.flashwgmma`, head dims
64, 128 and 256): q, K, V and O laid out [batch][heads][seq][d] as roofline's kernel reads them,
bf16, causal and full.

  python3 scripts/gpu/torch_attention.py OUT.json          # head dims 64, 128, 256
  python3 scripts/gpu/torch_attention.py --mla OUT.json    # Q and K 192 wide, V 128 (the d192v128 cases)

- GQA: SDPA's own `enable_gqa`; a backend that refuses it is timed on K and V repeated to the query
  heads beforehand (not timed), and its row says `kv_expanded`.
- Timing: one CUDA graph of enough launches for about 20 ms, median of the replays' per-launch
  times. The SM clock is read with nvidia-smi before and after.
- FLOPs: the count roofline's model uses (2 x B x H x N x N_keys x (d + d_v); causal counts the keys up to
  and including the diagonal, N (N + 1) / 2 per head), so TFLOP/s compare directly with
  `roofline bench`'s.
- Every backend's output is checked against fp32 attention computed in PyTorch ops on a sample: the
  first and last 128 query rows of the first and last (batch, head) (relative error below 2e-2).
"""
import json
import math
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_clock import sm_clock
from torch_graph_timing import time_graph

BACKENDS = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}
SAMPLES = 9
TARGET_GRAPH_MS = 20.0


def mla_shapes():
    """(batch, heads, kv_heads, seq, head_dim, causal, head_dim_v): the compute suite's DeepSeek MLA prefill
    cases (expanded: Q and K 192 wide, V 128; 16 heads a GPU at TP 8, 128 at TP 1)."""
    out = [(max(1, 16384 // n), 16, 16, n, 192, True, 128) for n in (1024, 2048, 4096, 8192, 16384)]
    out += [(max(1, 8192 // n), 128, 128, n, 192, True, 128) for n in (1024, 4096, 8192)]
    out += [(4, 16, 16, 4096, 192, False, 128), (1, 128, 128, 4096, 192, False, 128)]
    return out


def shapes():
    """(batch, heads, kv_heads, seq, head_dim, causal, head_dim_v): include/roofline/bench/compute_suite.hpp's
    prefill cases at 32 heads."""
    out = []
    for causal in (True, False):
        for n in (512, 1024, 2048, 4096, 8192, 16384, 32768):
            out.append((max(1, 16384 // n), 32, 32, n, 128, causal))  # 16K tokens per batch
            out.append((max(1, 16384 // n), 32, 32, n, 64, causal))
            if n >= 1024 and n != 4096:
                out.append((4, 32, 32, n, 128, causal))  # B x H = 128 at every N (issue 21's target)
            if 1024 <= n <= 16384:
                out.append((16384 // n, 32, 32, n, 256, causal))
        out += [(4, 32, 8, 4096, d, causal) for d in (64, 128, 256)]  # GQA
    out = sorted(set(out), key=lambda s: (s[4] != 128, s[4], not s[5], s[3], s[0], s[2]))
    return [s + (s[4],) for s in out]


def flops(batch, heads, seq, head_dim, causal, head_dim_v):
    keys = seq * (seq + 1) / 2 if causal else seq * seq
    return 2.0 * batch * heads * keys * (head_dim + head_dim_v)


def attend(backend, q, k, v, causal, gqa):
    with sdpa_kernel([backend]):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)


def sampled_error(out, q, k, v, causal, descale=(1.0, 1.0, 1.0)):
    """Relative error of `out` on the first and last 128 query rows of the first and last (b, h), against
    fp32 attention of q, k and v times their descales (FP8 inputs; 1 for 16-bit ones)."""
    batch, heads, seq, head_dim = q.shape
    group = heads // k.shape[1]
    num = den = 0.0
    for b, h in {(0, 0), (batch - 1, heads - 1)}:
        for r0 in sorted({0, max(0, seq - 128)}):
            rows = torch.arange(r0, min(seq, r0 + 128), device=q.device)
            qs = q[b, h, rows].float() * descale[0]
            ks, vs = k[b, h // group].float() * descale[1], v[b, h // group].float() * descale[2]
            scores = qs @ ks.t() / math.sqrt(head_dim)
            if causal:
                keys = torch.arange(seq, device=q.device)
                scores = scores.masked_fill(keys[None, :] > rows[:, None], float("-inf"))
            want = torch.softmax(scores, dim=-1) @ vs
            got = out[b, h, rows].float()
            num += torch.linalg.vector_norm(got - want).item() ** 2
            den += torch.linalg.vector_norm(want).item() ** 2
    return math.sqrt(num / den)


def run_shape(batch, heads, kv_heads, seq, head_dim, causal, head_dim_v, rows):
    gen = torch.Generator(device="cuda").manual_seed(batch * 100003 + seq * 7 + kv_heads + head_dim + causal)
    unit = math.sqrt(3.0)  # unit variance, as roofline's runner fills them

    def uniform(h, width):
        return (torch.rand(batch, h, seq, width, device="cuda", generator=gen) * 2 - 1).mul_(unit).bfloat16()

    q, k, v = uniform(heads, head_dim), uniform(kv_heads, head_dim), uniform(kv_heads, head_dim_v)
    total = flops(batch, heads, seq, head_dim, causal, head_dim_v)
    for name, backend in BACKENDS.items():
        row = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "seq": seq, "head_dim": head_dim,
               "head_dim_v": head_dim_v, "causal": causal, "backend": name, "flops": total}
        gqa = kv_heads != heads
        ke, ve = k, v
        try:
            out = attend(backend, q, k, v, causal, gqa)
        except RuntimeError as native_error:
            if not gqa:
                row.update(status="not_supported", detail=str(native_error).splitlines()[0][:200])
                rows.append(row)
                continue
            try:
                ke = k.repeat_interleave(heads // kv_heads, dim=1)
                ve = v.repeat_interleave(heads // kv_heads, dim=1)
                gqa = False
                out = attend(backend, q, ke, ve, causal, False)
            except RuntimeError as e:
                row.update(status="not_supported", detail=str(e).splitlines()[0][:200])
                rows.append(row)
                continue
        error = sampled_error(out, q, k, v, causal)
        row.update(kv_expanded=(kv_heads != heads and not gqa), relative_error=error)
        del out
        if not error < 2e-2:
            row.update(status="failed", detail=f"relative error {error:.2e} against fp32 on sampled rows")
            rows.append(row)
            continue
        estimate_ms = total / 400e12 * 1e3
        launches = max(1, min(50, round(TARGET_GRAPH_MS / estimate_ms)))
        clock_before = sm_clock()
        median, low, high = time_graph(lambda _: attend(backend, q, ke, ve, causal, gqa), launches, SAMPLES, warmups=2)
        row.update(status="passed", median_us=median, min_us=low, max_us=high, launches=launches,
                   tflops=total / (median * 1e-6) / 1e12, sm_clock_mhz=[clock_before, sm_clock()])
        rows.append(row)
    del q, k, v
    torch.cuda.empty_cache()


def main():
    args = sys.argv[1:]
    mla = args[:1] == ["--mla"]
    if mla:
        args = args[1:]
    if len(args) != 1:
        print("usage: torch_attention.py [--mla] OUT.json", file=sys.stderr)
        sys.exit(2)
    rows = []
    for shape in (mla_shapes() if mla else shapes()):
        run_shape(*shape, rows)
        best = min((r for r in rows[-len(BACKENDS):] if r["status"] == "passed"), key=lambda r: r["median_us"],
                   default=None)
        print(f"b{shape[0]} h{shape[1]} kv{shape[2]} n{shape[3]} d{shape[4]} {'causal' if shape[5] else 'full'}: best "
              f"{best['backend'] if best else '-'} {best['tflops'] if best else float('nan'):.0f} TFLOP/s",
              file=sys.stderr)
    report = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(0), "results": rows}
    with open(args[0], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
