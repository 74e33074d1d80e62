#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and sizes an example job with `gpurent plan`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
set -x
build/gpurent plan llama-3.1-8b --task lora --card "RTX 4090" --grad-checkpointing
