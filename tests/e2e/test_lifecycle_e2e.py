# SPDX-License-Identifier: MIT
"""up -> status -> backup -> down --destroy against the local provider double, whose servers
are real sshd processes; up --from-plan (plan picks provider, card and GPUs); plus the safety rules (refusal without a TTY, idempotent --name,
dead ends destroyed, capacity errors, untracked servers, hung connections) and crash recovery
(GPURENT_TEST_CRASH_AT). Hermetic: HOME, XDG_* and GPURENT_STATE_DIR live in a temp dir."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import KEY, by_name, check, status, run_against_double  # noqa: E402


def scenario(e):
    tmp = e.tmp
    # No TTY and no --yes: refused (exit 3) before anything is recorded or created.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train")
    check(p.returncode == 3, "up without --yes and without a TTY exits 3", p.stderr)
    check(not e.live(), "nothing was created")
    _, doc = status(e)
    check(doc.get("instances") == [], "nothing was recorded")

    # up, through a 500 and a 429 with Retry-After, with -v: never the key.
    e.control("/_control/fault", {"match": "GET /runpod/v1/pods/", "status": 500, "times": 1})
    e.control("/_control/fault", {"match": "GET /runpod/v1/pods/", "status": 429, "retry_after": 1, "times": 1})
    p = e.run("-v", "up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train", "--yes", "--json")
    check(p.returncode == 0, "up runpod succeeds", p.stderr)
    up = json.loads(p.stdout) if p.returncode == 0 else {}
    check(up.get("state") == "running" and up.get("host") == "127.0.0.1", "up reports a running server", p.stdout)
    check(up.get("host_key", "").startswith("SHA256:"), "the host key seen is recorded", p.stdout)
    check("retrying" in p.stderr, "-v logs the retries", p.stderr)

    # Idempotent on the name.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train", "--yes", "--json")
    check(p.returncode == 0 and "already up" in p.stderr, "a second up with the same name resumes", p.stderr)
    creates = [r for r in e.control("/_control/requests") if r["method"] == "POST" and r["path"] == "/runpod/v1/pods"]
    check(len(creates) == 1, "only one create call", str(len(creates)))
    check(all(r["auth"] == "Bearer " + KEY and KEY not in r["query"] for r in e.control("/_control/requests")
              if not r["path"].startswith("/_control")), "the key travels only in the Authorization header")

    p, doc = status(e)
    t = by_name(doc, "train")
    check(t is not None and t["state"] == "running" and t["cost_per_hour_now"] == 0.69, "status shows it", p.stdout)
    check(t is not None and "no backup yet" in t["warnings"], "status warns: no backup yet", p.stdout)

    # down --destroy: backup first (real sshd), then destroy, confirmed with the provider.
    ws = os.path.join(tmp, "workspace")
    os.makedirs(os.path.join(ws, "ckpt"))
    with open(os.path.join(ws, "ckpt", "step-100.pt"), "wb") as f:
        f.write(os.urandom(200_000))
    dest = os.path.join(tmp, "backup")
    p = e.run("down", "train", "--destroy", "--yes", "--json", "--path", ws, "--to", dest)
    check(p.returncode == 0, "down --destroy succeeds", p.stderr)
    check("cost per hour" in p.stderr and "loses" in p.stderr, "down says the cost and the loss first", p.stderr)
    check(os.path.exists(os.path.join(dest, "ckpt", "step-100.pt")), "the checkpoint was backed up", p.stderr)
    check(not e.live(), "the server is gone at the provider")
    p, doc = status(e)
    check(by_name(doc, "train") is None, "no open server left", p.stdout)
    p, doc = status(e, "train")
    check(doc.get("instances", [{}])[0].get("state") == "destroyed", "the ledger is closed as destroyed", p.stdout)

    # up --from-plan: the cheaper card at CloudGPU (gpurent does not rent it) is refused, exit 3,
    # naming the attach command and the cheapest rentable option; nothing is created.
    cfg_dir = os.path.join(e.env["XDG_CONFIG_HOME"], "gpurent")
    os.makedirs(cfg_dir, exist_ok=True)
    with open(os.path.join(cfg_dir, "config.toml"), "w") as f:
        # The market snapshot's other clouds stay out (--provider runpod,cloudgpu); its RunPod L40S
        # ($0.43, the same as the RTX 3090 the double rents) is priced above it here.
        f.write('[prices.cloudgpu]\n"rtx-4090" = 0.10\n[prices.runpod]\n"l40s" = 0.60\n')
    p = e.run("up", "--from-plan", "llama-3.1-8b", "--provider", "runpod,cloudgpu", "--name", "fp", "--yes", "--json")
    check(p.returncode == 3 and "gpurent attach --provider cloudgpu" in p.stderr
          and "the cheapest option gpurent rents: 1 x RTX 3090 24GB on runpod" in p.stderr,
          "up --from-plan refuses a cloud gpurent does not rent, naming the cheapest it rents", p.stderr)
    check(not any(v["name"] == "fp" for v in e.live().values()), "nothing was created for the refused choice")
    # --rentable: plan rents the cheapest fit among the providers with an API; the cheaper card at
    # CloudGPU is named, not chosen.
    p = e.run("up", "--from-plan", "llama-3.1-8b", "--provider", "runpod,cloudgpu", "--rentable", "--name", "fp", "--yes",
              "--json")
    check(p.returncode == 0, "up --from-plan succeeds", p.stderr)
    fp = json.loads(p.stdout) if p.returncode == 0 else {}
    check(fp.get("provider") == "runpod" and fp.get("card") == "rtx-3090" and fp.get("gpus") == 1,
          "up --from-plan rents the cheapest fit with an API (runpod rtx-3090 x1)", p.stdout)
    check(fp.get("state") == "running" and fp.get("host_key", "").startswith("SHA256:"),
          "the planned server is up with its host key recorded", p.stdout)
    plan = fp.get("plan", {})
    check(0 < plan.get("memory_per_gpu_gib", 0) <= plan.get("limit_gib", 0) < plan.get("usable_gib", 0),
          "the plan's memory per GPU is within the card's limit", json.dumps(plan))
    check("chosen: runpod RTX 3090" in p.stderr and "usable" in p.stderr, "up says what it chose and why", p.stderr)
    check("cheaper without an API: cloudgpu" in p.stderr, "a cheaper card without an API is named", p.stderr)
    at_double = [v for v in e.live().values() if v["name"] == "fp"]
    check(len(at_double) == 1 and at_double[0]["provider"] == "runpod"
          and at_double[0]["card"] == "NVIDIA GeForce RTX 3090", "the double created that card", json.dumps(at_double))
    p, doc = status(e, "fp")
    check(doc.get("instances", [{}])[0].get("state") == "running", "status tracks the planned server", p.stdout)
    p = e.run("down", "fp", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "the planned server is destroyed", p.stderr)
    check(not any(v["name"] == "fp" for v in e.live().values()), "nothing left of fp at the provider")
    # --provider and --card restrict the choice (the double's Lambda has no A10 capacity).
    p = e.run("up", "--from-plan", "llama-3.1-8b", "--provider", "lambda", "--card", "a100-40gb", "--name", "fp-l",
              "--yes", "--json", "--no-wait")
    check(p.returncode == 0, "up --from-plan --provider lambda --card a100-40gb", p.stderr)
    fpl = json.loads(p.stdout) if p.returncode == 0 else {}
    check(fpl.get("provider") == "lambda" and fpl.get("card") == "a100-40gb-sxm",
          "--provider and --card restrict the choice", p.stdout)
    p = e.run("down", "fp-l", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "fp-l destroyed", p.stderr)
    # Nothing fits: exit 3 with the plan's fixes; nothing is recorded or created.
    p = e.run("up", "--from-plan", "llama-3.1-405b", "--task", "train", "--name", "toobig", "--yes")
    check(p.returncode == 3 and "Fixes" in p.stdout and "nothing was rented" in p.stderr,
          "up --from-plan refuses a job that fits nowhere, with the fixes", p.stdout + p.stderr)
    check(not any(v["name"] == "toobig" for v in e.live().values()), "nothing was created for toobig")
    p, doc = status(e, "toobig")
    check(p.returncode != 0 and not doc.get("instances"), "nothing was recorded for toobig", p.stdout + p.stderr)
    os.remove(os.path.join(cfg_dir, "config.toml"))

    # Capacity errors are clear and leave nothing behind.
    p = e.run("up", "--provider", "lambda", "--card", "h100-80gb", "--gpus", "8", "--name", "big", "--yes")
    check(p.returncode == 1 and "no capacity" in p.stderr, "Lambda insufficient-capacity is explained", p.stderr)
    _, doc = status(e)
    check(by_name(doc, "big") is None, "a failed create closes the ledger")

    # A dead end while starting: what was created is destroyed, and said so.
    p = e.run("up", "--provider", "vast", "--card", "rtx-4090", "--name", "v-deadend", "--yes")
    check(p.returncode != 0 and "destroyed" in p.stderr, "up destroys a server stuck in a dead end", p.stderr)
    check(not e.live(), "nothing left at Vast")

    # A state the provider lacks is refused with the reason.
    p = e.run("up", "--provider", "lambda", "--card", "a100-40gb", "--name", "lam", "--yes", "--no-wait")
    check(p.returncode == 0, "up lambda --no-wait", p.stderr)
    p = e.run("down", "lam", "--stop", "--yes")
    check(p.returncode == 3 and "no stop" in p.stderr, "lambda stop is refused with the reason", p.stderr)
    p = e.run("down", "lam", "--destroy", "--no-backup")
    check(p.returncode == 3, "destroy without --yes and without a TTY is refused", p.stderr)
    p = e.run("down", "lam", "--destroy", "--no-backup", "--yes")
    check(p.returncode == 0, "lambda destroy", p.stderr)

    # Crash between "recorded" and "created": refresh shows it was never created.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "crash1", "--yes",
              extra={"GPURENT_TEST_CRASH_AT": "recorded"})
    check(p.returncode == 137, "crash at recorded", p.stderr)
    _, doc = status(e)
    c1 = by_name(doc, "crash1")
    check(c1 is not None and c1["state"] == "creating", "the record survives the crash", json.dumps(doc))
    p, doc = status(e, "--refresh")
    check(by_name(doc, "crash1") is None, "refresh closes a create that never happened", p.stdout + p.stderr)

    # Crash between "created" and running: the server exists and stays in view.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "crash2", "--yes",
              extra={"GPURENT_TEST_CRASH_AT": "created"})
    check(p.returncode == 137, "crash at created", p.stderr)
    check(any(v["name"] == "crash2" for v in e.live().values()), "the provider has crash2")
    p, doc = status(e, "--refresh")
    c2 = by_name(doc, "crash2")
    check(c2 is not None and c2["state"] in ("provisioning", "running"), "crash2 is tracked and billed", p.stdout)
    check(not any(u["name"] == "crash2" for u in doc.get("untracked", [])), "crash2 is not untracked")

    # Crash between "destroy called" and "confirmed": refresh confirms and closes the ledger.
    p = e.run("down", "crash2", "--destroy", "--no-backup", "--yes", extra={"GPURENT_TEST_CRASH_AT": "destroy-called"})
    check(p.returncode == 137, "crash at destroy-called", p.stderr)
    _, doc = status(e)
    c2 = by_name(doc, "crash2")
    check(c2 is not None and c2["state"] == "destroying", "still in view while unconfirmed", json.dumps(doc))
    check(c2 is not None and any("not confirmed" in w for w in c2["warnings"]), "with a warning")
    p, doc = status(e, "--refresh")
    check(by_name(doc, "crash2") is None, "refresh confirms the destroy", p.stdout)
    p, doc = status(e, "crash2")
    check(doc["instances"][0]["state"] == "destroyed" and "accrued_cost" in doc["instances"][0],
          "the ledger keeps what it cost", p.stdout)

    # Servers the provider bills that gpurent does not track; a hung connection is retried.
    e.control("/_control/add", {"provider": "runpod", "name": "stray"})
    e.control("/_control/fault", {"match": "GET /vast/api/v1/instances/", "hang_s": 4, "status": 0, "times": 1})
    p = e.run("status", "--json", "--refresh", extra={"GPURENT_HTTP_TIMEOUT_S": "2"})
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0, "refresh survives a hung connection", p.stderr)
    check(any(u["name"] == "stray" and u["provider"] == "runpod" for u in doc.get("untracked", [])),
          "the untracked server is listed", p.stdout)


def main():
    return run_against_double("gpurent-life-", scenario)


if __name__ == "__main__":
    sys.exit(main())
