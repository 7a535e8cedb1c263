#!/usr/bin/env bash
# On the GPU machine: the validation loop on fresh measurements, and `profile` on one of the
# project's own kernels. Run it after the bench runs (scripts/gpu/run-memory-suite.sh, or the
# combined scripts/gpu/run.sh once it exists), which leave a built `roofline` and bench-*.json.
#
#   scripts/gpu/run-validate.sh [BENCH_JSON...]
#
# BENCH_JSON: the runs to validate (default: every build/gpu-results/bench-*.json, else
# build/gpu-out/bench-*.json). ROOFLINE_BIN names the binary (default build/gpu-run/roofline).
# Writes into $OUT (default build/gpu-out/validate):
#   profile-gemv.{json,txt,svg}, ncu-gemv-raw.csv   roofline profile of the GEMV kernel (mma, bf16,
#                                                   8192^2, batch 1) as `bench` launches it
#   calibration.json, calibrate.txt                 the tables learnt from the runs
#   validate.txt, validate.json                     measured vs roofline vs calibrated, per benchmark
#   regression.txt                                  the new memory run against the committed one
#                                                   (tests/data/bench/h200-memory-2026-11-30.json)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROOFLINE_BIN:-build/gpu-run/roofline}
OUT=${OUT:-build/gpu-out}/validate
mkdir -p "$OUT"
say() { echo "[gpu/run-validate.sh] $*" >&2; }

if [ ! -x "$BIN" ]; then
  say "no binary at $BIN: build it first (cmake --preset gpu && cmake --build --preset gpu), or set ROOFLINE_BIN"
  exit 3
fi

runs=("$@")
if [ ${#runs[@]} -eq 0 ]; then
  for dir in build/gpu-results build/gpu-out; do
    for f in "$dir"/bench-*.json; do [ -f "$f" ] && runs+=("$f"); done
    [ ${#runs[@]} -gt 0 ] && break
  done
fi

# 1. profile: the GEMV kernel on tensor cores, its first three launches (the check, then timing).
say "profile: gemv.bf16.8192x8192.b1.mma under ncu"
timeout 300 "$BIN" profile --kernel gemv --launch-count 3 --save-csv "$OUT/ncu-gemv-raw.csv" \
  --chart "$OUT/profile-gemv.svg" --format json -o "$OUT/profile-gemv.json" \
  -- "$BIN" bench --suite memory --filter gemv.bf16.8192x8192.b1.mma --samples 2 2> "$OUT/profile-gemv.log"
echo "profile exit $?" >> "$OUT/profile-gemv.log"
[ -f "$OUT/ncu-gemv-raw.csv" ] && "$BIN" profile --from-csv "$OUT/ncu-gemv-raw.csv" > "$OUT/profile-gemv.txt"

if [ ${#runs[@]} -eq 0 ]; then
  say "no bench-*.json to validate: run the suites first"
  exit 0
fi
measured=()
for f in "${runs[@]}"; do measured+=(--measured "$f"); done

# 2. calibrate, then validate with and without the calibration.
say "calibrate and validate: ${runs[*]}"
"$BIN" calibrate "${measured[@]}" -o "$OUT/calibration.json" > "$OUT/calibrate.txt" 2>&1
echo "calibrate exit $?" >> "$OUT/calibrate.txt"
"$BIN" validate "${measured[@]}" --calibration "$OUT/calibration.json" > "$OUT/validate.txt" 2>&1
"$BIN" validate "${measured[@]}" --calibration "$OUT/calibration.json" --format json -o "$OUT/validate.json"

# 3. The regression check against the committed H200 memory run (the run that has a stream table).
for f in "${runs[@]}"; do
  if grep -q '"stream":' "$f" 2>/dev/null; then
    "$BIN" validate --baseline tests/data/bench/h200-memory-2026-11-30.json --measured "$f" > "$OUT/regression.txt" 2>&1
    echo "regression exit $? (1: a benchmark slower or failed)" >> "$OUT/regression.txt"
    break
  fi
done
say "done: $OUT"
