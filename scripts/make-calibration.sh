#!/usr/bin/env bash
# Regenerates a bundled calibration (calibrations/<gpu>.json) from one GPU run's result folder:
# the memory and compute suites are learnt from, the layer suite gives the error band (out of
# sample). docs/calibration.md, "Regenerating the bundled calibration".
#   scripts/make-calibration.sh ROOFLINE_BINARY RESULTS_DIR [OUTPUT]
# e.g. scripts/make-calibration.sh build/dev/roofline docs/results/2026-12-01-h200-refactor
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 ROOFLINE_BINARY RESULTS_DIR [OUTPUT (default calibrations/<gpu of the run>.json)]" >&2
  exit 2
fi
roofline=$1
results=$2
for suite in memory compute layer; do
  if [[ ! -f "$results/bench-$suite.json" ]]; then
    echo "$0: $results/bench-$suite.json is missing (run bench --suite $suite --json ...)" >&2
    exit 2
  fi
done
gpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hardware"][0]["id"])' "$results/bench-memory.json")
output=${3:-calibrations/$gpu.json}
"$roofline" calibrate --measured "$results/bench-memory.json" --measured "$results/bench-compute.json" \
  --layer-check "$results/bench-layer.json" -o "$output" --format json > /dev/null
echo "wrote $output" >&2
