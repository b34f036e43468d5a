#!/usr/bin/env python3
"""A tiny policy service, to try ask-service.py: it listens on 127.0.0.1
only and answers POST /decide with the team's rules (the same as
allowlist.py's, in one place for every machine of the team).

Usage: policy_service.py PORT [ALLOWLIST]
"""
import http.server
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "allowlist", os.path.join(os.path.dirname(os.path.abspath(__file__)), "allowlist.py"))
allowlist = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(allowlist)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/decide":
            self.send_error(404)
            return
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(min(n, 65536)))
        decision, scope, reason = allowlist.decide(req, allowlist.allowed_hosts(PATH))
        out = json.dumps({"decision": decision, "scope": scope,
                          "reason": "policy service: " + reason}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


PATH = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "team-allowlist.txt")

if __name__ == "__main__":
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("listening", flush=True)
    server.serve_forever()
