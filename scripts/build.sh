#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds gpurent. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=${GPURENT_JOBS:-$(nproc)}
launcher=()
# Where ccache is installed (not a dependency: deps.sh does not install it), compiles go through
# it, relative to the checkout (CCACHE_BASEDIR), so a rebuild in another clone reuses the objects.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
fi
if [ ! -f "$dir/build.ninja" ]; then
  # Release at -O2 without debug info (asserts stay on): the 2-core CI builds it twice.
  cmake -S . -B "$dir" -G Ninja -DGPURENT_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 "${launcher[@]}" "$@" \
    >/dev/null
fi
ninja -C "$dir" -j "$jobs" >&2
