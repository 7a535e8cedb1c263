#!/usr/bin/env bash
# Regenerates a bundled calibration (calibrations/<gpu>.json) from one GPU run's result folder:
# every bench-<suite>.json there is learnt from except the layer suite's, which gives the error
# band (out of sample). docs/calibration.md, "Regenerating the bundled calibration".
#   scripts/make-calibration.sh ROOFLINE_BINARY RESULTS_DIR [OUTPUT]
# e.g. scripts/make-calibration.sh build/dev/roofline docs/results/2026-12-01-h200-refactor
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 ROOFLINE_BINARY RESULTS_DIR [OUTPUT (default calibrations/<gpu of the run>.json)]" >&2
  exit 2
fi
roofline=$1
results=$2
if [[ ! -f "$results/bench-layer.json" ]]; then
  echo "$0: $results/bench-layer.json is missing (the layer suite gives the error band)" >&2
  exit 2
fi
# memory and compute first (the order of the committed calibrations), then any other suite.
measured=()
learnt=()
for run in "$results/bench-memory.json" "$results/bench-compute.json" "$results"/bench-*.json; do
  [[ -f "$run" && "$run" != "$results/bench-layer.json" ]] || continue
  [[ " ${learnt[*]-} " == *" $run "* ]] && continue
  learnt+=("$run")
  measured+=(--measured "$run")
done
if [[ ${#measured[@]} -eq 0 ]]; then
  echo "$0: no bench-<suite>.json to learn from in $results" >&2
  exit 2
fi
gpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hardware"][0]["id"])' "$results/bench-layer.json")
output=${3:-calibrations/$gpu.json}
"$roofline" calibrate "${measured[@]}" --layer-check "$results/bench-layer.json" -o "$output" --format json > /dev/null
echo "wrote $output (learnt from ${learnt[*]}; error band from $results/bench-layer.json)" >&2
