#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent backup against a real OpenSSH sshd on 127.0.0.1: full copy, no-change re-run, changed
# and deleted files, symlinks, hostile names, host keys, auth, killed connection + resume, disk full.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-backup-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
source "$GPURENT_SOURCE_DIR/tests/e2e/small_disk.sh"
MOUNTED=""
cleanup() {
  sshd_stop
  if [ -n "$MOUNTED" ]; then umount "$MOUNTED" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
G() { "$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }

R=$T/remote
mkdir -p "$R/sub/deeper" "$R/empty_dir"
echo hello > "$R/a.txt"
head -c 1048576 /dev/urandom > "$R/sub/b.bin"
head -c 3000000 /dev/urandom > "$R/sub/deeper/c.bin"
: > "$R/empty.txt"
echo secret > "$R/mode640.txt"; chmod 640 "$R/mode640.txt"
printf 'x' > "$R/$(printf 'new\nline')"
echo spaces > "$R/with spaces ü.txt"
ln -s sub/b.bin "$R/link_in"
ln -s /etc/passwd "$R/link_abs"
ln -s ../../../../etc "$R/sub/link_up"
ln -s /etc "$R/dirlink"
touch -d '2024-01-02 03:04:05.123456789' "$R/a.txt"

echo "== unknown host key is refused without --accept-new-host-key"
set +e
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R" --to "$T/d0" --identity "$SSHD_KEY" --known-hosts "$T/empty_kh" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "unknown host key: exit $rc"
grep -q "unknown" "$T/err" && grep -q "$SSHD_FINGERPRINT" "$T/err" || fail "unknown host key message: $(cat "$T/err")"

echo "== full copy"
G "$R" --to "$T/dst" --json > "$T/out.json"
[ "$(jq_get "$T/out.json" 'd["files_total"]')" = 7 ] || fail "files_total $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'd["files_copied"]')" = 7 ] || fail "files_copied $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'd["verified"]')" = True ] || fail "not verified"
[ "$(jq_get "$T/out.json" 'sorted(d.keys())')" = "['bytes_copied', 'bytes_total', 'failed', 'files_copied', 'files_skipped', 'files_total', 'manifest', 'per_stream', 'ranges_resumed', 'seconds', 'streams', 'verified', 'warnings']" ] || fail "json keys"
diff -r --no-dereference "$R" "$T/dst" -x .gpurent-manifest.json || fail "trees differ"
cmp "$R/sub/deeper/c.bin" "$T/dst/sub/deeper/c.bin"
[ "$(stat -c %a "$T/dst/mode640.txt")" = 640 ] || fail "mode not kept"
[ "$(stat -c %Y.%y "$R/a.txt")" = "$(stat -c %Y.%y "$T/dst/a.txt")" ] || fail "mtime not kept"
[ "$(readlink "$T/dst/link_abs")" = /etc/passwd ] || fail "absolute link not kept as a link"
[ -L "$T/dst/dirlink" ] || fail "dir link followed"
[ -f "$T/dst/$(printf 'new\nline')" ] || fail "newline name"
[ -d "$T/dst/empty_dir" ] || fail "empty dir"
ls "$T/dst" | grep -q gpurent-partial && fail "partial left"

echo "== no-change re-run copies nothing"
G "$R" --to "$T/dst" --json > "$T/out.json"
[ "$(jq_get "$T/out.json" 'd["files_copied"]')" = 0 ] || fail "re-run copied $(cat "$T/out.json")"
[ "$(jq_get "$T/out.json" 'd["files_skipped"]')" = 7 ] || fail "re-run skipped"

echo "== changed and deleted files"
echo "hello again" > "$R/a.txt"
rm "$R/sub/b.bin"
G "$R" --to "$T/dst" --json > "$T/out.json"
[ "$(jq_get "$T/out.json" 'd["files_copied"]')" = 1 ] || fail "changed: $(cat "$T/out.json")"
cmp "$R/a.txt" "$T/dst/a.txt" || fail "changed file content"
[ -f "$T/dst/sub/b.bin" ] || fail "a file deleted on the server must stay in the backup"
# (link_in points at sub/b.bin, so look at the entries' paths, not the whole text)
[ "$(jq_get "$T/dst/.gpurent-manifest.json" '"sub/b.bin" in [f["path"] for f in d["files"]]')" = False ] ||
  fail "deleted file still in the manifest"

echo "== include / exclude"
G "$R" --to "$T/dst_inc" --include '*.bin' --exclude 'deeper' --json > "$T/out.json"
[ "$(jq_get "$T/out.json" 'd["files_total"]')" = 0 ] || fail "include/exclude: $(cat "$T/out.json")"
G "$R" --to "$T/dst_inc" --include 'sub/**' --json > "$T/out.json"
[ -f "$T/dst_inc/sub/deeper/c.bin" ] && [ ! -e "$T/dst_inc/a.txt" ] || fail "include sub/**"

echo "== several remote paths, one missing: the rest is backed up, the missing one named, exit 4"
set +e
G "$R/sub" "$R/nosuch" "$R/a.txt" --to "$T/multi" --json > "$T/multi.json" 2> "$T/multi.err"; rc=$?
set -e
[ $rc -eq 4 ] || fail "a missing root among several: exit $rc $(cat "$T/multi.err")"
grep -q "$R/nosuch (does not exist" "$T/multi.err" || fail "the missing root is not named: $(cat "$T/multi.err")"
[ "$(jq_get "$T/multi.json" 'd["error"]["code"], d["error"]["exit"], d["failed"][0]["path"], d["verified"]')" = \
  "('partial', 4, '$R/nosuch', False)" ] || fail "partial JSON: $(cat "$T/multi.json")"
cmp "$R/sub/deeper/c.bin" "$T/multi/sub/deeper/c.bin" && cmp "$R/a.txt" "$T/multi/a.txt" || fail "the existing roots were not copied"
set +e
G "$R/nosuch" --to "$T/single" 2> "$T/single.err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "remote path $R/nosuch does not exist" "$T/single.err" || fail "one missing root: $rc $(cat "$T/single.err")"

echo "== text output"
G "$R" --to "$T/dst" > "$T/out.txt"
grep -q "verified  yes" "$T/out.txt" || fail "text: $(cat "$T/out.txt")"

echo "== changed host key is a hard error naming both keys"
set +e
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R" --to "$T/d1" --identity "$SSHD_KEY" --known-hosts "$SSHD_WRONG_KNOWN_HOSTS" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "changed key: exit $rc"
WRONG_FP=$(ssh-keygen -lf "$SSHD_DIR/host_other.pub" | cut -d' ' -f2)
grep -q CHANGED "$T/err" && grep -q "$SSHD_FINGERPRINT" "$T/err" && grep -q "$WRONG_FP" "$T/err" || fail "changed key message: $(cat "$T/err")"
[ ! -e "$T/d1/.gpurent-manifest.json" ] || fail "wrote after a changed key"

echo "== auth failure"
set +e
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R" --to "$T/d2" --identity "$SSHD_KEY_OTHER" --known-hosts "$SSHD_KNOWN_HOSTS" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "authentication failed" "$T/err" || fail "auth failure: $rc $(cat "$T/err")"

echo "== refused connection"
set +e
"$GPURENT_BIN" backup --host "root@127.0.0.1:$(sshd_free_port)" "$R" --to "$T/d3" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "connection refused" "$T/err" || fail "refused: $rc $(cat "$T/err")"

echo "== RSA key, passphrase key, trust on first use recorded in the state dir"
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R/sub" --to "$T/d4" --identity "$SSHD_KEY_RSA" --known-hosts "$SSHD_KNOWN_HOSTS" --json > /dev/null
set +e
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R/sub" --to "$T/d5" --identity "$SSHD_KEY_PASS" --known-hosts "$SSHD_KNOWN_HOSTS" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "encrypted key without passphrase: $rc"
GPURENT_SSH_PASSPHRASE=$SSHD_PASSPHRASE "$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R/sub" --to "$T/d5" --identity "$SSHD_KEY_PASS" --known-hosts "$SSHD_KNOWN_HOSTS" 2> "$T/err" > /dev/null
grep -q "$SSHD_PASSPHRASE" "$T/err" && fail "passphrase printed"
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R/sub" --to "$T/d6" --identity "$SSHD_KEY" --accept-new-host-key --json > /dev/null
grep -q "^\[127.0.0.1\]:$SSHD_PORT ssh-ed25519 " "$GPURENT_STATE_DIR/known_hosts" || fail "TOFU not recorded"
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$R/sub" --to "$T/d6" --identity "$SSHD_KEY" --json > /dev/null

echo "== killed connection mid-file, then resume"
mkdir -p "$T/rbig"
head -c $((160 * 1024 * 1024)) /dev/urandom > "$T/rbig/big.bin"
"$GPURENT_BIN" backup --host "$SSHD_TARGET" "$T/rbig" --to "$T/dbig" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" --json > "$T/out.json" 2> "$T/err" &
gp=$!
for i in $(seq 1 2000); do
  s=$(stat -c %s "$T/dbig/big.bin.gpurent-partial" 2>/dev/null || echo 0)
  if [ "$s" -gt $((16 * 1024 * 1024)) ]; then break; fi
  sleep 0.01
done
for c in $(sshd_connection_pids); do kill -9 "$c" 2>/dev/null || true; done
set +e
wait $gp; rc=$?
set -e
[ $rc -ne 0 ] || fail "the backup survived a killed connection (partial was $s bytes)"
grep -q "connection" "$T/err" || fail "killed connection message: $(cat "$T/err")"
part=$(stat -c %s "$T/dbig/big.bin.gpurent-partial")
[ "$part" -gt 0 ] || fail "no partial file left to resume"
[ ! -e "$T/dbig/big.bin" ] || fail "an unverified file was published"
G "$T/rbig" --to "$T/dbig" --json > "$T/out.json"
cmp "$T/rbig/big.bin" "$T/dbig/big.bin" || fail "resumed file differs"
copied=$(jq_get "$T/out.json" 'd["bytes_copied"]')
[ "$copied" -lt $((160 * 1024 * 1024)) ] || fail "did not resume: copied $copied bytes after $part"
[ ! -e "$T/dbig/big.bin.gpurent-partial" ] || fail "partial left after resume"

echo "== full local disk fails cleanly and keeps the previous copy"
mkdir -p "$T/rsmall"
small_disk "$T/small" 2
G_ARGS=(--host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS")
disk_full_backup "$T/rsmall" "$T/small/b" $((3 * 1024 * 1024)) --json

echo "test_backup: all passed"
