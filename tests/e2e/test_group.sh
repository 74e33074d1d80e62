#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A server group of two nodes: two real OpenSSH sshd on 127.0.0.1 (each session in its own HOME,
# so each "node" has its own disk), joined with `attach --group`. End to end with a real
# distributed job: a two-node `torchrun` (PyTorch's gloo backend, CPU) runs an all-reduce across
# the group and rank 0 writes a checkpoint that `backup GROUP` brings back; `logs GROUP` prefixes
# each node's lines and `--node K` picks one; a node whose job is killed mid-run stops the group
# with its name; a node that runs out of memory gets `gpurent oom`'s diagnosis for its card.
# Needs python3-torch (scripts/deps.sh installs it); exits 77 (skipped) without it.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}" "${GPURENT_TEST_DATA:?}"
if ! /usr/bin/python3 -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2>/dev/null ||
  [ ! -x /usr/bin/torchrun ]; then
  echo "SKIP: python3-torch (torchrun, gloo) is not installed: scripts/deps.sh installs it" >&2
  exit 77
fi
T=$(mktemp -d /tmp/gpurent-group-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export GPURENT_LOG_POLL_MS=200
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS
mkdir -p "$HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
PIDS=()
BG=""
cleanup() {
  [ -z "$BG" ] || kill "$BG" 2>/dev/null || true
  local pid
  for pid in "$T"/n*/.gpurent/jobs/*/pid; do  # every job's process group, on both "nodes"
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
start_bg() {  # start_bg OUT ERR ARGS...: gpurent in the background; $BG is its PID
  local out=$1 err=$2
  shift 2
  "$GPURENT_BIN" "$@" > "$out" 2> "$err" &
  BG=$!
}
await_line() {  # await_line PATTERN FILE: up to 30 s for a line
  for _ in $(seq 1 300); do
    grep -q "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
await_bg() {  # await_bg WHAT: up to 30 s for $BG to end (else fails with WHAT); sets RC
  for _ in $(seq 1 300); do
    kill -0 "$BG" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$BG" 2>/dev/null && fail "$1"
  set +e
  wait "$BG"
  RC=$?
  set -e
  BG=""
}
R() {  # runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e"
  RC=$?
  set -e
}

# Two nodes: each its own sshd, keys and HOME ($T/n0, $T/n1), joined in rank order.
for k in 0 1; do
  SSHD_HOME=$T/n$k sshd_start "$T/sshd$k"
  PIDS+=("$SSHD_PID")
  name=$([ $k = 0 ] && echo alpha || echo beta)
  "$GPURENT_BIN" attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
    --known-hosts "$SSHD_KNOWN_HOSTS" --name "$name" --group pair > /dev/null 2> "$T/e" || fail "attach $name: $(cat "$T/e")"
done

echo "== the group: two members in rank order; a group name cannot also be a server's"
R --json status pair
[ $RC -eq 0 ] || fail "status pair: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(i["name"], i["group"], i["node"]) for i in d["instances"]]')" = \
  "[('alpha', 'pair', 0), ('beta', 'pair', 1)]" ] || fail "status pair: $(cat "$T/o")"
R attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name pair
[ $RC -eq 3 ] && grep -q "server group" "$T/e" || fail "a server named like the group: rc=$RC $(cat "$T/e")"
R attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name pair --group other
[ $RC -eq 3 ] && grep -q "server group" "$T/e" || fail "a member named like a group: rc=$RC $(cat "$T/e")"
R attach --provider runpod --card rtx-4090 --price 0.69 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name gamma --group alpha
[ $RC -eq 3 ] && grep -q "already tracked" "$T/e" || fail "a group named like a server: rc=$RC $(cat "$T/e")"

echo "== run GROUP -- torchrun: a two-node gloo all-reduce; rank 0 saves a checkpoint"
P=$T/proj
mkdir -p "$P"
cat > "$P/train.py" <<'PY'
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
node = int(os.environ["GPURENT_NODE_RANK"])
ips = os.environ["GPURENT_NODE_IPS"].split("\n")
t = torch.tensor([float(node + 1)])
dist.all_reduce(t)
print(f"rank {rank} of {world} on node {node} of {os.environ['GPURENT_NUM_NODES']} ({len(ips)} ips): sum {t.item()}", flush=True)
if rank == 0:
    os.makedirs("ckpt", exist_ok=True)
    torch.save({"sum": t, "world": world}, "ckpt/model.pt")
dist.barrier()
dist.destroy_process_group()
PY
PORT=$(sshd_free_port)
# Debian 12's torchrun (PyTorch 1.13 on Python 3.11) fails with its default --redirects 0 (an
# IntFlag's zero member is not iterable in 3.11): redirect stdout and tee it back (lines then
# start with "[default0]:").
TORCHRUN=(torchrun --redirects 1 --tee 1 --nproc_per_node 1)
R --json run pair --workdir "$P" --master-port "$PORT" -- "${TORCHRUN[@]}" train.py
[ $RC -eq 0 ] || fail "run pair: rc=$RC $(cat "$T/e")"
grep -q "^\[alpha\] \[default0\]:rank 0 of 2 on node 0 of 2 (2 ips): sum 3.0" "$T/e" || fail "node 0's line: $(cat "$T/e")"
grep -q "^\[beta\] \[default0\]:rank 1 of 2 on node 1 of 2 (2 ips): sum 3.0" "$T/e" || fail "node 1's line: $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(n["name"], n["node"], n["job"]["state"], n["job"]["exit_code"]) for n in d["nodes"]]')" = \
  "[('alpha', 0, 'succeeded', 0), ('beta', 1, 'succeeded', 0)]" ] || fail "run --json: $(cat "$T/o")"
[ "$(jq_get "$T/o" '(d["failed_node"], d["master_addr"], d["master_port"] == '"$PORT"')')" = "(None, '127.0.0.1', True)" ] ||
  fail "run --json group keys: $(cat "$T/o")"
JOB=$(jq_get "$T/o" 'd["job_id"]')
[ -f "$T/n0/gpurent/proj/ckpt/model.pt" ] && [ ! -e "$T/n1/gpurent/proj/ckpt" ] || fail "the checkpoint is rank 0's"
[ -f "$T/n1/gpurent/proj/train.py" ] || fail "the tree was pushed to node 1"

echo "== push GROUP and autostop GROUP: every member, one document"
echo "x = 1" > "$P/extra.py"
R --json push pair "$P"
[ $RC -eq 0 ] || fail "push pair: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(m["name"], m["result"]["files_sent"], m["result"]["verified"]) for m in d["members"]]')" = \
  "[('alpha', 1, True), ('beta', 1, True)]" ] || fail "push pair --json: $(cat "$T/o")"
[ -f "$T/n0/gpurent/proj/extra.py" ] && [ -f "$T/n1/gpurent/proj/extra.py" ] || fail "push pair: not on both nodes"
R --json autostop pair
[ "$(jq_get "$T/o" '[(m["name"], m["result"]["armed"]) for m in d["members"]]')" = "[('alpha', False), ('beta', False)]" ] ||
  fail "autostop pair --json: rc=$RC $(cat "$T/o" "$T/e")"

echo "== logs GROUP: every node's lines prefixed; --node K only that node's"
R logs pair "$JOB"
[ $RC -eq 0 ] && grep -q "^\[alpha\] \[default0\]:rank 0" "$T/o" && grep -q "^\[beta\] \[default0\]:rank 1" "$T/o" || fail "logs pair: $(cat "$T/o" "$T/e")"
R logs pair "$JOB" --node 1
[ $RC -eq 0 ] && grep -q "^\[default0\]:rank 1 of 2" "$T/o" && ! grep -q "rank 0" "$T/o" || fail "logs --node 1: $(cat "$T/o" "$T/e")"
R logs pair "$JOB" --node 2
[ $RC -eq 2 ] && grep -q "no node 2" "$T/e" || fail "logs --node 2: rc=$RC $(cat "$T/e")"
R logs pair -f
[ $RC -eq 2 ] && grep -q -- "--node K" "$T/e" || fail "logs GROUP -f: rc=$RC $(cat "$T/e")"

echo "== backup GROUP brings the checkpoint back (every node into its own directory; --node 0 only rank 0's)"
R --json backup pair gpurent/proj --to "$T/bk"
[ $RC -eq 0 ] || fail "backup pair: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" '[(m["name"], m["exit_code"], m["result"]["verified"]) for m in d["members"]]')" = \
  "[('alpha', 0, True), ('beta', 0, True)]" ] || fail "backup pair --json: $(cat "$T/o")"
/usr/bin/python3 -c 'import sys, torch; c = torch.load(sys.argv[1]); assert c["sum"].item() == 3.0 and c["world"] == 2, c' \
  "$T/bk/alpha/ckpt/model.pt" || fail "the checkpoint backed up from node 0: $(find "$T/bk")"
[ -f "$T/bk/beta/train.py" ] || fail "node 1's tree: $(find "$T/bk")"
R backup pair gpurent/proj/ckpt --node 0 --to "$T/bk0"
[ $RC -eq 0 ] && [ -f "$T/bk0/alpha/model.pt" ] && [ ! -e "$T/bk0/beta" ] || fail "backup --node 0: rc=$RC $(find "$T/bk0") $(cat "$T/e")"

echo "== a node killed mid-run stops the group and says which node and why"
cat > "$P/loop.py" <<'PY'
import sys, time
import torch.distributed as dist
dist.init_process_group("gloo")
print("gpurent-group-test-job looping", flush=True)
while True:
    time.sleep(0.2)
PY
# (torchrun's tee thread writes to a block-buffered stdout: unbuffered, the line shows while it runs)
start_bg "$T/kill.out" "$T/kill.err" run pair --workdir "$P" --master-port "$(sshd_free_port)" --grace 2 \
  --env PYTHONUNBUFFERED=1 -- "${TORCHRUN[@]}" loop.py
await_line "^\[beta\] .*gpurent-group-test-job looping" "$T/kill.out" ||
  fail "the looping job did not start: $(cat "$T/kill.out" "$T/kill.err")"
KILLED=$(ls -t "$T/n1/.gpurent/jobs" | head -1)
kill -9 -- "-$(cat "$T/n1/.gpurent/jobs/$KILLED/pid")"
await_bg "run did not stop after node 1's job was killed: $(cat "$T/kill.err")"
[ $RC -eq 1 ] || fail "killed node: rc=$RC $(cat "$T/kill.err")"
grep -q "node 1 (beta): its job failed (exit 137)" "$T/kill.err" || fail "the message names node 1: $(cat "$T/kill.err")"
# Each node's job is the group's id and its rank (<id>-r<rank>): node 0's is <id>-r0.
[[ $KILLED == *-r1 ]] || fail "node 1's job id: $KILLED"
STOPPED=${KILLED%-r1}-r0
grep -q "stopping job $STOPPED on alpha" "$T/kill.err" || fail "node 0 was stopped: $(cat "$T/kill.err")"
[ -f "$T/n0/.gpurent/jobs/$STOPPED/exit" ] || fail "node 0's job still runs"
R --json jobs alpha
# Stopped by gpurent after node 1 failed: cancelled (not failed).
[ "$(jq_get "$T/o" '[j["state"] for j in d["jobs"] if j["id"] == "'"$STOPPED"'"]')" = "['cancelled']" ] || fail "node 0's record: $(cat "$T/o")"

echo "== a node that runs out of GPU memory: the group stops, with oom's diagnosis for its card"
cp "$GPURENT_TEST_DATA/run/pytorch_oom.log" "$P/"
R run pair --workdir "$P" --grace 1 -- 'if [ "$GPURENT_NODE_RANK" = 1 ]; then cat pytorch_oom.log >&2; exit 1; fi; sleep 30'
[ $RC -eq 1 ] || fail "OOM node: rc=$RC $(cat "$T/e")"
grep -q "node 1 (beta) ran out of GPU memory (exit 1)" "$T/e" && grep -q "rtx-4090" "$T/e" || fail "OOM diagnosis: $(cat "$T/e")"
grep -q "group pair stopped: node 1 (beta)" "$T/e" || fail "OOM group message: $(cat "$T/e")"

echo "== run GROUP --then is refused (back up the group after it instead)"
R run pair --workdir "$P" --then backup:x -- true
[ $RC -eq 2 ] && grep -q "backup pair" "$T/e" || fail "--then on a group: rc=$RC $(cat "$T/e")"

echo "== a node whose server goes away (sshd gone, job killed) stops the group once it stays unreachable"
GPURENT_NODE_UNREACHABLE_S=2 start_bg "$T/gone.out" "$T/gone.err" run pair --no-push --workdir "$P" --grace 1 -- \
  'echo gpurent-group-test-job up; sleep 60'
await_line "^\[beta\] gpurent-group-test-job up" "$T/gone.out" || fail "the job did not start: $(cat "$T/gone.err")"
GONE=$(ls -t "$T/n1/.gpurent/jobs" | head -1)
SSHD_PID=${PIDS[1]}
sshd_stop
kill -9 -- "-$(cat "$T/n1/.gpurent/jobs/$GONE/pid")" 2>/dev/null || true
await_bg "run did not give up on the unreachable node: $(cat "$T/gone.err")"
[ $RC -eq 1 ] && grep -q "node 1 (beta): unreachable over SSH for 2 s" "$T/gone.err" || fail "unreachable node: rc=$RC $(cat "$T/gone.err")"
GONE0=${GONE%-r1}-r0  # node 0's part of the same group job
grep -q "stopping job $GONE0 on alpha" "$T/gone.err" && [ -f "$T/n0/.gpurent/jobs/$GONE0/exit" ] || fail "node 0 not stopped: $(cat "$T/gone.err")"
echo "ok"
