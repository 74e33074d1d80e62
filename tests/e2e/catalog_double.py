# SPDX-License-Identifier: MIT
"""A local HTTP test double of the price catalogue's two hosts (SkyPilot's
`catalogs/v8/<cloud>/vms.csv` on raw.githubusercontent.com and its S3 mirror): /primary/catalogs
and /mirror/catalogs on one loopback port. Each cloud's answer is set by the test:
{"etag": "\"x\"", "body": "...", "status": 200, "content_type": "text/csv"} per (host, cloud); a
request whose If-None-Match equals the ETag gets 304. Every request is recorded (host, cloud,
If-None-Match, If-Modified-Since). Unknown paths: 404.
"""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CatalogDouble:
    def __init__(self):
        self.lock = threading.Lock()
        self.answers = {}   # (host, cloud) -> dict
        self.requests = []  # dicts
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = self.path.split("/")  # "", host, "catalogs", "v8", cloud, "vms.csv"
                ok = len(parts) == 6 and parts[2] == "catalogs" and parts[3] == "v8" and parts[5] == "vms.csv"
                host, cloud = (parts[1], parts[4]) if ok else ("", "")
                with double.lock:
                    double.requests.append({"host": host, "cloud": cloud, "path": self.path,
                                            "if_none_match": self.headers.get("If-None-Match"),
                                            "if_modified_since": self.headers.get("If-Modified-Since")})
                    answer = double.answers.get((host, cloud))
                if answer is None:
                    self.reply(404, b"404: Not Found", "text/plain", None)
                    return
                etag = answer.get("etag")
                if etag and self.headers.get("If-None-Match") == etag and answer.get("status", 200) == 200:
                    self.reply(304, b"", None, etag)
                    return
                body = answer.get("body", "")
                self.reply(answer.get("status", 200), body.encode() if isinstance(body, str) else body,
                           answer.get("content_type", "text/csv"), etag)

            def reply(self, status, body, content_type, etag):
                self.send_response(status)
                if content_type:
                    self.send_header("Content-Type", content_type)
                if etag:
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, host):
        return f"http://127.0.0.1:{self.port}/{host}/catalogs"

    def set(self, host, cloud, **answer):
        with self.lock:
            self.answers[(host, cloud)] = answer

    def take_requests(self):
        with self.lock:
            out, self.requests = self.requests, []
        return out

    def close(self):
        self.server.shutdown()
        self.server.server_close()
