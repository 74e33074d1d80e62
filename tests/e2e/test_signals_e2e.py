# SPDX-License-Identifier: MIT
"""SIGINT, SIGTERM and SIGHUP sent to the real binary at each stage of `up --wait`, `down
--destroy` and `backup`, against the provider double (its servers are real sshd processes):
the process stops at the next safe point, brings the record up to date, says what still bills,
at what rate, and the command that releases or resumes it, and exits 4; nothing is destroyed
that the user did not ask for; every server the double bills has an open record; a second
signal exits at once without leaving a record that claims less than the truth."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import BIN, by_name, check, status, run_against_double, wait_for  # noqa: E402


def start(e, *args, extra=None):
    env = dict(e.env)
    env.update(extra or {})
    return subprocess.Popen([BIN, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=e.tmp)


def finish(p):
    try:
        out, err = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "the interrupted process ended", err[-600:])
    return p.returncode, out, err


def calls(e, method, path):
    return [r for r in e.control("/_control/requests") if r["method"] == method and r["path"].startswith(path)]


def partial_files(root):
    found = []
    for d, _, files in os.walk(root):
        found += [os.path.join(d, f) for f in files if f.endswith(".gpurent-partial")]
    return found


def partial_bytes(root):
    total = 0
    for f in partial_files(root):
        try:
            total += os.path.getsize(f)
        except OSError:  # renamed into place meanwhile
            pass
    return total


def every_billed_server_is_recorded(e, when):
    _, doc = status(e)
    open_ids = {i.get("provider_id") for i in doc.get("instances", [])}
    live = {k for k, v in e.live().items() if v["phase"] not in ("gone",)}
    check(live <= open_ids, "every server the double bills has an open record (" + when + ")",
          "live %s, open %s" % (sorted(live), sorted(open_ids)))


def scenario(e):
    # 1. up --wait, interrupted while the server boots (2 s between looks): left as it is,
    #    recorded, and the rate and both commands said.
    p = start(e, "up", "--provider", "lambda", "--card", "a100-40gb", "--name", "l1", "--yes",
              extra={"GPURENT_POLL_MS": "2000"})
    check(wait_for(lambda: calls(e, "POST", "/lambda/api/v1/instance-operations/launch"), 30), "the launch was sent")
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    rc, out, err = finish(p)
    if os.environ.get("SHOW_TEXT"):
        print(err, file=sys.stderr)
    check(rc == 4, "up interrupted while booting exits 4", err)
    check("interrupted" in err and "(SIGINT)" in err, "it says it was interrupted, by what", err)
    check("was NOT destroyed and bills $1.29/h until released" in err, "it says what bills, at what rate", err)
    check("gpurent down l1 --destroy --no-backup" in err and "gpurent up --provider lambda --card a100-40gb-sxm --gpus 1 --name l1"
          in err, "and the commands that release or resume it", err)
    check(not calls(e, "POST", "/lambda/api/v1/instance-operations/terminate"), "nothing was destroyed")
    _, doc = status(e, "l1")
    row = (doc.get("instances") or [{}])[0]
    check(row.get("state") in ("provisioning", "running") and row.get("cost_per_hour_now") == 1.29,
          "the record is open and bills the rate", json.dumps(row))
    every_billed_server_is_recorded(e, "after an interrupted up")
    # (--no-wait: the double's Lambda servers listen on no port 22 for SSH to answer on.)
    p = e.run("up", "--provider", "lambda", "--card", "a100-40gb-sxm", "--gpus", "1", "--name", "l1", "--yes", "--json",
              "--no-wait")
    check(p.returncode == 0 and "resuming l1" in p.stderr, "the resume command given resumes it", p.stderr)
    check(len(calls(e, "POST", "/lambda/api/v1/instance-operations/launch")) == 1, "without a second launch")

    # 2. SIGHUP (a closed terminal) on `up` of a RunPod pod: the same.
    p = start(e, "up", "--provider", "runpod", "--card", "rtx-4090", "--name", "r1", "--yes",
              extra={"GPURENT_POLL_MS": "2000"})
    check(wait_for(lambda: calls(e, "POST", "/runpod/v1/pods"), 30), "the create was sent")
    time.sleep(0.5)
    p.send_signal(signal.SIGHUP)
    rc, out, err = finish(p)
    check(rc == 4 and "(SIGHUP)" in err and "was NOT destroyed" in err, "SIGHUP: the same", err)
    every_billed_server_is_recorded(e, "after SIGHUP")
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--gpus", "1", "--name", "r1", "--yes", "--json")
    check(p.returncode == 0, "r1 resumed", p.stderr)
    p = e.run("completion", "servers")
    check(p.returncode == 0 and sorted(p.stdout.split()) == ["l1", "r1"], "shell completion offers the tracked servers",
          p.stdout + p.stderr)

    # 3. down --destroy, interrupted during its backup: nothing is destroyed, the copy so far is
    #    kept, and the same command resumes the backup and then destroys.
    ws = os.path.join(e.tmp, "workspace")
    os.makedirs(ws)
    with open(os.path.join(ws, "big.bin"), "wb") as f:
        f.truncate(600 * 1000 * 1000)  # sparse: cheap to make, slow enough to copy
    with open(os.path.join(ws, "small.txt"), "w") as f:
        f.write("checkpoint\n")
    dest = os.path.join(e.tmp, "bk-r1")
    p = start(e, "down", "r1", "--destroy", "--yes", "--path", ws, "--to", dest)
    check(wait_for(lambda: partial_files(dest), 60), "the backup began")
    p.send_signal(signal.SIGINT)
    rc, out, err = finish(p)
    if os.environ.get("SHOW_TEXT"):
        print(err, file=sys.stderr)
    check(rc == 4, "down --destroy interrupted during the backup exits 4", err)
    check("nothing was destroyed" in err and "resumes the backup, then destroys" in err, "and says so", err)
    check("is recorded as running and bills $0.69/h" in err, "with the rate it bills", err)
    check(not calls(e, "DELETE", "/runpod/v1/pods/"), "no DELETE was sent")
    check(one_state(e, "r1") == "running", "r1 is still running in the record")
    every_billed_server_is_recorded(e, "after an interrupted down")

    # 4. backup, interrupted (SIGTERM): not recorded as a backup; the rate meanwhile; a re-run resumes.
    bdest = os.path.join(e.tmp, "bk-only")
    p = start(e, "backup", "r1", ws, "--to", bdest)
    check(wait_for(lambda: partial_files(bdest), 60), "the backup began")
    p.send_signal(signal.SIGTERM)
    rc, out, err = finish(p)
    check(rc == 4 and "(SIGTERM" in err and "not verified and not recorded as a backup" in err, "backup: interrupted", err)
    check("r1 is running and bills $0.69/h meanwhile" in err, "backup says the server bills meanwhile", err)
    check(partial_files(bdest), "the partial copy is kept for the re-run")
    p = e.run("backup", "r1", ws, "--to", bdest, "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0 and doc.get("verified") and doc.get("bytes_copied", 0) < doc.get("bytes_total", 0),
          "the re-run resumes the partial file and verifies", p.stdout + p.stderr)
    subprocess.run(["rm", "-rf", bdest])

    # 5. A second signal exits at once; the record never claims less than the truth. (The same
    #    --to: the interrupted backup of step 3 is recorded, and only it resumes.)
    left = partial_bytes(dest)  # step 3's partial copy: the resumed backup adds to it
    p = start(e, "down", "r1", "--destroy", "--yes", "--path", ws, "--to", dest)
    check(wait_for(lambda: partial_bytes(dest) > left, 60), "the backup began again")
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGTERM)  # (two of the same signal may arrive as one)
    rc, out, err = finish(p)
    check(rc == 4 and "second signal: exiting now" in err, "a second signal exits at once", err)
    check(one_state(e, "r1") in ("running", "destroying"), "r1 is still open in the record")
    every_billed_server_is_recorded(e, "after a second signal")

    # 6. The same command, uninterrupted, finishes the job.
    p = e.run("down", "r1", "--destroy", "--yes", "--path", ws, "--to", dest)
    check(p.returncode == 0 and one_state(e, "r1") == "destroyed", "the same down --destroy resumes and destroys", p.stderr)
    p = e.run("down", "l1", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "l1 released", p.stderr)
    every_billed_server_is_recorded(e, "at the end")


def one_state(e, name):
    _, doc = status(e, name)
    rows = doc.get("instances", [])
    return rows[0].get("state") if rows else None


if __name__ == "__main__":
    sys.exit(run_against_double("gpurent-signals-", scenario))
