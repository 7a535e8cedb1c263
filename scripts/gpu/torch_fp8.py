#!/usr/bin/env python3
"""The library side of issue 16's FP8 comparisons, measured with PyTorch on the GPU machine.

Independent of roofline's own kernels and runner: PyTorch calls cuBLASLt through
torch._scaled_mm (e4m3 operands, per-tensor scales, bf16 output, as vLLM's and TensorRT-LLM's
FP8 linears do) and FlashAttention-2 through scaled_dot_product_attention.

  python3 scripts/gpu/torch_fp8.py OUT.json

1. FP8 GEMM: 8192^3 and the LLaMA-3.1-70B prefill linears (TP 1) at M = 512 ... 8192 tokens.
2. An FP8 LLaMA-3.1-70B decoder layer (W8A8 linears with static per-tensor scales, bf16 attention,
   RMSNorm and SwiGLU in PyTorch ops) captured in one CUDA graph and replayed: decode batch 1, 4, 16,
   64 at context 1024 and 4096, prefill 512 ... 8192 tokens. PyTorch has no attention over an e4m3
   KV cache, so the cache is bf16 here (the roofline FP8 layer reads e4m3): at decode the PyTorch
   layer reads twice the cache bytes; its figures are a bound on an unfused implementation, not the
   same kernels.
Times: CUDA events around replays, median of samples, after warm-up; the SM clock is read with
nvidia-smi before and after.
"""
import json
import statistics
import sys

import torch

from gpu_clock import sm_clock

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 8192, 64, 8, 128, 28672  # models/llama-3.1-70b.json
E4M3_MAX = 448.0
SDPA_GQA = True  # set in main(): whether scaled_dot_product_attention takes enable_gqa


def time_us(fn, samples=30, inner=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / inner)
    return statistics.median(times), min(times), max(times)


def _sdpa_has_gqa():
    q = torch.zeros(1, 4, 1, 8, device="cuda", dtype=torch.bfloat16)
    kv = torch.zeros(1, 2, 4, 8, device="cuda", dtype=torch.bfloat16)
    try:
        torch.nn.functional.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
        return True
    except TypeError:
        return False


def attention(q, k, v, causal):
    """Grouped-query attention: SDPA's own GQA where this PyTorch has it, else K/V heads repeated."""
    if SDPA_GQA:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def quantize(t):
    scale = (t.abs().amax().float() / E4M3_MAX).clamp(min=1e-12)
    return (t.float() / scale).to(torch.float8_e4m3fn), scale


def fp8_linear(x8, x_scale, w8, w_scale):
    # w8 is [n, k] row-major; _scaled_mm wants b column-major [k, n]: its transpose view.
    return torch._scaled_mm(x8, w8.t(), scale_a=x_scale, scale_b=w_scale, out_dtype=torch.bfloat16)


def gemm_rows():
    rows = []
    shapes = [("square", 8192, 8192, 8192)]
    for m in (512, 2048, 8192):
        shapes += [("qkv", m, (HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN), ("o_proj", m, HIDDEN, HEADS * HEAD_DIM),
                   ("gate_up", m, 2 * FFN, HIDDEN), ("down", m, HIDDEN, FFN)]
    for name, m, n, k in shapes:
        a8, sa = quantize(torch.randn(m, k, device="cuda"))
        b8, sb = quantize(torch.randn(n, k, device="cuda") / k**0.5)
        ref = (a8.float() * sa) @ (b8.float() * sb).t()
        got = fp8_linear(a8, sa, b8, sb).float()
        error = ((got - ref).norm() / ref.norm()).item()
        median, low, high = time_us(lambda: fp8_linear(a8, sa, b8, sb))
        rows.append({"op": name, "m": m, "n": n, "k": k, "median_us": median, "min_us": low, "max_us": high,
                     "tflops": 2.0 * m * n * k / median / 1e6, "error_vs_fp32": error})
        print(f"gemm {name:8s} {m}x{n}x{k}: {median:9.2f} us, {rows[-1]['tflops']:7.1f} TFLOP/s, err {error:.1e}",
              flush=True)
    return rows


class Fp8Layer:
    """One LLaMA-70B decoder layer with FP8 weights and static activation scales (calibrated once)."""

    def __init__(self):
        def weight(n, k):
            return quantize(torch.empty(n, k, device="cuda").uniform_(-(3.0 / k) ** 0.5, (3.0 / k) ** 0.5))
        self.qkv = weight((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN)
        self.o = weight(HIDDEN, HEADS * HEAD_DIM)
        self.gate_up = weight(2 * FFN, HIDDEN)
        self.down = weight(HIDDEN, FFN)
        self.g1 = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.g2 = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.act_scale = torch.tensor(4.0 / E4M3_MAX, device="cuda")  # static, as FP8 checkpoints ship

    def q8(self, t):
        return (t.float() / self.act_scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)

    @staticmethod
    def rmsnorm(x, g):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(torch.bfloat16) * g

    def linear(self, x, w):
        return fp8_linear(self.q8(x), self.act_scale, w[0], w[1])

    def __call__(self, x, residual, k_cache, v_cache, batch, seq):
        h = x + residual
        qkv = self.linear(self.rmsnorm(h, self.g1), self.qkv)
        q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
        q = q.view(batch, seq, HEADS, HEAD_DIM).transpose(1, 2)
        if k_cache is None:  # prefill: causal attention over the new tokens
            k = k.view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v = v.view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
            a = attention(q, k, v, True)
        else:  # decode: the new token against the cache (the append is one copy per step)
            k_cache[:, :, -1:, :] = k.view(batch, 1, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v_cache[:, :, -1:, :] = v.view(batch, 1, KV_HEADS, HEAD_DIM).transpose(1, 2)
            a = attention(q, k_cache, v_cache, False)
        a = a.transpose(1, 2).reshape(batch * seq, HEADS * HEAD_DIM)
        h2 = self.linear(a, self.o) + h
        gu = self.linear(self.rmsnorm(h2, self.g2), self.gate_up)
        gate, up = gu.split([FFN, FFN], dim=-1)
        return self.linear(torch.nn.functional.silu(gate) * up, self.down), h2


def layer_rows():
    layer = Fp8Layer()
    rows = []
    cases = [("decode", b, 1, ctx) for ctx in (1024, 4096) for b in (1, 4, 16, 64)]
    cases += [("prefill", 1, n, n) for n in (512, 1024, 2048, 4096, 8192)]
    for phase, batch, seq, context in cases:
        tokens = batch * seq
        x = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
        r = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
        caches = (None, None)
        if phase == "decode":
            caches = tuple(torch.randn(batch, KV_HEADS, context, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
                           for _ in range(2))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                layer(x, r, *caches, batch, seq)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            layer(x, r, *caches, batch, seq)
        clock_before = sm_clock()
        median, low, high = time_us(graph.replay, samples=20, inner=3)
        rows.append({"phase": phase, "batch": batch, "seq": seq, "context": context, "median_us": median,
                     "min_us": low, "max_us": high, "sm_clock_mhz_before": clock_before,
                     "sm_clock_mhz_after": sm_clock()})
        print(f"layer {phase:7s} b{batch:<3d} seq {seq:<5d} ctx {context:<5d}: {median:9.2f} us", flush=True)
        del graph
        torch.cuda.empty_cache()
    return rows


def main():
    if len(sys.argv) != 2:
        print("usage: torch_fp8.py OUT.json", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    global SDPA_GQA
    SDPA_GQA = _sdpa_has_gqa()
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
              "cublaslt_via": "torch._scaled_mm", "sdpa_gqa": SDPA_GQA,
              "sm_clock_mhz_start": sm_clock()}
    report["gemm"] = gemm_rows()
    report["layer"] = layer_rows()
    report["sm_clock_mhz_end"] = sm_clock()
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
