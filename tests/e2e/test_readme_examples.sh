#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README.md's examples run as written (tests/e2e/readme_examples.py classifies every one: run
# against the built binary, or skipped with its reason); `attach` runs against a loopback sshd.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-readme-test.XXXXXX)
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
cleanup() {
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"
export SSHD_TARGET SSHD_KEY SSHD_KNOWN_HOSTS
python3 "$GPURENT_SOURCE_DIR/tests/e2e/readme_examples.py"
