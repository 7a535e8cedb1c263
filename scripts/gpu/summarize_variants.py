#!/usr/bin/env python3
"""Summarises scripts/gpu/run-variants.sh's rounds as a markdown table: per case, each variant's
median time over the rounds with its range, and each variant's median over the first's; then, per
variant, the median and range of those ratios over the cases.

  python3 scripts/gpu/summarize_variants.py RESULTS_DIR NAME VALUE [VALUE ...]

The first VALUE is the reference (the committed behaviour). Bad input (no such files, one that is
not JSON): one line on stderr, exit 2.
"""
import collections
import glob
import os
import re
import statistics
import sys

from summarize_paired import load_report, rows_of


def fail(message):
    print(f"summarize_variants.py: {message}", file=sys.stderr)
    sys.exit(2)


def medians_of(path):
    for row in rows_of(load_report(path, "summarize_variants.py")):
        if row["median_us"]:
            yield row["id"], row["median_us"]


def main(argv):
    if len(argv) < 5:
        print("usage: summarize_variants.py RESULTS_DIR NAME VALUE VALUE [VALUE ...]", file=sys.stderr)
        sys.exit(2)
    folder, name, values = argv[1], argv[2], argv[3:]
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    pattern = re.compile(re.escape(name) + r"-r(\d+)-v(.+)\.json$")
    for path in sorted(glob.glob(os.path.join(folder, f"{name}-r*-v*.json"))):
        match = pattern.search(os.path.basename(path))
        if match and match.group(2) in values:
            for case, us in medians_of(path):
                times[case][match.group(2)].append(us)
    if not times:
        fail(f"no {name}-rROUND-vVALUE.json files of these values in {folder}")
    reference = values[0]
    print("| case | " + " | ".join(f"{v}: median (min-max) us" for v in values) + " | " +
          " | ".join(f"{v} / {reference}" for v in values[1:]) + " |")
    print("| --- |" + " ---: |" * (2 * len(values) - 1))
    ratios = collections.defaultdict(list)
    for case, by_value in times.items():
        if any(not by_value.get(v) for v in values):
            continue
        median = {v: statistics.median(by_value[v]) for v in values}
        cells = [f"{median[v]:.1f} ({min(by_value[v]):.1f}-{max(by_value[v]):.1f})" for v in values]
        row_ratios = [median[v] / median[reference] for v in values[1:]]
        for v, x in zip(values[1:], row_ratios):
            ratios[v].append(x)
        print(f"| {case} | " + " | ".join(cells) + " | " + " | ".join(f"{x:.3f}" for x in row_ratios) + " |")
    rounds = max(len(t) for by_value in times.values() for t in by_value.values())
    print(f"\nUp to {rounds} rounds a variant.")
    for v in values[1:]:
        x = ratios[v]
        if x:
            print(f"{v} / {reference}: median {statistics.median(x):.3f} over {len(x)} cases, {min(x):.3f} - {max(x):.3f}.")


if __name__ == "__main__":
    main(sys.argv)
