#!/usr/bin/env bash
# Issue 21's attention comparisons in one device call: roofline's kernels and PyTorch SDPA's
# backends on the same shapes, one after the other on the same GPU.
#
#   scripts/gpu/run-attention.sh [flash] [decode]     (default: both)
#
#   flash   roofline bench --suite compute --filter flashwgmma (the Hopper flash kernel's cases),
#           then scripts/gpu/torch_attention.py on the d128 prefill shapes
#   decode  roofline bench --suite memory --filter attention.decode., then
#           scripts/gpu/torch_decode_attention.py
#
# Needs the binary of scripts/gpu/run.sh build (build/gpu-run/roofline). Each command runs under
# `timeout` (ROOFLINE_ATTENTION_TIMEOUT_S, default 200 s) so that a hung kernel costs one part, not
# the call. Writes into build/gpu-results/attention/ and copies to $OUT: flash.json, torch-flash.json,
# decode.json, torch-decode.json and attention.log (every command's stderr).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROOFLINE_BIN:-$PWD/build/gpu-run/roofline}
RESULTS=$PWD/build/gpu-results/attention
OUT=${OUT:-$PWD/build/gpu-out}
LIMIT=${ROOFLINE_ATTENTION_TIMEOUT_S:-200}
[ -x "$BIN" ] || { echo "$0: no binary at $BIN (run scripts/gpu/run.sh build first)" >&2; exit 2; }
PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(flash decode)
mkdir -p "$RESULTS" "$OUT"
LOG=$RESULTS/attention.log

rc=0
# step NAME COMMAND...: runs COMMAND under the timeout, its stderr into the log.
step() {
  local name=$1 status t0
  shift
  t0=$(date +%s)
  echo "== $name: $*" >> "$LOG"
  timeout "$LIMIT" "$@" 2>> "$LOG"
  status=$?
  echo "== $name: exit $status after $(($(date +%s) - t0)) s" | tee -a "$LOG" >&2
  # 1 from roofline bench is a failed check, reported in its JSON; anything else stopped the run.
  [ $status -le 1 ] || rc=1
}

for part in "${PARTS[@]}"; do
  case $part in
    flash)
      step flash "$BIN" bench --suite compute --filter flashwgmma --json "$RESULTS/flash.json" --format json -o /dev/null
      step torch-flash python3 scripts/gpu/torch_attention.py "$RESULTS/torch-flash.json"
      ;;
    decode)
      step decode "$BIN" bench --suite memory --filter attention.decode. --json "$RESULTS/decode.json" --format json \
        -o /dev/null
      step torch-decode python3 scripts/gpu/torch_decode_attention.py "$RESULTS/torch-decode.json"
      ;;
    *) echo "$0: unknown part '$part' (flash, decode)" >&2; exit 2 ;;
  esac
  cp -f "$RESULTS"/*.json "$LOG" "$OUT/" 2>/dev/null
done
exit $rc
