#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Large files as byte ranges over several SSH connections (sync/range_plan.hpp), against a real
# OpenSSH sshd on 127.0.0.1: a 200 MiB file over 4 streams arrives byte-identical in both
# directions; a backup killed with SIGKILL is resumed and fetches only the ranges its ledger
# does not hold (the bytes are counted); a file rewritten during the copy is reported and the
# copy is of one version; --streams is checked; the host key of the extra connections is pinned.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-streams-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS GPURENT_PUSH_SESSIONS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
source "$GPURENT_SOURCE_DIR/tests/e2e/small_disk.sh"
PROXY_PID=""
MOUNTED=""
cleanup() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
  if [ -n "$MOUNTED" ]; then umount "$MOUNTED" 2>/dev/null || true; fi
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# exec: run in the background, the PID is gpurent's own (a SIGKILL must reach it, not a subshell).
G() { exec_or_call "$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }
exec_or_call() { if [ "${BACKGROUND:-0}" = 1 ]; then exec "$@"; else "$@"; fi; }
MIB=$((1024 * 1024))
# kill_when_ledger PID LEDGER: SIGKILL the backup PID as soon as its range ledger holds a range.
kill_when_ledger() {
  for _ in $(seq 1 1000); do
    [ -s "$2" ] && break
    kill -0 "$1" 2>/dev/null || break
    sleep 0.01
  done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

R=$T/remote
mkdir -p "$R"
head -c $((200 * MIB)) /dev/urandom > "$R/model.safetensors"
echo '{"step": 100}' > "$R/trainer_state.json"
SIZE=$((200 * MIB + $(stat -c %s "$R/trainer_state.json")))

echo "== backup: 200 MiB over 4 streams arrives byte-identical, verified, per stream reported"
G "$R" --to "$T/d1" --streams 4 --json > "$T/out.json"
cmp "$R/model.safetensors" "$T/d1/model.safetensors" || fail "copy differs"
cmp "$R/trainer_state.json" "$T/d1/trainer_state.json" || fail "small file differs"
[ "$(jq_get "$T/out.json" 'd["verified"]')" = True ] || fail "not verified: $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'd["streams"]')" = 4 ] || fail "streams: $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'len(d["per_stream"])')" = 4 ] || fail "per_stream: $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'sum(s["bytes"] for s in d["per_stream"])')" = $((200 * MIB)) ] || fail "per_stream bytes: $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'd["bytes_copied"]')" = "$SIZE" ] || fail "bytes_copied: $(cat "$T/out.json")"
[ "$(stat -c %Y "$R/model.safetensors")" = "$(stat -c %Y "$T/d1/model.safetensors")" ] || fail "mtime not kept"
ls -a "$T/d1" | grep -q 'gpurent-partial' && fail "partial or ledger left behind: $(ls -a "$T/d1")"

echo "== backup without --streams (and --streams 1): one connection, no ranges"
G "$R" --to "$T/d2" --json > "$T/out1.json"
[ "$(jq_get "$T/out1.json" 'd["streams"], d["per_stream"]')" = "(1, [])" ] || fail "default streams: $(cat "$T/out1.json")"
rm -rf "$T/d2"
G "$R" --to "$T/d2" --streams 1 --json > "$T/out1.json"
cmp "$R/model.safetensors" "$T/d2/model.safetensors" || fail "single-stream copy differs"
[ "$(jq_get "$T/out1.json" 'd["streams"], d["per_stream"]')" = "(1, [])" ] || fail "streams 1: $(cat "$T/out1.json")"
set +e
G "$R" --to "$T/d2" --streams 0 > /dev/null 2> "$T/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--streams" "$T/err" || fail "--streams 0 accepted (exit $rc): $(cat "$T/err")"

echo "== backup: killed with SIGKILL, then resumed: only the ranges not in the ledger travel"
L="$T/d3/model.safetensors.gpurent-partial.ranges"
(BACKGROUND=1 G "$R" --to "$T/d3" --streams 4 --json > /dev/null 2>&1) &
kill_when_ledger $! "$L"
[ -s "$L" ] || fail "no range ledger was written before the run ended"
DONE=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(r['length'] for r in d['done']), len(d['done']))" "$L")
DONE_BYTES=${DONE% *}
DONE_RANGES=${DONE#* }
[ "$DONE_BYTES" -lt $((200 * MIB)) ] || fail "the kill came after every range ($DONE)"
G "$R" --to "$T/d3" --streams 4 --json > "$T/out3.json"
cmp "$R/model.safetensors" "$T/d3/model.safetensors" || fail "resumed copy differs"
[ "$(jq_get "$T/out3.json" 'd["verified"]')" = True ] || fail "resume not verified: $(cat "$T/out3.json")"
[ "$(jq_get "$T/out3.json" 'd["ranges_resumed"]')" = "$DONE_RANGES" ] || fail "ranges_resumed: $(cat "$T/out3.json") vs $DONE"
# The ranges carried exactly the bytes the ledger did not hold; the small file travels again
# (or resumes from its own partial copy).
[ "$(jq_get "$T/out3.json" 'sum(s["bytes"] for s in d["per_stream"])')" = $((200 * MIB - DONE_BYTES)) ] || fail "resume fetched $(jq_get "$T/out3.json" 'd["per_stream"]') in ranges, expected $((200 * MIB - DONE_BYTES)) ($DONE)"
[ "$(jq_get "$T/out3.json" 'd["bytes_copied"]')" -le $((SIZE - DONE_BYTES)) ] || fail "resume copied too much: $(cat "$T/out3.json")"
[ -e "$L" ] && fail "ledger left after the verified copy"

echo "== backup: a damaged ledger or a range damaged on disk is never trusted"
(BACKGROUND=1 G "$R" --to "$T/d4" --streams 4 --json > /dev/null 2>&1) &
L4="$T/d4/model.safetensors.gpurent-partial.ranges"
kill_when_ledger $! "$L4"
[ -s "$L4" ] || fail "no ledger (d4)"
# Flip bytes inside a range the ledger says is done: the whole-file SHA-256 catches it, and
# the file is fetched again from byte 0.
OFF=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['done'][0]['offset'])" "$L4")
printf 'XXXXXXXX' | dd of="$T/d4/model.safetensors.gpurent-partial" bs=1 seek="$OFF" conv=notrunc status=none
G "$R" --to "$T/d4" --streams 4 --json > "$T/out4.json"
cmp "$R/model.safetensors" "$T/d4/model.safetensors" || fail "a damaged resumed range was published"
[ "$(jq_get "$T/out4.json" 'd["verified"]')" = True ] || fail "d4 not verified: $(cat "$T/out4.json")"
(BACKGROUND=1 G "$R" --to "$T/d7" --streams 4 --json > /dev/null 2>&1) &
L7="$T/d7/model.safetensors.gpurent-partial.ranges"
kill_when_ledger $! "$L7"
echo '{"gpurent_range_ledger": 1, "size": 1, "done": [' > "$L7"  # damaged: not read, every range fetched
G "$R" --to "$T/d7" --streams 4 --json > "$T/out7.json"
cmp "$R/model.safetensors" "$T/d7/model.safetensors" || fail "copy after a damaged ledger differs"
[ "$(jq_get "$T/out7.json" 'd["ranges_resumed"], sum(s["bytes"] for s in d["per_stream"])')" = "(0, $((200 * MIB)))" ] || fail "damaged ledger trusted: $(cat "$T/out7.json")"

echo "== backup: the local disk fills during the ranges: exit 1, the space given back, the last copy intact"
mkdir -p "$T/rfull"
small_disk "$T/full" 48
G_ARGS=(--host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS")
disk_full_backup "$T/rfull" "$T/full/b" $((80 * MIB)) --streams 4
[ ! -e "$T/full/b/zz_big.bin.gpurent-partial" ] || fail "the partial file of the full disk was kept"
[ ! -e "$T/full/b/zz_big.bin.gpurent-partial.ranges" ] || fail "the ledger of the full disk was kept"
if [ -n "$MOUNTED" ]; then umount "$MOUNTED"; MOUNTED=""; fi

echo "== backup through a slow link: a file rewritten during the copy is reported, one version kept"
PP=$(sshd_free_port)
python3 "$GPURENT_SOURCE_DIR/bench/delay_proxy.py" "$PP" "$SSHD_PORT" 40 &
PROXY_PID=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PP") 2>/dev/null && break; sleep 0.05; done
sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PP /" "$SSHD_KNOWN_HOSTS" > "$T/kh_wan"
W() { exec_or_call "$GPURENT_BIN" backup --host "$SSHD_USER@127.0.0.1:$PP" --identity "$SSHD_KEY" --known-hosts "$T/kh_wan" "$@"; }
mkdir -p "$T/r2"
head -c $((96 * MIB)) /dev/urandom > "$T/r2/ckpt.bin"
head -c $((96 * MIB)) /dev/urandom > "$T/r2.new"  # ready before, so the rewrite is one rename
(BACKGROUND=1 W "$T/r2" --to "$T/d5" --streams 4 --json > "$T/out5.json") &
PID=$!
L5="$T/d5/ckpt.bin.gpurent-partial.ranges"
for _ in $(seq 1 2000); do [ -s "$L5" ] && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.01; done
[ -s "$L5" ] || fail "the slow copy ended before a range landed"
touch -d '+2 seconds' "$T/r2.new"
mv "$T/r2.new" "$T/r2/ckpt.bin"
[ ! -s "$T/out5.json" ] || fail "the copy ended before the rewrite"  # its report comes at the end
wait "$PID" || fail "backup with a rewrite failed: $(cat "$T/out5.json")"
cmp "$T/r2/ckpt.bin" "$T/d5/ckpt.bin" || fail "the copy is not the file's last version (spliced?)"
[ "$(jq_get "$T/out5.json" 'd["streams"]')" = 4 ] || fail "streams on a 40 ms link: $(cat "$T/out5.json")"
jq_get "$T/out5.json" 'd["warnings"]' | grep -q "changed on the server while it was copied" || fail "rewrite not reported: $(cat "$T/out5.json")"

echo "== push: 200 MiB over 4 streams arrives byte-identical"
mkdir -p "$T/up"
cp "$R/model.safetensors" "$T/up/"
echo 'print(1)' > "$T/up/train.py"
"$GPURENT_BIN" --json push --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$T/up" --to "$T/remote_up" --streams 4 > "$T/push.json"
cmp "$T/up/model.safetensors" "$T/remote_up/model.safetensors" || fail "pushed copy differs"
[ "$(jq_get "$T/push.json" 'd["verified"], d["streams"]')" = "(True, 4)" ] || fail "push: $(cat "$T/push.json")"
[ "$(jq_get "$T/push.json" 'sum(s["bytes"] for s in d["per_stream"]) >= 200 * 1024 * 1024')" = True ] || fail "push per_stream: $(cat "$T/push.json")"

echo "== push: killed with SIGKILL, then pushed again: only the ranges the server's ledger lacks travel"
P() { exec_or_call "$GPURENT_BIN" --json push --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }
PL="$T/remote_up2/model.safetensors.gpurent-partial.ranges"
(BACKGROUND=1 P "$T/up" --to "$T/remote_up2" --streams 4 > /dev/null 2>&1) &
kill_when_ledger $! "$PL"
sleep 1  # the server's range commands still running see the end of their input and finish
[ -s "$PL" ] || fail "no server-side range ledger before the push ended"
PDONE=$(awk '{n += $2; c += 1} END {print n, c}' "$PL")
[ "${PDONE% *}" -lt $((200 * MIB)) ] || fail "the kill came after every range ($PDONE)"
P "$T/up" --to "$T/remote_up2" --streams 4 > "$T/push2.json"
cmp "$T/up/model.safetensors" "$T/remote_up2/model.safetensors" || fail "resumed push differs"
[ "$(jq_get "$T/push2.json" 'd["verified"], d["ranges_resumed"]')" = "(True, ${PDONE#* })" ] || fail "push resume: $(cat "$T/push2.json") vs $PDONE"
[ "$(jq_get "$T/push2.json" 'sum(s["bytes"] for s in d["per_stream"]) - (d["bytes_sent"] - 200 * 1024 * 1024)')" = $((200 * MIB - ${PDONE% *})) ] || fail "push resent: $(cat "$T/push2.json") vs $PDONE"
[ -e "$PL" ] && fail "server-side ledger left after the push"

echo "== push: a ledger line for bytes the local file no longer has is never trusted"
PL3="$T/remote_up3/model.safetensors.gpurent-partial.ranges"
(BACKGROUND=1 P "$T/up" --to "$T/remote_up3" --streams 4 > /dev/null 2>&1) &
kill_when_ledger $! "$PL3"
sleep 1
[ -s "$PL3" ] || fail "no server-side range ledger (remote_up3)"
# Change 4 KiB inside the first recorded range: that line no longer matches, the others do.
FIRST_OFF=$(sort -n "$PL3" | head -1 | cut -d' ' -f1)
head -c 4096 /dev/urandom | dd of="$T/up/model.safetensors" bs=1 seek=$((FIRST_OFF + 4096)) conv=notrunc status=none
KEPT=$(awk -v o="$FIRST_OFF" '$1 != o {c += 1} END {print c + 0}' "$PL3")
P "$T/up" --to "$T/remote_up3" --streams 4 > "$T/push3.json"
cmp "$T/up/model.safetensors" "$T/remote_up3/model.safetensors" || fail "push after a change differs"
[ "$(jq_get "$T/push3.json" 'd["verified"], d["ranges_resumed"]')" = "(True, $KEPT)" ] || fail "stale ledger line trusted: $(cat "$T/push3.json"), expected $KEPT kept of $(wc -l < "$PL3")"

echo "== extra connections accept only the host key the first one verified"
# The first connection trusts on first use; every other one must present that same key.
"$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$T/kh_new" --accept-new-host-key \
  "$R" --to "$T/d6" --streams 3 --json > "$T/out6.json"
[ "$(jq_get "$T/out6.json" 'd["streams"]')" = 3 ] || fail "tofu streams: $(cat "$T/out6.json")"
cmp "$R/model.safetensors" "$T/d6/model.safetensors" || fail "tofu copy differs"

echo "PASS"
