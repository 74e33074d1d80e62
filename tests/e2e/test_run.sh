#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent push / run / logs / jobs against a real OpenSSH sshd on 127.0.0.1 whose sessions start
# in a test HOME: a tree with an ignored directory, a nested negation, a .git and 2000 small
# files (remote `git status` clean); a job that prints, sleeps and exits 3 survives the local
# `gpurent run` being killed and `jobs` records exit 3; a real PyTorch OOM message gets the
# diagnosis for the server's card; --then backup carried out by `jobs` after a detached job;
# stopping a job; a lost job; `logs -f` across an sshd restart.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}" "${GPURENT_TEST_DATA:?}"
T=$(mktemp -d /tmp/gpurent-run-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export SSHD_HOME=$T/server GPURENT_FOLLOW_RETRY_S=30
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
BG=""
cleanup() {
  [ -z "$BG" ] || kill "$BG" 2>/dev/null || true
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
R() {  # runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e"
  RC=$?
  set -e
}
# The server is tracked (attach), so jobs know its card: an RTX 4090.
"$GPURENT_BIN" attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name box > /dev/null 2>&1 || fail "attach"
S=(--identity "$SSHD_KEY")

echo "== push: .gitignore'd dir, nested negation, .gpurentignore, .git (--with-git), 2000 small files"
P=$T/proj
mkdir -p "$P/src" "$P/build" "$P/logs"
python3 - "$P/src" <<'PY'
import os, sys
for i in range(2000):
    d = os.path.join(sys.argv[1], "m%02d" % (i % 40))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%04d.py" % i), "w") as f:
        f.write("x = %d\n" % i * (1 + i % 7))
PY
printf 'build/\n*.ckpt\n' > "$P/.gitignore"
printf '*\n!.gitignore\n!keep.txt\n' > "$P/logs/.gitignore"
echo keep > "$P/logs/keep.txt"
echo noise > "$P/logs/run1.txt"
head -c 300000 /dev/urandom > "$P/build/model.o"
head -c 200000 /dev/urandom > "$P/last.ckpt"
printf '!last.ckpt\n' > "$P/.gpurentignore"
# Part of it committed (git status must see the same on the server); most files stay untracked.
(cd "$P" && git init -q --template= . && git add .gitignore logs src/m00 && git -c user.email=t@e -c user.name=t commit -qm init)
echo "untracked" > "$P/notes.md"
R --json push box "$P" --with-git "${S[@]}"
[ $RC -eq 0 ] || fail "push: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'sorted(k for k in ["files_total","files_sent","bytes_sent","skipped","seconds","verified"] if k in d)')" = \
  "['bytes_sent', 'files_sent', 'files_total', 'seconds', 'skipped', 'verified']" ] || fail "push --json keys: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["verified"]')" = True ] || fail "not verified: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["files_sent"] == d["files_total"] and d["files_total"] > 2000')" = True ] || fail "files: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["skipped"]["count"]')" = 2 ] || fail "skipped count: $(cat "$T/o")"
[ "$(jq_get "$T/o" '[p["path"] for p in d["skipped"]["largest"]]')" = "['build', 'logs/run1.txt']" ] || fail "largest: $(cat "$T/o")"
D=$SSHD_HOME/gpurent/proj
[ -f "$D/last.ckpt" ] && [ -f "$D/logs/keep.txt" ] && [ ! -e "$D/logs/run1.txt" ] && [ ! -e "$D/build" ] || fail "ignore rules on the server"
diff -r --no-dereference -x build -x run1.txt "$P" "$D" || fail "trees differ"
R push box "$P" --with-git "${S[@]}"
[ $RC -eq 0 ] && grep -q "verified  yes, nothing changed" "$T/o" && grep -q "build/" "$T/o" || fail "re-push text: $(cat "$T/o")"
grep -q "(0 sent" "$T/o" || fail "re-push sent something: $(cat "$T/o")"
# (git status refreshes the index, a change the next push would carry)
[ -z "$(cd "$D" && git status --porcelain --untracked-files=no)" ] || fail "git status on the server: $(cd "$D" && git status --porcelain)"
[ "$(cd "$D" && git status --porcelain)" = "$(cd "$P" && git status --porcelain)" ] || fail "git status differs"

echo "== a job that prints, sleeps and exits 3 survives a killed gpurent run"
set +e
"$GPURENT_BIN" run box --workdir "$P" "${S[@]}" -- 'echo started; sleep 1; echo finished; exit 3' > "$T/run.out" 2> "$T/run.err" &
RUN=$!
set -e
for _ in $(seq 1 100); do grep -q started "$T/run.out" 2>/dev/null && break; sleep 0.05; done
grep -q started "$T/run.out" || fail "no output from the job: $(cat "$T/run.err")"
kill -9 "$RUN"; wait "$RUN" 2>/dev/null || true
JOB=$(ls "$SSHD_HOME/.gpurent/jobs" | head -1)
for _ in $(seq 1 100); do [ -f "$SSHD_HOME/.gpurent/jobs/$JOB/exit" ] && break; sleep 0.05; done
R --json jobs box "${S[@]}"
[ $RC -eq 0 ] || fail "jobs: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(j["state"], j["exit_code"]) for j in d["jobs"] if j["id"] == "'"$JOB"'"]')" = "[('failed', 3)]" ] ||
  fail "jobs after a killed run: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'sorted(d["jobs"][0].keys())')" = \
  "['command', 'ended', 'exit_code', 'id', 'log', 'number', 'oom', 'started', 'state', 'then', 'workdir']" ] || fail "jobs keys: $(cat "$T/o")"
R logs box "$JOB" "${S[@]}"
[ "$(cat "$T/o")" = "$(printf 'started\nfinished')" ] || fail "logs: $(cat "$T/o")"
R logs box "$JOB" --tail 1 "${S[@]}"
[ "$(cat "$T/o")" = "finished" ] || fail "logs --tail: $(cat "$T/o")"

echo "== an attached run exits 1 with the job's code; a PyTorch OOM gets the diagnosis for the card"
cp "$GPURENT_TEST_DATA/run/pytorch_oom.log" "$P/"
R --json run box --workdir "$P" "${S[@]}" -- 'cat pytorch_oom.log >&2; exit 1'
[ $RC -eq 1 ] || fail "OOM job: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["job"]["state"], d["job"]["exit_code"]')" = "('failed', 1)" ] || fail "run --json: $(cat "$T/o")"
[ "$(jq_get "$T/o" '"job_too_large" in d["job"]["oom"]["causes"] and d["job"]["oom"]["on_card"]["card"]')" = rtx-4090 ] ||
  fail "oom in run --json: $(cat "$T/o")"
R run box --no-push --workdir "$P" "${S[@]}" -- 'cat pytorch_oom.log >&2; exit 1'
[ $RC -eq 1 ] || fail "OOM text run: rc=$RC"
grep -q "ran out of GPU memory (exit 1)" "$T/e" && grep -q "diagnosis for the rtx-4090" "$T/e" && grep -q "yes  job_too_large" "$T/e" &&
  grep -q "it does NOT fit" "$T/e" || fail "OOM diagnosis text: $(cat "$T/e")"
R run box --no-push --workdir "$P" "${S[@]}" -- 'echo fine'
[ $RC -eq 0 ] && [ "$(cat "$T/o")" = fine ] || fail "a succeeding job: rc=$RC $(cat "$T/o")"

echo "== detached with --then backup: carried out by the next jobs that sees it ended"
R run box -d --no-push --workdir "$P" "${S[@]}" --then "backup:out:$T/bk" -- 'mkdir -p out; echo result > out/r.txt; sleep 0.5'
[ $RC -eq 0 ] || fail "run -d: $(cat "$T/e")"
DJOB=$(cat "$T/o")
for _ in $(seq 1 100); do [ -f "$SSHD_HOME/.gpurent/jobs/$DJOB/exit" ] && break; sleep 0.05; done
R --json jobs box "${S[@]}"
[ $RC -eq 0 ] || fail "jobs with a step: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[j["then"][0]["state"] for j in d["jobs"] if j["id"] == "'"$DJOB"'"]')" = "['done']" ] || fail "step: $(cat "$T/o")"
[ "$(cat "$T/bk/r.txt")" = result ] || fail "backup step output"
R --json jobs box "${S[@]}"
grep -q "backing up" "$T/e" && fail "a step ran twice"
R run box --no-push "${S[@]}" --then down:destroy -- true
[ $RC -eq 3 ] && grep -q "not rented with" "$T/e" || fail "down step on an attached server: rc=$RC $(cat "$T/e")"
R run box --no-push "${S[@]}" --then nonsense -- true
[ $RC -eq 2 ] || fail "bad step: rc=$RC"

echo "== stopping a job; a job whose runner died is lost"
R run box -d --no-push --workdir "$P" "${S[@]}" -- 'trap "" TERM; sleep 30'
KJOB=$(cat "$T/o")
R jobs box --kill "$KJOB" --grace 1 "${S[@]}"
[ $RC -eq 0 ] && grep -q "killed" "$T/e" || fail "--kill: rc=$RC $(cat "$T/e")"
grep -q "$KJOB  *cancelled  *137" "$T/o" || fail "killed job (cancelled, exit 137 kept): $(cat "$T/o")"
R run box -d --no-push --workdir "$P" "${S[@]}" -- 'sleep 30'
LJOB=$(cat "$T/o")
R run box --stop "$LJOB" --grace 2 "${S[@]}"
[ $RC -eq 0 ] && grep -q "stopped" "$T/e" || fail "--stop: rc=$RC $(cat "$T/e")"
R run box -d --no-push --workdir "$P" "${S[@]}" -- 'sleep 30'
GJOB=$(cat "$T/o")
JD=$SSHD_HOME/.gpurent/jobs/$GJOB
for _ in $(seq 1 50); do [ -s "$JD/pid" ] && break; sleep 0.05; done
kill -9 "$(cat "$JD/runner")"; kill -9 -- "-$(cat "$JD/pid")"
sleep 0.3
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[j["state"] for j in d["jobs"] if j["id"] == "'"$GJOB"'"]')" = "['lost']" ] || fail "lost: $(cat "$T/o")"
rm -rf "$JD"
R --json jobs box "${S[@]}"
[ "$(jq_get "$T/o" '[j["state"] for j in d["jobs"] if j["id"] == "'"$GJOB"'"]')" = "['lost']" ] || fail "gone from the server: $(cat "$T/o")"

echo "== logs -f across an sshd restart"
# (10 s: the restart must come while the job still runs, even on a loaded machine)
R run box -d --no-push --workdir "$P" "${S[@]}" -- 'for i in $(seq 1 40); do echo "line $i"; sleep 0.25; done'
FJOB=$(cat "$T/o")
"$GPURENT_BIN" logs box "$FJOB" -f "${S[@]}" > "$T/follow.out" 2> "$T/follow.err" &
BG=$!
for _ in $(seq 1 100); do grep -q "line 3" "$T/follow.out" 2>/dev/null && break; sleep 0.05; done
# Restart the server: the listener and every connection go, then the same sshd comes back.
for c in $(pgrep -P "$SSHD_PID"); do kill "$c"; done
kill "$SSHD_PID"; wait "$SSHD_PID" 2>/dev/null || true
sleep 0.5
/usr/sbin/sshd -D -f "$SSHD_DIR/sshd_config" -E "$SSHD_DIR/sshd.log" &
SSHD_PID=$!
set +e
wait "$BG"
FRC=$?
set -e
BG=""
[ $FRC -eq 0 ] || fail "logs -f: rc=$FRC $(cat "$T/follow.err")"
grep -q "reconnected" "$T/follow.err" || fail "no reconnect: $(cat "$T/follow.err")"
[ "$(cat "$T/follow.out")" = "$(for i in $(seq 1 40); do echo "line $i"; done)" ] || fail "followed output: $(cat "$T/follow.out")"

echo "OK"
