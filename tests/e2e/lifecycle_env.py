# SPDX-License-Identifier: MIT
"""What the lifecycle e2e tests share: a hermetic environment (HOME, XDG_*, GPURENT_STATE_DIR in a
temp dir, an ed25519 key) around one provider double (tests/e2e/provider_double.py) whose running
servers are real sshd processes, and small checking helpers."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ["GPURENT_BIN"]
SRC = os.environ["GPURENT_SOURCE_DIR"]
KEY = "rp-SECRET-4711-do-not-print"
FAILS = []


def check(cond, what, extra=""):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, extra, file=sys.stderr)


class Env:
    def __init__(self, tmp):
        self.tmp = tmp
        home = os.path.join(tmp, "home")
        os.makedirs(os.path.join(home, ".ssh"))
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(home, ".ssh", "id_ed25519")],
                       check=True)
        self.port_file = os.path.join(tmp, "double.port")
        self.double = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/e2e/provider_double.py"),
                                        "--port-file", self.port_file, "--state-dir", tmp, "--key", KEY])
        for _ in range(200):
            if os.path.exists(self.port_file):
                break
            time.sleep(0.02)
        self.port = int(open(self.port_file).read())
        base = "http://127.0.0.1:%d" % self.port
        self.base = base
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "NO_COLOR": "1",
                    "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_STATE_HOME": os.path.join(tmp, "xstate"),
                    "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "GPURENT_STATE_DIR": os.path.join(tmp, "state"),
                    "LAMBDA_API_KEY": KEY, "RUNPOD_API_KEY": KEY, "VAST_API_KEY": KEY,
                    "GPURENT_LAMBDA_API_URL": base + "/lambda", "GPURENT_RUNPOD_API_URL": base + "/runpod/v1",
                    "GPURENT_RUNPOD_GRAPHQL_URL": base + "/runpod/graphql", "GPURENT_VAST_API_URL": base + "/vast/api/v0",
                    "GPURENT_POLL_MS": "100", "GPURENT_HTTP_BACKOFF_MS": "50", "GPURENT_HTTP_TIMEOUT_S": "15",
                    # The price catalogue is not what these tests are about: `offers --refresh --provider
                    # lambda|runpod|vast` asks no catalogue file, and any other ask stays on this machine.
                    "GPURENT_CATALOG_CLOUDS": "aws", "GPURENT_CATALOG_URL": "http://127.0.0.1:9/catalogs",
                    "GPURENT_CATALOG_AUTO_REFRESH": "false",
                    "GPURENT_WAIT_TIMEOUT_S": "20"}

    def run(self, *args, extra=None, stdin=subprocess.DEVNULL):
        env = dict(self.env)
        env.update(extra or {})
        p = subprocess.run([BIN, *args], env=env, stdin=stdin, capture_output=True, text=True, timeout=60, cwd=self.tmp)
        check(KEY not in p.stdout and KEY not in p.stderr, "the API key never appears in output: " + " ".join(args))
        return p

    def control(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method="POST" if body is not None else "GET")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read() or b"null")

    def live(self):
        return {k: v for k, v in self.control("/_control/state").items() if v["phase"] not in ("gone",)}

    def close(self):
        self.double.send_signal(signal.SIGTERM)
        try:
            self.double.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.double.kill()


def wait_for(pred, seconds):
    """Polls pred every 0.1 s for up to `seconds`; its last answer."""
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def status(e, *args, extra_env=None):
    p = e.run("status", "--json", *args, extra=extra_env)
    return p, json.loads(p.stdout) if p.stdout.strip() else {}


def by_name(doc, name):
    return next((i for i in doc.get("instances", []) if i["name"] == name), None)


SKIPPED = 77  # tests/CMakeLists.txt: SKIP_RETURN_CODE


def run_against_double(prefix, scenario):
    """Runs scenario(env) in a fresh temp dir around one provider double, then reports: the
    test's exit status (SKIPPED, which ctest reports as skipped, when the double's sshd cannot
    serve: it needs root)."""
    if os.geteuid() != 0:
        print("SKIP: the double's sshd accepts only the current user and the drivers log in as root")
        return SKIPPED
    tmp = tempfile.mkdtemp(prefix=prefix)
    e = Env(tmp)
    try:
        scenario(e)
    finally:
        e.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        return 1
    print("ok")
    return 0


def run_autostop_server(prefix, scenario, nvidia_smi):
    """Runs scenario(env) against the double whose servers' PATH starts with an nvidia-smi
    stand-in (the script text nvidia_smi(tmp) returns), in a fresh SSHD_HOME; ends the watchdog a
    scenario left running. Skipped where terminals (pts) exist: the watchdog counts every one
    as an interactive session, so the server would never be idle. Returns the exit status."""
    ttys = subprocess.run(["ps", "-A", "-o", "tty="], capture_output=True, text=True).stdout.split()
    if any(t.startswith("pts/") for t in ttys):
        print("SKIP: this machine has terminal sessions (pts), which the watchdog rightly counts as busy")
        return SKIPPED
    tmp = tempfile.mkdtemp(prefix=prefix + "server-")
    os.environ["SSHD_HOME"] = os.path.join(tmp, "home")
    os.makedirs(os.path.join(tmp, "bin"))
    fake = os.path.join(tmp, "bin", "nvidia-smi")
    with open(fake, "w") as f:
        f.write(nvidia_smi(tmp))
    os.chmod(fake, 0o755)
    os.environ["SSHD_PATH_PREFIX"] = os.path.join(tmp, "bin")
    try:
        return run_against_double(prefix, lambda e: scenario(e, tmp))
    finally:
        pidf = os.path.join(os.environ["SSHD_HOME"], ".gpurent", "autostop", "pid")
        if os.path.exists(pidf):
            try:
                os.kill(int(open(pidf).read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        shutil.rmtree(tmp, ignore_errors=True)
