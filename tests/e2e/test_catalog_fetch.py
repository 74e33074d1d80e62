#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end: the price catalogue fetched by the real binary (libcurl) from a local double of its
hosts (tests/e2e/catalog_double.py): `offers --offline` reads the cache and asks nothing;
`offers --refresh` asks conditionally (If-None-Match), takes 304 as current, goes to the mirror on
429, and for a 404, an HTML page or garbage served with 200, or a cut file names the cloud, keeps
the cached copy, writes nothing for it and exits 4; `plan` refreshes a stale cache (not with
--offline, not again within the hour after an attempt), and fetches it the first time when there
is none (not with catalog_auto_refresh=false; without network, one warning and the snapshot). The
cache is seeded in the documented offers.tsv format (providers/market/catalog_cache.hpp).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalog_double import CatalogDouble  # noqa: E402

BIN = os.environ["GPURENT_BIN"]


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def run(args, env):
    return subprocess.run([BIN] + args, env=env, capture_output=True, text=True, timeout=120)


RUNPOD_CSV = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price\n"
              "1x_H100-SXM_SECURE,H100-SXM,1,16,125,,US,2.69,2.345\n")
LAMBDA_CSV = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price\n"
              "gpu_1x_a10,A10,1,30,200,,us-east-1,,0.71\n")


def seed(cache, made_by, checked, tried):
    """The cache as a refresh at `checked` left it: runpod (ETag "rp1") and lambda (ETag "la1")."""
    os.makedirs(os.path.join(cache, "v8"), exist_ok=True)
    with open(os.path.join(cache, "v8", "runpod.csv"), "w") as f:
        f.write(RUNPOD_CSV)
    with open(os.path.join(cache, "v8", "lambda.csv"), "w") as f:
        f.write(LAMBDA_CSV)
    lines = ["gpurent-catalog-offers\t1", f"tried\t{tried}",
             f"cloud\tlambda\t{checked}\t{checked}\t{made_by}\t\"la1\"\t\t1",
             "o\ta10\t1\t710000\t\tus-east-1\tgpu_1x_a10\t\t",
             f"cloud\trunpod\t{checked}\t{checked}\t{made_by}\t\"rp1\"\t\t1",
             "o\th100-sxm\t1\t2345000\t2690000\tUS\t1x_H100-SXM_SECURE\t\t", "end"]
    with open(os.path.join(cache, "offers.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def main():
    double = CatalogDouble()
    with tempfile.TemporaryDirectory(prefix="gpurent-catalog-e2e-") as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "NO_COLOR": "1",
               "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
               "XDG_STATE_HOME": os.path.join(tmp, "state"),
               "GPURENT_CATALOG_URL": double.url("primary"), "GPURENT_CATALOG_FALLBACK_URL": double.url("mirror"),
               "GPURENT_CATALOG_CLOUDS": "runpod,lambda"}
        cache = os.path.join(tmp, "cache", "gpurent", "catalog")
        v = json.loads(run(["--version", "--json"], env).stdout)
        made_by = f"{v['version']} {v['commit']}"
        now = int(time.time())
        seed(cache, made_by, now - 30 * 3600, now - 30 * 3600)

        # --offline: the cache answers, nothing is asked.
        p = run(["offers", "--offline", "--provider", "runpod", "--json"], env)
        check(p.returncode == 0, f"offers --offline: exit {p.returncode}: {p.stderr}")
        rows = [o for o in json.loads(p.stdout)["offers"] if o["card"] == "h100-sxm" and o["gpus"] == 1]
        check(len(rows) == 1 and rows[0]["price_per_hour"] == 2.345 and rows[0]["price_origin"] == "catalogue",
              f"offers --offline shows the cached catalogue price: {rows}")
        p = run(["plan", "llama-3.1-8b", "--offline", "--json"], env)
        check(p.returncode == 0, f"plan --offline: {p.stderr}")
        check(double.take_requests() == [], "--offline asked the catalogue")

        # --refresh: 304 for runpod, 429 then the mirror's 304 for lambda; the bad ones fail by name.
        double.set("primary", "runpod", etag='"rp1"', body=RUNPOD_CSV)
        double.set("primary", "lambda", status=429, body="slow down")
        double.set("mirror", "lambda", etag='"la1"', body=LAMBDA_CSV)
        double.set("primary", "gcp", body="<!DOCTYPE html><html><body>rate limited</body></html>\n",
                   content_type="text/html")
        double.set("primary", "cudo", body=b"\x1f\x8b\x08\x00\xff\xfe\x00garbage")
        double.set("primary", "nebius", body=RUNPOD_CSV[:70])
        env_all = dict(env, GPURENT_CATALOG_CLOUDS="runpod,lambda,aws,gcp,cudo,nebius")
        raw_before = {c: read(os.path.join(cache, "v8", c + ".csv")) for c in ("runpod", "lambda")}
        p = run(["offers", "--refresh", "--json"], env_all)
        check(p.returncode == 4, f"a partial refresh exits 4, not {p.returncode}: {p.stderr}")
        err = json.loads(p.stdout)["error"]
        check(err["code"] == "partial", f"error code: {err}")
        for cloud in ("aws", "gcp", "cudo", "nebius"):
            check(f"{cloud}:" in err["message"], f"the error names {cloud}: {err['message']}")
        check("aws: HTTP 404 from " + double.url("primary") + "/v8/aws/vms.csv" in p.stderr, f"404 named: {p.stderr}")
        check("no cached copy" in p.stderr, f"says no copy is kept for a cloud never fetched: {p.stderr}")
        check("the price catalogue of 2 clouds is current" in p.stderr, f"runpod and lambda current: {p.stderr}")
        reqs = double.take_requests()
        by = {(r["host"], r["cloud"]): r for r in reqs}
        check(by[("primary", "runpod")]["if_none_match"] == '"rp1"', f"runpod asked with its ETag: {reqs}")
        check(("mirror", "lambda") in by and by[("mirror", "lambda")]["if_none_match"] == '"la1"',
              f"lambda went to the mirror after 429, with its ETag: {reqs}")
        check(("mirror", "aws") not in by, "a 404 does not go to the mirror")
        for c in ("runpod", "lambda"):
            check(read(os.path.join(cache, "v8", c + ".csv")) == raw_before[c], f"{c}'s cached file unchanged")
        for c in ("aws", "gcp", "cudo", "nebius"):
            check(read(os.path.join(cache, "v8", c + ".csv")) is None, f"nothing stored for {c}")
        offers_tsv = read(os.path.join(cache, "offers.tsv")).decode()
        check("\tgcp\t" not in offers_tsv and "o\th100-sxm\t1\t2345000\t" in offers_tsv,
              f"offers.tsv keeps runpod's offers and has nothing of the failed clouds: {offers_tsv}")

        # Right after an attempt, a failing cloud is not asked again by plan.
        p = run(["plan", "llama-3.1-8b", "--json"], env_all)
        check(p.returncode == 0 and double.take_requests() == [], f"plan asked again within the hour: {p.stderr}")

        # A stale cache: plan refreshes it (conditionally); --offline does not.
        seed(cache, made_by, now - 30 * 3600, now - 30 * 3600)
        p = run(["plan", "llama-3.1-8b", "--offline", "--json"], env)
        check(p.returncode == 0 and double.take_requests() == [], "plan --offline refreshed")
        p = run(["plan", "llama-3.1-8b", "--json"], env)
        check(p.returncode == 0, f"plan with a stale cache: {p.stderr}")
        check("refreshing the price catalogue of 2 clouds" in p.stderr, f"plan says it refreshes: {p.stderr}")
        reqs = double.take_requests()
        check(sorted(r["cloud"] for r in reqs if r["host"] == "primary") == ["lambda", "runpod"],
              f"plan asked each stale cloud once: {reqs}")
        p = run(["plan", "llama-3.1-8b", "--json"], env)
        check(p.returncode == 0 and double.take_requests() == [], "a fresh cache is not asked again")

    # No cache yet: the first plan fetches every listed cloud (the snapshot would say $2.99).
    with tempfile.TemporaryDirectory(prefix="gpurent-catalog-first-") as tmp:
        fresh = dict(env, HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                     XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_STATE_HOME=os.path.join(tmp, "state"))
        double.set("primary", "runpod", etag='"rp2"', body=RUNPOD_CSV)
        double.set("primary", "lambda", etag='"la2"', body=LAMBDA_CSV)
        h100 = ["plan", "llama-3.1-8b", "--card", "h100-sxm", "--gpus", "1", "--provider", "runpod", "--json"]
        p = run(h100, dict(fresh, GPURENT_CATALOG_AUTO_REFRESH="false"))
        check(p.returncode == 0 and double.take_requests() == [], f"catalog_auto_refresh=false fetched: {p.stderr}")
        check(json.loads(p.stdout)["choice"]["price_source"] == "snapshot", "without a cache the snapshot answers")
        p = run(h100, fresh)
        check(p.returncode == 0, f"plan's first fetch: {p.stderr}")
        check("fetching the price catalogue of 2 clouds from 127.0.0.1" in p.stderr and "no copy cached yet" in p.stderr,
              f"plan says it fetches: {p.stderr}")
        check(sorted(r["cloud"] for r in double.take_requests()) == ["lambda", "runpod"], "each cloud asked once")
        choice = json.loads(p.stdout)["choice"]
        check(choice["price_per_hour"] == 2.345 and choice["price_source"] == "catalogue",
              f"the fetched price is ranked: {choice}")
        check(read(os.path.join(tmp, "cache", "gpurent", "catalog", "v8", "runpod.csv")) == RUNPOD_CSV.encode(),
              "the fetched file is cached")

    # No cache and no network (nothing listens on port 9): one warning, the snapshot answers.
    with tempfile.TemporaryDirectory(prefix="gpurent-catalog-down-") as tmp:
        down = dict(env, HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, "cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"),
                    XDG_STATE_HOME=os.path.join(tmp, "state"), GPURENT_CATALOG_URL="http://127.0.0.1:9/catalogs")
        p = run(["plan", "llama-3.1-8b", "--json"], down)
        check(p.returncode == 0, f"plan without network: {p.stderr}")
        check(p.stderr.count("warning") == 1 and "the price catalogue was not fetched (the shipped snapshot of" in p.stderr,
              f"one warning naming the snapshot: {p.stderr}")
        check(json.loads(p.stdout)["choice"]["price_source"] == "snapshot", "the snapshot answers")
        p = run(["plan", "llama-3.1-8b", "--json"], down)
        check(p.returncode == 0 and "fetching" not in p.stderr, f"not tried again within the hour: {p.stderr}")
    double.close()
    print("ok")


if __name__ == "__main__":
    main()
