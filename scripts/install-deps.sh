#!/usr/bin/env bash
# Installs the Debian packages roofline needs, only those that are missing.
#   scripts/install-deps.sh          what the tool's build needs (README command 1)
#   scripts/install-deps.sh --tests  that, and what the tests, the Python module and the Debian
#                                    package need (README command 2)
# The CUDA toolkit (/usr/local/cuda) is optional: the host tool builds without it.
set -euo pipefail

packages=(cmake g++ libcli11-dev nlohmann-json3-dev libfmt-dev)
if [ "${1:-}" = "--tests" ]; then
  # catch2: the unit and CLI tests. python3-jsonschema: the schema tests. clang-format: the format
  # test. chromium and fonts-liberation: the browser test of `roofline plot`'s SVG, whose label
  # layout assumes Liberation Sans (Arial) metrics. libopenmpi-dev and openmpi-bin: the MPI path of
  # the collectives suite in CUDA builds (the mpi test runs two ranks). python3-dev, pybind11-dev,
  # python3-pytest and python3-pandas: the Python module, its tests and to_frame. dpkg-dev and
  # file: cpack -G DEB's library dependencies (dpkg-shlibdeps). json-schema-test-suite: the
  # conformance test of the JSON Schema validator (skipped without it).
  packages+=(catch2 python3 python3-jsonschema clang-format chromium fonts-liberation libopenmpi-dev openmpi-bin
    python3-dev pybind11-dev python3-pytest python3-pandas dpkg-dev file json-schema-test-suite)
elif [ $# -gt 0 ]; then
  echo "usage: scripts/install-deps.sh [--tests]" >&2
  exit 2
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "roofline: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
