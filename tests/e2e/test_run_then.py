# SPDX-License-Identifier: MIT
"""run --then against the provider double, whose servers are real sshd processes: a detached
job's --then backup carried out by the next `gpurent status`; a failed backup step skips
`down:destroy` (exit 4, the server still runs); then `--then backup:out --then down:destroy`
backs up the job's output, destroys the server through down's rules (its verified backup of
the same path) and closes the ledger. Hermetic: HOME, XDG_* and GPURENT_STATE_DIR live in a temp
dir; the double's sshd sessions start in a test HOME (SSHD_HOME)."""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import by_name, check, status, run_against_double  # noqa: E402


def job(doc, job_id):
    return next((j for j in doc.get("jobs", []) if j["id"] == job_id), None)


def scenario(e):
    server_home = os.environ["SSHD_HOME"]
    tmp = e.tmp
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train", "--yes", "--json")
    check(p.returncode == 0, "up", p.stderr)
    proj = os.path.join(tmp, "proj")
    os.makedirs(proj)
    with open(os.path.join(proj, "train.sh"), "w") as f:
        f.write("mkdir -p out && echo weights > out/model.txt && echo trained\n")

    # Detached: the step waits for the job to end, and `status` carries it out.
    p = e.run("run", "train", "-d", "--workdir", proj, "--then", "backup:out:" + os.path.join(tmp, "early"),
              "--", "sleep 0.5; sh train.sh")
    check(p.returncode == 0, "run -d", p.stderr)
    early = p.stdout.strip()
    exit_file = os.path.join(server_home, ".gpurent", "jobs", early, "exit")
    for _ in range(100):
        if os.path.exists(exit_file):
            break
        time.sleep(0.05)
    p, doc = status(e)
    check(p.returncode == 0, "status", p.stderr)
    check(os.path.exists(os.path.join(tmp, "early", "model.txt")), "status carried out the backup step", p.stderr)
    p = e.run("jobs", "train", "--json")
    d = json.loads(p.stdout) if p.returncode == 0 else {}
    j = job(d, early)
    check(j is not None and j["state"] == "succeeded" and j["then"][0]["state"] == "done", "the step is recorded done",
          p.stdout)

    # A failed backup step: the destroy after it is skipped, exit 4, the server still runs.
    p = e.run("run", "train", "--workdir", proj, "--then", "backup:no-such-dir", "--then", "down:destroy", "--json",
              "--", "true")
    check(p.returncode == 4, "a failed --then step exits 4", "%d %s" % (p.returncode, p.stderr))
    d = json.loads(p.stdout) if p.stdout.strip() else {}
    steps = [(s["step"].split(":")[0], s["state"]) for s in d.get("job", {}).get("then", [])]
    check(steps == [("backup", "failed"), ("down", "skipped")], "backup failed, destroy skipped", p.stdout)
    p, doc = status(e)
    t = by_name(doc, "train")
    check(t is not None and t["state"] == "running", "the server still runs", p.stdout)

    # The whole loop: run, back up the output, destroy (down's rules), ledger closed.
    p = e.run("run", "train", "--workdir", proj, "--then", "backup:out", "--then", "down:destroy", "--json",
              "--", "sh train.sh")
    check(p.returncode == 0, "run --then backup --then down:destroy", p.stderr)
    d = json.loads(p.stdout) if p.stdout.strip() else {}
    check(d.get("job", {}).get("state") == "succeeded", "the job succeeded", p.stdout)
    check([s["state"] for s in d.get("job", {}).get("then", [])] == ["done", "done"], "both steps done", p.stdout)
    check("trained" in p.stderr, "the job's output is shown (on stderr under --json)", p.stderr)
    # Not inside the project (the next push would upload it again): the user's data directory.
    backed = os.path.join(e.env["HOME"], ".local", "share", "gpurent", "backups", "train", "out", "model.txt")
    check(os.path.exists(backed), "the output was backed up to ~/.local/share/gpurent/backups/train", p.stderr)
    check(not os.path.exists(os.path.join(tmp, "gpurent-backups")) and
          not os.path.exists(os.path.join(proj, "gpurent-backups")), "nothing was written inside the project")
    check("cost per hour" in p.stderr, "down said what it costs before destroying", p.stderr)
    check(not e.live(), "the server is gone at the provider")
    p, doc = status(e, "train")
    check(doc.get("instances", [{}])[0].get("state") == "destroyed", "the ledger is closed as destroyed", p.stdout)


if __name__ == "__main__":
    # The double (started by run_against_double) inherits SSHD_HOME: its sshd sessions start in
    # this test home (tests/e2e/sshd.sh).
    os.environ["SSHD_HOME"] = tempfile.mkdtemp(prefix="gpurent-then-server-")
    try:
        sys.exit(run_against_double("gpurent-then-", scenario))
    finally:
        shutil.rmtree(os.environ["SSHD_HOME"], ignore_errors=True)
