#!/usr/bin/env python3
"""The library side of issue 21's FP8 flash-attention comparison, on the GPU machine.

cuDNN's FP8 SDPA forward (e4m3 Q, K, V with per-tensor descales), through the cuDNN frontend's
Python graph API (`import cudnn`) where the machine has it, on the FP8 prefill shapes of roofline's
compute suite (`attn.fp8_e4m3.*.flashwgmma`: head dims 128 and 256); beside it, PyTorch SDPA's
fused backends asked for the same e4m3 tensors (each row says whether the backend takes them).

  python3 scripts/gpu/torch_attention_fp8.py OUT.json

- Layout [batch][heads][seq][d], as roofline's kernel reads it. Values uniform as in roofline's
  runner (q up to 2, K and V up to 1) rounded to e4m3, descales q 0.5, k 3, v 0.25 (the runner's).
- cuDNN on Hopper writes O in e4m3 (bf16 O is a Blackwell feature of cuDNN 9.13+); scale_o = 16
  (|O| <= 0.25 here: x 16 keeps it in e4m3's normal range). roofline's kernel writes bf16 O: cuDNN
  writes half the bytes of O, a few per cent of either's traffic and none of its FLOPs.
- Checked against fp32 attention of the dequantised inputs on sampled rows (relative error below
  0.1: e4m3 rounding of P and of O).
- Timing: torch_fp8.py's time_us, CUDA events around a loop of launches (about 20 ms), median of 9
  such samples after warm-up; the SM clock read with nvidia-smi before and after.
- FLOPs: roofline's count (4 B H N N_keys d; causal N (N + 1) / 2 keys per head).
"""
import json
import math
import sys

import torch

from gpu_clock import sm_clock
from torch_attention import sampled_error
from torch_fp8 import time_us

SAMPLES = 9
TARGET_MS = 20.0
DESCALE = (0.5, 3.0, 0.25)
SCALE_O = 16.0  # |O| <= 0.25 x 16 = 4: e4m3's normal range


def shapes():
    """(batch, heads, kv_heads, seq, head_dim, causal): compute_suite.hpp's FP8 attention cases."""
    out = []
    for causal in (True, False):
        out += [(4, 32, 32, n, 128, causal) for n in (1024, 2048, 4096, 8192, 16384)]
        out.append((4, 32, 8, 4096, 128, causal))
        out += [(16384 // n, 32, 32, n, 256, causal) for n in (1024, 4096, 16384)]
    return out


def flops(batch, heads, seq, head_dim, causal):
    keys = seq * (seq + 1) / 2 if causal else seq * seq
    return 4.0 * batch * heads * keys * head_dim


def cudnn_fp8_sdpa(cudnn, q, k, v, causal):
    """A callable running cuDNN's FP8 SDPA forward on (q, k, v), and its e4m3 output tensor."""
    batch, heads, seq, head_dim = q.shape
    e4m3, fp32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
    handle = cudnn.create_handle()
    cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
    graph = cudnn.pygraph(io_data_type=e4m3, intermediate_data_type=fp32, compute_data_type=fp32, handle=handle)
    tq, tk, tv = [graph.tensor(name=n, dim=list(t.shape), stride=list(t.stride()), data_type=e4m3)
                  for n, t in (("q", q), ("k", k), ("v", v))]
    scalar = dict(dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=fp32)
    names = ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")
    scales = [graph.tensor(name=n, **scalar) for n in names]
    o, _, amax_s, amax_o = graph.sdpa_fp8(q=tq, k=tk, v=tv, descale_q=scales[0], descale_k=scales[1],
                                          descale_v=scales[2], descale_s=scales[3], scale_s=scales[4],
                                          scale_o=scales[5], is_inference=True,
                                          attn_scale=1.0 / math.sqrt(head_dim), use_causal_mask=causal, name="sdpa")
    out = torch.empty(batch, heads, seq, head_dim, dtype=torch.float8_e4m3fn, device="cuda")
    o.set_output(True).set_dim(list(out.shape)).set_stride(list(out.stride()))
    amax = [torch.empty(1, 1, 1, 1, dtype=torch.float32, device="cuda") for _ in range(2)]
    for t in (amax_s, amax_o):
        t.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(fp32)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    workspace = torch.empty(max(1, graph.get_workspace_size()), dtype=torch.uint8, device="cuda")
    # descale_s / scale_s: P is taken to e4m3 as P x 448 and back (cuDNN's convention for P in [0, 1]).
    values = (DESCALE[0], DESCALE[1], DESCALE[2], 1.0 / 448.0, 448.0, SCALE_O)
    device_scales = [torch.full((1, 1, 1, 1), x, dtype=torch.float32, device="cuda") for x in values]
    pack = {tq: q, tk: k, tv: v, o: out, amax_s: amax[0], amax_o: amax[1]}
    pack.update(zip(scales, device_scales))

    def run():
        graph.execute(pack, workspace, handle=handle)

    return run, out


def run_shape(cudnn, batch, heads, kv_heads, seq, head_dim, causal, rows):
    gen = torch.Generator(device="cuda").manual_seed(batch * 100003 + seq * 7 + kv_heads + head_dim + causal)

    def uniform(h, scale):
        x = (torch.rand(batch, h, seq, head_dim, device="cuda", generator=gen) * 2 - 1) * scale
        return x.to(torch.float8_e4m3fn)

    q, k, v = uniform(heads, 2.0), uniform(kv_heads, 1.0), uniform(kv_heads, 1.0)
    total = flops(batch, heads, seq, head_dim, causal)
    base = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "seq": seq, "head_dim": head_dim, "causal": causal,
            "flops": total}
    launches = max(1, min(100, round(TARGET_MS / (total / 800e12 * 1e3))))

    row = dict(base, backend="cudnn_fp8")
    if cudnn is None:
        row.update(status="not_supported", detail="the cuDNN frontend's Python module (import cudnn) is not installed")
    else:
        try:
            ke = k if kv_heads == heads else k.repeat_interleave(heads // kv_heads, dim=1)
            ve = v if kv_heads == heads else v.repeat_interleave(heads // kv_heads, dim=1)
            run, out = cudnn_fp8_sdpa(cudnn, q, ke, ve, causal)
            run()
            torch.cuda.synchronize()
            error = sampled_error(out.float() / SCALE_O, q, k, v, causal, DESCALE)
            row.update(relative_error=error, kv_expanded=kv_heads != heads)
            if not error < 0.1:
                row.update(status="failed", detail=f"relative error {error:.2e} against fp32 on sampled rows")
            else:
                clock_before = sm_clock()
                median, low, high = time_us(run, samples=SAMPLES, inner=launches)
                row.update(status="passed", median_us=median, min_us=low, max_us=high, launches=launches,
                           tflops=total / (median * 1e-6) / 1e12, sm_clock_mhz=[clock_before, sm_clock()])
        except Exception as e:  # a graph the machine's cuDNN does not support: its message is the result
            row.update(status="not_supported", detail=str(e).splitlines()[0][:300] if str(e) else type(e).__name__)
    rows.append(row)

    # PyTorch's own SDPA on the e4m3 tensors: recorded so that the answer (taken or refused) is on file.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name, backend in (("torch_cudnn", SDPBackend.CUDNN_ATTENTION), ("torch_flash", SDPBackend.FLASH_ATTENTION)):
        row = dict(base, backend=name)
        try:
            with sdpa_kernel([backend]):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 enable_gqa=kv_heads != heads)
            row.update(status="ran", detail="took e4m3 inputs (not timed: no descales in this API)")
        except Exception as e:
            row.update(status="not_supported", detail=str(e).splitlines()[0][:200])
        rows.append(row)
    del q, k, v
    torch.cuda.empty_cache()


def main():
    if len(sys.argv) != 2:
        print("usage: torch_attention_fp8.py OUT.json", file=sys.stderr)
        sys.exit(2)
    try:
        import cudnn
        version = cudnn.backend_version()
    except Exception as e:
        cudnn, version = None, f"not available: {e}"
    rows = []
    for shape in shapes():
        run_shape(cudnn, *shape, rows)
        r = rows[-3]
        print(f"b{shape[0]} h{shape[1]} kv{shape[2]} n{shape[3]} d{shape[4]} {'causal' if shape[5] else 'full'}: "
              f"cudnn fp8 {r['status']} {r.get('tflops', float('nan')):.0f} TFLOP/s {r.get('detail', '')}",
              file=sys.stderr)
    report = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
              "cudnn_frontend_backend": version, "device": torch.cuda.get_device_name(0), "results": rows}
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
