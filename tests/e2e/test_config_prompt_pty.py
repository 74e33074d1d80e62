#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end, issue #44: `gpurent config set KEY` without a value asks on the terminal with the
echo off, and the secret lands in the config file, never on the terminal.

Runs the real binary on a pseudo-terminal (Python's pty module): the prompt appears, the typed
secret is not echoed (the echo is off before the prompt shows), the file holds it (mode 0600), and the terminal's echo is on again
afterwards. Skipped (77) where no pty can be opened.
"""
import os
import pty
import select
import sys
import tempfile
import termios
import time

BIN = os.environ["GPURENT_BIN"]
SECRET = "rk_typed_SECRET_0815"


def read_until(fd, needle, seconds=30):
    got = b""
    end = time.time() + seconds
    while needle not in got and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "NO_COLOR": "1",
               "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "TERM": "dumb"}
        try:
            pid, fd = pty.fork()
        except OSError as e:
            print("SKIP: no pseudo-terminal here:", e)
            return 77
        if pid == 0:
            os.execve(BIN, [BIN, "config", "set", "runpod_api_key"], env)
        out = read_until(fd, b"(typing is not shown): ")
        if b"(typing is not shown): " not in out:
            print("FAIL: no prompt:", out)
            return 1
        echo_during = termios.tcgetattr(fd)[3] & termios.ECHO
        os.write(fd, (SECRET + "\n").encode())
        out += read_until(fd, b"***set***")
        _, status = os.waitpid(pid, 0)
        echo_after = None
        try:
            echo_after = termios.tcgetattr(fd)[3] & termios.ECHO
        except termios.error:
            pass
        os.close(fd)
        fails = []
        if os.waitstatus_to_exitcode(status) != 0:
            fails.append(f"exit status {os.waitstatus_to_exitcode(status)}: {out!r}")
        if SECRET.encode() in out:
            fails.append("the typed secret was echoed on the terminal")
        if echo_during:
            fails.append("echo was on while the secret was typed")
        if echo_after is not None and not echo_after:
            fails.append("echo stayed off after the prompt")
        path = os.path.join(tmp, "config", "gpurent", "config.toml")
        text = open(path).read() if os.path.exists(path) else ""
        if f'runpod_api_key = "{SECRET}"' not in text:
            fails.append("the config file does not hold the secret")
        elif os.stat(path).st_mode & 0o077:
            fails.append("the config file is readable by others")
        for f in fails:
            print("FAIL:", f)
        if fails:
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
