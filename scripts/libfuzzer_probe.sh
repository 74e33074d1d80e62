#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exits 0 when clang++-19 can build gpurent's libFuzzer targets: it compiles libstdc++ 12's
# <expected> (Debian's clang 14 cannot) and links -fsanitize=fuzzer,address,undefined (the runtime
# is in libclang-rt-19-dev). `scripts/deps.sh --fuzz` installs both. Used by scripts/fuzz.sh and by
# `scripts/test.sh --sanitize --with-fuzzers`, which builds the sanitizer suite and the fuzz targets
# as one clang-19 tree.
set -euo pipefail
command -v clang++-19 >/dev/null || exit 1
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <expected>\n#include <string>\nint main(){std::expected<std::string,int> e{"x"}; return e ? 0 : 1;}\n' >"$probe/p.cpp"
printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long){return 0;}\n' >"$probe/f.cpp"
clang++-19 -std=c++2b "$probe/p.cpp" -o "$probe/p" 2>/dev/null &&
  clang++-19 -fsanitize=fuzzer,address,undefined "$probe/f.cpp" -o "$probe/f" 2>/dev/null
