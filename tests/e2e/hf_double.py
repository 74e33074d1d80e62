#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A local test double of the Hugging Face Hub's file endpoint (127.0.0.1, or --bind ADDR; random port).

GET /{org}/{name}/resolve/main/{file}:
  acme/tiny-llama      config.json + model.safetensors.index.json (not in gpurent's catalogue)
  acme/no-index        config.json only (the index is a 404)
  acme/gated-model     401 unless "Authorization: Bearer hf_test_token"
  acme/redirected      302 to acme/tiny-llama (the Hub redirects to its CDN)
  acme/huge            a 17 MiB config.json (the client must refuse it)
  anything else        404
With --files DIR, every DIR/<org>/<name>/ is a repository served as the Hub serves one
(docs/models.md; the Hub API, https://huggingface.co/docs/hub/api; the X-Linked-* headers as
huggingface_hub reads them,
https://github.com/huggingface/huggingface_hub/blob/main/src/huggingface_hub/file_download.py):
  GET /api/models/<org>/<name>[?blobs=true]  {"id", "siblings": [{"rfilename", "size", "lfs"}], "gated"}
  GET|HEAD /<org>/<name>/resolve/main/<path>  small files directly (Range honoured); weights
      (.safetensors, .gguf, .bin) answer 302 to a second listener, the "CDN" on another port, with
      X-Linked-Size and X-Linked-Etag; the CDN honours Range: bytes=a-b (206 + Content-Range, 416)
  a repository holding a file named .gated answers 401 without "Bearer hf_test_token", 403 with
      another token (its file list stays public, as on the Hub)
Writes the port to --port-file once listening; exits after --idle seconds without a request.
Every request line and whether it carried an Authorization header goes to --log (never the token).
"""
import argparse
import hashlib
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse

TINY = {
    "_name_or_path": "acme/tiny-llama",
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1408,
    "num_hidden_layers": 8,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "max_position_embeddings": 2048,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
# Derived by hand: embeddings 2*32000*512 = 32,768,000; per layer q/o 2*512*512 + k/v
# 2*512*256 + MLP 3*512*1408 + 2 norms * 512 = 2,950,144 -> x8 = 23,601,152; final norm 512.
TINY_PARAMS = 32_768_000 + 23_601_152 + 512
# The checkpoint holds 4,096 more parameters than the architecture (e.g. a buffer), so the
# resolver's exact count (from the index) must differ from the derived one.
TINY_INDEX = {"metadata": {"total_size": (TINY_PARAMS + 4096) * 2},
              "weight_map": {"model.embed_tokens.weight": "model-00001-of-00001.safetensors"}}
TOKEN = "hf_test_token"


LFS_SUFFIXES = (".safetensors", ".gguf", ".bin")


def log(server, line):
    if server.log:
        with server.log_lock:
            with open(server.log, "a") as f:
                f.write(line + "\n")


def repo_dir(server, org, name):
    if not server.files or org in ("", ".", "..") or name in ("", ".", ".."):
        return None
    d = os.path.join(server.files, org, name)
    return d if os.path.isdir(d) else None


def safe_file(root, rel):
    path = os.path.realpath(os.path.join(root, rel))
    if not path.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(path):
        return None
    return path


def siblings(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            size = os.path.getsize(full)
            entry = {"rfilename": rel, "size": size}
            if rel.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"size": size, "sha256": hashlib.sha256(rel.encode()).hexdigest(), "pointerSize": 134}
            out.append(entry)
    return out


def send_range(handler, path, head=False):
    """Serves a file honouring Range: bytes=a-b, bytes=a- and bytes=-n."""
    size = os.path.getsize(path)
    rng = handler.headers.get("Range")
    if not rng:
        body = b"" if head else open(path, "rb").read()
        return handler.send(200, body, "application/octet-stream", {"Accept-Ranges": "bytes"}, length=size)
    spec = rng.strip()
    if not spec.startswith("bytes=") or "," in spec:
        return handler.send(416, b"", headers={"Content-Range": f"bytes */{size}"})
    a, _, b = spec[6:].partition("-")
    if a == "":
        n = int(b)
        start, end = max(0, size - n), size - 1
    else:
        start = int(a)
        end = min(int(b), size - 1) if b else size - 1
    if start >= size or end < start:
        return handler.send(416, b"", headers={"Content-Range": f"bytes */{size}"})
    with open(path, "rb") as f:
        f.seek(start)
        body = f.read(end - start + 1)
    return handler.send(206, b"" if head else body, "application/octet-stream",
                        {"Content-Range": f"bytes {start}-{end}/{size}", "Accept-Ranges": "bytes"},
                        length=end - start + 1)


class Responder(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):  # quiet
        pass

    def send(self, status, body=b"", ctype="application/json", headers=None, length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


class CdnHandler(Responder):
    """The CDN: /cdn/<org>/<name>/<path>, ranges only from here on."""

    def do_GET(self):
        hub = self.server.hub
        hub.last = time.time()
        auth = self.headers.get("Authorization")
        log(hub, f"CDN GET {self.path} auth={'yes' if auth else 'no'} range={self.headers.get('Range', '-')}")
        parts = urllib.parse.unquote(self.path.split("?")[0]).split("/", 4)
        if len(parts) != 5 or parts[1] != "cdn":
            return self.send(404, b"not found")
        root = repo_dir(hub, parts[2], parts[3])
        path = safe_file(root, parts[4]) if root else None
        if not path:
            return self.send(404, b"not found")
        return send_range(self, path)


class Handler(Responder):

    def files_route(self, head=False):
        """The --files repositories; False when the path is not one of theirs."""
        url = urllib.parse.urlsplit(self.path)
        parts = urllib.parse.unquote(url.path).split("/")
        auth = self.headers.get("Authorization")
        if len(parts) == 5 and parts[1] == "api" and parts[2] == "models":
            root = repo_dir(self.server, parts[3], parts[4])
            if not root:
                return False
            doc = {"id": f"{parts[3]}/{parts[4]}", "siblings": siblings(root),
                   "gated": "manual" if os.path.exists(os.path.join(root, ".gated")) else False}
            self.send(200, json.dumps(doc).encode())
            return True
        if len(parts) < 6 or parts[3] != "resolve" or parts[4] != "main":
            return False
        root = repo_dir(self.server, parts[1], parts[2])
        if not root:
            return False
        if os.path.exists(os.path.join(root, ".gated")) and auth != f"Bearer {TOKEN}":
            status = 403 if auth else 401
            self.send(status, b'{"error":"Access to this model is restricted: accept its licence"}')
            return True
        rel = "/".join(parts[5:])
        path = safe_file(root, rel)
        if not path:
            self.send(404, b'{"error":"Entry not found"}')
            return True
        if rel.endswith(LFS_SUFFIXES):
            cdn = f"http://{self.server.server_address[0]}:{self.server.cdn_port}/cdn/{parts[1]}/{parts[2]}/{urllib.parse.quote(rel)}"
            size = os.path.getsize(path)
            body = b"Found. Redirecting"
            self.send(302, b"" if head else body, "text/plain",
                      {"Location": cdn, "X-Linked-Size": str(size),
                       "X-Linked-Etag": hashlib.sha256(rel.encode()).hexdigest()}, length=len(body))
            return True
        send_range(self, path, head)
        return True

    def do_HEAD(self):
        self.server.last = time.time()
        log(self.server, f"HEAD {self.path} auth={'yes' if self.headers.get('Authorization') else 'no'}")
        if not self.files_route(head=True):
            self.send(404, b"", length=0)

    def do_GET(self):
        self.server.last = time.time()
        auth = self.headers.get("Authorization")
        log(self.server, f"GET {self.path} auth={'yes' if auth else 'no'}")
        if self.files_route():
            return None
        parts = self.path.split("/")
        if len(parts) != 6 or parts[0] != "" or parts[3] != "resolve" or parts[4] != "main":
            return self.send(404, b'{"error":"not found"}')
        repo, name = f"{parts[1]}/{parts[2]}", parts[5]
        if repo == "acme/tiny-llama" or (repo == "acme/no-index" and name == "config.json"):
            if name == "config.json":
                return self.send(200, json.dumps(TINY, indent=2).encode())
            if name == "model.safetensors.index.json":
                return self.send(200, json.dumps(TINY_INDEX).encode())
        if repo == "acme/gated-model":
            if auth != f"Bearer {TOKEN}":
                return self.send(401, b'{"error":"Access to model acme/gated-model is restricted."}')
            if name == "config.json":
                return self.send(200, json.dumps(dict(TINY, _name_or_path=repo)).encode())
        if repo == "acme/redirected":
            return self.send(302, b"", headers={"Location": f"/acme/tiny-llama/resolve/main/{name}"})
        if repo == "acme/huge" and name == "config.json":
            return self.send(200, b" " * (17 * 1024 * 1024))
        return self.send(404, b'{"error":"Repository not found"}')


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--files", help="directory of repositories: <org>/<name>/<files>")
    ap.add_argument("--bind", default="127.0.0.1", help="the address to listen on (a test's own network namespace)")
    args = ap.parse_args()
    srv = Server((args.bind, 0), Handler)
    srv.log = args.log
    srv.log_lock = threading.Lock()
    srv.files = args.files
    srv.last = time.time()
    srv.timeout = 0.2
    cdn = Server((args.bind, 0), CdnHandler)
    cdn.hub = srv
    srv.cdn_port = cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, args.port_file)
    while time.time() - srv.last < args.idle:
        srv.handle_request()
    return 0


if __name__ == "__main__":
    sys.exit(main())
