#!/usr/bin/env python3
"""A local stand-in for the Hugging Face hub, for hearth-server's download tests.

Serves the repositories under --root (<root>/<user>/<model>/<files>) the way the hub does:
  GET  /api/models/<user>/<model>/refs                         branches and their commits
  GET  /api/models/<user>/<model>/tree/<commit>?recursive=true files with sizes and oids
  GET  /<user>/<model>/resolve/<commit>/<path>                 a 302 to /blobs/...
  GET/HEAD /blobs/<user>/<model>/<path>                        the bytes (Range, ETag)
  GET/HEAD /files/<path>                                       plain files under --root (-mu)
GGUF files are listed as LFS files (sha256 oid); the others with git's blob sha1.

Faults, for the tests: --throttle B/s slows every body; --disconnect-after N closes the first
transfer of each file after N bytes; --corrupt NAME flips a byte of that file on the wire;
--token T makes repositories whose user is "private" answer 401 without "Bearer T";
--ignore-range answers every Range request with the whole file (200); --hostile adds a
branch and files whose names try to leave the cache folder.
Every request is appended to --log as a JSON line; the bound port goes to --port-file.
"""
import argparse
import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlparse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.disconnected = set()

    def repo_dir(self, user, model):
        d = os.path.join(self.args.root, user, model)
        return d if os.path.isdir(d) else None

    def log(self, entry):
        with self.lock, open(self.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub = None

    def log_message(self, *_):
        pass

    def reply(self, status, body=b"", ctype="application/json", headers=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def authorized(self, user):
        token = self.hub.args.token
        if user != "private" or not token:
            return True
        return self.headers.get("Authorization", "") == "Bearer " + token

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        self.hub.log({"method": self.command, "path": unquote(url.path),
                      "range": self.headers.get("Range"),
                      "auth": self.headers.get("Authorization")})
        if len(parts) >= 4 and parts[0] == "api" and parts[1] == "models":
            return self.api(parts[2], parts[3], parts[4:])
        if len(parts) >= 5 and parts[2] == "resolve":
            if not self.authorized(parts[0]):
                return self.reply(401, b'{"error":"Invalid credentials"}')
            target = "/blobs/" + quote("/".join(parts[:2] + parts[4:]))
            return self.reply(302, b"", "text/plain", {"Location": target})
        if len(parts) >= 4 and parts[0] == "blobs":
            return self.send_file(os.path.join(self.hub.args.root, *parts[1:]), "/".join(parts[3:]))
        if len(parts) >= 2 and parts[0] == "files":
            return self.send_file(os.path.join(self.hub.args.root, *parts[1:]), parts[-1])
        self.reply(404, b'{"error":"not found"}')

    def api(self, user, model, rest):
        d = self.hub.repo_dir(user, model)
        if d is None:
            return self.reply(404, b'{"error":"Repository not found"}')
        if not self.authorized(user):
            return self.reply(401, b'{"error":"Invalid credentials in Authorization header"}')
        if rest == ["refs"]:
            body = {"branches": [{"name": "dev", "ref": "refs/heads/dev", "targetCommit": "f" * 40},
                                 {"name": "main", "ref": "refs/heads/main",
                                  "targetCommit": COMMIT}],
                    "tags": [], "converts": []}
            if self.hub.args.hostile:
                body["branches"].insert(0, {"name": "../../escaped-ref", "targetCommit": COMMIT})
            return self.reply(200, json.dumps(body).encode())
        if len(rest) == 2 and rest[0] == "tree" and rest[1] == COMMIT:
            items = []
            for root, _, names in os.walk(d):
                for name in sorted(names):
                    full = os.path.join(root, name)
                    rel = os.path.relpath(full, d).replace(os.sep, "/")
                    data = open(full, "rb").read()
                    item = {"type": "file", "path": rel, "size": len(data), "oid": git_blob_sha1(data)}
                    if rel.endswith(".gguf"):
                        item["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                       "pointerSize": 134}
                    items.append(item)
            items.sort(key=lambda i: i["path"])
            if self.hub.args.hostile:
                evil = {"type": "file", "size": 4, "oid": "0" * 40,
                        "lfs": {"oid": "0" * 64, "size": 4}}
                items[:0] = [dict(evil, path="../../escaped-Q4_K_M.gguf"),
                             dict(evil, path="/abs-Q4_K_M.gguf"),
                             dict(evil, path="dir/../../../up-Q4_K_M.gguf"),
                             dict(evil, path="bad-oid-Q4_K_M.gguf", lfs={"oid": "../x", "size": 4})]
            return self.reply(200, json.dumps(items).encode())
        self.reply(404, b'{"error":"Invalid rev id"}')

    def send_file(self, path, name):
        if not os.path.isfile(path):
            return self.reply(404, b'{"error":"Entry not found"}')
        data = bytearray(open(path, "rb").read())
        if name == self.hub.args.corrupt and data:
            data[len(data) // 2] ^= 0xFF
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-") and not self.hub.args.ignore_range:
            start = int(rng[6:-1])
            if start >= len(data):
                return self.reply(416, b"", "text/plain", {"Content-Range": "bytes */%d" % len(data)})
        body = bytes(data[start:])
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.end_headers()
        if self.command == "HEAD":
            return
        limit = None
        with self.hub.lock:
            if self.hub.args.disconnect_after and name not in self.hub.disconnected:
                self.hub.disconnected.add(name)
                limit = self.hub.args.disconnect_after
        self.stream(body if limit is None else body[:limit])
        if limit is not None:
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(2)

    def stream(self, body):
        rate = self.hub.args.throttle
        chunk = 16384 if not rate else max(1024, rate // 20)
        for i in range(0, len(body), chunk):
            try:
                self.wfile.write(body[i:i + chunk])
            except (BrokenPipeError, ConnectionResetError):
                return
            if rate:
                time.sleep(chunk / rate)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--throttle", type=int, default=0)
    p.add_argument("--disconnect-after", type=int, default=0)
    p.add_argument("--corrupt", default="")
    p.add_argument("--token", default="")
    p.add_argument("--ignore-range", action="store_true")
    p.add_argument("--hostile", action="store_true")
    args = p.parse_args()
    Handler.hub = Hub(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
