#!/usr/bin/env bash
# On the GPU machine, in one device call: the quantised kernels' run (FP8 GEMM, MoE grouped GEMM,
# the FP8 layer), after scripts/gpu/run.sh's build and GPU tests:
#
#   scripts/gpu/run-quantised.sh
#
# 1. scripts/gpu/run.sh build test (the binary in build/gpu-run, ctest -L gpu);
# 2. scripts/gpu/cublaslt_fp8_probe.cu: one FP8 product through cuBLASLt from PyTorch's set-up and
#    from roofline's, one condition changed at a time (which one makes cuBLASLt refuse it);
#    then roofline's own 1024^3 FP8 case, traced by cuBLASLt (CUBLASLT_LOG_LEVEL=5; its last lines
#    go to quantised.log): when the toolkit's cuBLASLt refuses it, the run takes cuBLAS/cuBLASLt
#    from PyTorch's wheel instead (LD_LIBRARY_PATH), and says so in cublas-choice.txt: every report
#    records the cuBLAS version it ran;
# 3. the compute suite's FP8 and grouped GEMM cases (bench-compute-fp8.json);
# 4. the whole layer suite, bf16 and FP8 (bench-layer.json);
# 5. compute-sanitizer memcheck of the quick FP8/grouped GEMM and FP8 layer cases (--check-only).
# Results are copied to $OUT as they are made, at most 8 files (what a device call returns):
#   quantised.log (every table and note of this script) environment.txt build.log ctest.log
#   sanitize.log bench-compute-fp8.json bench-layer.json
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build/gpu-out}
RESULTS=$PWD/build/gpu-results
BIN=$PWD/build/gpu-run/roofline
mkdir -p "$OUT" "$RESULTS"
LOG=$RESULTS/quantised.log
publish() {
  local f
  for f in quantised.log environment.txt build.log ctest.log sanitize.log bench-compute-fp8.json bench-layer.json; do
    [ -f "$RESULTS/$f" ] && cp -f "$RESULTS/$f" "$OUT/$f"
  done
  true
}
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1

ROOFLINE_GPU_BUDGET_S=${ROOFLINE_GPU_BUDGET_S:-230} scripts/gpu/run.sh build test 2>&1 | grep -v "^\[gpu/run.sh" | tail -20
publish
[ -x "$BIN" ] || { echo "no binary"; exit 1; }

echo "######## cuBLASLt FP8 probe (scripts/gpu/cublaslt_fp8_probe.cu)"
if /usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90a -O2 scripts/gpu/cublaslt_fp8_probe.cu -o "$RESULTS/cublaslt-probe" -ldl; then
  timeout 60 "$RESULTS/cublaslt-probe"
fi

probe() {
  CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$RESULTS/cublaslt-trace.log" \
  "$BIN" bench --suite compute --quick --filter gemm.fp8e4m3.1024x1024x1024.cublaslt --format json -o /dev/null \
    > "$RESULTS/probe.txt" 2>&1
}
if probe; then
  echo "cuBLAS: the toolkit's ($(ls /usr/local/cuda/lib64/libcublasLt.so.* | head -1))" > "$RESULTS/cublas-choice.txt"
else
  wheel=$(python3 -c "import torch, pathlib; p = pathlib.Path(torch.__file__).parent.parent / 'nvidia';
print(next(q.parent for q in sorted(p.rglob('libcublasLt.so*'))))" 2>/dev/null)
  export LD_LIBRARY_PATH=$wheel${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if probe; then
    echo "cuBLAS: PyTorch's wheel ($wheel): the toolkit's cuBLASLt refused FP8: $(grep -m1 cublaslt "$RESULTS/probe.txt")" \
      > "$RESULTS/cublas-choice.txt"
  else
    echo "cuBLAS: the toolkit's; cuBLASLt FP8 refused by both the toolkit's and PyTorch's ($wheel) libraries" \
      > "$RESULTS/cublas-choice.txt"
    unset LD_LIBRARY_PATH
  fi
fi
cat "$RESULTS/cublas-choice.txt"
echo "######## cuBLASLt's trace of roofline's probe: its errors and last lines"
grep -i -E "error|warn|not supported|fail" "$RESULTS/cublaslt-trace.log" | head -20
tail -n 8 "$RESULTS/cublaslt-trace.log"

"$BIN" bench --suite compute --filter gemm.fp8e4m3,gemm.grouped --json "$RESULTS/bench-compute-fp8.json" \
  2>&1 | grep -vE "^\[ *[0-9]+/[0-9]+\] .* passed "
echo "compute fp8/grouped: exit ${PIPESTATUS[0]}"
publish
"$BIN" bench --suite layer --json "$RESULTS/bench-layer.json" 2>&1 | grep -vE "^\[ *[0-9]+/[0-9]+\] .* passed "
echo "layer: exit ${PIPESTATUS[0]}"
publish

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for args in "--suite compute --filter gemm.fp8e4m3,gemm.grouped" "--suite layer --filter .fp8."; do
  echo "######## memcheck $args --quick --check-only" >> "$RESULTS/sanitize.log"
  # shellcheck disable=SC2086
  timeout 120 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 "$BIN" bench $args --quick \
    --check-only --timeout 600 --format json -o /dev/null >> "$RESULTS/sanitize.log" 2>&1
  echo "######## exit $?" >> "$RESULTS/sanitize.log"
done
grep -E "^######## |ERROR SUMMARY|LEAK SUMMARY" "$RESULTS/sanitize.log"
publish
