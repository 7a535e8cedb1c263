#!/usr/bin/env bash
# The next session's device calls for everything prepared but not yet run on a GPU (sessions 22-23),
# over branch wip/s23-combined (3e63a70; /work/notes/s23-combined.patch against main 147cbd3):
# main + wip/gemv-narrow + wip/gemm-stream-k + wip/flash-next-q-after-k1 + wip/flash-d256-80-keys +
# wip/flash-fp8-v-in-kernel, built and unit-tested here (515 tests), ptxas clean. Where the branches
# are gone, apply /work/notes/s23-wip-*.patch to main in that order (wgmma.cuh: keep the narrow
# GEMV's forms; flash_wgmma.cu: the next-Q placement of q-after-k1 with fp8's load_v).
#
# Variant patches (build-variants.sh; each checked to apply to the combined tree):
#   s23-flash-q-after-k0.patch     the next Q right after K_0 (main's placement) instead of after K_1, V_0
#   s23-flash-d256-80.patch (-R)   d 256 back on 64-key tiles
#   s23-flash-fp8-prepass.patch    FP8's V^T by the HBM pre-pass again (no in-kernel transpose)
#   s23-narrow-cluster1.patch      the narrow GEMV without multicast (every block loads all of x)
#
#   git checkout wip/s23-combined && mkdir -p ab && cp /work/notes/s23-next-call.sh /work/notes/s23-*.patch ab/
#   run(command="bash ab/s23-next-call.sh N $(git rev-parse HEAD) 2>&1 | tail -60", carry=[".devdeps", "build/cudnn-frontend"], timeout_s=600)
#   (build/cudnn-frontend/include: `git --git-dir=/work/.mirror/NVIDIA+cudnn-frontend/repo archive HEAD include |
#    tar x -C build/cudnn-frontend` after fetch github:NVIDIA/cudnn-frontend; 3.5 MB; call 3 only)
# Call 1: build, ptxas, every quick case and every new kernel's cases checked, memcheck and racecheck
#   on one case of each new kernel, one round of the narrow GEMV beside wgmma and cuBLAS (b32, b64,
#   every 16-bit shape); the skinny GEMMs' first round if the time allows.
# Call 2: the flash A/B (v1: next Q after K_0; v2: FP8 by the pre-pass), five interleaved rounds, and
#   the GEMV's second round (merged with call 1's when its gemv-r1.json was copied to ab/).
# Call 3: FP8 flash beside cuDNN's FP8 SDPA (run-attention.sh fp8), the skinny GEMMs' rounds (stream-K
#   beside split-K, wgmma, cuBLAS) and the narrow GEMV without multicast (v1), five interleaved rounds.
# Not in these three (about 1,800 s of device time with each call's start): d 256 on 64-key tiles
#   against 80 (-R s23-flash-d256-80.patch; it rebuilds everything, kernel_tiles.hpp changes).
# Each step has a timeout and the results are packed into $OUT/s23.tgz after it, so a call cut short
# still returns what it did. Afterwards, here: keep what wins (each branch merged into main alone),
# docs/results/<date>-h200-*/ with these files, issue-21-status.md, docs/bench.md and compute-kernels.md
# with the numbers; if a flash change is kept, run-attention.sh flash (3 rounds) and the calibration.
export OUT
CALL=$1
T0=$(date +%s)
ROOFLINE_TOOL_COMMIT=$2 ROOFLINE_GPU_BUDGET_S=240 scripts/gpu/run.sh build > /tmp/build-run.txt 2>&1
echo "build rc=$? $(( $(date +%s) - T0 ))"
B=build/gpu-run/roofline
R=build/gpu-results/s23-call$CALL; mkdir -p $R
pack() { tar czf $OUT/s23.tgz -C build/gpu-results s23-call$CALL; }
F=.b32.narrow,.b64.narrow,.b32.wgmma,.b64.wgmma,.b32.cublas,.b64.cublas,1000x1104
G=x10240x8192.,x57344x8192.,128x8192x8192.,256x8192x8192.
FLASH=attn.bf16.full.d64.b8h32kv32.n2048.flashwgmma,attn.bf16.full.d64.b4h32kv32.n4096.flashwgmma,attn.bf16.causal.d64.b4h32kv32.n4096.flashwgmma,attn.bf16.full.d128.b4h32kv32.n1024.flashwgmma,attn.bf16.causal.d128.b4h32kv32.n1024.flashwgmma,attn.bf16.full.d128.b4h32kv32.n4096.flashwgmma
FP8=attn.fp8_e4m3.full.d128.b4h32kv32.n1024.flashwgmma,attn.fp8_e4m3.causal.d128.b4h32kv32.n1024.flashwgmma,attn.fp8_e4m3.full.d128.b4h32kv32.n4096.flashwgmma,attn.fp8_e4m3.full.d256.b4h32kv32.n4096.flashwgmma,attn.fp8_e4m3.causal.d128.b4h32kv32.n16384.flashwgmma
N=gemv.bf16.4096x4096.b64.narrow,gemv.bf16.4096x2048.b64.narrow,gemv.bf16.4096x7168.b32.narrow,gemv.bf16.3072x4096.b64.narrow,gemv.bf16.10240x8192.b64.narrow
variants() {  # NAME "VALUES" SUITE IDS
  ROOFLINE_BIN=$PWD/build/gpu-variants/select timeout 150 scripts/gpu/run-variants.sh ${ROUNDS:-5} ROOFLINE_VARIANT "$2" $3 $4 $1
  python3 scripts/gpu/summarize_variants.py build/gpu-results/variants $1 $2 > $R/$1-variants.md 2>&1
  cat $R/$1-variants.md; cp -r build/gpu-results/variants $R/; pack
}
if [ "$CALL" = 1 ]; then
  # run.sh's per-kernel table (registers, spill stores and loads, the rest) at the end of its build log
  sed -n '/==== ptxas resource usage per kernel/,$p' build/gpu-results/build.log | grep -E "gemv_narrow|StreamK|flash_wgmma_kernel|====" > $R/ptxas.txt
  timeout 150 $B bench --suite memory,compute --quick --check-only --format json -o /dev/null > $R/check-quick.txt 2>&1; echo "check quick rc=$? $(( $(date +%s) - T0 ))"
  timeout 60 $B bench --suite memory --filter .narrow --check-only --format json -o /dev/null > $R/check-narrow.txt 2>&1; echo "check narrow rc=$?"
  timeout 120 $B bench --suite compute --filter .streamk,d256,attn.fp8 --check-only --format json -o /dev/null > $R/check-compute.txt 2>&1; echo "check streamk/d256/fp8 rc=$? $(( $(date +%s) - T0 ))"
  pack
  for c in "memory gemv.bf16.1000x1104.b24.narrow" "compute gemm.bf16.300x6600x1000.streamk" "compute attn.bf16.causal.d256.b2h4kv2.n1000.flashwgmma" "compute attn.fp8_e4m3.causal.d128.b2h4kv2.n1000.flashwgmma" "compute attn.fp8_e4m3.full.d256.b2h4kv2.n1000.flashwgmma"; do
    set -- $c
    for tool in memcheck racecheck; do
      timeout 60 compute-sanitizer --tool $tool $B bench --suite $1 --filter $2 --check-only --format json -o /dev/null >> $R/$tool.txt 2>&1
    done
  done
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/memcheck.txt $R/racecheck.txt
  echo "sanitize done $(( $(date +%s) - T0 ))"; pack
  timeout 180 $B bench --suite memory --filter "$F" --json $R/gemv-r1.json > /dev/null 2>> $R/timing.log; echo "gemv r1 rc=$? $(( $(date +%s) - T0 ))"
  python3 scripts/gpu/library_ratio_tables.py gemv $R/gemv-r1.json docs/results/2026-12-04-h200-gemm-pairs-gemv-groups/call5-gemv.json > $R/gemv-table-r1.md
  grep "^- batch" $R/gemv-table-r1.md; pack
  if [ $(( $(date +%s) - T0 )) -lt 480 ]; then
    timeout 60 $B bench --suite compute --filter "$G" --json $R/skinny-r1.json > /dev/null 2>> $R/timing.log; echo "skinny r1 rc=$?"
    python3 scripts/gpu/library_ratio_tables.py gemm $R/skinny-r1.json > $R/skinny-table-r1.md
    grep -E "streamk|splitk" $R/skinny-table-r1.md | head -12
  fi
elif [ "$CALL" = 2 ]; then
  scripts/gpu/build-variants.sh ab/s23-flash-q-after-k0.patch ab/s23-flash-fp8-prepass.patch > $R/variants.txt 2>&1; echo "variants rc=$? $(( $(date +%s) - T0 ))"
  variants flash "0 1" compute $FLASH
  variants fp8 "0 2" compute $FP8
elif [ "$CALL" = 4 ]; then
  scripts/gpu/build-variants.sh ab/s23-flash-q-after-k0.patch -R ab/s23-flash-d256-80.patch > $R/variants.txt 2>&1; echo "variants rc=$? $(( $(date +%s) - T0 ))"
  Q=attn.bf16.full.d128.b4h32kv32.n1024.flashwgmma,attn.bf16.full.d128.b4h32kv32.n4096.flashwgmma,attn.bf16.causal.d128.b4h32kv32.n1024.flashwgmma,attn.bf16.causal.d128.b4h32kv32.n4096.flashwgmma,attn.bf16.full.d128.b16h32kv32.n1024.flashwgmma,attn.bf16.full.d64.b4h32kv32.n4096.flashwgmma
  variants flashq "0 1" compute $Q
  D=attn.bf16.full.d256.b16h32kv32.n1024.flashwgmma,attn.bf16.full.d256.b4h32kv32.n4096.flashwgmma,attn.bf16.causal.d256.b4h32kv32.n4096.flashwgmma,attn.bf16.causal.d256.b1h32kv32.n16384.flashwgmma
  variants d256 "0 2" compute $D
else
  timeout 300 scripts/gpu/run-attention.sh fp8 > $R/attention-fp8.txt 2>&1; echo "fp8 vs cuDNN rc=$? $(( $(date +%s) - T0 ))"
  cp build/gpu-results/attention/fp8.json build/gpu-results/attention/cudnn-fp8-attention.json $R/ 2>/dev/null; pack
  for r in 1 2; do
    timeout 60 $B bench --suite compute --filter "$G" --json $R/skinny-r$r.json > /dev/null 2>> $R/timing.log; echo "skinny r$r rc=$?"
  done
  python3 scripts/gpu/merge_rounds.py $R/skinny.json $R/skinny-r*.json && python3 scripts/gpu/library_ratio_tables.py gemm $R/skinny.json > $R/skinny-table.md
  grep -E "streamk|splitk" $R/skinny-table.md | head -12; pack
  scripts/gpu/build-variants.sh ab/s23-narrow-cluster1.patch > $R/variants.txt 2>&1; echo "variants rc=$? $(( $(date +%s) - T0 ))"
  variants cluster "0 1" memory $N
fi
pack
echo "done $(( $(date +%s) - T0 ))"
