#!/usr/bin/env bash
# Issue 21's attention comparisons in one device call: roofline's kernels and PyTorch SDPA's
# backends on the same shapes, one after the other on the same GPU.
#
#   scripts/gpu/run-attention.sh [flash] [mla] [fp8] [decode] [latent]     (default: flash and decode)
#
#   flash   roofline bench --suite compute --filter flashwgmma (the Hopper flash kernel's cases),
#           then scripts/gpu/torch_attention.py on the d128 prefill shapes
#   mla     roofline bench --suite compute --filter d192v128 (DeepSeek's latent attention expanded for
#           prefill: Q and K 192 wide, V 128; standard and flash_wgmma), then
#           scripts/gpu/torch_attention.py --mla on the same shapes
#   fp8     roofline bench on the FP8 flash cases (attn.fp8_e4m3.*) and the bf16 flash_wgmma cases of the
#           same shapes (their references), then scripts/gpu/torch_attention_fp8.py (cuDNN's FP8 SDPA
#           from Python, where the frontend module is installed) and scripts/gpu/cudnn_fp8_attention.cpp
#           (the same from C++: built against the cuDNN frontend's headers, github.com/NVIDIA/cudnn-frontend
#           include/, at $CUDNN_FRONTEND_INCLUDE or build/cudnn-frontend/include, carried to the machine)
#   decode  roofline bench --suite memory --filter attention.decode., then
#           scripts/gpu/torch_decode_attention.py
#   latent  roofline bench --suite memory --filter attention.latent_decode. (DeepSeek's MLA at decode),
#           then scripts/gpu/torch_latent_attention.py
#
# ROOFLINE_ATTENTION_ROUNDS=N (default 1) runs each part N times, the two sides in alternating order
# (ours first in odd rounds, the library first in even ones), into NAME-rR.json, and merges each
# side's rounds into NAME.json (scripts/gpu/merge_rounds.py: per case the round of median time), so
# the table scripts read the merged files as a single run's. Between processes the same kernel's time
# moved by up to 15% on the H200 (docs/results/2026-12-04-h200-flash-chained-tiles): one round a side
# compares the two sides with that noise.
#
# Needs the binary of scripts/gpu/run.sh build (build/gpu-run/roofline). Each command runs under
# `timeout` (ROOFLINE_ATTENTION_TIMEOUT_S, default 200 s) so that a hung kernel costs one part, not
# the call. Writes into build/gpu-results/attention/: flash.json, torch-flash.json, fp8.json,
# torch-fp8-attention.json, cudnn-fp8-attention.json, decode.json, torch-decode.json, latent.json,
# torch-latent.json, mla.json, torch-mla.json and attention.log (every command's stderr); and packs
# that folder into one file, $OUT/attention.tgz, after every part (a device call returns at most 8
# files from $OUT, alphabetically the first: copied one by one, two parts' files and run.sh's log
# already crowded out the library side's JSONs). Unpack with `tar xzf attention.tgz`.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROOFLINE_BIN:-$PWD/build/gpu-run/roofline}
RESULTS=$PWD/build/gpu-results/attention
OUT=${OUT:-$PWD/build/gpu-out}
LIMIT=${ROOFLINE_ATTENTION_TIMEOUT_S:-200}
ROUNDS=${ROOFLINE_ATTENTION_ROUNDS:-1}
[ -x "$BIN" ] || { echo "$0: no binary at $BIN (run scripts/gpu/run.sh build first)" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]?$ ]] || { echo "$0: ROOFLINE_ATTENTION_ROUNDS must be 1-99, got '$ROUNDS'" >&2; exit 2; }
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

# ours PART SUFFIX / library PART SUFFIX: one side of a part, its files named NAME$SUFFIX.json.
ours() {
  local x=$2
  case $1 in
    flash) step flash "$BIN" bench --suite compute --filter flashwgmma --json "$RESULTS/flash$x.json" --format json -o /dev/null ;;
    fp8)
      local refs="" shape
      for shape in d128.b4h32kv32.n1024 d128.b4h32kv32.n2048 d128.b4h32kv32.n4096 d128.b4h32kv32.n8192 \
        d128.b4h32kv32.n16384 d128.b4h32kv8.n4096 d256.b16h32kv32.n1024 d256.b4h32kv32.n4096 d256.b1h32kv32.n16384; do
        refs+=",$shape.flashwgmma"
      done
      step fp8 "$BIN" bench --suite compute --filter "attn.fp8_e4m3$refs" --json "$RESULTS/fp8$x.json" --format json \
        -o /dev/null
      ;;
    mla) step mla "$BIN" bench --suite compute --filter d192v128 --json "$RESULTS/mla$x.json" --format json -o /dev/null ;;
    decode)
      step decode "$BIN" bench --suite memory --filter attention.decode. --json "$RESULTS/decode$x.json" --format json \
        -o /dev/null
      ;;
    latent)
      step latent "$BIN" bench --suite memory --filter attention.latent_decode. --json "$RESULTS/latent$x.json" \
        --format json -o /dev/null
      ;;
  esac
}
library() {
  local x=$2
  case $1 in
    flash) step torch-flash python3 scripts/gpu/torch_attention.py "$RESULTS/torch-flash$x.json" ;;
    fp8)
      step torch-fp8-attention python3 scripts/gpu/torch_attention_fp8.py "$RESULTS/torch-fp8-attention$x.json"
      # cuDNN's FP8 SDPA through the frontend's C++ graph API, where its headers were carried along.
      local frontend=${CUDNN_FRONTEND_INCLUDE:-$PWD/build/cudnn-frontend/include}
      if [ -f "$frontend/cudnn_frontend.h" ]; then
        [ -x "$RESULTS/cudnn_fp8_attention" ] || step cudnn-fp8-build g++ -O2 -std=c++17 -I"$frontend" \
          -I/usr/local/cuda/include scripts/gpu/cudnn_fp8_attention.cpp -o "$RESULTS/cudnn_fp8_attention" \
          -L/usr/local/cuda/lib64 -lcudnn -lnvrtc -lcudart -lcuda -ldl -Wl,-rpath,/usr/local/cuda/lib64
        step cudnn-fp8 "$RESULTS/cudnn_fp8_attention" "$RESULTS/cudnn-fp8-attention$x.json"
      else
        echo "== cudnn-fp8: no cuDNN frontend headers at $frontend (CUDNN_FRONTEND_INCLUDE): skipped" | tee -a "$LOG" >&2
      fi
      ;;
    mla) step torch-mla python3 scripts/gpu/torch_attention.py --mla "$RESULTS/torch-mla$x.json" ;;
    decode) step torch-decode python3 scripts/gpu/torch_decode_attention.py "$RESULTS/torch-decode$x.json" ;;
    latent) step torch-latent python3 scripts/gpu/torch_latent_attention.py "$RESULTS/torch-latent$x.json" ;;
  esac
}
# The files of a part's two sides, by name.
files_of() {
  case $1 in
    flash) echo flash torch-flash ;;
    fp8) echo fp8 torch-fp8-attention cudnn-fp8-attention ;;
    mla) echo mla torch-mla ;;
    decode) echo decode torch-decode ;;
    latent) echo latent torch-latent ;;
  esac
}

for part in "${PARTS[@]}"; do
  case $part in
    flash | fp8 | mla | decode | latent) ;;
    *) echo "$0: unknown part '$part' (flash, mla, fp8, decode, latent)" >&2; exit 2 ;;
  esac
done
for part in "${PARTS[@]}"; do
  if [ "$ROUNDS" -eq 1 ]; then
    ours "$part" ""
    library "$part" ""
  else
    for ((r = 1; r <= ROUNDS; r++)); do
      if [ $((r % 2)) -eq 1 ]; then
        ours "$part" "-r$r"
        library "$part" "-r$r"
      else
        library "$part" "-r$r"
        ours "$part" "-r$r"
      fi
      tar czf "$OUT/attention.tgz" -C "$RESULTS" . || rc=1
    done
    for name in $(files_of "$part"); do
      rounds=()
      for ((r = 1; r <= ROUNDS; r++)); do [ -f "$RESULTS/$name-r$r.json" ] && rounds+=("$RESULTS/$name-r$r.json"); done
      [ ${#rounds[@]} -gt 0 ] || continue
      python3 scripts/gpu/merge_rounds.py "$RESULTS/$name.json" "${rounds[@]}" 2>> "$LOG" || rc=1
    done
  fi
  tar czf "$OUT/attention.tgz" -C "$RESULTS" . || rc=1
done
exit $rc
