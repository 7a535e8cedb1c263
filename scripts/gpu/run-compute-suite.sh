#!/usr/bin/env bash
# Builds and runs the compute suite (GEMM ladder, attention, compute-ceiling probes) on the GPU
# machine, writing logs and JSON lines under $OUT, and prints a compact summary last.
#
#   scripts/gpu/run-compute-suite.sh [PHASE...]      phases: build quick full sanitize (default: build quick full)
#
# build     unpack .devdeps/*.deb into /tmp/deps when present, configure (Release, CUDA required,
#           ptxas resource report on) and build compute_selftest; registers/spills/shared memory of
#           every kernel go to $OUT/resources.txt (and SASS instruction counts when cuobjdump exists)
# quick     compute_selftest --quick  (seconds; also what the CTest gpu test runs)
# full      compute_selftest          (the issue's sizes; about 3-4 minutes)
# sanitize  compute-sanitizer memcheck and racecheck on compute_selftest --sanitize
#
# Environment: OUT (default /tmp/compute-out), BUILD_DIR (default build/gpu-compute, inside the
# tree so that a warm machine keeps it between calls), JOBS (default: all cores).
# Files written (at most 8, the device tool's limit): build.log resources.txt quick.log quick.jsonl
# full.log full.jsonl sanitize.log summary.txt. Exit status: non-zero when a phase failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

OUT=${OUT:-/tmp/compute-out}
BUILD_DIR=${BUILD_DIR:-build/gpu-compute}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build quick full)
summary="$OUT/summary.txt"
: >"$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
binary="$BUILD_DIR/kernels/compute_selftest"

phase_build() {
  local deps_prefix=""
  if compgen -G ".devdeps/*.deb" >/dev/null; then
    mkdir -p /tmp/deps
    for f in .devdeps/*.deb; do dpkg -x "$f" /tmp/deps; done
    deps_prefix="-DCMAKE_PREFIX_PATH=/tmp/deps/usr"
  fi
  local start=$SECONDS
  if ! { cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DROOFLINE_CUDA=ON -DROOFLINE_PTXAS_VERBOSE=ON \
           $deps_prefix && cmake --build "$BUILD_DIR" --target compute_selftest -j "$JOBS"; } >"$OUT/build.log" 2>&1; then
    note "build: FAILED (see build.log)"; tail -40 "$OUT/build.log"; return 1
  fi
  note "build: ok in $((SECONDS - start)) s"
  # ptxas prints "Compiling entry function 'X'" / "Function properties for X" / "... stack frame,
  # ... spill stores, ... spill loads" / "Used N registers, ... smem": one row per kernel.
  {
    echo "# ptxas resource usage (sm_90a, Release)"
    printf '%-72s %5s %8s %8s %s\n' kernel regs spill_st spill_ld "smem/barriers"
    awk '
      /Function properties for/ { name = $NF; getline; st = $5; ld = $9; next }
      /ptxas info *: Used/ {
        regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
        rest = $0; sub(/.*registers,? ?/, "", rest)
        if (name != "") printf "%s %s %s %s %s\n", name, regs, st, ld, rest
        name = ""
      }' "$OUT/build.log" | sort -u | while read -r name regs st ld rest; do
        pretty=$(echo "$name" | c++filt 2>/dev/null || echo "$name")
        pretty=${pretty//roofline::kernels::/}
        pretty=${pretty//(anonymous namespace)::/}
        printf '%-72.72s %5s %8s %8s %s\n' "$pretty" "$regs" "$st" "$ld" "$rest"
      done
    if command -v cuobjdump >/dev/null; then
      echo; echo "# SASS instruction counts in compute_selftest (cuobjdump)"
      cuobjdump --dump-sass "$binary" 2>/dev/null | grep -oE '\b(HGMMA|HMMA|LDSM|UTMALDG|LDGSTS|FFMA|MUFU\.EX2)\b' |
        sort | uniq -c
    else
      echo; echo "# cuobjdump not on this machine: no SASS counts"
    fi
  } >"$OUT/resources.txt"
  if grep -q "spill stores" "$OUT/build.log" && awk '/spill stores/ && $5 != 0 {found=1} END {exit !found}' "$OUT/build.log"; then
    note "build: some kernels spill registers (see resources.txt)"
  fi
  if grep -q "C7510\|C7508" "$OUT/build.log"; then note "build: ptxas warned about wgmma serialisation or setmaxnreg (C7510/C7508)"; fi
}

# One process per group (peak, gemm, attention): a kernel that faults or traps poisons its CUDA
# context, and this way it costs only the rest of its own group.
run_selftest() {  # $1 = quick|full, $2 = timeout seconds per group, rest = flags
  local name=$1 limit=$2; shift 2
  [ -x "$binary" ] || { note "$name: no binary at $binary (run the build phase)"; return 1; }
  local start=$SECONDS rc=0 r group
  : >"$OUT/$name.log"
  : >"$OUT/$name.jsonl"
  for group in peak gemm attention; do
    echo "######## compute_selftest $* --only $group" >>"$OUT/$name.log"
    timeout "$limit" "$binary" "$@" --only "$group" --json "$OUT/$name.$group.tmp" >>"$OUT/$name.log" 2>&1
    r=$?
    [ -f "$OUT/$name.$group.tmp" ] && cat "$OUT/$name.$group.tmp" >>"$OUT/$name.jsonl" && rm -f "$OUT/$name.$group.tmp"
    [ $r -eq 124 ] && note "$name $group: TIMED OUT after $limit s"
    [ $r -ne 0 ] && rc=$r
    echo "######## exit $r" >>"$OUT/$name.log"
  done
  note "$name: exit $rc in $((SECONDS - start)) s ($(grep -c '"verification":"passed"' "$OUT/$name.jsonl") cases passed, $(grep -cE '"verification":"(failed|error)"' "$OUT/$name.jsonl") failed or error)"
  return $rc
}

phase_sanitize() {
  [ -x "$binary" ] || { note "sanitize: no binary at $binary (run the build phase)"; return 1; }
  if ! command -v compute-sanitizer >/dev/null; then note "sanitize: compute-sanitizer not found"; return 1; fi
  local rc=0 tool r
  : >"$OUT/sanitize.log"
  for tool in memcheck racecheck; do
    echo "==== compute-sanitizer --tool $tool" >>"$OUT/sanitize.log"
    timeout 280 compute-sanitizer --tool "$tool" --error-exitcode 99 "$binary" --sanitize >>"$OUT/sanitize.log" 2>&1
    r=$?
    note "sanitize $tool: exit $r ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize.log" | tail -1))"
    [ $r -ne 0 ] && rc=1
  done
  return $rc
}

{
  echo "compute suite on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
    --format=csv 2>/dev/null || echo "nvidia-smi not available"
} | tee -a "$summary"

for phase in "${phases[@]}"; do
  case "$phase" in
    build) phase_build || status=1 ;;
    quick) run_selftest quick 200 --quick || status=1 ;;
    full) run_selftest full 300 || status=1 ;;
    sanitize) phase_sanitize || status=1 ;;
    *) echo "unknown phase '$phase' (build quick full sanitize)" >&2; exit 2 ;;
  esac
done

[ -f "$OUT/resources.txt" ] && { echo; cat "$OUT/resources.txt"; }
for name in quick full; do
  if [ -f "$OUT/$name.log" ]; then
    echo; echo "######## $name: failures and errors"
    grep -E ' (failed|error) |STOPPED EARLY' "$OUT/$name.log" | head -20 || true
  fi
done
last=""
for name in quick full; do [ -f "$OUT/$name.log" ] && last=$name; done
if [ -n "$last" ]; then
  echo; echo "######## $last: summary tables"
  awk '/==== compute selftest summary ====/ {show = 1} /^######## exit/ {show = 0} show' "$OUT/$last.log" |
    grep -v '^wall time' | tee -a "$summary"
fi
echo; echo "######## phases"; cat "$summary" | grep -E '^(build|quick|full|sanitize)' || true
exit $status
