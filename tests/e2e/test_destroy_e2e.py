# SPDX-License-Identifier: MIT
"""Destroy once, close the record only on the provider's word: against the provider double, with
what the published documents allow (RunPod's 400 "Invalid Pod ID." on a repeated DELETE, 500s on
DELETE, Lambda's 404 global/object-does-not-exist and `unhealthy`/`preempted`, servers deleted
behind gpurent's back, RunPod picking a pod above --max-price) and crashes between "destroy
requested", "destroy sent" and "confirmed". Hermetic, like test_lifecycle_e2e.py."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import by_name, check, status, run_against_double  # noqa: E402


def requests(e, method, path_prefix):
    return [r for r in e.control("/_control/requests") if r["method"] == method and r["path"].startswith(path_prefix)]


def up(e, provider, card, name, *extra):
    p = e.run("up", "--provider", provider, "--card", card, "--name", name, "--yes", "--json", "--no-wait", *extra)
    doc = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else {}
    return p, doc


def one_state(e, name):
    p, doc = status(e, name)
    rows = doc.get("instances", [])
    return rows[0] if rows else {}


def scenario(e):
    # One DELETE per destroy on RunPod, one terminate POST on Lambda.
    p, r1 = up(e, "runpod", "rtx-4090", "r1")
    check(p.returncode == 0, "up r1", p.stderr)
    p = e.run("down", "r1", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0 and "confirmed by runpod" in p.stderr, "r1 destroyed, confirmed", p.stderr)
    deletes = requests(e, "DELETE", "/runpod/v1/pods/" + r1.get("provider_id", "?"))
    check(len(deletes) == 1, "exactly one DELETE for r1", str(len(deletes)))
    check(one_state(e, "r1").get("state") == "destroyed", "r1 closed as destroyed")
    p, l1 = up(e, "lambda", "a100-40gb", "l1")
    check(p.returncode == 0, "up l1", p.stderr)
    p = e.run("down", "l1", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "l1 destroyed", p.stderr)
    terms = requests(e, "POST", "/lambda/api/v1/instance-operations/terminate")
    check(len(terms) == 1, "exactly one terminate POST for l1", str(len(terms)))

    # Deleted in the console, then `down --destroy`: RunPod answers the DELETE with 400 "Invalid
    # Pod ID."; the GET (404) confirms it is gone: destroyed, exit 0, one DELETE.
    p, r2 = up(e, "runpod", "rtx-4090", "r2")
    e.control("/_control/phase", {"name": "r2", "phase": "gone"})
    p = e.run("down", "r2", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "a pod deleted behind gpurent's back: down --destroy still succeeds", p.stderr)
    check(len(requests(e, "DELETE", "/runpod/v1/pods/" + r2.get("provider_id", "?"))) == 1, "one DELETE for r2")
    check(one_state(e, "r2").get("state") == "destroyed", "r2 closed as destroyed", p.stderr)
    # Lambda: terminate of an instance it no longer has is a 404, then confirmed by GET.
    p, l2 = up(e, "lambda", "a100-40gb", "l2")
    e.control("/_control/phase", {"name": "l2", "phase": "gone"})
    p = e.run("down", "l2", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0 and one_state(e, "l2").get("state") == "destroyed",
          "Lambda global/object-does-not-exist counts as gone after the GET", p.stderr)
    # Deleted behind gpurent's back and found by refresh: gone, listed under `closed`.
    p, r3 = up(e, "runpod", "rtx-4090", "r3")
    e.control("/_control/phase", {"name": "r3", "phase": "gone"})
    p, doc = status(e, "--refresh")
    check(p.returncode == 0 and by_name(doc, "r3") is None, "refresh closes r3", p.stdout + p.stderr)
    check({"name": "r3", "provider": "runpod", "state": "gone"} in doc.get("closed", []), "r3 listed as gone",
          p.stdout)

    # 500 on every DELETE: destroy_failed, exit 1, at most 5 DELETEs, status shows it billed.
    p, r4 = up(e, "runpod", "rtx-4090", "r4")
    pod = r4.get("provider_id", "?")
    e.control("/_control/fault", {"match": "DELETE /runpod/v1/pods/" + pod, "status": 500, "times": 5})
    p = e.run("down", "r4", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 1, "a destroy that keeps failing exits 1", p.stderr)
    check("NOT confirmed destroyed" in p.stderr and "$0.69/h" in p.stderr, "a loud warning with the cost", p.stderr)
    check(len(requests(e, "DELETE", "/runpod/v1/pods/" + pod)) == 5, "five DELETEs, each after a look")
    check(any(v["name"] == "r4" for v in e.live().values()), "the pod still runs at the provider")
    row = one_state(e, "r4")
    check(row.get("state") == "destroy_failed" and row.get("cost_per_hour_now") == 0.69,
          "status shows r4 destroy_failed and still billed", json.dumps(row))
    check(any("DESTROY FAILED" in w for w in row.get("warnings", [])), "with a warning", json.dumps(row))
    p = e.run("status")
    check("destroy_failed" in p.stdout and "DESTROY FAILED" in p.stdout and "$0.69/h" in p.stdout,
          "status text shows it", p.stdout)
    # The next refresh retries (the faults are spent): destroyed.
    p, doc = status(e, "--refresh")
    check(p.returncode == 0 and by_name(doc, "r4") is None, "refresh retries the destroy", p.stdout + p.stderr)
    check(one_state(e, "r4").get("state") == "destroyed", "r4 closed as destroyed")
    check(not any(v["name"] == "r4" for v in e.live().values()), "r4 gone at the provider")

    # One 500 on DELETE: looked at, sent again, confirmed.
    p, r5 = up(e, "runpod", "rtx-4090", "r5")
    e.control("/_control/fault", {"match": "DELETE /runpod/v1/pods/" + r5.get("provider_id", "?"), "status": 500,
                                  "times": 1})
    p = e.run("down", "r5", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0 and one_state(e, "r5").get("state") == "destroyed", "r5 destroyed after one 500",
          p.stderr)
    check(len(requests(e, "DELETE", "/runpod/v1/pods/" + r5.get("provider_id", "?"))) == 2,
          "the lost DELETE was sent again once")

    # Trouble: Lambda unhealthy / preempted, RunPod EXITED with code 1.
    p, l3 = up(e, "lambda", "a100-40gb", "l3")
    e.control("/_control/phase", {"name": "l3", "phase": "unhealthy"})
    p, r6 = up(e, "runpod", "rtx-4090", "r6")
    e.control("/_control/phase", {"name": "r6", "phase": "crashed"})
    p, l4 = up(e, "lambda", "a100-40gb", "l4")
    e.control("/_control/phase", {"name": "l4", "phase": "preempted"})
    p, doc = status(e, "--refresh")
    check(p.returncode == 0, "refresh with troubled servers", p.stderr)
    l3s, r6s, l4s = by_name(doc, "l3") or {}, by_name(doc, "r6") or {}, by_name(doc, "l4") or {}
    check(l3s.get("state") == "unhealthy" and l3s.get("billing_state") == "running" and
          l3s.get("cost_per_hour_now") == 1.29 and (l3s.get("trouble") or {}).get("state") == "unhealthy",
          "unhealthy is shown as such and still billed", json.dumps(l3s))
    check(any(w.startswith("unhealthy:") for w in l3s.get("warnings", [])), "with a warning", json.dumps(l3s))
    check("warning: l3 is unhealthy" in p.stderr, "refresh warns when it turns unhealthy", p.stderr)
    check(r6s.get("state") == "crashed" and r6s.get("billing_state") == "stopped" and
          "code 1" in (r6s.get("trouble") or {}).get("detail", ""), "RunPod EXITED with code 1 is a crash",
          json.dumps(r6s))
    # An EXITED pod keeps its volume disk (up asks for 20 GB), billed at $0.20/GB-month while
    # stopped (docs.runpod.io/pods/storage); the container disk is erased and not charged.
    check(r6s.get("cost_per_hour_now") == -(-200000 * 20 // 730) / 1e6, "RunPod EXITED bills its volume disk, not $0.00/h",
          json.dumps(r6s))
    # Lambda's `preempted`: the instance is gone and no longer bills: the record closes as gone.
    check(not l4s and {"name": "l4", "provider": "lambda", "state": "gone"} in doc.get("closed", []),
          "preempted closes the record as gone", json.dumps(doc.get("closed")))
    check("l4: gone (the provider preempted it" in p.stderr, "and says so", p.stderr)
    # Refreshing one server never calls the others "untracked" (an invitation to delete them by hand).
    p, one = status(e, "--refresh", "l3")
    check(p.returncode == 0 and one.get("untracked") == [], "status --refresh l3: l4 and r6 are not untracked",
          p.stdout + p.stderr)
    check("not tracked by gpurent" not in p.stderr + p.stdout, "no untracked line for a tracked server", p.stdout)
    p = e.run("status")
    check("l3  lambda  a100-40gb-sxm x1  unhealthy (billed as running)" in p.stdout, "status text shows unhealthy",
          p.stdout)
    for n in ("l3", "r6"):
        p = e.run("down", n, "--destroy", "--no-backup", "--yes")
        check(p.returncode == 0, "a troubled server is destroyed: " + n, p.stderr)

    # --max-price on RunPod: the pod RunPod picked costs more; it is destroyed, confirmed, and
    # the record says it existed and what it cost (per second).
    e.control("/_control/price", {"provider": "runpod", "price": 0.99})
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "mp", "--yes", "--max-price", "0.80",
              "--no-wait")
    check(p.returncode == 3, "over --max-price: refused, exit 3", p.stderr)
    check("confirmed by runpod" in p.stderr and "billed 1 s" in p.stderr, "says it was destroyed and billed",
          p.stderr)
    mp = one_state(e, "mp")
    check(mp.get("state") == "destroyed" and mp.get("accrued_cost", 0) > 0 and mp.get("billed_s", 0) >= 1,
          "the record says a pod existed and was billed", json.dumps(mp))
    check(not any(v["name"] == "mp" for v in e.live().values()), "nothing left at RunPod")
    # ... and when that destroy fails, the pod stays tracked as destroy_failed, exit 1.
    e.control("/_control/fault", {"match": "DELETE /runpod/v1/pods/", "status": 500, "times": 5})
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "mp2", "--yes", "--max-price", "0.80",
              "--no-wait")
    check(p.returncode == 1 and "NOT confirmed" in p.stderr, "a failed cleanup exits 1, loudly", p.stderr)
    mp2 = one_state(e, "mp2")
    check(mp2.get("state") == "destroy_failed" and mp2.get("cost_per_hour_now") == 0.99,
          "the pod over --max-price stays tracked and billed", json.dumps(mp2))
    p, doc = status(e, "--refresh")
    check(by_name(doc, "mp2") is None and one_state(e, "mp2").get("state") == "destroyed",
          "refresh retries and closes mp2", p.stdout + p.stderr)
    check(not any(u["name"] == "mp2" for u in doc.get("untracked", [])), "mp2 was never untracked")
    # Without --max-price the quote is the ceiling: RunPod quoted $0.69/h (its gpuTypes), the pod
    # it picked costs $0.99/h: destroyed, confirmed, and the --max-price that would keep it said.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "pj", "--yes", "--no-wait")
    check(p.returncode == 3 and "quoted by runpod now" in p.stderr and "above the $0.69/h you confirmed" in p.stderr
          and "--max-price 0.99" in p.stderr and "confirmed by runpod" in p.stderr,
          "a price above the confirmed quote destroys the pod", p.stderr)
    check(one_state(e, "pj").get("state") == "destroyed" and not any(v["name"] == "pj" for v in e.live().values()),
          "and nothing of it is left", json.dumps(one_state(e, "pj")))
    e.control("/_control/price", {"provider": "runpod", "price": None})

    # Crash after the destroy was recorded, before it was sent: refresh sends it (once).
    p, r7 = up(e, "runpod", "rtx-4090", "r7")
    p = e.run("down", "r7", "--destroy", "--no-backup", "--yes", extra={"GPURENT_TEST_CRASH_AT": "destroy-recorded"})
    check(p.returncode == 137 and one_state(e, "r7").get("state") == "destroying", "crash at destroy-recorded")
    check(not requests(e, "DELETE", "/runpod/v1/pods/" + r7.get("provider_id", "?")), "nothing sent yet")
    p, doc = status(e, "--refresh")
    check(one_state(e, "r7").get("state") == "destroyed", "refresh finishes the destroy", p.stderr)
    check(len(requests(e, "DELETE", "/runpod/v1/pods/" + r7.get("provider_id", "?"))) == 1, "one DELETE for r7")
    # Crash after Lambda accepted the terminate, before it was confirmed: refresh confirms
    # without a second terminate.
    before = len(requests(e, "POST", "/lambda/api/v1/instance-operations/terminate"))
    p, l5 = up(e, "lambda", "a100-40gb", "l5")
    p = e.run("down", "l5", "--destroy", "--no-backup", "--yes", extra={"GPURENT_TEST_CRASH_AT": "destroy-called"})
    check(p.returncode == 137 and one_state(e, "l5").get("state") == "destroying", "crash at destroy-called")
    p, doc = status(e, "--refresh")
    check(one_state(e, "l5").get("state") == "destroyed", "refresh confirms l5", p.stderr)
    after = len(requests(e, "POST", "/lambda/api/v1/instance-operations/terminate"))
    check(after - before == 1, "one terminate for l5", str(after - before))


def main():
    return run_against_double("gpurent-destroy-", scenario)


if __name__ == "__main__":
    sys.exit(main())
