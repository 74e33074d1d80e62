#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds gpurent. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=${GPURENT_JOBS:-$(nproc)}
if [ ! -f "$dir/build.ninja" ]; then
  # Release at -O2 without debug info (asserts stay on): the 2-core CI builds it twice.
  cmake -S . -B "$dir" -G Ninja -DGPURENT_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 "$@" \
    >/dev/null
fi
ninja -C "$dir" -j "$jobs" >&2
