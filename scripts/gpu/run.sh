#!/usr/bin/env bash
# On the GPU machine, in one call: build roofline, run the GPU tests, the full memory, compute and
# layer suites (JSON and tables), compute-sanitizer on the quick suites, and print a compact
# summary last.
#
#   scripts/gpu/run.sh [PHASE...]
#
# PHASES (default: all, in this order): build test memory compute layer sanitize summary
#   build     unpack .devdeps/*.deb (shared/GPU.md) into build/deps, configure build/gpu-run (Release,
#             CUDA required, ptxas resource report on) and build `roofline`; the kernels' registers,
#             spills and shared memory are appended to build.log
#   test      ctest -L gpu: `roofline bench --quick` of each suite, every check must pass
#   memory    roofline bench --suite memory   (full sizes)
#   compute   roofline bench --suite compute
#   layer     roofline bench --suite layer
#   torch     the library side of the FP8 comparisons (scripts/gpu/torch_fp8.py: torch._scaled_mm
#             GEMMs, an FP8 LLaMA-70B layer in PyTorch ops), in torch-fp8.json
#   sanitize  compute-sanitizer memcheck (leaks too) on the three quick suites with --check-only,
#             racecheck on the cases whose kernels share data through shared memory
#   summary   the compact summary (scripts/gpu/summarize.py), also written to summary.txt
#
# Time: every command runs under a deadline inside ROOFLINE_GPU_BUDGET_S (default 570 s, for a
# 600-second device command), keeping 25 s for the summary; a phase starts only if its minimum
# still fits, else it is skipped with the command that runs it next (the build and the results stay
# in build/ while the machine is warm; a phase that finds no binary builds first). A suite may use
# the whole rest of the budget: better a later phase skipped than a suite killed before it writes
# its JSON. Expected on one H200 with 16 cores: build 60-90 s, test 30-60 s, memory 220-250 s
# (55-75 s before the GEMV decode shapes, which took 160 s on their own on 2026-12-02), compute
# 90-140 s, layer 30-60 s, sanitize 120-240 s: a first call gets through memory and most of
# compute; `scripts/gpu/run.sh compute layer sanitize summary` finishes it.
#
# The commit the runs record (`tool_commit`) is the build's `git describe`; where the machine's
# copy of .git is not the tree's own (the lent device keeps the git state of its first call), pass
# the one taken where the tree came from: ROOFLINE_TOOL_COMMIT=<commit> scripts/gpu/run.sh build.
#
# Results: build/gpu-results/ (kept between calls on a warm machine), copied to $OUT at the end of
# every phase: at most these 9 files, each far below 16 MiB:
#   summary.txt build.log ctest.log suites.log sanitize.log bench-memory.json bench-compute.json
#   bench-layer.json torch-fp8.json
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build/gpu-out}
RESULTS=$ROOT/build/gpu-results
BUILD=$ROOT/build/gpu-run
DEPS=$ROOT/build/deps
BIN=$BUILD/roofline
BUDGET=${ROOFLINE_GPU_BUDGET_S:-570}
START=$(date +%s)
mkdir -p "$OUT" "$RESULTS"
PHASES_FILE=$RESULTS/phases.txt
ENVIRONMENT_FILE=$RESULTS/environment.txt

left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { echo "[gpu/run.sh $(($(date +%s) - START))s] $*" >&2; }
record() { echo "$1 $2 $3" >> "$PHASES_FILE"; }

# Copies the result files (only these, so that at most 8 come back) to $OUT.
publish() {
  local f
  for f in summary.txt build.log ctest.log suites.log sanitize.log bench-memory.json bench-compute.json \
           bench-layer.json torch-fp8.json; do
    if [ -f "$RESULTS/$f" ]; then cp -f "$RESULTS/$f" "$OUT/$f"; fi
  done
}

# run_phase NAME MIN_SECONDS FUNCTION: runs FUNCTION if at least MIN_SECONDS of the budget remain.
run_phase() {
  local name=$1 need=$2 fn=$3 t0 rc
  if [ "$(left)" -lt "$need" ]; then
    say "SKIP $name: $(left) s left of the budget, it needs about $need s; next call: scripts/gpu/run.sh $name summary"
    record "$name" skipped 0
    return
  fi
  say "phase $name ($(left) s left)"
  t0=$(date +%s)
  "$fn"
  rc=$?
  record "$name" "$([ $rc -eq 0 ] && echo ok || echo "failed($rc)")" $(($(date +%s) - t0))
  [ $rc -eq 0 ] || say "phase $name FAILED (exit $rc); see the logs in $OUT"
  publish
}

# deadline RESERVE: seconds a command may take while leaving RESERVE seconds for later phases.
deadline() {
  local t=$(($(left) - $1))
  [ "$t" -lt 30 ] && t=30
  echo "$t"
}

phase_build() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown), $(git status --porcelain 2>/dev/null | wc -l) uncommitted changes"
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu,persistence_mode --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
    cmake --version | head -1
    g++ --version | head -1
    echo "cores: $(nproc)"
  } > "$ENVIRONMENT_FILE"
  cat "$ENVIRONMENT_FILE" >&2
  local prefix=()
  if compgen -G ".devdeps/*.deb" > /dev/null; then
    mkdir -p "$DEPS"
    for deb in .devdeps/*.deb; do dpkg -x "$deb" "$DEPS" || return 1; done
    prefix=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
  fi
  export PATH=/usr/local/cuda/bin:$PATH
  # ROOFLINE_EXTRA_CMAKE_ARGS: more configure flags (scripts/gpu/run-collectives.sh passes MPI's).
  local extra=()
  read -r -a extra <<< "${ROOFLINE_EXTRA_CMAKE_ARGS:-}"
  timeout "$(deadline 25)" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROOFLINE_CUDA=ON \
    -DROOFLINE_PTXAS_VERBOSE=ON "${prefix[@]}" "${extra[@]}" > "$RESULTS/build.log" 2>&1 &&
    timeout "$(deadline 25)" cmake --build "$BUILD" -j "$(nproc)" --target roofline >> "$RESULTS/build.log" 2>&1
  local rc=$?
  # ptxas prints "Compiling entry function 'X'", "N bytes stack frame, N bytes spill stores, N bytes
  # spill loads" and "Used N registers, ..." per kernel: one row each, appended to build.log.
  {
    echo
    echo "==== ptxas resource usage per kernel (sm_90a, Release): registers, spill stores/loads, the rest"
    awk '
      /Compiling entry function/ { name = $0; sub(/.*function .?/, "", name); sub(/.? for .*/, "", name); next }
      /bytes stack frame/ { st = $5; ld = $9; next }
      /ptxas info *: Used/ {
        regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
        rest = $0; sub(/.*registers,? ?/, "", rest)
        if (name != "") printf "%s %s %s %s %s\n", name, regs, st, ld, rest
        name = ""
      }' "$RESULTS/build.log" | sort -u | while read -r name regs st ld rest; do
        pretty=$(echo "$name" | c++filt 2>/dev/null || echo "$name")
        pretty=${pretty//roofline::kernels::/}
        pretty=${pretty//(anonymous namespace)::/}
        printf '%-90.90s %4s regs %5s %5s  %s\n' "$pretty" "$regs" "$st" "$ld" "$rest"
      done
  } >> "$RESULTS/build.log"
  tail -3 "$RESULTS/build.log" >&2
  [ $rc -eq 0 ] && "$BIN" --version >&2
  return $rc
}

need_binary() {
  [ -x "$BIN" ] && return 0
  say "no binary at $BIN (a fresh machine): building first"
  phase_build
}

phase_test() {
  need_binary || return 1
  timeout "$(deadline 25)" ctest --test-dir "$BUILD" -L gpu --output-on-failure > "$RESULTS/ctest.log" 2>&1
  local rc=$?
  tail -8 "$RESULTS/ctest.log" >&2
  return $rc
}

# run_suite NAME: the full suite, its JSON in bench-NAME.json, tables and progress in suites.log.
run_suite() {
  local suite=$1 rc
  need_binary || return 1
  echo "######## roofline bench --suite $suite ($(date -u +%H:%M:%SZ))" >> "$RESULTS/suites.log"
  timeout "$(deadline 25)" "$BIN" bench --suite "$suite" --json "$RESULTS/bench-$suite.json" \
    >> "$RESULTS/suites.log" 2>&1
  rc=$?
  echo "######## exit $rc" >> "$RESULTS/suites.log"
  grep -E "^\[ *[0-9]+/[0-9]+\]" "$RESULTS/suites.log" | tail -2 >&2
  # Exit 1 is a failed verification (reported in the JSON and the summary); the phase still ran.
  return $rc
}
phase_memory() { run_suite memory; }
phase_compute() { run_suite compute; }
phase_layer() { run_suite layer; }

phase_torch() {
  timeout "$(deadline 25)" python3 scripts/gpu/torch_fp8.py "$RESULTS/torch-fp8.json" >> "$RESULTS/suites.log" 2>&1
  local rc=$?
  grep -E "^(gemm|layer) " "$RESULTS/suites.log" | tail -3 >&2
  return $rc
}

phase_sanitize() {
  need_binary || return 1
  local sanitizer rc=0 r
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [ -x "$sanitizer" ] || { say "compute-sanitizer not found"; return 1; }
  : > "$RESULTS/sanitize.log"
  # --check-only: every quick case checked and each of its rotating input sets launched once,
  # nothing timed (the sanitizers slow kernels down and check accesses, not speed).
  local suite
  for suite in memory compute layer; do
    [ "$(left)" -lt 40 ] && { say "sanitize: memcheck of $suite skipped (time)"; rc=1; continue; }
    echo "######## memcheck --suite $suite --quick --check-only" >> "$RESULTS/sanitize.log"
    timeout "$(deadline 25)" "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
      "$BIN" bench --suite "$suite" --quick --check-only --timeout 600 --format json -o /dev/null \
      >> "$RESULTS/sanitize.log" 2>&1
    r=$?
    echo "######## exit $r" >> "$RESULTS/sanitize.log"
    [ $r -eq 0 ] || rc=$r
  done
  # racecheck: the kernels that share data through shared memory (block reductions, the GEMV
  # split-k sums, tiled GEMMs, flash and decode attention, RMSNorm), at small sizes.
  local -A filters=(
    [memory]="gemv.bf16.8192x8192.b1.mma,gemv.bf16.8192x8192.b1.pipe,gemv.bf16.8192x8192.b1.pdl,gemv.bf16.8192x8192.b64.mma,gemv.bf16.8192x8192.b64.wgmma,stream.dot.16B,access.strided.s1,hierarchy.smem"
    [compute]="gemm.bf16.512x512x512,attn.bf16.causal.d128.b2h4kv2.n1000,attn.bf16.full.d64.b2h4kv4.n256,attn.bf16.causal.d192v128.b2h4kv4.n1000.flashwgmma"
    [layer]="layer.decode.b1.ctx4096.roofline"
  )
  for suite in memory compute layer; do
    [ "$(left)" -lt 40 ] && { say "sanitize: racecheck of $suite skipped (time)"; rc=1; continue; }
    echo "######## racecheck --suite $suite --quick --check-only --filter ${filters[$suite]}" >> "$RESULTS/sanitize.log"
    timeout "$(deadline 25)" "$sanitizer" --tool racecheck --error-exitcode 9 \
      "$BIN" bench --suite "$suite" --quick --check-only --timeout 600 --filter "${filters[$suite]}" \
      --format json -o /dev/null > "$RESULTS/racecheck-$suite.log" 2>&1
    r=$?
    cat "$RESULTS/racecheck-$suite.log" >> "$RESULTS/sanitize.log"
    echo "######## exit $r" >> "$RESULTS/sanitize.log"
    # cuBLAS's own Hopper kernels (nvjet_*, run by the cuBLAS references and standard attention)
    # synchronize through mbarriers and the async proxy, which racecheck reports as a hazard; they
    # are the reference, not the project's code. Leaving them out with --kernel-name-exclude made
    # the sanitizer itself fail ("failed to handle a hardware exception", 2026-11-30), so they run
    # and a hazard reported only inside nvjet kernels does not fail the phase.
    if [ $r -eq 9 ] && grep -q "Race reported" "$RESULTS/racecheck-$suite.log" &&
      ! grep "Race reported" "$RESULTS/racecheck-$suite.log" | grep -qv "nvjet_"; then
      echo "######## the hazards above are all inside cuBLAS's nvjet kernels: not the project's code" >> "$RESULTS/sanitize.log"
      r=0
    fi
    [ $r -eq 0 ] || rc=$r
  done
  grep -E "^######## (memcheck|racecheck|exit)|ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$RESULTS/sanitize.log" >&2
  return $rc
}

phase_summary() {
  {
    echo "==== environment"
    cat "$ENVIRONMENT_FILE" 2>/dev/null || echo "(no build phase in this machine's life)"
    echo
    echo "==== phases (name, status, seconds)"
    cat "$PHASES_FILE" 2>/dev/null
    python3 scripts/gpu/summarize.py "$RESULTS"
  } > "$RESULTS/summary.txt" 2>&1
  publish
  cat "$RESULTS/summary.txt"
}

PHASES=("$@")
[ ${#PHASES[@]} -eq 0 ] && PHASES=(build test memory compute layer sanitize summary)
for p in "${PHASES[@]}"; do
  case $p in
    build) run_phase build 150 phase_build ;;
    test) run_phase test 70 phase_test ;;
    memory) run_phase memory 90 phase_memory ;;
    compute) run_phase compute 150 phase_compute ;;
    layer) run_phase layer 70 phase_layer ;;
    torch) run_phase torch 60 phase_torch ;;
    sanitize) run_phase sanitize 120 phase_sanitize ;;
    summary) phase_summary ;;
    *) say "unknown phase '$p' (build test memory compute layer torch sanitize summary)"; exit 2 ;;
  esac
done
