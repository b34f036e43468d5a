#!/usr/bin/env python3
"""Nothing lost (issue 19): whatever ends a run -- the skill's exit, the
timeout, Ctrl-C on a terminal, SIGINT, SIGTERM or SIGHUP to skillgate, a
crash or a SIGKILL of the broker, a disk that fills -- the run has a trace
and an audit record that say how it ended, the audit log verifies, and no
process of the sandbox is left. A broker that died leaves its run's journal;
the next start of skillgate writes the records from it. Each test runs as
root and as an unprivileged user through sandbox_test.py's harness. Prints
TAP.

Usage: endings_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import glob
import json
import os
import random
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

SLOW = """
import time
print("started", flush=True)
for i in range({ticks}):
    print("tick", i, flush=True)
    time.sleep(0.05)
"""


def command(m, *args):
    cmd = [h.SG, *args]
    if h.IS_ROOT and m.uid:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    return cmd


def env_of(m, state=None):
    # the sanitizer build would take the broker's SIGSEGV for its own report:
    # a crash here is the kernel's default, as on a user's machine
    return {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": state or m.state,
            "LANG": "C.UTF-8", "ASAN_OPTIONS": "handle_segv=0"}


def start(m, *args, state=None):
    """skillgate in the background, its stdout a pipe, no terminal."""
    return subprocess.Popen(command(m, *args), env=env_of(m, state), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd="/")


def wait_for_line(proc, want, timeout=30):
    buf = b""
    end = time.monotonic() + timeout
    while want.encode() not in buf and time.monotonic() < end:
        r, _, _ = select.select([proc.stdout], [], [], 0.2)
        if r:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
    assert want.encode() in buf, f"never saw {want!r}: {buf[-500:]!r}"


def finish(proc, timeout=30):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def survivors(tag):
    return subprocess.run(["pgrep", "-f", tag], capture_output=True).stdout


def assert_none_left(tag):
    for _ in range(50):
        if not survivors(tag):
            return
        time.sleep(0.1)
    raise AssertionError(f"processes of the run survived: {survivors(tag)!r}")


def run_records(state):
    log = os.path.join(state, "skillgate", "audit.jsonl")
    if not os.path.exists(log):
        return []
    recs = []
    for line in open(log, encoding="utf-8", errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "run":
            recs.append(r)
    return recs


def traces(state):
    return sorted(glob.glob(os.path.join(state, "skillgate", "traces", "*.json")),
                  key=os.path.getmtime)


def journals(state):
    return glob.glob(os.path.join(state, "skillgate", "runs", "*.journal"))


def assert_recorded(m, status, reason, state=None, record_reason=None):
    """The last trace and the last run record agree on how the run ended
    (the record may have been written at the end, before the trace was
    recovered: record_reason), the chain verifies, and no journal is left."""
    state = state or m.state
    t = json.load(open(traces(state)[-1]))
    assert t["status"] == status and reason in t["end_reason"], (t["status"], t["end_reason"])
    rec = run_records(state)[-1]
    assert rec["run_id"] == t["trace_id"], (rec["run_id"], t["trace_id"])
    assert rec["end_reason"] in (record_reason or (t["end_reason"],)), rec
    assert journals(state) == [], journals(state)
    p = subprocess.run(command(m, "audit", "verify"), env=env_of(m, state), capture_output=True,
                       text=True, cwd="/")
    assert p.returncode == 0 and "chain intact" in p.stdout, (p.stdout, p.stderr)
    return t, rec


@test()
def every_ending_leaves_a_true_record(m, base):
    """Each way a run ends, from outside skillgate: the exit status a user
    expects, a trace and an audit record naming the ending, a chain that
    verifies, nothing of the sandbox left running. A killed or crashed
    broker's run is written at the next start, which says so."""
    d = h.make_skill(base, f"slow-{m.name}", SLOW.format(ticks=400))
    tag = d + "/"
    cases = [(signal.SIGINT, 130, "interrupted", "interrupted by SIGINT"),
             (signal.SIGTERM, 143, "interrupted", "interrupted by SIGTERM"),
             (signal.SIGHUP, 129, "interrupted", "interrupted by SIGHUP"),
             (signal.SIGKILL, -9, "incomplete", "broker killed: recovered from the journal"),
             (signal.SIGSEGV, -11, "incomplete", "broker crashed (SIGSEGV): recovered")]
    for sig, code, status, reason in cases:
        before = len(traces(m.state))
        proc = start(m, "run", d)
        wait_for_line(proc, "tick 3")
        os.kill(proc.pid, sig)
        rc, out, err = finish(proc)
        assert rc == code, (sig, rc, err[-800:])
        assert_none_left(tag)
        if status == "incomplete":
            assert len(traces(m.state)) == before, "the killed broker wrote a trace?"
            assert len(journals(m.state)) == 1, journals(m.state)
            p = m.run("list", "/nonexistent-folder", check=None)  # any command recovers
            assert "recovered the run" in p.err and reason in p.err, p.err
            p = m.run("list", "/nonexistent-folder", check=None)
            assert "recovered" not in p.err, p.err  # said once
        t, rec = assert_recorded(m, status, reason)
        assert rec["status"] == status, rec
        ticks = [e for e in t["events"] if e["kind"] == "stdout" and "tick" in e["message"]]
        assert len(ticks) >= (1 if status == "incomplete" else 4), (sig, len(ticks))
    # the skill's own exit, and the timeout
    quick = h.make_skill(base, f"quick-{m.name}", "import sys\nprint('hi')\nsys.exit(3)\n")
    p = m.run("run", quick, check=3)
    assert_recorded(m, "completed", "exited with status 3")
    p = m.run("run", "-t", "1", d, check=124)
    assert_recorded(m, "timeout", "killed after the 1s timeout")
    assert_none_left(tag)


@test()
def ctrl_c_on_a_terminal_stops_the_run_and_records_it(m, base):
    """Ctrl-C typed on the terminal skillgate runs on: the whole sandbox
    stops, exit status 130, the records say "interrupted by SIGINT"."""
    d = h.make_skill(base, f"slowtty-{m.name}", SLOW.format(ticks=400))
    rc, out = h.run_in_pty(m, ["run", d], [("tick 3", "\x03")], timeout=30)
    assert rc == 130, (rc, out[-800:])
    assert_none_left(d + "/")
    assert_recorded(m, "interrupted", "interrupted by SIGINT")


@test()
def a_second_signal_gives_the_records_two_seconds(m, base):
    """Two SIGTERMs in a row: skillgate is gone within the grace period, and
    the run has its records (written then, or from its journal at the next
    start)."""
    d = h.make_skill(base, f"twice-{m.name}", SLOW.format(ticks=400))
    proc = start(m, "run", d)
    wait_for_line(proc, "tick 2")
    t0 = time.monotonic()
    os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGTERM)
    rc, out, err = finish(proc)
    assert time.monotonic() - t0 < 3.5, time.monotonic() - t0
    assert rc == 143, (rc, err[-500:])
    assert_none_left(d + "/")
    m.run("list", "/nonexistent-folder", check=None)
    t = json.load(open(traces(m.state)[-1]))
    assert t["status"] in ("interrupted", "incomplete"), t["status"]
    assert journals(m.state) == [] and run_records(m.state)[-1]["run_id"] == t["trace_id"]


class SmallDisk:
    """A tmpfs of its own for the state folder (root mounts it; the user
    mode gets it chowned)."""

    def __init__(self, m, base, mib=40):
        if not h.IS_ROOT:
            raise h.Skip("a small tmpfs for the state folder needs root to mount")
        self.path = os.path.join(base, f"small-{m.name}")
        os.makedirs(self.path)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0700", "tmpfs",
                        self.path], check=True)
        os.chown(self.path, m.uid, m.uid)
        self.fill = os.path.join(self.path, "fill")

    def leave(self, mib):
        """Fill it until about mib MiB are left (0: full)."""
        st = os.statvfs(self.path)
        free = st.f_bavail * st.f_frsize - mib * (1 << 20)
        with open(self.fill, "ab") as f:
            chunk = b"\0" * (1 << 20)
            try:
                while free > 0:
                    n = min(free, len(chunk))
                    f.write(chunk[:n])
                    free -= n
                f.flush()
            except OSError:
                pass

    def empty(self):
        if os.path.exists(self.fill):
            os.unlink(self.fill)

    def close(self):
        subprocess.run(["umount", "-l", self.path], check=False)


@test()
def no_record_no_run_and_a_full_disk_loses_nothing(m, base):
    """Before launch: no room for the records, no run (74, the skill never
    starts), unless --no-records, which says so. During the run: the disk
    fills, the run ends 74 with its journal kept, and the next start writes
    its trace (with how it really ended) and its audit record; the log
    never ends in half a record."""
    disk = SmallDisk(m, base)
    try:
        quick = h.make_skill(base, f"q-{m.name}", "print('RAN')\n")
        disk.leave(8)
        p = m.run("run", quick, env={"XDG_STATE_HOME": disk.path})
        assert p.returncode == 74 and "RAN" not in p.out, (p.returncode, p.out, p.err)
        assert "records cannot be kept" in p.err and "--no-records" in p.err, p.err
        p = m.run("run", "--no-records", quick, env={"XDG_STATE_HOME": disk.path})
        assert p.returncode == 0 and "RAN" in p.out, (p.returncode, p.out, p.err)
        assert "running anyway (--no-records)" in p.err, p.err
        rec = run_records(disk.path)[-1]  # it fitted: the record says how it ran
        assert "--no-records" in rec.get("records", ""), rec
        disk.empty()
        d = h.make_skill(base, f"filler-{m.name}", SLOW.format(ticks=60))
        proc = start(m, "run", d, state=disk.path)
        wait_for_line(proc, "tick 2")
        disk.leave(0)
        rc, out, err = finish(proc)
        assert rc == 74, (rc, err[-800:])
        assert "journal stays" in err, err
        assert len(journals(disk.path)) == 1
        disk.empty()
        p = m.run("list", "/nonexistent-folder", env={"XDG_STATE_HOME": disk.path})
        assert "recovered the run" in p.err, p.err
        # the trace did not fit on the full disk; the record may have (a few
        # bytes in the log's last page), said as it ended, or was written
        # from the journal with the trace
        t, rec = assert_recorded(m, "completed", "written from the journal", state=disk.path,
                                 record_reason=("exited with status 0",
                                                "exited with status 0; its records were written "
                                                "from the journal at the next start"))
        assert t["exit_code"] == 0 and rec["status"] == "success", (t["exit_code"], rec)
        p = m.run("audit", "verify", env={"XDG_STATE_HOME": disk.path}, check=0)
        assert "torn" not in p.out + p.err, p.out + p.err
    finally:
        disk.close()


@test()
def two_hundred_kills_at_random_moments_then_one_start(m, base):
    """SIGKILL at a random moment of each of 200 runs in a row (bounded in
    time): before the launch, during the run, while the records are
    written, and while the next start recovers the run before it. Then one
    more start: every run that got as far as its journal has its trace and
    audit record, the chain verifies, nothing runs and no journal is left."""
    d = h.make_skill(base, f"victim-{m.name}", "echo started\nsleep 0.1\necho done\n",
                     lang="bash")
    first = len(traces(m.state))
    rng = random.Random(19)
    deadline = time.monotonic() + 90
    runs = 0
    while runs < 200 and time.monotonic() < deadline:
        proc = subprocess.Popen(command(m, "run", d), env=env_of(m), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd="/")
        time.sleep(rng.uniform(0, 0.3))
        proc.kill()
        proc.wait()
        runs += 1
    assert runs >= 50, f"only {runs} runs in the time allowed"
    assert_none_left(d + "/")
    # each start recovered the run killed before it: the last one's journal,
    # if its kill landed inside it, is left for this start
    before = len(traces(m.state))
    orphans = len(journals(m.state))
    p = m.run("list", "/nonexistent-folder", check=None)
    assert p.err.count("recovered the run") == orphans, (orphans, p.err[-2000:])
    assert journals(m.state) == []
    assert len(traces(m.state)) == before + orphans
    recs = run_records(m.state)
    ids = {json.load(open(t))["trace_id"] for t in traces(m.state)}
    assert {r["run_id"] for r in recs} == ids, "a trace without a record, or the reverse"
    assert len(recs) == len(ids)
    p = m.run("audit", "verify", check=0)
    assert "chain intact" in p.out, p.out
    mine = [json.load(open(t)) for t in traces(m.state)[first:]]
    lost = [t for t in mine if t["status"] == "incomplete"]
    assert all("broker killed" in t["end_reason"] for t in lost), [t["end_reason"] for t in lost]
    assert len(lost) >= runs // 10, f"only {len(lost)} kills of {runs} landed inside a run"
    print(f"# {runs} runs, {len(mine)} traces, {len(lost)} of them written from a journal")

KILL_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* SG_TEST_KILL_AT names the step of a run's end at which the broker is
 * SIGKILLed (the test's shim, not the product's):
 *   audit-written  the audit log's fsync (its lines written, lock let go)
 *   trace-staged   the trace's rename (its temporary file synced)
 *   trace-named    the traces folder's fsync (after the rename) */
static int at(const char *step)
{
    const char *k = getenv("SG_TEST_KILL_AT");
    return k && !strcmp(k, step);
}
static int fd_ends(int fd, const char *tail)
{
    char p[64], t[4096];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(p, t, sizeof t - 1);
    if (n <= 0)
        return 0;
    t[n] = 0;
    size_t l = strlen(tail);
    return (size_t)n >= l && !strcmp(t + n - l, tail);
}
int fsync(int fd)
{
    int (*real)(int) = dlsym(RTLD_NEXT, "fsync");
    if ((at("audit-written") && fd_ends(fd, "/audit.jsonl")) ||
        (at("trace-named") && fd_ends(fd, "/traces")))
        kill(getpid(), SIGKILL);
    return real(fd);
}
int renameat2(int a, const char *o, int b, const char *n, unsigned f)
{
    int (*real)(int, const char *, int, const char *, unsigned) = dlsym(RTLD_NEXT, "renameat2");
    if (at("trace-staged") && strstr(o, ".json.tmp"))
        kill(getpid(), SIGKILL);
    return real(a, o, b, n, f);
}
"""


def kill_shim(base):
    shim = os.path.join(base, "kill-shim.so")
    if os.path.exists(shim):
        return shim
    src = shim[:-3] + ".c"
    with open(src, "w") as f:
        f.write(KILL_SHIM)
    try:
        subprocess.run(["cc", "-shared", "-fPIC", "-o", shim, src, "-ldl"], check=True,
                       timeout=60, capture_output=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise h.Skip(f"no C compiler for the shim: {e}")
    os.chmod(base, 0o755)
    return shim


@test()
def a_broker_killed_at_each_step_of_the_end_writes_each_record_once(m, base):
    """The broker SIGKILLed at each step of a run's end -- its audit lines
    written but not synced, its trace synced but not named, its trace named
    but the folder not synced -- while another run goes on, which ends
    before the next start (its record lands after the killed run's). The next start writes
    what is missing and only that: exactly one run record and one trace
    for the killed run, no temporary file and no journal left, and the
    chain and every trace's head verify. (Recovery once looked only at the
    log's last record: a run ended meanwhile made it append a second.)"""
    shim = kill_shim(base)
    d = h.make_skill(base, f"end-{m.name}", "print('ran', flush=True)\n")
    other = h.make_skill(base, f"other-{m.name}",
                         "import time\nprint('started', flush=True)\ntime.sleep(1.5)\n")
    for step in ("audit-written", "trace-staged", "trace-named"):
        st = os.path.join(base, f"state-kill-{step}-{m.name}")
        os.makedirs(st)
        if h.IS_ROOT and m.uid:
            os.chown(st, m.uid, m.uid)
        # a run that ends after the killed one: its record lands after the
        # killed run's, before anyone recovers that
        slow = start(m, "run", "--prompt", "deny", other, state=st)
        wait_for_line(slow, "started")
        env = env_of(m, st)
        env.update({"LD_PRELOAD": shim, "SG_TEST_KILL_AT": step,
                    "ASAN_OPTIONS": "handle_segv=0:verify_asan_link_order=0"})
        p = subprocess.run(command(m, "run", "--prompt", "deny", d), env=env, capture_output=True,
                           stdin=subprocess.DEVNULL, cwd="/", timeout=60)
        assert p.returncode == -9, (step, p.returncode, p.stderr[-800:])
        assert len(journals(st)) == 2, (step, journals(st))  # its own and the slow one's
        rc, _, err = finish(slow)
        assert rc == 0, (step, err[-800:])
        p2 = m.run("list", "/nonexistent-folder", env={"XDG_STATE_HOME": st})
        assert "recovered the run" in p2.err, (step, p2.err[-800:])
        p2 = m.run("list", "/nonexistent-folder", env={"XDG_STATE_HOME": st})
        assert "recovered" not in p2.err, (step, p2.err[-800:])
        assert journals(st) == [], (step, journals(st))
        recs = run_records(st)
        killed = [r for r in recs if r["skill"] == f"end-{m.name}"]
        assert len(killed) == 1, (step, [(r["run_id"], r["end_reason"]) for r in killed])
        mine = [t for t in traces(st) if f"-end-{m.name}-" in os.path.basename(t)]
        assert len(mine) == 1, (step, mine)
        t = json.load(open(mine[0]))
        assert t["trace_id"] == killed[0]["run_id"] and killed[0]["trace"] == mine[0], \
            (step, t["trace_id"], killed[0])
        assert t["audit_head"]["seq"] == killed[0]["seq"], (step, t["audit_head"], killed[0])
        left = glob.glob(os.path.join(st, "skillgate", "traces", "*.tmp"))
        assert left == [], (step, left)
        assert len(recs) == 2 and len(traces(st)) == 2, (step, len(recs), len(traces(st)))
        v = subprocess.run(command(m, "audit", "verify"), env=env_of(m, st), capture_output=True,
                           text=True, cwd="/")
        assert v.returncode == 0 and "chain intact" in v.stdout, (step, v.stdout, v.stderr)
        assert "traces: 2 name a record" in v.stdout, (step, v.stdout)


@test()
def runs_ending_together_each_have_their_records(m, base):
    """Eight runs at once, four times (their audit lines share the log's
    lock and its fsyncs): every run has one record and one trace, and the
    chain and every trace's head verify."""
    st = os.path.join(base, f"state-together-{m.name}")
    os.makedirs(st)
    if h.IS_ROOT and m.uid:
        os.chown(st, m.uid, m.uid)
    d = h.make_skill(base, f"together-{m.name}", "print('x')\n")
    ids = []
    for _ in range(4):
        procs = [subprocess.Popen(command(m, "run", "--prompt", "deny", d), env=env_of(m, st),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, cwd="/") for _ in range(8)]
        for p in procs:
            _, err = p.communicate(timeout=60)
            assert p.returncode == 0, err[-800:]
    recs = run_records(st)
    ids = [r["run_id"] for r in recs]
    assert len(ids) == 32 and len(set(ids)) == 32, len(ids)
    assert {json.load(open(t))["trace_id"] for t in traces(st)} == set(ids)
    v = subprocess.run(command(m, "audit", "verify"), env=env_of(m, st), capture_output=True,
                       text=True, cwd="/")
    assert v.returncode == 0 and "traces: 32 name a record" in v.stdout, (v.stdout, v.stderr)


def all_records(state):
    """Every record of the chain, through the rotated files, in order."""
    folder = os.path.join(state, "skillgate")
    names = sorted(x for x in os.listdir(folder) if x.startswith("audit.") and x != "audit.jsonl")
    recs = []
    for x in names + ["audit.jsonl"]:
        for line in open(os.path.join(folder, x), encoding="utf-8", errors="replace"):
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


@test()
def a_killed_runs_record_is_found_after_many_rotations(m, base):
    """A broker SIGKILLed after its audit lines are written; runs that were
    already going (a start would recover it, an end does not: the same
    holds for an MCP server or the TUI running run after run) end after it
    and rotate the log several times (audit_rotate_kb 16). The next start
    finds the killed run's record, however many files back it is, and
    appends no second one. (The look-up once stopped after 4 files or
    64 MiB and then appended again.)"""
    shim = kill_shim(base)
    st = os.path.join(base, f"state-rotkill-{m.name}")
    cfg = os.path.join(base, f"cfg-rotkill-{m.name}")
    os.makedirs(st)
    os.makedirs(os.path.join(cfg, "skillgate"))
    with open(os.path.join(cfg, "skillgate", "config.yaml"), "w") as f:
        f.write("audit_rotate_kb: 16\n")
    for x in (st, cfg, os.path.join(cfg, "skillgate"), os.path.join(cfg, "skillgate", "config.yaml")):
        if h.IS_ROOT and m.uid:
            os.chown(x, m.uid, m.uid)
    d = h.make_skill(base, f"rk-{m.name}", "print('ran', flush=True)\n")
    chatty = h.make_skill(base, f"rkc-{m.name}", "import time\nprint('started', flush=True)\n"
                          "import sys\ntime.sleep(2)\nprint('\\u00e9' * 2048)\n"
                          "print('\\u00e9' * 2048, file=sys.stderr)\n")
    env = env_of(m, st)
    env["XDG_CONFIG_HOME"] = cfg
    going = []
    for _ in range(20):
        p = subprocess.Popen(command(m, "run", "--prompt", "deny", chatty), env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, cwd="/")
        going.append(p)
    for p in going:
        wait_for_line(p, "started")
    kenv = dict(env)
    kenv.update({"LD_PRELOAD": shim, "SG_TEST_KILL_AT": "audit-written",
                 "ASAN_OPTIONS": "handle_segv=0:verify_asan_link_order=0"})
    p = subprocess.run(command(m, "run", "--prompt", "deny", d), env=kenv, capture_output=True,
                       stdin=subprocess.DEVNULL, cwd="/", timeout=60)
    assert p.returncode == -9, (p.returncode, p.stderr[-800:])
    for p in going:
        rc, _, err = finish(p)
        assert rc == 0, err[-800:]
    folder = os.path.join(st, "skillgate")
    rotated = [x for x in os.listdir(folder) if x.startswith("audit.") and x != "audit.jsonl"]
    assert len(rotated) >= 5, rotated
    p = subprocess.run(command(m, "list", "/nonexistent-folder"), env=env, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, cwd="/")
    assert "recovered the run" in p.stderr, p.stderr[-800:]
    killed = [r for r in all_records(st) if r.get("type") == "run" and r["skill"] == f"rk-{m.name}"]
    assert len(killed) == 1, [(r["run_id"], r["seq"], r["end_reason"]) for r in killed]
    v = subprocess.run(command(m, "audit", "verify"), env=env, capture_output=True, text=True,
                       cwd="/")
    assert v.returncode == 0 and "chain intact" in v.stdout, (v.stdout, v.stderr)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
