#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages gpurent needs to build and test, skipping what is present.
# Usage: scripts/deps.sh [--tests] [--fuzz] [--bench]
# --tests: what the whole suite needs beyond the build: python3-torch (CPU PyTorch with torchrun and
# the gloo backend) for the two-node job of tests/e2e/test_group.sh.
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config ca-certificates libcurl4-openssl-dev nlohmann-json3-dev
  libcli11-dev libssh2-1-dev libssl-dev libfmt-dev catch2 libsqlite3-dev libtomlplusplus-dev libarchive-dev libcsv-dev openssh-server openssh-client rsync
  python3 procps time openssl man-db groff-base zsh fish git)
for arg in "$@"; do
  case "$arg" in
    --tests) packages+=(python3-torch) ;;
    --fuzz) packages+=(clang-19 libclang-rt-19-dev lld-19) ;;  # libFuzzer: clang 14 cannot compile <expected>; lld links faster
    --bench) packages+=(hyperfine strace bc) ;;  # bc: bench/bench_env.sh's timings
    *) echo "deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq </dev/null
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
