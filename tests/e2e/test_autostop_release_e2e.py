# SPDX-License-Identifier: MIT
"""autostop's destroy stages against the provider double (its servers are real sshd processes),
with backups over SSH from the "server" to a second loopback sshd (USER@127.0.0.1:PATH; the
server's key, known host and port live in its own test HOME's ~/.ssh/config), 1 s sampling:
 * --then destroy --backup-to: the watchdog streams its tar, the target's SHA-256 equals the
   sender's, and only then the double receives the DELETE;
 * a target whose SHA-256 does not match (a lying sha256sum there): no DELETE, the reason logged;
   an unreachable target is refused when arming;
 * --then stop --release-after with --no-backup: the watchdog stops the pod and ends with it;
   `autostop NAME` shows the release as the next action, and once due gpurent destroys it;
 * --then stop --release-after --backup-to: the backup is taken before the stop; when gpurent
   saw it, the release destroys; when it did not and cannot log in to the target, nothing is
   destroyed and the text says why; when it can, it checks the tar against the checksum file the
   server wrote beside it (a changed tar: no release; the original: released)."""
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import SRC, by_name, check, status, run_autostop_server, wait_for  # noqa: E402

FAKE_SMI = "#!/bin/sh\ncase \"$1\" in --query-gpu=*) printf '0, 0, 30000\\n';; --query-compute-apps=*) printf '4242, 30000\\n';; esac\n"
LYING_SHA = "#!/bin/sh\ncat >/dev/null\necho 0000000000000000000000000000000000000000000000000000000000000000  -\n"


def events(path, kind):
    """The lines of `kind` written by the latest watchdog (after the log's last start)."""
    try:
        text = open(path).read().splitlines()
    except OSError:
        return []
    last = max([i for i, l in enumerate(text) if l.startswith("start ")] or [0])
    return [dict(w.split("=", 1) for w in l.split()[1:] if "=" in w) for l in text[last:] if l.startswith(kind + " ")]


def refresh(e, done):
    """`status --refresh`, once more after 1.1 s unless done(p): a stop first recorded by this
    refresh is due for a 1 s release only after it."""
    p, doc = status(e, "--refresh")
    if not done(p):
        time.sleep(1.1)
        p, doc = status(e, "--refresh")
    return p, doc


def check_released(p, doc, name, deletes, marker):
    check(len(deletes) == 1 and marker in p.stderr, "the release destroyed %s (%s)" % (name, marker), p.stderr)
    if os.environ.get("SHOW_TEXT"):
        print(p.stderr, file=sys.stderr)
    check(by_name(doc, name) is None, name + "'s ledger is closed", p.stdout)


def start_target(tmp, name, path_prefix=None):
    env = {k: v for k, v in os.environ.items() if k not in ("SSHD_HOME", "SSHD_PATH_PREFIX")}
    if path_prefix:
        env["SSHD_PATH_PREFIX"] = path_prefix
    d = os.path.join(tmp, name)
    subprocess.run(["bash", "-c", 'source "$1"; sshd_start "$2" >/dev/null', "_", os.path.join(SRC, "tests/e2e/sshd.sh"), d],
                   check=True, env=env)
    return dict(l.strip().split("=", 1) for l in open(os.path.join(d, "sshd.env")) if "=" in l)


def point_server_at(server_home, target):
    """The server's ssh config: 127.0.0.1 is this target, with its key and known host."""
    ssh = os.path.join(server_home, ".ssh")
    os.makedirs(ssh, exist_ok=True)
    cfg = os.path.join(ssh, "config")
    with open(cfg, "w") as f:
        f.write("Host 127.0.0.1\n  Port %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n"
                "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n" %
                (target["SSHD_PORT"], target["SSHD_KEY"], target["SSHD_KNOWN_HOSTS"]))
    os.chmod(cfg, 0o600)


def scenario(e, tmp):
    home = os.environ["SSHD_HOME"]
    wlog = os.path.join(home, ".gpurent", "autostop", "log")
    cred = os.path.join(home, ".gpurent", "autostop", "credential")
    env = {"GPURENT_AUTOSTOP_INTERVAL_S": "1"}
    work = os.path.join(home, "work")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "ckpt.pt"), "wb") as f:
        f.write(os.urandom(300000))
    backups = os.path.join(tmp, "backups")
    user = os.environ.get("USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    target = "%s@127.0.0.1:%s" % (user, backups)
    good = start_target(tmp, "good")
    liar_bin = os.path.join(tmp, "liar-bin")
    os.makedirs(liar_bin)
    with open(os.path.join(liar_bin, "sha256sum"), "w") as f:
        f.write(LYING_SHA)
    os.chmod(os.path.join(liar_bin, "sha256sum"), 0o755)
    liar = start_target(tmp, "liar", liar_bin)
    calls = lambda m, p: [r for r in e.control("/_control/requests") if r["method"] == m and r["path"] == p]  # noqa: E731

    def up(name):
        p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", name, "--yes", "--json")
        check(p.returncode == 0, "up " + name, p.stderr)
        return json.loads(p.stdout).get("provider_id", "") if p.returncode == 0 else ""

    def arm(name, *args):
        return e.run("autostop", name, "--idle", "2s", "--server-credential", "RUNPOD_API_KEY", "--backup-dir", work, "--json",
                     *args, extra=env)

    # 1. --then destroy with a verified backup: the DELETE only after it.
    point_server_at(home, good)
    pod = up("d1")
    p = arm("d1", "--then", "destroy", "--backup-to", target)
    check(p.returncode == 0, "arm d1: destroy after a backup", p.stderr)
    check(wait_for(lambda: calls("DELETE", "/runpod/v1/pods/" + pod), 20), "the double received the DELETE",
          open(wlog).read()[-800:] if os.path.exists(wlog) else "")
    # The watchdog logs its action after the DELETE was answered: wait for that line too.
    wait_for(lambda: any(a.get("do") == "destroy" for a in events(wlog, "action")), 10)
    b = [x for x in events(wlog, "backup") if x.get("result") == "ok"]
    acts = events(wlog, "action")
    check(b and acts and acts[-1].get("do") == "destroy" and acts[-1].get("result") == "ok", "backup ok, then destroy ok",
          str(b) + str(acts))
    if b:
        sha, _, f = b[0]["detail"][len("sha256="):].partition(":")
        check(os.path.exists(f) and hashlib.sha256(open(f, "rb").read()).hexdigest() == sha,
              "the stored tar's SHA-256 is the one logged", f)
        if os.path.exists(f):
            with tarfile.open(f) as t:
                check("./ckpt.pt" in t.getnames(), "the tar holds the workspace", str(t.getnames()[:5]))

    # 2. An unreachable target is refused when arming; a lying one means no DELETE.
    pod2 = up("d2")
    point_server_at(home, {"SSHD_PORT": "1", "SSHD_KEY": good["SSHD_KEY"], "SSHD_KNOWN_HOSTS": good["SSHD_KNOWN_HOSTS"]})
    p = arm("d2", "--then", "destroy", "--backup-to", target)
    check(p.returncode == 3 and "cannot log in" in p.stdout, "an unreachable --backup-to is refused when arming", p.stdout)
    point_server_at(home, liar)
    p = arm("d2", "--then", "destroy", "--backup-to", target)
    check(p.returncode == 0, "arm d2 (its target lies about the hash)", p.stderr)
    check(wait_for(lambda: any(a.get("detail") == "no-verified-backup" for a in events(wlog, "action")), 15),
          "the destroy is refused on the server", open(wlog).read()[-800:])
    check(any(x.get("result") == "failed" and "hash-mismatch" in x.get("detail", "") for x in events(wlog, "backup")),
          "the reason is logged: the hashes differ")
    check(not calls("DELETE", "/runpod/v1/pods/" + pod2), "no DELETE without a verified backup")
    p = e.run("autostop", "d2", "--cancel", extra=env)
    check(p.returncode == 0, "--cancel d2", p.stderr)

    # 3. stop, then the release gpurent carries out (--no-backup).
    point_server_at(home, good)
    pod3 = up("s3")
    p = arm("s3", "--then", "stop", "--release-after", "10s", "--no-backup")
    check(p.returncode == 0 and "runs no watchdog" in p.stderr and "status --refresh" in p.stderr,
          "arming says the release happens at the next status/autostop", p.stderr)
    check(wait_for(lambda: calls("POST", "/runpod/v1/pods/%s/stop" % pod3), 15), "the watchdog stopped s3")
    p, doc = status(e, "s3")
    # (#45) Its deadline has passed: plain `status` asks RunPod once and shows it stopped.
    check(by_name(doc, "s3") is not None and by_name(doc, "s3")["state"] == "stopped", "before a refresh: stopped already",
          p.stdout + p.stderr)
    p = e.run("status", "--refresh", "--json")
    check(p.returncode == 0, "status --refresh", p.stderr)
    p, doc = status(e, "s3")
    s3 = by_name(doc, "s3") or {}
    stopped_s = int(time.mktime(time.strptime(s3.get("since", "1970-01-01T00:00:00Z"), "%Y-%m-%dT%H:%M:%SZ"))) - time.timezone
    p = e.run("autostop", "s3", "--json", extra=env)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    if time.time() < stopped_s + 9:  # (a loaded machine may look only once it is due: then it is released at once)
        check(s3.get("state") == "stopped", "status --refresh: s3 stopped", json.dumps(s3))
        check(p.returncode == 0 and doc.get("next_action") == "destroy" and doc.get("release", {}).get("release_due_at") ==
              time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stopped_s + 10)), "autostop NAME: next the release, and when",
              p.stdout + p.stderr)
        check(not calls("DELETE", "/runpod/v1/pods/" + pod3), "not released before it is due")
        time.sleep(max(0, stopped_s + 10 - time.time()) + 1.1)
        p = e.run("autostop", "s3", "--json", extra=env)
        doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0 and doc.get("server_state") == "destroyed", "released once due", p.stdout + p.stderr)
    check(len(calls("DELETE", "/runpod/v1/pods/" + pod3)) == 1, "one DELETE")

    # 4. stop with --backup-to: backed up before the stop; gpurent saw it, so it releases.
    pod4 = up("s4")
    p = arm("s4", "--then", "stop", "--release-after", "1s", "--backup-to", target)
    check(p.returncode == 0, "arm s4", p.stderr)
    os.rename(cred, cred + ".away")  # the stop fails until gpurent has read the backup
    check(wait_for(lambda: any(a.get("detail") == "no-credential" for a in events(wlog, "action")), 15), "s4's stop waits")
    check(any(x.get("stage") == "1" and x.get("result") == "ok" for x in events(wlog, "backup")),
          "the backup was taken before the stop", open(wlog).read()[-600:])
    p = e.run("autostop", "s4", "--json", extra=env)
    check(p.returncode == 0, "autostop s4 reads the log", p.stderr)
    os.rename(cred + ".away", cred)
    check(wait_for(lambda: calls("POST", "/runpod/v1/pods/%s/stop" % pod4), 15), "the watchdog stopped s4")
    time.sleep(1.1)
    p, doc = refresh(e, lambda p: calls("DELETE", "/runpod/v1/pods/" + pod4))
    check_released(p, doc, "s4", calls("DELETE", "/runpod/v1/pods/" + pod4), "the server's verified backup: sha256=")

    # 5. The same when gpurent never saw the backup: no destroy, and why.
    pod5 = up("s5")
    p = arm("s5", "--then", "stop", "--release-after", "1s", "--backup-to", target)
    check(p.returncode == 0, "arm s5", p.stderr)
    check(wait_for(lambda: calls("POST", "/runpod/v1/pods/%s/stop" % pod5), 15), "the watchdog stopped s5")
    time.sleep(1.1)
    p, doc = refresh(e, lambda p: "has not seen a verified backup" in p.stderr)
    s5 = by_name(doc, "s5")
    check(s5 is not None and s5["state"] == "stopped" and not calls("DELETE", "/runpod/v1/pods/" + pod5),
          "not released without a verified backup gpurent saw", p.stdout + p.stderr)
    check("has not seen a verified backup" in p.stderr, "and it says why", p.stderr)
    if os.environ.get("SHOW_TEXT"):
        print(p.stderr, e.run("autostop", "s5", extra=env).stdout, file=sys.stderr)
    check(s5 is not None and (s5.get("autostop") or {}).get("release", {}).get("next_action") == "none", "status: release none",
          json.dumps(s5))
    # 6. The same, but gpurent can log in to the target (ssh://USER@HOST:PORT/PATH, its key, the
    # target's host key known): it checks the backup there itself, and a tar changed since the
    # server verified it is not a backup.
    with open(os.path.join(good["SSHD_DIR"], "authorized_keys"), "a") as f:
        f.write(open(os.path.join(e.env["HOME"], ".ssh", "id_ed25519.pub")).read())
    with open(os.path.join(e.env["HOME"], ".ssh", "known_hosts"), "a") as f:
        f.write(open(good["SSHD_KNOWN_HOSTS"]).read())
    pod6 = up("s6")
    p = arm("s6", "--then", "stop", "--release-after", "1s", "--backup-to",
            "ssh://%s@127.0.0.1:%s%s" % (user, good["SSHD_PORT"], backups))
    check(p.returncode == 0, "arm s6 (ssh://USER@HOST:PORT/PATH)", p.stderr)
    check(wait_for(lambda: calls("POST", "/runpod/v1/pods/%s/stop" % pod6), 15), "the watchdog stopped s6")
    b = [x for x in events(wlog, "backup") if x.get("stage") == "1" and x.get("result") == "ok"]
    check(b, "s6 was backed up before the stop", open(wlog).read()[-600:])
    tar = b[-1]["detail"].partition(":")[2] if b else os.path.join(backups, "none")
    stem = os.path.basename(tar).rsplit("-", 1)[0] + "-"
    sums = [n for n in os.listdir(backups) if n.startswith(stem) and n.endswith(".tar.sha256")]
    check(sums == [os.path.basename(tar) + ".sha256"], "one checksum file of this arming, beside the newest tar", str(sums))
    check(subprocess.run(["sha256sum", "-c", "--quiet", os.path.basename(tar) + ".sha256"], cwd=backups).returncode == 0,
          "`sha256sum -c` accepts it at the target")
    time.sleep(1.1)
    original = open(tar, "rb").read() if os.path.exists(tar) else b""
    with open(tar, "ab") as f:
        f.write(b"changed")
    p, doc = refresh(e, lambda p: calls("DELETE", "/runpod/v1/pods/" + pod6) or "no longer has the SHA-256" in p.stderr)
    check(not calls("DELETE", "/runpod/v1/pods/" + pod6) and "no longer has the SHA-256" in p.stderr,
          "a tar changed at the target since: no release, and why", p.stderr)
    with open(tar, "wb") as f:
        f.write(original)
    p, doc = status(e, "--refresh")
    check_released(p, doc, "s6", calls("DELETE", "/runpod/v1/pods/" + pod6), "checked at ssh://")
    for t in (good, liar):
        try:
            os.kill(int(t["SSHD_PID"]), 15)
        except (OSError, ValueError, KeyError):
            pass


if __name__ == "__main__":
    sys.exit(run_autostop_server("gpurent-autostop-rel-", scenario, lambda tmp: FAKE_SMI))
