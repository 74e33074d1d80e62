#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue #43's loopback backup against scp, for several builds in one run: one BENCH_BACKUP_MIB
# (512) MiB random file backed up from a loopback sshd by scp (aes128-ctr + hmac-sha2-256 +
# curve25519-sha256, as in transfer_goals.sh) and by each BUILD_DIR's gpurent, BENCH_ROUNDS (6)
# rounds, the order of the sides rotating by one every round. Prints each side's median, its
# ratio to scp's and every round's time.
#   bash bench/backup_builds.sh BUILD_DIR [BUILD_DIR ...]
# A BUILD_DIR holds gpurent and libgpurent_io.so (a build tree, or a copy of those two files).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/backup_builds.sh BUILD_DIR [BUILD_DIR ...]" >&2; exit 2; }
BUILDS=()
for d in "$@"; do
  [ -x "$d/gpurent" ] && [ -f "$d/libgpurent_io.so" ] || { echo "$d: no gpurent and libgpurent_io.so" >&2; exit 2; }
  BUILDS+=("$(cd "$d" && pwd)")
done
ROUNDS=${BENCH_ROUNDS:-6}
MIB=${BENCH_BACKUP_MIB:-512}
source "$ROOT/bench/bench_env.sh"
bench_setup backup-builds
openssl rand -out "$B/backup.safetensors" $((MIB * 1024 * 1024))
cat "$B/backup.safetensors" > /dev/null
ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"

side() {  # side INDEX: 0 is scp, i > 0 the i-th build
  rm -rf "$B/dst"; mkdir -p "$B/dst"
  if [ "$1" = 0 ]; then
    t scp -q -P "$SSHD_PORT" -i "$SSHD_KEY" -o IdentitiesOnly=yes -o UserKnownHostsFile="$SSHD_KNOWN_HOSTS" \
      -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG \
      "$SSHD_USER@127.0.0.1:$B/backup.safetensors" "$B/dst/s"
  else
    local b=${BUILDS[$(($1 - 1))]}
    t env GPURENT_IO_MODULE="$b/libgpurent_io.so" "$b/gpurent" backup --host "$SSHD_USER@127.0.0.1:$SSHD_PORT" --identity "$SSHD_KEY" \
      --known-hosts "$SSHD_KNOWN_HOSTS" "$B/backup.safetensors" --to "$B/dst" --json
    cmp "$B/backup.safetensors" "$B/dst/backup.safetensors"
  fi
}

n=$((${#BUILDS[@]} + 1))
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(((k + r) % n))
    x=$(side "$i")
    echo "round $r side $i: $x s" >&2
    echo "$x" >> "$B/$i.times"
  done
done
echo
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) vCPU, load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds; $MIB MiB on loopback."
echo
echo "| side | median | vs scp | rounds (s, sorted) |"
echo "|---|---:|---:|---|"
scp_med=$(med 0)
for i in $(seq 0 $((n - 1))); do
  name=scp
  [ "$i" = 0 ] || name=${BUILDS[$((i - 1))]}
  m=$(med "$i")
  printf '| %s | %.2f s | %.2fx | %s |\n' "$name" "$m" "$(echo "scale=3; $m / $scp_med" | bc)" "$(sort -g "$B/$i.times" | xargs printf '%.2f ')"
done
