#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs the whole test suite (unit, property, end-to-end).
# Usage: scripts/test.sh             normal build in build/
#        scripts/test.sh --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#        scripts/test.sh --sanitize --with-fuzzers
#                                    the same suite built by clang-19 with libFuzzer's coverage
#                                    (-fsanitize=fuzzer-no-link) and the libFuzzer targets, so that
#                                    scripts/fuzz.sh reuses the tree (GPURENT_FUZZ_DIR=build-asan)
#                                    instead of building it a third time (CI: .ci/run); g++ as
#                                    above where clang-19 is missing (scripts/deps.sh --fuzz)
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
  compiler=gcc
  if [ "${2:-}" = "--with-fuzzers" ]; then
    if scripts/libfuzzer_probe.sh; then
      compiler=clang
      export CC=clang-19 CXX=clang++-19
      args+=(-DGPURENT_FUZZ=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link
        -DCMAKE_C_FLAGS_DEBUG=-O1)
    else
      echo "test.sh: clang-19 with libFuzzer is missing ('scripts/deps.sh --fuzz'): the sanitizer suite is built with g++" >&2
    fi
  fi
  if [ -f "$dir/CMakeCache.txt" ]; then
    built=gcc
    grep -q 'CMAKE_CXX_COMPILER:.*clang++-19$' "$dir/CMakeCache.txt" && built=clang
    [ "$built" = "$compiler" ] || rm -rf "$dir"  # built by the other compiler
  fi
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
scripts/build.sh "$dir" "${args[@]}"
cd "$dir"
ctest --output-on-failure --timeout 300 -j "${GPURENT_JOBS:-$(nproc)}" </dev/null
