#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of a no-change re-push between two builds, interleaved, on loopback and through
# bench/delay_proxy.py at 50 ms: a tree of BENCH_FILES (20,000) files of 200-6,000 random bytes in
# 2 x 256 folders (issue #43's tree), each build pushing to its own destination first (not timed).
#
#   bash bench/repush_ab.sh OLD_BUILD_DIR NEW_BUILD_DIR     (not part of the test suite)
# Env: BENCH_ROUNDS (5), BENCH_FILES. Prints "LINK round R: before S s, after S s".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=$1/gpurent
NEW=$2/gpurent
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "usage: bench/repush_ab.sh OLD_BUILD_DIR NEW_BUILD_DIR" >&2; exit 2; }
ROUNDS=${BENCH_ROUNDS:-5}
FILES=${BENCH_FILES:-20000}
source "$ROOT/bench/bench_env.sh"
bench_setup repush-ab
python3 - "$B/tree" "$FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(43)
for i in range(n):
    d = os.path.join(root, "a%03d" % (i % 2), "b%03d" % ((i // 2) % 256))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(rng.randbytes(rng.randrange(200, 6001)))
PY
find "$B/tree" -type f -exec cat {} + > /dev/null
U=$SSHD_USER
H=127.0.0.1
PROXY_PORT=$(sshd_free_port)
python3 "$ROOT/bench/delay_proxy.py" "$PROXY_PORT" "$SSHD_PORT" 50 > /dev/null 2>&1 &
PROXY=$!
trap 'kill $PROXY 2>/dev/null || true; bench_cleanup' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null && break; sleep 0.05; done
sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PROXY_PORT /" "$SSHD_KNOWN_HOSTS" > "$B/kh50"

run() {  # run BIN PORT KNOWN_HOSTS DEST: prints the wall seconds of one push
  local s e
  s=$(date +%s.%N)
  "$1" push --host "$U@$H:$2" --identity "$SSHD_KEY" --known-hosts "$3" --json "$B/tree" --to "$4" > /dev/null
  e=$(date +%s.%N)
  python3 -c "print(round($e - $s, 3))"
}
run "$NEW" "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" "$B/dst/new" > /dev/null
run "$OLD" "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" "$B/dst/old" > /dev/null
sync
for link in lo ms50; do
  if [ "$link" = lo ]; then port=$SSHD_PORT; kh=$SSHD_KNOWN_HOSTS; else port=$PROXY_PORT; kh=$B/kh50; fi
  for r in $(seq 1 "$ROUNDS"); do
    before=$(run "$OLD" "$port" "$kh" "$B/dst/old")
    after=$(run "$NEW" "$port" "$kh" "$B/dst/new")
    echo "$link round $r: before $before s, after $after s"
  done
done
