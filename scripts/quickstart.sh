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
./build/host/roofline attainable --gpu h100,h200 --ai 1,32,295,1365 --dtype bf16
