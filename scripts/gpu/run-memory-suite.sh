#!/usr/bin/env bash
# On the GPU machine: build roofline, run the GPU tests, run the memory suite in full (table and
# JSON) and the quick suite under compute-sanitizer memcheck, and print a short summary last.
#
#   scripts/gpu/run-memory-suite.sh [PHASE...]
#
# PHASES (default: all of them, in this order): build test full sanitize summary
# Results go to $OUT (default: build/gpu-out): bench-memory.{txt,json}, logs of every phase,
# environment.txt, phases.txt. Every phase has a time limit, and phases that would not fit in
# ROOFLINE_GPU_BUDGET_S seconds (default 570, for a 600-second command) are skipped with a
# message saying how to run them in a next call (the build stays in build/gpu-run).
# Dependencies: the header-only libraries as Debian packages in .devdeps/ (see
# shared/GPU.md), unpacked into build/deps; without .devdeps, installed system packages are used.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build/gpu-out}
BUILD=$ROOT/build/gpu-run
DEPS=$ROOT/build/deps
BIN=$BUILD/roofline
BUDGET=${ROOFLINE_GPU_BUDGET_S:-570}
START=$(date +%s)
mkdir -p "$OUT"
: > "$OUT/phases.txt"

left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { echo "[run-memory-suite $(($(date +%s) - START))s] $*" >&2; }
record() { echo "$1 $2 $3" >> "$OUT/phases.txt"; }

# run_phase NAME MIN_SECONDS FUNCTION: runs FUNCTION if at least MIN_SECONDS of the budget remain.
run_phase() {
  local name=$1 need=$2 fn=$3 t0 rc
  if [ "$(left)" -lt "$need" ]; then
    say "SKIP $name: $(left) s left of the budget, it needs about $need s; run: scripts/gpu/run-memory-suite.sh $name"
    record "$name" skipped 0
    return
  fi
  say "phase $name ($(left) s left)"
  t0=$(date +%s)
  "$fn"
  rc=$?
  record "$name" "$([ $rc -eq 0 ] && echo ok || echo "failed($rc)")" $(($(date +%s) - t0))
  [ $rc -eq 0 ] || say "phase $name FAILED (exit $rc); logs in $OUT"
}

# timeout_for RESERVE: seconds a phase may take while leaving RESERVE seconds for later phases.
timeout_for() {
  local t=$(($(left) - $1))
  [ "$t" -lt 30 ] && t=30
  echo "$t"
}

phase_build() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown) $(git status --porcelain 2>/dev/null | wc -l) uncommitted changes"
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu,persistence_mode --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
    cmake --version | head -1
    g++ --version | head -1
  } > "$OUT/environment.txt"
  cat "$OUT/environment.txt" >&2
  local prefix=()
  if compgen -G ".devdeps/*.deb" > /dev/null; then
    mkdir -p "$DEPS"
    for deb in .devdeps/*.deb; do dpkg -x "$deb" "$DEPS" || return 1; done
    prefix=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
  fi
  export PATH=/usr/local/cuda/bin:$PATH
  timeout "$(timeout_for 300)" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROOFLINE_CUDA=ON "${prefix[@]}" \
    > "$OUT/build.log" 2>&1 &&
    timeout "$(timeout_for 300)" cmake --build "$BUILD" -j "$(nproc)" --target roofline >> "$OUT/build.log" 2>&1
  local rc=$?
  tail -5 "$OUT/build.log" >&2
  [ $rc -eq 0 ] && "$BIN" --version >&2
  return $rc
}

phase_test() {
  [ -x "$BIN" ] || { say "no binary: run the build phase first"; return 1; }
  timeout "$(timeout_for 240)" ctest --test-dir "$BUILD" -L gpu --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
  local rc=$?
  tail -15 "$OUT/ctest-gpu.log" >&2
  return $rc
}

phase_full() {
  [ -x "$BIN" ] || { say "no binary: run the build phase first"; return 1; }
  timeout "$(timeout_for 120)" "$BIN" bench --suite memory --json "$OUT/bench-memory.json" \
    > "$OUT/bench-memory.txt" 2> "$OUT/bench-memory.stderr.log"
  local rc=$?
  tail -3 "$OUT/bench-memory.stderr.log" >&2
  return $rc
}

phase_sanitize() {
  [ -x "$BIN" ] || { say "no binary: run the build phase first"; return 1; }
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [ -x "$sanitizer" ] || { say "compute-sanitizer not found"; return 1; }
  # --check-only: every quick case checked and each of its rotating input sets launched once, nothing
  # timed (memcheck slows kernels down a lot, and it checks accesses, not speed).
  timeout "$(timeout_for 20)" "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
    "$BIN" bench --suite memory --quick --check-only --timeout 600 --format json -o "$OUT/sanitizer-quick.json" \
    > "$OUT/memcheck.log" 2>&1
  local rc=$?
  grep -E "ERROR SUMMARY|LEAK SUMMARY" "$OUT/memcheck.log" >&2
  tail -3 "$OUT/memcheck.log" >&2
  # racecheck on the kernels that share data through shared memory (block reductions, the GEMV
  # split-k sum, the shared-memory ceiling), if time remains.
  if [ "$(left)" -gt 60 ]; then
    timeout "$(timeout_for 20)" "$sanitizer" --tool racecheck --error-exitcode 9 \
      "$BIN" bench --suite memory --quick --check-only --timeout 600 \
      --filter gemv.bf16.8192x8192.b1.mma,gemv.bf16.8192x8192.b64.mma,stream.dot.16B,access.strided.s1,hierarchy \
      --format json -o "$OUT/racecheck-quick.json" > "$OUT/racecheck.log" 2>&1
    local race=$?
    grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$OUT/racecheck.log" >&2
    [ $race -eq 0 ] || rc=$race
  else
    say "racecheck skipped: not enough time left"
  fi
  return $rc
}

phase_summary() {
  python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("\n==== phases ====")
print((out / "phases.txt").read_text().strip())
path = out / "bench-memory.json"
if not path.exists():
    print("no full-suite results (bench-memory.json); see the phase logs")
    sys.exit(0)
r = json.loads(path.read_text())["results"]
d, run = r["device"][0], r["run"][0]
print(f"\n==== {d['name']} | driver API {d['driver_version']} | runtime {d['runtime_version']} | cuBLAS {d['cublas_version']}"
      f" | SM clock {d['sm_clock_start_mhz']}->{d['sm_clock_end_mhz']} MHz | {run['started_utc']} ====")
print(f"passed {run['passed']}  failed {run['failed']}  not_run {run['not_run']}  not_supported {run['not_supported']}"
      f"  stopped_early {run['stopped_early']}  ({run['duration_s']:.0f} s)")
def show(row, extra=""):
    tb = row.get("bandwidth_tbps")
    pct = row.get("pct_of_memcpy")
    print(f"  {row['id']:<36} {row['status']:<9} {tb if tb is None else round(tb, 3)!s:>7} TB/s"
          f"  {'' if pct is None else f'{pct:5.1f}% memcpy'} {extra}")
print("\nstream:")
for row in r.get("stream", []):
    if row["vector_bytes"] == 16 or row["op"] == "memcpy":
        show(row)
print("GEMV batch 1 (and cuBLAS):")
for row in r.get("gemv", []):
    if row["batch"] == 1:
        sp = row.get("speedup_vs_cublas")
        show(row, "" if sp is None else f"x{sp:.2f} vs cuBLAS")
print("ceilings:")
for row in r.get("hierarchy", []):
    show(row)
print("\ntargets:")
for t in r["targets"]:
    ratio = "-" if t["ratio_pct"] is None else f"{t['ratio_pct']:.1f}%"
    print(f"  {'MET ' if t['met'] else ('MISS' if t['met'] is False else 'n/a ')} {t['target']:<62} {ratio:>7} "
          f"(need {t['required_pct']:.0f}%; {t['candidate']})")
bad = [row for t in ("stream", "access", "gemv", "hierarchy") for row in r.get(t, []) if row["status"] not in ("passed", "not_supported")]
for row in bad:
    print(f"  NOT PASSED {row['id']}: {row['status']}: {row['detail']}")
PY
}

PHASES=("$@")
[ ${#PHASES[@]} -eq 0 ] && PHASES=(build test full sanitize summary)
for p in "${PHASES[@]}"; do
  case $p in
    build) run_phase build 120 phase_build ;;
    test) run_phase test 90 phase_test ;;
    full) run_phase full 150 phase_full ;;
    sanitize) run_phase sanitize 90 phase_sanitize ;;
    summary) phase_summary ;;
    *) say "unknown phase '$p' (build test full sanitize summary)"; exit 2 ;;
  esac
done
