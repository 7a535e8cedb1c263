#!/usr/bin/env bash
# The table of docs/results/serve-validation.md: each TensorRT-LLM H100 FP8 row of issue 16 simulated
# by roofline serve, with the error against the published throughput. Extra flags go to every run:
#   docs/results/serve-validation.sh build/dev/roofline --calibration auto
#   docs/results/serve-validation.sh build/dev/roofline --efficiency compute=0.64,memory=0.89
set -euo pipefail
binary=${1:?usage: serve-validation.sh ROOFLINE [FLAGS...]}
shift
printf '%-14s %3s %10s %9s %10s %9s  %s\n' model TP ISL/OSL published predicted error calibration
errors=()
while read -r model tp isl osl requests published; do
  json=$("$binary" serve --model "$model" --gpu h100-sxm --tp "$tp" --weights fp8 --kv fp8 --prompt "$isl" \
    --output "$osl" --requests "$requests" --rate inf --kv-memory-fraction 0.95 "$@" --format json 2>/dev/null)
  read -r predicted source < <(python3 -c 'import json,sys; r=json.load(sys.stdin)["results"]
print(round(r["output_tokens_per_s"]), r["calibration"]["source"].replace(" ", "_"))' <<<"$json")
  error=$(python3 -c "print(f'{100 * ($predicted / $published - 1):+.1f}')")
  errors+=("$error")
  printf '%-14s %3s %10s %9s %10s %8s%%  %s\n' "$model" "$tp" "$isl/$osl" "$published" "$predicted" "$error" "$source"
done <<'ROWS'
llama-3.1-8b 1 1000 1000 3000 15270
llama-3.1-8b 1 2048 128 3000 3495
llama-3.1-8b 1 128 2048 3000 22004
llama-3.1-70b 2 1000 1000 3000 4191
llama-3.1-70b 4 1000 1000 3000 7427
llama-3.1-70b 8 2048 2048 1500 8773
llama-3.1-70b 8 128 2048 3000 17464
ROWS
python3 -c 'import statistics,sys; e=[abs(float(x)) for x in sys.argv[1:]]
print(f"median |error| {statistics.median(e):.1f}%, worst {max(e):.1f}% (target: median <= 10%, worst <= 20%)")' "${errors[@]}"
