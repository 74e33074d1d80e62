#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpurent doctor and gpurent ssh against a real OpenSSH sshd on 127.0.0.1, with a fake
# nvidia-smi on the sessions' PATH, then a server without nvidia-smi, then a tracked (attached)
# server whose GPU doctor sees idle: `gpurent status` warns "idle GPU for N minutes".
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-doctor-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
unset SSH_AUTH_SOCK
mkdir -p "$HOME" "$T/fakebin" "$T/emptybin" "$T/idlebin"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
PIDS=()
cleanup() {
  sshd_stop
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# Processes that hold "GPU memory" according to the fake nvidia-smi.
# Each is checked to have exec'd (its command line is the fake one) before it is used.
exec_done() {
  local i
  for i in $(seq 200); do
    tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q "$2" && return 0
    sleep 0.05
  done
  fail "process $1 never became '$2'"
}
bash -c 'exec -a "python -m ipykernel_launcher -f /tmp/kernel-1.json" sleep 300' &
KERNEL=$!; PIDS+=("$KERNEL")
bash -c 'exec -a "python train.py --epochs 3" sleep 300' &
TRAIN=$!; PIDS+=("$TRAIN")
bash -c 'exec -a "python serve_my_app.py" sleep 300' &
OTHER=$!; PIDS+=("$OTHER")
exec_done "$KERNEL" ipykernel_launcher
exec_done "$TRAIN" train.py
exec_done "$OTHER" serve_my_app
kill -STOP "$TRAIN"

cat > "$T/fakebin/nvidia-smi" <<FAKE
#!/bin/sh
case "\$*" in
  *--query-gpu=*) echo "0, NVIDIA H100 80GB HBM3, 81559, 30010, 51549, 550.54.15, 87" ;;
  *--query-compute-apps=*) printf '%s\n' "$KERNEL, python, 20000" "$TRAIN, python, 10000" "$OTHER, python, 10" ;;
  *) echo "fake nvidia-smi" ;;
esac
FAKE
chmod +x "$T/fakebin/nvidia-smi"

SSHD_PATH_PREFIX=$T/fakebin sshd_start "$T/sshd"
D() { "$GPURENT_BIN" doctor --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }

echo "== doctor with a (fake) GPU, a notebook kernel and a stopped training run"
D --json > "$T/d.json"
[ "$(jq_get "$T/d.json" 'd["gpus"][0]["name"]')" = "NVIDIA H100 80GB HBM3" ] || fail "gpu: $(cat "$T/d.json")"
[ "$(jq_get "$T/d.json" 'd["gpus"][0]["memory_used_mib"]')" = 30010 ] || fail "memory"
[ "$(jq_get "$T/d.json" 'd["gpus"][0]["utilization_pct"]')" = 87 ] || fail "utilization: $(cat "$T/d.json")"
[ "$(jq_get "$T/d.json" '[p["kind"] for p in d["processes"]]')" = "['notebook-kernel', 'training', 'other']" ] || fail "kinds: $(cat "$T/d.json")"
[ "$(jq_get "$T/d.json" '[p["leftover"] for p in d["processes"]]')" = "[True, True, False]" ] || fail "leftovers: $(cat "$T/d.json")"
# python3 is the server's own (login shells may put pyenv/conda first on PATH): either torch
# answered, or the advice says why not.
if [ "$(jq_get "$T/d.json" 'd["torch"] is None')" = True ]; then
  jq_get "$T/d.json" 'd["advice"]' | grep -q "PyTorch\|python3" || fail "no torch but no advice: $(cat "$T/d.json")"
else
  jq_get "$T/d.json" 'd["torch"]["version"]' | grep -q '^[0-9]' || fail "torch version"
fi
jq_get "$T/d.json" 'd["advice"]' | grep -q "kill $KERNEL" || fail "advice: $(cat "$T/d.json")"
jq_get "$T/d.json" 'd["advice"]' | grep -q "kill $TRAIN" || fail "advice train"
jq_get "$T/d.json" 'd["advice"]' | grep -q "kill $OTHER" && fail "advice other"
D > "$T/d.txt"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/d.txt" || fail "doctor text wider than 80 columns: $(cat "$T/d.txt")"
grep -q "What to do" "$T/d.txt" && grep -q "NVIDIA H100" "$T/d.txt" && grep -q "87% busy" "$T/d.txt" || fail "text: $(cat "$T/d.txt")"

echo "== ssh runs a command, passes stdout/stderr/stdin through and returns its exit status"
S() { "$GPURENT_BIN" ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" "$@"; }
set +e
S -- 'echo out; echo err >&2; exit 7' > "$T/o" 2> "$T/e"; rc=$?
set -e
[ $rc -eq 7 ] || fail "exit status $rc"
[ "$(cat "$T/o")" = out ] && [ "$(cat "$T/e")" = err ] || fail "streams: $(cat "$T/o") / $(cat "$T/e")"
[ "$(printf 'a b\n' | S -- cat)" = "a b" ] || fail "stdin"
[ "$(S -- printf '%s|' 'two words' "it's")" = "two words|it's|" ] || fail "argument quoting"
set +e
"$GPURENT_BIN" ssh --host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_WRONG_KNOWN_HOSTS" -- true 2> "$T/e"; rc=$?
set -e
[ $rc -eq 3 ] && grep -q CHANGED "$T/e" || fail "ssh with a changed host key: $rc $(cat "$T/e")"
sshd_stop

if command -v nvidia-smi > /dev/null 2>&1; then
  echo "== (skipped: this machine has a real nvidia-smi, the no-GPU case needs one without)"
else
  echo "== doctor on a server without nvidia-smi"
  SSHD_PATH_PREFIX=$T/emptybin sshd_start "$T/sshd2"
  # No GPU visible: the report, and exit 1 with the reason (the server cannot run GPU work).
  set +e
  D --json > "$T/d2.json"; rc=$?
  set -e
  [ $rc -eq 1 ] || fail "no gpu: exit $rc"
  [ "$(jq_get "$T/d2.json" 'd["gpus"]')" = "[]" ] || fail "no gpu: $(cat "$T/d2.json")"
  jq_get "$T/d2.json" 'd["gpu_problem"]' | grep -q "nvidia-smi not found" || fail "no-gpu message"
  [ "$(jq_get "$T/d2.json" 'd["error"]["code"], d["error"]["exit"]')" = "('not_found', 1)" ] || fail "no-gpu error: $(cat "$T/d2.json")"
  set +e
  D > "$T/d2.txt" 2> "$T/d2.err"; rc=$?
  set -e
  [ $rc -eq 1 ] && grep -q "no GPU visible on .*nvidia-smi not found" "$T/d2.err" || fail "no-gpu exit/reason: $rc $(cat "$T/d2.err")"
  grep -q "none: nvidia-smi not found" "$T/d2.txt" || fail "no-gpu text: $(cat "$T/d2.txt")"
  awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/d2.txt" || fail "doctor text wider than 80 columns: $(cat "$T/d2.txt")"
fi
echo "== a tracked server: doctor NAME records what it saw; status warns when the GPUs sit idle"
sshd_stop
# The fake answers as $T/gpu_mode says: busy (a process holds 30 GB at 90%) or idle.
echo busy > "$T/gpu_mode"
cat > "$T/idlebin/nvidia-smi" <<FAKE
#!/bin/sh
mode=\$(cat "$T/gpu_mode")
case "\$*" in
  *--query-gpu=*)
    if [ "\$mode" = idle ]; then echo "0, NVIDIA RTX PRO 6000, 97887, 2, 97885, 575.51.03, 0"
    else echo "0, NVIDIA RTX PRO 6000, 97887, 30000, 67887, 575.51.03, 90"; fi ;;
  *--query-compute-apps=*) [ "\$mode" = idle ] || echo "$OTHER, python, 30000" ;;
  *) echo "fake nvidia-smi" ;;
esac
FAKE
chmod +x "$T/idlebin/nvidia-smi"
SSHD_PATH_PREFIX=$T/idlebin sshd_start "$T/sshd3"
SINCE=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)
"$GPURENT_BIN" attach --provider gpucloud --card rtx-pro-6000 --price 1.60 --host "$SSHD_TARGET" --identity "$SSHD_KEY" \
  --known-hosts "$SSHD_KNOWN_HOSTS" --name idlebox --since "$SINCE" > /dev/null 2> "$T/e" || fail "attach: $(cat "$T/e")"
DN() { "$GPURENT_BIN" doctor idlebox --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS" --json > /dev/null; }
ST() { "$GPURENT_BIN" status idlebox --json > "$T/s.json"; }
DN || fail "doctor idlebox (busy)"
ST
[ "$(jq_get "$T/s.json" 'd["instances"][0]["idle"]')" = None ] || fail "busy is not idle: $(cat "$T/s.json")"
jq_get "$T/s.json" 'd["instances"][0]["warnings"]' | grep -q "idle GPU" && fail "no idle warning while busy"
echo idle > "$T/gpu_mode"
DN || fail "doctor idlebox (idle)"
ST
jq_get "$T/s.json" 'd["instances"][0]["warnings"]' | grep -q "idle GPU for 0 minutes (no GPU work at the doctor check of" \
  || fail "idle warning after one idle check: $(cat "$T/s.json")"
[ "$(jq_get "$T/s.json" 'd["instances"][0]["idle"]["checks"]')" = 1 ] || fail "one idle check"
"$GPURENT_BIN" status > "$T/s.txt"
grep -q "! idle GPU for 0 minutes" "$T/s.txt" || fail "text view: $(cat "$T/s.txt")"
# Move both recorded checks 30 minutes into the past (the clock cannot be set from outside):
# the idle run starts at the idle check, now 30 minutes ago.
python3 - "$GPURENT_STATE_DIR/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE doctor_observations SET at = at - 1800")
db.commit()
PY
ST
jq_get "$T/s.json" 'd["instances"][0]["warnings"]' | grep -Eq "idle GPU for (30|31) minutes" \
  || fail "idle for 30 minutes: $(cat "$T/s.json")"
DN || fail "doctor idlebox (idle again)"
ST
[ "$(jq_get "$T/s.json" 'd["instances"][0]["idle"]["checks"]')" = 2 ] || fail "two idle checks: $(cat "$T/s.json")"
jq_get "$T/s.json" 'd["instances"][0]["warnings"]' | grep -Eq "idle GPU for (30|31) minutes \(no GPU work at 2 doctor checks since" \
  || fail "idle since the first idle check: $(cat "$T/s.json")"
echo busy > "$T/gpu_mode"
DN || fail "doctor idlebox (busy again)"
ST
[ "$(jq_get "$T/s.json" 'd["instances"][0]["idle"]')" = None ] || fail "work seen again: no idle warning: $(cat "$T/s.json")"
# doctor --host (not a tracked name) records nothing.
echo idle > "$T/gpu_mode"
D --json > /dev/null
ST
[ "$(jq_get "$T/s.json" 'd["instances"][0]["idle"]')" = None ] || fail "doctor --host must not record"
sshd_stop
echo "test_doctor: all passed"
