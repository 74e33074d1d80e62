#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue #43's cases, in one run, each against the tool a user would otherwise use over the same
# loopback sshd and the same algorithms (aes128-ctr + hmac-sha2-256 + curve25519-sha256), with
# bench/delay_proxy.py for latency. Prints each ratio beside its goal and "met"/"NOT met":
#   - push of a tree of BENCH_FILES (20,000) files of 200-6,000 random bytes in 2 x 256 folders,
#     no .git: first push and no-change re-push against rsync -a, on loopback and at 50 ms;
#   - push of one BENCH_PUSH_MIB (256) MiB random file at 50 ms against rsync -a;
#   - backup of one BENCH_BACKUP_MIB (512) MiB random file on loopback and at 100 ms against scp.
# Speeds are compared as times: "0.80x" is gpurent's time over the other tool's.
#
#   bash bench/transfer_goals.sh [BUILD_DIR]     (default build/; not part of the test suite;
#   CI runs it after the suites only when asked: GPURENT_PERF=1 bash .ci/run)
# Env: BENCH_ROUNDS (1; the median of the rounds), BENCH_DIR (a temp dir; needs ~2 GiB),
# BENCH_FILES, BENCH_PUSH_MIB, BENCH_BACKUP_MIB; GPURENT_VERBOSE=1 adds -v to gpurent;
# BENCH_FRESH_FS=1 (root): the whole run on a new ext4 file system (a loop-mounted sparse file),
# as on a clean machine. ext4 skips inodes freed in the last minutes when it allocates new ones
# (perf: recently_deleted, find_get_block_common), so on a file system where trees were just
# deleted every tool's file creation slows by up to 3x, unevenly; nothing is deleted until the
# run ends, each case writing into its own directory.
# Exit 0 whether goals are met or not (it measures; it does not gate).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
GPURENT=$BUILD/gpurent
[ -x "$GPURENT" ] || { echo "build gpurent first ($GPURENT missing)" >&2; exit 1; }
ROUNDS=${BENCH_ROUNDS:-1}
FILES=${BENCH_FILES:-20000}
PUSH_MIB=${BENCH_PUSH_MIB:-256}
BACKUP_MIB=${BENCH_BACKUP_MIB:-512}
source "$ROOT/bench/bench_env.sh"
if [ "${BENCH_FRESH_FS:-0}" = 1 ]; then
  FS_IMG=$(mktemp /var/tmp/gpurent-bench-fs.XXXXXX)
  FS_MNT=$(mktemp -d /tmp/gpurent-bench-mnt.XXXXXX)
  # Inode tables and journal written now: lazily, ext4lazyinit writes them in the background for
  # the first minutes after mounting, which slowed the first cases of a run by up to 1.3x.
  truncate -s 8G "$FS_IMG" && mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$FS_IMG" && mount -o loop "$FS_IMG" "$FS_MNT" ||
    { echo "BENCH_FRESH_FS=1 needs root, mkfs.ext4 and a loop device" >&2; rm -f "$FS_IMG"; exit 1; }
  export BENCH_DIR=$FS_MNT/b
fi
bench_setup transfer-goals
if [ "${BENCH_FRESH_FS:-0}" = 1 ]; then
  trap 'bench_cleanup; umount "$FS_MNT"; rmdir "$FS_MNT"; rm -f "$FS_IMG"' EXIT
fi
VFLAG=${GPURENT_VERBOSE:+-v}

echo "generating $FILES files in $B/tree, a $PUSH_MIB MiB and a $BACKUP_MIB MiB file ..." >&2
bench_tree "$B/tree" "$FILES"
mkdir -p "$B/big"
openssl rand -out "$B/big/weights.safetensors" $((PUSH_MIB * 1024 * 1024))
openssl rand -out "$B/backup.safetensors" $((BACKUP_MIB * 1024 * 1024))
cat "$B/big/weights.safetensors" "$B/backup.safetensors" > /dev/null   # the page cache

ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"
U=$SSHD_USER
H=127.0.0.1

ssh_opts() {  # ssh_opts PORT KNOWN_HOSTS
  echo "-p $1 -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$2 -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
}

push_cases() {  # push_cases NAME PORT KNOWN_HOSTS WITH_BIG
  local name=$1 port=$2 kh=$3 big=$4 r
  local G="$GPURENT push $VFLAG --host $U@$H:$port --identity $SSHD_KEY --known-hosts $kh --json"
  local SSHO
  SSHO=$(ssh_opts "$port" "$kh")
  for r in $(seq 1 "$ROUNDS"); do
    echo "$name: push round $r/$ROUNDS ..." >&2
    local D=$B/dst-$name-$r
    mkdir -p "$D"
    t $G "$B/tree" --to "$D/g" >> "$B/$name.first.gpurent.times"
    t rsync -a -e "ssh $SSHO" "$B/tree/" "$U@$H:$D/r/" >> "$B/$name.first.rsync.times"
    t $G "$B/tree" --to "$D/g" >> "$B/$name.noop.gpurent.times"
    t rsync -a -e "ssh $SSHO" "$B/tree/" "$U@$H:$D/r/" >> "$B/$name.noop.rsync.times"
    if [ "$big" = 1 ]; then
      t $G "$B/big" --to "$D/gb" >> "$B/$name.big.gpurent.times"
      t rsync -a -e "ssh $SSHO" "$B/big/" "$U@$H:$D/rb/" >> "$B/$name.big.rsync.times"
      cmp "$B/big/weights.safetensors" "$D/gb/weights.safetensors"
    fi
    diff -r "$B/tree" "$D/g" > /dev/null && diff -r "$B/tree" "$D/r" > /dev/null
  done
}

backup_cases() {  # backup_cases NAME PORT KNOWN_HOSTS
  local name=$1 port=$2 kh=$3 r
  local G="$GPURENT backup $VFLAG --host $U@$H:$port --identity $SSHD_KEY --known-hosts $kh --json"
  local SCPO
  SCPO=$(ssh_opts "$port" "$kh" | sed 's/^-p /-P /')
  for r in $(seq 1 "$ROUNDS"); do
    echo "$name: backup round $r/$ROUNDS ..." >&2
    local D=$B/dst-$name-$r
    mkdir -p "$D"
    t $G "$B/backup.safetensors" --to "$D/g" >> "$B/$name.backup.gpurent.times"
    t scp -q $SCPO "$U@$H:$B/backup.safetensors" "$D/s.safetensors" >> "$B/$name.backup.scp.times"
    cmp "$B/backup.safetensors" "$(find "$D/g" -type f -name backup.safetensors | head -1)"
    rm -f "$D/s.safetensors"  # a file, not a tree: no inodes to skip
  done
}

push_cases lo "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" 0
backup_cases lo "$SSHD_PORT" "$SSHD_KNOWN_HOSTS"
bench_proxy 50
push_cases ms50 "$PROXY_PORT" "$B/kh_50" 1
bench_proxy 100
backup_cases ms100 "$PROXY_PORT" "$B/kh_100"

MET=0
ALL=0
# row LABEL GPURENT_KEY OTHER_KEY OTHER_NAME GOAL_RATIO GOAL_TEXT: ratio = gpurent's time / the other's.
row() {
  local g o ratio ok
  g=$(med "$2"); o=$(med "$3")
  ratio=$(echo "scale=3; $g / $o" | bc)
  ok=$(echo "$ratio <= $5" | bc)
  ALL=$((ALL + 1)); MET=$((MET + ok))
  printf '| %s | %.2f s | %s %.2f s | %.2fx | %s | %s |\n' "$1" "$g" "$4" "$o" "$ratio" "$6" "$([ "$ok" = 1 ] && echo met || echo NOT met)"
}
echo
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) vCPU, load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS round(s), median; $FILES files, $PUSH_MIB MiB push, $BACKUP_MIB MiB backup."
echo
echo "| case | gpurent | other tool | time ratio | goal | |"
echo "|---|---|---|---|---|---|"
row "loopback: tree, first push" lo.first.gpurent lo.first.rsync rsync 1.10 "<= 1.10x rsync's time"
row "loopback: tree, no-change re-push" lo.noop.gpurent lo.noop.rsync rsync 1.10 "<= 1.10x rsync's time"
row "loopback: backup ${BACKUP_MIB} MiB" lo.backup.gpurent lo.backup.scp scp 1.10 "<= 1.10x scp's time"
row "50 ms: tree, first push" ms50.first.gpurent ms50.first.rsync rsync 0.909 ">= 1.1x rsync's speed"
row "50 ms: tree, no-change re-push" ms50.noop.gpurent ms50.noop.rsync rsync 0.40 "<= 0.4x rsync's no-op time"
row "50 ms: ${PUSH_MIB} MiB file" ms50.big.gpurent ms50.big.rsync rsync 0.50 ">= 2x rsync's speed"
row "100 ms: backup ${BACKUP_MIB} MiB" ms100.backup.gpurent ms100.backup.scp scp 0.222 ">= 4.5x scp's speed"
echo
echo "goals met: $MET of $ALL"
