#!/usr/bin/env bash
# Session 26's device call A: build + GPU tests, FP8 decode cases (round 1), layer suite, int4 GEMV
# (round 1), int4 sanitizers. Results packed into $OUT/s26.tgz after each step.
export OUT
T0=$(date +%s)
R=build/gpu-results/s26; mkdir -p $R
pack() { tar czf $OUT/s26.tgz -C build/gpu-results s26 2>/dev/null; }
el() { echo $(( $(date +%s) - T0 )); }
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=330 scripts/gpu/run.sh build test > $R/run-sh.txt 2>&1
echo "build+test rc=$? $(el)"
cp build/gpu-results/ctest.log build/gpu-results/environment.txt $R/ 2>/dev/null
sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "gemv_mma|====" > $R/ptxas-gemv.txt
tail -4 $R/ctest.log; grep -E "tests passed|Failed|\*\*\*" $R/ctest.log | head -8; pack
B=build/gpu-run/roofline
[ -x $B ] || { echo "no binary"; pack; exit 1; }
FP8DEC=x1280x8192.cublaslt,x8192x1024.cublaslt,x7168x8192.cublaslt,x8192x3584.cublaslt,x1536x7168.cublaslt,x3072x1536.cublaslt,x576x7168.cublaslt,x7168x2048.cublaslt,x4608x7168.cublaslt,x7168x2304.cublaslt,x512x7168.cublaslt,x7168x256.cublaslt
timeout 110 $B bench --suite compute --filter $FP8DEC --json $R/fp8-decode-r1.json > $R/fp8-decode-r1.txt 2>&1; echo "fp8 decode r1 rc=$? $(el)"; pack
timeout 80 $B bench --suite layer --json $R/bench-layer.json > $R/layer.txt 2>&1; echo "layer rc=$? $(el)"; pack
left=$(( 575 - $(el) ))
[ $left -gt 40 ] && { timeout $(( left - 25 )) $B bench --suite memory --filter gemv.bf16.wint4_g128.10240x8192.b32.mma,gemv.bf16.wint4_g128.10240x8192.b64.mma,gemv.bf16.wint4_g128.8192x8192.b32.mma,gemv.bf16.wint4_g128.8192x8192.b64.mma,gemv.bf16.wint4_g128.57344x8192.b32.mma,gemv.bf16.wint4_g128.57344x8192.b64.mma,gemv.bf16.wint4_g128.8192x28672.b32.mma,gemv.bf16.wint4_g128.8192x28672.b64.mma,gemv.bf16.wint4_g128.1280x8192.b32.mma,gemv.bf16.wint4_g128.1280x8192.b64.mma,gemv.bf16.wint4_g128.8192x1024.b32.mma,gemv.bf16.wint4_g128.8192x1024.b64.mma,gemv.bf16.wint4_g128.7168x8192.b32.mma,gemv.bf16.wint4_g128.7168x8192.b64.mma,gemv.bf16.wint4_g128.8192x3584.b32.mma,gemv.bf16.wint4_g128.8192x3584.b64.mma --json $R/int4-r1.json > $R/int4-r1.txt 2>&1; echo "int4 r1 rc=$? $(el)"; pack; }
for id in gemv.bf16.wint4_g128.8192x8192.b32.mma gemv.bf16.wint4_g128.8192x8192.b64.mma; do
  [ $(el) -lt 565 ] || break
  timeout 20 compute-sanitizer --tool memcheck $B bench --suite memory --filter $id --check-only --format json -o /dev/null >> $R/memcheck.txt 2>&1
done
grep -E "ERROR SUMMARY" $R/memcheck.txt; pack
echo "done $(el)"
