#!/usr/bin/env bash
# The three device calls of 2026-12-05 03:47-04:33 UTC, as run (session 24), one after the other in this file.
# Call 1 ran the tree of ddeac1d (before the m <= 64 rule), call 2 the tree of 55bf165 with knob.patch applied
# (a temporary ROOFLINE_SKINNY_SHAPE knob, never committed), call 3 the tree of d1e712e.
#   run(command="bash device-calls.sh ...", carry=[".devdeps"]); ab/splitk_ids.txt held the ids of call 2.
exit 0  # a record, not meant to be run whole

# ======== s24-call.sh
# Session 24's device calls. Call 1: build, ptxas, check every GEMM case of the skinny plan, memcheck and
# racecheck on one case of each new plan shape, skinny rounds. Call 2: flash beside cuDNN (3 rounds) and
# more skinny rounds.
export OUT
CALL=$1
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$2 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"; tail -3 /tmp/build-run.txt
B=build/gpu-run/roofline
R=build/gpu-results/s24-call$CALL; mkdir -p $R
pack() { tar czf $OUT/s24.tgz -C build/gpu-results s24-call$CALL; }
G=x10240x8192.,x57344x8192.,64x8192x8192.,128x8192x8192.,256x8192x8192.,512x8192x8192.,x8192x28672.,gemm.bf16.1024x1024x1024.,gemm.bf16.2048x2048x2048.,gemm.bf16.4096x4096x4096.wgmma,gemm.bf16.4096x4096x4096.cublas,333x264x200,2100x2000x200,256x512x1024,gemm.bf16.512x512x512.
skinny() {
  timeout ${2:-120} $B bench --suite compute --filter "$G" --json $R/skinny-r$1.json > /dev/null 2>> $R/timing.log; echo "skinny r$1 rc=$? $(( $(date +%s) - T0 ))"; pack
}
if [ "$CALL" = 1 ]; then
  sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "gemm_wgmma_kernel|====" > $R/ptxas.txt
  timeout 120 $B bench --suite compute --filter gemm.bf16,gemm.fp16 --check-only --format json -o /dev/null > $R/check-gemm.txt 2>&1; echo "check gemm rc=$? $(( $(date +%s) - T0 ))"
  grep -ciE "fail|mismatch" $R/check-gemm.txt
  pack
  for id in gemm.bf16.333x264x200.splitk gemm.bf16.2100x2000x200.splitk gemm.fp16.256x512x1024.splitk gemm.bf16.128x10240x8192.splitk gemm.bf16.256x8192x8192.splitk; do
    for tool in memcheck racecheck; do
      timeout 60 compute-sanitizer --tool $tool $B bench --suite compute --filter $id --check-only --format json -o /dev/null >> $R/$tool.txt 2>&1
    done
  done
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/memcheck.txt $R/racecheck.txt
  echo "sanitize done $(( $(date +%s) - T0 ))"; pack
  skinny 1 150
  python3 scripts/gpu/library_ratio_tables.py gemm $R/skinny-r1.json > $R/skinny-table-r1.md 2>&1
  grep -E "splitk|^\|" $R/skinny-table-r1.md | head -60
  if [ $(( $(date +%s) - T0 )) -lt 420 ]; then skinny 2 120; fi
else
  if [ -n "${SKINNY_FIRST:-}" ]; then skinny 3 120; fi
  timeout 420 env ROOFLINE_ATTENTION_ROUNDS=${FLASH_ROUNDS:-3} scripts/gpu/run-attention.sh flash > $R/attention-flash.txt 2>&1; echo "flash rc=$? $(( $(date +%s) - T0 ))"
  cp build/gpu-results/attention/*.json $R/ 2>/dev/null; pack
fi
pack
echo "done $(( $(date +%s) - T0 ))"

# ======== s24-call2.sh
# Session 24 call 2: every skinny plan shape forced on every splitk case (a temporary knob,
# ROOFLINE_SKINNY_SHAPE = index into kernel_tiles::gemm_wgmma_shapes; -1 the planner), two
# interleaved rounds; then flash beside cuDNN, as many rounds as the call's time allows.
export OUT
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"; tail -2 /tmp/build-run.txt
B=build/gpu-run/roofline
R=build/gpu-results/s24-call2; mkdir -p $R
pack() { tar czf $OUT/s24.tgz -C build/gpu-results s24-call2; }
IDS=$(cat ab/splitk_ids.txt)
timeout 200 scripts/gpu/run-variants.sh 2 ROOFLINE_SKINNY_SHAPE "-1 0 1 2 3 4 5 6 7" compute "$IDS" shapes
echo "variants rc=$? $(( $(date +%s) - T0 ))"
python3 scripts/gpu/summarize_variants.py build/gpu-results/variants shapes -1 0 1 2 3 4 5 6 7 > $R/shapes-variants.md 2>&1
cp -r build/gpu-results/variants $R/; pack
head -40 $R/shapes-variants.md
LEFT=$(( 575 - ($(date +%s) - T0) ))
echo "flash budget $LEFT"
timeout $LEFT env ROOFLINE_ATTENTION_ROUNDS=${FLASH_ROUNDS:-2} scripts/gpu/run-attention.sh flash > $R/attention-flash.txt 2>&1; echo "flash rc=$? $(( $(date +%s) - T0 ))"
cp build/gpu-results/attention/*.json build/gpu-results/attention/attention.log $R/ 2>/dev/null; pack
echo "done $(( $(date +%s) - T0 ))"

# ======== s24-call3.sh
# Session 24 call 3: the final tree: build, ctest -L gpu, sanitizers on two plans, two skinny rounds
# beside cuBLAS, and a third flash round if time allows.
export OUT
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s24-call3; mkdir -p $R
pack() { tar czf $OUT/s24.tgz -C build/gpu-results s24-call3; }
sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "gemm_wgmma_kernel|====" > $R/ptxas.txt
timeout 60 ctest --test-dir build/gpu-run -L gpu --output-on-failure > $R/ctest-gpu.txt 2>&1; echo "ctest rc=$? $(( $(date +%s) - T0 ))"; tail -3 $R/ctest-gpu.txt
timeout 60 $B bench --suite compute --filter gemm.bf16,gemm.fp16 --check-only --format json -o /dev/null > $R/check-gemm.txt 2>&1; echo "check rc=$? $(grep -c passed $R/check-gemm.txt) passed"
for id in gemm.bf16.2100x2000x200.splitk gemm.bf16.128x8192x8192.splitk gemm.bf16.256x10240x8192.splitk; do
  for tool in memcheck racecheck; do
    timeout 40 compute-sanitizer --tool $tool $B bench --suite compute --filter $id --check-only --format json -o /dev/null >> $R/$tool.txt 2>&1
  done
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Race reported between" $R/memcheck.txt $R/racecheck.txt | cut -c1-160
echo "sanitize $(( $(date +%s) - T0 ))"; pack
G=x10240x8192.,x57344x8192.,64x8192x8192.,128x8192x8192.,256x8192x8192.,512x8192x8192.,x8192x28672.,gemm.bf16.1024x1024x1024.,gemm.bf16.2048x2048x2048.,gemm.bf16.4096x4096x4096.wgmma,gemm.bf16.4096x4096x4096.cublas,333x264x200,2100x2000x200,256x512x1024,gemm.bf16.512x512x512.
for r in 1 2; do
  timeout 60 $B bench --suite compute --filter "$G" --json $R/skinny-r$r.json > /dev/null 2>> $R/timing.log; echo "skinny r$r rc=$? $(( $(date +%s) - T0 ))"; pack
done
LEFT=$(( 400 - ($(date +%s) - T0) ))
if [ $LEFT -gt 160 ]; then
  timeout $LEFT scripts/gpu/run-attention.sh flash > $R/attention-flash.txt 2>&1; echo "flash rc=$? $(( $(date +%s) - T0 ))"
  cp build/gpu-results/attention/flash.json $R/flash-r3.json; cp build/gpu-results/attention/torch-flash.json $R/torch-flash-r3.json
fi
pack
echo "done $(( $(date +%s) - T0 ))"
