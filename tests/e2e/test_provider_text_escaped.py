#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end, issue #44: what a provider answers is printed without its control characters.

The provider double (tests/e2e/provider_double.py, on 127.0.0.1) answers Lambda's instance-types
with a 400 whose error message (Lambda's documented {"error": {"code", "message"}} shape) holds
terminal escape sequences: a clear-screen, a window-title change, a bell and a carriage return.
`gpurent offers --refresh` reports it with each of them written out (\\x1b …) on stderr, and under
--json in the error document's message too; none of the raw bytes reaches either stream.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import Env, FAILS, check  # noqa: E402

NASTY = "\x1b[2J\x1b]0;pwned\x07bad region\r\x1b[31mred"


def main():
    tmp = tempfile.mkdtemp(prefix="gpurent-escape-")
    e = Env(tmp)
    try:
        for args in (["offers", "--refresh", "--provider", "lambda"],
                     ["offers", "--refresh", "--provider", "lambda", "--json"]):
            e.control("/_control/fault", {"match": "GET /lambda/api/v1/instance-types", "status": 400, "times": 1,
                                          "body": {"error": {"code": "global/invalid-parameters", "message": NASTY}}})
            p = e.run(*args)
            both = p.stdout + p.stderr
            check(p.returncode != 0, "the 400 is an error: " + " ".join(args), p.stderr)
            check(all(c not in both for c in "\x1b\x07\r"), "no raw control character in the output: " + " ".join(args),
                  repr(both))
            check("\\x1b[2J\\x1b]0;pwned\\x07bad region\\x0d\\x1b[31mred" in p.stderr,
                  "stderr shows the message with its controls escaped", repr(p.stderr))
            if "--json" in args:
                doc = json.loads(p.stdout)
                check("\\x1b[2J" in doc["error"]["message"] and "\x1b" not in doc["error"]["message"],
                      "the JSON error message is escaped too", repr(doc))
    finally:
        e.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
