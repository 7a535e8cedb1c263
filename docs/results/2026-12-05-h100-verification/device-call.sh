#!/usr/bin/env bash
# Session 26's verification call (any sm_90 GPU): build, ctest -L gpu (the quick suites' checks: the
# GEMM runners' whole-output check of c7a97b9/4e79d38 and int4 mma at b32/b64, never run before),
# the new FP8 decode cases checked (--check-only), memcheck and racecheck on int4 b32 and b64.
export OUT
T0=$(date +%s)
R=build/gpu-results/s26v; mkdir -p $R
pack() { tar czf $OUT/s26v.tgz -C build/gpu-results s26v 2>/dev/null; }
el() { echo $(( $(date +%s) - T0 )); }
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=360 scripts/gpu/run.sh build test > $R/run-sh.txt 2>&1
echo "build+test rc=$? $(el)"
cp build/gpu-results/ctest.log build/gpu-results/environment.txt $R/ 2>/dev/null
sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log > $R/ptxas.txt
grep -E "tests passed|Failed|\*\*\*" $R/ctest.log | head -8; head -3 $R/environment.txt; pack
B=build/gpu-run/roofline
[ -x $B ] || { echo "no binary"; tail -20 $R/run-sh.txt; pack; exit 1; }
FP8DEC=x1280x8192.cublaslt,x8192x1024.cublaslt,x7168x8192.cublaslt,x8192x3584.cublaslt,x1536x7168.cublaslt,x3072x1536.cublaslt,x576x7168.cublaslt,x7168x2048.cublaslt,x4608x7168.cublaslt,x7168x2304.cublaslt,x512x7168.cublaslt,x7168x256.cublaslt
timeout 100 $B bench --suite compute --filter $FP8DEC --check-only --format json -o $R/fp8-decode-check.json > $R/fp8-decode-check.txt 2>&1; echo "fp8 decode check rc=$? $(el)"
python3 -c "
import json; d=json.load(open('$R/fp8-decode-check.json'))['results']
rows=[r for t in d.values() if isinstance(t,list) for r in t if isinstance(r,dict) and 'status' in r]
from collections import Counter; print('fp8 decode statuses', Counter(r['status'] for r in rows))" 2>&1 | tail -1; pack
for id in gemv.bf16.wint4_g128.8192x8192.b32.mma gemv.bf16.wint4_g128.8192x8192.b64.mma gemv.bf16.wint4_g128.8192x1024.b64.mma; do
  for tool in memcheck racecheck; do
    [ $(el) -lt 560 ] || break
    timeout 40 compute-sanitizer --tool $tool $B bench --suite memory --filter $id --check-only --format json -o /dev/null >> $R/$tool.txt 2>&1
  done
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/memcheck.txt $R/racecheck.txt; pack
echo "done $(el)"
