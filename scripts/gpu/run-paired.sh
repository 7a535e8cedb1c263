#!/usr/bin/env bash
# Side-by-side timings that the GPU's power limit would otherwise skew. Under sustained FP8 load the
# H200's SM clock falls from 1980 to about 1500 MHz, so two kernels timed minutes apart compare
# clocks as much as kernels (docs/results/2026-12-01-h200-cublaslt-fp8: the project's FP8 GEMM at
# 1740 MHz against cuBLASLt at 1545). Here each pair is timed in ROUNDS rounds, its two sides in
# alternating order (A B, B A, A B ...), each side after PAUSE_S idle seconds so that both start from
# the same idle clock; every side's cases and clocks are kept, and scripts/gpu/summarize_paired.py
# prints per case the median over the rounds, its clocks, and each pair's ratios.
#
#   scripts/gpu/run-paired.sh ROUNDS PAUSE_S NAME SUITE FILTER_A FILTER_B [NAME SUITE FILTER_A FILTER_B ...]
#
# e.g. scripts/gpu/run-paired.sh 3 5 fp8-gemm compute gemm.fp8e4m3.8192x8192x8192.wgmma \
#        gemm.fp8e4m3.8192x8192x8192.cublaslt
# Needs the binary of scripts/gpu/run.sh build (build/gpu-run/roofline). Writes
# build/gpu-results/paired.json and paired.txt, and copies both to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 6 ] || [ $((($# - 2) % 4)) -ne 0 ]; then
  echo "usage: $0 ROUNDS PAUSE_S NAME SUITE FILTER_A FILTER_B [NAME SUITE FILTER_A FILTER_B ...]" >&2
  exit 2
fi
ROUNDS=$1
PAUSE=$2
shift 2
BIN=${ROOFLINE_BIN:-$PWD/build/gpu-run/roofline}
RESULTS=$PWD/build/gpu-results/paired
OUT=${OUT:-$PWD/build/gpu-out}
[ -x "$BIN" ] || { echo "$0: no binary at $BIN (run scripts/gpu/run.sh build first)" >&2; exit 2; }
rm -rf "$RESULTS"
mkdir -p "$RESULTS" "$OUT"

rc=0
while [ $# -gt 0 ]; do
  name=$1 suite=$2 a=$3 b=$4
  shift 4
  for ((r = 1; r <= ROUNDS; r++)); do
    if [ $((r % 2)) -eq 1 ]; then order=(a b); else order=(b a); fi
    for side in "${order[@]}"; do
      filter=$a
      [ "$side" = b ] && filter=$b
      sleep "$PAUSE"
      "$BIN" bench --suite "$suite" --filter "$filter" --json "$RESULTS/$name.r$r.$side.json" --format json \
        -o /dev/null 2>> "$RESULTS/stderr.log"
      status=$?
      # 1 is a failed check, reported in the JSON; anything else stopped the run.
      [ $status -le 1 ] || { echo "$name round $r side $side: exit $status" >&2; rc=1; }
    done
  done
done
python3 scripts/gpu/summarize_paired.py "$RESULTS" "$RESULTS/paired.json" | tee "$RESULTS/paired.txt"
cp -f "$RESULTS/paired.json" "$RESULTS/paired.txt" "$OUT/" 2>/dev/null
exit $rc
