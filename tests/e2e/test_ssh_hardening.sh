#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# #44 against a real OpenSSH sshd on 127.0.0.1 whose sessions start in a test HOME and log every
# command line they are asked to run:
#  * --env values reach the job but never a command line (the server's `ps`), and the job's
#    directory and files are private (0700, 0600);
#  * a server that prints without end (a flooding nvidia-smi) gets a clear error from doctor,
#    with bounded memory;
#  * a host whose recorded ed25519 key is replaced by an ECDSA one has CHANGED its key: refused
#    with both fingerprints, also with --accept-new-host-key, no second line added; the removal
#    command the message gives works; a key pinned in the state database is refused the same way;
#  * a key the server does not know, and a server that takes no keys, each get their own error.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-ssh-hardening.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export SSHD_HOME=$T/server SSHD_COMMAND_LOG=$T/commands.log SSHD_PATH_PREFIX=$T/fakebin
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME" "$T/fakebin" "$SSHD_HOME/work"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
cleanup() {
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
R() {  # runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e" < /dev/null
  RC=$?
  set -e
}
mode_of() { stat -c %a "$1"; }

# nvidia-smi prints 600 MB when $HOME/flood exists, else one idle GPU.
cat > "$T/fakebin/nvidia-smi" <<'FAKE'
#!/bin/sh
if [ -f "$HOME/flood" ]; then head -c 600000000 /dev/zero | tr '\0' x; exit 0; fi
case "$*" in
  *--query-gpu=*) echo "0, NVIDIA H100 80GB HBM3, 81559, 10, 81549, 550.54.15, 0" ;;
esac
FAKE
chmod +x "$T/fakebin/nvidia-smi"
sshd_start "$T/sshd"
KH=$T/known_hosts
"$GPURENT_BIN" attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$KH" --accept-new-host-key --name box > /dev/null 2> "$T/e" < /dev/null || fail "attach: $(cat "$T/e")"
[ "$(wc -l < "$KH")" = 1 ] || fail "attach records the host key once: $(cat "$KH")"

echo "== run --env: the value reaches the job, never a command line; the job's files are private"
SECRET=hunter2-$$-value
R run box --no-push --to work --identity "$SSHD_KEY" -d --env "TOKEN=$SECRET" -- \
  'printf %s "$TOKEN" > token.txt; sleep 3'
[ "$RC" = 0 ] || fail "run -d: $(cat "$T/e")"
job_dir=$(ls -d "$SSHD_HOME"/.gpurent/jobs/* | head -n 1)
# While the job runs: no process on this machine (the "server") has the value in its command line
# (the pattern comes from a file, so the grep's own command line does not have it either).
printf '%s\n' "$SECRET" > "$T/secret.pattern"
for f in /proc/[0-9]*/cmdline; do
  if { tr '\0' ' ' < "$f"; } 2>/dev/null | grep -qF -f "$T/secret.pattern"; then fail "the value is in the command line of ${f%/cmdline}"; fi
done
for i in $(seq 100); do [ -f "$job_dir/exit" ] && break; sleep 0.1; done
[ -f "$job_dir/exit" ] || fail "the job did not end"
[ "$(cat "$SSHD_HOME/work/token.txt")" = "$SECRET" ] || fail "the job got TOKEN: $(cat "$SSHD_HOME/work/token.txt")"
grep -qF "$SECRET" "$SSHD_COMMAND_LOG" && fail "the value was in a command line sshd received"
[ "$(mode_of "$SSHD_HOME/.gpurent")" = 700 ] || fail "~/.gpurent is $(mode_of "$SSHD_HOME/.gpurent")"
[ "$(mode_of "$SSHD_HOME/.gpurent/jobs")" = 700 ] || fail "~/.gpurent/jobs is $(mode_of "$SSHD_HOME/.gpurent/jobs")"
[ "$(mode_of "$job_dir")" = 700 ] || fail "the job's directory is $(mode_of "$job_dir")"
for f in env cmd.sh run.sh log workdir exit; do
  [ "$(mode_of "$job_dir/$f")" = 600 ] || fail "the job's $f is $(mode_of "$job_dir/$f")"
done
grep -qF "$SECRET" "$job_dir/env" || fail "the env file holds the value"

echo "== a flood of output: a clear error, bounded memory"
: > "$SSHD_HOME/flood"
# Under ASan its quarantine keeps freed buffers (256 MiB by default): held small here, so the
# bound below measures what gpurent keeps, in either build.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" python3 - "$T/rss" "$GPURENT_BIN" doctor box --identity "$SSHD_KEY" > "$T/o" 2> "$T/e" <<'PY' || true
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL)
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r.returncode)
PY
rm -f "$SSHD_HOME/flood"
grep -q "printed more than 64 MiB on its stdout" "$T/e" || fail "the flood's error: $(head -c 2000 "$T/e")"
# 600 MB printed; gpurent keeps at most 64 MiB (the growing buffer's copies and ASan's shadow included).
[ "$(cat "$T/rss")" -lt 409600 ] || fail "doctor grew to $(cat "$T/rss") KiB"
R doctor box --identity "$SSHD_KEY" --json
[ "$RC" = 0 ] || fail "doctor after the flood: $(cat "$T/e")"

echo "== the host switches from ed25519 to ECDSA: changed, not unknown"
KH2=$T/known_hosts_2
R ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$KH2" --accept-new-host-key -- true
[ "$RC" = 0 ] || fail "first connection (trust on first use): $(cat "$T/e")"
grep -q ssh-ed25519 "$KH2" || fail "ed25519 recorded: $(cat "$KH2")"
sshd_restart_with_host_key ecdsa
for accept in "" --accept-new-host-key; do
  R ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$KH2" $accept -- true
  [ "$RC" = 3 ] || fail "a changed key ($accept) exits 3, got $RC: $(cat "$T/e")"
  grep -q CHANGED "$T/e" || fail "says CHANGED: $(cat "$T/e")"
  grep -qF "$SSHD_OLD_FINGERPRINT" "$T/e" || fail "names the recorded key's fingerprint: $(cat "$T/e")"
  grep -qF "$SSHD_FINGERPRINT" "$T/e" || fail "names the presented key's fingerprint: $(cat "$T/e")"
  grep -qF "ssh-keygen -R '[127.0.0.1]:$SSHD_PORT' -f '$KH2'" "$T/e" || fail "says how to remove the old line: $(cat "$T/e")"
  [ "$(wc -l < "$KH2")" = 1 ] || fail "no second line ($accept): $(cat "$KH2")"
done
# The key pinned in the state database (attach) is refused the same way, with --accept-new-host-key too.
R ssh box --identity "$SSHD_KEY" --accept-new-host-key -- true
[ "$RC" = 3 ] && grep -q "state database" "$T/e" && grep -qF "$SSHD_FINGERPRINT" "$T/e" ||
  fail "the pinned key: $RC $(cat "$T/e")"
# The removal the message gives, then trust on first use: the new key is trusted.
ssh-keygen -R "[127.0.0.1]:$SSHD_PORT" -f "$KH2" > /dev/null 2>&1
R ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$KH2" --accept-new-host-key -- true
[ "$RC" = 0 ] || fail "after removing the old line: $(cat "$T/e")"
[ "$(wc -l < "$KH2")" = 1 ] && grep -q ecdsa-sha2 "$KH2" || fail "the ECDSA key recorded: $(cat "$KH2")"
# Keys are offered without asking first which methods the server accepts (a round trip saved):
# a server that takes no keys is still named as such, and a wrong key as a failed authentication.
R ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY_OTHER" --known-hosts "$KH2" -- true
[ "$RC" != 0 ] && grep -q "authentication failed with" "$T/e" || fail "a key the server does not know: $RC $(cat "$T/e")"
sed -i -e 's/^PubkeyAuthentication yes/PubkeyAuthentication no/' -e 's/^PasswordAuthentication no/PasswordAuthentication yes/' "$SSHD_DIR/sshd_config"
sshd_stop
sshd_launch
R ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$KH2" -- true
[ "$RC" != 0 ] && grep -q "the server does not accept keys (only password)" "$T/e" || fail "a server without public-key login: $RC $(cat "$T/e")"
echo "ok"
