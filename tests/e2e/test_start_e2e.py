# SPDX-License-Identifier: MIT
"""Starting a stopped server (#45) against the provider double (RunPod shapes: POST
/pods/{podId}/start, 200/400/401) and its real sshd servers:
 * `up --name` on a stopped server starts it: the double sees a start and NO DELETE; the new
   container's host key is not trusted without --accept-new-host-key (and nothing is destroyed
   when it is not), then it is, and up reports what changed;
 * `gpurent start NAME` the same: refused without --yes and a TTY, then says the price once
   running and what RunPod lists, starts it, reports the new address and host key;
 * a start RunPod refuses (its documented 400, no GPU free) leaves the server stopped, says what it
   costs stopped, destroys nothing, exits 1 (`start` and `up --name` alike);
 * run, logs, ssh and jobs on a server recorded stopped say it is stopped and how to start it,
   instead of a raw connection error;
 * an attached server cannot be started (exit 3)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle_env import by_name, check, run_against_double, status  # noqa: E402

NO_GPU = "There are not enough free GPUs on the host machine to start this pod."


def requests(e, pod):
    return [(r["method"], r["path"]) for r in e.control("/_control/requests") if "/pods/" + pod in r["path"]]


def phase(e, pod):
    return e.control("/_control/state").get(pod, {}).get("phase")


def doc_of(p):
    try:
        return json.loads(p.stdout) if p.stdout.strip() else {}
    except ValueError:
        return {}


def scenario(e):
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes", "--json")
    check(p.returncode == 0, "up train1", p.stderr)
    first = doc_of(p)
    pod = first.get("provider_id", "?")
    p = e.run("down", "train1", "--stop", "--yes")
    check(p.returncode == 0 and phase(e, pod) == "stopped", "down --stop stops it", p.stderr)

    # SSH commands on a server recorded stopped: the clear message, not "connection refused".
    for args in (["run", "train1", "--no-push", "--", "true"], ["logs", "train1"], ["ssh", "train1", "--", "true"],
                 ["jobs", "train1"], ["doctor", "train1"]):
        p = e.run(*args)
        check(p.returncode != 0 and "train1 is stopped (since " in p.stderr and "gpurent start train1" in p.stderr
              and "refused" not in p.stderr.lower(), " ".join(args) + " on a stopped server says so", p.stderr)

    # `up --name` on the stopped server: a start, never a DELETE. The new container's host key is
    # not trusted on its own: exit 3, the server left running (not destroyed), and the way on.
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes", "--json")
    check(p.returncode == 3 and "--accept-new-host-key" in p.stdout + p.stderr, "a new host key is not trusted silently",
          p.stdout + p.stderr)
    seen = requests(e, pod)
    check(("POST", "/runpod/v1/pods/%s/start" % pod) in seen, "up sent the start", str(seen))
    check(not any(m == "DELETE" for m, _ in seen), "up never sent a DELETE", str(seen))
    check(phase(e, pod) == "running", "the server is running at the provider (not destroyed)", str(phase(e, pod)))
    p = e.run("up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes", "--json",
              "--accept-new-host-key")
    up = doc_of(p)
    check(p.returncode == 0 and up.get("state") == "running", "up --name brings the stopped server back", p.stdout + p.stderr)
    check(up.get("port") != first.get("port") and up.get("host_key") != first.get("host_key"),
          "the new address and host key are recorded", p.stdout)
    changes = " ".join(up.get("changes", []))
    check("address:" in changes and "host key:" in changes, "up reports what changed", p.stdout)
    check(not any(m == "DELETE" for m, _ in requests(e, pod)), "still no DELETE")
    starts = [x for x in requests(e, pod) if x == ("POST", "/runpod/v1/pods/%s/start" % pod)]
    check(len(starts) == 1, "the second up did not start it again (it was running)", str(starts))
    p = e.run("ssh", "train1", "--", "echo", "hello")
    check(p.returncode == 0 and "hello" in p.stdout, "ssh works on the started server", p.stderr)

    # `gpurent start NAME`.
    p = e.run("down", "train1", "--stop", "--yes")
    check(p.returncode == 0, "stopped again", p.stderr)
    p = e.run("start", "train1")
    check(p.returncode == 3 and "--yes" in p.stderr, "start without --yes and a TTY is refused", p.stderr)
    check(len([x for x in requests(e, pod) if x[1].endswith("/start")]) == 1, "and sent no start call")
    check("once running it bills $0.69/h" in p.stderr and "lists rtx-4090 x1" in p.stderr,
          "start says the price once running and what RunPod lists first", p.stderr)
    p = e.run("start", "train1", "--yes", "--json", "--accept-new-host-key")
    st = doc_of(p)
    check(p.returncode == 0 and st.get("state") == "running" and st.get("started") is True, "start --yes starts it",
          p.stdout + p.stderr)
    check(any(c.startswith("host key:") for c in st.get("changes", [])), "start reports the new host key", p.stdout)
    check(not any(m == "DELETE" for m, _ in requests(e, pod)), "start never sends a DELETE")
    p, doc = status(e, "train1")
    t = by_name(doc, "train1")
    check(t is not None and t["state"] == "running" and t["cost_per_hour_now"] == 0.69, "status: running again", p.stdout)
    p = e.run("start", "train1", "--json")
    check(p.returncode == 0 and doc_of(p).get("started") is False, "start on a running server does nothing", p.stdout + p.stderr)
    # An attached server has no provider API gpurent can start it with.
    p = e.run("attach", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--host", "root@127.0.0.1:%s" % st.get("port"),
              "--name", "box", "--accept-new-host-key", "--price", "1.6")
    check(p.returncode == 0, "attach box", p.stderr)
    p = e.run("start", "box", "--yes")
    check(p.returncode == 3 and "attached" in p.stderr, "an attached server cannot be started by gpurent", p.stderr)

    # RunPod refuses the start (its documented 400): it stays stopped, nothing is destroyed.
    p = e.run("down", "train1", "--stop", "--yes")
    check(p.returncode == 0, "stopped for the refusal", p.stderr)
    for args in (["start", "train1", "--yes"], ["up", "--provider", "runpod", "--card", "rtx-4090", "--name", "train1", "--yes"]):
        e.control("/_control/fault", {"match": "POST /runpod/v1/pods/%s/start" % pod, "status": 400,
                                      "body": {"error": NO_GPU, "status": 400}, "times": 1})
        p = e.run(*args)
        what = " ".join(args[:1])
        check(p.returncode == 1, what + ": a refused start exits 1", "%d %s" % (p.returncode, p.stderr))
        check(NO_GPU in p.stderr and "stays stopped" in p.stderr and "nothing was destroyed" in p.stderr and "/h stopped" in p.stderr,
              what + ": says it stays stopped, what it costs, that nothing was destroyed", p.stderr)
        check(phase(e, pod) == "stopped", what + ": still stopped at the provider", str(phase(e, pod)))
        p, doc = status(e, "train1")
        t = by_name(doc, "train1")
        check(t is not None and t["state"] == "stopped", what + ": recorded stopped", p.stdout)
    check(not any(m == "DELETE" for m, _ in requests(e, pod)), "no DELETE after refused starts", str(requests(e, pod)))

    # Vast: the start is its state change (PUT /instances/{id}/ {"state": "running"}).
    p = e.run("up", "--provider", "vast", "--card", "rtx-4090", "--name", "v1", "--yes", "--json")
    check(p.returncode == 0, "up v1 (vast)", p.stderr)
    vid = str(doc_of(p).get("provider_id", "?"))
    p = e.run("down", "v1", "--stop", "--yes")
    check(p.returncode == 0 and phase(e, vid) == "stopped", "vast: stopped", p.stderr)
    p = e.run("start", "v1", "--yes", "--json", "--accept-new-host-key")
    check(p.returncode == 0 and doc_of(p).get("state") == "running", "vast: start brings it back", p.stdout + p.stderr)
    vast = [(r["method"], r["path"]) for r in e.control("/_control/requests") if "/instances/" + vid in r["path"]]
    check(vast.count(("PUT", "/vast/api/v0/instances/%s/" % vid)) == 2 and not any(m == "DELETE" for m, _ in vast),
          "vast: a stop and a start state change, no DELETE", str(vast))


if __name__ == "__main__":
    sys.exit(run_against_double("gpurent-start-", scenario))
