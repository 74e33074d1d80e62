#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of a no-change re-push between two builds, interleaved (ab_order), on loopback and through
# bench/delay_proxy.py at 50 ms: issue #43's tree of BENCH_FILES (20,000) files (bench_tree), each
# build pushing to its own destination first (not timed).
#
#   bash bench/repush_ab.sh A_BUILD_DIR B_BUILD_DIR     (not part of the test suite)
# Env: BENCH_ROUNDS (5), BENCH_FILES. Prints "LINK round R SIDE: S s" (A: the first build) and
# each side's median per link.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] && [ -x "$1/gpurent" ] && [ -x "$2/gpurent" ] ||
  { echo "usage: bench/repush_ab.sh A_BUILD_DIR B_BUILD_DIR (each holding gpurent)" >&2; exit 2; }
A=$(cd "$1" && pwd)
B_BUILD=$(cd "$2" && pwd)
ROUNDS=${BENCH_ROUNDS:-5}
FILES=${BENCH_FILES:-20000}
source "$ROOT/bench/bench_env.sh"
bench_setup repush-ab
bench_tree "$B/tree" "$FILES"
bench_proxy 50

push() {  # push BUILD_DIR PORT KNOWN_HOSTS DEST: the wall seconds of one push
  t "$1/gpurent" push --host "$SSHD_USER@127.0.0.1:$2" --identity "$SSHD_KEY" --known-hosts "$3" --json "$B/tree" --to "$4"
}
push "$A" "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" "$B/dst/A" > /dev/null
push "$B_BUILD" "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" "$B/dst/B" > /dev/null
sync
for link in lo ms50; do
  if [ "$link" = lo ]; then port=$SSHD_PORT; kh=$SSHD_KNOWN_HOSTS; else port=$PROXY_PORT; kh=$B/kh_50; fi
  for r in $(seq 1 "$ROUNDS"); do
    for side in $(ab_order "$r"); do
      dir=$A
      [ "$side" = B ] && dir=$B_BUILD
      secs=$(push "$dir" "$port" "$kh" "$B/dst/$side")
      echo "$secs" >> "$B/$link.$side.times"
      printf '%s round %s %s: %.3f s\n' "$link" "$r" "$side" "$secs"
    done
  done
  printf '%s median: A %.3f s, B %.3f s\n' "$link" "$(med "$link.A")" "$(med "$link.B")"
done
