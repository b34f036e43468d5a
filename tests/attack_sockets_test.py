#!/usr/bin/env python3
"""Attack tests for issue 34, item 2: a host unix socket is reached only on
purpose, and decided on the object, never on its name.

- A socket declared in permissions.unix_sockets is pinned by device and
  inode when the run is planned; the broker connects to it (a
  host_socket_connected event and an audit record), also when the skill
  reaches the same inode through a symlink of its own.
- Any other host socket, by whatever path, is a Connect request: denied
  under --prompt deny (EACCES, a syscall_blocked event, an audit record),
  allowed by a --policy rule Connect(/path), refused outright when
  allowed-tools does not list Connect.

Each test runs as root and as an unprivileged user, through sandbox_test.py's
harness, and starts the daemons it needs in folders of the mode's user.
Nothing leaves the machine: every socket is a local unix socket.

Usage: attack_sockets_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import shutil
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)


owner_only_dir = h.owner_only_dir


class Daemon:
    """A daemon of the mode's user: a listening unix socket in a 0700 folder
    that greets every client with its name, the way tmux or an ssh agent
    keeps its socket. Counts the connections it accepted."""

    def __init__(self, m, folder, name, mode=0o666):
        self.name = name
        self.path = os.path.join(folder, f"{name}.sock")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.bind(self.path)
        if h.IS_ROOT:
            os.chown(self.path, m.uid, m.uid)
        # connectable by the skill's own uid (the folder is still 0700)
        os.chmod(self.path, mode)
        self.s.listen(16)
        self.s.settimeout(0.2)
        self.accepted = 0
        self.peers = []  # the uids the daemon saw (SO_PEERCRED)
        self.stop = False
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self):
        for _ in range(100000):  # bounded: 0.2 s a turn, the test ends first
            if self.stop:
                return
            try:
                c, _ = self.s.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            cred = c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            self.peers.append(struct.unpack("3i", cred)[1])
            try:
                c.sendall(f"HELLO-{self.name}\n".encode())
            except OSError:
                pass
            c.close()

    def close(self):
        if self.stop:
            return
        self.stop = True
        self.t.join(timeout=2)
        self.s.close()


# The skill tries each (label, path, symlink) and prints what it got: a
# symlink of its own in its private /tmp leads to path when given.
CONNECT = """
    import os, socket
    for label, path, link in {tries!r}:
        if link:
            os.symlink(path, link)
            path = link
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(path)
            print(label, "GOT", s.recv(64).decode().strip())
        except OSError as e:
            print(label, "refused", e.errno)
    """


def audit_records(m):
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    if not os.path.exists(log):
        return []
    return [json.loads(l) for l in open(log) if l.strip()]


def connect_decisions(m, skill):
    """The Connect decisions of one skill's runs (the mode's audit log is
    shared by every test)."""
    return [r for r in audit_records(m) if r.get("type") == "decision" and
            r.get("tool") == "Connect" and r.get("skill") == skill]


def events(m, kind):
    return [e for e in m.last_trace()["events"] if e["kind"] == kind]


def refused(m, path):
    return [e for e in events(m, "syscall_blocked")
            if e.get("data", {}).get("syscall") == "connect"
            and e.get("data", {}).get("path") == path]


class Setup:
    """Two daemons of the mode's user: A in one owner-only folder (declared
    or not, by the test), B in another that the skill may read (so B's
    socket is in its view, as in a declared read of /run)."""

    def __init__(self, m, base, tag):
        pid = os.getpid()
        self.fa = owner_only_dir(m, f"/tmp/sgsock-a-{tag}-{m.name}-{pid}")
        self.fb = owner_only_dir(m, f"/tmp/sgsock-b-{tag}-{m.name}-{pid}")
        self.a = Daemon(m, self.fa, "A")
        self.b = Daemon(m, self.fb, "B")

    def close(self):
        self.a.close()
        self.b.close()
        shutil.rmtree(self.fa, ignore_errors=True)
        shutil.rmtree(self.fb, ignore_errors=True)


@test()
def a_declared_socket_is_reached_by_its_inode_and_recorded(m, base):
    st = Setup(m, base, "decl")
    try:
        tries = [("declared", st.a.path, None),
                 ("viasymlink", st.a.path, "/tmp/to-a"),
                 ("other", st.b.path, None),
                 ("othersymlink", st.b.path, "/tmp/to-b")]
        d = h.make_skill(base, f"sock-decl-{m.name}", CONNECT.format(tries=tries),
                         tools="Read Connect",
                         yaml_extra=("permissions:\n"
                                     f"  unix_sockets: [{st.a.path}]\n"
                                     f"  filesystem:\n    read: [{st.fb}]\n"))
        p = m.run("run", d, "--prompt", "deny", check=0)
        assert "declared GOT HELLO-A" in p.out, p.out
        assert "viasymlink GOT HELLO-A" in p.out, p.out
        # another socket, by its own path or a symlink: never the declared one's grant
        assert "other refused 13" in p.out, p.out
        assert "othersymlink refused 13" in p.out, p.out
        assert st.a.accepted == 2 and st.b.accepted == 0, (st.a.accepted, st.b.accepted)
        # reached as the skill, never as the broker: the daemon sees the
        # skill's uid (nobody when skillgate runs as root), never root
        assert st.a.peers and all(u == h.NOBODY for u in st.a.peers), st.a.peers
        conn = events(m, "host_socket_connected")
        assert len(conn) == 2, conn
        assert all(e["data"]["declared"] and e["data"]["path"] == st.a.path for e in conn), conn
        assert {e["data"]["requested"] for e in conn} == {st.a.path, "/tmp/to-a"}, conn
        assert refused(m, st.b.path) and refused(m, "/tmp/to-b"), events(m, "syscall_blocked")
        recs = connect_decisions(m, f"sock-decl-{m.name}")
        allow = [r for r in recs if r["decision"] == "allow"]
        deny = [r for r in recs if r["decision"] == "deny"]
        assert allow and allow[0]["request"] == f"Connect({st.a.path})", recs
        assert allow[0]["decided_by"].startswith("declared in the manifest"), allow
        assert deny and deny[0]["request"] == f"Connect({st.b.path})", recs
        # the dry run and inspect show it, as high risk
        dry = m.run("run", d, "--dry-run", check=0)
        assert st.a.path in dry.out and "HIGH" in dry.out, dry.out
        ins = m.run("inspect", d, check=0)
        assert "Host unix sockets" in ins.out and st.a.path in ins.out, ins.out
        assert "[HIGH]" in ins.out or "HIGH" in ins.out, ins.out
    finally:
        st.close()


@test()
def an_undeclared_socket_is_denied_with_a_record(m, base):
    st = Setup(m, base, "deny")
    try:
        tries = [("plain", st.b.path, None)]
        d = h.make_skill(base, f"sock-deny-{m.name}", CONNECT.format(tries=tries),
                         tools="Read Connect",
                         yaml_extra=f"permissions:\n  filesystem:\n    read: [{st.fb}]\n")
        p = m.run("run", d, "--prompt", "deny", check=0)
        assert "plain refused 13" in p.out, p.out
        assert st.b.accepted == 0
        assert refused(m, st.b.path), events(m, "syscall_blocked")
        assert not events(m, "host_socket_connected")
        recs = connect_decisions(m, f"sock-deny-{m.name}")
        assert [r for r in recs if r["decision"] == "deny" and r["decided_by"] == "deny-all"
                and r["request"] == f"Connect({st.b.path})"], recs
        # allowed-tools without Connect: refused outright, never asked
        d2 = h.make_skill(base, f"sock-notool-{m.name}", CONNECT.format(tries=tries),
                          yaml_extra=f"permissions:\n  filesystem:\n    read: [{st.fb}]\n")
        p = m.run("run", d2, "--prompt", "deny", check=0)
        assert "plain refused 13" in p.out, p.out
        recs = connect_decisions(m, f"sock-notool-{m.name}")
        assert [r for r in recs if r["decided_by"] == "allowed-tools: Connect is not in it"], recs
        assert st.b.accepted == 0
    finally:
        st.close()


@test()
def a_connect_rule_allows_that_socket_only(m, base):
    st = Setup(m, base, "rule")
    try:
        tries = [("ruled", st.b.path, None),
                 ("ruledsymlink", st.b.path, "/tmp/to-b")]
        d = h.make_skill(base, f"sock-rule-{m.name}", CONNECT.format(tries=tries),
                         tools="Read Connect",
                         yaml_extra=f"permissions:\n  filesystem:\n    read: [{st.fb}]\n")
        pol = os.path.join(base, f"policy-{m.name}.yaml")
        with open(pol, "w") as f:
            f.write(f"allow:\n  - Connect({st.b.path})\n")
        os.chmod(pol, 0o644)
        p = m.run("run", d, "--policy", pol, check=0)
        assert "ruled GOT HELLO-B" in p.out, p.out
        # the rule is decided on the object's own path: a symlink to it is it
        assert "ruledsymlink GOT HELLO-B" in p.out, p.out
        conn = events(m, "host_socket_connected")
        assert len(conn) == 2 and not any(e["data"]["declared"] for e in conn), conn
        recs = [r for r in connect_decisions(m, f"sock-rule-{m.name}") if r["decision"] == "allow"]
        assert recs and recs[0]["decided_by"].startswith("rule Connect("), recs
        # the same rule does not reach another socket
        other = Daemon(m, st.fb, "C")
        try:
            d2 = h.make_skill(base, f"sock-rule2-{m.name}",
                              CONNECT.format(tries=[("unruled", other.path, None)]),
                              tools="Read Connect",
                              yaml_extra=f"permissions:\n  filesystem:\n    read: [{st.fb}]\n")
            p = m.run("run", d2, "--policy", pol, check=0)
            assert "unruled refused 13" in p.out, p.out
            assert other.accepted == 0
        finally:
            other.close()
    finally:
        st.close()


@test()
def a_socket_put_at_the_declared_path_after_planning_is_not_the_declared_one(m, base):
    # The folder is readable too, so the skill sees whatever is at the path
    # now (not the one socket file a bind of its own pins): the declared
    # path is replaced by another socket during the run, and the broker
    # compares inodes, not paths. (Unpinned, the new socket got the freed
    # inode's number: the plan holds the declared socket open for that.)
    folder = owner_only_dir(m, f"/tmp/sgsock-swap-{m.name}-{os.getpid()}")
    os.chmod(folder, 0o711)  # the skill (nobody, under root) looks for the marker by name
    dmn = Daemon(m, folder, "A")
    marker = os.path.join(folder, "replaced")
    fresh = None
    try:
        d = h.make_skill(base, f"sock-swap-{m.name}", f"""
            import os, socket, time
            def once(label):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(5)
                try:
                    s.connect({dmn.path!r})
                    print(label, "GOT", s.recv(64).decode().strip(), flush=True)
                except OSError as e:
                    print(label, "refused", e.errno, flush=True)
            once("first")
            for _ in range(200):  # at most 20 s for the test to swap it
                if os.path.exists({marker!r}):
                    break
                time.sleep(0.1)
            once("after")
            """, tools="Read Connect",
            yaml_extra=("permissions:\n"
                        f"  unix_sockets: [{dmn.path}]\n"
                        f"  filesystem:\n    read: [{folder}]\n"))

        def swap():
            nonlocal fresh
            for _ in range(400):  # bounded: 20 s
                if dmn.accepted:
                    break
                threading.Event().wait(0.05)
            dmn.close()
            os.unlink(dmn.path)
            fresh = Daemon(m, folder, "A")  # same path, another inode
            with open(marker, "w") as f:
                f.write("x")
            os.chmod(marker, 0o644)
        t = threading.Thread(target=swap, daemon=True)
        t.start()
        p = m.run("run", d, "--prompt", "deny", check=0)
        t.join(timeout=25)
        assert "first GOT HELLO-A" in p.out, p.out
        assert "after refused 13" in p.out, p.out
        assert fresh is not None and fresh.accepted == 0, "the socket put there later was reached"
        assert refused(m, dmn.path), events(m, "syscall_blocked")
    finally:
        dmn.close()
        if fresh:
            fresh.close()
        shutil.rmtree(folder, ignore_errors=True)


@test()
def a_declared_path_that_is_no_socket_refuses_the_run(m, base):
    folder = owner_only_dir(m, f"/tmp/sgsock-file-{m.name}-{os.getpid()}")
    try:
        plain = os.path.join(folder, "not-a-socket")
        with open(plain, "w") as f:
            f.write("x")
        if h.IS_ROOT:
            os.chown(plain, m.uid, m.uid)
        d = h.make_skill(base, f"sock-file-{m.name}", "print('RAN')",
                         yaml_extra=f"permissions:\n  unix_sockets: [{plain}]\n")
        p = m.run("run", d)
        assert p.returncode != 0 and "RAN" not in p.out, (p.returncode, p.out)
        assert "not a unix socket" in p.out + p.err, p.out + p.err
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@test(modes=("root",))
def a_declared_socket_lends_the_skill_no_privilege(m, base):
    # as root the broker once connected with its own credentials: a
    # root-only socket (0600) was reached by a skill running as nobody, and
    # the daemon saw uid 0 (the system bus would take it for root)
    folder = owner_only_dir(m, f"/tmp/sgsock-root-{os.getpid()}")
    root_only = Daemon(m, folder, "R", mode=0o600)
    try:
        tries = [("rootonly", root_only.path, None)]
        d = h.make_skill(base, "sock-rootonly", CONNECT.format(tries=tries),
                         tools="Read Connect",
                         yaml_extra=f"permissions:\n  unix_sockets: [{root_only.path}]\n")
        p = m.run("run", d, "--prompt", "deny", check=0)
        assert "rootonly refused 13" in p.out, p.out
        time.sleep(0.3)
        assert root_only.accepted == 0 and 0 not in root_only.peers, root_only.peers
    finally:
        root_only.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
