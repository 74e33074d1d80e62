#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of two gpurent builds' `backup` on the same loopback sshd, interleaved: a tree of
# BENCH_SMALL (2000) 4 KiB files and 20 shards of 20 MiB (through the tar stream), and one
# BENCH_BIG_MIB (256) MiB file; BENCH_ROUNDS (3) rounds, each into an empty directory. Prints one
# line per run. For a change's cost (docs/benchmarks.md, "The tar streams by libarchive").
# Usage: bench/backup_ab.sh A_BUILD_DIR B_BUILD_DIR   (each holding gpurent and libgpurent_io.so)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: bench/backup_ab.sh A_BUILD_DIR B_BUILD_DIR" >&2; exit 2; }
A=$(cd "$1" && pwd)
B_BUILD=$(cd "$2" && pwd)
SMALL=${BENCH_SMALL:-2000}
BIG_MIB=${BENCH_BIG_MIB:-256}
ROUNDS=${BENCH_ROUNDS:-3}
source "$ROOT/bench/bench_env.sh"
bench_setup backup-ab
mkdir -p "$B/src/tree/small" "$B/src/tree/shards" "$B/src/big"
python3 - "$B/src/tree/small" "$SMALL" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(root, "part-%05d.txt" % i), "wb") as f:
        f.write(os.urandom(4096))
PY
for i in $(seq -w 1 20); do head -c $((20 * 1024 * 1024)) /dev/urandom > "$B/src/tree/shards/shard-$i.bin"; done
head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom > "$B/src/big/weights.bin"
cat "$B/src/tree/small/"* "$B/src/tree/shards/"* "$B/src/big/weights.bin" > /dev/null  # warm the page cache
backup() {  # BUILD_DIR SRC -> seconds
  local s e
  rm -rf "$B/dst"
  mkdir -p "$B/dst"
  sync  # the previous run's writes and deletions are not left to slow this one
  s=$(date +%s.%N)
  GPURENT_IO_MODULE=$1/libgpurent_io.so "$1/gpurent" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
    --known-hosts "$SSHD_KNOWN_HOSTS" "$2" --to "$B/dst/x" --json > "$B/o" 2> "$B/e" || { cat "$B/e" >&2; return 1; }
  e=$(date +%s.%N)
  python3 -c "print(round($e - $s, 2))"
}
for round in $(seq 1 "$ROUNDS"); do
  for side in $(ab_order "$round"); do
    dir=$A
    [ $side = B ] && dir=$B_BUILD
    echo "round $round $side tree ($SMALL small files, 400 MiB of shards): $(backup "$dir" "$B/src/tree") s"
    echo "round $round $side ${BIG_MIB} MiB file: $(backup "$dir" "$B/src/big/weights.bin") s"
  done
done
