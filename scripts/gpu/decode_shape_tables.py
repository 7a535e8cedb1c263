#!/usr/bin/env python3
"""Issue 21's side-by-side tables from one device call's results (markdown on stdout).

  decode_shape_tables.py attention BENCH.json TORCH.json   roofline's decode attention (bf16 and e4m3
                                                           caches) beside every SDPA backend
                                                           (scripts/gpu/torch_decode_attention.py)
  decode_shape_tables.py gemv BENCH.json                   the best project GEMV against cuBLAS at
                                                           every shape and batch of the bf16 cases

Times are the suites' medians (us); a ratio is the library's time over ours (>= 1: ours is faster).
"""
import json
import sys
from collections import defaultdict

from summarize_paired import rows_of

GEMV_BATCHES = (1, 2, 4, 8, 16, 32, 64)
LIBRARY_VARIANTS = ("cublas", "cublasdirect", "read")


def results_of(path):
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r for r in rows_of(json.load(f))}


def attention(bench_path, torch_path):
    ours = results_of(bench_path)
    torch_rows = json.load(open(torch_path, encoding="utf-8"))
    by_shape = defaultdict(dict)
    for r in torch_rows["results"]:
        by_shape[(r["batch"], r["context"])][r["backend"]] = r
    backends = ("flash", "efficient", "cudnn")
    print(f"PyTorch {torch_rows['torch']} (CUDA {torch_rows['cuda']}, cuDNN {torch_rows['cudnn']}); "
          "`(x)`: K and V repeated to the query heads (no enable_gqa).\n")
    print("| batch | context | roofline bf16 cache | " + " | ".join(f"SDPA {b}" for b in backends) +
          " | best SDPA / roofline | roofline e4m3 cache |")
    print("| ---: | ---: | ---: | " + " | ".join("---:" for _ in backends) + " | ---: | ---: |")
    for (batch, context), row in sorted(by_shape.items()):
        mine = ours.get(f"attention.decode.bf16.b{batch}.ctx{context}.flashdecode")
        fp8 = ours.get(f"attention.decode.bf16.kvfp8_e4m3.b{batch}.ctx{context}.flashdecode")
        cells = []
        passed = []
        for b in backends:
            r = row.get(b)
            if r is None or r["status"] != "passed":
                cells.append(r["status"].replace("_", " ") if r else "-")
                continue
            cells.append(f"{r['median_us']:.1f}{' (x)' if r.get('kv_expanded') else ''}")
            passed.append(r["median_us"])
        mine_us = mine["median_us"] if mine and mine["status"] == "passed" else None
        ratio = f"{min(passed) / mine_us:.2f}" if passed and mine_us else "-"
        fp8_cell = f"{fp8['median_us']:.1f}" if fp8 and fp8["status"] == "passed" else "-"
        print(f"| {batch} | {context} | {mine_us:.1f} | " + " | ".join(cells) + f" | {ratio} | {fp8_cell} |")


def gemv(bench_path):
    rs = results_of(bench_path)
    shapes = sorted({(r["m"], r["k"]) for r in rs.values() if r.get("dtype") == "bf16" and "m" in r
                     and r["id"].startswith("gemv.bf16.") and r["id"].count(".") == 4})
    print("Each cell: cuBLAS time / the best project kernel's, and which kernel (mma, stag, pipe, pdl, simt, "
          "wgmma).\n")
    print("| W (m x k) | " + " | ".join(f"b{b}" for b in GEMV_BATCHES) + " |")
    print("| --- | " + " | ".join("---:" for _ in GEMV_BATCHES) + " |")
    ratios = []
    for m, k in shapes:
        cells = []
        for b in GEMV_BATCHES:
            prefix = f"gemv.bf16.{m}x{k}.b{b}."
            library = rs.get(prefix + "cublas")
            project = [(r["median_us"], i.rsplit(".", 1)[1]) for i, r in rs.items()
                       if i.startswith(prefix) and r["status"] == "passed" and not i.endswith(LIBRARY_VARIANTS)]
            if not library or library["status"] != "passed" or not project:
                cells.append("-")
                continue
            best_us, kernel = min(project)
            ratio = library["median_us"] / best_us
            ratios.append(ratio)
            mark = "**" if round(ratio, 2) < 1 else ""  # bold: below cuBLAS
            cells.append(f"{mark}{ratio:.2f}{mark} {kernel}")
        print(f"| {m} x {k} | " + " | ".join(cells) + " |")
    if ratios:
        print(f"\n{sum(r >= 1 for r in ratios)} of {len(ratios)} at or above cuBLAS, {sum(r >= 0.95 for r in ratios)} "
              f"within 5%, worst {min(ratios):.2f}.")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "attention":
        attention(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "gemv":
        gemv(sys.argv[2])
    else:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
