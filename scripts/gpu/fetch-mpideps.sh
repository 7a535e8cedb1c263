#!/usr/bin/env bash
# On the development machine (Debian 12), once: downloads Debian's Open MPI -- runtime, launcher,
# headers and the libraries they load -- into .mpideps/ (git-ignored, never committed), for a
# GPU machine that has no MPI of its own. scripts/gpu/run-collectives.sh unpacks them with dpkg -x
# and relocates Open MPI with OPAL_PREFIX. Carry `.mpideps` with the tree.
#
# Left out on purpose: what every Ubuntu 24.04 / Debian 12 system has (libc6, zlib1g, libudev1,
# libuuid1, libatomic1) and the Fortran bindings.
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1 ibverbs-providers librdmacm1
  libmunge2 libnl-3-200 libnl-route-3-200 libnuma1 libltdl7)
mkdir -p .mpideps
(cd .mpideps && apt-get download "${packages[@]}")
total=$(du -cb .mpideps/*.deb | tail -1 | cut -f1)
echo "fetch-mpideps: ${#packages[@]} packages, $((total / 1024 / 1024)) MiB in .mpideps/" >&2
limit=$((30 * 1024 * 1024))
if [ "$total" -gt "$limit" ]; then
  echo "fetch-mpideps: more than 30 MiB: too heavy to carry" >&2
  exit 1
fi
