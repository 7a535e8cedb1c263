#!/usr/bin/env bash
# Installs the Debian packages roofline needs, only those that are missing.
# The CUDA toolkit (/usr/local/cuda) is optional: the host tool builds without it.
set -euo pipefail

# libopenmpi-dev and openmpi-bin: the MPI path of the collectives suite (optional at configure time;
# the mpi test runs two ranks). chromium and fonts-liberation: the browser test of `roofline plot`'s SVG, whose label layout
# assumes Liberation Sans (Arial) metrics. json-schema-test-suite: the conformance test of the JSON
# Schema validator (skipped without it).
packages=(cmake g++ libcli11-dev nlohmann-json3-dev libfmt-dev catch2 python3 python3-jsonschema clang-format
  chromium fonts-liberation libopenmpi-dev openmpi-bin json-schema-test-suite)
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
