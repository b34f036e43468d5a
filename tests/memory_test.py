#!/usr/bin/env python3
"""Memory that real programs fit in, as any user (issue 52, item 2).

Without a cgroup (an ordinary user where the system delegates none),
memory_mb was RLIMIT_AS: an address-space limit. Programs reserve far more
than they touch (V8's pointer cage and WebAssembly guard regions, glibc's
64 MiB thread arenas, thread stacks, LibreOffice), so under the 256 MB
default node could not start and docx's accept_changes.py died with
LibreOffice's SIGSEGV (exit 139) as a user while it worked bare. Now a
cgroup holds memory where there is one, else the broker watches what the
sandbox's processes hold resident (sandbox/memwatch.h) and stops the run
past the limit; a run that a limit stopped, or that died near one, ends
saying which limit and how to raise it.

Checked here, as root (a cgroup) and as an ordinary user (the broker's
watch on a machine without a delegated cgroup), on the real shapes: a
process reserving 4 GiB and touching 16 MB, 16 threads, node with a
WebAssembly memory; a program really using more than the limit; fork's
shared copy-on-write pages, which must count once; what a fast allocator
gets past the watch before it is stopped (printed, bounded); and the note
at the end of a run that died near the limit, not of one that failed far
from it. Prints TAP.

Usage: memory_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
MB = 1 << 20


def memory_limit(m, p):
    """The plan's memory limit (value, mechanism) from a --json run."""
    plan = next(e for e in m.events(p)
                if e["kind"] == "policy_applied" and "limits" in (e["data"] or {}))
    mem = plan["data"]["limits"]["memory"]
    return mem["value"], mem["mechanism"]


def stdout_of(m, p):
    return "".join(e["message"] + "\n" for e in m.events(p) if e["kind"] == "stdout")


@test()
def programs_that_reserve_far_more_than_they_touch_run(m, base):
    """Under the 256 MB default: a 4 GiB private mapping of which 16 MB is
    touched, 16 threads (stacks and malloc arenas), and node with a
    WebAssembly memory (V8 reserves its 8 GiB guard region). Each failed
    under RLIMIT_AS as a user; each uses far less than 256 MB."""
    node = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    if not node:
        raise h.Skip("node is not installed")
    d = h.make_skill(base, f"reserve-{m.name}", f"""
        import ctypes, mmap, subprocess, threading
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        MAP_NORESERVE = 0x4000
        p = libc.mmap(None, 4 << 30, mmap.PROT_READ | mmap.PROT_WRITE,
                      mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        if p is None or p == ctypes.c_void_p(-1).value:
            print("mmap refused", ctypes.get_errno(), flush=True)
            raise SystemExit(3)
        ctypes.memset(p, 1, 16 << 20)
        print("reserved 4096 MB, touched 16 MB", flush=True)
        def work():
            bytearray(1 << 20)
        ts = [threading.Thread(target=work) for _ in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print("16 threads ok", flush=True)
        js = "const w = new WebAssembly.Memory({{initial: 256}}); " \\
             "console.log('node ok', w.buffer.byteLength)"
        r = subprocess.run(["{node}", "-e", js], capture_output=True, text=True)
        print(r.stdout.strip() or "node failed " + r.stderr[-400:], r.returncode, flush=True)
        """, tools="Read Bash")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    value, mech = memory_limit(m, p)
    assert value == 256, (value, mech)
    assert "reserved 4096 MB, touched 16 MB" in out, (mech, out, p.err[-2000:])
    assert "16 threads ok" in out, (mech, out)
    assert "node ok 16777216 0" in out, (mech, out)
    assert p.returncode == 0, (p.returncode, out, p.err[-2000:])
    peak = m.last_trace().get("usage", {}).get("memory_peak_bytes", 0)
    assert 16 * MB <= peak < 256 * MB, (mech, peak)  # what was touched, not reserved
    if not h.IS_ROOT or m.uid != 0:
        print(f"# [{m.name}] memory held by {mech}; peak {peak // MB} MB", flush=True)


HOG = """
    import sys
    MB = 1 << 20
    want = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    held = []
    for i in range(want // 10):
        held.append(bytearray(b"x") * (10 * MB))
        if i % 5 == 0:
            print("MB", (i + 1) * 10, flush=True)
    print(f"held {want} MB", flush=True)
    """


@test()
def a_program_that_uses_more_than_the_limit_is_stopped_and_told(m, base):
    """300 MB really touched under memory_mb: 128: the run is stopped (a
    cgroup's OOM kill, or the broker's watch), the end of the run says it
    was the memory limit and how to raise it, the trace keeps it; with the
    raise it names (--memory) the same program runs to its end."""
    d = h.make_skill(base, f"hog-{m.name}", HOG, yaml_extra="resources:\n  memory_mb: 128\n")
    p = m.run("run", d, check=None, timeout=120)
    assert p.returncode == 137, (p.returncode, p.out[-2000:], p.err[-2000:])
    assert "held 300 MB" not in p.out, p.out
    t = m.last_trace()
    note = t.get("limit_note", "")
    assert note.startswith("stopped at the memory limit (128 MB"), t.get("end_reason")
    assert "--memory MB" in note and "memory_mb" in note, note
    assert f"skillgate: {note}" in p.err, p.err[-2000:]  # said where the person looks
    hits = [e for e in t["events"] if e["kind"] == "resource_limit_hit"]
    assert any(e["data"].get("limit") == "memory" for e in hits), hits
    if t["limits"]["memory"]["mechanism"] == "resident watch":
        assert t["end_reason"] == "stopped past the memory limit (128 MB)", t["end_reason"]
        ev = next(e for e in hits if e["data"].get("limit") == "memory")
        assert ev["data"]["resident_bytes"] > 128 * MB, ev
    p = m.run("run", "--memory", "512", d, check=None, timeout=120)
    assert p.returncode == 0 and "held 300 MB" in p.out, (p.returncode, p.out, p.err[-2000:])
    t = m.last_trace()
    assert t["limits"]["memory"]["value"] == 512 and "limit_note" not in t, t["limits"]
    p = m.run("run", "--memory", "8", d, check=2)
    assert "--memory takes megabytes, 16..65536" in p.err, p.err


@test()
def shared_copy_on_write_pages_count_once(m, base):
    """A process holding 100 MB forks three children: each child's
    resident counters include the 100 MB it shares with its parent (400
    MB summed), but the memory used is 100 MB. Under the 256 MB default the
    run must not be stopped."""
    d = h.make_skill(base, f"cow-{m.name}", """
        import os, time
        held = bytearray(b"x") * (100 << 20)
        kids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                time.sleep(1.0)
                os._exit(0 if held[12345] == ord("x") else 1)
            kids.append(pid)
        ok = all(os.waitpid(k, 0)[1] == 0 for k in kids)
        print("children done", ok, flush=True)
        """)
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    assert p.returncode == 0 and "children done True" in out, (p.returncode, out, p.err[-2000:])
    t = m.last_trace()
    assert not [e for e in t["events"] if e["kind"] == "resource_limit_hit"], t["events"]
    peak = t.get("usage", {}).get("memory_peak_bytes", 0)
    assert 100 * MB <= peak, peak


@test()
def memory_held_after_the_leader_thread_exits_still_counts(m, base):
    """A main thread that calls pthread_exit leaves a zombie leader whose
    /proc/PID/status shows no memory while the other threads of the process
    go on: the watch once counted 0 for 300 MB held so. The process's
    memory is read from a live thread's folder then."""
    d = h.make_skill(base, f"leader-{m.name}", """
        import ctypes, threading, time
        def work():
            time.sleep(0.3)  # the leader is gone by then
            held = []
            for i in range(30):
                held.append(bytearray(b"x") * (10 << 20))
            print("held 300 MB", flush=True)
            time.sleep(0.5)
            print("worker done", flush=True)
        threading.Thread(target=work).start()
        time.sleep(0.05)
        ctypes.CDLL(None).pthread_exit(None)  # ctypes lets go of the GIL first
        """, yaml_extra="resources:\n  memory_mb: 128\n")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    assert p.returncode == 137 and "worker done" not in out, (p.returncode, out, p.err[-2000:])
    hits = [e for e in m.last_trace()["events"] if e["kind"] == "resource_limit_hit"]
    assert any(e["data"].get("limit") == "memory" for e in hits), hits


@test()
def what_a_fast_allocator_gets_past_the_watch_is_bounded(m, base):
    """memset over 2 GiB as fast as one core touches pages, under
    memory_mb: 64: stopped, and what the sandbox held when it was seen is
    printed (the watch looks every 20 ms; a cgroup allows nothing past)."""
    d = h.make_skill(base, f"fast-{m.name}", """
        import ctypes, mmap
        buf = mmap.mmap(-1, 2 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        print("touching", flush=True)
        ctypes.memset(addr, 1, 2 << 30)
        print("touched 2048 MB", flush=True)
        """, yaml_extra="resources:\n  memory_mb: 64\n")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    assert p.returncode == 137 and "touched 2048 MB" not in out, (p.returncode, out)
    t = m.last_trace()
    hits = [e for e in t["events"] if e["kind"] == "resource_limit_hit"
            and e["data"].get("limit") == "memory"]
    assert hits, t["events"]
    seen = hits[0]["data"].get("resident_bytes")
    if seen is not None:  # the broker's watch: measured, and far from the 2 GiB
        print(f"# [{m.name}] stopped when the sandbox held {seen // MB} MB of a 64 MB limit",
              flush=True)
        assert seen < 1024 * MB, seen


@test()
def a_run_that_dies_near_the_limit_says_so(m, base):
    """A program that holds 235 MB of the 256 MB default and then dies by
    SIGABRT (as a runtime that meets a failed allocation does) ends with a
    note naming the memory limit and how to raise it; one that fails far
    from every limit has none."""
    d = h.make_skill(base, f"near-{m.name}", """
        import json, os, time
        if json.loads(os.environ["SKILL_INPUT"]).get("far"):
            raise SystemExit(3)
        held = bytearray(b"x") * (235 << 20)
        time.sleep(0.3)
        os.abort()
        """)
    p = m.run("run", d, check=None, timeout=120)
    assert p.returncode == 128 + 6, (p.returncode, p.err[-2000:])
    t = m.last_trace()
    note = t.get("limit_note", "")
    assert note.startswith("ended near the memory limit (256 MB"), (note, t.get("usage"))
    assert "--memory MB" in note and f"skillgate: {note}" in p.err, p.err[-2000:]
    p = m.run("run", "--input", '{"far": true}', d, check=None, timeout=120)
    assert p.returncode == 3, (p.returncode, p.err[-2000:])
    assert "limit_note" not in m.last_trace(), m.last_trace().get("limit_note")
    assert "memory limit" not in p.err, p.err


@test()
def page_tables_a_process_makes_at_will_count(m, base):
    """review7: one read every 2 MiB of a mapping never written makes a
    4 KiB page table and no resident page (the zero page): with no
    address-space limit, 512 MB of page tables stood under a 64 MB limit
    and the watch saw 3 MB. Page tables (VmPTE) count now."""
    d = h.make_skill(base, f"ptables-{m.name}", """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        N = 131072  # 512 MiB of page tables
        p = libc.mmap(None, N << 21, 1, 0x22 | 0x4000, -1, 0)  # read-only, NORESERVE
        libc.madvise(p, N << 21, 15)  # MADV_NOHUGEPAGE: no huge zero page
        for i in range(N):
            ctypes.c_char.from_address(p + (i << 21)).value
        pte = [l for l in open("/proc/self/status") if l.startswith("VmPTE")][0].split()[1]
        print("page tables", int(pte) >> 10, "MB", flush=True)
        """, yaml_extra="resources:\n  memory_mb: 64\n")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    assert p.returncode == 137 and "page tables" not in out, (p.returncode, out, p.err[-2000:])
    hits = [e for e in m.last_trace()["events"] if e["kind"] == "resource_limit_hit"]
    assert any(e["data"].get("limit") == "memory" for e in hits), hits


@test()
def a_vfork_child_is_not_counted_twice(m, base):
    """review7: a vfork child (posix_spawn, Python's subprocess) runs in
    its parent's memory until it execs, and its /proc files repeated the
    parent's: 150 MB spawning /bin/true under the 256 MB default was
    stopped as 309 MB, in 112 ms."""
    d = h.make_skill(base, f"vfork-{m.name}", """
        import subprocess
        held = bytearray(b"x") * (150 << 20)
        for i in range(1500):
            subprocess.run(["/bin/true"])
        print("1500 spawns done", flush=True)
        """, tools="Read Bash")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    assert p.returncode == 0 and "1500 spawns done" in out, (p.returncode, out, p.err[-2000:])


@test()
def pages_a_pipe_keeps_count_or_are_refused(m, base):
    """review7: vmsplice gives a pipe references to a process's pages,
    which it keeps after they are unmapped, and one byte of a huge page
    keeps the whole 2 MiB: 256 bytes in 16 pipes held 511 MB under
    memory_mb: 64 with the watch seeing 3 MB. A cgroup counts those
    pages; without one vmsplice is refused."""
    d = h.make_skill(base, f"vmsplice-{m.name}", """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        class iovec(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        libc.vmsplice.argtypes = [ctypes.c_int, ctypes.POINTER(iovec), ctypes.c_ulong,
                                  ctypes.c_uint]
        libc.vmsplice.restype = ctypes.c_ssize_t
        H = 2 << 20
        pipes, given = [], 0
        for k in range(16):
            raw = libc.mmap(None, 17 * H, 3, 0x22, -1, 0)
            at = (raw + H - 1) & ~(H - 1)
            libc.madvise(at, 16 * H, 14)  # MADV_HUGEPAGE
            for i in range(16):
                ctypes.memset(at + i * H, 1, 1)
            r, w = os.pipe()
            iov = (iovec * 16)(*[iovec(at + i * H, 1) for i in range(16)])
            n = libc.vmsplice(w, iov, 16, 0)
            libc.munmap(raw, 17 * H)
            if n < 0:
                print("vmsplice refused", ctypes.get_errno(), flush=True)
                raise SystemExit(0)
            pipes.append((r, w))
            given += n
        print("pipes hold", given, "bytes", flush=True)
        """, yaml_extra="resources:\n  memory_mb: 64\n")
    p = m.run("run", "--json", d, check=None, timeout=120)
    out = stdout_of(m, p)
    t = m.last_trace()
    if t["limits"]["memory"]["mechanism"] == "resident watch":
        assert p.returncode == 0 and "vmsplice refused 1" in out, (p.returncode, out)
        hits = [e for e in t["events"] if e["kind"] == "resource_limit_hit"]
        assert any(e["data"].get("syscall") == "vmsplice" for e in hits), hits
    else:  # a cgroup counts the pages the pipes keep (huge or not, as THP gives them)
        assert "vmsplice refused" not in out, out
        assert p.returncode == 137 or "pipes hold 256 bytes" in out, (p.returncode, out)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
