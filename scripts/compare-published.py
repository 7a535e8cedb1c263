#!/usr/bin/env python3
"""What moved between two runs of scripts/published-comparisons.sh (markdown on stdout).

  compare-published.py BEFORE_DIR AFTER_DIR [--top N]

For the layer check (layer-check.json, `roofline validate` of the layer run each calibration names):
how many of the layers are within 10%, the median and the worst |error| before and after, each with
its run where the two differ, and the layers that moved most. For every text file present in both: each line that changed, its numbers paired by
position (a line whose count of numbers changed is listed as changed, unpaired), and the largest
relative moves of the figures a comparison predicts. Percentages (the error columns, whose relative
change says nothing) and numbers under 5 (counts, GPUs, ranks) are not ranked; notes are skipped.
Bad input (a folder missing, a layer check that is not a validate report): one line on stderr,
exit 2.
"""
import json
import os
import re
import statistics
import sys

# A number with optional thousands separators and decimals; a trailing % marks a percentage.
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?%?")


def fail(message):
    print(f"compare-published.py: {message}", file=sys.stderr)
    sys.exit(2)


def numbers(line):
    return NUMBER.findall(line)


def value(token):
    return float(token.rstrip("%").replace(",", ""))


def text_moves(name, before_lines, after_lines):
    """(relative move, file, line label, before, after) of each changed figure; and unpaired lines."""
    moves, unpaired = [], []
    for old, new in zip(before_lines, after_lines):
        if old == new or old.lstrip().startswith(("note:", "roofline: note")):
            continue
        a, b = numbers(old), numbers(new)
        label = " ".join(old.split()[:6])[:70].replace("|", "\\|")
        if len(a) != len(b):
            unpaired.append((name, label))
            continue
        for x, y in zip(a, b):
            if x.endswith("%") or y.endswith("%"):
                continue
            vx, vy = value(x), value(y)
            if vx == vy or abs(vx) < 5:
                continue
            moves.append((abs(vy / vx - 1), name, label, x, y))
    return moves, unpaired


def layer_check(path):
    """The layer run's errors by layer id, and the run (the measured file) they come from."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        errors = {row["id"]: row["calibrated_error_pct"] for row in report["results"]["layers"]}
        return errors, ", ".join(report.get("inputs", {}).get("measured", []))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        fail(f"{path}: not a validate report with results.layers ({e})")
        return {}, ""


def summary(errors):
    values = list(errors.values())
    worst = max(values, key=abs)
    within = sum(abs(v) <= 10 for v in values)
    return f"{within}/{len(values)} within 10%, median |error| {statistics.median(abs(v) for v in values):.2f}%, worst {worst:+.1f}%"


def main(argv):
    top = 15
    if "--top" in argv:
        i = argv.index("--top")
        try:
            top = int(argv[i + 1])
        except (IndexError, ValueError):
            fail("--top needs a whole number")
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 2:
        fail("usage: compare-published.py BEFORE_DIR AFTER_DIR [--top N]")
    before, after = argv
    for folder in (before, after):
        if not os.path.isdir(folder):
            fail(f"{folder} is not a folder")

    lines = []
    check = "layer-check.json"
    if os.path.exists(os.path.join(before, check)) and os.path.exists(os.path.join(after, check)):
        (old, old_run), (new, new_run) = layer_check(os.path.join(before, check)), layer_check(os.path.join(after, check))
        runs = old_run != new_run
        lines += ["## The layer check", "",
                  f"- before: {summary(old)}" + (f" ({old_run})" if runs else ""),
                  f"- after: {summary(new)}" + (f" ({new_run})" if runs else "")]
        common = sorted(set(old) & set(new), key=lambda i: -abs(new[i] - old[i]))
        for layer in common[:5]:
            if new[layer] != old[layer]:
                lines.append(f"- {layer}: {old[layer]:+.1f}% -> {new[layer]:+.1f}%")
        lines.append("")

    moves, unpaired, unchanged = [], [], []
    names = sorted(n for n in os.listdir(before) if n.endswith(".txt") and os.path.exists(os.path.join(after, n)))
    for name in names:
        with open(os.path.join(before, name), encoding="utf-8") as f:
            old = f.read().splitlines()
        with open(os.path.join(after, name), encoding="utf-8") as f:
            new = f.read().splitlines()
        if old == new:
            unchanged.append(name)
            continue
        m, u = text_moves(name, old, new)
        moves += m
        unpaired += u
    moves.sort(key=lambda m: -m[0])
    lines += [f"## The largest moves of {len(names)} comparisons", ""]
    if moves:
        lines += ["| move | file | line | before | after |", "| ---: | --- | --- | ---: | ---: |"]
        lines += [f"| {m[0] * 100:.2f}% | {m[1]} | {m[2]} | {m[3]} | {m[4]} |" for m in moves[:top]]
    else:
        lines.append("No predicted figure moved.")
    if unchanged:
        lines += ["", "Unchanged: " + ", ".join(unchanged) + "."]
    for name, label in unpaired:
        lines.append(f"- {name}: \"{label}\" changed shape (numbers not paired)")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
