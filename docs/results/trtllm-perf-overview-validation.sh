#!/usr/bin/env bash
# The table of docs/results/trtllm-perf-overview-validation.md: the H200 and H100 FP8 rows of
# TensorRT-LLM's later Performance Overview (docs/source/developer-guide/perf-overview.md, each
# row's layout named: DEP = attention DP with EP over the same GPUs) beside roofline serve. Every
# run follows the page's recipe: trtllm-bench throughput (every request queued at once), the
# synthetic fixed-length dataset with the page's request counts, kv_cache_free_gpu_mem_fraction
# 0.95, TensorRT-LLM's default capacity policy (GUARANTEED_NO_EVICT), FP8 weights and KV cache.
# Extra flags go to every run:
#   docs/results/trtllm-perf-overview-validation.sh build/dev/roofline --calibration auto
set -euo pipefail
binary=${1:?usage: trtllm-perf-overview-validation.sh ROOFLINE [FLAGS...]}
shift
extra=("$@")
qwen3=$(dirname "$0")/deployment-modes/qwen3-235b-a22b.config.json
printf '%-16s %-9s %-9s %11s %11s %8s %9s\n' model GPU layout ISL/OSL published predicted error
declare -A errors
while read -r family gpu layout isl osl requests published; do
  case $family in
    deepseek-r1) model=(--model deepseek-r1) ;;
    qwen3-235b) model=(--hf-config "$qwen3") ;;
    llama-3.3-70b) model=(--model llama-3.1-70b) ;;  # the same architecture as LLaMA-3.1-70B
  esac
  case $layout in
    DEP4) parallel=(--tp 4 --ep 4 --attention-dp) ;;
    DEP8) parallel=(--tp 8 --ep 8 --attention-dp) ;;
    TP2) parallel=(--tp 2) ;;
  esac
  predicted=$("$binary" serve "${model[@]}" --gpu "$gpu" "${parallel[@]}" --weights fp8 --kv fp8 \
    --prompt-tokens "$isl" --output-tokens "$osl" --requests "$requests" --rate inf --kv-memory-fraction 0.95 \
    --capacity-policy guaranteed-no-evict "${extra[@]}" --format json 2>/dev/null |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["results"]["output_tokens_per_s_per_gpu"]))')
  error=$(python3 -c "print(f'{100 * ($predicted / $published - 1):+.0f}')")
  errors[$family]+="$error "
  printf '%-16s %-9s %-9s %11s %11s %8s %8s%%\n' "$family" "$gpu" "$layout" "$isl/$osl" "$published" "$predicted" \
    "$error"
done <<'ROWS'
deepseek-r1 h200-sxm DEP8 1000 1000 3000 1627
deepseek-r1 h200-sxm DEP8 1024 1024 3000 1620
deepseek-r1 h200-sxm DEP8 1024 8192 1500 1218
deepseek-r1 h200-sxm DEP8 1024 32768 1000 438
qwen3-235b h200-sxm DEP4 1000 1000 3000 3288
qwen3-235b h200-sxm DEP4 1024 1024 3000 3268
qwen3-235b h200-sxm DEP4 1024 8192 1500 1417
qwen3-235b h200-sxm DEP4 8192 1024 1500 627
qwen3-235b h200-sxm DEP4 32768 1024 1000 134
qwen3-235b h100-sxm DEP8 1000 1000 3000 1932
qwen3-235b h100-sxm DEP8 1024 1024 3000 1935
qwen3-235b h100-sxm DEP8 1024 8192 1500 873
llama-3.3-70b h200-sxm TP2 1000 1000 3000 2587
llama-3.3-70b h200-sxm TP2 1024 1024 3000 2582
llama-3.3-70b h200-sxm TP2 1024 8192 1500 2009
llama-3.3-70b h200-sxm TP2 8192 1024 1500 537
llama-3.3-70b h200-sxm TP2 32768 1024 1000 120
llama-3.3-70b h100-sxm TP2 1000 1000 3000 2209
llama-3.3-70b h100-sxm TP2 8192 1024 1500 398
ROWS
for family in deepseek-r1 qwen3-235b llama-3.3-70b; do
  # shellcheck disable=SC2086 # the error list splits on purpose
  python3 -c 'import statistics,sys; e=[float(x) for x in sys.argv[2:]]
print(f"{sys.argv[1]}: median error {statistics.median(e):+.0f}%, range {min(e):+.0f}% to {max(e):+.0f}% over {len(e)} rows")' \
    "$family" ${errors[$family]}
done
