#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpurent ssh` as an interactive shell: run under a real pseudo-terminal against a real
OpenSSH sshd on 127.0.0.1 (tests/e2e/sshd.sh). Checks that the remote side gets a PTY of the
local window size, that typed input reaches the shell and its output comes back, that a
window resize is forwarded, that the shell's exit status is gpurent's, and that without a
terminal no PTY is requested."""
import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

BIN = os.environ["GPURENT_BIN"]
SRC = os.environ.get("GPURENT_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def set_winsize(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def read_until(fd, needle, seconds, seen):
    deadline = time.time() + seconds
    while needle not in seen[0]:
        left = deadline - time.time()
        if left <= 0:
            fail(f"timed out waiting for {needle!r}; got: {seen[0][-2000:]!r}")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                fail(f"the terminal closed before {needle!r}; got: {seen[0][-2000:]!r}")
            seen[0] += chunk


def main():
    tmp = tempfile.mkdtemp(prefix="gpurent-pty-test.")
    sshd_dir = os.path.join(tmp, "sshd")
    pid = None
    try:
        subprocess.run(["bash", "-c", 'source "$1"; sshd_start "$2" >/dev/null', "_",
                        os.path.join(SRC, "tests", "e2e", "sshd.sh"), sshd_dir], check=True)
        env_vars = dict(line.strip().split("=", 1) for line in open(os.path.join(sshd_dir, "sshd.env")) if "=" in line)
        pid = int(env_vars["SSHD_PID"])
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(tmp, "state"), TERM="xterm", NO_COLOR="1")
        env.pop("SSH_AUTH_SOCK", None)
        args = [BIN, "ssh", "--host", env_vars["SSHD_TARGET"], "--identity", env_vars["SSHD_KEY"],
                "--known-hosts", env_vars["SSHD_KNOWN_HOSTS"]]

        # Interactive: a PTY of the local size, input in, output out, resize, exit status.
        child, fd = pty.fork()
        if child == 0:
            os.execve(BIN, args, env)
        set_winsize(fd, 33, 101)
        seen = [b""]
        # Type only once the remote shell has printed something (its prompt): input typed
        # before gpurent puts the terminal in raw mode is discarded, as with OpenSSH's ssh.
        deadline = time.time() + 30
        while not seen[0].strip() and time.time() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                seen[0] += os.read(fd, 65536)
        time.sleep(0.3)
        os.write(fd, b"stty size; tty; echo pty-$((6*7))\n")
        read_until(fd, b"pty-42", 30, seen)
        text = seen[0].decode(errors="replace")
        if "33 101" not in text:
            fail("the remote PTY does not have the local window size: " + text[-1000:])
        if "/dev/pts/" not in text:
            fail("the remote shell has no terminal: " + text[-1000:])
        set_winsize(fd, 20, 70)
        os.kill(child, signal.SIGWINCH)
        time.sleep(1.5)  # the window size is polled: give it a moment
        os.write(fd, b"stty size; echo resized-$((1+1))\n")
        read_until(fd, b"resized-2", 30, seen)
        if "20 70" not in seen[0].decode(errors="replace").split("stty size; echo resized")[-1]:
            fail("a window resize was not forwarded: " + seen[0].decode(errors="replace")[-1000:])
        os.write(fd, b"exit 7\n")
        deadline = time.time() + 30
        status = None
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    os.read(fd, 65536)
                except OSError:
                    pass
            done, st = os.waitpid(child, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(st)
                break
        if status != 7:
            fail(f"the shell's exit status was not passed on: {status}")

        # Without a terminal: no PTY, the command's output and status.
        r = subprocess.run(args + ["--", "tty; exit 5"], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if r.returncode != 5 or b"not a tty" not in r.stdout:
            fail(f"a command without a terminal: exit {r.returncode}, out {r.stdout!r}, err {r.stderr!r}")
        print("ok")
    finally:
        if pid:
            subprocess.run(["pkill", "-P", str(pid)], check=False)
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
