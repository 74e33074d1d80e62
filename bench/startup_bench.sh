#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start-up time of the offline commands, next to bare programs built the same way.
# Usage: bench/startup_bench.sh [BUILD_DIR] [RUNS]   (needs hyperfine: scripts/deps.sh --bench)
# Prints a Markdown table; with GPURENT_WRITE_DOCS=1 it also replaces the "Start-up" section of
# docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-300}
bin=$build/gpurent
[ -x "$bin" ] || { echo "startup_bench: build first (scripts/build.sh $build)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "startup_bench: needs hyperfine (scripts/deps.sh --bench)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <cstdio>\nint main() { std::puts("hello"); }\n' >"$tmp/hello.cpp"
printf '#include <cstdio>\n#include <curl/curl.h>\nint main() { std::printf("%%p\\n", reinterpret_cast<void*>(&curl_easy_init)); }\n' >"$tmp/hello_curl.cpp"
g++ -O2 -static-libstdc++ -static-libgcc "$tmp/hello.cpp" -o "$tmp/hello"
g++ -O2 -static-libstdc++ -static-libgcc "$tmp/hello_curl.cpp" -o "$tmp/hello_curl" -lcurl
cat >"$tmp/oom.txt" <<'MSG'
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free. Of the allocated memory 20.84 GiB is allocated by PyTorch, and 1.03 GiB
is reserved by PyTorch but unallocated.
MSG
export HOME=$tmp XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache XDG_STATE_HOME=$tmp/state NO_COLOR=1

hyperfine -N --warmup 20 --runs "$runs" --export-markdown "$tmp/table.md" \
  -n "hello world (C++, static libstdc++)" "$tmp/hello" \
  -n "hello world linking libcurl" "$tmp/hello_curl" \
  -n "gpurent plan llama-3.1-8b --json" "$bin plan llama-3.1-8b --json" \
  -n "gpurent plan llama-3.1-70b --task serve --json" "$bin plan llama-3.1-70b --task serve --json" \
  -n "gpurent models --json" "$bin models --json" \
  -n "gpurent cost --provider runpod --card rtx-4090 --hours 2 --json" "$bin cost --provider runpod --card rtx-4090 --hours 2 --json" \
  -n "gpurent oom oom.txt --json" "$bin oom $tmp/oom.txt --json" >&2

loads=$(strace -f -e trace=openat "$bin" plan llama-3.1-8b --json 2>&1 >/dev/null | grep -cE 'libcurl|libssh2|libsqlite|libgpurent_io' || true)
{
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)."
  echo "Command: \`bench/startup_bench.sh $build $runs\` ($(date -u +%Y-%m-%d))."
  echo
  cat "$tmp/table.md"
  echo
  echo "Libraries of the IO module opened by \`gpurent plan llama-3.1-8b\` (strace): $loads."
} >"$tmp/section.md"
cat "$tmp/section.md"

if [ "${GPURENT_WRITE_DOCS:-0}" = 1 ]; then
  python3 - "$tmp/section.md" docs/benchmarks.md <<'PY'
import re, sys
section = open(sys.argv[1]).read().strip()
doc = open(sys.argv[2]).read()
new = re.sub(r"(## Start-up\n)(.*?)(?=\n## |\Z)", lambda m: m.group(1) + "\n" + section + "\n", doc, count=1, flags=re.S)
open(sys.argv[2], "w").write(new)
PY
fi
