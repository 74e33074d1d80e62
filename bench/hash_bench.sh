#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SHA-256 throughput, gpurent's former hand-written SHA-256 (from git: 9ee460c0) against OpenSSL's
# EVP that replaced it (issue #27). Needs git history, g++ and libssl-dev.
# Usage: bench/hash_bench.sh   (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git show 9ee460c0:sync/sha256.hpp >"$tmp/old_sha256.hpp"
git show 9ee460c0:sync/sha256.cpp | sed 's#"sync/sha256.hpp"#"old_sha256.hpp"#' >"$tmp/old_sha256.cpp"
g++ -std=c++2b -O2 -I"$tmp" bench/hash_bench.cpp "$tmp/old_sha256.cpp" -lcrypto -o "$tmp/hash_bench"
"$tmp/hash_bench"
