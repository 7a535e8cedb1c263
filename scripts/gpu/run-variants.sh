#!/usr/bin/env bash
# A/B of one build's variants, interleaved: the same cases run once per variant in each of ROUNDS
# rounds, the variant picked by an environment variable (a temporary knob in the code under test),
# the order rotated each round. Between processes the same kernel's time moved by up to 15% on the
# H200 (clocks under the power cap, and each process's own placement of its buffers:
# docs/results/2026-12-04-h200-flash-chained-tiles), while within a process it moved by less than
# 1%: a variant compared in one run each is compared with the noise. scripts/gpu/summarize_variants.py
# prints per case each variant's median over the rounds, its range, and its ratio to the first.
#
#   scripts/gpu/run-variants.sh ROUNDS VARIABLE "VALUE..." SUITE FILTER [NAME]
#
# e.g. scripts/gpu/run-variants.sh 5 ROOFLINE_FLASH_L2_MB "32 16 8 4" compute attn.bf16.full.d128.b4h32kv32.n1024.flashwgmma
# Needs the binary of scripts/gpu/run.sh build (build/gpu-run/roofline). Writes
# build/gpu-results/variants/NAME-rROUND-vVALUE.json (NAME defaults to the suite) and packs the folder
# into $OUT/variants.tgz after every round.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 5 ] || [ $# -gt 6 ]; then
  echo "usage: $0 ROUNDS VARIABLE \"VALUE...\" SUITE FILTER [NAME]" >&2
  exit 2
fi
ROUNDS=$1 VARIABLE=$2 SUITE=$4 FILTER=$5 NAME=${6:-$4}
read -r -a VALUES <<< "$3"
BIN=${ROOFLINE_BIN:-$PWD/build/gpu-run/roofline}
RESULTS=$PWD/build/gpu-results/variants
OUT=${OUT:-$PWD/build/gpu-out}
[ -x "$BIN" ] || { echo "$0: no binary at $BIN (run scripts/gpu/run.sh build first)" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
[ ${#VALUES[@]} -ge 2 ] || { echo "$0: give at least two values of $VARIABLE" >&2; exit 2; }
mkdir -p "$RESULTS" "$OUT"
rc=0
for ((r = 1; r <= ROUNDS; r++)); do
  n=${#VALUES[@]}
  for ((i = 0; i < n; i++)); do
    value=${VALUES[$(((i + r - 1) % n))]}
    env "$VARIABLE=$value" "$BIN" bench --suite "$SUITE" --filter "$FILTER" \
      --json "$RESULTS/$NAME-r$r-v$value.json" > /dev/null 2>> "$RESULTS/$NAME.log" || rc=1
  done
  tar czf "$OUT/variants.tgz" -C "$(dirname "$RESULTS")" variants
done
exit $rc
