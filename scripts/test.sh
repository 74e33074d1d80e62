#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs the whole test suite (unit, property, end-to-end).
# Usage: scripts/test.sh             normal build in build/
#        scripts/test.sh --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --tests
dir=build
args=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # Warnings as errors are checked by the normal build; GCC's -O1 sanitizer builds add false
  # positives (-Wnull-dereference, -Wmaybe-uninitialized), so here they stay warnings.
  args=(-DGPURENT_SANITIZE=ON -DGPURENT_WERROR=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1)
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
scripts/build.sh "$dir" "${args[@]}"
cd "$dir"
ctest --output-on-failure --timeout 300 -j "${GPURENT_JOBS:-$(nproc)}" </dev/null
