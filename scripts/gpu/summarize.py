#!/usr/bin/env python3
"""Compact summary of a GPU run's results (scripts/gpu/run.sh writes them).

Usage: summarize.py RESULTS_DIR

Reads bench-memory.json, bench-compute.json, bench-layer.json and sanitize.log where present and
prints, in about a hundred lines: the device, the memcpy ceiling, streaming and batch-1 GEMV against
cuBLAS and the read floor, the GEMM ladder, attention by N, the decoder layer by case with its
heaviest stages, every target, every result that did not pass, and the sanitizer summaries.
"""
import json
import pathlib
import re
import sys


def load(directory, name):
    path = directory / name
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        print(f"{name}: unreadable JSON ({error})")
        return None


def num(value, fmt="{:.3f}", empty="-"):
    return empty if value is None else fmt.format(value)


def header(report, name):
    results = report["results"]
    run = results["run"][0]
    device = results["device"][0]
    print(f"\n==== {name}: {device['name']} | driver API {device['driver_version']} | cuBLAS "
          f"{device['cublas_version']} | SM clock {device['sm_clock_start_mhz']}->{device['sm_clock_end_mhz']} MHz"
          f" | {run['started_utc']} | {run['duration_s']:.0f} s")
    print(f"passed {run['passed']}  failed {run['failed']}  not_run {run['not_run']}  "
          f"not_supported {run['not_supported']}  stopped_early {run['stopped_early']}")


def memory(report):
    results = report["results"]
    header(report, "memory suite")
    for note in report.get("notes", []):
        if "memcpy" in note or "WARNING" in note:
            print("  note:", note)
    print("stream (16 B and the ceiling):")
    for row in results.get("stream", []):
        if row["vector_bytes"] == 16 or row["op"] == "memcpy":
            print(f"  {row['id']:<30} {row['status']:<8} {num(row['median_us'], '{:9.1f}'):>9} us "
                  f"{num(row['bandwidth_tbps']):>6} TB/s {num(row['pct_of_memcpy'], '{:6.1f}'):>6} % memcpy")
    print("GEMV batch 1 (bf16 and fp16): us, TB/s, % memcpy, x cuBLAS")
    for row in results.get("gemv", []):
        if row["batch"] == 1:
            print(f"  {row['id']:<34} {row['status']:<8} {num(row['median_us'], '{:8.2f}'):>8} "
                  f"{num(row['bandwidth_tbps']):>6} {num(row['pct_of_memcpy'], '{:6.1f}'):>6} "
                  f"{num(row['speedup_vs_cublas'], '{:5.2f}'):>5}")
    print("GEMV bf16 8192^2 by batch: best roofline kernel vs cuBLAS (TB/s)")
    by_batch = {}
    for row in results.get("gemv", []):
        if row["dtype"] == "bf16" and row["m"] == 8192 and row["k"] == 8192 and row["bandwidth_tbps"]:
            entry = by_batch.setdefault(row["batch"], {})
            variant = row["id"].rsplit(".", 1)[1]
            if variant == "cublas":
                entry["cublas"] = row["bandwidth_tbps"]
            elif variant != "read" and row["bandwidth_tbps"] > entry.get("best", (None, 0))[1]:
                entry["best"] = (variant, row["bandwidth_tbps"])
    for batch, entry in sorted(by_batch.items()):
        best = entry.get("best", ("-", None))
        print(f"  b{batch:<3} {best[0]:<5} {num(best[1]):>6}  cuBLAS {num(entry.get('cublas')):>6}")
    for row in results.get("hierarchy", []):
        print(f"  {row['id']:<30} {row['status']:<8} {num(row['bandwidth_tbps']):>7} TB/s")


def compute(report):
    results = report["results"]
    header(report, "compute suite")
    for row in results.get("peak", []):
        print(f"  {row['id']:<22} {row['status']:<13} {num(row['tflops'], '{:7.1f}'):>7} TFLOP/s")
    print("GEMM ladder (TFLOP/s, % cuBLAS, % peak; model HBM bytes of the kernel's tile):")
    for row in results.get("gemm", []):
        square = row["m"] == row["n"] == row["k"] and row["m"] >= 4096
        if row["dtype"] == "bf16" and (square or row["m"] in (64, 128)):
            print(f"  {row['id']:<40} {row['status']:<13} {num(row['tflops'], '{:7.1f}'):>7} "
                  f"{num(row['pct_of_cublas'], '{:6.1f}'):>6} {num(row['pct_of_peak'], '{:5.1f}'):>5} "
                  f"{num(row['model_bytes'], '{:.3g}'):>9} B")
    print("attention by N (causal, d 128, bf16, H 32): standard, best flash (kernel), speed-up, traffic ratio")
    for row in results.get("attention_by_n", []):
        if row["causal"] and row["head_dim"] == 128 and row["dtype"] == "bf16" and row["heads"] == 32:
            flash = [row[k] for k in ("flash_w8r16_tflops", "flash_w4r32_tflops", "flash_wgmma_tflops")]
            best = max((v for v in flash if v is not None), default=None)
            note = f"  {row['note'][:80]}" if row["note"] else ""
            print(f"  B{row['batch']:<2} Hkv{row['kv_heads']:<2} N{row['seq']:<6} "
                  f"{num(row['standard_tflops'], '{:7.1f}'):>7} {num(best, '{:7.1f}'):>7} ({row['best_flash'] or '-'}) "
                  f"x{num(row['speedup'], '{:.1f}')}  bytes x{num(row['traffic_ratio'], '{:.1f}')}{note}")


def layer(report):
    results = report["results"]
    header(report, "layer suite")
    stages = {}
    for row in results.get("layer_stages", []):
        stages.setdefault(row["layer"], []).append(row)
    print("case: graph us | direct us | sum of stages us | model GB | model TFLOP | TB/s | TFLOP/s")
    for row in results.get("layer", []):
        print(f"  {row['id']:<36} {row['status']:<8} {num(row['median_us'], '{:9.1f}'):>9} "
              f"{num(row['direct_us'], '{:9.1f}'):>9} {num(row['stages_sum_us'], '{:9.1f}'):>9} "
              f"{row['model_bytes'] / 1e9:7.3f} {row['model_flops'] / 1e12:8.3f} {num(row['bandwidth_tbps']):>6} "
              f"{num(row['tflops'], '{:7.1f}'):>7}")
    for case in ("layer.decode.b1.ctx4096.roofline", "layer.decode.b64.ctx4096.cublas",
                 "layer.prefill.n4096.roofline"):
        rows = [r for r in stages.get(case, []) if r["median_us"]]
        if not rows:
            continue
        rows.sort(key=lambda r: -r["median_us"])
        print(f"  {case}: " + ", ".join(
            f"{r['stage']} {r['median_us']:.1f} us ({num(r['share_pct'], '{:.0f}')}%, "
            f"{num(r['bandwidth_tbps'], '{:.2f}')} TB/s)" for r in rows[:4]))


def targets_and_failures(reports):
    print("\n==== targets")
    for report in reports:
        for t in report["results"]["targets"]:
            ratio = "-" if t["ratio_pct"] is None else f"{t['ratio_pct']:.1f}%"
            state = "MET " if t["met"] else ("MISS" if t["met"] is False else "n/a ")
            print(f"  {state} {t['target']:<70} {ratio:>8} (need {t['required_pct']:.0f}%; {t['candidate']})")
    bad = []
    for report in reports:
        for name, rows in report["results"].items():
            if name in ("device", "run", "targets", "attention_by_n"):
                continue
            bad += [r for r in rows if r["status"] not in ("passed", "not_supported")]
    if bad:
        print(f"\n==== not passed ({len(bad)})")
        for row in bad[:25]:
            print(f"  {row['id']}: {row['status']}: {row['detail'][:300]}")


def sanitizer(directory):
    path = directory / "sanitize.log"
    if not path.exists():
        return
    print("\n==== compute-sanitizer")
    for line in path.read_text(errors="replace").splitlines():
        if re.match(r"^######## |.*(ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY)", line):
            print("  " + line)


def main():
    directory = pathlib.Path(sys.argv[1])
    reports = []
    for name, show in (("bench-memory.json", memory), ("bench-compute.json", compute), ("bench-layer.json", layer)):
        report = load(directory, name)
        if report is None:
            print(f"\n==== {name}: none (the phase did not run or did not finish; see suites.log)")
            continue
        show(report)
        reports.append(report)
    targets_and_failures(reports)
    sanitizer(directory)


if __name__ == "__main__":
    main()
