#!/usr/bin/env python3
"""A sweep from Python, in process vs through subprocesses (docs/results/python-sweep.md).

    PYTHONPATH=build/dev/python /usr/bin/python3 python/bench/sweep.py build/dev/roofline \\
        [--calls 100000] [--subprocess-calls 1000] [--llm-calls 2000] [--llm-subprocess-calls 200]

The in-process loop calls roofline.op("gemm", ...) `--calls` times, m stepping through 1..CALLS;
the subprocess loop runs the same calls (`roofline op gemm ... --format json`, json.loads of its
stdout) `--subprocess-calls` times, and its time is scaled to `--calls`: the per-call cost of a
subprocess does not depend on how many came before. The same for llm (batch stepping 1..).
A last row times the same points as one call (`m="1:CALLS:+1"`, the flags' sweep syntax). Prints a
markdown table.
"""

import argparse
import json
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


def in_process(function, make_flags, calls):
    start = time.perf_counter()
    for i in range(calls):
        function(**make_flags(i))
    return time.perf_counter() - start


def through_subprocess(binary, path, make_flags, calls):
    start = time.perf_counter()
    for i in range(calls):
        done = subprocess.run([binary, *command_words(path, make_flags(i))], capture_output=True, check=True)
        json.loads(done.stdout)
    return time.perf_counter() - start


def row(name, calls, seconds_in_process, subprocess_calls, seconds_subprocess):
    per_call_module = seconds_in_process / calls
    per_call_subprocess = seconds_subprocess / subprocess_calls
    return (f"| {name} | {calls:,} | {seconds_in_process:.2f} s ({per_call_module * 1e6:.1f} us/call) | "
            f"{subprocess_calls:,} in {seconds_subprocess:.2f} s ({per_call_subprocess * 1e3:.2f} ms/call) -> "
            f"{per_call_subprocess * calls:.0f} s | {per_call_subprocess / per_call_module:.0f}x |")


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

    print("| loop | calls in process | time in process | through subprocesses (scaled to the same calls) | "
          "speed-up |")
    print("| --- | ---: | ---: | ---: | ---: |")
    seconds = in_process(gemm, gemm_flags, args.calls)
    seconds_subprocess = through_subprocess(args.binary, ["op", "gemm"], gemm_flags, args.subprocess_calls)
    print(row(f"`op gemm` loop (m = 1..{args.calls:,}, n = k = 4096, h100)", args.calls, seconds, args.subprocess_calls,
              seconds_subprocess), flush=True)
    # The same points as one call: the sweep syntax of the flags, one report of `--calls` rows.
    start = time.perf_counter()
    rows = roofline.op("gemm", m=f"1:{args.calls}:+1", n=4096, k=4096, gpu="h100", dtype="bf16")["results"]["gemm"]
    seconds_one_call = time.perf_counter() - start
    assert len(rows) == args.calls
    print(f"| `op gemm --m 1:{args.calls}:+1` as one call ({args.calls:,} rows) | 1 | {seconds_one_call:.2f} s | "
          f"{seconds_subprocess / args.subprocess_calls * args.calls:.0f} s (the loop above) | "
          f"{seconds_subprocess / args.subprocess_calls * args.calls / seconds_one_call:.0f}x |", flush=True)
    if args.llm_calls > 0:
        seconds = in_process(roofline.llm, llm_flags, args.llm_calls)
        seconds_subprocess = through_subprocess(args.binary, ["llm"], llm_flags, args.llm_subprocess_calls)
        print(row("`llm` (llama-3.1-8b, h100, context 4096, batch 1..64)", args.llm_calls, seconds,
                  args.llm_subprocess_calls, seconds_subprocess), flush=True)


if __name__ == "__main__":
    main()
