#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# #45 against a real OpenSSH sshd on 127.0.0.1: `push --delete` (a locally removed file or
# directory disappears from the server; .git, ignored paths, gpurent's bookkeeping and what lies
# outside the pushed directory survive; it refuses without --yes and a terminal); job ids by
# prefix, suffix and number, an ambiguous part listing the candidates; `jobs --kill` records
# cancelled (exit code kept in JSON); "did you mean" for a mistyped server name; and `jobs` on a
# server that cannot be reached (sshd stopped) or is recorded as stopped lists the jobs on record.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-jobs-delete.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export SSHD_HOME=$T/server
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
cleanup() {
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
R() {  # runs gpurent with no stdin, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e" < /dev/null
  RC=$?
  set -e
}
R attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name box
[ $RC -eq 0 ] || fail "attach: $(cat "$T/e")"
S=(--identity "$SSHD_KEY")

echo "== did you mean: a mistyped server name"
R logs boz "${S[@]}"
[ $RC -eq 1 ] && grep -q "no server named boz is tracked; did you mean box?" "$T/e" || fail "did you mean: rc=$RC $(cat "$T/e")"
R --json jobs bxo "${S[@]}"
[ "$(jq_get "$T/o" 'd["error"]["code"], d["error"]["hint"].startswith("did you mean box?")')" = "('not_found', True)" ] ||
  fail "did you mean in JSON: $(cat "$T/o")"

echo "== push --delete"
P=$T/proj
mkdir -p "$P/sub/deeper" "$P/build"
echo a > "$P/a.txt"
echo keep > "$P/keep.txt"
echo b > "$P/sub/b.txt"
echo c > "$P/sub/deeper/c.txt"
echo dash > "$P/-rf"
echo secret > "$P/.env"
echo obj > "$P/build/local.o"
printf 'build/\n' > "$P/.gitignore"
R push box "$P" --allow-secret .env "${S[@]}"
[ $RC -eq 0 ] || fail "first push: rc=$RC $(cat "$T/e")"
D=$SSHD_HOME/gpurent/proj
[ -f "$D/a.txt" ] && [ -f "$D/sub/deeper/c.txt" ] && [ -f "$D/-rf" ] && [ -f "$D/.env" ] || fail "first push did not arrive"
# What the server has that must survive: a .git, an ignored directory's output, a killed push's
# partial file, a sibling of the pushed directory.
mkdir -p "$D/.git" "$D/build"
echo ref > "$D/.git/HEAD"
echo out > "$D/build/server.o"
echo part > "$D/big.bin.gpurent-partial"
echo outside > "$SSHD_HOME/gpurent/outside.txt"
# Locally: a file, a directory, a name that looks like an option and the secret sent once go away.
rm -rf "$P/a.txt" "$P/sub" "$P/-rf" "$P/.env"
R push box "$P" --delete "${S[@]}"
[ $RC -eq 3 ] || fail "--delete without --yes and without a terminal: rc=$RC $(cat "$T/e")"
grep -q "4 path(s) in ~/gpurent/proj on the server are not in the local directory and will be deleted" "$T/e" ||
  fail "--delete did not say what it would delete: $(cat "$T/e")"
[ -f "$D/a.txt" ] && [ -f "$D/.env" ] || fail "a refused --delete deleted something"
R --json push box "$P" --delete --yes "${S[@]}"
[ $RC -eq 0 ] || fail "push --delete --yes: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["deleted"]')" = "['-rf', '.env', 'a.txt', 'sub']" ] || fail "deleted in JSON: $(cat "$T/o")"
[ ! -e "$D/a.txt" ] && [ ! -e "$D/sub" ] && [ ! -e "$D/-rf" ] && [ ! -e "$D/.env" ] || fail "not deleted on the server: $(ls -la "$D")"
[ -f "$D/keep.txt" ] && [ -f "$D/.git/HEAD" ] && [ -f "$D/build/server.o" ] && [ -f "$D/big.bin.gpurent-partial" ] ||
  fail "--delete removed what it must keep: $(ls -la "$D")"
[ "$(cat "$SSHD_HOME/gpurent/outside.txt")" = outside ] || fail "a file outside the pushed directory was touched"
R --json push box "$P" --delete "${S[@]}"
[ $RC -eq 0 ] && [ "$(jq_get "$T/o" 'd["deleted"]')" = "[]" ] || fail "nothing left to delete: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R --json push box "$P" "${S[@]}"
[ "$(jq_get "$T/o" 'd["deleted"]')" = "[]" ] || fail "a push without --delete: $(cat "$T/o")"

echo "== job ids: number, prefix, suffix; jobs --kill records cancelled"
ids=()
for i in 1 2 3; do
  R run box -d --no-push --workdir "$P" "${S[@]}" -- "echo job$i; sleep 30"
  [ $RC -eq 0 ] || fail "run -d $i: $(cat "$T/e")"
  ids+=("$(cat "$T/o")")
  sleep 1.1  # distinct start seconds: the numbers follow the start order
done
for i in 0 1 2; do  # the job has printed its line once its log is non-empty
  for _ in $(seq 1 100); do [ -s "$SSHD_HOME/.gpurent/jobs/${ids[$i]}/log" ] && break; sleep 0.05; done
done
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[(j["number"], j["id"]) for j in d["jobs"]]')" = \
  "[(1, '${ids[0]}'), (2, '${ids[1]}'), (3, '${ids[2]}')]" ] || fail "numbers: $(cat "$T/o")"
R jobs box "${S[@]}"
grep -Eq "^ +2  ${ids[1]} " "$T/o" || fail "text has no number column: $(cat "$T/o")"
R logs box 2 "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job2 ] || fail "logs by number: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box '#3' "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job3 ] || fail "logs by #number: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[0]:0:17}" "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job1 ] || fail "logs by prefix: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[1]: -4}" "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job2 ] || fail "logs by suffix: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[0]:0:8}" "${S[@]}"
[ $RC -eq 2 ] && grep -q "matches 3 jobs on box (#1 ${ids[0]}, #2 ${ids[1]}, #3 ${ids[2]})" "$T/e" ||
  fail "ambiguous part: rc=$RC $(cat "$T/e")"
R jobs box --kill "${ids[0]: -4}" --grace 5 "${S[@]}"
[ $RC -eq 0 ] && grep -q "job ${ids[0]} stopped" "$T/e" || fail "--kill by suffix: rc=$RC $(cat "$T/e")"
grep -Eq "^ +1  ${ids[0]} +cancelled +143 " "$T/o" || fail "killed job in text: $(cat "$T/o")"
R --json run box --stop 2 --grace 5 "${S[@]}"
[ $RC -eq 0 ] || fail "run --stop by number: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["job"]["id"], d["job"]["number"], d["job"]["state"], d["job"]["exit_code"]')" = \
  "('${ids[1]}', 2, 'cancelled', 143)" ] || fail "run --stop JSON: $(cat "$T/o")"
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[(j["state"], j["exit_code"]) for j in d["jobs"]]')" = \
  "[('cancelled', 143), ('cancelled', 143), ('running', None)]" ] || fail "states after kill: $(cat "$T/o")"

echo "== jobs on a server that cannot be reached: the jobs on record"
sshd_stop
R --json jobs box "${S[@]}"
[ $RC -eq 4 ] || fail "unreachable: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(j["number"], j["state"]) for j in d["jobs"]], d["error"]["code"]')" = \
  "([(1, 'cancelled'), (2, 'cancelled'), (3, 'running')], 'partial')" ] || fail "unreachable JSON: $(cat "$T/o")"
grep -q "could not reach box" "$T/e" && grep -q "as gpurent last saw them" "$T/e" || fail "unreachable message: $(cat "$T/e")"
R jobs box --kill 3 "${S[@]}"
[ $RC -eq 1 ] || fail "--kill on an unreachable server: rc=$RC $(cat "$T/e")"
# Recorded as stopped (as `down --stop` leaves it): no connection is tried.
python3 - "$GPURENT_STATE_DIR" <<'PY'
import glob, sqlite3, sys
db = sqlite3.connect(glob.glob(sys.argv[1] + "/*.db")[0])
db.execute("UPDATE servers SET status='stopped' WHERE name='box'")
db.commit()
PY
R jobs box "${S[@]}"
[ $RC -eq 4 ] || fail "stopped: rc=$RC $(cat "$T/e")"
grep -q "could not reach box (it is recorded as stopped)" "$T/e" || fail "stopped message: $(cat "$T/e")"
grep -Eq "^ +3  ${ids[2]} +running " "$T/o" || fail "stopped listing: $(cat "$T/o")"
echo "OK"
