#!/usr/bin/env python3
"""A sweep from Python, in process vs through subprocesses (docs/results/python-sweep.md).

    PYTHONPATH=build/dev/python /usr/bin/python3 python/bench/sweep.py build/dev/roofline \\
        [--calls 100000] [--subprocess-calls 1000] [--llm-calls 2000] [--llm-subprocess-calls 200]

The in-process loop calls roofline.op("gemm", ...) `--calls` times, m stepping through 1..CALLS;
the subprocess loop runs the same calls (`roofline op gemm ... --format json`, json.loads of its
stdout) `--subprocess-calls` times, and its time is scaled to `--calls`: the per-call cost of a
subprocess does not depend on how many came before. The same for llm (batch stepping 1..).
A last row times the same points as one call (`m="1:CALLS:+1"`, the flags' sweep syntax). Prints a
markdown table of wall and CPU times (user + sys: getrusage of this process for the in-process
loop; of the children plus this process for the subprocess loop, which forks, waits and parses),
and the load average before and after: wall time grows with the machine's load, CPU time far less.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import roofline


def gemm_flags(i):
    return {"m": 1 + i, "n": 4096, "k": 4096, "gpu": "h100", "dtype": "bf16"}


def llm_flags(i):
    return {"model": "llama-3.1-8b", "gpu": "h100", "context": 4096, "batch": 1 + i % 64}


def command_words(path, flags):
    words = list(path)
    for key, value in flags.items():
        words += ["--" + key.replace("_", "-"), str(value)]
    return words + ["--format", "json"]


def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class Timed:
    """Wall and CPU seconds of a block; CPU of this process, plus its children's where asked."""

    def __init__(self, with_children=False):
        self.with_children = with_children

    def cpu(self):
        own = cpu_seconds(resource.RUSAGE_SELF)
        return own + cpu_seconds(resource.RUSAGE_CHILDREN) if self.with_children else own

    def __enter__(self):
        self.start_wall, self.start_cpu = time.perf_counter(), self.cpu()
        return self

    def __exit__(self, *_):
        self.wall, self.cpu_time = time.perf_counter() - self.start_wall, self.cpu() - self.start_cpu


def in_process(function, make_flags, calls):
    with Timed() as timed:
        for i in range(calls):
            function(**make_flags(i))
    return timed


def through_subprocess(binary, path, make_flags, calls):
    with Timed(with_children=True) as timed:
        for i in range(calls):
            done = subprocess.run([binary, *command_words(path, make_flags(i))], capture_output=True, check=True)
            json.loads(done.stdout)
    return timed


def row(name, calls, module, subprocess_calls, through):
    wall_module, cpu_module = module.wall / calls, module.cpu_time / calls
    wall_subprocess, cpu_subprocess = through.wall / subprocess_calls, through.cpu_time / subprocess_calls
    return (f"| {name} | {calls:,} | {module.wall:.2f} s ({wall_module * 1e6:.1f} us/call) | "
            f"{cpu_module * 1e6:.1f} us/call | "
            f"{subprocess_calls:,} in {through.wall:.2f} s ({wall_subprocess * 1e3:.2f} ms/call) -> "
            f"{wall_subprocess * calls:.0f} s | {cpu_subprocess * 1e3:.2f} ms/call | "
            f"**{wall_subprocess / wall_module:.0f}x** | {cpu_subprocess / cpu_module:.0f}x |")


def load_average():
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--subprocess-calls", type=int, default=1000)
    parser.add_argument("--llm-calls", type=int, default=2000)
    parser.add_argument("--llm-subprocess-calls", type=int, default=200)
    args = parser.parse_args()

    # The two routes give the same report (the module returns the CLI's JSON report).
    sample = gemm_flags(12345)
    cli = json.loads(subprocess.run([args.binary, *command_words(["op", "gemm"], sample)], capture_output=True,
                                    check=True).stdout)
    if roofline.op("gemm", **sample) != cli:
        sys.exit("the module's report differs from the CLI's")

    def gemm(**flags):
        return roofline.op("gemm", **flags)

    print(f"load average (1/5/15 min) before: {load_average()}\n", flush=True)
    print("| loop | calls in process | wall in process | CPU in process | through subprocesses, wall (scaled to the "
          "same calls) | CPU through subprocesses | speed-up, wall | speed-up, CPU |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    module = in_process(gemm, gemm_flags, args.calls)
    through = through_subprocess(args.binary, ["op", "gemm"], gemm_flags, args.subprocess_calls)
    print(row(f"`op gemm` loop (m = 1..{args.calls:,}, n = k = 4096, h100)", args.calls, module, args.subprocess_calls,
              through), flush=True)
    # The same points as one call: the sweep syntax of the flags, one report of `--calls` rows.
    with Timed() as one_call:
        rows = roofline.op("gemm", m=f"1:{args.calls}:+1", n=4096, k=4096, gpu="h100",
                           dtype="bf16")["results"]["gemm"]
    assert len(rows) == args.calls
    scale = args.calls / args.subprocess_calls
    print(f"| `op gemm --m 1:{args.calls}:+1` as one call ({args.calls:,} rows) | 1 | {one_call.wall:.2f} s | "
          f"{one_call.cpu_time:.2f} s | {through.wall * scale:.0f} s (the loop above) | "
          f"{through.cpu_time * scale:.0f} s | **{through.wall * scale / one_call.wall:.0f}x** | "
          f"{through.cpu_time * scale / one_call.cpu_time:.0f}x |", flush=True)
    if args.llm_calls > 0:
        module = in_process(roofline.llm, llm_flags, args.llm_calls)
        through = through_subprocess(args.binary, ["llm"], llm_flags, args.llm_subprocess_calls)
        print(row("`llm` (llama-3.1-8b, h100, context 4096, batch 1..64)", args.llm_calls, module,
                  args.llm_subprocess_calls, through), flush=True)
    print(f"\nload average (1/5/15 min) after: {load_average()}")

if __name__ == "__main__":
    main()
