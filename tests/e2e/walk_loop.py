# SPDX-License-Identifier: MIT
"""Not a test: prints the whole loop (up, push, run, jobs, autostop, status, stop, start, logs,
down --destroy) as a user sees it, against the provider double and its loopback sshd (as root):
  GPURENT_BIN=build/gpurent GPURENT_SOURCE_DIR=. python3 tests/e2e/walk_loop.py"""
import os, sys, tempfile, json
sys.path.insert(0, os.path.join(os.environ["GPURENT_SOURCE_DIR"], "tests/e2e"))
import lifecycle_env as L

def show(e, *args, extra=None):
    p = e.run(*args, extra=extra)
    print("$ gpurent " + " ".join(args))
    out = (p.stdout + p.stderr).strip()
    print(out.replace(e.tmp, "$TMP"))
    print("[exit %d]\n" % p.returncode)
    return p

def scenario(e):
    proj = os.path.join(e.tmp, "proj"); os.makedirs(proj)
    open(os.path.join(proj, "train.sh"), "w").write(
        "mkdir -p ckpt && head -c 300000 /dev/urandom > ckpt/step-100.pt && echo trained\n")
    show(e, "up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes")
    show(e, "push", "train1", proj)
    show(e, "run", "train1", "--workdir", proj, "--", "sh train.sh")
    show(e, "jobs", "train1")
    show(e, "autostop", "train1", "--idle", "30m")
    show(e, "autostop", "train1", "--idle", "30m", "--server-credential", "RUNPOD_API_KEY")
    show(e, "status")
    show(e, "autostop", "train1", "--cancel")
    show(e, "down", "train1", "--stop", "--yes")
    show(e, "logs", "train1", "1")
    show(e, "jobs", "train1")
    show(e, "up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes")
    show(e, "start", "train1", "--yes", "--accept-new-host-key")
    show(e, "logs", "train1", "1")
    show(e, "down", "train1", "--destroy", "--yes")
    reqs = [(r["method"], r["path"]) for r in e.control("/_control/requests") if not r["path"].startswith("/_control")]
    print("provider saw:", [m + " " + p for m, p in reqs if m != "GET"])
    for d, _, fs in os.walk(os.path.join(e.env["HOME"], ".local/share/gpurent/backups")):
        for f in fs:
            print("local backup:", os.path.join(d, f).replace(e.tmp, "$TMP"))

os.environ.setdefault("SSHD_HOME", tempfile.mkdtemp(prefix="walk-home-"))
sys.exit(L.run_against_double("walk-", scenario))
