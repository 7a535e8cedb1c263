#!/usr/bin/env python3
"""roofline's latent attention cases beside PyTorch's best form of the same shapes, as a markdown table.

  python3 scripts/gpu/latent_attention_table.py LATENT.json TORCH-LATENT.json

LATENT.json: `roofline bench --suite memory --filter attention.latent_decode.` (its `latent_attention`
rows); TORCH-LATENT.json: scripts/gpu/torch_latent_attention.py. One row per shape: roofline's median,
its bandwidth and TFLOP/s, PyTorch's best passing backend and its median, and PyTorch's time over ours
(above 1: ours is faster).
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: latent_attention_table.py LATENT.json TORCH-LATENT.json", file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1], encoding="utf-8") as f:
        ours = json.load(f)["results"]["latent_attention"]
    with open(sys.argv[2], encoding="utf-8") as f:
        theirs = json.load(f)["results"]
    best = {}
    for r in theirs:
        if r.get("status") != "passed":
            continue
        key = (r["heads"], r["batch"], r["context"])
        if key not in best or r["median_us"] < best[key]["median_us"]:
            best[key] = r
    print("| heads | batch | context | roofline [us] | TB/s | TFLOP/s | PyTorch best | its time [us] | PyTorch / roofline |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for r in ours:
        m = re.search(r"\.h(\d+)\.b(\d+)\.ctx(\d+)\.", r["id"])
        key = tuple(int(x) for x in m.groups())
        if r["status"] != "passed":
            print(f"| {key[0]} | {key[1]} | {key[2]} | {r['status']} | | | | | |")
            continue
        lib = best.get(key)
        lib_cells = (f"{lib['backend']} | {lib['median_us']:.1f} | {lib['median_us'] / r['median_us']:.2f}"
                     if lib else "- | - | -")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {r['median_us']:.1f} | {r['bandwidth_tbps']:.2f} | "
              f"{r['tflops']:.0f} | {lib_cells} |")


if __name__ == "__main__":
    main()
