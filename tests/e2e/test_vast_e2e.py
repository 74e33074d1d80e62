# SPDX-License-Identifier: MIT
"""Vast.ai: the price the user really pays and every state an instance can be in, against the
provider double's Vast (written from vast-ai/docs: storage in dph_total for allocated_storage,
stopped/exited/offline/unknown, 404 not_found on a repeated DELETE, 429 without Retry-After,
account SSH keys, the paginated v1 instance list). Hermetic, like test_lifecycle_e2e.py."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import by_name, check, status, run_against_double  # noqa: E402

# The double's Vast prices: dph_base $0.35/h, storage $0.15/GB/month (720 h); gpurent asks for 20 GB.
RUNNING = round(0.35 + 0.15 * 20 / 720, 6)  # 0.354167
STORAGE = round(0.15 * 20 / 720, 6)         # 0.004167


def reqs(e, method, path):
    return [r for r in e.control("/_control/requests") if r["method"] == method and r["path"] == path]


def row(e, name, *args):
    _, doc = status(e, *args)
    return by_name(doc, name) or {}


def scenario(e):
    # up: the key goes on the account (POST /ssh/) before the create; the search asks for the
    # disk the instance will have; the ledger takes the instance's own dph_total; SSH works.
    p = e.run("up", "--provider", "vast", "--card", "rtx-4090", "--name", "v1", "--yes", "--json")
    check(p.returncode == 0, "up vast", p.stderr)
    up = json.loads(p.stdout) if p.returncode == 0 else {}
    check(up.get("price_per_hour") == RUNNING, "the ledger price is the instance's dph_total with 20 GB", p.stdout)
    check(up.get("host_key", "").startswith("SHA256:"), "SSH answered with the account key", p.stdout)
    requests = e.control("/_control/requests")
    order = [(r["method"], r["path"]) for r in requests if r["path"].startswith("/vast/")]
    check(("POST", "/vast/api/v0/ssh/") in order and
          order.index(("POST", "/vast/api/v0/ssh/")) < next(i for i, x in enumerate(order) if x[1].startswith(
              "/vast/api/v0/asks/")), "the SSH key is registered before the create", str(order))
    check(not reqs(e, "GET", "/vast/api/v0/instances/"), "the deprecated v0 list is never used")
    check(reqs(e, "GET", "/vast/api/v1/instances/"), "the paginated v1 list is used")
    p = e.run("ssh", "v1", "--", "echo", "on-vast")
    check(p.returncode == 0 and p.stdout.strip() == "on-vast", "gpurent ssh to the Vast instance", p.stderr)
    v1 = row(e, "v1")
    check(v1.get("cost_per_hour_now") == RUNNING, "status bills the instance's dph_total", json.dumps(v1))
    # A second instance reuses the account key.
    p = e.run("up", "--provider", "vast", "--card", "rtx-4090", "--name", "v2", "--yes", "--no-wait")
    check(p.returncode == 0 and len(reqs(e, "POST", "/vast/api/v0/ssh/")) == 1, "the key is added once", p.stderr)

    # Stopped: the GPU is released, the storage still bills (not $0.00/h).
    p = e.run("down", "v1", "--stop", "--yes")
    check(p.returncode == 0, "stop v1", p.stderr)
    v1 = row(e, "v1")
    check(v1.get("state") == "stopped" and v1.get("cost_per_hour_now") == STORAGE,
          "a stopped instance bills its storage", json.dumps(v1))
    p = e.run("status", "v1")
    check("now $0.0042/h" in p.stdout, "the text view shows the storage rate", p.stdout)

    # exited while intended running: a crash, with a warning and the storage cost.
    e.control("/_control/phase", {"name": "v2", "phase": "crashed"})
    v2 = row(e, "v2", "--refresh")
    check(v2.get("state") == "crashed" and v2.get("billing_state") == "stopped" and
          v2.get("cost_per_hour_now") == STORAGE, "exited is a crash, billed its storage", json.dumps(v2))
    check(any(w.startswith("crashed:") and "exited" in w for w in v2.get("warnings", [])), "with a warning",
          json.dumps(v2))

    # offline: shown as offline with a warning, never as running; Vast bills nothing meanwhile.
    e.control("/_control/phase", {"name": "v2", "phase": "offline"})
    p, doc = status(e, "--refresh")
    v2 = by_name(doc, "v2") or {}
    check(v2.get("state") == "offline" and v2.get("cost_per_hour_now") == 0, "offline is shown, $0/h",
          json.dumps(v2))
    check(any(w.startswith("offline:") for w in v2.get("warnings", [])), "offline has a warning", json.dumps(v2))
    # unknown (no heartbeat): trouble; back from offline it is billed as running (the most).
    e.control("/_control/phase", {"name": "v2", "phase": "unknown"})
    v2 = row(e, "v2", "--refresh")
    check(v2.get("state") == "unknown" and v2.get("billing_state") == "running" and
          v2.get("cost_per_hour_now") == RUNNING, "unknown is trouble, billed in full", json.dumps(v2))

    # One DELETE per destroy; a 429 without Retry-After is waited out.
    iid = up.get("provider_id", "?")
    e.control("/_control/fault", {"match": "DELETE /vast/api/v0/instances/" + iid + "/", "status": 429,
                                  "body": {"success": False, "error": "rate_limit_exceeded",
                                           "msg": "API requests too frequent endpoint threshold=3.0"}})
    p = e.run("down", "v1", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0 and row(e, "v1", "v1").get("state") == "destroyed", "v1 destroyed through a 429",
          p.stderr)
    deletes = reqs(e, "DELETE", "/vast/api/v0/instances/" + iid + "/")
    check(len(deletes) == 2, "the 429 (not acted on) and one DELETE", str(len(deletes)))
    # Destroyed in the console first: the DELETE answers 404 not_found, the GET confirms.
    e.control("/_control/phase", {"name": "v2", "phase": "gone"})
    p = e.run("down", "v2", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "a 404 not_found on DELETE is gone after the GET", p.stderr)
    _, doc = status(e, "v2")
    check(doc.get("instances", [{}])[0].get("state") == "destroyed", "v2 closed as destroyed", json.dumps(doc))
    check(not e.live(), "nothing left at Vast")


def main():
    return run_against_double("gpurent-vast-", scenario)


if __name__ == "__main__":
    sys.exit(main())
