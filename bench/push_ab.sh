#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of two gpurent builds on the same loopback sshd, interleaved: the first push and a
# no-change re-push of a generated, committed repository (BENCH_FILES small files, default
# 20,000), and the push of one BENCH_BIG_MIB (512) MiB file outside any repository; BENCH_ROUNDS
# (2) rounds. Prints one line per run. For a change's cost (docs/benchmarks.md, "What the git
# answer and the secret guard cost").
# Usage: bench/push_ab.sh A_BUILD_DIR B_BUILD_DIR   (each holding gpurent and libgpurent_io.so)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: bench/push_ab.sh A_BUILD_DIR B_BUILD_DIR" >&2; exit 2; }
A=$(cd "$1" && pwd)
B_BUILD=$(cd "$2" && pwd)
FILES=${BENCH_FILES:-20000}
BIG_MIB=${BENCH_BIG_MIB:-512}
ROUNDS=${BENCH_ROUNDS:-2}
source "$ROOT/bench/bench_env.sh"
bench_setup push-ab
python3 - "$B/repo" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "pkg%02d" % (i % 50), "mod%03d" % (i % 400 // 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.py" % i), "w") as f:
        f.write(("x = %d\n" % i) * (1 + i % 90))
PY
(cd "$B/repo" && git init -q && git add -A && git -c gc.auto=0 -c user.email=b@b -c user.name=b commit -qm bench && git gc -q)
mkdir -p "$B/big"
head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom > "$B/big/weights.bin"
push() {  # BUILD_DIR SRC DST -> seconds
  local s e
  s=$(date +%s.%N)
  GPURENT_IO_MODULE=$1/libgpurent_io.so "$1/gpurent" push --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
    --known-hosts "$SSHD_KNOWN_HOSTS" "$2" --to "$3" --json > "$B/o" 2> "$B/e" || { cat "$B/e" >&2; return 1; }
  e=$(date +%s.%N)
  python3 -c "print(round($e - $s, 2))"
}
for round in $(seq 1 "$ROUNDS"); do
  for side in $(ab_order "$round"); do
    dir=$A
    [ $side = B ] && dir=$B_BUILD
    rm -rf "$B/dst"
    sync  # the previous run's writes and deletions are not left to slow this one
    echo "round $round $side repository first push: $(push "$dir" "$B/repo" "$B/dst/repo") s"
    echo "round $round $side repository no-change re-push: $(push "$dir" "$B/repo" "$B/dst/repo") s"
    echo "round $round $side ${BIG_MIB} MiB file: $(push "$dir" "$B/big" "$B/dst/big") s"
  done
done
