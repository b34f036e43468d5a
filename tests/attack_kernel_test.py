#!/usr/bin/env python3
"""Attack tests for kernel memory a skill can pin past its memory limit
(issue 34, item 6). Without a cgroup (an ordinary user, or no cgroup to be
had) `memory_mb` was RLIMIT_AS (now the broker's watch of resident memory,
issue 52), neither of which counts kernel memory: with
`memory_mb: 64`, 256 MiB of user xattrs on the private tmpfs once grew the
host's unreclaimable slab by 258 MiB and the run finished, and 290,000 empty
files in /tmp pinned 241 MB more in 20 s.

Checked here: every private tmpfs has nr_inodes (one per 4 KiB of its
size), so a flood of files, hard links or folders in /tmp, HOME or /dev/shm
stops with ENOSPC at the bound the plan states; setting an extended
attribute is refused (ENOTSUP, a resource_limit_hit event naming the call)
where no cgroup counts memory, through each of setxattr, lsetxattr,
fsetxattr and setxattrat, and where a cgroup does, xattrs stop at the
mount's inode space (nr_inodes KiB); SysV message queues and semaphore
sets are refused without a cgroup, as shared memory is; the dry run says
both bounds and, without a cgroup, that kernel memory counts against no
limit. Each test runs as root
(a cgroup) and again as an unprivileged user (none), through
sandbox_test.py's harness. Every flood is bounded in count and time. Prints
TAP.

Usage: attack_kernel_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

ENOSPC, ENOTSUP = 28, 95
LIMITS = "resources:\n  memory_mb: 64\n"


def run_json(m, d, inp=None):
    args = ["run", "--json"] + (["--input", json.dumps(inp)] if inp else []) + [d]
    p = m.run(*args, timeout=120)
    evs = m.events(p)
    out = "".join(e["message"] + "\n" for e in evs if e["kind"] == "stdout")
    plan = next(e for e in evs if e["kind"] == "policy_applied" and "limits" in (e["data"] or {}))
    return p, evs, out, plan["data"]["limits"]


def result(out, tag):
    """The skill's `tag {json}` line."""
    line = next((ln for ln in out.splitlines() if ln.startswith(tag + " ")), None)
    assert line, f"no {tag} line in: {out[-2000:]}"
    return json.loads(line[len(tag) + 1:])


# Sets 4 KB user xattrs on files in /tmp (a new file every 64) until
# refused, at most 20,000 tries or 20 s; then each other call once.
XATTRS = r"""
    import ctypes, errno, json, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    val = b"v" * 4000
    t0, n, err, path = time.monotonic(), 0, 0, "/tmp/x0"
    open(path, "w").close()
    for i in range(20000):
        if time.monotonic() - t0 > 20:
            break
        if i and i % 64 == 0:
            path = "/tmp/x%d" % i
            open(path, "w").close()
        try:
            os.setxattr(path, "user.a%d" % i, val)
        except OSError as e:
            err = e.errno
            break
        n += 1
    print("setxattr", json.dumps({"n": n, "bytes": n * len(val), "errno": err}), flush=True)
    for i in range(0, n + 64, 64):  # give the inode space back
        try:
            os.unlink("/tmp/x%d" % i)
        except FileNotFoundError:
            pass
    # the other doors to the same memory
    other = {}
    open("/tmp/o", "w").close()
    os.symlink("/tmp/o", "/tmp/ol")
    def tryit(name, fn):
        try:
            fn()
            other[name] = 0
        except OSError as e:
            other[name] = e.errno
    tryit("lsetxattr", lambda: os.setxattr("/tmp/o", "user.l", b"x", follow_symlinks=False))
    fd = os.open("/tmp/o", os.O_RDONLY)
    tryit("fsetxattr", lambda: os.setxattr(fd, "user.f", b"x"))
    # setxattrat (463, Linux 6.13): dirfd, path, at_flags, name, &{value, size, flags}, sizeof
    class Args(ctypes.Structure):
        _fields_ = [("value", ctypes.c_uint64), ("size", ctypes.c_uint32),
                    ("flags", ctypes.c_uint32)]
    buf = ctypes.create_string_buffer(b"x")
    a = Args(ctypes.addressof(buf), 1, 0)
    r = libc.syscall(ctypes.c_long(463), ctypes.c_long(-100), b"/tmp/o", ctypes.c_long(0),
                     b"user.at", ctypes.byref(a), ctypes.c_long(ctypes.sizeof(a)))
    other["setxattrat"] = 0 if r == 0 else ctypes.get_errno()
    print("other", json.dumps(other), flush=True)
    """


@test()
def xattrs_on_the_private_tmpfs_are_bounded(m, base):
    """A skill sets 4 KB user xattrs in /tmp until refused. Without a
    cgroup: the first call is refused with ENOTSUP (what a filesystem
    without xattrs says), as are lsetxattr, fsetxattr and setxattrat, each
    with a resource_limit_hit event. With a cgroup (which counts their slab):
    they stop with ENOSPC within the mount's inode space, nr_inodes KiB."""
    d = h.make_skill(base, f"xattrs-{m.name}", XATTRS, yaml_extra=LIMITS)
    p, evs, out, limits = run_json(m, d)
    got = result(out, "setxattr")
    # never more than the mount's inode space (one inode per 4 KiB of its
    # size, 1 KiB of xattrs an inode), whatever holds memory
    assert got["bytes"] <= limits["tmpfs"]["value"] // 4096 * 1024, (got, limits["tmpfs"])
    other = result(out, "other")
    assert limits["inodes"]["mechanism"] == "tmpfs nr_inodes", limits
    hits = [e for e in evs if e["kind"] == "resource_limit_hit"]
    if limits["memory"]["mechanism"] == "resident watch":
        assert got == {"n": 0, "bytes": 0, "errno": ENOTSUP}, got
        assert other == {"lsetxattr": ENOTSUP, "fsetxattr": ENOTSUP,
                         "setxattrat": ENOTSUP}, other
        calls = {e["data"]["syscall"] for e in hits if e["data"].get("limit") == "memory"}
        assert {"setxattr", "lsetxattr", "fsetxattr", "setxattrat"} <= calls, hits
        assert any("setxattr refused (ENOTSUP)" in e["message"] for e in hits), hits
        assert "xattrs refused" in limits["memory"]["how"], limits["memory"]
        # the trace keeps the refusals
        kept = [e for e in m.last_trace()["events"] if e["kind"] == "resource_limit_hit"]
        assert any(e["data"].get("syscall") == "setxattr" for e in kept), kept
    else:
        assert got["errno"] == ENOSPC and got["n"] > 0, got
        # the 64 MiB tmpfs holds 16384 inodes: 16 MiB of xattrs, not the
        # 80 MB the loop asked for
        assert got["bytes"] < 20000 * 4000, got
        assert set(other.values()) <= {0, ENOSPC}, other
        assert not any(e["data"].get("syscall", "").endswith("xattr") for e in hits), hits


# Makes entries until refused in each private tmpfs, at most 100,000 or
# 20 s each: files in /tmp, hard links in HOME, nested folders in /dev/shm.
FLOOD = r"""
    import json, os, time
    def flood(make):
        t0, n = time.monotonic(), 0
        try:
            for i in range(100000):
                if time.monotonic() - t0 > 20:
                    return n, 0
                make(i)
                n += 1
        except OSError as e:
            return n, e.errno
        return n, 0
    home = os.path.expanduser("~")
    res = {}
    res["/tmp files"] = flood(lambda i: os.close(os.open("/tmp/f%d" % i,
                                                         os.O_CREAT | os.O_WRONLY, 0o600)))
    open(home + "/t", "w").close()
    res["HOME links"] = flood(lambda i: os.link(home + "/t", home + "/l%d" % i))
    os.chdir("/dev/shm")
    def nest(i):
        os.mkdir("d%d" % (i % 64))  # 64 to a level: never near PATH_MAX
        if i % 64 == 63:
            os.chdir("d63")
    res["/dev/shm dirs"] = flood(nest)
    print("flood", json.dumps(res), flush=True)
    """


@test()
def an_inode_flood_stops_at_nr_inodes(m, base):
    """Files in /tmp, hard links in HOME and folders in /dev/shm each stop
    with ENOSPC at the plan's nr_inodes (less the entries already there): main let 290,000 empty files pin 241 MB of slab in 20 s."""
    d = h.make_skill(base, f"inodes-{m.name}", FLOOD, yaml_extra=LIMITS)
    p, evs, out, limits = run_json(m, d)
    res = result(out, "flood")
    bound = limits["tmpfs"]["value"] // 4096  # one inode per 4 KiB of the size
    if limits["memory"]["mechanism"] == "resident watch":
        assert bound == 4096, limits["tmpfs"]  # 16 MiB each: a quarter of 64 MB
    for where, (n, err) in res.items():
        assert err == ENOSPC, (where, n, err, bound)
        # less what is there already (the folder itself, HOME's dot files)
        assert bound - 64 <= n < bound, (where, n, bound)
    assert limits["inodes"]["value"] == bound, limits


# SysV message queues (16 KiB each) and semaphore sets (up to 32,000
# semaphores each): the sandbox's IPC namespace allows 32,000 of each.
SYSV = r"""
    import ctypes, json, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    IS_CGROUP = json.loads(os.environ["SKILL_INPUT"])["cgroup"]
    res, t0 = {}, time.monotonic()
    for call, make in (("msgget", lambda: libc.msgget(0, 0o1600)),
                       ("semget", lambda: libc.semget(0, 32000, 0o1600))):
        n, err = 0, 0
        for i in range(200 if call == "semget" else 3000):  # 400 MB of sets, 48 MB of queues
            if time.monotonic() - t0 > 15 or (call == "semget" and n >= 8 and IS_CGROUP):
                break
            if make() < 0:
                err = ctypes.get_errno()
                break
            n += 1
        res[call] = [n, err]
    print("sysv", json.dumps(res), flush=True)
    """


@test()
def sysv_queues_and_semaphores_are_refused_without_a_cgroup(m, base):
    """As an ordinary user with memory_mb: 64, 200 semaphore sets pinned
    410 MB of unreclaimable slab in a second, and 3,000 message queues 48
    MB. Without a cgroup msgget and semget are refused (EPERM, a
    resource_limit_hit event), as shmget is; with one they count there and
    go on (a few are made)."""
    probe = h.make_skill(base, f"probe-{m.name}", "print('x')\n", yaml_extra=LIMITS)
    _, _, _, limits = run_json(m, probe)
    cgroup = limits["memory"]["mechanism"].startswith("cgroup")
    d = h.make_skill(base, f"sysv-{m.name}", SYSV, yaml_extra=LIMITS)
    p, evs, out, limits = run_json(m, d, {"cgroup": cgroup})
    res = result(out, "sysv")
    hits = [e for e in evs if e["kind"] == "resource_limit_hit"]
    if not cgroup:
        assert res == {"msgget": [0, 1], "semget": [0, 1]}, res
        calls = {e["data"]["syscall"] for e in hits}
        assert {"msgget", "semget"} <= calls, hits
    else:
        assert res["msgget"][0] > 0 and res["semget"][0] > 0, res
        assert not any(e["data"].get("syscall") in ("msgget", "semget") for e in hits), hits


@test()
def the_dry_run_says_the_kernel_memory_bounds(m, base):
    """The dry run names nr_inodes on each private tmpfs and the xattr rule;
    without a cgroup it says plainly that kernel memory counts against no
    limit."""
    d = h.make_skill(base, f"dry-{m.name}", "print('never')\n", yaml_extra=LIMITS)
    p = m.run("run", "--dry-run", d, check=0)
    lines = p.out.splitlines()
    tmpfs = [ln for ln in lines if ln.strip().startswith("tmpfs ") and " KiB" in ln]
    assert tmpfs and all(" inodes, mode " in ln for ln in tmpfs), tmpfs
    inodes = next(ln for ln in lines if ln.strip().startswith("inodes "))
    assert "tmpfs nr_inodes" in inodes and "ENOSPC" in inodes, inodes
    assert any(ln.strip().startswith("setxattr ") for ln in lines), p.out
    memory = next(ln for ln in lines if ln.strip().startswith("memory "))
    if "resident watch:" in memory:
        assert "kernel memory (inodes, dentries, xattrs) counts against no limit" in memory, memory
        assert "4096 " in inodes and "xattr is refused" in inodes, inodes


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
