#!/usr/bin/env python3
"""Run inside `unshare -n -m` (a network namespace with only loopback, a
mount namespace of its own): a resolver of the test's own on 127.0.0.1:53
that knows one name (argv[1] -> 127.0.0.1, or NAME=ADDR -> ADDR), /etc/
resolv.conf pointing at it, an HTTP server on 127.0.0.1:8080 (the
namespace is new: the port is free), then each command given after `--`.
With --local ADDR (repeatable) the namespace's loopback also holds ADDR,
as a machine's own public address, and the server listens on every
address (0.0.0.0 and ::, as host services often do). Prints one JSON
line: each command's stdout and stderr, and the paths the server was asked
for. Nothing here can reach a real address: the namespace has no route out.

Usage: resolve_world.py NAME[=ADDR] RESOLV_CONF [--local ADDR]... -- CMD... [-- CMD...]"""
import http.server
import json
import socket
import struct
import subprocess
import sys
import threading


def dns_server(name, addr, sock):
    while True:
        data, peer = sock.recvfrom(512)
        if len(data) < 12:
            continue
        qid, flags, qd = struct.unpack(">HHH", data[:6])
        at, labels = 12, []
        while at < len(data) and data[at]:
            labels.append(data[at + 1:at + 1 + data[at]].decode("ascii", "replace"))
            at += 1 + data[at]
        question = data[12:at + 5]
        qtype = struct.unpack(">H", data[at + 1:at + 3])[0] if at + 3 <= len(data) else 0
        known = ".".join(labels).lower() == name
        answers = b""
        if known and qtype == 1:
            answers = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(addr)
        rcode = 0 if known else 3
        head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, 1 if answers else 0, 0, 0)
        sock.sendto(head + question + answers, peer)


def main():
    name, _, addr = sys.argv[1].partition("=")
    resolv = sys.argv[2]
    cmds, cur, local = [], None, []
    args = iter(sys.argv[3:])
    for a in args:
        if a == "--":
            cur = []
            cmds.append(cur)
        elif cur is None and a == "--local":
            local.append(next(args))
        else:
            cur.append(a)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for a in local:
        v6 = ":" in a
        subprocess.run(["ip", "-6" if v6 else "-4", "addr", "add", a + ("/128" if v6 else "/32"),
                        "dev", "lo"] + (["nodad"] if v6 else []), check=True)
    with open(resolv, "w") as f:
        f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 53))
    threading.Thread(target=dns_server, args=(name, addr or "127.0.0.1", u), daemon=True).start()
    asked = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append({"path": self.path, "host": self.headers["Host"]})
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    class H6(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6

        def server_bind(self):
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            super().server_bind()

    srvs = [http.server.ThreadingHTTPServer(("0.0.0.0" if local else "127.0.0.1", 8080), H)]
    if any(":" in a for a in local):
        srvs.append(H6(("::", 8080), H))
    for srv in srvs:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    out = []
    for c in cmds:
        p = subprocess.run(c, capture_output=True, text=True, timeout=90)
        out.append({"rc": p.returncode, "out": p.stdout, "err": p.stderr})
    print(json.dumps({"runs": out, "asked": list(asked)}))


if __name__ == "__main__":
    main()
