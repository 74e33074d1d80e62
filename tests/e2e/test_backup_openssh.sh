#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent backup's bytes through OpenSSH's `ssh` (issue #43, sync/openssh_bulk.hpp) against a real
# OpenSSH sshd on 127.0.0.1: the same files and verified hashes as libssh2 (GPURENT_SSH_BULK), the
# fallback to libssh2 when ssh is not on PATH or cannot unlock the key, a server whose host key
# changes between the session's connection and ssh's refused (exit 3, no fallback), Ctrl-C and a
# killed connection: ssh is ended, nothing is left behind, and the next run resumes.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-backup-openssh.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent TMPDIR=$T/tmp
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS GPURENT_SSH_BULK
mkdir -p "$HOME" "$TMPDIR"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
SSHD2_PID=
PROXY_PID=
cleanup() {
  [ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null || true
  [ -z "$SSHD2_PID" ] || kill "$SSHD2_PID" 2>/dev/null || true
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
G() { "$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }
no_leftovers() {  # no ssh of ours still running, no known_hosts file left
  [ -z "$(ls -A "$TMPDIR")" ] || fail "$1: left in TMPDIR: $(ls -A "$TMPDIR")"
  ! pgrep -f -- "-p $2 -l $SSHD_USER" > /dev/null || fail "$1: an ssh child is still running: $(pgrep -af -- "-p $2 -l")"
}

R=$T/remote
mkdir -p "$R/sub/deeper" "$R/empty_dir"
echo hello > "$R/a.txt"
head -c 3000000 /dev/urandom > "$R/sub/deeper/c.bin"
head -c $((70 * 1024 * 1024)) /dev/urandom > "$R/sub/big.bin"
printf 'x' > "$R/$(printf 'new\nline')"
echo spaces > "$R/with spaces ü.txt"
ln -s sub/c.bin "$R/link_in"

echo "== GPURENT_SSH_BULK=openssh: the copy goes through OpenSSH's ssh: same tree, verified"
GPURENT_SSH_BULK=openssh G -v "$R" --to "$T/d_open" --json > "$T/open.json" 2> "$T/err"
grep -q "go through OpenSSH's ssh" "$T/err" || fail "-v does not say ssh carried it: $(cat "$T/err")"
[ "$(jq_get "$T/open.json" 'd["verified"], d["files_copied"]')" = "(True, 5)" ] || fail "openssh: $(cat "$T/open.json")"
diff -r --no-dereference "$R" "$T/d_open" -x .gpurent-manifest.json || fail "openssh: trees differ"
no_leftovers openssh "$SSHD_PORT"

echo "== GPURENT_SSH_BULK=libssh2 gives the same bytes and hashes; auto leaves a small copy to libssh2"
GPURENT_SSH_BULK=libssh2 G -v "$R" --to "$T/d_lib" --json > "$T/lib.json" 2> "$T/err"
grep -q "OpenSSH" "$T/err" && fail "libssh2 forced, yet: $(cat "$T/err")"
diff -r --no-dereference "$T/d_lib" "$T/d_open" -x .gpurent-manifest.json || fail "libssh2 and ssh copies differ"
python3 - "$T/d_lib/.gpurent-manifest.json" "$T/d_open/.gpurent-manifest.json" <<'PY' || fail "manifest hashes differ"
import json, sys
a, b = (sorted((f["path"], f.get("sha256")) for f in json.load(open(p))["files"]) for p in sys.argv[1:])
assert a == b and any(h for _, h in a), (a, b)
PY
G -v "$R" --to "$T/d_auto" --json > "$T/out.json" 2> "$T/err"
grep -q "MiB go through libssh2 (round trip" "$T/err" || fail "auto, small copy: $(cat "$T/err")"
diff -r --no-dereference "$R" "$T/d_auto" -x .gpurent-manifest.json || fail "auto: trees differ"
set +e
GPURENT_SSH_BULK=fast G "$R" --to "$T/d_bad" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "GPURENT_SSH_BULK=fast" "$T/err" || fail "a bad GPURENT_SSH_BULK: $rc $(cat "$T/err")"

echo "== no ssh on PATH: libssh2 carries it, said at -v"
mkdir -p "$T/nossh"
PATH=$T/nossh GPURENT_SSH_BULK=openssh G -v "$R" --to "$T/d_nossh" --json > "$T/out.json" 2> "$T/err"
grep -q "no \`ssh\` on PATH" "$T/err" || fail "no-ssh fallback not said: $(cat "$T/err")"
[ "$(jq_get "$T/out.json" 'd["verified"]')" = True ] || fail "no-ssh: $(cat "$T/out.json")"
diff -r --no-dereference "$R" "$T/d_nossh" -x .gpurent-manifest.json || fail "no-ssh: trees differ"

echo "== a key only gpurent's passphrase unlocks: libssh2 carries it, the passphrase is never passed on"
GPURENT_SSH_BULK=openssh GPURENT_SSH_PASSPHRASE=$SSHD_PASSPHRASE "$GPURENT_BIN" backup -v --host "$SSHD_TARGET" --identity "$SSHD_KEY_PASS" \
  --known-hosts "$SSHD_KNOWN_HOSTS" "$R/sub" --to "$T/d_pass" > /dev/null 2> "$T/err"
grep -q "passphrase" "$T/err" && grep -q "libssh2" "$T/err" || fail "passphrase fallback not said: $(cat "$T/err")"
grep -q "$SSHD_PASSPHRASE" "$T/err" && fail "passphrase printed"
cmp "$R/sub/big.bin" "$T/d_pass/big.bin" || fail "passphrase: copy differs"

echo "== the host key changes between the session's connection and ssh's: refused, exit 3, no fallback"
PORT2=$(sshd_free_port)
sed -e "s/^Port .*/Port $PORT2/" -e "s|^HostKey .*|HostKey $SSHD_DIR/host_other|" -e "s|^PidFile .*|PidFile $SSHD_DIR/sshd2.pid|" \
  "$SSHD_DIR/sshd_config" > "$SSHD_DIR/sshd2_config"
/usr/sbin/sshd -D -f "$SSHD_DIR/sshd2_config" -E "$SSHD_DIR/sshd2.log" &
SSHD2_PID=$!
PP=$(sshd_free_port)
cat > "$T/switch_proxy.py" <<'PY'
# The first connection goes to the real server, every later one to another with its own host key.
import socket, sys, threading
port, first, later = (int(a) for a in sys.argv[1:4])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
open(sys.argv[4], "w").close()
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
n = 0
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", first if n == 0 else later))
    n += 1
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
PY
python3 "$T/switch_proxy.py" "$PP" "$SSHD_PORT" "$PORT2" "$T/proxy.ready" &
PROXY_PID=$!
for _ in $(seq 1 100); do
  [ -e "$T/proxy.ready" ] && (exec 3<>"/dev/tcp/127.0.0.1/$PORT2") 2>/dev/null && break
  sleep 0.05
done
sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PP /" "$SSHD_KNOWN_HOSTS" > "$T/kh_proxy"
set +e
GPURENT_SSH_BULK=openssh "$GPURENT_BIN" backup --host "$SSHD_USER@127.0.0.1:$PP" --identity "$SSHD_KEY" --known-hosts "$T/kh_proxy" "$R" --to "$T/d_mitm" 2> "$T/err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "changed key for ssh: exit $rc $(cat "$T/err")"
grep -q "refused the server's host key" "$T/err" || fail "changed key message: $(cat "$T/err")"
[ ! -e "$T/d_mitm/.gpurent-manifest.json" ] && [ -z "$(find "$T/d_mitm" -type f 2>/dev/null)" ] || fail "copied after a changed key"
no_leftovers mitm "$PP"
kill "$PROXY_PID" "$SSHD2_PID" 2>/dev/null || true
PROXY_PID=
SSHD2_PID=

echo "== Ctrl-C mid-file: ssh is ended, nothing left behind, the next run resumes"
mkdir -p "$T/rbig"
truncate -s 1G "$T/rbig/sparse.bin"
printf 'end' >> "$T/rbig/sparse.bin"
GPURENT_SSH_BULK=openssh "$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" \
  "$T/rbig" --to "$T/dbig" --json > "$T/out.json" 2> "$T/err" &
gp=$!   # gpurent itself (a shell function's subshell would ignore SIGINT in the background)
s=0
for _ in $(seq 1 3000); do
  s=$(stat -c %s "$T/dbig/sparse.bin.gpurent-partial" 2>/dev/null || echo 0)
  if [ "$s" -gt $((64 * 1024 * 1024)) ]; then break; fi
  sleep 0.01
done
kill -INT $gp
set +e
wait $gp; rc=$?
set -e
[ $rc -eq 4 ] || fail "Ctrl-C: exit $rc (partial was $s bytes) $(cat "$T/err")"
grep -q "interrupted" "$T/err" || fail "Ctrl-C message: $(cat "$T/err")"
no_leftovers ctrl-c "$SSHD_PORT"
[ -e "$T/dbig/sparse.bin.gpurent-partial" ] || fail "no partial kept to resume"
G "$T/rbig" --to "$T/dbig" --json > "$T/out.json"
cmp "$T/rbig/sparse.bin" "$T/dbig/sparse.bin" || fail "resumed copy differs"
[ "$(jq_get "$T/out.json" 'd["verified"]')" = True ] || fail "resume not verified: $(cat "$T/out.json")"

echo "== a killed connection mid-file: an error naming the connection, then resume"
rm -rf "$T/dbig"
GPURENT_SSH_BULK=openssh "$GPURENT_BIN" backup --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" \
  "$T/rbig" --to "$T/dbig" --json > "$T/out.json" 2> "$T/err" &
gp=$!
for _ in $(seq 1 3000); do
  s=$(stat -c %s "$T/dbig/sparse.bin.gpurent-partial" 2>/dev/null || echo 0)
  if [ "$s" -gt $((64 * 1024 * 1024)) ]; then break; fi
  sleep 0.01
done
for c in $(sshd_connection_pids); do kill -9 "$c" 2>/dev/null || true; done
set +e
wait $gp; rc=$?
set -e
[ $rc -ne 0 ] && grep -q "connection" "$T/err" || fail "killed connection: exit $rc $(cat "$T/err")"
no_leftovers killed "$SSHD_PORT"
G "$T/rbig" --to "$T/dbig" --json > "$T/out.json"
cmp "$T/rbig/sparse.bin" "$T/dbig/sparse.bin" || fail "resumed copy differs after a killed connection"

echo "test_backup_openssh: all passed"
