#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build the tool, and run the main job,
# a real report on bundled GPUs that needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset host >/dev/null
cmake --build --preset host -j "$(nproc)" >/dev/null

./build/host/roofline ridge --gpu all
echo
# The capacity report of the source texts' worked example: LLaMA-3 70B in fp8, TP 8 on H100.
./build/host/roofline llm --model llama-3.1-70b --gpu h100 --tp 8 --weights fp8 --context 8192
