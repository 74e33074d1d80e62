#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent attach against a real OpenSSH sshd on 127.0.0.1: host keys (unknown and changed keys
# refused without recording anything, trust on first use recorded), the ledger from --since,
# duplicate names, the SSH settings remembered at attach, then `down --destroy` of an attached
# server: a verified backup over SSH first (refused when it fails or the server's key is not the
# recorded one), then `release_pending` (still billed, whatever --yes) until `down --released`, or
# until `status --refresh` sees another host key or SSH unreachable twice a minute apart.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-attach-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
unset SSH_AUTH_SOCK
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
cleanup() {
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
G() { "$GPURENT_BIN" "$@"; }
# Runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC.
R() {
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e"
  RC=$?
  set -e
}
open_count() { G status --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)['instances']))"; }

sshd_start "$T/sshd"
SINCE=$(date -u -d '-90 minutes' +%Y-%m-%dT%H:%M:%SZ)
ATTACH=(attach --provider gpucloud --card rtx-pro-6000 --price 1.60 --host "$SSHD_TARGET" --identity "$SSHD_KEY")

echo "== an unknown host key is refused (no --accept-new-host-key) and nothing is recorded"
R "${ATTACH[@]}" --name box
[ $RC -eq 3 ] && grep -q "unknown" "$T/e" || fail "unknown key: rc=$RC $(cat "$T/e")"
grep -q "$SSHD_FINGERPRINT" "$T/e" || fail "the refusal names the key it saw: $(cat "$T/e")"
[ "$(open_count)" = 0 ] || fail "nothing may be recorded for an unknown key"
[ ! -s "$GPURENT_STATE_DIR/known_hosts" ] || fail "an unknown key must not be recorded in known_hosts"

echo "== a changed host key is refused and nothing is recorded"
R "${ATTACH[@]}" --name box --known-hosts "$SSHD_WRONG_KNOWN_HOSTS"
[ $RC -eq 3 ] && grep -q "CHANGED" "$T/e" || fail "changed key: rc=$RC $(cat "$T/e")"
[ "$(open_count)" = 0 ] || fail "nothing may be recorded for a changed key"

echo "== trust on first use: the key is recorded, the ledger starts at --since"
R --json "${ATTACH[@]}" --name box --accept-new-host-key --since "$SINCE"
[ $RC -eq 0 ] || fail "attach: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["host_key"]')" = "$SSHD_FINGERPRINT" ] || fail "host key: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["since"]')" = "$SINCE" ] || fail "since: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["provider"], d["card"], d["state"]')" = "('gpucloud', 'rtx-pro-6000', 'running')" ] || fail "attach json: $(cat "$T/o")"
grep -q "^\[127.0.0.1\]:$SSHD_PORT ssh-ed25519 " "$GPURENT_STATE_DIR/known_hosts" || fail "known_hosts: $(cat "$GPURENT_STATE_DIR/known_hosts")"

echo "== status shows it, running since --since, billed from then"
G status --json > "$T/s.json"
[ "$(jq_get "$T/s.json" 'len(d["instances"])')" = 1 ] || fail "status: $(cat "$T/s.json")"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["name"], d["instances"][0]["state"], d["instances"][0]["since"]')" = "('box', 'running', '$SINCE')" ] \
  || fail "status row: $(cat "$T/s.json")"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["attached"]')" = True ] || fail "attached flag"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["host"]')" = "$SSHD_TARGET" ] || fail "host: $(cat "$T/s.json")"
# 90 minutes at $1.60/h under gpucloud's hourly billing: at least 1.5 h, never more than 2 h.
python3 - "$T/s.json" <<'PY' || fail "accrued cost: $(cat "$T/s.json")"
import json, sys
i = json.load(open(sys.argv[1]))["instances"][0]
assert 1.6 * 1.5 <= i["accrued_cost"] <= 1.6 * 2 + 1e-9, i
assert i["cost_per_hour_now"] == 1.6, i
assert "no backup yet" in i["warnings"], i
PY

echo "== gpurent ssh NAME -- CMD runs on the tracked server with its recorded key"
# Several words are passed as quoted words; one word is a command line for the remote shell.
out=$(G ssh box --identity "$SSHD_KEY" -- echo "hello  from" '$((40+2))' 2>&1) || fail "ssh NAME -- CMD: $out"
[ "$out" = 'hello  from $((40+2))' ] || fail "ssh NAME -- words output: $out"
out=$(G ssh box --identity "$SSHD_KEY" -- 'echo "hello from" $((40+2))' 2>&1) || fail "ssh NAME -- 'CMD': $out"
[ "$out" = "hello from 42" ] || fail "ssh NAME -- command line output: $out"
R ssh box --identity "$SSHD_KEY" -- 'exit 6'
[ $RC -eq 6 ] || fail "ssh NAME -- CMD exit status: $RC $(cat "$T/e")"

echo "== a second attach with the same name is refused"
R "${ATTACH[@]}" --name box --accept-new-host-key
[ $RC -eq 3 ] && grep -q "already tracked" "$T/e" || fail "duplicate: rc=$RC $(cat "$T/e")"
[ "$(open_count)" = 1 ] || fail "still one server"

mkdir -p "$T/ws/ckpt"
head -c 300000 /dev/urandom > "$T/ws/ckpt/step-200.pt"
echo '{"lr": 0.0001}' > "$T/ws/config.json"
echo "== the server presents a key other than the recorded one: the backup and the destroy are refused"
set_key() {
  python3 - "$GPURENT_STATE_DIR/state.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE servers SET host_key=? WHERE name='box' AND closed=0", (sys.argv[2],))
db.commit()
PY
}
set_key "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
R down box --destroy --yes --identity "$SSHD_KEY" --path "$T/ws" --to "$T/backup-wrong"
[ $RC -eq 3 ] && grep -q "CHANGED" "$T/e" || fail "a changed key must refuse: rc=$RC $(cat "$T/e")"
[ ! -e "$T/backup-wrong/ckpt/step-200.pt" ] || fail "nothing may be copied from a server with a changed key"
[ "$(open_count)" = 1 ] || fail "the ledger stays open"
set_key "$SSHD_FINGERPRINT"

echo "== down --destroy: a failing backup refuses, and the ledger stays open"
R down box --destroy --yes --identity "$SSHD_KEY" --path "$T/no-such-dir" --to "$T/backup-bad"
[ $RC -eq 3 ] && grep -q "refusing to destroy box" "$T/e" || fail "a failed backup must refuse: rc=$RC $(cat "$T/e")"
[ "$(open_count)" = 1 ] || fail "the ledger stays open"

echo "== down --destroy without --yes and without a TTY: refused before the backup, nothing copied"
R down box --destroy --identity "$SSHD_KEY" --path "$T/ws" --to "$T/backup-unconfirmed"
[ $RC -eq 3 ] && grep -q "re-run with --yes" "$T/e" || fail "no TTY: rc=$RC $(cat "$T/e")"
[ ! -e "$T/backup-unconfirmed" ] || fail "an unconfirmed destroy copied something: $(ls -R "$T/backup-unconfirmed" | head)"
! grep -q "backing up box" "$T/e" || fail "an unconfirmed destroy started the backup: $(cat "$T/e")"
[ "$(open_count)" = 1 ] || fail "not confirmed: still open"

echo "== ssh, backup and down use the --identity and --known-hosts remembered at attach (none given now)"
out=$(G ssh box -- 'echo remembered' 2>&1) || fail "ssh with the remembered identity: $out"
[ "$out" = remembered ] || fail "ssh remembered output: $out"
python3 - "$GPURENT_STATE_DIR/state.db" "$SSHD_KEY" <<'PY' || fail "the identity is remembered in the state database"
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("SELECT ssh_identity FROM servers WHERE name='box' AND closed=0").fetchone()
assert row and row[0] == sys.argv[2], row
PY

echo "== down --destroy --yes: verified backup, then release_pending: gpurent cannot destroy it, it stays billed"
R --json down box --destroy --yes --path "$T/ws" --to "$T/backup"
[ $RC -eq 0 ] || fail "down --destroy: rc=$RC $(cat "$T/e")"
grep -q "backing up box" "$T/e" || fail "backup first: $(cat "$T/e")"
grep -q "console" "$T/e" && grep -q -- "--released" "$T/e" || fail "tells the user the console action: $(cat "$T/e")"
cmp "$T/ws/ckpt/step-200.pt" "$T/backup/ckpt/step-200.pt" || fail "the checkpoint was not backed up"
cmp "$T/ws/config.json" "$T/backup/config.json" || fail "config.json was not backed up"
[ "$(jq_get "$T/o" 'd["state"]')" = release_pending ] || fail "down json: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["cost_per_hour_now"]')" = 1.6 ] || fail "still billed: $(cat "$T/o")"
[ "$(open_count)" = 1 ] || fail "--yes never confirms a release: the server stays tracked"
G status --json > "$T/s.json"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["state"], d["instances"][0]["cost_per_hour_now"]')" = "('release_pending', 1.6)" ] \
  || fail "status shows it billed: $(cat "$T/s.json")"
jq_get "$T/s.json" 'd["instances"][0]["warnings"]' | grep -q -- "--released" || fail "status names the action: $(cat "$T/s.json")"
G status > "$T/s.txt"
grep -q "release_pending" "$T/s.txt" && grep -q "now \$1.60/h" "$T/s.txt" || fail "status text: $(cat "$T/s.txt")"

echo "== a second down --destroy --yes still does not close it; status --refresh sees the host answering"
R down box --destroy --yes
[ $RC -eq 0 ] && [ "$(open_count)" = 1 ] || fail "second destroy: rc=$RC $(cat "$T/e")"
R status --refresh --json
[ $RC -eq 0 ] && [ "$(jq_get "$T/o" 'd["instances"][0]["state"]')" = release_pending ] || fail "refresh: rc=$RC $(cat "$T/o") $(cat "$T/e")"
grep -q "still answers SSH" "$T/e" || fail "refresh says the host answers: $(cat "$T/e")"

echo "== down --released: the user's word closes the ledger"
R --json down box --released
[ $RC -eq 0 ] || fail "--released: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["state"], d["cost_per_hour_now"]')" = "('destroyed', 0.0)" ] || fail "released json: $(cat "$T/o")"
[ "$(open_count)" = 0 ] || fail "no open server after the release"
G status box --json > "$T/s.json"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["state"]')" = destroyed ] || fail "closed as destroyed: $(cat "$T/s.json")"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["last_backup"]["verified"]')" = True ] || fail "verified backup recorded"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["cost_per_hour_now"]')" = 0.0 ] || fail "no cost after the release"

echo "== the name is free again; --no-backup still needs confirming and also only marks the release"
R "${ATTACH[@]}" --name box
[ $RC -eq 0 ] || fail "re-attach with the recorded key: rc=$RC $(cat "$T/e")"
R down box --destroy --no-backup
[ $RC -eq 3 ] || fail "--no-backup still needs confirming: rc=$RC"
R down box --destroy --no-backup --yes
[ $RC -eq 0 ] && grep -q "without a verified backup" "$T/e" || fail "--no-backup: rc=$RC $(cat "$T/e")"
[ "$(open_count)" = 1 ] || fail "release pending, still tracked"

echo "== the address presents another host key: status --refresh takes it as released"
set_key "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
R status --refresh --json
[ $RC -eq 0 ] || fail "refresh: rc=$RC $(cat "$T/e")"
grep -q "another host key" "$T/e" || fail "says why: $(cat "$T/e")"
[ "$(open_count)" = 0 ] || fail "closed after another host key"
[ "$(jq_get "$T/o" 'd["closed"][0]["name"], d["closed"][0]["state"]')" = "('box', 'destroyed')" ] || fail "closed list: $(cat "$T/o")"

echo "== the host stops answering: one failed check is not enough; two a minute apart close it"
R "${ATTACH[@]}" --name box
[ $RC -eq 0 ] || fail "re-attach: rc=$RC $(cat "$T/e")"
R down box --destroy --no-backup --yes
[ $RC -eq 0 ] || fail "release pending: rc=$RC $(cat "$T/e")"
sshd_stop
R status --refresh --json
[ $RC -eq 0 ] && [ "$(open_count)" = 1 ] || fail "one failed check keeps it: rc=$RC $(cat "$T/e")"
grep -q "unreachable once" "$T/e" || fail "says it starts the clock: $(cat "$T/e")"
R status --refresh --json
[ "$(open_count)" = 1 ] || fail "a second check within the minute keeps it: $(cat "$T/e")"
# The first failed check a minute earlier, as if that much time had passed.
python3 - "$GPURENT_STATE_DIR/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE servers SET unreachable_since = unreachable_since - 61 WHERE name='box' AND closed=0")
db.commit()
PY
R status --refresh --json
[ $RC -eq 0 ] && [ "$(open_count)" = 0 ] || fail "two failed checks a minute apart close it: rc=$RC $(cat "$T/e")"
grep -q "SSH unreachable at" "$T/e" || fail "says why: $(cat "$T/e")"
G status box --json > "$T/s.json"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["state"]')" = destroyed ] || fail "closed as destroyed: $(cat "$T/s.json")"
echo "test_attach: all passed"
