#!/usr/bin/env bash
# Every prediction the project sets beside a published figure, in one run, one text file each in
# OUTDIR: the pages of docs/results/ that compare roofline with TensorRT-LLM, vLLM (GPUStack) and
# SGLang runs, the serve layer check, and the layer check of the bundled H200 calibration. Run it
# before and after a change to a calibration or to the model, then
# scripts/compare-published.py BEFORE_DIR AFTER_DIR lists what moved (docs/calibration.md, "Judging a
# new calibration"). Host only; about two minutes on two cores.
#   scripts/published-comparisons.sh ROOFLINE OUTDIR [CALIBRATION]
# ROOFLINE's bundled calibration answers `--calibration auto`; CALIBRATION (default
# calibrations/h200-sxm.json, which should be the file ROOFLINE was built with) is what the serve
# layer check and the layer check read. Run from the repository root.
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 ROOFLINE OUTDIR [CALIBRATION]" >&2
  exit 2
fi
bin=$1 out=$2 calibration=${3:-calibrations/h200-sxm.json}
[[ -x "$bin" ]] || { echo "$0: $bin is not an executable" >&2; exit 2; }
[[ -f "$calibration" ]] || { echo "$0: $calibration does not exist" >&2; exit 2; }
[[ -f docs/results/serve-validation.sh ]] || { echo "$0: run it from the repository root" >&2; exit 2; }
mkdir -p "$out"
r=docs/results
"$r/serve-validation.sh" "$bin" --calibration auto > "$out/serve-validation.txt"
python3 scripts/trtllm-h100-comparison.py --roofline "$bin" --calibration auto > "$out/trtllm-h100.txt"
"$r/qwen3-235b-trtllm-validation.sh" "$bin" --calibration auto > "$out/qwen3-235b.txt"
"$r/qwen3-235b-trtllm-validation.sh" "$bin" --calibration auto --capacity-policy guaranteed-no-evict \
  > "$out/qwen3-235b-guaranteed-no-evict.txt"
"$r/gpustack-moe-validation.sh" "$bin" --calibration auto > "$out/gpustack.txt"
"$r/serve-layer-check.sh" "$bin" "$calibration" > "$out/serve-layer-check.txt"
"$r/trtllm-perf-overview-validation.sh" "$bin" --calibration auto > "$out/trtllm-perf-overview.txt"
# deployment-modes-validation.md: DeepSeek-R1 rows 1 and 2 ("Both rows through serve"), and the four
# SGLang rows ("A third party's SGLang runs at TP 8").
"$bin" serve --model deepseek-r1 --gpu h200 --tp 8 --ep 4 --weights fp8 --kv bf16 --calibration auto \
  --prompt-tokens 1024 --output-tokens 2048 --requests 10 --concurrency 1 --speculate 3 \
  --acceptance 0.92,0.717,0.364 > "$out/deepseek-r1-row1.txt" 2>/dev/null
"$bin" serve --model deepseek-r1 --gpu h200 --tp 8 --ep 8 --attention-dp --weights fp8 --kv bf16 \
  --calibration auto --prompt-tokens 1024 --output-tokens 2048 --requests 5120 --concurrency 1024 \
  --max-batch 128 --max-num-tokens 1151 --kv-memory-fraction 0.8 > "$out/deepseek-r1-row2.txt" 2>/dev/null
for c in 8 16 32 64; do
  "$bin" serve --model deepseek-r1 --gpu h200-sxm --tp 8 --weights fp8 --kv bf16 --prompt-tokens 1024 \
    --output-tokens 1024 --concurrency "$c" --requests $((10 * c)) --calibration auto \
    > "$out/sglang-c$c.txt" 2>/dev/null
done
# The layer run the calibration names as its check (validation.run): a layer suite of its kernels.
layer_run=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["validation"]["run"])' "$calibration")
"$bin" validate --measured "$layer_run" --calibration "$calibration" --format json > "$out/layer-check.json" 2>/dev/null
echo "wrote $out" >&2
