#!/usr/bin/env bash
# On the two-GPU machine (nvidia-h200-x2), in one call: build roofline (scripts/gpu/run.sh build),
# run the collectives suite in full on every GPU of the host (one process), the GPU tests
# (ctest -L gpu: the quick suites, collectives included), and the MPI path with two ranks (one GPU
# each) where an MPI is found -- the system's, or Debian's Open MPI carried in .mpideps/ (see
# scripts/gpu/fetch-mpideps.sh).
#
#   scripts/gpu/run-collectives.sh [PHASE...]
#
# PHASES (default: all, in this order): build collectives test mpi summary
#
# NVLink multicast (NVLS) must stay off on the shared host: NCCL_NVLS_ENABLE=0 is exported for
# every command here (roofline also sets it when it is unset, and never creates multicast objects).
#
# Time: within ROOFLINE_GPU_BUDGET_S (default 570 s, for a 600-second device command). Expected:
# build 60-90 s, collectives 60-150 s (93 cases; the 8 GiB ones take longest), test 60-120 s (the
# quick memory, compute, layer and collectives suites), mpi 20-60 s.
#
# Results in $OUT (at most 8 files):
#   summary.txt build.log collectives.log ctest.log mpi.log bench-collectives.json
#   bench-collectives-mpi.json environment.txt
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$ROOT/build/gpu-out}
RESULTS=$ROOT/build/gpu-results
BIN=$ROOT/build/gpu-run/roofline
BUDGET=${ROOFLINE_GPU_BUDGET_S:-570}
START=$(date +%s)
MPI_PREFIX=$ROOT/build/mpi
mkdir -p "$OUT" "$RESULTS"
PHASES_FILE=$RESULTS/collectives-phases.txt
MPI_ENV=$RESULTS/mpi-environment.txt

left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { echo "[gpu/run-collectives.sh $(($(date +%s) - START))s] $*" >&2; }
deadline() {
  local t=$(($(left) - $1))
  [ "$t" -lt 30 ] && t=30
  echo "$t"
}
publish() {
  local f
  for f in summary.txt build.log collectives.log ctest.log mpi.log bench-collectives.json bench-collectives-mpi.json \
           environment.txt; do
    if [ -f "$RESULTS/$f" ]; then cp -f "$RESULTS/$f" "$OUT/$f"; fi
  done
}
run_phase() {
  local name=$1 need=$2 fn=$3 t0 rc
  if [ "$(left)" -lt "$need" ]; then
    say "SKIP $name: $(left) s left, it needs about $need s; next call: scripts/gpu/run-collectives.sh $name summary"
    echo "$name skipped 0" >> "$PHASES_FILE"
    return
  fi
  say "phase $name ($(left) s left)"
  t0=$(date +%s)
  "$fn"
  rc=$?
  echo "$name $([ $rc -eq 0 ] && echo ok || echo "failed($rc)") $(($(date +%s) - t0))" >> "$PHASES_FILE"
  [ $rc -eq 0 ] || say "phase $name FAILED (exit $rc)"
  publish
}

# An MPI for the build and the mpi phase: the system's mpirun, else Open MPI unpacked from
# .mpideps/*.deb (Debian 12 packages: relocated with OPAL_PREFIX). Prints what it finds.
find_mpi() {
  {
    echo "==== MPI on this machine"
    echo "which mpirun: $(command -v mpirun || echo none)"
    command -v ompi_info > /dev/null && ompi_info 2>&1 | head -8
    python3 -c 'import mpi4py; print("mpi4py", mpi4py.__version__, mpi4py.get_config())' 2>&1 | head -3
  } > "$MPI_ENV"
  if command -v mpirun > /dev/null && command -v mpicxx > /dev/null; then
    MPI_CMAKE=(-DROOFLINE_MPI=ON)
    return 0
  fi
  if compgen -G ".mpideps/*.deb" > /dev/null; then
    mkdir -p "$MPI_PREFIX"
    local deb
    for deb in .mpideps/*.deb; do dpkg -x "$deb" "$MPI_PREFIX" || return 1; done
    local bin=$MPI_PREFIX/usr/bin
    # Debian reaches these through /etc/alternatives, which dpkg -x does not create.
    for tool in mpirun mpiexec mpicxx mpicc ompi_info; do
      [ -e "$bin/$tool.openmpi" ] && ln -sf "$tool.openmpi" "$bin/$tool"
    done
    export OPAL_PREFIX=$MPI_PREFIX/usr
    export PATH=$bin:$PATH
    export LD_LIBRARY_PATH=$MPI_PREFIX/usr/lib/x86_64-linux-gnu:$MPI_PREFIX/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "using Open MPI from .mpideps (OPAL_PREFIX=$OPAL_PREFIX): $(mpirun --version 2>&1 | head -1)" \
      >> "$MPI_ENV"
    MPI_CMAKE=(-DROOFLINE_MPI=ON -DMPI_CXX_COMPILER="$bin/mpicxx" -DMPIEXEC_EXECUTABLE="$bin/mpirun")
    return 0
  fi
  echo "no MPI: neither mpirun on PATH nor .mpideps/*.deb; the mpi phase is skipped" >> "$MPI_ENV"
  MPI_CMAKE=(-DROOFLINE_MPI=OFF)
  return 1
}

phase_build() {
  find_mpi
  # run.sh's build phase (same flags, .devdeps, ptxas report; it writes environment.txt), with
  # MPI added to its configure.
  ROOFLINE_GPU_BUDGET_S=$(deadline 20) ROOFLINE_EXTRA_CMAKE_ARGS="${MPI_CMAKE[*]}" scripts/gpu/run.sh build
  local rc=$?
  cat "$MPI_ENV" >> "$RESULTS/environment.txt"
  nvidia-smi topo -m >> "$RESULTS/environment.txt" 2>&1
  cat "$MPI_ENV" >&2
  return $rc
}

need_binary() {
  [ -x "$BIN" ] && return 0
  phase_build
}

phase_collectives() {
  need_binary || return 1
  {
    echo "######## roofline bench --suite collectives ($(date -u +%H:%M:%SZ)), NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
    timeout "$(deadline 200)" "$BIN" bench --suite collectives --json "$RESULTS/bench-collectives.json"
    echo "######## exit $?"
  } >> "$RESULTS/collectives.log" 2>&1
  grep -E "^\[ *[0-9]+/[0-9]+\]" "$RESULTS/collectives.log" | tail -3 >&2
  tail -1 "$RESULTS/collectives.log" | grep -q "exit 0"
}

phase_test() {
  need_binary || return 1
  timeout "$(deadline 80)" ctest --test-dir "$ROOT/build/gpu-run" -L "gpu|mpi" --output-on-failure \
    > "$RESULTS/ctest.log" 2>&1
  local rc=$?
  tail -12 "$RESULTS/ctest.log" >&2
  return $rc
}

phase_mpi() {
  need_binary || return 1
  [ -n "${MPI_CMAKE:-}" ] || find_mpi > /dev/null 2>&1
  if ! command -v mpirun > /dev/null; then
    echo "no mpirun: the MPI path was not run (see environment.txt)" > "$RESULTS/mpi.log"
    return 1
  fi
  local as_root=()
  [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
  {
    echo "######## mpirun -np 2 roofline bench --mpi-selftest"
    timeout 60 mpirun -np 2 "${as_root[@]}" -x NCCL_NVLS_ENABLE "$BIN" bench --mpi-selftest
    echo "######## exit $?"
    echo "######## mpirun -np 2 roofline bench --suite collectives --mpi --quick (one GPU per rank)"
    timeout "$(deadline 30)" mpirun -np 2 "${as_root[@]}" -x NCCL_NVLS_ENABLE "$BIN" bench \
      --suite collectives --mpi --quick --json "$RESULTS/bench-collectives-mpi.json"
    echo "######## exit $?"
  } >> "$RESULTS/mpi.log" 2>&1
  grep -E "^######## exit|MPI selftest|^\[ *[0-9]+/[0-9]+\]" "$RESULTS/mpi.log" | tail -6 >&2
  [ "$(grep -c '^######## exit 0' "$RESULTS/mpi.log")" -eq 2 ]
}

phase_summary() {
  {
    echo "==== phases (name, status, seconds)"
    cat "$PHASES_FILE" 2>/dev/null
    python3 - "$RESULTS" <<'PY'
import json, pathlib, sys
results = pathlib.Path(sys.argv[1])
for name in ("bench-collectives.json", "bench-collectives-mpi.json"):
    path = results / name
    if not path.exists():
        print(f"==== {name}: missing")
        continue
    report = json.loads(path.read_text())
    print(f"==== {name}")
    for note in report.get("notes", []):
        if "collectives" in note or "NCCL" in note:
            print("note:", note)
    for op in ("all_reduce", "all_gather", "reduce_scatter"):
        rows = report["results"].get(op, [])
        print(f"-- {op}: {sum(r['status'] == 'passed' for r in rows)}/{len(rows)} passed")
        print(f"{'size':>8} {'GPUs':>4} {'median us':>11} {'algbw GB/s':>11} {'busbw GB/s':>11} {'model us':>10} {'err %':>7}  status")
        for r in rows:
            f = lambda v, d: "-" if v is None else f"{v:.{d}f}"
            print(f"{r['size']:>8} {r['ranks']:>4} {f(r['median_us'], 2):>11} {f(r['algbw_gbps'], 2):>11} "
                  f"{f(r['busbw_gbps'], 2):>11} {f(r['model_us'], 2):>10} {f(r['model_error_pct'], 1):>7}  {r['status']}"
                  + ("" if r["status"] == "passed" else "  " + r["detail"][:80]))
PY
    echo "==== ctest"
    tail -15 "$RESULTS/ctest.log" 2>/dev/null
    echo "==== mpi"
    grep -E "^######## |MPI selftest|roofline:" "$RESULTS/mpi.log" 2>/dev/null | tail -12
  } > "$RESULTS/summary.txt" 2>&1
  publish
  cat "$RESULTS/summary.txt"
}

PHASES=("$@")
[ ${#PHASES[@]} -eq 0 ] && PHASES=(build collectives test mpi summary)
for p in "${PHASES[@]}"; do
  case $p in
    build) run_phase build 150 phase_build ;;
    collectives) run_phase collectives 90 phase_collectives ;;
    test) run_phase test 60 phase_test ;;
    mpi) run_phase mpi 40 phase_mpi ;;
    summary) phase_summary ;;
    *) say "unknown phase '$p' (build collectives test mpi summary)"; exit 2 ;;
  esac
done
