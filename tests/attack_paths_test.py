#!/usr/bin/env python3
"""Attack tests for the paths and programs a skill hands the broker in its
system calls (issue 14, items 1 and 4): dirfd-relative paths through pipes,
sockets and anonymous inodes, paths too long to resolve, and an exec whose
path another thread flips after the broker has read it. Each runs as root
and again as an unprivileged user, through sandbox_test.py's harness, and
asserts what a user sees: the broker alive, a trace and an audit record,
nothing the policy refused done. Prints TAP.

Usage: attack_paths_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import shutil
import subprocess
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)


def run_records(m):
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    return [json.loads(l) for l in open(log) if '"type":"run"' in l]


def survived(m, p, skill):
    """The broker did not crash: a normal exit, a trace and an audit record."""
    assert p.returncode in (0, 1), f"skillgate exit {p.returncode}\n{p.out[-2000:]}\n{p.err[-2000:]}"
    assert "AddressSanitizer" not in p.err and "runtime error" not in p.err, p.err[-3000:]
    t = m.last_trace()
    assert t["skill_name"] == skill and t["status"] == "completed", t.get("status")
    assert run_records(m)[-1]["skill"] == skill
    return t


# Each attack: a syscall whose path is relative to a descriptor that is not a
# folder, or that cannot be made absolute. The kernel answers ENOTDIR (or
# ENOENT); the broker must answer the same and stay up.
DIRFD_ATTACKS = r'''
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
rel = b"/".join([b"a" * 200] * 18)          # relative, 3.6 KB, 18 components
dots = b"/".join([b".."] * 1500) + b"/x"    # relative, climbs far past the root
r, w = os.pipe()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
efd = libc.eventfd(0, 0)
argv = (ctypes.c_char_p * 2)(b"x", None)
O = os.O_CREAT | os.O_WRONLY
for name, fd in (("pipe", r), ("socket", s.fileno()), ("eventfd", efd)):
    for what, path in (("rel", rel), ("dots", dots), ("short", b"x")):
        print(name, what, "openat", sc(257, fd, path, O, 0o644))       # openat
        print(name, what, "mkdirat", sc(258, fd, path, 0o755))         # mkdirat
        print(name, what, "unlinkat", sc(263, fd, path, 0))            # unlinkat
        print(name, what, "renameat", sc(264, fd, path, fd, path))     # renameat
        print(name, what, "execveat", sc(322, fd, path, argv, None, 0))  # execveat
# execveat of the descriptor itself (fexecve) and of a folder descriptor
d = os.open("/usr/bin", os.O_RDONLY | os.O_DIRECTORY)
print("dir", "rel", "execveat", sc(322, d, rel, argv, None, 0))
print("dir", "empty", "execveat", sc(322, r, b"", argv, None, 0x1000))  # AT_EMPTY_PATH
print("survived the attacks")
'''


@test()
def dirfd_relative_paths_do_not_crash_the_broker(m, base):
    for tools in ("Read Write Bash", '""'):
        name = f"dirfd-{m.name}-{'all' if tools == chr(34) * 2 else 'rwb'}"
        d = h.make_skill(base, name, DIRFD_ATTACKS, tools=tools)
        p = m.run("run", "--prompt", "deny", "--json", d, timeout=120)
        t = survived(m, p, name)
        out = "".join(e["message"] + "\n" for e in m.events(p) if e["kind"] == "stdout")
        assert "survived the attacks" in out, out + p.err[-2000:]
        # what the kernel would say: not a folder; never done
        for line in out.splitlines():
            if line.startswith(("pipe", "socket", "eventfd")):
                assert not line.endswith(" ok"), line
        assert re.search(r"pipe rel openat (Not a directory|Permission denied)", out), out
        assert t["exit_code"] == 0


# Forks a child per try; in it two threads flip the path between the
# approved /usr/bin/ls and /bin/sh while the main thread calls execve on it.
# ls given "-c CMD" fails (exit 2, nothing on stdout); sh prints SWAPPED.
FLIPPER_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
static char path[64];
static volatile int stop;
static void *flip(void *a) {
    (void)a;
    while (!stop) { /* the barriers keep both stores: neither is dead to the compiler */
        memcpy(path, "/bin/sh", 8);
        __asm__ volatile("" ::: "memory");
        memcpy(path, "/usr/bin/ls", 12);
        __asm__ volatile("" ::: "memory");
    }
    return NULL;
}
int main(void) {
    int tries = 0, ls = 0, killed = 0, refused = 0, other = 0;
    for (; tries < 3000; tries++) {
        memcpy(path, "/usr/bin/ls", 12);
        pid_t pid = fork();
        if (pid == 0) {
            pthread_t t[2];
            pthread_create(&t[0], NULL, flip, NULL);
            pthread_create(&t[1], NULL, flip, NULL);
            int dn = open("/dev/null", O_WRONLY);
            dup2(dn, 2);
            char *argv[] = {"ls", "-c", "echo SWAPPED-$$", NULL}, *envp[] = {NULL};
            execve(path, argv, envp);
            _exit(100);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 2) ls++;
        else if (WIFSIGNALED(st) && WTERMSIG(st) == 9) killed++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 100) refused++; /* read as /bin/sh: denied */
        else other++;
    }
    printf("tries %d ls %d killed %d refused %d other %d\n", tries, ls, killed, refused, other);
    return 0;
}
"""


@test()
def a_flipped_exec_path_never_runs_another_program(m, base):
    """Under Bash(ls:*), threads flip execve's path between /usr/bin/ls and
    /bin/sh after the broker read it. In 3,000 tries /bin/sh never runs:
    the exec is bound to the file that was approved before the new program
    runs an instruction; a swap kills that process and is recorded."""
    cc = h.shutil.which("cc") or h.shutil.which("gcc")
    if not cc:
        raise (AssertionError if h.IN_CI else h.Skip)("no C compiler to build the attacker")
    name = f"flipper-{m.name}"
    d = h.make_skill(base, name, "", tools="Read Bash(ls:*)", lang="sh")
    flip = os.path.join(d, "flip")
    src = os.path.join(base, "flip.c")
    open(src, "w").write(FLIPPER_C)
    h.subprocess.run([cc, "-O2", "-pthread", "-o", flip, src], check=True)
    os.chmod(flip, 0o755)
    yml = os.path.join(d, "skillsandbox.yaml")
    text = open(yml).read().replace("command: sh", f"command: {flip}")
    open(yml, "w").write(text)
    p = m.run("run", "--prompt", "deny", d, timeout=300)
    assert "SWAPPED" not in p.out, p.out[-2000:]
    assert "AddressSanitizer" not in p.err, p.err[-3000:]
    got = re.search(r"tries (\d+) ls (\d+) killed (\d+) refused (\d+) other (\d+)", p.out)
    assert got, p.out[-1000:] + p.err[-2000:]
    tries, ls, killed, refused, other = map(int, got.groups())
    assert tries == 3000 and other == 0, got.group(0)
    t = m.last_trace()
    swaps = [e for e in t["events"] if e["kind"] == "syscall_blocked"
             and (e.get("data") or {}).get("reason") == "program swapped"]
    # the race was really run (today's kernel lets the flip win often) and
    # every win was caught: killed before the other program ran
    assert killed > 0 and ls > 0, got.group(0)
    assert swaps, [e["message"] for e in t["events"]][-10:]
    for e in swaps:
        assert e["data"]["approved"] == "/usr/bin/ls" and "sh" in e["data"]["ran"], e
    assert t["violation_summary"]["max_severity"] == "critical"
    assert run_records(m)[-1]["skill"] == name
    assert run_records(m)[-1]["max_severity"] == "critical"


@test()
def declared_scopes_still_run_and_are_verified(m, base):
    # the ordinary cases keep working under the binding: a declared program
    # (spawned with vfork), a script whose interpreter is checked with it,
    # an exec from a thread that is not the process's first, and a deny
    name = f"scoped-{m.name}"
    d = h.make_skill(base, name, r"""
        import os, subprocess, sys, threading
        root = os.path.dirname(os.path.abspath(__file__))
        print("ls:", subprocess.run(["ls", "/"], capture_output=True).returncode)
        print("script:", subprocess.run([root + "/tool.sh"], capture_output=True,
                                        text=True).stdout.strip())
        try:
            subprocess.run(["/bin/sh", "-c", "echo SH-RAN"])
        except PermissionError:
            print("sh: denied")
        sys.stdout.flush()
        def t():
            os.execv("/usr/bin/ls", ["ls", "-d", "/"])
        threading.Thread(target=t).start()
        threading.Event().wait(10)
        """, tools="Read Bash(ls:*)")
    tool = os.path.join(d, "tool.sh")
    open(tool, "w").write("#!/bin/sh\necho SCRIPT-RAN\n")
    os.chmod(tool, 0o755)
    pol = os.path.join(base, f"pol-{m.name}.yaml")
    open(pol, "w").write(f'allow: ["Bash({tool})"]\n')  # the rest: no rule, denied
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, d, timeout=60)
    assert p.returncode == 0, p.out + p.err
    assert "ls: 0" in p.out and "script: SCRIPT-RAN" in p.out, p.out + p.err
    assert "sh: denied" in p.out and "SH-RAN" not in p.out, p.out + p.err
    assert p.out.rstrip().endswith("/"), p.out  # ls -d / from the second thread
    t = m.last_trace()
    assert not [e for e in t["events"] if (e.get("data") or {}).get("reason") == "program swapped"]


@test()
def a_brokered_rename_is_decided_on_both_paths(m, base):
    """Write(A/**) once let rename(A/x, B/y) and RENAME_EXCHANGE between A and
    B through: decided on the source alone, done by the broker into a
    folder no rule, prompt or record named. An approved open of a root-owned
    file also chowned it to the skill for good."""
    a, b = os.path.join(base, f"A-{m.name}"), os.path.join(base, f"B-{m.name}")
    for d_ in (a, b):
        os.makedirs(d_)
        os.chmod(d_, 0o777)
    files = {f"{a}/payload": "EVIL HOOK\n", f"{a}/x": "from A\n", f"{a}/mine": "mine\n",
             f"{b}/secret": "B's SECRET\n", f"{a}/rootfile": "root's\n"}
    for path, text in files.items():
        open(path, "w").write(text)
        os.chmod(path, 0o666)
    pol = os.path.join(base, f"rpol-{m.name}.yaml")
    open(pol, "w").write(f'allow: ["Write({a}/**)"]\n')
    os.chmod(pol, 0o644)
    name = f"renamer-{m.name}"
    d = h.make_skill(base, name, f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        a, b = {a!r}, {b!r}
        def try_(what, fn):
            try:
                fn()
                print(what, "DONE")
            except OSError as e:
                print(what, "refused", e.errno)
        try_("rename-out", lambda: os.rename(a + "/payload", b + "/evil"))
        def exchange():
            r = libc.renameat2(-100, (a + "/x").encode(), -100, (b + "/secret").encode(), 2)
            if r < 0:
                raise OSError(ctypes.get_errno(), "renameat2")
        try_("exchange", exchange)
        try_("rename-in", lambda: os.rename(b + "/secret", a + "/stolen"))
        try_("rename-within", lambda: os.rename(a + "/mine", a + "/mine2"))
        with open(a + "/rootfile", "a") as f:
            f.write("appended\\n")
        print("appended")
        """, tools="Read Write", yaml_extra=f"permissions:\n  filesystem:\n    read: [{a}, {b}]\n")
    p = m.run("run", "--policy", pol, d, check=0, timeout=60)
    assert "rename-out refused 13" in p.out and not os.path.exists(f"{b}/evil"), p.out
    assert "exchange refused 13" in p.out, p.out
    assert "rename-in refused 13" in p.out and not os.path.exists(f"{a}/stolen"), p.out
    assert open(f"{b}/secret").read() == "B's SECRET\n"
    assert open(f"{a}/payload").read() == "EVIL HOOK\n"
    assert "rename-within DONE" in p.out and os.path.exists(f"{a}/mine2"), p.out
    assert "appended" in open(f"{a}/rootfile").read(), p.out
    # ownership and mode of an existing host file never change
    st = os.stat(f"{a}/rootfile")
    assert st.st_uid == os.getuid() and (st.st_mode & 0o777) == 0o666, (st.st_uid, oct(st.st_mode))
    decisions = [x for x in h.audit_decisions(m) if x["tool"] == "Write"]
    assert any(x["decision"] == "deny" and f"{b}/evil" in x["request"] for x in decisions), decisions
    assert any(x["decision"] == "deny" and f"{b}/secret" in x["request"] for x in decisions), decisions


@test()
def a_scope_names_the_program_not_its_base_name(m, base):
    """Bash(ls:*) once matched any file called ls: a symlink named ls to
    python3, a copied shell named ls, ./ls. A scope means the ls the
    sandbox's PATH finds, compared as a file."""
    name = f"lsnamed-{m.name}"
    d = h.make_skill(base, name, r"""
        import os, shutil, subprocess
        os.chdir("/tmp")
        os.symlink("/usr/bin/python3", "/tmp/ls")
        os.makedirs("/tmp/bin")
        shutil.copy("/bin/sh", "/tmp/bin/ls")
        os.chmod("/tmp/bin/ls", 0o755)
        for what, argv in (("symlink", ["/tmp/ls", "-c", "print('PYTHON-AS-LS')"]),
                           ("copy", ["/tmp/bin/ls", "-c", "echo SHELL-AS-LS"]),
                           ("dot", ["./ls", "-c", "print('DOT-LS')"])):
            try:
                r = subprocess.run(argv, capture_output=True, text=True)
                print(what, "ran", r.returncode, r.stdout.strip())
            except PermissionError:
                print(what, "denied")
        r = subprocess.run(["ls", "-d", "/usr"], capture_output=True, text=True)
        print("real ls:", r.stdout.strip())
        r = subprocess.run(["/bin/ls", "-d", "/usr"], capture_output=True, text=True)
        print("bin ls:", r.stdout.strip())
        """, tools="Read Bash(ls:*)")
    p = m.run("run", "--prompt", "deny", "--json", d, timeout=60)
    out = "".join(e["message"] + "\n" for e in m.events(p) if e["kind"] == "stdout")
    for what in ("symlink", "copy", "dot"):
        assert f"{what} denied" in out, out
    assert "AS-LS" not in out and "DOT-LS" not in out, out
    assert "real ls: /usr" in out and "bin ls: /usr" in out, out
    asked = [e for e in m.last_trace()["events"] if e["kind"] == "permission_decided"]
    for prog in ("/tmp/ls", "/tmp/bin/ls"):
        assert any(prog in e["message"] and "deny" in e["message"] for e in asked), asked
    decisions = [x for x in h.audit_decisions(m) if x["tool"] == "Bash"]
    assert any("/tmp/bin/ls" in x["request"] and x["decision"] == "deny" for x in decisions)


@test()
def a_fifo_approved_as_a_program_does_not_hang_the_broker(m, base):
    # the broker looks at an approved program before it runs: opening a
    # FIFO for that would wait for a writer forever, and the run with it
    name = f"fifoexec-{m.name}"
    d = h.make_skill(base, name, r"""
        import os, time
        os.mkfifo("/tmp/prog")
        t0 = time.monotonic()
        try:
            os.execv("/tmp/prog", ["prog"])
        except OSError as e:
            print("exec refused", e.errno, round(time.monotonic() - t0, 1))
        """, tools='""')
    pol = os.path.join(base, f"fpol-{m.name}.yaml")
    open(pol, "w").write('allow: ["Bash(/tmp/prog)"]\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, d, timeout=30)
    assert re.search(r"exec refused 13 0\.\d", p.out), p.out + p.err
    assert m.last_trace()["status"] == "completed"


@test()
def an_approved_write_is_only_a_write(m, base):
    """Allowing a Write of a root-only file once handed the skill the file:
    the broker chowned it to the skill's uid, and the skill's O_RDWR let it
    read what it was only allowed to write."""
    a = os.path.join(base, f"W-{m.name}")
    os.makedirs(a)
    os.chmod(a, 0o755)
    secret = os.path.join(a, "root-only.conf")
    open(secret, "w").write("ROOT-ONLY-SECRET\n")
    os.chmod(secret, 0o600)
    pol = os.path.join(base, f"wpol-{m.name}.yaml")
    open(pol, "w").write(f'allow: ["Write({secret})"]\n')
    os.chmod(pol, 0o644)
    d = h.make_skill(base, f"rdwr-{m.name}", f"""
        import os
        try:
            fd = os.open({secret!r}, os.O_RDWR)
        except OSError as e:
            print("open refused", e.errno)
        else:
            os.write(fd, b"X")
            try:
                print("read back:", os.pread(fd, 100, 0))
            except OSError as e:
                print("read refused", e.errno)
            try:
                os.fchmod(fd, 0o666)
                print("fchmod DONE")
            except OSError as e:
                print("fchmod refused", e.errno)
        """, tools="Read Write", yaml_extra=f"permissions:\n  filesystem:\n    read: [{a}]\n")
    p = m.run("run", "--policy", pol, d, check=0, timeout=60)
    assert "ROOT-ONLY-SECRET" not in p.out and "SECRET" not in p.out, p.out
    st = os.stat(secret)
    assert st.st_uid == 0 and (st.st_mode & 0o777) == 0o600, (st.st_uid, oct(st.st_mode))
    if m.name == "root":  # the write was allowed, and it is all the skill got
        assert "read refused 9" in p.out and "fchmod refused" in p.out, p.out
        assert open(secret).read().startswith("XOOT-ONLY"), open(secret).read()
    else:  # an unprivileged broker cannot open root's file at all
        assert "open refused 13" in p.out, p.out


@test(modes=("root",))
def another_users_folder_cannot_redirect_an_approved_write(m, base):
    """Another local account owns a parent of a declared write path and swaps
    it for a symlink after launch: the approved write once landed in a
    root-only folder the person never saw. Declared paths are now pinned
    before launch by a walk that refuses what another user could swap."""
    other = 23456  # a second local account, made up for the test
    shared = os.path.join(base, "shared")      # the other user's folder
    data = os.path.join(shared, "data")        # what the person declared
    victim = os.path.join(base, "root-only")   # where the write must never land
    for d_, uid, mode in ((shared, other, 0o755), (data, other, 0o777), (victim, 0, 0o700)):
        os.makedirs(d_)
        os.chown(d_, uid, uid)
        os.chmod(d_, mode)
    pol = os.path.join(base, "swap-pol.yaml")
    open(pol, "w").write(f'allow: ["Write({data}/**)"]\n')
    os.chmod(pol, 0o644)
    d = h.make_skill(base, f"swapped-{m.name}", f"""
        import time
        time.sleep(1.5)  # the other user swaps the folder meanwhile
        with open({data!r} + "/victim.conf", "w") as f:
            f.write("written by the skill\\n")
        print("wrote")
        """, tools="Read Write", yaml_extra=f"permissions:\n  filesystem:\n    read: [{data}]\n")
    swapper = h.subprocess.Popen(
        ["setpriv", f"--reuid={other}", f"--regid={other}", "--clear-groups", "python3", "-c",
         f"import os, time\ntime.sleep(0.6)\nos.rename({data!r}, {data!r} + '.old')\n"
         f"os.symlink({victim!r}, {data!r})\n"])
    try:
        p = m.run("run", "--policy", pol, d, timeout=60)
    finally:
        swapper.wait(timeout=10)
    assert not os.listdir(victim), f"the write landed in {victim}: {os.listdir(victim)}"
    assert p.returncode == 125, (p.returncode, p.out, p.err)
    assert f"declared path {data}" in p.err and "another user may change" in p.err, p.err


@test(modes=("root",))
def under_sudo_an_approved_new_file_is_the_users(m, base):
    """Under sudo the broker, root, made approved new files and folders as
    root in the user's own folder. They are the invoking user's now; an
    existing file keeps its owner."""
    user = h.NOBODY
    folder = os.path.join(base, "users-folder")
    os.makedirs(folder)
    os.chown(folder, user, user)
    keep = os.path.join(folder, "existing.txt")
    open(keep, "w").write("root's\n")
    os.chmod(keep, 0o666)
    pol = os.path.join(base, "sudo-pol.yaml")
    open(pol, "w").write(f'allow: ["Write({folder}/**)"]\n')
    os.chmod(pol, 0o644)
    d = h.make_skill(base, "sudo-writer", f"""
        import os
        open({folder!r} + "/new.txt", "w").write("made by the skill\\n")
        os.mkdir({folder!r} + "/sub")
        open({keep!r}, "a").write("appended\\n")
        print("done")
        """, tools="Read Write", yaml_extra=f"permissions:\n  filesystem:\n    read: [{folder}]\n")
    env = {"SUDO_UID": str(user), "SUDO_GID": str(user)}
    p = m.run("run", "--policy", pol, d, env=env, check=0)
    assert "done" in p.out, p.out + p.err
    for made in ("new.txt", "sub"):
        st = os.stat(os.path.join(folder, made))
        assert (st.st_uid, st.st_gid) == (user, user), (made, st.st_uid, st.st_gid)
    assert os.stat(keep).st_uid == 0 and "appended" in open(keep).read()


SOCKET_ATTACKS = r"""
import ctypes, errno, os, socket, threading, time
libc = ctypes.CDLL(None, use_errno=True)
host = HOST
def try_(what, fn):
    try:
        r = fn()
        print(what, "CONNECTED", r if r else "")
    except OSError as e:
        print(what, "refused", e.errno)
def conn(path, cwd=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if cwd:
        os.chdir(cwd)
    s.settimeout(3)
    s.connect(path)
    s.sendall(b"from the skill")
    return ""
try_("absolute", lambda: conn(host + "/agent.sock"))
try_("relative", lambda: conn("agent.sock", cwd=host))
os.chdir("/tmp")
os.symlink(host + "/agent.sock", "/tmp/link.sock")
try_("symlink", lambda: conn("/tmp/link.sock"))
os.symlink(host, "/tmp/linkdir")
try_("symlinkdir", lambda: conn("/tmp/linkdir/agent.sock"))
for t, n in ((socket.SOCK_DGRAM, "dgram"), (3, "raw")):
    try_("socket-" + n, lambda: socket.socket(socket.AF_UNIX, t) and "")
    try_("pair-" + n, lambda: socket.socketpair(socket.AF_UNIX, t) and "")
# the skill's own servers still work: a path on its private /tmp, an
# abstract name, TCP on its loopback (a blocking connect the broker makes)
def serve(s):
    c, _ = s.accept()
    c.sendall(b"pong")
    c.close()
srv = socket.socket(socket.AF_UNIX); srv.bind("/tmp/own.sock"); srv.listen(4)
threading.Thread(target=serve, args=(srv,), daemon=True).start()
c = socket.socket(socket.AF_UNIX); c.connect("/tmp/own.sock"); print("own unix", c.recv(4).decode())
srv2 = socket.socket(socket.AF_UNIX); srv2.bind(b"\0own-abstract"); srv2.listen(4)
threading.Thread(target=serve, args=(srv2,), daemon=True).start()
c = socket.socket(socket.AF_UNIX); c.connect(b"\0own-abstract"); print("own abstract", c.recv(4).decode())
srv3 = socket.socket(); srv3.bind(("127.0.0.1", 0)); srv3.listen(4)
threading.Thread(target=serve, args=(srv3,), daemon=True).start()
c = socket.socket(); c.connect(srv3.getsockname()); print("own tcp", c.recv(4).decode())
nb = socket.socket(); nb.setblocking(False)
print("nonblocking", os.strerror(nb.connect_ex(srv3.getsockname()) or 0))
# the race: one thread flips the address and the descriptor between a
# private socket and the host's while another connects, 2000 times
class SUN(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("path", ctypes.c_char * 108)]
addr = SUN(socket.AF_UNIX, b"/tmp/own.sock")
good, bad = b"/tmp/own.sock", (host + "/agent.sock").encode()
stop = False
def flip():
    while not stop:
        addr.path = bad
        addr.path = good
threading.Thread(target=flip, daemon=True).start()
srv.setblocking(False)
hits = 0
t0 = time.time()
for i in range(2000):
    if time.time() - t0 > 20:
        break
    fd = os.open("/dev/null", os.O_RDONLY) if i % 2 else socket.socket(socket.AF_UNIX).detach()
    r = libc.connect(fd, ctypes.byref(addr), ctypes.sizeof(addr))
    os.close(fd)
    try:
        srv.accept()[0].close()
    except OSError:
        pass
stop = True
print("race done", i + 1)
"""


@test()
def a_readable_folder_is_not_a_line_to_its_daemons(m, base):
    """A folder declared readable once let the skill connect() to the unix
    sockets in it (docker, dbus, an ssh agent): reading is not talking. Every
    connect is the broker's now; a socket under a host bind is refused, the
    sandbox's own servers still answer, and unix datagram sockets (whose
    every message names its destination) are refused at socket()."""
    import socket
    import threading
    host = os.path.join(base, f"daemon-{m.name}")
    os.makedirs(host)
    os.chmod(host, 0o777)
    daemon = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    daemon.bind(os.path.join(host, "agent.sock"))
    os.chmod(os.path.join(host, "agent.sock"), 0o777)
    daemon.listen(64)
    daemon.settimeout(0.2)
    heard = []
    done = threading.Event()

    def listen():
        while not done.is_set():
            try:
                c, _ = daemon.accept()
            except OSError:
                continue
            c.settimeout(1)
            try:
                heard.append(c.recv(100))
            except OSError:
                heard.append(b"(connected)")
            c.close()
    t = threading.Thread(target=listen, daemon=True)
    t.start()
    name = f"sockets-{m.name}"
    d = h.make_skill(base, name, SOCKET_ATTACKS.replace("HOST", repr(host)),
                     yaml_extra=f"permissions:\n  filesystem:\n    read: [{host}]\n")
    v = m.run("validate", d, check=0)
    assert f"holds unix sockets, such as {host}/agent.sock" in v.out + v.err, v.out + v.err
    try:
        p = m.run("run", "--json", d, check=0, timeout=90)
    finally:
        done.set()
        t.join(timeout=5)
        daemon.close()
    survived(m, p, name)
    for what in ("absolute", "relative", "symlink", "symlinkdir"):
        assert f"{what} refused 13" in p.out, (what, p.out, p.err[-2000:])
    for what in ("socket-dgram", "pair-dgram", "socket-raw", "pair-raw"):
        assert f"{what} refused 1" in p.out, (what, p.out)
    assert not heard, f"the host's daemon was reached: {heard}"
    for what in ("own unix pong", "own abstract pong", "own tcp pong",
                 "nonblocking Operation now in progress"):
        assert what in p.out, (what, p.out, p.err[-2000:])
    assert re.search(r"race done (\d+)", p.out), p.out
    evs = m.events(p)
    refused = [e for e in evs if e.get("kind") == "syscall_blocked"
               and (e.get("data") or {}).get("syscall") == "connect"]
    assert any(e["data"].get("path") == f"{host}/agent.sock" for e in refused), refused[:3]
    assert any("host socket" in e.get("message", "") for e in refused), refused[:3]


NETLINK_ATTACK = r"""
import errno, os, socket
def try_(what, fn):
    try:
        fn()
        print(what, "CONNECTED")
    except OSError as e:
        print(what, "refused", e.errno)
# a route socket to listen on: its port id is what another socket would
# need CAP_NET_ADMIN to send to
a = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
a.bind((0, 0))
a.settimeout(0.5)
pid_a = a.getsockname()[0]
b = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
try_("unicast", lambda: b.connect((pid_a, 0)))
try:
    b.send(b"\x14\0\0\0\x10\0\0\0\0\0\0\0\0\0\0\0forged")
    print("delivered", len(a.recv(100)))
except OSError as e:
    print("not delivered", e.errno)
c = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
try_("multicast", lambda: c.connect((0, 1)))  # RTMGRP_LINK
k = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
try_("kernel", lambda: k.connect((0, 0)))
# NETLINK_USERSOCK lets anyone send to another socket: the kernel's rule
u1 = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
u1.bind((0, 0))
u2 = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
try_("usersock", lambda: u2.connect((u1.getsockname()[0], 0)))
print("netlink done")
"""


@test()
def a_netlink_connect_gets_no_privilege_from_the_broker(m, base):
    """The broker made every connect() itself, with its own credentials: a
    netlink connect to another socket or to a multicast group needs
    CAP_NET_ADMIN, which the skill does not hold but the broker (root, or the
    owner of the sandbox's user namespace) does, so a skill could send forged
    messages to any netlink listener in its sandbox. Such a connect is
    refused as the kernel would refuse the skill's own (EPERM), and logged;
    a connect to the kernel, and NETLINK_USERSOCK's, still work."""
    name = f"netlink-{m.name}"
    d = h.make_skill(base, name, NETLINK_ATTACK)
    p = m.run("run", "--json", d, check=0, timeout=60)
    survived(m, p, name)
    assert "netlink done" in p.out, (p.out, p.err[-2000:])
    for what in ("unicast", "multicast"):
        assert f"{what} refused 1" in p.out, (what, p.out)
    assert "delivered" not in p.out.replace("not delivered", ""), p.out
    for what in ("kernel", "usersock"):
        assert f"{what} CONNECTED" in p.out, (what, p.out)
    refused = [e for e in m.events(p) if e.get("kind") == "syscall_blocked"
               and (e.get("data") or {}).get("family") == "netlink"]
    assert len(refused) == 2, refused


@test()
def a_declared_write_path_has_a_file_and_a_size_cap(m, base):
    """A declared write path once took 385 MiB and 20,000 files in one run.
    Now the broker makes every new file and folder there and counts them
    (EDQUOT past max_files), as the skill would (the skill's own permissions
    still hold), and sums the growth of what is written (the run is stopped
    past max_disk_mb)."""
    out = os.path.join(base, f"out-{m.name}")
    os.makedirs(os.path.join(out, "locked"))
    os.chmod(out, 0o777)
    os.chmod(os.path.join(out, "locked"), 0o755)  # root's: the skill may not write here
    open(os.path.join(out, "existing.txt"), "w").write("old\n")
    os.chmod(os.path.join(out, "existing.txt"), 0o666)
    yaml = (f"permissions:\n  filesystem:\n    write: [{out}]\n"
            "resources:\n  max_files: 200\n  max_disk_mb: 8\n")
    name = f"filler-{m.name}"
    d = h.make_skill(base, name, f"""
        import errno, os, time
        out = {out!r}
        try:
            open(f"{{out}}/locked/x", "w")
            print("locked WRITTEN")
        except OSError as e:
            print("locked refused", e.errno)
        t = os.open(out, os.O_TMPFILE | os.O_WRONLY, 0o600)  # a nameless file counts too
        os.write(t, b"x")
        print("tmpfile mode", oct(os.fstat(t).st_mode & 0o777))
        os.close(t)
        made = refused = other = 0
        for i in range(1000):
            try:
                if i % 10 == 0:
                    os.mkdir(f"{{out}}/d{{i}}")
                else:
                    os.close(os.open(f"{{out}}/f{{i}}", os.O_CREAT | os.O_WRONLY, 0o644))
                made += 1
            except OSError as e:
                if e.errno == errno.EDQUOT:
                    refused += 1
                else:
                    other += 1
        print("made", made, "refused", refused, "other", other)
        # what is there may still be written, and opened again with O_CREAT
        with open(f"{{out}}/existing.txt", "w") as f:
            f.write("rewritten\\n")
        os.close(os.open(f"{{out}}/f1", os.O_CREAT | os.O_WRONLY))
        print("rewrote")
        try:
            os.symlink("f1", f"{{out}}/one-more-link")
            print("symlink made")
        except OSError as e:
            print("symlink refused", e.errno)
        """, tools="Read Write", yaml_extra=yaml)
    p = m.run("run", "--json", d, check=0, timeout=120)
    survived(m, p, name)
    got = re.search(r"made (\d+) refused (\d+) other (\d+)", p.out)
    assert got, p.out[-2000:] + p.err[-2000:]
    # as root the person is root: a new name in root's folder is made for the
    # skill as root (issue 36), and counts like any other
    root = m.name == "root"
    want = ("198", "802", "0") if root else ("199", "801", "0")
    assert got.groups() == want, got.group(0)
    assert "tmpfile mode 0o600" in p.out, p.out[-1500:]
    # 199 (198 and locked/x as root), locked, existing.txt
    assert len(os.listdir(out)) == (200 if root else 201), len(os.listdir(out))
    assert open(os.path.join(out, "existing.txt")).read() == "rewritten\n"
    assert "rewrote" in p.out and f"symlink refused {122}" in p.out, p.out[-1500:]
    if root:  # made as the skill (nobody) where it may; root's where only root may
        assert "locked WRITTEN" in p.out, p.out[-1500:]
        assert os.stat(os.path.join(out, "f1")).st_uid == h.NOBODY
        assert os.stat(os.path.join(out, "locked", "x")).st_uid == 0
    else:
        assert "locked refused 13" in p.out, p.out[-1500:]
    limits = [e for e in m.events(p) if e["kind"] == "resource_limit_hit"]
    assert any(e["data"].get("limit") == "files" for e in limits), limits

    # the bytes: 40 files of 1 MiB, one every 20 ms, against 8 MB
    big = os.path.join(base, f"big-{m.name}")
    os.makedirs(big)
    os.chmod(big, 0o777)
    name2 = f"disk-filler-{m.name}"
    d2 = h.make_skill(base, name2, f"""
        import os, time
        chunk = os.urandom(1 << 20)
        for i in range(40):
            with open(f"{big}/blob{{i}}", "wb") as f:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            print("wrote", i + 1, flush=True)
            time.sleep(0.02)
        print("WROTE ALL")
        """, tools="Read Write",
        yaml_extra=f"permissions:\n  filesystem:\n    write: [{big}]\n"
                   "resources:\n  max_disk_mb: 8\n")
    p = m.run("run", "--json", d2, timeout=120)
    assert p.returncode == 137, (p.returncode, p.err[-1000:])
    assert "WROTE ALL" not in p.out, p.out[-1500:]
    total = sum(os.path.getsize(os.path.join(big, f)) for f in os.listdir(big))
    assert total <= 24 << 20, f"{total >> 20} MiB landed past an 8 MB cap"
    t = m.last_trace()
    assert t["status"] != "completed", t["status"]
    disk = [e for e in t["events"] if e["kind"] == "resource_limit_hit"
            and (e.get("data") or {}).get("limit") == "disk"]
    assert disk and disk[0]["data"]["bytes"] > 8 << 20, disk
    assert any(e["kind"] == "skill_failed" and e["data"].get("reason") == "disk"
               for e in t["events"]), [e["kind"] for e in t["events"]][-5:]


@test()
def a_fifo_in_a_write_path_does_not_hang_the_broker(m, base):
    """Every write-intent open in a declared write path is the broker's: a
    FIFO there with no reader once made the broker's own open block, so the
    run could never time out. The broker never blocks on it; the skill does,
    until the timeout kills it."""
    out = os.path.join(base, f"fifo-{m.name}")
    os.makedirs(out)
    os.chmod(out, 0o777)
    name = f"fifo-writer-{m.name}"
    d = h.make_skill(base, name, f"""
        import os
        os.mkfifo({out!r} + "/pipe")
        print("waiting for a reader", flush=True)
        os.open({out!r} + "/pipe", os.O_WRONLY)  # no reader ever comes
        print("OPENED")
        """, tools="Read Write",
        yaml_extra=f"permissions:\n  filesystem:\n    write: [{out}]\n"
                   "resources:\n  max_runtime_seconds: 3\n")
    import time as _t
    t0 = _t.monotonic()
    p = m.run("run", "--json", d, timeout=30)
    took = _t.monotonic() - t0
    assert took < 15, f"the run took {took:.1f}s with a 3 s timeout"
    assert "waiting for a reader" in p.out and "OPENED" not in p.out, p.out[-1500:]
    assert m.last_trace()["status"] == "timeout", m.last_trace()["status"]


# A skill that reads the real home's token by its absolute path, lists the
# home and the folder above it: what a bind over the private home shows.
HOME_READER = """
import os
for p in TOKENS:
    try:
        print("READ", p, open(p).read())
    except OSError as e:
        print("NOPE", p, e.errno)
for d in DIRS:
    try:
        print("LIST", d, sorted(os.listdir(d)))
    except OSError as e:
        print("NOLIST", d, e.errno)
"""


def plant_token(m, home):
    """An OAuth token where gh keeps it, readable to the skill's identity by
    host permissions: only the sandbox keeps it out of sight."""
    tok = os.path.join(home, ".config", "gh", "hosts.yml")
    os.makedirs(os.path.dirname(tok), exist_ok=True)
    with open(tok, "w") as f:
        f.write(f"github.com:\n    oauth_token: {h.PLANTED}-gh\n")
    for q in (home, os.path.join(home, ".config"), os.path.dirname(tok)):
        os.chmod(q, 0o755)
        if h.IS_ROOT:
            os.chown(q, m.uid, m.uid)
    os.chmod(tok, 0o644)
    if h.IS_ROOT:
        os.chown(tok, m.uid, m.uid)
    return tok


def refused_no_token(p, tok, *words):
    h.assert_no_planted(p.out, p.err)
    assert p.returncode == 126, (p.returncode, p.out[-1500:], p.err[-1500:])
    assert "READ" not in p.out and "LIST" not in p.out, p.out
    for w in words:
        assert w in p.err, (w, p.err)


@test()
def a_working_folder_above_the_home_is_refused(m, base):
    """--cwd of the folder that holds the home (/home, or /tmp/x with HOME
    below it) was bound over the private home and showed the real one: a
    skill read gh's OAuth token (issue 34, item 8). A working folder, a
    --python environment or a declared path that is the home, holds it,
    or holds another account's home is refused, by the object (a symlink to
    it too), with a message naming what and why; a declared one in
    validate with its file, line and field."""
    tok = plant_token(m, m.home)
    above = os.path.dirname(m.home)  # /tmp/sgattack.X: HOME is below it
    alias = os.path.join(base, f"above-link-{m.name}")  # a link to that folder
    os.symlink(above, alias)
    home_alias = os.path.join(base, f"home-link-{m.name}")  # a link to the home
    os.symlink(m.home, home_alias)
    d = h.make_skill(base, f"home-reader-{m.name}", HOME_READER
                     .replace("TOKENS", repr([tok, os.path.join(alias, os.path.basename(m.home),
                                                                ".config/gh/hosts.yml")]))
                     .replace("DIRS", repr([m.home, above])))
    for where in (above, alias):
        p = m.run("run", "--cwd", where, d, "--script", "main.py")
        refused_no_token(p, tok, "the working folder", "may not be a folder that holds your home",
                         m.home)
    p = m.run("run", "--cwd", home_alias, d, "--script", "main.py")
    refused_no_token(p, tok, "the working folder may not be your home")
    # the dry run says the same, before anything runs
    p = m.run("run", "--dry-run", "--cwd", above, d, "--script", "main.py")
    refused_no_token(p, tok, "holds your home")
    # a folder inside the home is still a working folder (it shows only itself)
    proj = os.path.join(m.home, "proj")
    os.makedirs(proj)
    os.chmod(proj, 0o755)
    if h.IS_ROOT:
        os.chown(proj, m.uid, m.uid)
    p = m.run("run", "--cwd", proj, d, "--script", "main.py", check=0)
    h.assert_no_planted(p.out, p.err)
    assert p.returncode == 0 and f"NOPE {tok}" in p.out, (p.out[-1500:], p.err[-1500:])

    # --python: an environment whose folder holds the home (HOME below it)
    top = os.path.join(base, f"envtop-{m.name}")
    os.makedirs(os.path.join(top, "bin"))
    os.symlink("/usr/bin/python3", os.path.join(top, "bin", "python3"))
    open(os.path.join(top, "pyvenv.cfg"), "w").close()
    inner = os.path.join(top, "home")
    os.makedirs(inner)
    itok = plant_token(m, inner)
    for q in (top, os.path.join(top, "bin")):
        os.chmod(q, 0o755)
    p = m.run("run", "--python", top, "--cwd", proj, d, "--script", "main.py",
              env={"HOME": inner})
    refused_no_token(p, itok, "the Python environment", "holds your home")

    # declared: the folder of homes, a link to the home, "~" itself
    for i, read in enumerate((above, home_alias, "~")):
        name = f"home-decl{i}-{m.name}"
        dd = h.make_skill(base, name, HOME_READER.replace("TOKENS", repr([tok]))
                          .replace("DIRS", repr([m.home])),
                          yaml_extra=f"permissions:\n  filesystem:\n    read: [{json.dumps(read)}]\n")
        p = m.run("validate", dd)
        assert p.returncode != 0, (read, p.out, p.err)
        line = [x for x in p.err.splitlines() if "permissions.filesystem.read[0]" in x]
        assert line and "skillsandbox.yaml:" in line[0] and ": error: " in line[0], p.err
        assert "refusing read access" in line[0] and "your home" in line[0], line
        p = m.run("run", dd)
        h.assert_no_planted(p.out, p.err)
        assert p.returncode != 0 and "READ" not in p.out, (read, p.out, p.err)
    dd = h.make_skill(base, f"home-declw-{m.name}", HOME_READER.replace("TOKENS", repr([tok]))
                      .replace("DIRS", "[]"), tools="Read Write",
                      yaml_extra=f"permissions:\n  filesystem:\n    write: [{above}]\n")
    p = m.run("validate", dd)
    assert p.returncode != 0 and "permissions.filesystem.write[0]" in p.err, p.err
    assert "refusing write access" in p.err and "holds your home" in p.err, p.err

    # another account's home: the folder above the first real one passwd names
    import pwd
    mine = (m.uid, os.path.realpath(m.home))
    for pw in pwd.getpwall():
        real = os.path.realpath(pw.pw_dir) if pw.pw_dir.startswith("/") else ""
        if (not real or not os.path.isdir(real) or pw.pw_uid == m.uid or real == mine[1] or
                real == "/" or real.startswith(("/usr/", "/bin", "/sbin", "/lib", "/etc/")) or
                os.path.dirname(real) == "/"):
            continue
        p = m.run("run", "--dry-run", "--cwd", os.path.dirname(real), d, "--script", "main.py")
        assert p.returncode == 126, (real, p.out[-800:], p.err)
        assert "another account's home" in p.err or "your home" in p.err, (real, p.err)
        break


@test()
def a_folder_with_a_mount_of_the_home_below_it_is_refused(m, base):
    """A bind takes what is mounted below its folder with it: declaring a
    folder that holds a second mount of the home (a backup mount, a bind of
    /home, a mount of the root filesystem) showed the home's tokens though
    the folder itself is no home and holds none by its path."""
    if not h.IS_ROOT:
        raise h.Skip("needs root to make a mount")
    tok = plant_token(m, m.home)
    outer = f"/var/tmp/sgmnt-{m.name}-{os.getpid()}"
    backup = os.path.join(outer, "backup")
    os.makedirs(backup)
    os.chmod(outer, 0o755)
    subprocess.run(["mount", "--bind", m.home, backup], check=True)
    try:
        seen = os.path.join(backup, ".config", "gh", "hosts.yml")
        d = h.make_skill(base, f"mnt-reader-{m.name}", HOME_READER
                         .replace("TOKENS", repr([seen])).replace("DIRS", repr([backup])),
                         yaml_extra=f"permissions:\n  filesystem:\n    read: [{outer}]\n")
        p = m.run("run", d)
        refused_no_token(p, tok, "holds your home")
        plain = h.make_skill(base, f"mnt-cwd-{m.name}", HOME_READER
                             .replace("TOKENS", repr([seen])).replace("DIRS", repr([backup])))
        p = m.run("run", "--cwd", outer, plain, "--script", "main.py")
        refused_no_token(p, tok, "the working folder", "holds your home")
    finally:
        subprocess.run(["umount", "-l", backup], check=False)
        shutil.rmtree(outer, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
