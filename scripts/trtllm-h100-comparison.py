#!/usr/bin/env python3
"""What the closed-form decoder step of `roofline llm` predicts beside TensorRT-LLM's published H100
throughputs (issue 16, "Validation against measurements no one here made"), as a markdown table.

The published figures are `trtllm-bench throughput` on the PyTorch backend (v0.19 era): NVIDIA's FP8
checkpoints with an FP8 KV cache, every request queued at once, uniform synthetic ISL/OSL, CUDA
graphs, the KV cache given 0.95 of the free memory; the figure is the total output tokens/s of the
whole system (all TP GPUs of one instance).

For each row, `roofline llm` runs twice on the bundled preset, `--gpu h100-sxm --tp N --gpus N`,
`--weights fp8 --kv fp8`, `--prompt ISL`:
  1. `--context ISL+OSL --batch max`: the batch is the most requests whose KV cache fits at their
     longest (results.max_requests);
  2. `--context ISL+OSL/2 --batch B`: that batch timed at the mean context of a request's decode.
Two predictions come from run 2's JSON:
  decode only   results.tokens_per_s (replicas x batch / TPOT): the decode step alone, at the batch
                that fits, never interrupted by a prefill;
  with prefill  B / (TPOT + B x TTFT / OSL): each request also needs one prefill of ISL tokens
                (results.ttft_ms, one prompt alone), run between decode steps, B / OSL of them per
                step; no prefill is batched with another or with decode.
Error = (predicted - published) / published.

With --calibration CAL (a calibration file, or `auto` where this build has it) every op takes its
calibrated time; without it the times are the roofline at the datasheet peaks.

usage: scripts/trtllm-h100-comparison.py [--roofline BIN] [--calibration CAL] [-o FILE]
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass

SOURCE = ("TensorRT-LLM performance overview, v0.19-era PyTorch backend "
          "(https://nvidia.github.io/TensorRT-LLM/0.19.0/performance/perf-overview.html), "
          "as quoted in issue 16")
GPU = "h100-sxm"


@dataclass(frozen=True)
class Published:
    label: str
    model: str  # the bundled preset
    tp: int
    isl: int
    osl: int
    tokens_per_s: float


PUBLISHED = (
    Published("Llama-3.1-8B FP8", "llama-3.1-8b", 1, 1000, 1000, 15270),
    Published("Llama-3.1-8B FP8", "llama-3.1-8b", 1, 2048, 128, 3495),
    Published("Llama-3.1-8B FP8", "llama-3.1-8b", 1, 128, 2048, 22004),
    Published("Llama-3.1-70B FP8", "llama-3.1-70b", 2, 1000, 1000, 4191),
    Published("Llama-3.1-70B FP8", "llama-3.1-70b", 4, 1000, 1000, 7427),
    Published("Llama-3.1-70B FP8", "llama-3.1-70b", 8, 2048, 2048, 8773),
    Published("Llama-3.1-70B FP8", "llama-3.1-70b", 8, 128, 2048, 17464),
)


@dataclass(frozen=True)
class Prediction:
    batch: int
    tpot_ms: float
    ttft_ms: float
    decode_only: float
    with_prefill: float
    calibration: str  # what the llm report says it used ("" for none)
    calibrated_share: float | None  # of the decode step's time, the ops a table covered (None: no calibration)


def llm_args(row: Published, context: int, batch: str, calibration: str | None) -> list[str]:
    args = ["llm", "--model", row.model, "--gpu", GPU, "--tp", str(row.tp), "--gpus", str(row.tp),
            "--weights", "fp8", "--kv", "fp8", "--context", str(context), "--prompt", str(row.isl),
            "--batch", batch, "--no-levers", "--format", "json"]
    if calibration:
        args += ["--calibration", calibration]
    return args


def run_llm(binary: str, args: list[str]) -> dict:
    """The JSON report of `roofline ARGS`; on failure its one line and exit code are passed on."""
    run = subprocess.run([binary, *args], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"trtllm-h100-comparison: roofline {' '.join(args)}: {run.stderr.strip()}", file=sys.stderr)
        sys.exit(run.returncode)
    return json.loads(run.stdout)


def predict(binary: str, row: Published, calibration: str | None) -> Prediction:
    fit = run_llm(binary, llm_args(row, row.isl + row.osl, "max", calibration))["results"]
    batch = int(fit["max_requests"])
    report = run_llm(binary, llm_args(row, row.isl + row.osl // 2, str(batch), calibration))
    step = report["results"]
    tpot_s = step["tpot_ms"] / 1e3
    ttft_s = step["ttft_ms"] / 1e3
    used = step.get("calibration")
    return Prediction(batch=batch, tpot_ms=step["tpot_ms"], ttft_ms=step["ttft_ms"],
                      decode_only=step["tokens_per_s"],
                      with_prefill=batch / (tpot_s + batch * ttft_s / row.osl),
                      calibration=f"{used['file']} ({used['kind']}, measured on {used['from_gpu']}, used on {used['gpu']})"
                      if used else "",
                      calibrated_share=sum(op["share_of_step"] for op in step["decode"] if op.get("calibration_table"))
                      if used else None)


def error_pct(predicted: float, published: float) -> str:
    return f"{(predicted - published) / published * 100:+.0f}%"


def table(binary: str, calibration: str | None) -> str:
    lines = [
        f"Closed-form step of `roofline llm` on `{GPU}` vs the published `trtllm-bench throughput` figures",
        "",
        f"Published: {SOURCE}.",
        f"Predicted: {'calibration ' + calibration if calibration else 'no calibration (roofline at datasheet peaks)'}; "
        "FP8 weights and KV cache, one instance on TP GPUs, batch = max requests whose KV fits at ISL+OSL, "
        "step timed at context ISL+OSL/2.",
        "",
        "| model | TP | ISL/OSL | batch | TPOT [ms] | prefill of one prompt [ms] | decode only [tok/s] "
        "| with prefill [tok/s] | published [tok/s] | error, decode only | error, with prefill "
        "| decode step calibrated |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    used = set()
    for row in PUBLISHED:
        p = predict(binary, row, calibration)
        used.add(p.calibration)
        lines.append(
            f"| {row.label} | {row.tp} | {row.isl}/{row.osl} | {p.batch} | {p.tpot_ms:.2f} | {p.ttft_ms:.2f} "
            f"| {p.decode_only:,.0f} | {p.with_prefill:,.0f} | {row.tokens_per_s:,.0f} "
            f"| {error_pct(p.decode_only, row.tokens_per_s)} | {error_pct(p.with_prefill, row.tokens_per_s)} "
            f"| {'-' if p.calibrated_share is None else f'{p.calibrated_share * 100:.0f}%'} |")
    lines += [
        "",
        "decode only = results.tokens_per_s of the llm report (replicas x batch / TPOT); "
        "with prefill = batch / (TPOT + batch x TTFT / OSL), TTFT = results.ttft_ms (one prompt's prefill); "
        "error = (predicted - published) / published; decode step calibrated = the share of the step's time "
        "spent in ops a calibration table covered (the rest is the roofline).",
        f"Calibration the llm reports used: {', '.join(sorted(u or 'none' for u in used))}.",
    ]
    return "\n".join(lines) + "\n"


def default_binary() -> str:
    built = pathlib.Path(__file__).resolve().parent.parent / "build" / "dev" / "roofline"
    if built.exists():
        return str(built)
    return shutil.which("roofline") or "roofline"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roofline", default=default_binary(), help="the roofline binary (default: build/dev/roofline)")
    parser.add_argument("--calibration", help="passed to llm --calibration (a file, or auto where it exists)")
    parser.add_argument("-o", "--output", help="write the markdown table here instead of stdout")
    args = parser.parse_args()
    if shutil.which(args.roofline) is None and not pathlib.Path(args.roofline).is_file():
        print(f"trtllm-h100-comparison: --roofline {args.roofline}: no such program", file=sys.stderr)
        return 2
    text = table(args.roofline, args.calibration)
    if args.output:
        pathlib.Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
