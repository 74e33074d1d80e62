# SPDX-License-Identifier: MIT
"""autostop against the provider double, whose servers are real sshd processes, with an
nvidia-smi stand-in on the sessions' PATH that replays a trace (busy, idle, a stalled loop holding
memory at 0 %, an idle notebook, nvidia-smi failing) and a sampling interval of 1 s:
 * a busy server and a failing nvidia-smi are left alone; a paused watchdog does nothing;
 * the watchdog outlives the SSH session that armed it;
 * the stalled loop is idle: the double receives the RunPod stop call (with the handed-over key),
   the watchdog exits and removes the key, and `status --refresh` records the stop at the time
   the watchdog's idle run says;
 * a server without an API (gpucloud, attached) runs --on-idle, is marked idle and is never
   reported stopped; an interactive (pty) session keeps it busy; --cancel ends the watchdog;
 * a destroy stage without --backup-to/--no-backup and hibernate on RunPod are refused;
 * a server autostop cannot stop through an API is refused (exit 3) unless --then mark-idle says
   what it may do instead;
 * `up --autostop --server-credential --json` reports the watchdog in an "autostop" object, and a
   watchdog it cannot arm as an error object there with exit 4;
 * `status` shows the autostop line; once its deadline passed, plain `status` settles the stop
   with one GET of that server, or says "may be stopped: refresh" when the provider cannot be asked.
Hermetic: HOME, XDG_* and GPURENT_STATE_DIR live in a temp dir; the double's sshd sessions start
in a test HOME (SSHD_HOME) with the stand-in first on PATH (SSHD_PATH_PREFIX)."""
import json
import os
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import KEY, by_name, check, status, run_autostop_server, wait_for  # noqa: E402

FAKE = r"""#!/bin/sh
mode=$(cat "%(trace)s" 2>/dev/null)
case "$1" in
  --query-gpu=*)
    case $mode in
      busy) printf '0, 87, 20000\n1, 91, 20000\n';;
      idle) printf '0, 0, 0\n1, 0, 0\n';;
      stalled) printf '0, 0, 30000\n1, 0, 30000\n';;
      notebook) printf '0, 1, 6000\n';;
      na) printf '0, [N/A], 100\n';;
      *) echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2; exit 9;;
    esac;;
  --query-compute-apps=*)
    case $mode in
      stalled|notebook|busy) printf '4242, 30000\n';;
      fail) exit 9;;
    esac;;
esac
"""


def lines(path, kind):
    try:
        return [dict(w.split("=", 1) for w in l.split()[1:] if "=" in w)
                for l in open(path).read().splitlines() if l.startswith(kind + " ")]
    except OSError:
        return []


def api_calls(e, what):
    return [r for r in e.control("/_control/requests") if what(r)]


def scenario(e, tmp):
    server_home = os.environ["SSHD_HOME"]
    trace = os.path.join(tmp, "trace")
    d = os.path.join(server_home, ".gpurent", "autostop")
    wlog = os.path.join(d, "log")
    mode = lambda m: open(trace, "w").write(m)  # noqa: E731
    env = {"GPURENT_AUTOSTOP_INTERVAL_S": "1"}
    mode("busy")

    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "idle1", "--yes", "--json")
    check(p.returncode == 0, "up", p.stderr)
    pod = json.loads(p.stdout).get("provider_id", "") if p.returncode == 0 else ""

    # Refusals: hibernate on RunPod, a destroy stage without a backup rule.
    p = e.run("autostop", "idle1", "--idle", "5s", "--then", "hibernate", extra=env)
    check(p.returncode == 3 and "cannot hibernate" in p.stderr, "RunPod cannot hibernate: refused", p.stderr)
    p = e.run("autostop", "idle1", "--idle", "5s", "--then", "destroy", "--json", extra=env)
    check(p.returncode == 3 and "--backup-to" in p.stdout, "destroy without --backup-to/--no-backup: refused", p.stdout)

    p = e.run("autostop", "idle1", "--idle", "5s", "--server-credential", "RUNPOD_API_KEY", "--json", extra=env)
    check(p.returncode == 0, "autostop arms", p.stderr)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(doc.get("armed") is True and doc.get("can_stop_billing") is True and doc.get("then") == "stop"
          and doc.get("idle_limit_s") == 5, "armed: stop after 5 s, can stop billing", p.stdout)
    cred = os.path.join(d, "credential")
    check(os.path.exists(cred) and stat.S_IMODE(os.stat(cred).st_mode) == 0o600, "the credential is stored 0600")
    check(KEY not in open(os.path.join(d, "config")).read(), "the key is not in the config")
    p = e.run("status")
    check(p.returncode == 0 and "autostop armed: stop after 5s idle" in p.stdout, "status text shows the autostop", p.stdout)
    # The arming session has ended; the watchdog runs on, sampling.
    check(wait_for(lambda: len(lines(wlog, "sample")) >= 3, 10), "the watchdog outlives the SSH session and samples")
    check(all(s.get("idle") == "0" for s in lines(wlog, "sample")), "busy GPUs are not idle")

    mode("fail")
    n = len(lines(wlog, "sample"))
    check(wait_for(lambda: len(lines(wlog, "sample")) >= n + 7, 15), "samples while nvidia-smi fails")
    failed = [s for s in lines(wlog, "sample")[n + 1:]]
    check(failed and all(s.get("r") == "0" and s.get("idle") == "0" for s in failed), "nvidia-smi failing counts as busy",
          str(failed[-2:]))
    mode("na")
    n = len(lines(wlog, "sample"))
    check(wait_for(lambda: len(lines(wlog, "sample")) >= n + 2, 8), "samples with [N/A] utilization")
    check(lines(wlog, "sample")[-1].get("r") == "0", "an [N/A] utilization is unreadable (busy)")

    p = e.run("autostop", "idle1", "--pause", "1h", "--json", extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0 and doc.get("paused") is True, "--pause", p.stdout + p.stderr)
    mode("stalled")
    time.sleep(7)
    check(not api_calls(e, lambda r: r["path"].endswith("/stop")), "nothing is stopped while paused")
    p = e.run("autostop", "idle1", "--resume", "--json", extra=env)
    check(p.returncode == 0 and json.loads(p.stdout or "{}").get("paused") is False, "--resume", p.stdout + p.stderr)

    # The stalled loop (memory held at 0 %) is idle; gpurent reads the idle run once meanwhile.
    check(wait_for(lambda: any(s.get("idle") == "1" for s in lines(wlog, "sample")[-2:]), 8), "the stalled loop is idle")
    p = e.run("autostop", "idle1", "--json", extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(doc.get("next_action") == "stop" and doc.get("next_action_at") and doc.get("last_sample", {}).get("readable"),
          "autostop NAME shows the next action and when", p.stdout)
    stop_path = "/runpod/v1/pods/%s/stop" % pod
    check(wait_for(lambda: api_calls(e, lambda r: r["path"] == stop_path and r["method"] == "POST"), 20),
          "the double received the stop call from the server")
    calls = api_calls(e, lambda r: r["path"] == stop_path)
    check(calls and calls[0]["auth"] == "Bearer " + KEY, "with the handed-over key")
    check(wait_for(lambda: any(x.get("why") == "stop" for x in lines(wlog, "exit")), 5), "the watchdog ended after the stop")
    check(wait_for(lambda: not os.path.exists(cred), 5), "the handed-over credential is removed when the watchdog exits")
    # Its deadline has passed: a provider that cannot be asked leaves "may be stopped"; one that
    # can is asked once, by a GET of that server (no list), and the stop is recorded.
    p, doc = status(e, extra_env={"RUNPOD_API_KEY": ""})
    t = by_name(doc, "idle1")
    check(t is not None and t.get("may_be_stopped") is True and t["state"] == "running"
          and any("may be stopped" in w for w in t.get("warnings", [])), "no key: may be stopped", p.stdout + p.stderr)
    p = e.run("status", extra={"RUNPOD_API_KEY": ""})
    check("(may be stopped: refresh)" in p.stdout, "the text says so too", p.stdout)
    before = len(e.control("/_control/requests"))
    p, doc = status(e)
    t = by_name(doc, "idle1")
    check(t is not None and t["state"] == "stopped" and t.get("may_be_stopped") is False,
          "status without --refresh settles the stop once the deadline passed", p.stdout + p.stderr)
    asked = [r for r in e.control("/_control/requests")[before:] if not r["path"].startswith("/_control")]
    check([(r["method"], r["path"]) for r in asked] == [("GET", "/runpod/v1/pods/" + pod)], "with one GET of that server",
          str(asked))
    acts = [a for a in lines(wlog, "action") if a.get("do") == "stop" and a.get("result") == "ok"]
    idle_run = [s for s in lines(wlog, "sample") if s.get("idle") == "1"]
    check(acts and idle_run and int(acts[0]["t"]) - int(idle_run[-1]["since"]) >= 5, "stopped once idle for the limit",
          str(acts) + str(idle_run[-1:]))
    p, doc = status(e, "--refresh")
    t = by_name(doc, "idle1")
    check(t is not None and t["state"] == "stopped", "status --refresh: stopped", json.dumps(t) + p.stderr)
    p, doc = status(e, "idle1")
    t = by_name(doc, "idle1")
    if t and acts:
        since = int(time.mktime(time.strptime(t["since"], "%Y-%m-%dT%H:%M:%SZ"))) - time.timezone
        check(abs(since - int(acts[0]["t"])) <= 2, "the ledger records the stop at the time it happened",
              "%s vs %s\n%s" % (t["since"], acts[0]["t"], open(wlog).read()[-1500:]))

    # A server without an API: gpucloud, attached to a second server's sshd.
    mode("busy")
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "host2", "--yes", "--json",
              "--autostop", "2h", "--server-credential", "RUNPOD_API_KEY", extra=env)
    check(p.returncode == 0, "up host2 --autostop", p.stderr)
    h = json.loads(p.stdout) if p.returncode == 0 else {}
    a = h.get("autostop") or {}
    check(a.get("armed") is True and a.get("can_stop_billing") is True and a.get("idle_limit_s") == 7200,
          "up --autostop --json: the watchdog's state", p.stdout)
    check(os.path.exists(cred), "--server-credential was handed over by up")
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "host2", "--yes", "--json",
              "--autostop", "2h:hibernate", extra=env)
    a = (json.loads(p.stdout) if p.stdout.strip() else {}).get("autostop") or {}
    check(p.returncode == 4 and a.get("error", {}).get("code") == "refused" and "hibernate" in a["error"].get("message", ""),
          "up --autostop that cannot arm: an error object, exit 4", "%d %s" % (p.returncode, p.stdout))
    creates = len(api_calls(e, lambda r: r["path"] == "/runpod/v1/pods" and r["method"] == "POST"))
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "host3", "--yes", "--autostop", "soon")
    check(p.returncode == 2 and len(api_calls(e, lambda r: r["path"] == "/runpod/v1/pods" and r["method"] == "POST")) == creates,
          "a malformed --autostop is a usage error before anything is rented", p.stderr)
    p = e.run("autostop", "host2", "--cancel", extra=env)
    check(p.returncode == 0, "cancel host2's watchdog", p.stderr)
    hostport = "root@%s:%s" % (h.get("host", "127.0.0.1"), h.get("port", 22))
    p = e.run("attach", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--host", hostport, "--name", "box",
              "--accept-new-host-key", "--price", "1.6")
    check(p.returncode == 0, "attach box", p.stderr)
    hook = os.path.join(server_home, "hook.txt")
    p = e.run("autostop", "box", "--idle", "3s", "--on-idle", "echo idle >> $HOME/hook.txt", "--json", extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 3 and "--then mark-idle" in doc.get("error", {}).get("hint", "") + doc.get("error", {}).get("message", ""),
          "no API: refused unless --then mark-idle", p.stdout)
    p = e.run("autostop", "box", "--idle", "3s", "--then", "mark-idle", "--on-idle", "echo idle >> $HOME/hook.txt", "--json",
              extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0 and doc.get("can_stop_billing") is False, "no API: cannot stop billing", p.stdout)
    check("cannot be stopped through an API" in p.stderr, "says so when armed", p.stderr)
    # An interactive session (a pty over SSH) keeps it busy.
    mode("idle")
    port = str(h.get("port", 22))
    sess = subprocess.Popen(["ssh", "-tt", "-p", port, "-i", os.path.join(e.env["HOME"], ".ssh", "id_ed25519"),
                             "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                             "root@127.0.0.1", "sleep 5"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    check(wait_for(lambda: any(s.get("sessions") not in ("0", None) and s.get("idle") == "0"
                               for s in lines(wlog, "sample")), 8), "an interactive session counts as busy")
    sess.wait(timeout=20)
    mode("notebook")
    check(wait_for(lambda: os.path.exists(hook), 15), "--on-idle ran when the notebook sat idle")
    # The watchdog logs the action after the hook has run: wait for the line, not only the hook.
    wait_for(lambda: [a for a in lines(wlog, "action") if a.get("do") == "mark-idle"], 10)
    marks = [a for a in lines(wlog, "action") if a.get("do") == "mark-idle"]
    check(marks and "billing-not-stopped" in marks[-1].get("detail", ""), "marked idle, billing not stopped", str(marks))
    p, doc = status(e, "--refresh")
    b = by_name(doc, "box")
    check(b is not None and b["state"] == "running", "a no-API server is never reported stopped", p.stdout)
    check(b is not None and any("cannot stop billing" in w for w in b.get("warnings", [])), "status says it was marked idle",
          p.stdout)
    check(not api_calls(e, lambda r: r["method"] in ("DELETE",) or (r["path"].endswith("/stop") and r["path"] != stop_path)),
          "no provider call for the no-API server")
    p = e.run("autostop", "box", "--cancel", "--json", extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0 and doc.get("armed") is False, "--cancel", p.stdout + p.stderr)
    check(any(x.get("why") == "cancelled" for x in lines(wlog, "exit")), "the watchdog ended on --cancel")
    p = e.run("autostop", "box", "--pause", "1h", extra=env)
    check(p.returncode == 1 and "no autostop watchdog runs" in p.stderr, "--pause without a watchdog: not found", p.stderr)


def fake_smi(tmp):
    return FAKE % {"trace": os.path.join(tmp, "trace")}


if __name__ == "__main__":
    sys.exit(run_autostop_server("gpurent-autostop-", scenario, fake_smi))
