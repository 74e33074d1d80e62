# SPDX-License-Identifier: MIT
"""One local HTTP test double of the Lambda, RunPod and Vast APIs (shapes per their published
API documents: Lambda Cloud API v1.10.0, https://docs-api.lambda.ai/api/cloud; RunPod API 0.1.0,
https://docs.runpod.io/api-reference/openapi.json; Vast, https://github.com/vast-ai/docs
api-reference/openapi/yaml; providers/<name>/README.md), on 127.0.0.1 (or --bind ADDR) and a random
port written to --port-file. Its running servers are real: each gets an OpenSSH sshd on loopback
(tests/e2e/sshd.sh), with the public key of the create call authorized.

Base URLs: http://127.0.0.1:PORT/lambda, /runpod/v1 (GraphQL: /runpod/graphql), /vast/api/v0 (and the
paginated list at /vast/api/v1/instances/).
Control: POST /_control/fault {"match": "GET /runpod/v1/pods/", "status": 500, "retry_after": 1,
"hang_s": 0, "times": 1}; POST /_control/add {"provider", "name"} (a server made elsewhere);
POST /_control/phase {"name", "phase"} (what the provider does on its own: "gone" = deleted
behind gpurent's back, "unhealthy"/"preempted" on Lambda, "crashed" = RunPod EXITED with a
non-zero exit code); POST /_control/price {"provider", "price"} (what the next create costs);
GET /_control/state; GET /_control/requests (method, path, auth header seen?).
The awkward parts: publicIp "" while booting, Vast actual_status null -> loading -> running and
the exited/offline dead ends (names containing "deadend"/"offline"), Lambda
insufficient-capacity (gpu_8x_h100_sxm5), 429 with Retry-After, 500s and hung connections via
faults. A wrong or missing key is a 401 in the provider's own shape. What the documents answer
for a server that no longer exists: RunPod DELETE/stop/start 400 "Invalid Pod ID." and GET 404
"Pod not found." (RunPod's OpenAPI document has only 204/400/401 for DELETE /pods/{podId});
Lambda 404 `global/object-does-not-exist` for GET /instances/{id} and for a terminate naming no
instance it has (ApiErrorInstanceNotFound in Lambda's API document). RunPod POST /pods/{podId}/start
(StartPod: 200, 400, 401) puts a stopped pod back to booting; every boot is a new container with a
new sshd (host key and port). A start RunPod refuses (no GPU free on the pod's machine) is a fault
answering the documented 400 with RunPod's error envelope {"error": "...", "status": 400}.
Vast, from vast-ai/docs api-reference/openapi/yaml (search_offers, create_instance,
show_instance(s), destroy_instance, create_ssh_key, show_ssh_keys) and billing.mdx: an offer's
dph_total includes storage for `allocated_storage` (default 8 GB) at storage_cost $/GB/month
(720 h); the instance's dph_total for the `disk` it was created with; `instance.diskHour` is
what it costs stopped or exited; nothing while offline; actual_status per the show-instance table
(stopped with intended_status stopped after a stop, `exited` with intended_status running after
a crash, `offline`, `unknown`); DELETE 200, then 404 `not_found`; 429 `rate_limit_exceeded`
without Retry-After via faults; GET /ssh/ 404 while the account has no key, POST /ssh/ adds an
account key that Vast adds to the account's instances; GET /api/v1/instances/ pages of at most
25 with next_token, 400 `invalid_token` for a bad after_token.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
SERVERS = {}  # id -> dict
FAULTS = []
REQUESTS = []
ARGS = None
BOOT_POLLS = 3
PRICES = {}  # provider -> price per hour of the next create (RunPod picks the machine)
# RunPod's gpuTypes as its GraphQL answers them: id -> (displayName, memoryInGb, securePrice,
# secureSpotPrice), per GPU. A pod costs its type's securePrice unless /_control/price says more.
RUNPOD_TYPES = {"NVIDIA GeForce RTX 4090": ("RTX 4090", 24, 0.69, 0.35),
                "NVIDIA GeForce RTX 3090": ("RTX 3090", 24, 0.43, 0.22),
                "NVIDIA L4": ("L4", 24, 0.43, 0.22)}
ACCOUNT_KEYS = []  # Vast account SSH keys: {"id", "key"}
VAST_DPH_BASE = 0.35
VAST_STORAGE_COST = 0.15  # $/GB/month


def vast_storage_hour(gb):
    return VAST_STORAGE_COST * gb / 720.0

LAMBDA_TYPES = {
    "gpu_1x_a100_sxm4": ("1x A100 (40 GB SXM4)", "A100 (40 GB SXM4)", 129, 1, ["us-east-1"]),
    "gpu_8x_h100_sxm5": ("8x H100 (80 GB SXM5)", "H100 (80 GB SXM5)", 2392, 8, ["us-west-1"]),
    "gpu_1x_a10": ("1x A10 (24 GB PCIe)", "A10 (24 GB PCIe)", 75, 1, []),
}


def start_sshd(server):
    # Each boot is a new container (RunPod re-creates it on start): a new sshd directory, so a
    # new host key and port, as a started pod presents.
    server["boots"] = server.get("boots", 0) + 1
    d = os.path.join(ARGS.state_dir, "sshd-" + server["id"] + ("" if server["boots"] == 1 else "-%d" % server["boots"]))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sshd.sh")
    subprocess.run(["bash", "-c", 'source "$1"; sshd_start "$2" >/dev/null', "_", script, d], check=True,
                   stdout=subprocess.DEVNULL, stderr=sys.stderr)
    env = dict(line.strip().split("=", 1) for line in open(os.path.join(d, "sshd.env")) if "=" in line)
    with open(os.path.join(d, "authorized_keys"), "a") as f:
        f.write("\n" + server["public_key"].strip() + "\n")
    server["ssh_port"] = int(env["SSHD_PORT"])
    server["sshd_pid"] = int(env["SSHD_PID"])


def stop_sshd(server):
    pid = server.pop("sshd_pid", None)
    if pid:
        try:
            os.kill(pid, 15)
        except OSError:
            pass


def advance(server):
    """Each look at a booting server moves it one step; after BOOT_POLLS it runs (with sshd)."""
    if server["phase"] == "booting":
        server["polls"] += 1
        if server["polls"] >= BOOT_POLLS:
            if "deadend" in server["name"]:
                server["phase"] = "exited"
            elif "offline" in server["name"]:
                server["phase"] = "offline"
            else:
                if server.get("public_key"):
                    start_sshd(server)
                server["phase"] = "running"
    elif server["phase"] == "terminating":
        server["phase"] = "gone"


def new_server(provider, name, public_key, card, gpus, price):
    sid = uuid.uuid4().hex[:12] if provider != "vast" else str(1000 + len(SERVERS) + 1)
    s = {"id": sid, "provider": provider, "name": name, "public_key": public_key, "phase": "booting", "polls": 0,
         "card": card, "gpus": gpus, "price": price}
    SERVERS[sid] = s
    return s


# ---- shapes -------------------------------------------------------------------------------

def lambda_instance(s):
    status = {"booting": "booting", "running": "active", "terminating": "terminating", "exited": "unhealthy",
              "offline": "unhealthy", "gone": "terminated", "unhealthy": "unhealthy", "preempted": "preempted",
              "crashed": "unhealthy", "stopped": "active"}[s["phase"]]
    t = LAMBDA_TYPES.get(s["card"], LAMBDA_TYPES["gpu_1x_a100_sxm4"])
    out = {"id": s["id"], "name": s["name"], "status": status, "ssh_key_names": ["k"], "file_system_names": [],
           "region": {"name": "us-east-1", "description": "Virginia, USA"},
           "instance_type": {"name": s["card"], "description": t[0], "gpu_description": t[1],
                             "price_cents_per_hour": t[2], "specs": {"gpus": t[3]}}}
    if s["phase"] == "running":
        out["ip"] = "127.0.0.1"
    return out


def runpod_pod(s):
    running = s["phase"] == "running"
    desired = {"booting": "RUNNING", "running": "RUNNING", "stopped": "EXITED", "terminating": "TERMINATED",
               "gone": "TERMINATED", "exited": "EXITED", "offline": "EXITED", "crashed": "EXITED",
               "unhealthy": "RUNNING", "preempted": "EXITED"}[s["phase"]]
    change = {"crashed": "Exited: container exit code 1", "stopped": "Exited by User"}.get(
        s["phase"], "Rented by User: Fri Jul 12 2024 15:14:40 GMT-0400 (Eastern Daylight Time)")
    return {"id": s["id"], "name": s["name"], "desiredStatus": desired, "costPerHr": s["price"],
            "lastStatusChange": change,
            "gpu": {"id": s["card"], "count": s["gpus"]}, "machine": {"gpuTypeId": s["card"]},
            "publicIp": "127.0.0.1" if running else "", "portMappings": {"22": s["ssh_port"]} if running else {},
            "volumeInGb": s.get("volume_gb", 0), "containerDiskInGb": s.get("container_gb", 0),
            "interruptible": False, "image": "runpod/pytorch"}


def vast_instance(s):
    phase = s["phase"]
    status = {"booting": None if s["polls"] <= 1 else "loading", "running": "running", "stopped": "stopped",
              "exited": "exited", "crashed": "exited", "offline": "offline", "unknown": "unknown",
              "terminating": "running", "gone": None}[phase]
    intended = "stopped" if phase == "stopped" else "running"
    disk = s.get("disk", 10)
    disk_hour = vast_storage_hour(disk)
    gpu_hour = VAST_DPH_BASE if phase in ("running", "booting", "terminating") else 0
    if phase == "offline":
        disk_hour = 0
    msg = {"crashed": "Error: container exited with code 1", "exited": "Error: container exited with code 1"}.get(
        phase, "success, running pytorch/pytorch")
    out = {"id": int(s["id"]), "label": s["name"], "actual_status": status, "intended_status": intended,
           "cur_state": "stopped" if phase == "stopped" else "running", "next_state": intended,
           "status_msg": msg, "gpu_name": s["card"], "num_gpus": s["gpus"], "gpu_ram": 24564,
           "dph_base": VAST_DPH_BASE, "dph_total": VAST_DPH_BASE + vast_storage_hour(disk),
           "storage_cost": VAST_STORAGE_COST, "storage_total_cost": vast_storage_hour(disk), "disk_space": disk,
           "instance": {"gpuCostPerHour": gpu_hour, "diskHour": disk_hour, "totalHour": gpu_hour + disk_hour,
                        "discountTotalHour": 0, "discountedTotalPerHour": gpu_hour + disk_hour},
           "extra_env": [], "start_date": s.get("start", time.time()),
           "ssh_host": "", "ssh_port": None, "public_ipaddr": None, "ports": {}}
    if phase == "running":
        out["public_ipaddr"] = "127.0.0.1"
        out["ports"] = {"22/tcp": [{"HostIp": "0.0.0.0", "HostPort": str(s["ssh_port"])}]}
    return out


def vast_page(query):
    """GET /api/v1/instances/: keyset pages of at most 25, by id."""
    import base64
    import urllib.parse
    q = dict(urllib.parse.parse_qsl(query))
    limit = int(q.get("limit", "25"))
    limit = 5 if limit <= 0 else min(limit, 25)
    after = 0
    if q.get("after_token"):
        try:
            after = json.loads(base64.b64decode(q["after_token"]))["values"]["id"]
        except Exception:
            return 400, {"error": "invalid_token", "msg": "invalid after_token"}
    for key in ("select_filters", "order_by"):
        try:
            json.loads(q.get(key, "{}" if key == "select_filters" else "[]"))
        except ValueError:
            return 400, {"error": "invalid_request", "msg": "Error in query parameters: " + key}
    rows = sorted((v for v in SERVERS.values() if v["provider"] == "vast" and v["phase"] != "gone"),
                  key=lambda v: int(v["id"]))
    rows = [v for v in rows if int(v["id"]) > after]
    page, more = rows[:limit], len(rows) > limit
    token = base64.b64encode(json.dumps({"values": {"id": int(page[-1]["id"])}}).encode()).decode() if more else None
    items = [vast_instance(v) for v in page]
    return 200, {"success": True, "instances_found": len(items), "total_instances": len(rows), "label_counts": {},
                 "next_token": token, "instances": items}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=None, headers=None):
        text = isinstance(body, str)
        data = b"" if body is None else body.encode() if text else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else {}

    def handle_any(self, method):
        path = self.path.split("?")[0]
        req = self.body()
        key = method + " " + path
        with LOCK:
            REQUESTS.append({"method": method, "path": path, "auth": self.headers.get("Authorization", ""),
                             "query": self.path.partition("?")[2]})
        if path.startswith("/_control/"):
            return self.control(method, path, req)
        fault = None
        with LOCK:
            for f in FAULTS:
                if f["times"] > 0 and key.startswith(f["match"]):
                    if f.get("after", 0) > 0:  # let the first `after` matching requests through
                        f["after"] -= 1
                        continue
                    f["times"] -= 1
                    fault = dict(f)
                    break
        if fault:
            if fault.get("hang_s"):
                time.sleep(fault["hang_s"])
                if not fault.get("status"):
                    return self.reply(200, {})
            hdr = {"Retry-After": str(fault["retry_after"])} if fault.get("retry_after") is not None else {}
            return self.reply(fault["status"], fault.get("body", {"error": "injected"}), hdr)
        if self.headers.get("Authorization", "") != "Bearer " + ARGS.key:
            if path.startswith("/lambda"):
                return self.reply(401, {"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}})
            return self.reply(401, {"error": "unauthorized", "success": False})
        with LOCK:
            if path.startswith("/lambda/api/v1"):
                return self.lambda_api(method, path[len("/lambda/api/v1"):], req)
            if path.startswith("/runpod"):
                return self.runpod_api(method, path[len("/runpod"):], req)
            if path.startswith("/vast/api/v0"):
                return self.vast_api(method, path[len("/vast/api/v0"):], req)
            if method == "GET" and path == "/vast/api/v1/instances/":
                return self.reply(*vast_page(self.path.partition("?")[2]))
        return self.reply(404, {"error": "no such path"})

    def control(self, method, path, req):
        with LOCK:
            if path == "/_control/fault":
                req.setdefault("times", 1)
                FAULTS.append(req)
                return self.reply(200, {"ok": True})
            if path == "/_control/add":
                s = new_server(req["provider"], req["name"], "", req.get("card", "NVIDIA GeForce RTX 4090"), 1, 0.69)
                s["phase"] = "stopped" if req["provider"] != "lambda" else "running"
                return self.reply(200, {"id": s["id"]})
            if path == "/_control/phase":
                found = [v for v in SERVERS.values() if v["name"] == req["name"] and v["phase"] != "gone"]
                for v in found:
                    if req["phase"] in ("gone", "crashed", "preempted", "stopped", "offline"):
                        stop_sshd(v)
                    v["phase"] = req["phase"]
                return self.reply(200 if found else 404, {"changed": len(found)})
            if path == "/_control/price":
                if req.get("price") is None:
                    PRICES.pop(req["provider"], None)
                else:
                    PRICES[req["provider"]] = req["price"]
                return self.reply(200, {"ok": True})
            if path == "/_control/state":
                return self.reply(200, {k: {x: y for x, y in v.items() if x != "public_key"} for k, v in SERVERS.items()})
            if path == "/_control/requests":
                return self.reply(200, REQUESTS)
        return self.reply(404, {})

    # Lambda Cloud API v1
    def lambda_api(self, method, p, req):
        if method == "GET" and p == "/instance-types":
            data = {n: {"instance_type": {"name": n, "description": t[0], "gpu_description": t[1],
                                          "price_cents_per_hour": t[2], "specs": {"gpus": t[3]}},
                        "regions_with_capacity_available": [{"name": r, "description": r} for r in t[4]]}
                    for n, t in LAMBDA_TYPES.items()}
            return self.reply(200, {"data": data})
        if method == "GET" and p == "/ssh-keys":
            return self.reply(200, {"data": []})
        if method == "POST" and p == "/ssh-keys":
            return self.reply(200, {"data": {"id": "k", "name": req["name"], "public_key": req["public_key"]}})
        if method == "POST" and p == "/instance-operations/launch":
            if req.get("instance_type_name") == "gpu_8x_h100_sxm5":
                return self.reply(400, {"error": {"code": "instance-operations/launch/insufficient-capacity",
                                                  "message": "Not enough capacity to fulfill launch request.",
                                                  "suggestion": "Try again later."}})
            s = new_server("lambda", req.get("name", ""), "", req["instance_type_name"], 1, 1.29)
            return self.reply(200, {"data": {"instance_ids": [s["id"]]}})
        if method == "GET" and p == "/instances":
            out = []
            for s in list(SERVERS.values()):
                if s["provider"] == "lambda":
                    out.append(lambda_instance(s))
                    if s["phase"] == "gone":
                        del SERVERS[s["id"]]
            return self.reply(200, {"data": out})
        if method == "GET" and p.startswith("/instances/"):
            s = SERVERS.get(p.split("/")[2])
            if not s or s["phase"] == "gone":
                return self.reply(404, {"error": {"code": "global/object-does-not-exist", "message": "not found"}})
            advance(s)
            return self.reply(200, {"data": lambda_instance(s)})
        if method == "POST" and p == "/instance-operations/terminate":
            done = []
            for i in req.get("instance_ids", []):
                s = SERVERS.get(i)
                if s and s["phase"] != "gone":
                    stop_sshd(s)
                    s["phase"] = "terminating"
                    done.append(lambda_instance(s))
            if not done:
                return self.reply(404, {"error": {"code": "global/object-does-not-exist",
                                                  "message": "Specified instance does not exist."}})
            return self.reply(200, {"data": {"terminated_instances": done}})
        return self.reply(404, {"error": {"code": "global/not-found", "message": p}})

    # RunPod REST v1 + GraphQL
    def runpod_api(self, method, p, req):
        if method == "POST" and p == "/graphql":
            return self.reply(200, {"data": {"gpuTypes": [
                {"id": k, "displayName": v[0], "memoryInGb": v[1], "securePrice": v[2], "secureSpotPrice": v[3]}
                for k, v in RUNPOD_TYPES.items()]}})
        if method == "GET" and p == "/v1/pods":
            return self.reply(200, [runpod_pod(s) for s in SERVERS.values()
                                    if s["provider"] == "runpod" and s["phase"] != "gone"])
        if method == "POST" and p == "/v1/pods":
            kind = req["gpuTypeIds"][0]
            per_gpu = PRICES["runpod"] if "runpod" in PRICES else RUNPOD_TYPES.get(kind, ("", 0, 0.69, 0))[2]
            s = new_server("runpod", req["name"], req.get("env", {}).get("PUBLIC_KEY", ""), kind,
                           req.get("gpuCount", 1), round(per_gpu * req.get("gpuCount", 1), 6))
            s["volume_gb"], s["container_gb"] = req.get("volumeInGb", 0), req.get("containerDiskInGb", 0)
            return self.reply(201, runpod_pod(s))
        parts = p.split("/")  # ['', 'v1', 'pods', id, action?]
        if len(parts) >= 4 and parts[2] == "pods":
            s = SERVERS.get(parts[3])
            if not s or s["phase"] == "gone":
                if method == "GET":
                    return self.reply(404, "Pod not found.")
                return self.reply(400, "Invalid Pod ID.")  # DELETE, stop, start: 204/200, 400, 401 only
            if method == "GET" and len(parts) == 4:
                advance(s)
                return self.reply(200, runpod_pod(s))
            if method == "DELETE" and len(parts) == 4:
                stop_sshd(s)
                s["phase"] = "gone"
                return self.reply(204)
            if method == "POST" and len(parts) == 5 and parts[4] == "stop":
                stop_sshd(s)
                s["phase"] = "stopped"
                return self.reply(200, runpod_pod(s))
            if method == "POST" and len(parts) == 5 and parts[4] == "start":
                s["phase"], s["polls"] = "booting", 0
                return self.reply(200, runpod_pod(s))
        return self.reply(404, {"error": "no such path"})

    # Vast.ai v0
    def vast_api(self, method, p, req):
        if method == "POST" and p == "/bundles/":
            names = req.get("gpu_name", {}).get("in", ["RTX 4090"])
            gb = req.get("allocated_storage", 8)
            return self.reply(200, {"offers": [
                {"id": 501, "ask_contract_id": 501, "gpu_name": names[0], "num_gpus": req.get("num_gpus", {}).get("eq", 1),
                 "gpu_ram": 24564, "dph_base": VAST_DPH_BASE, "dph_total": VAST_DPH_BASE + vast_storage_hour(gb),
                 "storage_cost": VAST_STORAGE_COST, "storage_total_cost": vast_storage_hour(gb), "min_bid": 0.2,
                 "geolocation": "Texas, US", "verification": "verified", "rentable": True}]})
        if method == "GET" and p == "/ssh/":
            if not ACCOUNT_KEYS:
                return self.reply(404, {"success": False, "error": "not_found", "msg": "No SSH keys found"})
            return self.reply(200, [{"id": k["id"], "user_id": 1, "key": k["key"], "created_at": "2026-01-01T00:00:00Z",
                                     "deleted_at": None} for k in ACCOUNT_KEYS])
        if method == "POST" and p == "/ssh/":
            if not req.get("ssh_key"):
                return self.reply(400, {"success": False, "error": "no_ssh_key", "msg": "No ssh key provided"})
            k = {"id": 100 + len(ACCOUNT_KEYS), "key": req["ssh_key"]}
            ACCOUNT_KEYS.append(k)
            for v in SERVERS.values():  # "automatically added to all your current instances"
                if v["provider"] == "vast":
                    v["public_key"] = (v.get("public_key", "") + "\n" + k["key"]).strip()
            return self.reply(200, {"success": True, "key": {"id": k["id"], "user_id": 1, "public_key": k["key"],
                                                             "created_at": "2026-01-01T00:00:00Z", "deleted_at": None}})
        if method == "PUT" and p.startswith("/asks/"):
            keys = "\n".join(k["key"] for k in ACCOUNT_KEYS)
            s = new_server("vast", req.get("label", ""), keys, "RTX 4090", 1, VAST_DPH_BASE)
            s["disk"] = req.get("disk", 10)
            s["start"] = time.time()
            return self.reply(200, {"success": True, "new_contract": int(s["id"]), "instance_api_key": "x"})
        if method == "GET" and p == "/instances/":  # deprecated; gpurent uses /api/v1/instances/
            items = [vast_instance(s) for s in SERVERS.values() if s["provider"] == "vast" and s["phase"] != "gone"]
            return self.reply(200, {"instances_found": len(items), "instances": items})
        parts = p.split("/")  # ['', 'instances', id, '']
        if len(parts) >= 3 and parts[1] == "instances":
            s = SERVERS.get(parts[2])
            if method == "GET":
                if not s or s["phase"] == "gone":
                    return self.reply(200, {"instances": None})
                advance(s)
                return self.reply(200, {"instances": vast_instance(s)})
            if not s or s["phase"] == "gone":
                return self.reply(404, {"success": False, "error": "not_found", "msg": "Instance not found"})
            if method == "DELETE":
                stop_sshd(s)
                s["phase"] = "gone"
                return self.reply(200, {"success": True, "msg": "Instance destroyed successfully"})
            if method == "PUT":
                if req.get("state") == "stopped":
                    stop_sshd(s)
                    s["phase"] = "stopped"
                elif req.get("state") == "running":
                    s["phase"], s["polls"] = "booting", 0
                return self.reply(200, {"success": True})
        return self.reply(404, {"success": False, "error": "no such path"})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--key", default="test-key")
    ap.add_argument("--bind", default="127.0.0.1", help="the address to listen on (a test's own network namespace)")
    ARGS = ap.parse_args()
    def on_term(*_):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    srv = ThreadingHTTPServer((ARGS.bind, 0), Handler)
    srv.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    finally:
        for s in SERVERS.values():
            stop_sshd(s)


if __name__ == "__main__":
    main()
