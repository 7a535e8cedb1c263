#!/usr/bin/env python3
"""Where a kernel's warps stall, instruction by instruction, from Nsight Compute's source page.

  ncu --set full --import-source yes -k regex:KERNEL -c 1 -o REPORT roofline bench ... --check-only
  ncu -i REPORT.ncu-rep --page source --csv --print-source sass > SASS.csv
  ncu_sass_hotspots.py SASS.csv [TOP]

Prints the kernel's stall reasons over all its warp samples, then the TOP (default 30) SASS
instructions with the most samples (their share, their two main stall reasons, how many times a warp
executed them), then the mbarrier waits (SYNCS...TRYWAIT: which barrier, by its shared-memory offset,
and how often a warp retried it) -- the waits say which side of a TMA pipeline is short: consumers
retrying a "full" barrier wait for data, a producer retrying an "empty" one waits for its consumers.
Shares are of all samples, producer and consumer warps together.
"""
import csv
import sys


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        sys.exit(2)
    try:
        top = int(sys.argv[2]) if len(sys.argv) == 3 else 30
        with open(sys.argv[1], encoding="utf-8") as f:
            rows = list(csv.reader(f))
        # Row 0 names the kernel; row 1 is the header; one row per SASS instruction after it.
        header = rows[1]
        data = [r for r in rows[2:] if len(r) == len(header)]
        source = header.index("Source")
        samples = header.index("Warp Stall Sampling (All Samples)")
        executed = header.index("Instructions Executed")
        address = header.index("Address")
    except (OSError, ValueError, IndexError) as error:
        print(f"{sys.argv[1]}: not an Nsight Compute source page (--page source --csv --print-source sass): {error}",
              file=sys.stderr)
        sys.exit(2)
    reasons = [i for i, h in enumerate(header) if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(number(r[samples]) for r in data)
    if total == 0:
        print(f"{sys.argv[1]}: no warp samples", file=sys.stderr)
        sys.exit(2)
    print(f"kernel: {rows[0][1][:160] if len(rows[0]) > 1 else rows[0][0]}")
    print(f"{int(total)} warp samples over {len(data)} instructions")
    by_reason = sorted(((sum(number(r[i]) for r in data), header[i][6:]) for i in reasons), reverse=True)
    print("stall reasons: " + ", ".join(f"{name} {value / total:.1%}" for value, name in by_reason if value > 0)[:400])
    print()
    print(f"| address | share | instruction | main stalls | executed |")
    print("| --- | ---: | --- | --- | ---: |")
    for r in sorted(data, key=lambda row: -number(row[samples]))[:top]:
        main_stalls = sorted(((number(r[i]), header[i][6:]) for i in reasons if number(r[i]) > 0), reverse=True)[:2]
        stalls = ", ".join(f"{name} {int(value)}" for value, name in main_stalls)
        print(f"| {r[address][-5:]} | {number(r[samples]) / total:.2%} | `{r[source].strip()[:64]}` | {stalls} |"
              f" {int(number(r[executed]))} |")
    print()
    print("| address | mbarrier wait | share | executed |")
    print("| --- | --- | ---: | ---: |")
    for r in data:
        if "TRYWAIT" in r[source]:
            print(f"| {r[address][-5:]} | `{r[source].strip()[:64]}` | {number(r[samples]) / total:.2%} |"
                  f" {int(number(r[executed]))} |")


if __name__ == "__main__":
    main()
