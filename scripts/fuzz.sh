#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds every fuzz target (fuzz/fuzz_*.cpp) in build-fuzz/ and runs each for SECONDS (default 30)
# on a seed corpus made from tests/data. Exits non-zero when a target crashes; the crashing input
# is left in build-fuzz/artifacts/<target>/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
dir=build-fuzz
jobs=${GPURENT_JOBS:-2}

# libFuzzer needs clang; Debian 12's clang 14 cannot compile libstdc++ 12's <expected>.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <expected>\n#include <string>\nint main(){std::expected<std::string,int> e{"x"}; return e ? 0 : 1;}\n' >"$probe/p.cpp"
if command -v clang++-14 >/dev/null && clang++-14 -std=c++2b "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  export CC=clang-14 CXX=clang++-14
  extra=(-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link)
  echo "fuzz: libFuzzer targets built with clang++-14" >&2
else
  export CC=gcc CXX=g++
  extra=()
  echo "fuzz: clang++-14 cannot compile std::expected with libstdc++ 12; building with g++ and the" \
       "replay+mutate driver (fuzz/driver/replay_mutate_driver.cpp: ASan+UBSan, no coverage guidance)" >&2
fi
if [ -n "${GPURENT_FUZZ_DIR:-}" ] && [ "$CXX" = g++ ] && [ -f "$GPURENT_FUZZ_DIR/CMakeCache.txt" ] &&
  grep -q "GPURENT_SANITIZE:BOOL=ON" "$GPURENT_FUZZ_DIR/CMakeCache.txt"; then
  # Reuse an existing g++ ASan+UBSan build (CI: build-asan): only the fuzz targets are added.
  dir=$GPURENT_FUZZ_DIR
  cmake -S . -B "$dir" -DGPURENT_FUZZ=ON >/dev/null
else
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "CMAKE_CXX_COMPILER:.*${CXX}\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"  # the compiler changed
  fi
  cmake -S . -B "$dir" -G Ninja -DGPURENT_FUZZ=ON -DGPURENT_TESTS=OFF -DGPURENT_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
fi
ninja -C "$dir" -j "$jobs" fuzz_all

# Seed corpora: the OOM messages one per file (after a chunking seed byte), and for every other
# target the small files of tests/data.
corpus=$dir/corpus
rm -rf "$corpus"
mkdir -p "$corpus/oom" "$corpus/data"
python3 - "$corpus/oom" tests/data/oom <<'PY'
import json, os, sys
out, src = sys.argv[1], sys.argv[2]
n = 0
for name in sorted(os.listdir(src)):
    if not name.endswith('.json'):
        continue
    data = json.load(open(os.path.join(src, name)))
    items = data if isinstance(data, list) else data.get('reports', []) + data.get('not_reports', [])
    for item in items:
        for seed in (0, 7):
            with open(os.path.join(out, f'{n:04d}'), 'wb') as f:
                f.write(bytes([seed]) + item['message'].encode())
            n += 1
PY
find tests/data -type f -size -64k -exec cp --backup=numbered -t "$corpus/data" {} + 2>/dev/null || true

status=0
for source in fuzz/fuzz_*.cpp; do
  name=$(basename "$source" .cpp)
  seeds="$corpus/data"
  [ "$name" = fuzz_oom ] && seeds="$corpus/oom"
  artifacts="$dir/artifacts/$name"
  mkdir -p "$artifacts"
  echo "fuzz: $name for ${seconds}s" >&2
  if ! "$dir/$name" -max_total_time="$seconds" -artifact_prefix="$artifacts/" "$seeds"; then
    echo "fuzz: $name FAILED; crashing input in $artifacts/" >&2
    status=1
  fi
done
exit $status
