#!/usr/bin/env bash
# Runs one libFuzzer harness (fuzz/) for a while on its seed corpus (tests/fuzz-corpus/NAME/):
#   cmake --preset fuzz && cmake --build --preset fuzz
#   scripts/fuzz.sh model_loader 600
# New inputs go to build/fuzz/runs/NAME/corpus, findings to build/fuzz/runs/NAME/artifacts/, the
# log to build/fuzz/runs/NAME/fuzz-0.log (its last "DONE" line has runs, cov and ft; see
# docs/results/fuzz.md). An input that runs longer than 25 s counts as a finding (a hang).
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
seconds=${2:-600}
root=$PWD
work=build/fuzz/runs/$name
mkdir -p "$work/corpus" "$work/artifacts"
cd "$work"
exec "$root/build/fuzz/fuzz/fuzz_$name" -max_total_time="$seconds" -jobs=1 -workers=1 -timeout=25 \
  -artifact_prefix=artifacts/ -print_final_stats=1 corpus "$root/tests/fuzz-corpus/$name"
