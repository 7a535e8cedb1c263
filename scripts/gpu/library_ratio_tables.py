#!/usr/bin/env python3
"""The project's GEMM or GEMV kernels beside the library in one run, and beside an earlier run
(markdown on stdout; docs/results/2026-12-04-h200-gemm-pairs-gemv-groups).

  library_ratio_tables.py gemm BENCH.json [BEFORE.json ...]   the tensor-core GEMMs (wgmma, and where
                                                              listed splitk, streamk, swapab) against
                                                              cuBLAS (16-bit) and cuBLASLt (FP8);
                                                              "before" from the earlier runs' same ids
  library_ratio_tables.py gemv BENCH.json [BEFORE.json ...]   wgmma GEMVs against cuBLAS, sorted by
                                                              batch and ratio, with counts per batch

Times are each case's lowest sample (us, the `min_us` the suites record); a ratio is the library's
time over ours (>= 1: ours is faster); "before / now" is the earlier run's time over this one's.
Bad input (a file missing, not JSON, not a bench report): one line on stderr, exit 2.
"""
import statistics
import sys

from summarize_paired import load_report


def results(path, tables):
    report = load_report(path, "library_ratio_tables.py")["results"]
    return {r["id"]: r for t in tables for r in report.get(t, []) if r.get("min_us")}


def earlier(paths, tables):
    out = {}
    for path in paths:
        out.update(results(path, tables))
    return out


# The project's tensor-core GEMMs a shape may list, in the order the table shows them.
GEMM_IMPLS = ("wgmma", "splitk", "streamk", "swapab")


def gemm(bench, before_paths):
    for table, library in (("gemm", "cublas"), ("gemm_fp8", "cublaslt")):
        rows = results(bench, (table,))
        before = earlier(before_paths, (table,))
        print(f"| case | kernel | ours us | TFLOP/s | SM MHz | {library} us | TFLOP/s | SM MHz | {library} / ours "
              "| before us | before / now |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        shapes = []
        for case in rows:
            shape, impl = case.rsplit(".", 1)
            if impl in GEMM_IMPLS and shape not in shapes:
                shapes.append(shape)
        for shape in shapes:
            lib = rows.get(f"{shape}.{library}")
            if lib is None:
                continue
            for impl in GEMM_IMPLS:
                ours = rows.get(f"{shape}.{impl}")
                if ours is None:
                    continue
                b = before.get(f"{shape}.{impl}")
                then = f"{b['min_us']:.1f} | {b['min_us'] / ours['min_us']:.2f}" if b else "- | -"
                print(f"| {shape} | {impl} | {ours['min_us']:.1f} | {ours['tflops']:.0f} | "
                      f"{ours['sm_clock_mhz']:.0f} | {lib['min_us']:.1f} | {lib['tflops']:.0f} | "
                      f"{lib['sm_clock_mhz']:.0f} | {lib['min_us'] / ours['min_us']:.2f} | {then} |")
        print()


def gemv(bench, before_paths):
    rows = results(bench, ("gemv",))
    before = earlier(before_paths, ("gemv",))
    lines = []
    for case, ours in rows.items():
        if not case.endswith(".wgmma"):
            continue
        lib = rows.get(case[: -len("wgmma")] + "cublas")
        if lib is None:
            continue
        shape = case[: -len(".wgmma")]
        batch = int(shape.rsplit(".b", 1)[1])
        lines.append((batch, lib["min_us"] / ours["min_us"], shape, ours["min_us"], lib["min_us"], before.get(case)))
    lines.sort()
    print("| shape | ours us | cuBLAS us | cuBLAS / ours | before us | before / now |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for batch, ratio, shape, ours, lib, b in lines:
        then = f"{b['min_us']:.2f} | {b['min_us'] / ours:.2f}" if b else "- | -"
        print(f"| {shape} | {ours:.2f} | {lib:.2f} | {ratio:.2f} | {then} |")
    print()
    for batch in sorted({line[0] for line in lines}):
        ratios = [line[1] for line in lines if line[0] == batch]
        print(f"- batch {batch}: at or above cuBLAS on {sum(r >= 1 for r in ratios)} of {len(ratios)} shapes, "
              f"median {statistics.median(ratios):.2f}, lowest {min(ratios):.2f}")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("gemm", "gemv"):
        print("usage: library_ratio_tables.py gemm|gemv BENCH.json [BEFORE.json ...]", file=sys.stderr)
        sys.exit(2)
    (gemm if sys.argv[1] == "gemm" else gemv)(sys.argv[2], sys.argv[3:])


if __name__ == "__main__":
    main()
