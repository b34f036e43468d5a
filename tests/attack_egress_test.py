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


def tagged_server():
    """A loopback upstream: a connection says b"\\x01" and a tag byte and
    a size; it gets that many bytes of the tag, then EOF."""
    import socket as so
    srv = so.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)

    def serve(c):
        try:
            head = b""
            while not head.endswith(b"\n"):
                k = c.recv(64)
                if not k:
                    return
                head += k
            tag, size = head[1:2], int(head[2:-1])
            for _ in range(size >> 16):
                c.sendall(tag * 65536)
            c.sendall(tag * (size & 65535))
        except OSError:
            pass
        finally:
            c.close()

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(c,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return srv


@test()
def a_connections_bytes_never_reach_the_next(m, base):
    # The proxy keeps the pipes of closed connections for the next ones. A
    # client that walks away (RST) from a large answer leaves bytes in its
    # pipe: they must never come out of another connection. Each short
    # connection after it gets exactly its own bytes, and every connection
    # is still an allowed and a closed event.
    srv = tagged_server()
    try:
        port = srv.getsockname()[1]
        d = h.make_skill(base, f"pipes-{m.name}", """
            import socket, struct
            bad = 0
            for i in range(12):
                s = socket.create_connection(("api.weather.test", 80), timeout=5)
                s.sendall(b"\\x01B4194304\\n")
                s.recv(1000)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()  # walks away: the rest is reset, never read
                tag = bytes([ord("a") + i])
                s = socket.create_connection(("api.weather.test", 80), timeout=5)
                s.sendall(b"\\x01" + tag + b"3000\\n")
                got = b""
                while True:
                    k = s.recv(65536)
                    if not k:
                        break
                    got += k
                s.close()
                if got != tag * 3000:
                    bad += 1
                    print("wrong", i, len(got), sorted(set(got)))
            print("bad", bad)
            """, tools="Fetch", yaml_extra=EGRESS_80)
        p = m.run("run", "--json", "--resolve", f"api.weather.test:80:127.0.0.1:{port}", d,
                  timeout=60, check=0)
        out = "\n".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
        assert "bad 0" in out, out
        evs = m.events(p)
        # alike events in a row are said once, then counted on a line of
        # their own ("repeated N more times", data.repeated)
        times = lambda es: sum((e.get("data") or {}).get("repeated", 1) for e in es)
        kind = lambda k: [e for e in evs if e["kind"] == k]
        assert times(kind("network_egress_allowed")) == 24, kind("network_egress_allowed")
        # the counted line is the event again: its own data, with the count
        # (it said only the count, and a refusal's reason went missing)
        said = [e for e in kind("network_egress_allowed") if "repeated" in (e["data"] or {})]
        assert said and all(e["data"]["name"] == "api.weather.test" and
                            e["data"]["allowed_by"] for e in said), said
        assert times(kind("network_connection_closed")) == 24, kind("network_connection_closed")
        small = [e for e in kind("network_connection_closed") if " 3000 down" in e["message"]]
        assert times(small) == 12, small
    finally:
        srv.close()


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


@test()
def an_address_of_this_machine_is_no_way_to_the_host(m, base):
    """A declared domain: "192.0.2.2", an address of this machine outside
    every refused range, reached a host service bound to every address
    under --prompt deny, and validate said valid (issue 50, item 4). Many
    hosts have a public v4 or a global v6 address. The proxy asks the
    kernel's routes at each connect: an address it routes locally is
    refused like loopback, declared as a literal (v4 or v6) or reached by
    a name that resolves to it, and recorded; --allow-upstream ADDR lets
    one through; validate warns. The "host" is a network namespace the test
    makes (tests/resolve_world.py), whose loopback holds 192.0.2.2 and
    2001:db8::2 and whose resolver answers local.test with 192.0.2.2; its
    HTTP server listens on 0.0.0.0 and :: (port 8080). skillgate runs
    there as the mode's user: this machine's own network is not touched."""
    if not h.IS_ROOT:
        raise h.Skip("the test's network namespace needs root")
    d = h.make_skill(base, f"ownaddr-{m.name}", """
        import urllib.request
        for url in ("http://192.0.2.2:8080/literal-v4", "http://[2001:db8::2]:8080/literal-v6",
                    "http://local.test:8080/by-name"):
            try:
                print(url, urllib.request.urlopen(url, timeout=5).status, flush=True)
            except Exception as e:
                print(url, "failed", type(e).__name__, flush=True)
        """, tools="Fetch", yaml_extra=(
            "permissions:\n  network:\n    egress:\n"
            '      - {domain: "192.0.2.2", ports: [8080]}\n'
            '      - {domain: "2001:db8::2", ports: [8080]}\n'
            "      - {domain: local.test, ports: [8080]}\n"))
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
           "LANG": "C.UTF-8"}
    sg = [h.SG] if m.uid == 0 else ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}",
                                    "--clear-groups", h.SG]
    world = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resolve_world.py")
    p = subprocess.run(["unshare", "-n", "-m", sys.executable, world, "local.test=192.0.2.2",
                        os.path.join(base, "resolv.conf"), "--local", "192.0.2.2",
                        "--local", "2001:db8::2",
                        "--", *sg, "validate", d,
                        "--", *sg, "run", "--json", "--allow-upstream", "192.0.2.2", d,
                        "--", *sg, "run", "--json", "--prompt", "deny", d],
                       capture_output=True, text=True, env=env, timeout=240, cwd="/")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    valid, allowed, denied = res["runs"]
    for lit in ("192.0.2.2", "2001:db8::2"):
        assert f"{lit} is an address of this machine" in valid["err"] and \
            f"--allow-upstream {lit}" in valid["err"], (lit, valid["err"])
    # the person's word lets 192.0.2.2 through, by its literal and by name;
    # 2001:db8::2 is still refused
    out = "\n".join(e["message"] for e in m.events(types.SimpleNamespace(out=allowed["out"]))
                    if e["kind"] == "stdout")
    assert "http://192.0.2.2:8080/literal-v4 200" in out, (out, allowed["err"][-2000:])
    assert "http://local.test:8080/by-name 200" in out, out
    assert "http://[2001:db8::2]:8080/literal-v6 failed" in out, out
    assert sorted(a["path"] for a in res["asked"]) == ["/by-name", "/literal-v4"], res["asked"]
    # without it nothing reaches the host's service, and each refusal is
    # said, in the stream and in the trace
    out = "\n".join(e["message"] for e in m.events(types.SimpleNamespace(out=denied["out"]))
                    if e["kind"] == "stdout")
    for url in ("http://192.0.2.2:8080/literal-v4", "http://[2001:db8::2]:8080/literal-v6",
                "http://local.test:8080/by-name"):
        assert f"{url} failed" in out, (url, out)
    streamed = [e for e in m.events(types.SimpleNamespace(out=denied["out"]))
                if e["kind"] == "network_egress_blocked"]
    traced = [e for e in m.last_trace()["events"] if e["kind"] == "network_egress_blocked"]
    for evs in (streamed, traced):
        reasons = [e["data"]["reason"] for e in evs]
        for want in ("192.0.2.2 is an address of this machine",
                     "2001:db8::2 is an address of this machine",
                     "local.test resolves to 192.0.2.2, an address of this machine"):
            assert any(want in r for r in reasons), (want, reasons)
        assert all("--allow-upstream" in r for r in reasons), reasons


# ---- a page a skill serves for the person (issue 36, item 9) ----

SERVE = """
    import os, runpy, sys, threading
    os.makedirs("/tmp/site", exist_ok=True)
    with open("/tmp/site/index.html", "w") as f:
        f.write("PUBLISHED-PAGE-%s\\n")

    class Log:  # http.server logs each request here; GET /stop ends the run
        def write(self, s):
            sys.__stderr__.write(s)
            sys.__stderr__.flush()
            if '"GET /stop' in s:
                os._exit(0)

        def flush(self):
            pass

    sys.stderr = Log()
    threading.Timer(40, lambda: os._exit(3)).start()
    # python3 -m http.server PORT, as skill-creator's viewer serves: bound to
    # every address of the sandbox, so it looks its own host name up
    sys.argv = ["http.server", "%d", "--directory", "/tmp/site"]
    runpy.run_module("http.server", run_name="__main__")
    """


def free_port(lo=20000, hi=32000):
    """A port below the kernel's ephemeral range (32768-60999) that nothing
    on this machine holds now: bound once, to check."""
    import random
    rng = random.Random(os.getpid() ^ int(time.monotonic() * 1000))
    for _ in range(50):
        port = rng.randrange(lo, hi)
        s = h.socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise h.Skip("no free port between 20000 and 32000")


def connects(addr, port):
    s = h.socket.socket(h.socket.AF_INET6 if ":" in addr else h.socket.AF_INET)
    s.settimeout(1)
    try:
        s.connect((addr, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def listening(port):
    """Does anything listen on port in this (the host's) network namespace?"""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(name).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 3 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def host_addresses():
    """This machine's own non-loopback IPv4 addresses (no packet is sent: a
    UDP connect to a documentation address only picks a source)."""
    out = set()
    try:
        r = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                           timeout=5)
        for line in r.stdout.splitlines():
            f = line.split()
            if "inet" in f:
                a = f[f.index("inet") + 1].split("/")[0]
                if not a.startswith("127."):
                    out.add(a)
    except (OSError, subprocess.SubprocessError):
        pass
    u = h.socket.socket(h.socket.AF_INET, h.socket.SOCK_DGRAM)
    try:
        u.connect(("192.0.2.1", 9))
        a = u.getsockname()[0]
        if not a.startswith("127.") and a != "0.0.0.0":
            out.add(a)
    except OSError:
        pass
    finally:
        u.close()
    return sorted(out)


def start_run(m, *args):
    """skillgate in the background, as the mode's user (Mode.run waits); its
    stdout read as it comes, for published()."""
    import threading
    e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state, "LANG": "C.UTF-8"}
    cmd = [h.SG, *args]
    if h.IS_ROOT and m.uid != 0:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, cwd="/")
    proc.got, proc.goterr = [], []
    proc.readers = [threading.Thread(target=lambda f=f, b=b: b.extend(iter(f.read1, b"")),
                                     daemon=True)
                    for f, b in ((proc.stdout, proc.got), (proc.stderr, proc.goterr))]
    for t in proc.readers:
        t.start()
    return proc


def published(proc, port, seconds=20.0):
    """This machine's port the skill's port went to, as its port_published
    event says (data.host_port; where an event has none, the skill's own
    number), or None once a port_not_published event says it went nowhere,
    the run ended, or seconds passed."""
    end = time.monotonic() + seconds
    while True:
        for line in b"".join(list(proc.got)).decode("utf-8", "replace").splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e["kind"] == "port_published" and e["data"]["port"] == port:
                return e["data"].get("host_port", port)
            if e["kind"] == "port_not_published" and e["data"]["port"] == port:
                return None
        if time.monotonic() >= end or proc.poll() is not None:
            return None
        time.sleep(0.1)


def finish_run(proc, timeout=45):
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for t in proc.readers:
        t.join(timeout=5)
    out, err = b"".join(proc.got), b"".join(proc.goterr)
    if proc.returncode == -9:
        raise AssertionError("skillgate did not end: " + err.decode("utf-8", "replace")[-2000:])
    return types.SimpleNamespace(out=out.decode("utf-8", "replace"),
                                 err=err.decode("utf-8", "replace"), returncode=proc.returncode)


def http_get(port, path, deadline):
    """GET http://127.0.0.1:port/path, retried until deadline (the skill is
    still starting): the body, or None."""
    import urllib.request
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                return r.read().decode()
        except Exception:  # noqa: BLE001 - refused or reset while it starts
            time.sleep(0.2)
    return None


def stop_serving(port):
    """GET /stop once: the skill's server ends the run as it logs it."""
    import urllib.request
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/stop", timeout=5).read()
    except Exception:  # noqa: BLE001 - the server exits before it answers
        pass


@test()
def a_declared_port_is_published_on_the_hosts_loopback_only(m, base):
    """permissions.network.listen: [P] and `python3 -m http.server P`: the
    page answers on this machine's 127.0.0.1, at a port H the kernel picks
    (as docker -p 127.0.0.1::P; issue 50: never P itself), not on its other
    addresses, the run's events say so, the server looking its own host
    name up asks nothing, and after the run nothing listens."""
    port = free_port()
    token = f"{m.name}-{port}"
    d = h.make_skill(base, f"serve-{m.name}", SERVE % (token, port), tools="Read",
                     yaml_extra=f"permissions:\n  network:\n    listen: [{port}]\n")
    # what a run will publish is said before it runs
    ins = m.run("inspect", d, check=0)
    assert f"the skill's :{port}  <- skillsandbox.yaml" in ins.out, ins.out
    js = json.loads(m.run("inspect", "--json", d, check=0).out)
    assert [x["port"] for x in js["network"]["listen"]] == [port], js["network"]
    dry = m.run("run", "--dry-run", d, check=0)
    assert f"127.0.0.1:(a port the kernel picks) -> the skill's port {port}\n" in dry.out, dry.out
    proc = start_run(m, "run", "--json", "--prompt", "deny", d)
    hp = None
    try:
        hp = published(proc, port)
        assert hp and hp != port, ("published at", hp)
        body = http_get(hp, "/index.html", time.monotonic() + 20)
        assert body == f"PUBLISHED-PAGE-{token}\n", body
        others = host_addresses()
        for a in others:
            assert not connects(a, hp), f"the page answers on {a}:{hp} too"
        if not others:
            print("# no non-loopback address here: only 127.0.0.1 was checked")
        stop_serving(hp)
    finally:
        p = finish_run(proc)
    assert p.returncode == 0, (p.returncode, p.err[-2000:])
    assert not listening(hp) and not connects("127.0.0.1", hp), "still published after the run"
    evs = m.events(p)
    pub = [e for e in evs if e["kind"] == "port_published"]
    assert len(pub) == 1 and pub[0]["data"]["port"] == port, pub
    assert pub[0]["data"]["host_port"] == hp and pub[0]["data"]["url"] == f"http://127.0.0.1:{hp}/"
    assert pub[0]["data"]["address"] == "127.0.0.1" and pub[0]["data"]["declared"], pub
    inbound = [e for e in evs if e["kind"] == "inbound"]
    assert inbound and all(e["data"]["peer"].startswith("127.0.0.1:") for e in inbound), inbound
    assert all(e["data"]["port"] == port and e["data"]["host_port"] == hp for e in inbound)
    assert any(e["data"]["forwarded"] for e in inbound), inbound
    # http.server looked up the sandbox's own name: answered, never asked
    assert not [e for e in evs if e["kind"] in ("permission_asked", "permission_decided",
                                                "dns_blocked", "port_not_published")], evs
    own = [e for e in evs if e["kind"] == "dns_resolution" and e["data"].get("local")]
    assert any(e["data"]["name"] == "skillgate" for e in own), own
    traced = [e["kind"] for e in m.last_trace()["events"]]
    assert "port_published" in traced and "inbound" in traced, traced


@test()
def an_undeclared_listen_is_not_published_when_refused(m, base):
    """A skill that listens on a port it did not declare keeps it for its own
    use inside the sandbox (webapp-testing drives its own server); whether
    to publish it is asked, and under --prompt deny the port is refused with
    an event naming it, and the host's loopback never answers there."""
    port = free_port()
    d = h.make_skill(base, f"listen-{m.name}", f"""
        import socket, time
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", {port}))
        s.listen(4)
        c = socket.create_connection(("127.0.0.1", {port}), timeout=3)
        a, _ = s.accept()
        c.sendall(b"own-use-ok")
        print(a.recv(20).decode(), flush=True)
        time.sleep(2.5)
        print("done", flush=True)
        """, tools="Read Fetch")
    proc = start_run(m, "run", "--json", "--prompt", "deny", d)
    try:
        reached = False
        end = time.monotonic() + 2
        while time.monotonic() < end and proc.poll() is None:
            reached |= connects("127.0.0.1", port)
            time.sleep(0.2)
    finally:
        p = finish_run(proc)
    assert not reached, "an undeclared port answered on the host's loopback"
    outs = [e["message"] for e in m.events(p) if e["kind"] == "stdout"]
    assert outs == ["own-use-ok", "done"], (outs, p.err[-2000:])
    evs = m.events(p)
    refused = [e for e in evs if e["kind"] == "port_not_published"]
    assert len(refused) == 1 and refused[0]["data"]["port"] == port, refused
    assert f"port {port} not published" in refused[0]["message"], refused
    asked = [e for e in evs if e["kind"] == "permission_decided"]
    assert any(e["data"]["request"] == f"Fetch(127.0.0.1:{port})" and
               e["data"]["decision"] == "deny" for e in asked), asked
    assert not [e for e in evs if e["kind"] == "port_published"], evs
    assert not listening(port)


@test()
def the_sandboxs_own_names_resolve_locally(m, base):
    """`getent hosts skillgate` (the sandbox's host name), localhost and a
    *.localhost name give the sandbox's loopback, with no Fetch question
    and no query sent on."""
    d = h.make_skill(base, f"names-{m.name}", """
        hostname
        getent hosts skillgate || echo "skillgate: not found"
        getent hosts localhost || echo "localhost: not found"
        getent hosts app.localhost || echo "app.localhost: not found"
        """, lang="sh")
    p = m.run("run", "--json", "--prompt", "deny", d, check=0)
    evs = m.events(p)
    outs = [e["message"] for e in evs if e["kind"] == "stdout"]
    assert outs[0] == "skillgate", outs
    for name in ("skillgate", "localhost", "app.localhost"):
        line = [o for o in outs[1:] if o.split()[-1:] == [name]]
        assert line and line[0].split()[0] in ("127.0.0.1", "::1"), (name, outs)
    assert not [e for e in evs if e["kind"] in ("dns_blocked", "permission_asked")], evs
    assert not [e for e in evs if e["kind"] == "permission_decided" and
                e["data"]["tool"] == "Fetch"], evs


@test()
def an_undeclared_listen_a_person_allows_is_published(m, base):
    """The same undeclared server, with a person there: the prompt says what
    an approval does (publish on this machine's 127.0.0.1), and once allowed
    the page answers on the host's loopback."""
    import threading
    port = free_port()
    token = f"asked-{m.name}-{port}"
    d = h.make_skill(base, f"asked-{m.name}", SERVE % (token, port), tools="Read Fetch")
    got, where = [], []

    def browse():
        end = time.monotonic() + 25
        while not where and time.monotonic() < end:
            time.sleep(0.1)
        if where:
            got.append(http_get(where[0], "/index.html", time.monotonic() + 20))
            stop_serving(where[0])

    def found(buf):  # the line that says where the page is: the browser goes there
        import re
        f = re.search(rb"the skill's :%d is at http://127\.0\.0\.1:(\d+)/" % port, buf)
        where.append(int(f.group(1)))
        return ""

    t = threading.Thread(target=browse)
    t.start()
    try:
        code, out = h.run_in_pty(m, ["run", d], [(f"127.0.0.1:{port}", "a\n"),
                                                 ("127.0.0.1 only, on a port the kernel picked",
                                                  found, 0)],
                                 timeout=45)
    finally:
        where.append(None)  # the browser stops waiting
        t.join()
    assert got == [f"PUBLISHED-PAGE-{token}\n"], (got, out[-3000:])
    assert "publishes it on this machine's 127.0.0.1, at a port the kernel picks" in out, \
        out[-3000:]
    assert code == 0, out[-3000:]
    hp = where[0]
    assert hp != port and not listening(hp)
    assert f"the skill's :{port} was at http://127.0.0.1:{hp}/ (closed with the run)" in out, \
        out[-3000:]
    evs = m.last_trace()["events"]
    pub = [e for e in evs if e["kind"] == "port_published"]
    assert len(pub) == 1 and pub[0]["data"]["port"] == port and not pub[0]["data"]["declared"], pub
    assert pub[0]["data"]["host_port"] == hp, pub


@test()
def a_declared_port_taken_on_the_host_stays_its_holders(m, base):
    """When this machine already has 127.0.0.1:P in use, the run runs, the
    skill's P is published at another port the kernel picks (its own number
    on the host is no business of the skill's: issue 50), and the other
    holder keeps P: a connection there reaches the holder."""
    port = free_port()
    holder = h.socket.socket()
    holder.bind(("127.0.0.1", port))
    holder.listen(1)
    holder.settimeout(2)
    try:
        d = h.make_skill(base, f"taken-{m.name}", f"""
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", {port}))
            s.listen(1)
            print("listening inside", flush=True)
            """, tools="Read",
            yaml_extra=f"permissions:\n  network:\n    listen: [{port}]\n")
        p = m.run("run", "--json", "--prompt", "deny", d, check=0)
        evs = m.events(p)
        assert [e["message"] for e in evs if e["kind"] == "stdout"] == ["listening inside"], evs
        assert not [e for e in evs if e["kind"] == "port_not_published"], evs
        pub = [e["data"] for e in evs if e["kind"] == "port_published"]
        assert len(pub) == 1 and pub[0]["port"] == port and pub[0]["declared"], pub
        assert pub[0]["host_port"] != port and not pub[0]["named"], pub
        c = h.socket.create_connection(("127.0.0.1", port), timeout=2)  # still the holder's
        a, _ = holder.accept()
        a.close()
        c.close()
    finally:
        holder.close()


@test()
def a_published_port_forwards_at_most_32_connections_at_once(m, base):
    """40 connections that never send, held open all along: the broker
    forwards 32 at most, the rest wait in the backlog with three page
    requests behind them. Connections that never send must not lock the
    page out: at the cap, one idle for a second gives its place to a waiting
    one, so the three 1 MiB pages arrive whole while the idle ones are still
    held. What the cap promises, not counts a client's retry changes: never
    more than 32 forwarded at once, a place given only at the cap, and each
    of this test's connections said once (forwarded, or turned away)."""
    import hashlib
    import threading
    port = free_port()
    token = f"big-{m.name}-{port}"
    d = h.make_skill(base, f"bounded-{m.name}", SERVE.replace(
        'f.write("PUBLISHED-PAGE-%s\\n")',
        'f.write("PUBLISHED-PAGE-%s\\n" + "x" * (1 << 20))') % (token, port), tools="Read",
        # a thread per connection: 45 stacks of 8 MiB and malloc's arenas,
        # under the default memory limit (no longer RLIMIT_AS, issue 52)
        yaml_extra=f"permissions:\n  network:\n    listen: [{port}]\n")
    want = hashlib.sha256((f"PUBLISHED-PAGE-{token}\n" + "x" * (1 << 20)).encode()).hexdigest()
    proc = start_run(m, "run", "--json", "--prompt", "deny", d)
    idle, got, pages = [], [], []
    ended = set()  # the idle ones that saw their connection end
    hp = None
    try:
        hp = published(proc, port)
        assert hp, "never published"
        # (retried while the skill starts: each try is one more inbound event)
        assert http_get(hp, "/index.html", time.monotonic() + 20) is not None
        for _ in range(40):
            idle.append(h.socket.create_connection(("127.0.0.1", hp), timeout=5))

        def fetch():  # one attempt each, waiting behind the cap
            try:
                c = h.socket.create_connection(("127.0.0.1", hp), timeout=30)
            except OSError as e:
                got.append(repr(e))
                return
            pages.append(c.getsockname()[1])
            try:
                c.sendall(b"GET /index.html HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                data = b""
                while len(data) < (2 << 20):
                    chunk = c.recv(1 << 16)
                    if not chunk:
                        break
                    data += chunk
                got.append(hashlib.sha256(data.partition(b"\r\n\r\n")[2]).hexdigest())
            except OSError as e:
                got.append(repr(e))
            finally:
                c.close()

        ts = [threading.Thread(target=fetch) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(40)
        for c in idle:
            c.settimeout(0.2)
            try:
                if c.recv(1) == b"":
                    ended.add(c.getsockname()[1])
            except TimeoutError:
                pass
            except OSError:
                ended.add(c.getsockname()[1])
        idle_ports = {c.getsockname()[1] for c in idle}
        for c in idle:  # the stop below then finds a place free
            c.close()
        stop_serving(hp)
    finally:
        for c in idle:
            c.close()
        p = finish_run(proc)
    assert got == [want] * 3, got
    evs = m.events(p)
    inbound = [e for e in evs if e["kind"] == "inbound"]
    assert all(e["data"]["peer"].startswith("127.0.0.1:") for e in inbound), inbound
    said = {}
    for e in inbound:
        if e["data"]["peer"]:
            said.setdefault(int(e["data"]["peer"].rsplit(":", 1)[1]), []).append(e["data"])
    assert all(len(v) == 1 for v in said.values()), \
        [v for v in said.values() if len(v) > 1]  # one event a connection
    # every connection of this test's accounted for: said, or counted away
    turned = sum(e["data"].get("turned_away", 0) for e in inbound)
    unsaid = [q for q in idle_ports | set(pages) if q not in said]
    assert len(unsaid) <= turned, (unsaid, turned)
    assert all(said[q][0]["forwarded"] for q in pages), [said.get(q) for q in pages]
    live = most = 0
    for e in evs:
        if e["kind"] == "inbound" and e["data"]["forwarded"]:
            live += 1
        elif e["kind"] == "network_connection_closed" and \
                e["data"].get("direction") == "inbound":
            live -= 1
        most = max(most, live)
    assert most <= 32, f"BREAK: {most} connections forwarded at once"
    gave_way = [e for e in evs if e["kind"] == "network_connection_closed"
                and e["data"].get("reason", "").startswith("idle")]
    # an idle connection gives its place only when all 32 are taken: some
    # did (for the eight from the backlog and the three pages), each one
    # that never sent a byte, and each saw its connection end
    assert gave_way, "no idle connection gave its place"
    gave = {int(e["data"]["name"].rsplit(":", 1)[1]) for e in gave_way}
    assert gave <= idle_ports, (gave, idle_ports)
    assert gave <= ended, (gave - ended)
    assert not listening(hp)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
