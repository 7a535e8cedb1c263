#!/usr/bin/env bash
# How ptxas placed one kernel's waits and tensor-core work in several variants of a source file,
# without building the tool: each variant is the file compiled alone with extra nvcc arguments (a
# macro the source reads, say), in parallel, then `cuobjdump -sass` and scripts/gpu/sass_order.py
# on the kernel, and the ptxas resource lines of every function. A device call that only compiles
# costs about a minute, where a build and a timed run cost four or more: use it to find the variant
# whose binary does what the source says, then time that one (scripts/gpu/run-variants.sh).
#
#   scripts/gpu/sass-variants.sh SOURCE NAME_FRAGMENT VARIANT...
#
#   SOURCE         a .cu file of kernels/ (e.g. kernels/attention/flash_wgmma.cu)
#   NAME_FRAGMENT  a piece of the kernel's mangled name (e.g. flash_wgmma_kernelI13__nv_bfloat16Li128ELi128)
#   VARIANT        extra nvcc arguments, one quoted string a variant ("" for none, "-DFLASH_SOFTMAX=1")
#
# Compile flags: those of build/gpu-run (scripts/gpu/run.sh build, Release) where it is configured,
# else the Release flags for sm_90a. Writes build/gpu-results/sass-variants/vN.{order,loops,ptxas}.txt and
# variants.txt (which arguments each vN had), and packs the folder into $OUT/sass-variants.tgz.
# Needs nvcc and cuobjdump (CUDA_HOME, default /usr/local/cuda; CUOBJDUMP overrides the latter).
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 3 ]; then
  echo "usage: $0 SOURCE NAME_FRAGMENT VARIANT..." >&2
  exit 2
fi
SOURCE=$1 FRAGMENT=$2
shift 2
[ -f "$SOURCE" ] || { echo "$0: no source file $SOURCE" >&2; exit 2; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
CUOBJDUMP=${CUOBJDUMP:-$CUDA_HOME/bin/cuobjdump}
[ -x "$NVCC" ] || { echo "$0: no nvcc at $NVCC" >&2; exit 2; }
[ -x "$CUOBJDUMP" ] || command -v "$CUOBJDUMP" > /dev/null || { echo "$0: no cuobjdump at $CUOBJDUMP" >&2; exit 2; }
RESULTS=$PWD/build/gpu-results/sass-variants
OUT=${OUT:-$PWD/build/gpu-out}
rm -rf "$RESULTS"
mkdir -p "$RESULTS" "$OUT"

# The kernels library's flags of the configured Release build (Makefile generator), else defaults.
FLAGS_FILE=build/gpu-run/kernels/CMakeFiles/roofline_kernels.dir/flags.make
if [ -f "$FLAGS_FILE" ]; then
  flag() { sed -n "s/^$1 = //p" "$FLAGS_FILE"; }
  read -r -a FLAGS <<< "$(flag CUDA_DEFINES) $(flag CUDA_FLAGS)"
  INCLUDES=(--options-file "$PWD/build/gpu-run/kernels/CMakeFiles/roofline_kernels.dir/includes_CUDA.rsp")
else
  FLAGS=(-DROOFLINE_HAVE_SM90A=1 -O3 -DNDEBUG "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]" -std=c++20)
  INCLUDES=(-I"$PWD/include" -I"$PWD/kernels")
fi

n=0
pids=()
: > "$RESULTS/variants.txt"
for variant in "$@"; do
  read -r -a extra <<< "$variant"
  echo "v$n: ${variant:-(none)}" >> "$RESULTS/variants.txt"
  (
    "$NVCC" "${FLAGS[@]}" "${INCLUDES[@]}" "${extra[@]}" -Xptxas=-v -c "$SOURCE" -o "$RESULTS/v$n.o" \
      > "$RESULTS/v$n.ptxas.txt" 2>&1 || { echo "v$n: nvcc failed (v$n.ptxas.txt)" >&2; exit 1; }
    "$CUOBJDUMP" -sass "$RESULTS/v$n.o" > "$RESULTS/v$n.sass" 2> "$RESULTS/v$n.cuobjdump.txt" ||
      { echo "v$n: cuobjdump failed" >&2; exit 1; }
    python3 scripts/gpu/sass_order.py "$RESULTS/v$n.sass" "$FRAGMENT" > "$RESULTS/v$n.order.txt" 2>&1 ||
      { echo "v$n: $(cat "$RESULTS/v$n.order.txt")" >&2; exit 1; }
    python3 scripts/gpu/sass_order.py "$RESULTS/v$n.sass" "$FRAGMENT" --loops > "$RESULTS/v$n.loops.txt" 2>&1
    rm -f "$RESULTS/v$n.o" "$RESULTS/v$n.sass"
  ) &
  pids+=($!)
  n=$((n + 1))
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
# One line a variant: spills and ptxas's performance notes (C75xx) of the whole file.
for ((i = 0; i < n; i++)); do
  spills=$(grep -c "[1-9][0-9]* bytes spill stores" "$RESULTS/v$i.ptxas.txt" 2> /dev/null)
  notes=$(grep -c "(C75" "$RESULTS/v$i.ptxas.txt" 2> /dev/null)
  waits=$(grep -c "DEPBAR" "$RESULTS/v$i.order.txt" 2> /dev/null)
  echo "v$i: ${spills:-0} functions with spills, ${notes:-0} C75xx notes, ${waits:-0} wgmma waits in the kernel" |
    tee -a "$RESULTS/variants.txt"
done
tar czf "$OUT/sass-variants.tgz" -C "$(dirname "$RESULTS")" sass-variants
exit $rc
