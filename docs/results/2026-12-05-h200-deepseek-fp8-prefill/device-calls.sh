#!/usr/bin/env bash
# Session 27's device calls (2026-12-05). A: build, DeepSeek-V3 TP 8 FP8 projections at prefill and
# decode sizes (three rounds), the skinny-GEMM A/Bs (ranked plain shape, skinny knob). B: int4 b64
# two-chunk A/B and flash three rounds.
export OUT
CALL=$1
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$2 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s27-call$CALL; mkdir -p $R
pack() { tar czf $OUT/s27-$CALL.tgz -C build/gpu-results s27-call$CALL; }
SKINNY_PLAIN=gemm.bf16.256x57344x8192.wgmma,gemm.bf16.256x57344x8192.cublas,gemm.bf16.512x57344x8192.wgmma
SKINNY_SPLIT=gemm.bf16.128x8192x8192.splitk,gemm.bf16.128x8192x8192.cublas,gemm.bf16.128x10240x8192.splitk,gemm.bf16.128x8192x28672.splitk
variants() {  # NAME "VALUES" SUITE IDS VARIABLE BIN
  ROOFLINE_BIN=$6 timeout 170 scripts/gpu/run-variants.sh 5 $5 "$2" $3 $4 $1
  python3 scripts/gpu/summarize_variants.py build/gpu-results/variants $1 $2 > $R/$1-variants.md 2>&1
  cat $R/$1-variants.md; cp -r build/gpu-results/variants $R/; pack
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/environment.txt
if [ "$CALL" = A ]; then
  DS=$(paste -sd, ab/ds-ids.txt)
  timeout 90 $B bench --suite compute --filter $DS --check-only --format json -o /dev/null > $R/check-deepseek.txt 2>&1; echo "check rc=$? $(( $(date +%s) - T0 ))"
  tail -3 $R/check-deepseek.txt
  for r in 1 2 3; do
    timeout 150 $B bench --suite compute --filter $DS --json $R/deepseek-r$r.json > /dev/null 2>> $R/timing.log; echo "deepseek r$r rc=$? $(( $(date +%s) - T0 ))"; pack
  done
  python3 scripts/gpu/merge_rounds.py $R/deepseek-fp8.json $R/deepseek-r*.json; pack
  scripts/gpu/build-variants.sh ab/s25-plain-ranked.patch ab/s25-skinny-knob.patch ab/s25-int4-b64-two-chunks.patch > $R/variants.txt 2>&1; echo "variants rc=$? $(( $(date +%s) - T0 ))"
  grep -A2 "gemv_mma.*StorageFormatE4.*MmaConfigILi8" build/gpu-variants/v3/build.txt | grep -E "Used|spill" > $R/ptxas-v3.txt
  [ $(( $(date +%s) - T0 )) -lt 400 ] && variants ranked "0 1" compute "$SKINNY_PLAIN" ROOFLINE_VARIANT $PWD/build/gpu-variants/select
  [ $(( $(date +%s) - T0 )) -lt 420 ] && variants knob "-1 6 7" compute "$SKINNY_SPLIT" ROOFLINE_SKINNY_SHAPE $PWD/build/gpu-variants/v2/roofline
else
  if [ ! -x build/gpu-variants/select ]; then
    scripts/gpu/build-variants.sh ab/s25-plain-ranked.patch ab/s25-skinny-knob.patch ab/s25-int4-b64-two-chunks.patch > $R/variants.txt 2>&1; echo "variants rc=$? $(( $(date +%s) - T0 ))"
  fi
  variants int4b64 "0 3" memory "wint4_g128.8192x8192.b64.mma,wint4_g128.57344x8192.b64.mma,wint4_g128.8192x1024.b64.mma,wint4_g128.1280x8192.b64.mma" ROOFLINE_VARIANT $PWD/build/gpu-variants/select
  left=$(( 570 - ($(date +%s) - T0) ))
  ROOFLINE_ATTENTION_ROUNDS=3 timeout $left scripts/gpu/run-attention.sh flash > $R/attention-flash.txt 2>&1; echo "flash rc=$? $(( $(date +%s) - T0 ))"
  cp build/gpu-results/attention/*.json build/gpu-results/attention/attention.log $R/ 2>/dev/null
  python3 scripts/gpu/flash_attention_table.py $R/flash.json $R/torch-flash.json > $R/flash-table.md 2>&1
fi
pack
echo "done $(( $(date +%s) - T0 ))"
#!/usr/bin/env bash
# int4 two chunks in flight at batches 33-64 (patch applied to the tree): checks, sanitizers, timings.
export OUT
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$1-int4-two-chunks ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s27-callC; mkdir -p $R
pack() { tar czf $OUT/s27-C.tgz -C build/gpu-results s27-callC; }
sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "gemv_mma|====" > $R/ptxas.txt
timeout 60 $B bench --suite memory --filter gemv.bf16.wint4 --check-only --format json -o /dev/null > $R/check-int4.txt 2>&1; echo "check rc=$? $(( $(date +%s) - T0 ))"; tail -2 $R/check-int4.txt
for id in gemv.bf16.wint4_g128.8192x8192.b64.mma gemv.bf16.wint4_g128.8192x1024.b64.mma gemv.bf16.wint4_g128.1280x8192.b32.mma; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool $B bench --suite memory --filter $id --check-only --format json -o /dev/null >> $R/$tool.txt 2>&1
  done
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/memcheck.txt $R/racecheck.txt; pack
timeout 80 $B bench --suite memory --filter gemv.bf16.wint4_g128. --json $R/int4.json > /dev/null 2>> $R/timing.log; echo "int4 rc=$? $(( $(date +%s) - T0 ))"
pack; echo "done $(( $(date +%s) - T0 ))"
