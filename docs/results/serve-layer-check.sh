#!/usr/bin/env bash
# The layer table of docs/results/serve-validation.md: one request through roofline serve on the H200
# with the bundled calibration, one decoder layer of llama-3.1-70b isolated as the difference of a
# --layers 2 and a --layers 1 run (the embedding and head, once per step, cancel), against the layer
# suite's measured times. Decode: TPOT of a 2-token request whose prompt leaves CONTEXT tokens cached
# at its one decode step; prefill: TTFT of an N-token prompt.
#   docs/results/serve-layer-check.sh build/dev/roofline [CALIBRATION (default calibrations/h200-sxm.json)]
set -euo pipefail
binary=${1:?usage: serve-layer-check.sh ROOFLINE [CALIBRATION]}
calibration=${2:-calibrations/h200-sxm.json}
fp8=docs/results/2026-12-01-h200-fp8kv-attention/bench-layer.json
bf16=docs/results/2026-12-01-h200-fp8kv-attention/bench-layer.json
layer() {  # weights kv prompt output layers metric
  "$binary" serve --model llama-3.1-70b --gpu h200 --weights "$1" --kv "$2" --prompt-tokens "$3" --output-tokens "$4" \
    --requests 1 --layers "$5" --calibration "$calibration" --format json 2>/dev/null |
    python3 -c "import json,sys; print(json.load(sys.stdin)['results']['$6']['mean'] * 1e3)"
}
measured() {  # file id
  python3 -c "import json,sys; print(next(r['median_us'] for r in json.load(open('$1'))['results']['layer'] if r['id'] == '$2'))"
}
printf '%-40s %8s %8s %13s %14s %8s\n' benchmark weights kv 'measured [us]' 'simulated [us]' error
while read -r id file weights kv prompt output metric; do
  one=$(layer "$weights" "$kv" "$prompt" "$output" 1 "$metric")
  two=$(layer "$weights" "$kv" "$prompt" "$output" 2 "$metric")
  m=$(measured "${!file}" "$id")
  python3 -c "s = $two - $one; print(f'%-40s %8s %8s %13.1f %14.1f %+7.1f%%' % ('$id', '$weights', '$kv', $m, s, 100 * (s / $m - 1)))"
done <<'ROWS'
layer.decode.b1.ctx4096.roofline bf16 bf16 bf16 4095 2 tpot_ms
layer.decode.b1.ctx32768.roofline bf16 bf16 bf16 32767 2 tpot_ms
layer.prefill.n512.roofline bf16 bf16 bf16 512 1 ttft_ms
layer.prefill.n1024.roofline bf16 bf16 bf16 1024 1 ttft_ms
layer.prefill.n2048.roofline bf16 bf16 bf16 2048 1 ttft_ms
layer.prefill.n4096.roofline bf16 bf16 bf16 4096 1 ttft_ms
layer.decode.fp8.b1.ctx1024.roofline fp8 fp8 fp8 1023 2 tpot_ms
layer.decode.fp8.b1.ctx4096.roofline fp8 fp8 fp8 4095 2 tpot_ms
layer.prefill.fp8.n512.roofline fp8 fp8 bf16 512 1 ttft_ms
layer.prefill.fp8.n1024.roofline fp8 fp8 bf16 1024 1 ttft_ms
layer.prefill.fp8.n2048.roofline fp8 fp8 bf16 2048 1 ttft_ms
layer.prefill.fp8.n4096.roofline fp8 fp8 bf16 4096 1 ttft_ms
layer.prefill.fp8.n8192.roofline fp8 fp8 bf16 8192 1 ttft_ms
ROWS
