#!/usr/bin/env bash
# The table of docs/results/qwen3-235b-trtllm-validation.md: TensorRT-LLM's published Qwen3-235B-A22B
# FP8 throughput on 8 x H200 and 8 x H100 (Performance Overview, v1.0) beside roofline serve, in the
# layouts the published recipe allows (its MoE command sets --ep $ep_size, and its llm_options.yml
# nests enable_attention_dp under cuda_graph_config; the rows state neither): TP 8 with EP 8 and
# attention DP, TP 8 with EP 8 (attention split over TP), and TP 8 alone (experts split over TP).
# Extra flags go to every run:
#   docs/results/qwen3-235b-trtllm-validation.sh build/dev/roofline --calibration auto
set -euo pipefail
binary=${1:?usage: qwen3-235b-trtllm-validation.sh ROOFLINE [FLAGS...]}
shift
config=$(dirname "$0")/deployment-modes/qwen3-235b-a22b.config.json
printf '%-9s %11s %9s | %10s %8s | %10s %8s | %10s %8s\n' GPU ISL/OSL published 'EP8+ADP' error 'EP8' error 'TP8 only' \
  error
declare -A errors
run() {  # gpu isl osl requests layout...
  local gpu=$1 isl=$2 osl=$3 requests=$4
  shift 4
  "$binary" serve --hf-config "$config" --gpu "$gpu" --tp 8 "$@" --weights fp8 --kv fp8 --prompt-tokens "$isl" \
    --output-tokens "$osl" --requests "$requests" --rate inf --kv-memory-fraction 0.95 "${extra[@]}" --format json \
    2>/dev/null | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["results"]["output_tokens_per_s"]))'
}
extra=("$@")
while read -r gpu isl osl requests published; do
  adp=$(run "$gpu" "$isl" "$osl" "$requests" --ep 8 --attention-dp)
  ep=$(run "$gpu" "$isl" "$osl" "$requests" --ep 8)
  tp=$(run "$gpu" "$isl" "$osl" "$requests")
  e_adp=$(python3 -c "print(f'{100 * ($adp / $published - 1):+.0f}')")
  e_ep=$(python3 -c "print(f'{100 * ($ep / $published - 1):+.0f}')")
  e_tp=$(python3 -c "print(f'{100 * ($tp / $published - 1):+.0f}')")
  errors[adp]+="$e_adp "
  errors[ep]+="$e_ep "
  errors[tp]+="$e_tp "
  printf '%-9s %11s %9s | %10s %7s%% | %10s %7s%% | %10s %7s%%\n' "$gpu" "$isl/$osl" "$published" "$adp" "$e_adp" \
    "$ep" "$e_ep" "$tp" "$e_tp"
done <<'ROWS'
h200-sxm 128 128 30000 30429
h200-sxm 128 2048 3000 42821
h200-sxm 128 4096 1500 26852
h200-sxm 500 2000 3000 28026
h200-sxm 1000 1000 3000 23789
h200-sxm 1000 2000 1500 22061
h200-sxm 2048 128 3000 3331
h200-sxm 2048 2048 1500 16672
h200-sxm 5000 500 1500 3623
h200-sxm 20000 2000 1000 1876
h100-sxm 128 2048 3000 19658
h100-sxm 128 4096 1500 12447
h100-sxm 500 2000 3000 18351
h100-sxm 1000 1000 3000 14898
h100-sxm 1000 2000 1500 15136
h100-sxm 2048 2048 1500 9924
h100-sxm 5000 500 1500 3225
ROWS
declare -A names=([adp]="TP 8, EP 8, attention DP" [ep]="TP 8, EP 8" [tp]="TP 8 alone")
for layout in adp ep tp; do
  # shellcheck disable=SC2086 # the error list splits on purpose
  python3 -c 'import statistics,sys; e=[float(x) for x in sys.argv[2:]]
print(f"{sys.argv[1]}: median error {statistics.median(e):+.0f}%, range {min(e):+.0f}% to {max(e):+.0f}% over {len(e)} rows")' \
    "${names[$layout]}" ${errors[$layout]}
done
