#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end, issue #44: credentials never go over plain HTTP to another machine.

The test makes a network namespace of its own (`unshare -n`, as root) in which the only interface
is loopback, with 192.0.2.2 (TEST-NET-1) added to it: the provider double
(tests/e2e/provider_double.py) and the Hub double (tests/e2e/hf_double.py) listen on 192.0.2.2,
an address gpurent treats as another machine, and nothing outside the namespace can be reached.
With the API URL or HF_ENDPOINT pointing there on http://, gpurent refuses and names where the
URL came from, and the doubles see no request (so no Authorization header); with --insecure-http
or allow_insecure_http = true the request goes and a warning says so. Skipped (exit 77) only
where `unshare -n` or `ip` is not permitted.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ADDR = "192.0.2.2"
KEY = "rk_SECRET_4711_never_in_clear"
TOKEN = "hf_test_token"  # what hf_double.py opens gated models with
FAILS = []


def check(cond, what, extra=""):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, extra, file=sys.stderr)


def reexec_in_namespace():
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        print("SKIP: needs unshare(1) and ip(8) to make a network namespace")
        return 77
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: `unshare -n` is not permitted here (needs root or user namespaces): " + probe.stderr.strip())
        return 77
    env = dict(os.environ, GPURENT_TEST_IN_NETNS="1")
    return subprocess.run(["unshare", "-n", sys.executable, os.path.abspath(__file__)], env=env).returncode


def start(cmd, port_file):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        if os.path.exists(port_file):
            return p, int(open(port_file).read())
        time.sleep(0.02)
    p.kill()
    raise SystemExit("FAIL: a double did not start")


def requests_seen(port):
    # The double's own log, read over the namespace's 192.0.2.2 (urllib, no credential).
    import urllib.request
    with urllib.request.urlopen(f"http://{ADDR}:{port}/_control/requests", timeout=5) as r:
        return [q for q in json.loads(r.read()) if not q["path"].startswith("/_control/")]


def main():
    if os.environ.get("GPURENT_TEST_IN_NETNS") != "1":
        return reexec_in_namespace()
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", ADDR + "/32", "dev", "lo"], check=True)
    binary = os.environ["GPURENT_BIN"]
    with tempfile.TemporaryDirectory() as tmp:
        cfg_dir = os.path.join(tmp, "config", "gpurent")
        os.makedirs(cfg_dir)
        cfg = os.path.join(cfg_dir, "config.toml")
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "NO_COLOR": "1",
                "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
                "XDG_STATE_HOME": os.path.join(tmp, "xstate"), "GPURENT_STATE_DIR": os.path.join(tmp, "state"),
                "GPURENT_HTTP_BACKOFF_MS": "10", "GPURENT_HTTP_TIMEOUT_S": "10",
                # No catalogue file for the providers these tests refresh (docs/catalogue_fetch.md).
                "GPURENT_CATALOG_CLOUDS": "aws", "GPURENT_CATALOG_URL": "http://127.0.0.1:9/catalogs",
                "GPURENT_CATALOG_AUTO_REFRESH": "false"}
        if "GPURENT_IO_MODULE" in os.environ:
            base["GPURENT_IO_MODULE"] = os.environ["GPURENT_IO_MODULE"]

        def run(args, extra=None, config_text=None):
            if os.path.exists(cfg):
                os.unlink(cfg)
            if config_text is not None:
                with open(cfg, "w") as f:
                    f.write(config_text)
                os.chmod(cfg, 0o600)
            env = dict(base)
            env.update(extra or {})
            p = subprocess.run([binary, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=60)
            check(KEY not in p.stdout + p.stderr and TOKEN not in p.stdout + p.stderr,
                  "a credential is never printed: " + " ".join(args))
            return p

        port_file = os.path.join(tmp, "provider.port")
        provider, port = start([sys.executable, os.path.join(HERE, "provider_double.py"), "--port-file", port_file,
                                "--state-dir", tmp, "--key", KEY, "--bind", ADDR], port_file)
        hub_log = os.path.join(tmp, "hub.log")
        hub_port_file = os.path.join(tmp, "hub.port")
        hub, hub_port = start([sys.executable, os.path.join(HERE, "hf_double.py"), "--port-file", hub_port_file,
                               "--log", hub_log, "--idle", "120", "--bind", ADDR], hub_port_file)
        try:
            lam = {"LAMBDA_API_KEY": KEY, "GPURENT_LAMBDA_API_URL": f"http://{ADDR}:{port}/lambda"}
            # 1. The environment's URL on plain http to another machine: refused, nothing sent.
            r = run(["offers", "--refresh", "--provider", "lambda"], lam)
            check(r.returncode != 0, "plain http to another machine fails", r.stderr)
            check("GPURENT_LAMBDA_API_URL" in r.stderr and "--insecure-http" in r.stderr,
                  "the refusal names the variable and the way out", r.stderr)
            check(requests_seen(port) == [], "the provider double saw no request (no Authorization header)")
            # status --refresh with only that refusal: exit 3 (refused), not a network failure.
            r = run(["status", "--refresh"], lam)
            check(r.returncode == 3 and "--insecure-http" in r.stderr, "status --refresh: refused, exit 3", r.stderr)
            check(requests_seen(port) == [], "status --refresh sent nothing either")

            # 2. The config file's URL: refused, naming the key.
            r = run(["offers", "--refresh", "--provider", "runpod", "--json"], {"RUNPOD_API_KEY": KEY},
                    config_text=f'runpod_api_url = "http://{ADDR}:{port}/runpod/v1"\n')
            check(r.returncode != 0 and "runpod_api_url (" in r.stderr, "a config URL is refused naming the key", r.stderr)
            check("runpod_api_url (" in json.loads(r.stdout)["error"]["message"], "--json: the error names the key too")
            check(requests_seen(port) == [], "still no request")

            # 3. RunPod's GraphQL URL from the environment.
            r = run(["offers", "--refresh", "--provider", "runpod"],
                    {"RUNPOD_API_KEY": KEY, "GPURENT_RUNPOD_API_URL": f"http://127.0.0.1:9/runpod/v1",
                     "GPURENT_RUNPOD_GRAPHQL_URL": f"http://{ADDR}:{port}/runpod/graphql"})
            check(r.returncode != 0 and "GPURENT_RUNPOD_GRAPHQL_URL" in r.stderr, "the GraphQL URL is checked", r.stderr)
            check(requests_seen(port) == [], "still no request")

            # 4. --insecure-http lets it through, with a warning; the key reaches the double.
            r = run(["offers", "--refresh", "--provider", "lambda", "--insecure-http"], lam)
            check(r.returncode == 0, "--insecure-http: offers --refresh works", r.stderr)
            check("warning" in r.stderr and "plain HTTP" in r.stderr, "--insecure-http warns", r.stderr)
            seen = requests_seen(port)
            check(seen and all(q["auth"] == "Bearer " + KEY for q in seen), "the request carried the key", str(seen))

            # 5. allow_insecure_http = true in the config file does the same.
            r = run(["offers", "--refresh", "--provider", "lambda"], lam, config_text="allow_insecure_http = true\n")
            check(r.returncode == 0 and "plain HTTP" in r.stderr, "allow_insecure_http = true lets it through", r.stderr)

            # 6. The Hub: a token is not sent to a plain-http endpoint on another machine...
            hub_env = {"HF_ENDPOINT": f"http://{ADDR}:{hub_port}", "HF_TOKEN": TOKEN}
            r = run(["plan", "acme/gated-model", "--json"], hub_env)
            check(r.returncode == 3 and "HF_ENDPOINT" in r.stderr, "the Hub token is refused over plain http", r.stderr)
            check(not os.path.exists(hub_log) or open(hub_log).read() == "", "the Hub double saw no request")
            # ... nor the config file's token to the config file's endpoint (named as such) ...
            r = run(["plan", "acme/gated-model"], {},
                    config_text=f'hf_token = "{TOKEN}"\nhf_endpoint = "http://{ADDR}:{hub_port}"\n')
            check(r.returncode == 3 and "hf_endpoint (" in r.stderr, "the config's endpoint is named", r.stderr)
            check(not os.path.exists(hub_log) or open(hub_log).read() == "", "the Hub double saw no request")
            # ... unless allowed: then the config file's token opens the gated model.
            r = run(["plan", "acme/gated-model", "--json", "--insecure-http"], {},
                    config_text=f'hf_token = "{TOKEN}"\nhf_endpoint = "http://{ADDR}:{hub_port}"\n')
            check(r.returncode == 0 and "plain HTTP" in r.stderr, "--insecure-http: the Hub gets the token", r.stderr)
            check("auth=yes" in open(hub_log).read(), "the Hub double saw the Authorization header")
        finally:
            provider.send_signal(signal.SIGTERM)
            hub.terminate()
            for p in (provider, hub):
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    if FAILS:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
