# Session 28 device calls, concatenated: s28.sh (calls A and B, the experiment build), s28d.sh (call D), s28e.sh (call E).
# Call C: ROOFLINE_DECODE_VARIANT=1 build/gpu-run/roofline bench --suite layer --json layer.json, on call B's build.
#!/usr/bin/env bash
# Session 28: decode attention, whole-tile loads + one barrier a tile, merge in the split kernel.
export OUT
CALL=$1
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$2 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s28-call$CALL; mkdir -p $R
pack() { tar czf $OUT/s28-$CALL.tgz -C build/gpu-results s28-call$CALL; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/environment.txt
sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "decode_|====" > $R/ptxas.txt
variants() {  # NAME "VALUES" FILTER ROUNDS LIMIT
  rm -rf build/gpu-results/variants
  timeout $5 scripts/gpu/run-variants.sh $4 ROOFLINE_DECODE_VARIANT "$2" memory "$3" $1
  python3 scripts/gpu/summarize_variants.py build/gpu-results/variants $1 $2 > $R/$1-variants.md 2>&1
  cp -r build/gpu-results/variants $R/variants-$1; pack
  echo "variants $1 $(( $(date +%s) - T0 ))"
}
if [ "$CALL" = A ]; then
  for v in 0 2 4; do
    ROOFLINE_DECODE_VARIANT=$v timeout 90 $B bench --suite memory --filter attention.decode. --check-only --format json -o /dev/null > $R/check-v$v.txt 2>&1; echo "check v$v rc=$? $(( $(date +%s) - T0 ))"; tail -2 $R/check-v$v.txt
  done
  for v in 2 4; do for tool in memcheck racecheck; do
    ROOFLINE_DECODE_VARIANT=$v timeout 60 compute-sanitizer --tool $tool $B bench --suite memory --check-only --format json -o /dev/null \
      --filter attention.decode.bf16.b16.ctx1024,attention.decode.bf16.kvfp8_e4m3.b4.ctx2048,attention.decode.bf16.b1.ctx8192 > $R/sanitize-$tool-v$v.txt 2>&1
    echo "$tool v$v rc=$? $(( $(date +%s) - T0 ))"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/sanitize-$tool-v$v.txt
  done; done
  pack
  variants bf16 "0 1 2 3 4" attention.decode.bf16.b 2 $(( 560 - ($(date +%s) - T0) ))
  cat $R/bf16-variants.md
else
  variants all "$3" attention.decode. 3 $(( 380 - ($(date +%s) - T0) ))
  cat $R/all-variants.md
  left=$(( 560 - ($(date +%s) - T0) ))
  timeout $left python3 scripts/gpu/torch_decode_attention.py $R/torch-decode.json > $R/torch.txt 2>&1; echo "torch rc=$? $(( $(date +%s) - T0 ))"
  pack
  left=$(( 580 - ($(date +%s) - T0) ))
  [ $left -gt 60 ] && { timeout $left ctest --test-dir build/gpu-run -L gpu > $R/ctest-gpu.txt 2>&1; echo "ctest rc=$? $(( $(date +%s) - T0 ))"; tail -3 $R/ctest-gpu.txt; }
fi
pack
echo "done $(( $(date +%s) - T0 ))"
#!/usr/bin/env bash
# Session 28, call D: the committed form of the decode attention change (whole-tile copies, one
# barrier a tile): checks, sanitizers, ctest -L gpu, the decode suite twice beside SDPA.
export OUT
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s28-callD; mkdir -p $R
pack() { tar czf $OUT/s28-D.tgz -C build/gpu-results s28-callD; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/environment.txt
grep -B1 -A3 "decode_attention_kernel" build/gpu-results/build.log | grep -E "decode_attention_kernel|Used|spill" > $R/ptxas.txt
timeout 120 ctest --test-dir build/gpu-run -L gpu > $R/ctest-gpu.txt 2>&1; echo "ctest rc=$? $(( $(date +%s) - T0 ))"; tail -4 $R/ctest-gpu.txt
timeout 60 $B bench --suite memory --filter attention.decode.,layer.decode --check-only --format json -o /dev/null > $R/check.txt 2>&1; echo "check rc=$? $(( $(date +%s) - T0 ))"; tail -2 $R/check.txt
IDS=attention.decode.bf16.b4.ctx1000.flashdecode,attention.decode.bf16.kvfp8_e4m3.b4.ctx1000.flashdecode,attention.decode.bf16.b16.ctx1024.flashdecode,attention.decode.bf16.kvfp8_e4m3.b64.ctx2048.flashdecode,attention.decode.bf16.b1.ctx8192.flashdecode
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool $B bench --suite memory --check-only --format json -o /dev/null --filter $IDS > $R/sanitize-$tool.txt 2>&1
  echo "$tool rc=$? $(( $(date +%s) - T0 ))"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" $R/sanitize-$tool.txt | tail -7
done
pack
for r in 1 2; do
  timeout 120 $B bench --suite memory --filter attention.decode. --json $R/decode-r$r.json > /dev/null 2>> $R/timing.log; echo "decode r$r rc=$? $(( $(date +%s) - T0 ))"; pack
done
python3 scripts/gpu/merge_rounds.py $R/decode.json $R/decode-r*.json
timeout 120 python3 scripts/gpu/torch_decode_attention.py $R/torch-decode.json > $R/torch.txt 2>&1; echo "torch rc=$? $(( $(date +%s) - T0 ))"
python3 scripts/gpu/decode_shape_tables.py attention $R/decode.json $R/torch-decode.json > $R/decode-table.md 2>&1; cat $R/decode-table.md
pack
echo "done $(( $(date +%s) - T0 ))"
#!/usr/bin/env bash
export OUT
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$1 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s28-callE; mkdir -p $R
pack() { tar czf $OUT/s28-E.tgz -C build/gpu-results s28-callE; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/environment.txt
timeout 100 $B bench --suite memory --filter attention.decode. --json $R/decode.json > /dev/null 2>> $R/timing.log; echo "decode rc=$? $(( $(date +%s) - T0 ))"; pack
timeout 100 python3 scripts/gpu/torch_decode_attention.py $R/torch-decode.json > $R/torch.txt 2>&1; echo "torch rc=$? $(( $(date +%s) - T0 ))"
python3 scripts/gpu/decode_shape_tables.py attention $R/decode.json $R/torch-decode.json > $R/decode-table.md 2>&1; cat $R/decode-table.md
pack
