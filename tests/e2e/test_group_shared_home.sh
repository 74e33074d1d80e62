#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A server group whose nodes share one home directory (an NFS home, a shared volume): two real
# OpenSSH sshd on 127.0.0.1 with the same HOME, joined with `attach --group`. `run GROUP` starts a
# job on both (each node's job directory is its own: <id>-r<rank>), `logs GROUP` shows each node's
# own output, `jobs GROUP` lists each node's own job, `jobs GROUP --kill JOB` stops each node's.
# Before, the second node refused to start: "a job with that id already exists on the server".
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-group-shared.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export GPURENT_LOG_POLL_MS=200
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
PIDS=()
cleanup() {
  local pid
  for pid in "$T"/shared/.gpurent/jobs/*/pid; do
    [ -f "$pid" ] && kill -9 -- "-$(cat "$pid")" 2>/dev/null || true
  done
  for p in "${PIDS[@]}"; do
    SSHD_PID=$p
    sshd_stop
  done
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
R() {  # runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e"
  RC=$?
  set -e
}

# Two nodes, one home ($T/shared): what two servers mounting the same NFS home look like.
for k in 0 1; do
  SSHD_HOME=$T/shared sshd_start "$T/sshd$k"
  PIDS+=("$SSHD_PID")
  name=$([ $k = 0 ] && echo alpha || echo beta)
  "$GPURENT_BIN" attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
    --known-hosts "$SSHD_KNOWN_HOSTS" --name "$name" --group pair > /dev/null 2> "$T/e" || fail "attach $name: $(cat "$T/e")"
done
P=$T/proj
mkdir -p "$P"
echo "x = 1" > "$P/a.py"

echo "== run GROUP on a shared home: both nodes start, each in its own job directory"
R --json run pair --workdir "$P" -- 'echo "node $GPURENT_NODE_RANK of $GPURENT_NUM_NODES says hi"; sleep 1'
[ $RC -eq 0 ] || fail "run pair: rc=$RC $(cat "$T/e" "$T/o")"
grep -q "^\[alpha\] node 0 of 2 says hi" "$T/e" && grep -q "^\[beta\] node 1 of 2 says hi" "$T/e" ||
  fail "each node's line: $(cat "$T/e")"
JOB=$(jq_get "$T/o" 'd["job_id"]')
[ "$(jq_get "$T/o" '[(n["name"], n["job"]["id"], n["job"]["state"]) for n in d["nodes"]]')" = \
  "[('alpha', '$JOB-r0', 'succeeded'), ('beta', '$JOB-r1', 'succeeded')]" ] || fail "run --json nodes: $(cat "$T/o")"
[ -f "$T/shared/.gpurent/jobs/$JOB-r0/log" ] && [ -f "$T/shared/.gpurent/jobs/$JOB-r1/log" ] ||
  fail "one job directory per node: $(ls "$T/shared/.gpurent/jobs")"

echo "== logs GROUP [JOB]: each node's own log"
for ref in "$JOB" ""; do
  R logs pair $ref
  [ $RC -eq 0 ] && grep -q "^\[alpha\] node 0 of 2 says hi" "$T/o" && grep -q "^\[beta\] node 1 of 2 says hi" "$T/o" &&
    [ "$(wc -l < "$T/o")" -eq 2 ] || fail "logs pair $ref: rc=$RC $(cat "$T/o" "$T/e")"
done
R logs pair "$JOB" --node 1
[ $RC -eq 0 ] && grep -q "^node 1 of 2 says hi" "$T/o" && ! grep -q "node 0" "$T/o" || fail "logs --node 1: $(cat "$T/o" "$T/e")"
R logs beta "$JOB-r1"
[ $RC -eq 0 ] && grep -q "^node 1 of 2 says hi" "$T/o" || fail "logs beta JOB-r1: $(cat "$T/o" "$T/e")"

echo "== jobs GROUP: each node lists its own part of the group job"
R --json jobs pair
[ $RC -eq 0 ] || fail "jobs pair: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(m["name"], [(j["id"], j["state"]) for j in m["result"]["jobs"]]) for m in d["members"]]')" = \
  "[('alpha', [('$JOB-r0', 'succeeded')]), ('beta', [('$JOB-r1', 'succeeded')])]" ] || fail "jobs pair --json: $(cat "$T/o")"

echo "== jobs GROUP --kill JOB stops every node's part"
R --json run pair -d --no-push --workdir "$P" -- 'echo "node $GPURENT_NODE_RANK sleeping"; sleep 60'
[ $RC -eq 0 ] || fail "run -d: rc=$RC $(cat "$T/e")"
LONG=$(jq_get "$T/o" 'd["job_id"]')
R --json jobs pair --kill "$LONG" --grace 1
[ $RC -eq 0 ] || fail "jobs --kill: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(m["name"], [j["state"] for j in m["result"]["jobs"] if j["id"].startswith("'"$LONG"'")]) for m in d["members"]]')" = \
  "[('alpha', ['cancelled']), ('beta', ['cancelled'])]" ] || fail "jobs --kill --json: $(cat "$T/o" "$T/e")"
R --json run pair -d --no-push --workdir "$P" -- 'sleep 60'
[ $RC -eq 0 ] || fail "run -d: rc=$RC $(cat "$T/e")"
LONG=$(jq_get "$T/o" 'd["job_id"]')
R run pair --stop "$LONG" --grace 1
[ $RC -eq 0 ] && grep -q "stopping job $LONG-r0 on alpha" "$T/e" && grep -q "stopping job $LONG-r1 on beta" "$T/e" ||
  fail "run --stop: rc=$RC $(cat "$T/e")"
echo "PASS"
