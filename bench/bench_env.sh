# SPDX-License-Identifier: MIT
# Sourced by the benches in bench/: bench_setup NAME makes the bench's directory $B (or uses
# $BENCH_DIR), points HOME and gpurent's state into it, starts a loopback sshd
# (tests/e2e/sshd.sh) and removes it all on exit, with the delay proxy whose pid is in
# $PROXY_PID if one was started, and those bench_proxy started. Needs $ROOT.
bench_setup() {
  B=${BENCH_DIR:-$(mktemp -d "/tmp/gpurent-$1.XXXXXX")}
  mkdir -p "$B"
  export HOME=$B/home XDG_STATE_HOME=$B/state GPURENT_STATE_DIR=$B/state/gpurent NO_COLOR=1
  mkdir -p "$HOME"
  unset SSH_AUTH_SOCK
  source "$ROOT/tests/e2e/sshd.sh"
  PROXY_PID=
  PROXY_PIDS=
  trap bench_cleanup EXIT
  sshd_start "$B/sshd"
}

bench_cleanup() {
  local p
  for p in $PROXY_PID $PROXY_PIDS; do kill "$p" 2>/dev/null || true; done
  sshd_stop
  rm -rf "$B"
}

# ab_order ROUND: the sides of an A/B bench in the order this round runs them, "A B" in odd
# rounds and "B A" in even ones, so that neither side always goes first.
ab_order() {
  if [ $(($1 % 2)) -eq 0 ]; then echo "B A"; else echo "A B"; fi
}

# Timing helpers (after bench_setup: they write under $B). now: a clock in seconds; t CMD...:
# runs CMD after `sync` (so that no writeback of the cases before it throttles its writes: the
# kernel makes a writer wait once dirty pages pile up, whichever tool it is), prints its wall time
# in seconds (its output dropped; on failure its stderr and exit);
# median: of the numbers on stdin; med KEY: the median of $B/KEY.times; ratio A B: A/B, 2 places.
now() { date +%s.%N; }
t() { local a b; sync; a=$(now); "$@" > /dev/null 2> "$B/last.err" || { cat "$B/last.err" >&2; echo "FAILED: $*" >&2; exit 1; }; b=$(now); echo "$b - $a" | bc; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
med() { median < "$B/$1.times"; }
ratio() { echo "scale=2; $1 / $2" | bc; }

# bench_proxy RTT: bench/delay_proxy.py adding RTT ms in front of the sshd, stopped by bench_cleanup;
# its port in $PROXY_PORT, a known_hosts file for it in $B/kh_RTT.
bench_proxy() {
  local rtt=$1
  PROXY_PORT=$(sshd_free_port)
  python3 "$ROOT/bench/delay_proxy.py" "$PROXY_PORT" "$SSHD_PORT" "$rtt" > /dev/null 2>&1 &
  PROXY_PIDS="$PROXY_PIDS $!"
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null && break; sleep 0.05; done
  sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PROXY_PORT /" "$SSHD_KNOWN_HOSTS" > "$B/kh_$rtt"
}

# bench_tree DIR N: issue #43's tree, N files of 200-6,000 random bytes (seeded) in 2 x 256
# folders, no .git, read once into the page cache.
bench_tree() {
  python3 - "$1" "$2" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(43)
for i in range(n):
    d = os.path.join(root, "a%03d" % (i % 2), "b%03d" % ((i // 2) % 256))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(rng.randbytes(rng.randrange(200, 6001)))
PY
  find "$1" -type f -exec cat {} + > /dev/null
}
