# SPDX-License-Identifier: MIT
# Sourced by the benches in bench/: bench_setup NAME makes the bench's directory $B (or uses
# $BENCH_DIR), points HOME and gpurent's state into it, starts a loopback sshd
# (tests/e2e/sshd.sh) and removes it all on exit, with the delay proxy whose pid is in
# $PROXY_PID if one was started. Needs $ROOT.
bench_setup() {
  B=${BENCH_DIR:-$(mktemp -d "/tmp/gpurent-$1.XXXXXX")}
  mkdir -p "$B"
  export HOME=$B/home XDG_STATE_HOME=$B/state GPURENT_STATE_DIR=$B/state/gpurent NO_COLOR=1
  mkdir -p "$HOME"
  unset SSH_AUTH_SOCK
  source "$ROOT/tests/e2e/sshd.sh"
  PROXY_PID=
  trap bench_cleanup EXIT
  sshd_start "$B/sshd"
}

bench_cleanup() {
  if [ -n "$PROXY_PID" ]; then kill "$PROXY_PID" 2>/dev/null || true; fi
  sshd_stop
  rm -rf "$B"
}

# ab_order ROUND: the sides of an A/B bench in the order this round runs them, "A B" in odd
# rounds and "B A" in even ones, so that neither side always goes first.
ab_order() {
  if [ $(($1 % 2)) -eq 0 ]; then echo "B A"; else echo "A B"; fi
}

# Timing helpers (after bench_setup: they write under $B). now: a clock in seconds; t CMD...:
# runs CMD, prints its wall time in seconds (its output dropped; on failure its stderr and exit);
# median: of the numbers on stdin; med KEY: the median of $B/KEY.times; ratio A B: A/B, 2 places.
now() { date +%s.%N; }
t() { local a b; a=$(now); "$@" > /dev/null 2> "$B/last.err" || { cat "$B/last.err" >&2; echo "FAILED: $*" >&2; exit 1; }; b=$(now); echo "$b - $a" | bc; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
med() { median < "$B/$1.times"; }
ratio() { echo "scale=2; $1 / $2" | bc; }
