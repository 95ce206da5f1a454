#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face Hub's file API, for the GPU machine's download check (device-fetch-serve.sh).

Serves one model directory as repository ID: GET /api/models/ID/revision/REV (the commit and the files with sizes, as
the Hub answers with ?blobs=true) and GET /ID/resolve/COMMIT/FILE (the file; Range requests answered with 206). With
--token, every request must carry "Authorization: Bearer TOKEN" (else 401 with the Hub's X-Error-Code), so the check
also covers the token path. Standard library only.

usage: local_hub.py --dir DIR --id ORG/NAME [--port 18091] [--token T]
"""
import argparse
import hashlib
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--id", required=True)
    ap.add_argument("--port", type=int, default=18091)
    ap.add_argument("--token")
    args = ap.parse_args()
    files = sorted(f for f in os.listdir(args.dir) if os.path.isfile(os.path.join(args.dir, f)) and not f.startswith("."))
    sha = hashlib.sha1("\n".join("%s:%d" % (f, os.path.getsize(os.path.join(args.dir, f))) for f in files).encode()).hexdigest()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):
            sys.stderr.write("local_hub: " + (fmt % a) + "\n")

        def fail(self, code, err, msg):
            body = msg.encode()
            self.send_response(code)
            self.send_header("X-Error-Code", err)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if args.token and self.headers.get("Authorization") != "Bearer " + args.token:
                return self.fail(401, "GatedRepo", "token required")
            path = self.path.split("?", 1)[0]
            if path.startswith("/api/models/%s/revision/" % args.id):
                body = json.dumps({"id": args.id, "sha": sha, "siblings": [
                    {"rfilename": f, "size": os.path.getsize(os.path.join(args.dir, f))} for f in files]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            prefix = "/%s/resolve/%s/" % (args.id, sha)
            name = path[len(prefix):] if path.startswith(prefix) else None
            if name not in files:
                return self.fail(404, "EntryNotFound", "no such file")
            full = os.path.join(args.dir, name)
            size = os.path.getsize(full)
            start, end = 0, size - 1
            m = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
            if m:
                start = int(m.group(1))
                end = min(size - 1, int(m.group(2))) if m.group(2) else size - 1
            self.send_response(206 if m else 200)
            if m:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            self.send_header("Content-Length", str(max(0, end - start + 1)))
            self.end_headers()
            with open(full, "rb") as f:
                f.seek(start)
                left = end - start + 1
                while left > 0:
                    chunk = f.read(min(1 << 20, left))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
