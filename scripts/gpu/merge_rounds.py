#!/usr/bin/env python3
"""Merges the rounds of one side of a comparison into one report of the same form, so that the table
scripts (flash_attention_table.py, decode_shape_tables.py, latent_attention_table.py) read it as they
read a single run. scripts/gpu/run-attention.sh calls it when ROOFLINE_ATTENTION_ROUNDS > 1.

  merge_rounds.py OUT.json ROUND.json [ROUND.json ...]

Per case (a roofline bench row by its `id`; a library row by its shape and backend: every field that
is a string, an integer or a boolean, but its status and launch count), the merged row is the round
whose median time is the median over the rounds (the lower middle one for an even count), whole, so
its rate, clock and check stay together; `median_us_rounds` lists every round's median. A case that
failed in any round is that failed row. Cases missing from some rounds keep the rounds that have them,
and a timed table missing from some rounds (a round run with another filter) keeps the rounds that
have it. A table without times (a summary a suite derives from its rows) cannot be merged: it is the
first round's that has it, and `untimed_tables_from` names that round per table, so that a reader
knows it summarises one round, not the merged rows. Everything else (the device, the run table, the
versions) comes from the first round's report, which gains `merged_rounds`: the files merged, in
order. A missing or unreadable round is bad input: one line on stderr, exit 2, nothing written.
"""
import json
import os
import statistics
import sys
import tempfile

NOT_KEY = {"status", "launches", "launches_per_sample", "samples", "retaken_samples", "stopped_on",
           "throttle_reasons"}


def case_key(row):
    if "id" in row:
        return row["id"]
    return tuple(sorted((k, v) for k, v in row.items()
                        if isinstance(v, (str, int, bool)) and k not in NOT_KEY))


def merge_rows(rounds_rows):
    """rounds_rows: one list of rows per round; returns the merged list in the first order seen."""
    order, by_key = [], {}
    for rows in rounds_rows:
        for row in rows:
            key = case_key(row)
            if key not in by_key:
                order.append(key)
                by_key[key] = []
            by_key[key].append(row)
    merged = []
    for key in order:
        rows = by_key[key]
        failed = [r for r in rows if r.get("status") not in (None, "passed")]
        timed = sorted((r for r in rows if isinstance(r.get("median_us"), (int, float))), key=lambda r: r["median_us"])
        if failed or not timed:
            pick = dict(failed[0] if failed else rows[0])
        else:
            pick = dict(timed[(len(timed) - 1) // 2])
            pick["median_us_rounds"] = [r["median_us"] for r in rows if isinstance(r.get("median_us"), (int, float))]
        merged.append(pick)
    return merged


def is_timed_table(rows):
    return isinstance(rows, list) and any(isinstance(r, dict) and "median_us" in r for r in rows)


def main(argv):
    if len(argv) < 3:
        print("usage: merge_rounds.py OUT.json ROUND.json [ROUND.json ...]", file=sys.stderr)
        return 2
    out, inputs = argv[1], argv[2:]
    reports = []
    for path in inputs:
        try:
            with open(path, encoding="utf-8") as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"merge_rounds.py: {path}: {e}", file=sys.stderr)
            return 2
        if not isinstance(reports[-1], dict) or "results" not in reports[-1]:
            print(f"merge_rounds.py: {path}: not a report with results", file=sys.stderr)
            return 2
    merged = dict(reports[0])
    if isinstance(reports[0]["results"], list):  # a library script's report: one list of rows
        merged["results"] = merge_rows([r["results"] for r in reports])
    else:  # a roofline bench report: tables by name, in the order the rounds first list them
        names = list(dict.fromkeys(name for report in reports for name in report["results"]))
        merged["results"], untimed_from = {}, {}
        for name in names:
            tables = [report["results"].get(name) for report in reports]
            if any(is_timed_table(t) for t in tables):
                merged["results"][name] = merge_rows([t for t in tables if isinstance(t, list)])
            else:
                first_with = next(i for i, t in enumerate(tables) if t is not None)
                merged["results"][name] = tables[first_with]
                untimed_from[name] = os.path.basename(inputs[first_with])
        merged["untimed_tables_from"] = untimed_from
    merged["merged_rounds"] = [os.path.basename(p) for p in inputs]
    folder = os.path.dirname(os.path.abspath(out))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp", encoding="utf-8") as f:
        json.dump(merged, f, indent=1)
        temporary = f.name
    os.replace(temporary, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
