#!/usr/bin/env python3
"""Attack tests for the egress proxy's plain-HTTP checks (issue 14, item 3:
domain fronting over plain HTTP). A skill declares api.weather.test:80 and
then tries to make the upstream serve another host on that connection: two
Host headers, a space before the colon, an absolute-form target, a second
pipelined request, X-Forwarded-Host and Forwarded, Content-Length with
Transfer-Encoding, a folded header, a head padded past the checker's cap,
a request line that stalls after its first letter, and a TLS ClientHello
split over two records or padded past 16 KiB. Each must be refused
with a `network_egress_blocked` event naming why, while the loopback
listener standing in for the upstream (made by the test, reached through
`--resolve`) never receives the other host's name; honest keep-alive
clients must still work. Uses sandbox_test.py as its harness: each test runs
as root and again as an unprivileged user. No packet leaves the machine:
every name is under .test and resolved to 127.0.0.1. Prints TAP.

Usage: attack_egress_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import subprocess
import sys
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

EGRESS_80 = "permissions:\n  network:\n    egress:\n      - {domain: api.weather.test, ports: [80]}\n"

# Each vector: a label, the bytes sent (a list: parts sent 0.3 s apart), the
# name that must never reach the upstream, and what the refusal must say.
OK = "GET /first-ok HTTP/1.1\r\nHost: api.weather.test\r\n\r\n"
VECTORS = [
    ("dup", ["GET /dup HTTP/1.1\r\nHost: api.weather.test\r\nHost: dup.evil.test\r\n\r\n"],
     "dup.evil.test", "two Host headers"),
    ("space", ["GET /space HTTP/1.1\r\nHost : space.evil.test\r\n\r\n"],
     "space.evil.test", "whitespace between the header name Host and its colon"),
    ("absolute", ["GET http://abs.evil.test/ HTTP/1.1\r\nHost: api.weather.test\r\n\r\n"],
     "abs.evil.test", "absolute-form request target (http://abs.evil.test/)"),
    ("pipelined", [OK, "GET /second HTTP/1.1\r\nHost: pipe.evil.test\r\n\r\n"],
     "pipe.evil.test", "request 2 on this connection: the HTTP Host header names pipe.evil.test"),
    ("xfh", ["GET /xfh HTTP/1.1\r\nHost: api.weather.test\r\nX-Forwarded-Host: xfh.evil.test\r\n\r\n"],
     "xfh.evil.test", "the X-Forwarded-Host header names xfh.evil.test"),
    ("forwarded", ["GET /fwd HTTP/1.1\r\nHost: api.weather.test\r\n"
                   "Forwarded: for=192.0.2.1;host=fwd.evil.test\r\n\r\n"],
     "fwd.evil.test", "the Forwarded header names fwd.evil.test"),
    ("smuggle", ["POST /cl HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                 "GET /te HTTP/1.1\r\nHost: te.evil.test\r\n\r\n"],
     "te.evil.test", "both Content-Length and Transfer-Encoding"),
    ("fold", ["GET /fold HTTP/1.1\r\nHost: api.weather.test\r\nX-A: b\r\n Host: fold.evil.test\r\n\r\n"],
     "fold.evil.test", "folded header line"),
    ("nohost", ["GET /nohost.evil.test HTTP/1.1\r\nAccept: */*\r\n\r\n"],
     "nohost.evil.test", "HTTP/1.1 request without a Host header"),
    ("padded", ["GET /pad HTTP/1.1\r\nX-Pad: " + "a" * 20000 + "\r\nHost: pad.evil.test\r\n\r\n"],
     "pad.evil.test", "a request head over 16384 bytes"),
]

SKILL = """
    import socket, sys, time
    VECTORS = %r
    for label, parts, _, _ in VECTORS:
        s = socket.create_connection(("api.weather.test", 80), timeout=3)
        try:
            for i, part in enumerate(parts):
                if i:
                    time.sleep(0.3)
                s.sendall(part.encode())
            got = s.recv(100)
            print(label, "eof" if not got else "reply", flush=True)
        except OSError as e:
            print(label, "refused", type(e).__name__, flush=True)
        s.close()
    """


def blocked_reasons(m, p):
    """The reasons of the refusals, from the trace (and the JSON stream)."""
    trace = [e for e in m.last_trace()["events"] if e["kind"] == "network_egress_blocked"]
    stream = [e for e in m.events(p) if e["kind"] == "network_egress_blocked"]
    return [e["data"]["reason"] for e in trace], [e["data"]["reason"] for e in stream]


@test()
def plain_http_fronting_is_refused_request_by_request(m, base):
    w = h.World(base)
    try:
        a = w.port("attacker")
        d = h.make_skill(base, f"front80-{m.name}", SKILL % (VECTORS,), tools="Fetch",
                         yaml_extra=EGRESS_80)
        p = m.run("run", "--json", "--resolve", f"api.weather.test:80:127.0.0.1:{a}", d,
                  timeout=120, check=0)
        out = "\n".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
        time.sleep(0.7)  # the listener reads each connection until 0.5 s of quiet
        data = bytes(w.attacker_data)
        # the proxy relays plain HTTP: the honest first request got through
        assert b"GET /first-ok HTTP/1.1" in data, (data[:300], out)
        traced, streamed = blocked_reasons(m, p)
        for label, _, evil, reason in VECTORS:
            assert evil.encode() not in data, (label, data[:2000])
            assert f"{label} reply" not in out, (label, out)
            assert any(reason in r for r in traced), (label, reason, traced)
            assert any(reason in r for r in streamed), (label, reason, streamed)
        # nothing of a refused request went up, not even its first line
        for path in (b"/dup", b"/space", b"/xfh", b"/fwd", b"/cl", b"/te", b"/fold", b"/pad",
                     b"/second"):
            assert b"GET " + path not in data and b"POST " + path not in data, (path, data[:2000])
    finally:
        w.close()


@test()
def a_stalled_request_line_never_goes_up_unchecked(m, base):
    # "G", then nothing past the checker's deadline, then the rest naming
    # another host: the bare letter may go up, the rest never does. The
    # upstream is the test's real HTTP server, which waits for a whole request.
    w = h.World(base)
    try:
        port = w.port("http")
        d = h.make_skill(base, f"stall-{m.name}", """
            import socket, time
            s = socket.create_connection(("api.weather.test", 80), timeout=3)
            s.sendall(b"G")
            time.sleep(5.8)
            try:
                s.sendall(b"ET /slow HTTP/1.1\\r\\nHost: slow.evil.test\\r\\n\\r\\n")
                print("slow", "reply" if s.recv(100) else "eof")
            except OSError as e:
                print("slow refused", type(e).__name__)
            """, tools="Fetch", yaml_extra=EGRESS_80)
        p = m.run("run", "--json", "--resolve", f"api.weather.test:80:127.0.0.1:{port}", d,
                  timeout=60, check=0)
        out = "\n".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
        time.sleep(0.3)
        assert not w.requests, w.requests  # the server never saw a whole request
        assert "slow reply" not in out, out
        traced, streamed = blocked_reasons(m, p)
        assert any("never completed" in r for r in traced), traced
        assert any("never completed" in r for r in streamed), streamed
    finally:
        w.close()


@test()
def a_split_or_padded_client_hello_is_read_whole(m, base):
    # A ClientHello split over two TLS records (legal; servers join them),
    # and one padded past the 16 KiB the proxy reads: the SNI of the first is
    # checked whole, the second is refused; an honest split hello still goes.
    w = h.World(base)
    try:
        a = w.port("attacker")
        d = h.make_skill(base, f"tlssplit-{m.name}", """
            import socket, ssl
            def hello(sni):
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                out = ssl.MemoryBIO()
                obj = ctx.wrap_bio(ssl.MemoryBIO(), out, server_hostname=sni)
                try:
                    obj.do_handshake()
                except ssl.SSLWantReadError:
                    pass
                return out.read()[5:]  # the handshake message, without its record
            def records(hs, *cuts):
                parts = [hs[a:b] for a, b in zip((0,) + cuts, cuts + (len(hs),))]
                return b"".join(b"\\x16\\x03\\x01" + len(x).to_bytes(2, "big") + x
                                for x in parts)
            def padded(hs, n):
                p = 4 + 2 + 32
                p += 1 + hs[p]
                p += 2 + int.from_bytes(hs[p:p + 2], "big")
                p += 1 + hs[p]
                ext = int.from_bytes(hs[p:p + 2], "big")
                pad = b"\\x00\\x15" + n.to_bytes(2, "big") + bytes(n)
                body = hs[4:p] + (ext + len(pad)).to_bytes(2, "big") + hs[p + 2:] + pad
                return b"\\x01" + len(body).to_bytes(3, "big") + body
            big = padded(hello("pad.evil.test"), 17000)
            for label, data in (("split", records(hello("split.evil.test"), 40)),
                                ("padded", records(big, 16000)),
                                ("honest", records(hello("api.weather.test"), 40))):
                s = socket.create_connection(("api.weather.test", 443), timeout=3)
                try:
                    s.sendall(data)
                    print(label, "reply" if s.recv(100) else "eof", flush=True)
                except OSError as e:
                    print(label, "refused", type(e).__name__, flush=True)
                s.close()
            """, tools="Fetch",
            yaml_extra=EGRESS_80.replace("[80]", "[443]"))
        p = m.run("run", "--json", "--resolve", f"api.weather.test:443:127.0.0.1:{a}", d,
                  timeout=60, check=0)
        out = "\n".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
        time.sleep(0.7)
        data = bytes(w.attacker_data)
        assert b"split.evil.test" not in data and b"pad.evil.test" not in data, (out, len(data))
        assert b"api.weather.test" in data, out  # the honest split hello went up
        traced, streamed = blocked_reasons(m, p)
        for reasons in (traced, streamed):
            assert any("TLS SNI names split.evil.test" in r for r in reasons), reasons
            assert any("ClientHello the proxy cannot read whole" in r for r in reasons), reasons
            assert len(reasons) == 2, reasons
    finally:
        w.close()


@test()
def honest_keep_alive_clients_still_work(m, base):
    # http.client on one connection: three GETs, then a chunked POST; every
    # request is checked and each reaches the real HTTP server.
    w = h.World(base)
    w.http.RequestHandlerClass.protocol_version = "HTTP/1.1"  # keep-alive (this World's own class)
    try:
        port = w.port("http")
        d = h.make_skill(base, f"keepalive-{m.name}", """
            import http.client
            c = http.client.HTTPConnection("api.weather.test", 80, timeout=5)
            for path in ("/one", "/two", "/three"):
                c.request("GET", path)
                r = c.getresponse()
                print(path, r.status, r.read().decode())
            c.request("POST", "/upload", body=iter([b"hello ", b"world"]),
                      encode_chunked=True, headers={"Transfer-Encoding": "chunked"})
            print("post", c.getresponse().status)
            """, tools="Fetch", yaml_extra=EGRESS_80)
        p = m.run("run", "--json", "--resolve", f"api.weather.test:80:127.0.0.1:{port}", d,
                  timeout=60, check=0)
        out = "\n".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
        for path in ("/one", "/two", "/three"):
            assert f'{path} 200 {{"temperature_c": 4.5' in out, out
        assert "post 501" in out, out  # the test server has no POST: it answered it
        assert [r["path"] for r in w.requests] == ["/one", "/two", "/three"], w.requests
        assert all(r["host"] == "api.weather.test" for r in w.requests), w.requests
        opened = [e for e in m.events(p) if e["kind"] == "network_egress_allowed"]
        assert len(opened) == 1, opened  # one connection carried them all
        assert not [e for e in m.events(p) if e["kind"] == "network_egress_blocked"]
    finally:
        w.close()


@test(modes=("root",))
def a_test_name_resolves_like_any_other(m, base):
    """RFC 6761 asks applications to look .test up like any other name (it is
    where developers run local services): here through a resolver of the
    test's own, in a network namespace with only loopback (tests/
    resolve_world.py), so no real resolver is ever asked. An answer in a
    loopback or private range is still refused, naming --allow-upstream;
    with it the request reaches the local service; a declared .invalid name
    never resolves. (As root: the namespaces.)"""
    d = h.make_skill(base, f"valet-{m.name}", """
        import urllib.request
        for url in ("http://valet.test:8080/valet", "http://nowhere.invalid:8080/x"):
            try:
                print(url, urllib.request.urlopen(url, timeout=5).status, flush=True)
            except Exception as e:
                print(url, "failed", type(e).__name__, flush=True)
        """, tools="Fetch", yaml_extra=(
            "permissions:\n  network:\n    egress:\n"
            "      - {domain: valet.test, ports: [8080]}\n"
            "      - {domain: nowhere.invalid, ports: [8080]}\n"))
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
           "LANG": "C.UTF-8"}
    world = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resolve_world.py")
    p = subprocess.run(["unshare", "-n", "-m", sys.executable, world, "valet.test",
                        os.path.join(base, "resolv.conf"),
                        "--", h.SG, "run", "--json", d,
                        "--", h.SG, "run", "--json", "--allow-upstream", "127.0.0.1", d],
                       capture_output=True, text=True, env=env, timeout=240)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    first, second = res["runs"]
    evs = m.events(types.SimpleNamespace(out=first["out"]))
    blocked = [e for e in evs if e["kind"] == "network_egress_blocked"]
    assert any("valet.test resolves to 127.0.0.1" in e["message"] and
               "--allow-upstream 127.0.0.1" in e["message"] for e in blocked), (blocked,
                                                                                first["err"])
    assert any("nowhere.invalid" in e["message"] and "never resolves" in e["message"]
               for e in blocked), blocked
    assert "http://valet.test:8080/valet 200" in second["out"], second["out"][-3000:]
    assert res["asked"] == [{"path": "/valet", "host": "valet.test:8080"}], res["asked"]


@test()
def a_declared_ip_literal_is_no_way_to_the_host(m, base):
    """domain: "127.0.0.1" (or ::1, 169.254.169.254) validated, and the proxy
    then connected to the host's loopback services: the skill asked the DNS
    stub for the name "127.0.0.1" and connected to the address it got. Such
    upstreams are refused however they are declared; --allow-upstream ADDR
    is the person's explicit way to allow one (issue 15, item 4)."""
    ls = h.socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    ls.settimeout(0.5)
    port = ls.getsockname()[1]
    got = []

    stop = threading.Event()

    def take():
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except OSError:
                continue
            c.settimeout(2)
            try:
                got.append(c.recv(100))
            except OSError:
                pass
            c.close()
    d = h.make_skill(base, f"literal-{m.name}", f"""
        import socket, struct
        q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
        for label in b"127.0.0.1".split(b"."):
            q += bytes([len(label)]) + label
        q += b"\\0" + struct.pack(">HH", 1, 1)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(3)
        u.sendto(q, ("192.0.2.53", 53))
        addr = socket.inet_ntoa(u.recv(512)[-4:])
        try:
            s = socket.create_connection((addr, {port}), timeout=3)
            s.sendall(b"HOST-LOOPBACK-REACHED")
            s.recv(10)
            print("sent")
        except OSError as e:
            print("refused", e.errno)
        """, yaml_extra=f'permissions:\n  network:\n    egress:\n      - domain: "127.0.0.1"\n'
                        f"        ports: [{port}]\n      - domain: \"169.254.169.254\"\n")
    v = m.run("validate", d)
    assert "127.0.0.1 is a loopback, private or metadata address" in v.err, v.err
    assert "169.254.169.254 is a loopback" in v.err and "--allow-upstream" in v.err, v.err
    t = threading.Thread(target=take)
    t.start()
    p = m.run("run", "--json", d, timeout=60)
    time.sleep(0.5)
    stop.set()
    t.join()
    assert got == [], got
    blocked = [e for e in m.events(p) if e["kind"] == "network_egress_blocked"]
    assert any("--allow-upstream 127.0.0.1" in e["message"] for e in blocked), blocked
    # the person's explicit word reaches it: the test's listener is real
    stop.clear()
    t = threading.Thread(target=take)
    t.start()
    p = m.run("run", "--allow-upstream", "127.0.0.1", d, timeout=60)
    time.sleep(0.5)
    stop.set()
    t.join()
    ls.close()
    assert got == [b"HOST-LOOPBACK-REACHED"], (got, p.out, p.err)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
