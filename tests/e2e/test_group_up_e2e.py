# SPDX-License-Identifier: MIT
"""up --nodes N --group NAME against the provider double (RunPod's REST API as its OpenAPI document
has it): all or none. The second create answers 400 (POST /pods documents 201 and 400 "Invalid
input"; RunPod says so when no machine has the card free), so the first server, already running,
is destroyed, confirmed by the provider, and the error says what it billed; nothing of the group stays open or live. Then
a whole group: two servers named NAME-0 and NAME-1, one confirmation, `status NAME` lists both,
and `down NAME --destroy --no-backup` releases both, confirmed. `up --from-plan --group` rents
as many servers as plan chose, said once; a plan whose servers are joined by a cluster fabric
(RunPod Instant Clusters) is refused, since the Pod API rents separate servers. Hermetic (tests/e2e/lifecycle_env.py)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import check, status, run_against_double  # noqa: E402

NO_MACHINE = {"error": "There are no longer any instances available with the requested specifications."}
UP = ("up", "--provider", "runpod", "--card", "rtx-4090", "--nodes", "2", "--group", "big")


def scenario(e):
    # Without --group, --nodes is refused before anything is asked of the provider.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--nodes", "2", "--yes")
    check(p.returncode == 2 and "--group" in p.stderr, "--nodes without --group is a usage error", p.stderr)
    # No TTY and no --yes: refused once for the whole group, nothing created.
    p = e.run(*UP)
    check(p.returncode == 3 and not e.live(), "the group is refused without --yes and nothing is created", p.stderr)

    e.control("/_control/fault", {"match": "POST /runpod/v1/pods", "after": 1, "status": 400, "body": NO_MACHINE})
    p = e.run(*UP, "--yes", "--json")
    check(p.returncode != 0, "a group whose second server cannot be launched fails", p.stdout + p.stderr)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    msg = doc.get("error", {}).get("message", "") + "; " + doc.get("error", {}).get("hint", "")
    check("big-1" in msg and "no longer any instances" in msg, "the error names the member that failed and why", msg)
    check("all or none" in msg and "big-0 destroyed, existed" in msg and "= $0.000" in msg,
          "the error says big-0 was destroyed and what it billed", msg)
    check(not e.live(), "nothing of the partial group is left at the provider", json.dumps(e.live()))
    _, st = status(e)
    check(st.get("instances") == [], "no open record is left", json.dumps(st))
    p = e.run("--json", "status", "big-0")
    one = json.loads(p.stdout).get("instances", [{}])[0] if p.returncode == 0 else {}
    check(one.get("state") == "destroyed" and one.get("group") == "big" and one.get("node") == 0,
          "big-0's ledger is closed as destroyed, in group big", p.stdout)

    p = e.run(*UP, "--yes", "--json")
    check(p.returncode == 0, "up --nodes 2 --group big", p.stderr)
    up = json.loads(p.stdout) if p.returncode == 0 else {}
    check([(m["name"], m["node"], m["state"]) for m in up.get("members", [])] ==
          [("big-0", 0, "running"), ("big-1", 1, "running")], "two running members in rank order", p.stdout)
    check(p.stderr.count("Rent group big") <= 1 and len(e.live()) == 2, "two servers live", p.stderr)
    p = e.run("--json", "status", "big")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check([i["name"] for i in doc.get("instances", [])] == ["big-0", "big-1"], "status GROUP lists its members", p.stdout)

    # --from-plan with --group and no --nodes: as many servers as plan finds the job needs (one here).
    p = e.run("up", "--from-plan", "llama-3.1-8b", "--provider", "runpod", "--card", "rtx-4090", "--group", "small",
              "--yes", "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0 and [m["name"] for m in doc.get("members", [])] == ["small-0"] and
          doc.get("plan", {}).get("nodes") == 1 and p.stderr.count("gpurent: chosen:") == 1,
          "up --from-plan --group rents what plan chose, said once", p.stdout + p.stderr)
    p = e.run("down", "small", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "down small", p.stderr)
    # Plan's choice of two servers joined by RunPod's Instant Clusters fabric cannot be rented
    # through the Pod API (separate pods): refused, nothing created.
    live = len(e.live())
    p = e.run("up", "--from-plan", "deepseek-v3", "--task", "serve", "--card", "h100", "--provider", "runpod",
              "--group", "ds", "--yes")
    check(p.returncode == 3 and "Instant Clusters" in p.stderr and "attach --group ds" in p.stderr and
          len(e.live()) == live, "a plan over a cluster fabric is not rented as separate servers", p.stderr)

    p = e.run("down", "big", "--destroy", "--no-backup", "--yes", "--json")
    check(p.returncode == 0, "down GROUP --destroy --no-backup", p.stderr)
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(doc.get("group") == "big" and [m["result"]["state"] for m in doc.get("members", [])] == ["destroyed", "destroyed"],
          "down GROUP destroys every member, confirmed", p.stdout)
    check(not e.live(), "nothing is left at the provider", json.dumps(e.live()))


if __name__ == "__main__":
    sys.exit(run_against_double("gpurent-group-up-", scenario))
