# SPDX-License-Identifier: MIT
"""What `down --destroy` backs up (issue #45), against the provider double whose servers are real
sshd processes: the directories push/run used (recorded in the state store) with the job's
checkpoint in them, each path named with its size in the text and the JSON; a backup that would
hold nothing the jobs wrote is refused; a destination that cannot be written or lacks the room is
refused before anything is copied; an interrupted `--path` backup prints a command that, run as
printed by a shell, resumes that path to that destination (and other flags are refused meanwhile);
a stopped server's refusal names `gpurent start NAME` first. Hermetic: HOME, XDG_* and
GPURENT_STATE_DIR in a temp dir; the double's sshd sessions start in a test HOME (SSHD_HOME)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import BIN, check, status, run_against_double, wait_for  # noqa: E402


def deletes(e):
    return [r for r in e.control("/_control/requests") if r["method"] == "DELETE" and r["path"].startswith("/runpod/v1/pods/")]


def state_of(e, name):
    _, doc = status(e, name)
    rows = doc.get("instances", [])
    return rows[0].get("state") if rows else None


def partial_files(root):
    found = []
    for d, _, files in os.walk(root):
        found += [os.path.join(d, f) for f in files if f.endswith(".gpurent-partial")]
    return found


def up(e, name):
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", name, "--yes", "--json")
    check(p.returncode == 0, "up " + name, p.stderr)


def scenario(e):
    server_home = os.environ["SSHD_HOME"]
    tmp = e.tmp
    proj = os.path.join(tmp, "proj")
    os.makedirs(proj)
    with open(os.path.join(proj, "train.sh"), "w") as f:
        f.write("mkdir -p ckpt && head -c 300000 /dev/urandom > ckpt/step-100.pt && echo trained\n")

    # 1. push + run write a checkpoint under the pushed directory; `down --destroy --yes` (no
    #    --path) backs it up, and says which paths it backed up with their sizes.
    up(e, "train2")
    p = e.run("run", "train2", "--workdir", proj, "--", "sh train.sh")
    check(p.returncode == 0, "run writes the checkpoint", p.stderr)
    remote_ckpt = os.path.join(server_home, "gpurent", "proj", "ckpt", "step-100.pt")
    check(os.path.exists(remote_ckpt), "the checkpoint is on the server under the pushed directory")
    # `jobs` records the job's directory as the server resolved it (HOME/gpurent/proj): still the
    # pushed directory, not a second source that would land on the same name.
    e.run("jobs", "train2")
    p = e.run("down", "train2", "--destroy", "--yes", "--json")
    check(p.returncode == 0, "down --destroy backs up what the job wrote and destroys", p.stderr)
    if os.environ.get("SHOW_TEXT"):
        print(p.stderr, file=sys.stderr)
    dest = os.path.join(e.env["HOME"], ".local", "share", "gpurent", "backups", "train2")
    local = os.path.join(dest, "ckpt", "step-100.pt")
    check(os.path.exists(local) and open(local, "rb").read() == open(remote_ckpt, "rb").read(),
          "the checkpoint is in the local backup", p.stderr)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    paths = {x["path"]: x for x in doc.get("backup", {}).get("paths", [])}
    proj_row = paths.get("~/gpurent/proj", {})
    check(proj_row.get("exists") and proj_row.get("bytes", 0) >= 300000 and proj_row.get("files") == 2 and
          proj_row.get("copied") and proj_row.get("origins") == ["push", "job"],
          "the JSON names the pushed directory with its size", p.stdout)
    ws = paths.get("/workspace", {})
    check(ws.get("exists") is False and ws.get("copied") is False and ws.get("origins") == ["workspace"],
          "and the provider's volume path, not on this server", p.stdout)
    check(doc.get("backup", {}).get("dest") == dest and doc["backup"].get("verified") is True, "and where it went",
          p.stdout)
    check(re.search(r"~/gpurent/proj \(push, job\): 29[0-9.]+ KiB in 2 files", p.stderr), "the text names it with its size", p.stderr)
    check("/workspace (workspace): NOT on the server" in p.stderr, "and the volume path it did not find", p.stderr)
    check(p.stderr.find("~/gpurent/proj (push, job)") < p.stderr.find("Really destroy") or "Really" not in p.stderr,
          "before the question", p.stderr)
    check(state_of(e, "train2") == "destroyed", "train2 destroyed")

    # 2. The jobs' directory is gone from the server: the backup would hold nothing they wrote.
    up(e, "train3")
    p = e.run("push", "train3", proj)
    check(p.returncode == 0, "push to train3", p.stderr)
    shutil.rmtree(os.path.join(server_home, "gpurent", "proj"))
    before = len(deletes(e))
    p = e.run("down", "train3", "--destroy", "--yes")
    check(p.returncode == 3 and "nothing your jobs wrote" in p.stderr and "~/gpurent/proj (NOT on the server)" in p.stderr
          and "/workspace (NOT on the server)" in p.stderr, "a backup of nothing of the jobs' is refused, naming what it looked at",
          p.stderr)
    check(len(deletes(e)) == before and state_of(e, "train3") == "running", "nothing destroyed")

    # 3. A destination that cannot be created: refused before anything is copied or asked.
    p = e.run("push", "train3", proj)
    check(p.returncode == 0, "push again", p.stderr)
    blocker = os.path.join(tmp, "a-file")
    open(blocker, "w").close()
    p = e.run("down", "train3", "--destroy", "--yes", "--to", os.path.join(blocker, "bk"))
    check(p.returncode == 3 and "backup destination" in p.stderr and "cannot be created" in p.stderr,
          "an unwritable destination is refused", p.stderr)
    check(len(deletes(e)) == before and state_of(e, "train3") == "running", "nothing destroyed")
    p = e.run("down", "train3", "--destroy", "--to", os.path.join(blocker, "bk"))
    check(p.returncode == 3 and "cannot be created" in p.stderr, "refused before the question, without --yes", p.stderr)

    # 4. A destination too small for what is to copy: refused before the copy, nothing written.
    small = os.path.join(tmp, "small")
    os.makedirs(small)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small], capture_output=True).returncode == 0
    if mounted:
        try:
            with open(os.path.join(proj, "weights.bin"), "wb") as f:
                f.write(os.urandom(3 * 1000 * 1000))
            p = e.run("push", "train3", proj)
            check(p.returncode == 0, "push the weights", p.stderr)
            p = e.run("down", "train3", "--destroy", "--yes", "--to", os.path.join(small, "bk"))
            check(p.returncode == 3 and "free and the backup needs" in p.stderr, "a full destination is refused", p.stderr)
            check(not os.path.exists(os.path.join(small, "bk")), "nothing was written there")
            check(len(deletes(e)) == before and state_of(e, "train3") == "running", "nothing destroyed")
            os.remove(os.path.join(proj, "weights.bin"))
        finally:
            subprocess.run(["umount", small])
    else:
        print("note: no tmpfs (not allowed here): the full-destination case is not run", file=sys.stderr)

    # 5. Stopped: cannot be backed up; the refusal names `gpurent start` before --no-backup.
    p = e.run("down", "train3", "--stop", "--yes")
    check(p.returncode == 0, "stop train3", p.stderr)
    p = e.run("down", "train3", "--destroy", "--yes")
    check(p.returncode == 3 and "gpurent start train3" in p.stderr and "--no-backup" in p.stderr and
          p.stderr.find("gpurent start train3") < p.stderr.find("--no-backup"),
          "a stopped server: start it first, or --no-backup", p.stderr)
    check(len(deletes(e)) == before, "nothing destroyed")

    # 6. An interrupted --path backup: the printed command, run as printed, resumes that path
    #    to that destination, then destroys.
    up(e, "train5")
    big = os.path.join(tmp, "big ckpt")
    os.makedirs(big)
    with open(os.path.join(big, "big.bin"), "wb") as f:
        f.truncate(600 * 1000 * 1000)  # sparse: cheap to make, slow enough to copy
    with open(os.path.join(big, "small.txt"), "w") as f:
        f.write("checkpoint\n")
    bdest = os.path.join(tmp, "bk 5")
    env = dict(e.env)
    proc = subprocess.Popen([BIN, "down", "train5", "--destroy", "--yes", "--path", big, "--to", bdest], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
    check(wait_for(lambda: partial_files(bdest), 60), "the backup began")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    check(proc.returncode == 4 and "nothing was destroyed" in err, "interrupted: exit 4, nothing destroyed", err)
    m = re.search(r"and `([^`]*)` resumes the backup", err)
    check(m is not None, "the hint names the command", err)
    printed = m.group(1) if m else ""
    check("--path '" + big + "'" in printed and "--to '" + bdest + "'" in printed and "--yes" in printed,
          "the command repeats every flag, quoted", printed)
    check(state_of(e, "train5") == "running", "train5 still runs")
    # Other flags while an interrupted backup is recorded: refused, nothing copied or destroyed.
    other = os.path.join(tmp, "other-dest")
    p = e.run("down", "train5", "--destroy", "--yes", "--path", big, "--to", other)
    check(p.returncode == 3 and "differently" in p.stderr and bdest in p.stderr, "another --to is refused", p.stderr)
    check(not os.path.exists(other) and state_of(e, "train5") == "running", "nothing copied, nothing destroyed")
    # The printed command, as a shell runs it (gpurent on PATH), from another directory.
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(BIN, os.path.join(bindir, "gpurent"))
    env["PATH"] = bindir + ":" + env["PATH"]
    p = subprocess.run(["sh", "-c", printed], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=120, cwd=server_home)
    check(p.returncode == 0 and "resuming the backup of train5" in p.stderr, "the printed command resumes", p.stderr)
    check(os.path.getsize(os.path.join(bdest, "big.bin")) == 600 * 1000 * 1000 and
          open(os.path.join(bdest, "small.txt")).read() == "checkpoint\n" and not partial_files(bdest),
          "that path, to that destination, complete")
    check(state_of(e, "train5") == "destroyed", "then train5 is destroyed", p.stderr)
    p = e.run("down", "train3", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "train3 released", p.stderr)


if __name__ == "__main__":
    os.environ["SSHD_HOME"] = tempfile.mkdtemp(prefix="gpurent-destroy-backup-server-")
    try:
        sys.exit(run_against_double("gpurent-destroy-backup-", scenario))
    finally:
        shutil.rmtree(os.environ["SSHD_HOME"], ignore_errors=True)
