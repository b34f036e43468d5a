#!/usr/bin/env python3
"""The demo's throwaway world: stand-ins for the internet, so that nothing
real is ever reached. Started by `skillgate demo`, never by hand.

  world.py ca DIR
      A throwaway certificate authority and one server certificate for
      api.weather.test, *.attacker.test and the documentation addresses
      the malicious example uses (openssl CLI).
  world.py unenforced DIR SKILL_DIR HOME
      Must run inside fresh user, network and mount namespaces (skillgate
      starts it under `unshare`): loopback only, every address routed to
      loopback, a private /tmp. Starts the attacker's and the weather API's
      stand-ins on loopback and runs the skill WITHOUT skillgate, with fake
      credentials in HOME and the environment. Prints what the stand-in
      attacker received, prefixed "[attacker] ".
  world.py api DIR PORT_FILE
      The weather API stand-in over HTTPS on 127.0.0.1, on the host side,
      for the legitimate skill under skillgate (--resolve points there).
      Writes its port to PORT_FILE and serves until stdin closes.

Every loop here is bounded in time; every address is loopback.
"""
import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time

HOSTS = ["api.weather.test", "collector.attacker.test", "*.attacker.test"]
IPS = ["203.0.113.7", "192.0.2.53"]
DEADLINE = time.monotonic() + 120  # the world never outlives two minutes


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_ca(d):
    os.makedirs(d, exist_ok=True)
    run = lambda *a: subprocess.run(["openssl", *a], cwd=d, check=True, capture_output=True,
                                    timeout=60)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "1", "-subj", "/CN=skillgate demo CA (throwaway)",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr",
        "-subj", "/CN=api.weather.test")
    san = ",".join([f"DNS:{h}" for h in HOSTS] + [f"IP:{i}" for i in IPS])
    with open(os.path.join(d, "ext"), "w") as f:
        f.write(f"subjectAltName={san}\nextendedKeyUsage=serverAuth\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.pem", "-days", "1", "-extfile", "ext")
    os.chmod(os.path.join(d, "ca.pem"), 0o644)


def tls_context(d):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "srv.pem"), os.path.join(d, "srv.key"))
    return ctx


def read_request(conn):
    """One HTTP request: (request line, headers, body); bounded."""
    data = b""
    conn.settimeout(5)
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip().lower()] = v.strip()
    want = min(int(headers.get("content-length", "0") or 0), 1 << 20)
    while len(body) < want:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0] if lines else "", headers, body


def reply(conn, obj, status="200 OK"):
    body = json.dumps(obj).encode()
    conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def loot_summary(body):
    """What a blob of stolen JSON holds, for the audience (values shortened)."""
    try:
        loot = json.loads(body)
    except ValueError:
        text = body[:160].decode("utf-8", "replace")
        return f"{text!r} ({len(body)} bytes)"
    parts = []
    for k, v in sorted((loot.get("env") or {}).items()):
        parts.append(f"{k}={str(v)[:18]}...")
    for k, v in sorted((loot.get("files") or {}).items()):
        parts.append(f"{os.path.basename(k)} ({str(v).splitlines()[0][:30] if v else ''}...)")
    return ", ".join(parts) + f" ({len(body)} bytes)"


def https_server(sock, ctx):
    sock.settimeout(1)
    while time.monotonic() < DEADLINE:
        try:
            raw, addr = sock.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        threading.Thread(target=serve_https, args=(raw, ctx), daemon=True).start()


def serve_https(raw, ctx):
    try:
        local = raw.getsockname()[0]
        raw.settimeout(5)
        first = raw.recv(1, socket.MSG_PEEK)
        if first != b"\x16":  # not a TLS handshake: plain bytes to port 443
            plain_conn(raw, f"{local}:443")
            return
        conn = ctx.wrap_socket(raw, server_side=True)
        line, headers, body = read_request(conn)
        host = headers.get("host", local)
        if host.startswith("api.weather.test"):
            say(f"[api] weather request {line.split(' ')[1] if ' ' in line else line}")
            reply(conn, {"temperature_c": 4.5, "conditions": "light rain"})
        else:
            say(f"[attacker] HTTPS POST to {host}: received {loot_summary(body)}")
            reply(conn, {"ok": True})
        conn.close()
    except Exception as e:  # noqa: BLE001 (a stand-in logs and carries on)
        say(f"[world] a connection failed: {e}")
        raw.close()


def plain_tcp_server(sock, label):
    sock.settimeout(1)
    while time.monotonic() < DEADLINE:
        try:
            conn, addr = sock.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        plain_conn(conn, label)


def plain_conn(conn, label):
    conn.settimeout(3)
    data = b""
    try:
        while len(data) < 1024:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
            conn.settimeout(0.3)  # the sender waits for an answer: do not wait for more
    except OSError:
        pass
    try:
        conn.sendall(b"K")
    except OSError:
        pass
    conn.close()
    if data:
        say(f"[attacker] raw TCP to {label}: received {loot_summary(data)}")


def dns_name(q):
    i, labels = 12, []
    while i < len(q) and q[i] and len(labels) < 64:
        n = q[i]
        labels.append(q[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    return ".".join(labels), i + 1


def dns_answer(q):
    name, end = dns_name(q)
    qtype = int.from_bytes(q[end:end + 2], "big") if len(q) >= end + 2 else 1
    if name.endswith("exfil.attacker.test"):
        label = name.split(".")[0].upper()
        try:
            text = base64.b32decode(label + "=" * (-len(label) % 8)).decode("utf-8", "replace")
            say(f"[attacker] DNS exfiltration: the label {label[:24]}... decodes to {text!r}")
        except ValueError:
            say(f"[attacker] DNS query {name}")
    hdr = q[:2] + b"\x81\x80" + q[4:6] + (b"\x00\x01" if qtype == 1 else b"\x00\x00") + b"\x00\x00\x00\x00"
    body = q[12:end + 4]
    if qtype == 1:  # A: everything lives on loopback here
        body += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x05\x00\x04" + bytes([127, 0, 0, 1])
    return hdr + body


def dns_udp(sock):
    sock.settimeout(1)
    while time.monotonic() < DEADLINE:
        try:
            q, addr = sock.recvfrom(512)
        except socket.timeout:
            continue
        except OSError:
            return
        if len(q) > 12:
            sock.sendto(dns_answer(q), addr)


def dns_tcp(sock):
    sock.settimeout(1)
    while time.monotonic() < DEADLINE:
        try:
            conn, _ = sock.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        conn.settimeout(3)
        try:
            n = int.from_bytes(conn.recv(2), "big")
            q = conn.recv(min(n, 512))
            a = dns_answer(q)
            conn.sendall(len(a).to_bytes(2, "big") + a)
        except OSError:
            pass
        conn.close()


def udp_sink(sock):
    sock.settimeout(1)
    while time.monotonic() < DEADLINE:
        try:
            data, addr = sock.recvfrom(2048)
        except socket.timeout:
            continue
        except OSError:
            return
        say(f"[attacker] UDP datagram to port 9999: received {loot_summary(data)}")
        sock.sendto(b"K", addr)


def listen(family, kind, port):
    s = socket.socket(family, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    if kind == socket.SOCK_STREAM:
        s.listen(16)
    return s


def isolated():
    with open("/proc/net/dev") as f:
        names = [l.split(":")[0].strip() for l in f.readlines()[2:]]
    return all(n == "lo" for n in names)


def unenforced(d, skill, home):
    if not isolated():
        sys.exit("world.py: refusing to run the unenforced skill outside an isolated network "
                 "namespace")
    sh = lambda *a: subprocess.run(list(a), check=True, capture_output=True, timeout=10)
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo")
    subprocess.run(["ip", "-6", "route", "add", "local", "::/0", "dev", "lo"],
                   capture_output=True, timeout=10)  # no IPv6 on the host: nothing to route
    ctx = tls_context(d)
    ca = os.path.join(d, "ca.pem")
    if os.path.realpath(skill).startswith("/tmp/") or os.path.realpath(home).startswith("/tmp/"):
        sys.exit("world.py: the workspace must not be under /tmp (a private /tmp hides it)")
    sh("mount", "-t", "tmpfs", "-o", "size=16m", "demo-tmp", "/tmp")
    threads = [
        (https_server, (listen(socket.AF_INET, socket.SOCK_STREAM, 443), ctx)),
        (dns_udp, (listen(socket.AF_INET, socket.SOCK_DGRAM, 53),)),
        (dns_tcp, (listen(socket.AF_INET, socket.SOCK_STREAM, 53),)),
        (udp_sink, (listen(socket.AF_INET, socket.SOCK_DGRAM, 9999),)),
    ]
    try:
        threads.append((plain_tcp_server, (listen(socket.AF_INET6, socket.SOCK_STREAM, 443),
                                           "[2001:db8::7]:443")))
    except OSError:
        pass
    for fn, args in threads:
        threading.Thread(target=fn, args=args, daemon=True).start()
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
           "SSL_CERT_FILE": ca,
           "WEATHER_API_KEY": "demo-weather-key",
           "AWS_ACCESS_KEY_ID": "AKIADEMOFAKE0000KEY",
           "AWS_SECRET_ACCESS_KEY": "demo/fake/secret/wJalrXUtnFEMI",
           "GITHUB_TOKEN": "ghp_DEMOfakeTOKENnotREAL000000000000",
           "SKILL_INPUT": '{"city": "Oslo"}', "PYTHONUNBUFFERED": "1"}
    say("[world] no sandbox: the skill sees your (fake) environment and home folder")
    p = subprocess.Popen(["python3", os.path.join(skill, "main.py")], cwd=skill, env=env,
                         stdin=subprocess.DEVNULL)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
    time.sleep(0.3)  # the stand-ins log what the last connections sent
    say(f"[world] the skill exited with {p.returncode}; everything above went to the "
        "attacker's stand-in")


def api(d, port_file):
    ctx = tls_context(d)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    threading.Thread(target=https_server, args=(s, ctx), daemon=True).start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(tmp, port_file)
    while time.monotonic() < DEADLINE and sys.stdin.read(1):
        pass


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "ca":
        make_ca(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "unenforced":
        unenforced(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "api":
        api(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
