#!/usr/bin/env python3
"""Summarises scripts/gpu/run-paired.sh's rounds: per case, the median of its per-round medians and
the SM clocks it ran at; per pair, each of side A's cases against side B's first case (by id), round by round and its
median over the rounds. Rows are read from every results table of the bench reports whose rows carry
`median_us`.

  python3 scripts/gpu/summarize_paired.py RESULTS_DIR OUT.json
"""
import glob
import json
import os
import re
import statistics
import sys


def load_report(path, script, kind=dict):
    """A report's JSON: a roofline bench report (results: tables by name, kind dict) or a library
    script's (results: one list of rows, kind list). Bad input -- the file missing, not JSON, or not
    of that kind -- is one line on stderr naming `script`, and exit 2."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{script}: {path}: {error}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(report, dict) or not isinstance(report.get("results"), kind):
        what = "roofline bench" if kind is dict else "library script's"
        print(f"{script}: {path}: not a {what} report", file=sys.stderr)
        sys.exit(2)
    return report


def rows_of(report):
    for table in report.get("results", {}).values():
        if isinstance(table, list):
            for row in table:
                if isinstance(row, dict) and "median_us" in row and "id" in row:
                    yield row


def rate(row, reference):
    """The case's rate over the reference's: FLOP/s where both state it (two GEMMs), else bandwidth
    (bytes each counts, read + written, per second), so that a GEMV against a copy reads as its
    share of the copy ceiling; else the reference's time over the case's."""
    if row.get("tflops") and reference.get("tflops"):
        return row["tflops"] / reference["tflops"]
    if row.get("bandwidth_tbps") and reference.get("bandwidth_tbps"):
        return row["bandwidth_tbps"] / reference["bandwidth_tbps"]
    return reference["median_us"] / row["median_us"]


def main():
    results, out = sys.argv[1], sys.argv[2]
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "*.r*.[ab].json"))):
        match = re.match(r"(.+)\.r(\d+)\.([ab])\.json$", os.path.basename(path))
        if not match:
            continue
        with open(path) as f:
            report = json.load(f)
        rows = [{k: row.get(k) for k in ("id", "status", "median_us", "min_us", "max_us", "sm_clock_mhz",
                                          "sm_clock_min_mhz", "power_w", "throttled", "tflops", "bandwidth_tbps")}
                for row in rows_of(report)]
        runs.append({"pair": match.group(1), "round": int(match.group(2)), "side": match.group(3),
                     "started_utc": report.get("results", {}).get("run", [{}])[0].get("started_utc"), "rows": rows})
    summary = {"runs": runs, "cases": [], "ratios": []}
    for pair in sorted({r["pair"] for r in runs}):
        print(f"== {pair}")
        cases = {}
        for run in (r for r in runs if r["pair"] == pair):
            for row in run["rows"]:
                if row["status"] == "passed" and row["median_us"]:
                    cases.setdefault((run["side"], row["id"]), []).append((run["round"], row))
        for (side, case), taken in sorted(cases.items()):
            medians = [row["median_us"] for _, row in taken]
            clocks = [row["sm_clock_mhz"] for _, row in taken if row["sm_clock_mhz"]]
            entry = {"pair": pair, "side": side, "id": case, "rounds": len(taken),
                     "median_us": statistics.median(medians), "min_round_us": min(medians),
                     "max_round_us": max(medians), "sm_clock_mhz": clocks}
            summary["cases"].append(entry)
            print(f"  {side} {case:58s} {entry['median_us']:10.2f} us over {len(taken)} rounds "
                  f"({entry['min_round_us']:.2f}-{entry['max_round_us']:.2f}); SM MHz {clocks}")
        reference = sorted(c for s, c in cases if s == "b")
        if not reference:
            continue
        ref = reference[0]
        ref_by_round = {r: row for r, row in cases[("b", ref)]}
        for (side, case), taken in sorted(cases.items()):
            if side != "a":
                continue
            per_round = [rate(row, ref_by_round[r]) for r, row in taken if r in ref_by_round]
            if not per_round:
                continue
            ratio = {"pair": pair, "case": case, "reference": ref, "per_round": per_round,
                     "median": statistics.median(per_round)}
            summary["ratios"].append(ratio)
            print(f"  {case} vs {ref}: rate ratio (the case's FLOP/s or B/s over the reference's) median "
                  f"{ratio['median']:.3f}, rounds {[round(x, 3) for x in per_round]}")
    with open(out, "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
