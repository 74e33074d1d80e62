#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start-up time of the offline commands, next to bare programs built the same way.
# Usage: bench/startup_bench.sh [BUILD_DIR] [RUNS]   (needs python3; strace for the last line)
# Prints a Markdown table (bench/startup_measure.py: round-robin runs, medians, page faults);
# with GPURENT_WRITE_DOCS=1 it also replaces the "Start-up" section of docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-300}
bin=$(realpath "$build/gpurent")
[ -x "$bin" ] || { echo "startup_bench: build first (scripts/build.sh $build)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <cstdio>\nint main() { std::puts("hello"); }\n' >"$tmp/hello.cpp"
printf '#include <iostream>\nint main() { std::cout << "hello\\n"; }\n' >"$tmp/hello_iostream.cpp"
printf '#include <cstdio>\n#include <curl/curl.h>\nint main() { std::printf("%%p\\n", reinterpret_cast<void*>(&curl_easy_init)); }\n' >"$tmp/hello_curl.cpp"
g++ -O2 -static-libstdc++ -static-libgcc "$tmp/hello.cpp" -o "$tmp/hello"
g++ -O2 -static-libstdc++ -static-libgcc "$tmp/hello_iostream.cpp" -o "$tmp/hello_iostream"
g++ -O2 -static-libstdc++ -static-libgcc "$tmp/hello_curl.cpp" -o "$tmp/hello_curl" -lcurl
cat >"$tmp/oom.txt" <<'MSG'
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free. Of the allocated memory 20.84 GiB is allocated by PyTorch, and 1.03 GiB
is reserved by PyTorch but unallocated.
MSG
export HOME=$tmp XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache XDG_STATE_HOME=$tmp/state NO_COLOR=1

python3 bench/startup_measure.py "$runs" 20 \
  "hello world (C++, puts, static libstdc++)=$tmp/hello" \
  "hello world (C++, iostream, static libstdc++)=$tmp/hello_iostream" \
  "hello world linking libcurl=$tmp/hello_curl" \
  "gpurent plan llama-3.1-8b --json=$bin plan llama-3.1-8b --json" \
  "gpurent plan llama-3.1-70b --task serve --json=$bin plan llama-3.1-70b --task serve --json" \
  "gpurent models --json=$bin models --json" \
  "gpurent cost --provider runpod --card rtx-4090 --hours 2 --json=$bin cost --provider runpod --card rtx-4090 --hours 2 --json" \
  "gpurent oom oom.txt --json=$bin oom $tmp/oom.txt --json" \
  "gpurent fits 'A100 80GB' --task serve --json=$bin fits 'A100 80GB' --task serve --json" >"$tmp/table.md"

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd, - | sed 's/,/, /g')
loads=n/a
if command -v strace >/dev/null; then
  loads=$(strace -f -e trace=openat "$bin" plan llama-3.1-8b --json 2>&1 >/dev/null | grep -cE 'libcurl|libssh2|libsqlite|libgpurent_io' || true)
fi
{
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)."
  echo "Command: \`bench/startup_bench.sh $build $runs\` ($(date -u +%Y-%m-%d)): $runs round-robin rounds after 20 warm-up rounds."
  echo
  cat "$tmp/table.md"
  echo
  echo "Shared libraries the gpurent executable loads (readelf NEEDED): $needed."
  echo "Libraries of the IO module opened by \`gpurent plan llama-3.1-8b\` (strace): $loads."
} >"$tmp/section.md"
cat "$tmp/section.md"

if [ "${GPURENT_WRITE_DOCS:-0}" = 1 ]; then
  python3 - "$tmp/section.md" docs/benchmarks.md <<'PY'
import re, sys
section = open(sys.argv[1]).read().strip()
doc = open(sys.argv[2]).read()
new = re.sub(r"(## Start-up\n)(.*?)(?=\n### |\n## |\Z)", lambda m: m.group(1) + "\n" + section + "\n", doc, count=1, flags=re.S)
open(sys.argv[2], "w").write(new)
PY
fi
