#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A local test double of the Hugging Face Hub's file endpoint (127.0.0.1, random port).

GET /{org}/{name}/resolve/main/{file}:
  acme/tiny-llama      config.json + model.safetensors.index.json (not in gpurent's catalogue)
  acme/no-index        config.json only (the index is a 404)
  acme/gated-model     401 unless "Authorization: Bearer hf_test_token"
  acme/redirected      302 to acme/tiny-llama (the Hub redirects to its CDN)
  acme/huge            a 17 MiB config.json (the client must refuse it)
  anything else        404
Writes the port to --port-file once listening; exits after --idle seconds without a request.
Every request line and whether it carried an Authorization header goes to --log (never the token).
"""
import argparse
import http.server
import json
import os
import socketserver
import sys
import time

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


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):  # quiet
        pass

    def send(self, status, body=b"", ctype="application/json", headers=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.server.last = time.time()
        auth = self.headers.get("Authorization")
        if self.server.log:
            with open(self.server.log, "a") as f:
                f.write(f"GET {self.path} auth={'yes' if auth else 'no'}\n")
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
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.log = args.log
    srv.last = time.time()
    srv.timeout = 0.2
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, args.port_file)
    while time.time() - srv.last < args.idle:
        srv.handle_request()
    return 0


if __name__ == "__main__":
    sys.exit(main())
