#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times `gpurent backup` against scp -r, sftp (batch get -r) and rsync -a over the same loopback
# sshd and the same algorithms (aes128-ctr + hmac-sha2-256 + curve25519-sha256: what libssh2
# 1.10 negotiates), in the same run, on a generated checkpoint-like tree, plus the no-change
# re-run against rsync's. Writes the "Backup" section of docs/benchmarks.md.
#
#   bash bench/backup_bench.sh [BUILD_DIR]      (default build/)
# Env: BENCH_ROUNDS (default 3; the median is reported), BENCH_BIG_MIB (1024), BENCH_DIR
# (default a temp dir under /tmp; needs ~3x the tree size free), BENCH_NO_DOC=1 (print only),
# BENCH_RTT_MS (default 50; 0 skips the WAN part): the same tools through bench/delay_proxy.py,
# which adds that round-trip time, on a 256 MiB file and 100 small files.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
GPURENT=$BUILD/gpurent
[ -x "$GPURENT" ] || { echo "build gpurent first ($GPURENT missing)" >&2; exit 1; }
ROUNDS=${BENCH_ROUNDS:-3}
BIG_MIB=${BENCH_BIG_MIB:-1024}
source "$ROOT/bench/bench_env.sh"
bench_setup bench

echo "generating the tree in $B/src ..." >&2
mkdir -p "$B/src/checkpoints" "$B/src/shards" "$B/src/small"
for i in 1 2; do openssl rand -out "$B/src/checkpoints/model-$i.safetensors" $((BIG_MIB * 1024 * 1024)); done
for i in $(seq -w 1 20); do openssl rand -out "$B/src/shards/shard-$i.bin" $((20 * 1024 * 1024)); done
for d in logs configs tokenizer; do mkdir -p "$B/src/small/$d"; done
python3 - "$B/src/small" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(2000):
    d = ("logs", "configs", "tokenizer")[0 if i < 1000 else (1 if i < 1500 else 2)]
    with open(os.path.join(root, d, f"part-{i:04d}.txt"), "wb") as f:
        f.write(os.urandom(4096))
PY
cat "$B/src/checkpoints/"* "$B/src/shards/"* "$B/src/small"/*/* > /dev/null   # warm the page cache

ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"
SSHO="$(sshd_ssh_opts) $ALG"
SCPO="-P $SSHD_PORT -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$SSHD_KNOWN_HOSTS -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
H=127.0.0.1
U=$SSHD_USER
G="$GPURENT backup --host $SSHD_TARGET --identity $SSHD_KEY --known-hosts $SSHD_KNOWN_HOSTS --json"

fresh() { rm -rf "$B/dst"; mkdir -p "$B/dst"; }

declare -A R
measure() {  # measure KEY SETUP_FN CMD...
  local key=$1 setup=$2; shift 2
  "$setup"
  t "$@" >> "$B/$key.times"
}
case_cmds() {  # case_cmds NAME REMOTE_PATH (file or dir)
  local name=$1 src=$2 base
  base=$(basename "$src")
  measure "$name.gpurent" fresh $G "$src" --to "$B/dst/$base"
  measure "$name.scp" fresh scp -q -r $SCPO "$U@$H:$src" "$B/dst/"
  echo "get -r $src $B/dst/" > "$B/batch"
  measure "$name.sftp" fresh sftp -q -b "$B/batch" $SCPO "$U@$H"
  measure "$name.rsync" fresh rsync -a -e "ssh $SSHO" "$U@$H:$src" "$B/dst/"
}
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r/$ROUNDS ..." >&2
  case_cmds big "$B/src/checkpoints/model-1.safetensors"
  case_cmds small "$B/src/small"
  case_cmds tree "$B/src"
  # No-change re-runs: the destination is complete and up to date.
  fresh
  $G "$B/src" --to "$B/dst/g" > /dev/null
  rsync -a -e "ssh $SSHO" "$U@$H:$B/src/" "$B/dst/r/"
  t $G "$B/src" --to "$B/dst/g" >> "$B/noop.gpurent.times"
  t rsync -a -e "ssh $SSHO" "$U@$H:$B/src/" "$B/dst/r/" >> "$B/noop.rsync.times"
done

# WAN latency: the same sshd behind a proxy that adds BENCH_RTT_MS of round trip.
RTT=${BENCH_RTT_MS:-50}
WAN_TABLE=""
if [ "$RTT" != 0 ]; then
  echo "WAN part: ${RTT} ms RTT ..." >&2
  mkdir -p "$B/wan/small"
  openssl rand -out "$B/wan/model.safetensors" $((256 * 1024 * 1024))
  for i in $(seq -w 1 100); do head -c 4096 /dev/urandom > "$B/wan/small/part-$i.txt"; done
  cat "$B/wan/model.safetensors" "$B/wan/small/"* > /dev/null
  PP=$(sshd_free_port)
  python3 "$ROOT/bench/delay_proxy.py" "$PP" "$SSHD_PORT" "$RTT" &
  PROXY_PID=$!
  for i in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PP") 2>/dev/null && break; sleep 0.05; done
  sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PP /" "$SSHD_KNOWN_HOSTS" > "$B/known_hosts_wan"
  WSSHO="-p $PP -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$B/known_hosts_wan -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
  WSCPO="-P $PP -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$B/known_hosts_wan -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
  WG="$GPURENT backup --host $U@$H:$PP --identity $SSHD_KEY --known-hosts $B/known_hosts_wan --json"
  wan_case() {  # wan_case NAME REMOTE_PATH
    local name=$1 src=$2
    measure "wan$name.gpurent" fresh $WG "$src" --to "$B/dst/$(basename "$src")"
    measure "wan$name.scp" fresh scp -q -r $WSCPO "$U@$H:$src" "$B/dst/"
    measure "wan$name.rsync" fresh rsync -a -e "ssh $WSSHO" "$U@$H:$src" "$B/dst/"
  }
  wan_case big "$B/wan/model.safetensors"
  wan_case small "$B/wan/small"
  wrow() {  # wrow LABEL KEY
    local g s r
    g=$(median < "$B/$2.gpurent.times"); s=$(median < "$B/$2.scp.times"); r=$(median < "$B/$2.rsync.times")
    printf '| %s | %.2f s | %.2f s (%s) | %.2f s (%s) |\n' "$1" "$g" "$s" "$(echo "scale=2; $s / $g" | bc)" "$r" "$(echo "scale=2; $r / $g" | bc)"
  }
  WAN_TABLE=$(cat <<MD

At ${RTT} ms round-trip time (\`bench/delay_proxy.py\`: each chunk held ${RTT}/2 ms each way, at
most 6 MiB in flight per direction, Linux's default TCP receive-buffer ceiling), one run each:

| case | gpurent backup | scp -r | rsync -a |
|---|---|---|---|
$(wrow "one 256 MiB file" wanbig)
$(wrow "100 x 4 KiB files" wansmall)
MD
)
  kill "$PROXY_PID" 2>/dev/null || true
  PROXY_PID=
fi

# Peak memory of one full gpurent run (KiB of max RSS).
fresh
RSS=$(python3 -c 'import resource,subprocess,sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' $G "$B/src" --to "$B/dst/m")
cmp "$B/src/checkpoints/model-1.safetensors" "$B/dst/m/checkpoints/model-1.safetensors"
diff -r "$B/src" "$B/dst/m" -x .gpurent-manifest.json

TREE_BYTES=$(du -sb "$B/src" | cut -f1)
row() {  # row LABEL KEY
  local g s f r
  g=$(med "$2.gpurent"); s=$(med "$2.scp"); f=$(med "$2.sftp"); r=$(med "$2.rsync")
  printf '| %s | %.2f s | %.2f s (%s) | %.2f s (%s) | %.2f s (%s) |\n' "$1" "$g" "$s" "$(ratio "$s" "$g")" "$f" "$(ratio "$f" "$g")" "$r" "$(ratio "$r" "$g")"
}
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
TABLE=$(cat <<MD
Measured $(date -u +%Y-%m-%d) on $(nproc) vCPU ($CPU), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, loopback sshd
(OpenSSH $(ssh -V 2>&1 | cut -d, -f1 | sed 's/OpenSSH_//'), libssh2 $(dpkg-query -W -f='\${Version}' libssh2-1 2>/dev/null || echo '?')), everything in the page
cache; median of $ROUNDS round(s), each tool once per round, interleaved. All tools use
aes128-ctr + hmac-sha2-256 + curve25519-sha256 (what libssh2 1.10 negotiates; OpenSSH forced
with \`-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256\`).
Tree: 2 x $BIG_MIB MiB + 20 x 20 MiB + 2000 x 4 KiB = $TREE_BYTES bytes. gpurent verifies every file
with SHA-256 computed on the server; the others do not. In brackets: the other tool's time
divided by gpurent's (above 1 = gpurent faster).

| case | gpurent backup | scp -r | sftp get -r | rsync -a |
|---|---|---|---|---|
$(row "one $BIG_MIB MiB file" big)
$(row "2000 x 4 KiB files" small)
$(row "whole tree" tree)

| no-change re-run (whole tree) | gpurent backup | rsync -a |
|---|---|---|
| time | $(printf '%.2f' "$(med noop.gpurent)") s | $(printf '%.2f' "$(med noop.rsync)") s ($(ratio "$(med noop.rsync)" "$(med noop.gpurent)")) |

Peak RSS of gpurent for the whole tree: $((RSS / 1024)) MiB.
$WAN_TABLE

Command: \`bash bench/backup_bench.sh build\` (BENCH_ROUNDS=$ROUNDS, BENCH_BIG_MIB=$BIG_MIB).
MD
)
echo "$TABLE"
if [ -z "${BENCH_NO_DOC:-}" ]; then
  python3 - "$ROOT/docs/benchmarks.md" "$TABLE" <<'PY'
import re, sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
start = text.index("## Backup")
nxt = text.find("\n## ", start + 1)
end = len(text) if nxt < 0 else nxt + 1
body = "## Backup\n\n(`bench/backup_bench.sh`)\n\n" + table.strip() + "\n"
text = text[:start] + body + ("\n" + text[end:] if nxt >= 0 else "")
open(path, "w").write(text)
PY
fi
