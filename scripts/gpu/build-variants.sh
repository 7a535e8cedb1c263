#!/usr/bin/env bash
# Several builds of the tool in one device call, each the tree with one patch applied, for an A/B of
# source changes that a runtime knob cannot select (a kernel's loop structure, a macro's default, a
# reverted commit): the tree is built once (scripts/gpu/run.sh build), then each patch is applied,
# only what it touches is rebuilt (about 25 s for one kernel file on the H200 machine's 16 cores,
# where a configure-time flag rebuilds everything), the binary is kept, and the patch is reverted.
# scripts/gpu/run-variants.sh then runs them interleaved through the selector this script writes:
#
#   scripts/gpu/build-variants.sh PATCH...      (variant 0 is the tree as it is; PATCH i is variant i)
#   ROOFLINE_BIN=build/gpu-variants/select scripts/gpu/run-variants.sh 5 ROOFLINE_VARIANT "0 1 2" compute IDS NAME
#
# A PATCH is a file `patch -p1` applies at the repository root (`git diff > x.patch`; for "the tree
# without commit C": `git diff C C^ -- FILES > x.patch`); "-R FILE" applies it reversed. Writes
# build/gpu-variants/vI/roofline, build/gpu-variants/vI/build.txt (the rebuild's output: with
# run.sh's configuration, ptxas's registers and spills of every rebuilt kernel) and variants.txt (which
# patch each vI is), and leaves the tree and build/gpu-run as they were (the patches reverted, the
# tree's binary rebuilt). ROOFLINE_BUILD_DIR (default build/gpu-run) is the build to patch; without a
# binary there, run.sh build runs first. Bad input (a patch missing, or one that does not apply): one
# line on stderr, exit 2, and no variant built.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${ROOFLINE_BUILD_DIR:-$ROOT/build/gpu-run}
VARIANTS=$ROOT/build/gpu-variants
if [ $# -lt 1 ]; then
  echo "usage: $0 PATCH... (each a patch file, or -R FILE for the reverse)" >&2
  exit 2
fi

# The variants as (direction, file) pairs; every patch must apply to the tree before anything is built.
directions=()
files=()
while [ $# -gt 0 ]; do
  direction=""
  if [ "$1" = "-R" ]; then
    direction="-R"
    shift
    [ $# -gt 0 ] || { echo "$0: -R needs a patch file" >&2; exit 2; }
  fi
  [ -f "$1" ] || { echo "$0: no patch file $1" >&2; exit 2; }
  patch -p1 --dry-run --silent $direction < "$1" > /dev/null 2>&1 ||
    { echo "$0: $1 does not apply${direction:+ reversed} to this tree" >&2; exit 2; }
  directions+=("$direction")
  files+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")")
  shift
done

if [ ! -x "$BUILD/roofline" ]; then
  scripts/gpu/run.sh build || { echo "$0: the tree's build failed (build/gpu-results/build.log)" >&2; exit 1; }
fi
rm -rf "$VARIANTS"
mkdir -p "$VARIANTS/v0"
cp "$BUILD/roofline" "$VARIANTS/v0/roofline"
echo "v0: the tree ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))" > "$VARIANTS/variants.txt"

rebuild() {
  cmake --build "$BUILD" -j "$(nproc)" --target roofline > "$1" 2>&1
}
rc=0
for i in "${!files[@]}"; do
  n=$((i + 1))
  mkdir -p "$VARIANTS/v$n"
  echo "v$n: ${directions[$i]:+reversed }${files[$i]#"$ROOT"/}" >> "$VARIANTS/variants.txt"
  patch -p1 --silent ${directions[$i]} < "${files[$i]}" || { echo "$0: v$n: the patch failed" >&2; rc=1; continue; }
  start=$(date +%s)
  if rebuild "$VARIANTS/v$n/build.txt"; then
    cp "$BUILD/roofline" "$VARIANTS/v$n/roofline"
    echo "v$n: built in $(($(date +%s) - start)) s" >&2
  else
    echo "$0: v$n: the build failed ($VARIANTS/v$n/build.txt)" >&2
    rc=1
  fi
  # Reversing the patch restores the tree; touching what it changed makes the next build see it.
  reverse=$([ -n "${directions[$i]}" ] && echo "" || echo "-R")
  patch -p1 --silent $reverse < "${files[$i]}" || { echo "$0: v$n: could not revert the patch" >&2; exit 1; }
done
# The tree's own binary back in the build (the last variant's is there now).
rebuild "$VARIANTS/v0/rebuild.txt" || { echo "$0: rebuilding the tree failed" >&2; rc=1; }

cat > "$VARIANTS/select" << 'EOF'
#!/usr/bin/env bash
# Runs the binary of variant $ROOFLINE_VARIANT (0: the tree) of scripts/gpu/build-variants.sh.
exec "$(dirname "$0")/v${ROOFLINE_VARIANT:?set ROOFLINE_VARIANT to a variant number}/roofline" "$@"
EOF
chmod +x "$VARIANTS/select"
cat "$VARIANTS/variants.txt" >&2
exit $rc
