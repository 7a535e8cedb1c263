#!/usr/bin/env bash
# Command 2 of the README (and what CI runs): install what is missing, build with warnings as
# errors (CUDA kernels too where nvcc exists), and run every test that needs no GPU; then build
# and run the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
# Fails on any failed test, any sanitizer report, and any test skipped (outside the label gpu
# nothing may skip).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --tests
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)" --output-junit junit.xml

no_skips() {
  if grep -q 'status="skipped"\|<skipped' "$1" 2>/dev/null; then
    echo "roofline: a test was skipped; outside the gpu label none may be" >&2
    grep -B1 -A2 'skipped' "$1" >&2 || true
    exit 1
  fi
}
no_skips build/ci/junit.xml

# The sanitizers halt on the first report (halt_on_error, abort_on_error), which fails the test.
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"
ctest --preset asan -j "$(nproc)" --output-junit junit.xml
no_skips build/asan/junit.xml
