#!/usr/bin/env bash
# Command 2 of the README (and what CI runs): install what is missing, build with warnings as
# errors (CUDA kernels too where nvcc exists), and run every test that needs no GPU.
# Fails on any failed test, and on any test skipped (outside the label gpu nothing may skip).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)" --output-junit junit.xml

if grep -q 'status="skipped"\|<skipped' build/ci/junit.xml 2>/dev/null; then
  echo "roofline: a test was skipped; outside the gpu label none may be" >&2
  grep -B1 -A2 'skipped' build/ci/junit.xml >&2 || true
  exit 1
fi
