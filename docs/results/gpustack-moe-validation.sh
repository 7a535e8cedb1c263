#!/usr/bin/env bash
# The table of docs/results/gpustack-moe-validation.md: GPUStack's published vLLM runs of two MoE
# models (DeepSeek-R1-0528 on 8 x H200, Qwen3-235B-A22B-Instruct-2507 on H100), each simulated by
# roofline serve as configured there, beside the published duration, mean TTFT and mean TPOT.
# Extra flags go to every run:
#   docs/results/gpustack-moe-validation.sh build/dev/roofline --calibration auto
set -euo pipefail
binary=${1:?usage: gpustack-moe-validation.sh ROOFLINE [FLAGS...]}
shift
qwen=$(dirname "$0")/deployment-modes/qwen3-235b-a22b.config.json
printf '%-9s %-24s %11s %7s | %9s %9s %7s | %9s %9s %7s | %8s %8s %7s\n' model deployment ISL/OSL requests \
  'dur pub' 'dur roof' error 'TTFT pub' 'TTFT roof' error 'TPOT pub' 'TPOT roof' error
errors=()
# name | model flags | deployment flags | label | ISL OSL requests | published duration s, mean TTFT ms, mean TPOT ms
while IFS='|' read -r name model deployment label shape published; do
  read -r isl osl requests <<<"$shape"
  read -r duration ttft tpot <<<"$published"
  # shellcheck disable=SC2086 # the flag lists split on purpose
  json=$("$binary" serve $model $deployment --prompt-tokens "$isl" --output-tokens "$osl" --requests "$requests" \
    --rate inf "$@" --format json 2>/dev/null)
  read -r d t p < <(python3 -c 'import json,sys; r=json.load(sys.stdin)["results"]
m={x["metric"]: x["mean_ms"] for x in r["latency"]}
print(r["duration_s"], m["ttft"], m["tpot"])' <<<"$json")
  row=$(python3 -c "
d, t, p, D, T, P = $d, $t, $p, $duration, $ttft, $tpot
e = lambda a, b: f'{100 * (a / b - 1):+.0f}%'
print(f'{D:9.1f} {d:9.1f} {e(d, D):>7} | {T / 1e3:9.1f} {t / 1e3:9.1f} {e(t, T):>7} | {P:8.1f} {p:8.1f} {e(p, P):>7}')
print(f'{100 * (d / D - 1):.1f}')")
  errors+=("$(tail -1 <<<"$row")")
  printf '%-9s %-24s %11s %7s | %s\n' "$name" "$label" "$isl/$osl" "$requests" "$(head -1 <<<"$row")"
done <<ROWS
R1|--model deepseek-r1 --gpu h200 --weights fp8 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8|32000 100 100|206.90 101351.99 365.79
R1|--model deepseek-r1 --gpu h200 --weights fp8 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8|4000 200 500|132.68 63058.71 164.23
R1|--model deepseek-r1 --gpu h200 --weights fp8 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8|2000 100 500|59.26 28911.90 237.02
R1|--model deepseek-r1 --gpu h200 --weights fp8 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8|128 4 1000|22.07 19392.11 351.83
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights bf16 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8, bf16|32000 100 100|141.60 70409.55 132.10
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights bf16 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8, bf16|4000 200 500|98.99 47811.58 68.94
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights bf16 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8, bf16|2000 100 500|43.91 21313.79 101.08
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights bf16 --kv bf16|--tp 8 --max-batch 1024 --max-num-tokens 8192|vLLM TP 8, bf16|128 4 1000|8.83 7042.17 212.98
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights fp8 --kv bf16|--tp 4 --max-batch 1024 --max-num-tokens 16384|vLLM TP 4, fp8, 16k|32000 100 100|208.79 103754.50 194.60
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights fp8 --kv bf16|--tp 4 --max-batch 1024 --max-num-tokens 16384|vLLM TP 4, fp8, 16k|4000 200 500|126.76 60513.14 89.52
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights fp8 --kv bf16|--tp 4 --max-batch 1024 --max-num-tokens 16384|vLLM TP 4, fp8, 16k|2000 100 500|55.28 26860.95 125.93
Q3-235B|--hf-config $qwen --gpu h100-sxm --weights fp8 --kv bf16|--tp 4 --max-batch 1024 --max-num-tokens 16384|vLLM TP 4, fp8, 16k|128 4 1000|6.11 5621.51 125.18
ROWS
python3 -c 'import statistics,sys; e=[float(x) for x in sys.argv[1:]]
print(f"duration error: median {statistics.median(e):+.0f}%, range {min(e):+.0f}% to {max(e):+.0f}% over {len(e)} rows")' "${errors[@]}"
