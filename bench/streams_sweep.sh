#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent backup of one file with --streams 1, 2, 4, 8 through bench/delay_proxy.py: wall time
# and each connection's MB/s (from --json "per_stream"). Complements bench/streams_bench.sh.
#   MIB=256 RTT=50 NS="1 2 4 8" bash bench/streams_sweep.sh [BUILD_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
source "$ROOT/bench/bench_env.sh"
bench_setup streams-sweep >/dev/null
mkdir -p "$B/src"; openssl rand -out "$B/src/m.bin" $((${MIB:-256} * 1024 * 1024))
PORT=$(sshd_free_port)
python3 "$ROOT/bench/delay_proxy.py" "$PORT" "$SSHD_PORT" "${RTT:-50}" &
PROXY_PID=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PORT /" "$SSHD_KNOWN_HOSTS" > "$B/kh"
for n in ${NS:-1 2 4 8}; do
  rm -rf "$B/d"; sync
  /usr/bin/time -f "streams $n: %e s wall, %U s user, %S s system (gpurent)" "$BUILD/gpurent" backup --host "$SSHD_USER@127.0.0.1:$PORT" \
    --identity "$SSHD_KEY" --known-hosts "$B/kh" "$B/src" --to "$B/d" --json --streams "$n" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('  seconds', d['seconds'], 'per stream MB/s', [s['mb_per_s'] for s in d['per_stream']])"
done
