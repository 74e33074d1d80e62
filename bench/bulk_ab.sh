#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue #43's backup case, old against new in one run: one BENCH_BACKUP_MIB (512) MiB random file
# backed up on loopback and at 100 ms (bench/delay_proxy.py), each round timing, in an order that
# alternates between rounds: scp; the new build with its bytes through OpenSSH's ssh (default);
# the new build with GPURENT_SSH_BULK=libssh2 (the old path, same binary); and, when OLD_BUILD_DIR
# is given, that build (e.g. main before the change). Same sshd and algorithms for every tool
# (aes128-ctr + hmac-sha2-256 + curve25519-sha256 for scp; gpurent's ssh takes OpenSSH's defaults).
# Prints each side's median and its ratio to scp's.
#   bash bench/bulk_ab.sh NEW_BUILD_DIR [OLD_BUILD_DIR]
# Env: BENCH_ROUNDS (3), BENCH_BACKUP_MIB (512), BENCH_RTTS ("0 100"), BENCH_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/bulk_ab.sh NEW_BUILD_DIR [OLD_BUILD_DIR]" >&2; exit 2; }
NEW=$(cd "$1" && pwd)
OLD=${2:+$(cd "$2" && pwd)}
ROUNDS=${BENCH_ROUNDS:-3}
MIB=${BENCH_BACKUP_MIB:-512}
RTTS=${BENCH_RTTS:-0 100}
source "$ROOT/bench/bench_env.sh"
bench_setup bulk-ab
openssl rand -out "$B/backup.safetensors" $((MIB * 1024 * 1024))
cat "$B/backup.safetensors" > /dev/null
ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"
U=$SSHD_USER

side() {  # side NAME PORT KNOWN_HOSTS
  local dst=$B/dst/$1
  rm -rf "$B/dst"; mkdir -p "$B/dst"; sync
  case $1 in
    scp) t scp -q -P "$2" -i "$SSHD_KEY" -o IdentitiesOnly=yes -o UserKnownHostsFile="$3" -o GlobalKnownHostsFile=/dev/null \
           -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG "$U@127.0.0.1:$B/backup.safetensors" "$B/dst/s" ;;
    new) t env GPURENT_IO_MODULE="$NEW/libgpurent_io.so" "$NEW/gpurent" backup --host "$U@127.0.0.1:$2" --identity "$SSHD_KEY" \
           --known-hosts "$3" "$B/backup.safetensors" --to "$dst" --json ;;
    new_libssh2) t env GPURENT_SSH_BULK=libssh2 GPURENT_IO_MODULE="$NEW/libgpurent_io.so" "$NEW/gpurent" backup --host "$U@127.0.0.1:$2" \
           --identity "$SSHD_KEY" --known-hosts "$3" "$B/backup.safetensors" --to "$dst" --json ;;
    old) t env GPURENT_IO_MODULE="$OLD/libgpurent_io.so" "$OLD/gpurent" backup --host "$U@127.0.0.1:$2" --identity "$SSHD_KEY" \
           --known-hosts "$3" "$B/backup.safetensors" --to "$dst" --json ;;
  esac
  if [ "$1" != scp ]; then cmp "$B/backup.safetensors" "$dst/backup.safetensors"; fi
}

SIDES="scp new new_libssh2${OLD:+ old}"
for rtt in $RTTS; do
  port=$SSHD_PORT kh=$SSHD_KNOWN_HOSTS
  if [ "$rtt" != 0 ]; then bench_proxy "$rtt"; port=$PROXY_PORT; kh=$B/kh_$rtt; fi
  for r in $(seq 1 "$ROUNDS"); do
    order=$SIDES
    [ $((r % 2)) -eq 0 ] && order=$(echo "$SIDES" | tr ' ' '\n' | tac | tr '\n' ' ')
    for s in $order; do
      x=$(side "$s" "$port" "$kh")
      echo "rtt ${rtt} ms round $r $s: $x s" >&2
      echo "$x" >> "$B/$rtt.$s.times"
    done
  done
done
echo
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) vCPU, load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds, median; $MIB MiB."
echo
echo "| RTT | side | median | vs scp |"
echo "|---|---|---:|---:|"
for rtt in $RTTS; do
  scp_med=$(med "$rtt.scp")
  for s in $SIDES; do
    m=$(med "$rtt.$s")
    printf '| %s ms | %s | %.2f s | %.2fx |\n' "$rtt" "$s" "$m" "$(echo "scale=3; $m / $scp_med" | bc)"
  done
done
