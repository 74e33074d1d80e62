#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# #45 against a real OpenSSH sshd on 127.0.0.1: `push --delete` (a file or directory pushed
# before and removed locally disappears from the server; what a job or a command on the server
# wrote into the pushed directory survives, and so do .git, ignored paths, gpurent's bookkeeping
# and what lies outside the pushed directory; the first --delete without a record deletes
# nothing; it refuses without --yes and a terminal); job ids by
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
D=$SSHD_HOME/gpurent/proj
# Something already there that gpurent never pushed: the first --delete has no record, keeps it.
mkdir -p "$D"
echo before > "$D/before.txt"
R --json push box "$P" --allow-secret .env --delete --yes "${S[@]}"
[ $RC -eq 0 ] || fail "first push: rc=$RC $(cat "$T/e")"
[ -f "$D/a.txt" ] && [ -f "$D/sub/deeper/c.txt" ] && [ -f "$D/-rf" ] && [ -f "$D/.env" ] || fail "first push did not arrive"
[ "$(jq_get "$T/o" 'd["deleted"], d["delete_without_record"], d["never_pushed"]')" = \
  "([], True, {'count': 1, 'paths': ['before.txt']})" ] || fail "first --delete without a record: $(cat "$T/o")"
[ -f "$D/before.txt" ] || fail "the first --delete (no record) deleted a file gpurent never pushed"
# The record is the laptop's: 0600, under the state directory, nothing on the server.
rec=$(ls "$GPURENT_STATE_DIR"/push-records/push-*)
[ "$(stat -c %a "$rec")" = 600 ] || fail "the push record is not 0600: $(stat -c %a "$rec")"
# What a job wrote into the pushed directory (a checkpoint directory, a result next to the
# sources, a log inside a directory that goes away locally) and what a plain command on the
# server wrote there: never pushed by gpurent, so --delete keeps them.
R run box -d --no-push --workdir "$P" "${S[@]}" -- 'mkdir -p ckpt && echo w > ckpt/step1.pt && echo r > result.txt && echo l > sub/job.log'
[ $RC -eq 0 ] || fail "job writing outputs: rc=$RC $(cat "$T/e")"
J0=$(cat "$T/o")  # job #1 on box: the numbers below start at 2
for _ in $(seq 1 200); do [ -f "$D/sub/job.log" ] && break; sleep 0.05; done
[ -f "$D/ckpt/step1.pt" ] && [ -f "$D/result.txt" ] && [ -f "$D/sub/job.log" ] || fail "the job's outputs are not there: $(ls -laR "$D")"
R ssh box "${S[@]}" -- 'echo s > gpurent/proj/from-ssh.txt'
[ $RC -eq 0 ] && [ -f "$D/from-ssh.txt" ] || fail "ssh writing into the pushed directory: rc=$RC $(cat "$T/e")"
# What the server has that must survive anyway: a .git, an ignored directory's output, a killed
# push's partial file, a sibling of the pushed directory.
mkdir -p "$D/.git" "$D/build"
echo ref > "$D/.git/HEAD"
echo out > "$D/build/server.o"
echo part > "$D/big.bin.gpurent-partial"
echo outside > "$SSHD_HOME/gpurent/outside.txt"
# Locally: a file, a directory, a name that looks like an option and the secret sent once go away.
rm -rf "$P/a.txt" "$P/sub" "$P/-rf" "$P/.env"
R push box "$P" --delete "${S[@]}"
[ $RC -eq 3 ] || fail "--delete without --yes and without a terminal: rc=$RC $(cat "$T/e")"
# sub holds the job's log: sub itself stays, what was pushed into it goes.
grep -q "5 path(s) in ~/gpurent/proj on the server are not in the local directory and will be deleted" "$T/e" ||
  fail "--delete did not say what it would delete: $(cat "$T/e")"
[ -f "$D/a.txt" ] && [ -f "$D/.env" ] || fail "a refused --delete deleted something"
R push box "$P" --delete --yes "${S[@]}"
[ $RC -eq 0 ] || fail "push --delete --yes (text): rc=$RC $(cat "$T/e")"
grep -q "kept      5 path(s) gpurent never pushed (job outputs?) (--delete): before.txt ckpt from-ssh.txt result.txt sub/job.log" "$T/o" ||
  fail "the text report does not say what it kept: $(cat "$T/o")"
grep -q "deleted   5 path(s) no longer in the local directory (--delete): -rf .env a.txt sub/b.txt sub/deeper" "$T/o" ||
  fail "the text report does not say what it deleted: $(cat "$T/o")"
[ ! -e "$D/a.txt" ] && [ ! -e "$D/sub/b.txt" ] && [ ! -e "$D/sub/deeper" ] && [ ! -e "$D/-rf" ] && [ ! -e "$D/.env" ] ||
  fail "not deleted on the server: $(ls -laR "$D")"
[ -f "$D/keep.txt" ] && [ -f "$D/.git/HEAD" ] && [ -f "$D/build/server.o" ] && [ -f "$D/big.bin.gpurent-partial" ] ||
  fail "--delete removed what it must keep: $(ls -la "$D")"
[ -f "$D/ckpt/step1.pt" ] && [ -f "$D/result.txt" ] && [ -f "$D/sub/job.log" ] && [ -f "$D/from-ssh.txt" ] && [ -f "$D/before.txt" ] ||
  fail "--delete removed what a job or a command on the server wrote: $(ls -laR "$D")"
[ "$(cat "$SSHD_HOME/gpurent/outside.txt")" = outside ] || fail "a file outside the pushed directory was touched"
R --json push box "$P" --delete "${S[@]}"
[ $RC -eq 0 ] && [ "$(jq_get "$T/o" 'd["deleted"], d["never_pushed"]["count"], d["delete_without_record"]')" = "([], 5, False)" ] ||
  fail "nothing left to delete: rc=$RC $(cat "$T/o") $(cat "$T/e")"
# Pushed without --delete, then deleted locally: the record still names it, the next --delete removes it.
echo later > "$P/later.txt"
R --json push box "$P" "${S[@]}"
[ "$(jq_get "$T/o" 'd["deleted"]')" = "[]" ] && [ -f "$D/later.txt" ] || fail "a push without --delete: $(cat "$T/o")"
rm "$P/later.txt"
R --json push box "$P" --delete --yes "${S[@]}"
[ $RC -eq 0 ] && [ "$(jq_get "$T/o" 'd["deleted"]')" = "['later.txt']" ] && [ ! -e "$D/later.txt" ] ||
  fail "pushed without --delete, deleted locally: rc=$RC $(cat "$T/o") $(cat "$T/e")"
# A damaged record counts as none: a warning, and nothing is deleted.
echo keepme > "$P/k2.txt"
R push box "$P" "${S[@]}"
rm "$P/k2.txt"
printf 'garbage' > "$rec"
R --json push box "$P" --delete --yes "${S[@]}"
[ $RC -eq 0 ] && [ "$(jq_get "$T/o" 'd["deleted"], d["delete_without_record"]')" = "([], True)" ] && [ -f "$D/k2.txt" ] ||
  fail "a damaged record: rc=$RC $(cat "$T/o") $(cat "$T/e")"
grep -q "the record of earlier pushes is damaged" "$T/e" || fail "no warning for a damaged record: $(cat "$T/e")"

echo "== job ids: number, prefix, suffix; jobs --kill records cancelled"
ids=("$J0")
for i in 1 2 3; do
  R run box -d --no-push --workdir "$P" "${S[@]}" -- "echo job$i; sleep 30"
  [ $RC -eq 0 ] || fail "run -d $i: $(cat "$T/e")"
  ids+=("$(cat "$T/o")")
  sleep 1.1  # distinct start seconds: the numbers follow the start order
done
for i in 1 2 3; do  # the job has printed its line once its log is non-empty
  for _ in $(seq 1 100); do [ -s "$SSHD_HOME/.gpurent/jobs/${ids[$i]}/log" ] && break; sleep 0.05; done
done
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[(j["number"], j["id"]) for j in d["jobs"]]')" = \
  "[(1, '${ids[0]}'), (2, '${ids[1]}'), (3, '${ids[2]}'), (4, '${ids[3]}')]" ] || fail "numbers: $(cat "$T/o")"
R jobs box "${S[@]}"
grep -Eq "^ +3  ${ids[2]} " "$T/o" || fail "text has no number column: $(cat "$T/o")"
R logs box 3 "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job2 ] || fail "logs by number: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box '#4' "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job3 ] || fail "logs by #number: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[1]:0:17}" "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job1 ] || fail "logs by prefix: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[2]: -4}" "${S[@]}"
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = job2 ] || fail "logs by suffix: rc=$RC $(cat "$T/o") $(cat "$T/e")"
R logs box "${ids[1]:0:8}" "${S[@]}"
[ $RC -eq 2 ] && grep -q "matches 4 jobs on box (#1 ${ids[0]}, #2 ${ids[1]}, #3 ${ids[2]}, #4 ${ids[3]})" "$T/e" ||
  fail "ambiguous part: rc=$RC $(cat "$T/e")"
R jobs box --kill "${ids[1]: -4}" --grace 5 "${S[@]}"
[ $RC -eq 0 ] && grep -q "job ${ids[1]} stopped" "$T/e" || fail "--kill by suffix: rc=$RC $(cat "$T/e")"
grep -Eq "^ +2  ${ids[1]} +cancelled +143 " "$T/o" || fail "killed job in text: $(cat "$T/o")"
R --json run box --stop 3 --grace 5 "${S[@]}"
[ $RC -eq 0 ] || fail "run --stop by number: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["job"]["id"], d["job"]["number"], d["job"]["state"], d["job"]["exit_code"]')" = \
  "('${ids[2]}', 3, 'cancelled', 143)" ] || fail "run --stop JSON: $(cat "$T/o")"
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[(j["state"], j["exit_code"]) for j in d["jobs"]]')" = \
  "[('succeeded', 0), ('cancelled', 143), ('cancelled', 143), ('running', None)]" ] || fail "states after kill: $(cat "$T/o")"

echo "== jobs on a server that cannot be reached: the jobs on record"
sshd_stop
R --json jobs box "${S[@]}"
[ $RC -eq 4 ] || fail "unreachable: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(j["number"], j["state"]) for j in d["jobs"]], d["error"]["code"]')" = \
  "([(1, 'succeeded'), (2, 'cancelled'), (3, 'cancelled'), (4, 'running')], 'partial')" ] || fail "unreachable JSON: $(cat "$T/o")"
grep -q "could not reach box" "$T/e" && grep -q "as gpurent last saw them" "$T/e" || fail "unreachable message: $(cat "$T/e")"
R jobs box --kill 4 "${S[@]}"
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
grep -q "could not reach box (box is stopped (since .*); start it with \`gpurent start box\`)" "$T/e" || fail "stopped message: $(cat "$T/e")"
grep -Eq "^ +4  ${ids[3]} +running " "$T/o" || fail "stopped listing: $(cat "$T/o")"
echo "OK"
