#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parallel streams (issue #28): one large file at several round-trip times through
# bench/delay_proxy.py (one proxied TCP connection per stream, each with its own 6 MiB in
# flight), both directions: `gpurent backup` and `gpurent push` by default (backup: one
# connection; push: one per 16 MiB up to 6), with --streams 1 and with --streams $BENCH_STREAMS
# (default 4), against scp and rsync in the same run.
# Prints a Markdown table (and the peak RSS of gpurent) for docs/benchmarks.md.
#
#   bash bench/streams_bench.sh [BUILD_DIR]      (default build/)
# Env: BENCH_MIB (default 1024), BENCH_RTTS (default "0 50 100"), BENCH_STREAMS (4), BENCH_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
GPURENT=$BUILD/gpurent
[ -x "$GPURENT" ] || { echo "build gpurent first ($GPURENT missing)" >&2; exit 1; }
MIB=${BENCH_MIB:-1024}
RTTS=${BENCH_RTTS:-0 50 100}
NS=${BENCH_STREAMS:-4}
source "$ROOT/bench/bench_env.sh"
bench_setup streams

mkdir -p "$B/src" "$B/up"
openssl rand -out "$B/src/model.safetensors" $((MIB * 1024 * 1024))
ln "$B/src/model.safetensors" "$B/up/model.safetensors"
cat "$B/src/model.safetensors" > /dev/null
ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"
U=$SSHD_USER
H=127.0.0.1
t() { local a b; a=$(now); "$@" > "$B/last.out" 2> "$B/last.err" || { cat "$B/last.err" >&2; echo "FAILED: $*" >&2; exit 1; }; b=$(now); echo "$b - $a" | bc; }
rss() { /usr/bin/time -f %M -o "$B/rss" "$@" > "$B/last.out" 2> "$B/last.err" || { cat "$B/last.err" >&2; exit 1; }; cat "$B/rss"; }
down_fresh() { rm -rf "$B/dst"; mkdir -p "$B/dst"; sync; }
up_fresh() { rm -rf "$B/remote_up"; sync; }

echo "| RTT | direction | gpurent default | gpurent --streams 1 | gpurent --streams $NS | scp | rsync | best gpurent vs scp | best gpurent vs rsync |"
echo "|---|---|---|---|---|---|---|---|---|"
for rtt in $RTTS; do
  PORT=$SSHD_PORT
  KH=$SSHD_KNOWN_HOSTS
  if [ "$rtt" != 0 ]; then
    PORT=$(sshd_free_port)
    python3 "$ROOT/bench/delay_proxy.py" "$PORT" "$SSHD_PORT" "$rtt" &
    PROXY_PID=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
    KH=$B/known_hosts_$rtt
    sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PORT /" "$SSHD_KNOWN_HOSTS" > "$KH"
  fi
  SSHO="-p $PORT -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$KH -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
  SCPO="-P $PORT -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$KH -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
  GB="$GPURENT backup --host $U@$H:$PORT --identity $SSHD_KEY --known-hosts $KH --json"
  GP="$GPURENT --json push --host $U@$H:$PORT --identity $SSHD_KEY --known-hosts $KH"
  echo "RTT $rtt ms: backup ..." >&2
  down_fresh; d0=$(t $GB "$B/src" --to "$B/dst/g")
  down_fresh; d1=$(t $GB "$B/src" --to "$B/dst/g" --streams 1)
  down_fresh; dn=$(t $GB "$B/src" --to "$B/dst/g" --streams "$NS")
  down_fresh; ds=$(t scp -q $SCPO "$U@$H:$B/src/model.safetensors" "$B/dst/")
  down_fresh; dr=$(t rsync -a -e "ssh $SSHO" "$U@$H:$B/src/model.safetensors" "$B/dst/")
  echo "RTT $rtt ms: push ..." >&2
  up_fresh; u0=$(t $GP "$B/up" --to "$B/remote_up")
  up_fresh; u1=$(t $GP "$B/up" --to "$B/remote_up" --streams 1)
  up_fresh; un=$(t $GP "$B/up" --to "$B/remote_up" --streams "$NS")
  up_fresh; mkdir -p "$B/remote_up"; us=$(t scp -q $SCPO "$B/up/model.safetensors" "$U@$H:$B/remote_up/")
  up_fresh; mkdir -p "$B/remote_up"; ur=$(t rsync -a -e "ssh $SSHO" "$B/up/model.safetensors" "$U@$H:$B/remote_up/")
  row() {
    local best
    best=$(printf '%s\n%s\n%s\n' "$2" "$3" "$4" | sort -g | head -1)
    printf '| %s ms | %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f | %.2f |\n' "$rtt" "$1" "$2" "$3" "$4" "$5" "$6" \
      "$(echo "scale=3; $5 / $best" | bc)" "$(echo "scale=3; $6 / $best" | bc)"
  }
  row "backup (down)" "$d0" "$d1" "$dn" "$ds" "$dr"
  row "push (up)" "$u0" "$u1" "$un" "$us" "$ur"
  if [ -n "$PROXY_PID" ]; then kill "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true; PROXY_PID=; fi
done
echo
echo "Peak RSS of gpurent backup of the ${MIB} MiB file on loopback (KiB), by --streams:"
for n in 1 2 4 8; do down_fresh; echo "  --streams $n: $(rss $GPURENT backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$B/src" --to "$B/dst/g" --streams $n)"; done
