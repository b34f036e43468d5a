#!/usr/bin/env python3
"""Attack tests for the records a flood leaves (issue 14, items 5 and 6): a
skill that makes hundreds of thousands of refused calls must not make the
trace undercount them (the kept event list is capped; the counts are not),
nor flood the --json stream or the audit log with copies of one event.
And for the audit log's own integrity (issue 34, item 9): a changed last
record is not a "torn line", and records cut off the end are named by the
trace that saw them. Each test runs as root and again as an unprivileged
user, through sandbox_test.py's harness. Prints TAP.

Usage: attack_records_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import collections
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

with open(h.SG, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()

CALLS = 300000  # 7.5 times the trace's kept-event cap (2 x 20,000)


@test()
def a_flood_of_refusals_is_counted_exactly(m, base):
    """300,000 refused mount() calls: the trace once said 39,997 (the rest
    were dropped from its event list). The summary counts every one; the
    --json stream prints the first and then how many more, not 300,000
    lines."""
    name = f"flood-{m.name}"
    d = h.make_skill(base, name, f"""
        import ctypes
        mount = ctypes.CDLL(None, use_errno=True).mount
        refused = sum(mount(b"none", b"/tmp", b"tmpfs", 0, None) < 0 for _ in range({CALLS}))
        print("refused", refused)
        """)
    p = m.run("run", "--json", d, timeout=300, check=0)
    evs = m.events(p)
    out = "".join(e["message"] for e in evs if e["kind"] == "stdout")
    assert out == f"refused {CALLS}", out
    mounts = [e for e in evs if e["kind"] == "syscall_blocked" and "mount" in e["message"]]
    assert mounts and mounts[0]["message"] == "mount denied", mounts[:2]
    assert len(p.out.splitlines()) < 200, f"{len(p.out.splitlines())} lines of --json"
    told = sum(e["data"]["repeated"] for e in mounts if "repeated" in (e["data"] or {}))
    assert 1 + told == CALLS, (told, [e["message"] for e in mounts][-3:])
    t = m.last_trace()
    vs = t["violation_summary"]
    assert vs["total_enforcements"] == CALLS, vs["total_enforcements"]
    esc = {c["class"]: c for c in vs["classifications"]}["sandbox_escape_attempt"]
    assert esc["count"] == CALLS and esc["evidence"][0] == "mount denied", esc
    # the trace holds the flood as one event with a count, not 300,000
    kept = [e for e in t["events"] if e["kind"] == "syscall_blocked"]
    assert len(kept) == 1 and kept[0]["repeated"] == CALLS - 1, kept[:2]


@test()
def a_flood_of_different_refusals_keeps_the_broker_small(m, base):
    """A flood of refusals that differ (each a new path) cannot be folded
    into one: past 5,000 the trace's list stops growing (the summary still
    counts each) and the broker's memory with it. A flood of denied calls
    once took it to 135 MB."""
    d = h.make_skill(base, f"paths-{m.name}", """
        n = 0
        for i in range(60000):
            try:
                open(f"/etc/flood-{i}", "w")
            except OSError:
                n += 1
        print("refused", n)
        """)
    e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state, "LANG": "C.UTF-8"}
    cmd = ["/usr/bin/time", "-f", "maxrss %M", h.SG, "run", d]
    if h.IS_ROOT and m.uid != 0:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    p = h.subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=300, cwd="/")
    assert "refused 60000" in p.stdout, p.stdout + p.stderr
    rss_kb = int(p.stderr.rsplit("maxrss ", 1)[1].split()[0])
    t = m.last_trace()
    assert t["violation_summary"]["total_enforcements"] >= 60000
    assert len(t["events"]) <= 5000 + 20 and t["output"]["trace_events_dropped"] >= 55000
    print(f"# broker max RSS {rss_kb} kB for 60,000 different refusals")
    # AddressSanitizer keeps 256 MiB of freed memory in quarantine: RSS says
    # nothing of the broker there. The normal build (also run by the suite)
    # checks it; both builds check the trace's bound above.
    if not SANITIZED:
        assert rss_kb < 64 * 1024, f"broker RSS {rss_kb} kB"


def audit_lines(m):
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    return [json.loads(x) for x in open(log) if x.strip()] if os.path.exists(log) else []


@test()
def a_flood_of_refused_writes_leaves_a_bounded_log(m, base):
    """With no allowed-tools, each refused write was an fsync'd audit record:
    20,000 refused creates added 10 MB in 9 s. Now the first 20 different
    requests of a kind are records; the rest, and repeats, are counted in
    one record with the first and last time."""
    d = h.make_skill(base, f"creates-{m.name}", """
        import os
        refused = 0
        for i in range(20000):
            try:
                open(f"/etc/flood-{i}", "w")
            except OSError:
                refused += 1
        for i in range(3000):  # the same request again and again
            try:
                open("/etc/same", "w")
            except OSError:
                refused += 1
        print("refused", refused)
        """, tools='""')
    before = len(audit_lines(m))
    p = m.run("run", "--prompt", "deny", d, timeout=300, check=0)
    assert "refused 23000" in p.out, p.out + p.err
    new = audit_lines(m)[before:]
    assert len(new) <= 30, f"{len(new)} new audit records"
    single = [r for r in new if r.get("type") == "decision" and r["tool"] == "Write"]
    counted = [r for r in new if r.get("type") == "decisions" and r["tool"] == "Write"]
    assert len(single) == 20 and counted, (len(single), counted)
    total = len(single) + sum(r["count"] for r in counted)
    others = [r["request"] for r in single if "/etc/flood-" not in r["request"]
              and "/etc/same" not in r["request"]]
    assert total == 23000 + len(others), (total, others)  # python's own writes are asked too
    assert all(r["first"] <= r["last"] and r["examples"] for r in counted), counted
    v = m.run("audit", "verify")
    assert v.returncode == 0 and "chain intact" in v.out, v.out + v.err


def config_env(m, base, name, text):
    """A config.yaml holding text, owned by the mode's user, and the
    environment that points skillgate at it."""
    cfg = os.path.join(base, name)
    os.makedirs(os.path.join(cfg, "skillgate"))
    with open(os.path.join(cfg, "skillgate", "config.yaml"), "w") as f:
        f.write(text)
    for x in (cfg, os.path.join(cfg, "skillgate"), os.path.join(cfg, "skillgate", "config.yaml")):
        if h.IS_ROOT:
            os.chown(x, m.uid, m.uid)
    return {"XDG_CONFIG_HOME": cfg}


@test()
def the_audit_log_rotates_with_its_chain_whole(m, base):
    """The log rotates past audit_rotate_kb (config.yaml), each new file's
    first record chaining to the last of the one before; verify follows
    the files, and catches an old file changed or a middle one removed.
    trace_keep prunes the oldest traces."""
    env = config_env(m, base, f"cfg-{m.name}", "audit_rotate_kb: 16\ntrace_keep: 3\n")
    d = h.make_skill(base, f"chatty-{m.name}", "print('x' * 3000)\n")
    for _ in range(12):
        m.run("run", d, env=env, check=0)
    folder = os.path.join(m.state, "skillgate")
    rotated = sorted(x for x in os.listdir(folder) if x.startswith("audit.") and x != "audit.jsonl")
    assert len(rotated) >= 2, os.listdir(folder)
    first = json.loads(open(os.path.join(folder, "audit.jsonl")).readline())
    assert first["type"] == "rotation" and first["previous_file"] == rotated[-1], first
    v = m.run("audit", "verify", env=env)
    # what the records are (a run's refusals come before its run record)
    kinds = collections.Counter(
        (r["type"], r.get("decided_by", "")[:60]) for x in os.listdir(folder)
        if x.startswith("audit") for r in map(json.loads, open(os.path.join(folder, x))))
    said = " | ".join(v.out.strip().splitlines())  # one TAP comment line
    print(f"# {m.name}: {said}; records: {dict(kinds)}")
    assert v.returncode == 0 and f"in {len(rotated) + 1} files, chain intact" in v.out, v.out
    assert len(m.traces()) == 3, m.traces()  # trace_keep
    # a middle file removed: the chain breaks where it was
    mid = os.path.join(folder, rotated[len(rotated) // 2])
    saved = open(mid).read()
    os.rename(mid, mid + ".away")
    v = m.run("audit", "verify", env=env)
    assert v.returncode != 0 and "a file of the chain is missing or was changed" in v.out, v.out
    os.rename(mid + ".away", mid)
    # an old file changed: its own line is named (a run's record: the
    # refusals a run met come before it)
    oldest = os.path.join(folder, rotated[0])
    lines = open(oldest).read().splitlines(True)
    at = next(i for i, line in enumerate(lines) if '"exit_code":0' in line)
    lines[at] = lines[at].replace('"exit_code":0', '"exit_code":7')
    open(oldest, "w").write("".join(lines))
    v = m.run("audit", "verify", env=env)
    assert v.returncode != 0 and f"{rotated[0]}:{at + 1}:" in v.out, v.out
    assert open(mid).read() == saved


# ---- the log's integrity (issue 34, item 9) ----
# Each test keeps its records in a state folder of its own: the rotation
# test above leaves the mode's log changed on purpose.

def own_dir(m, path):
    os.makedirs(path, exist_ok=True)
    if h.IS_ROOT:
        os.chown(path, m.uid, m.uid)
    os.chmod(path, 0o700)
    return path


def new_state(m, base, tag):
    path = os.path.join(base, f"state-{tag}-{m.name}")
    shutil.rmtree(path, ignore_errors=True)
    return own_dir(m, path)


def state_copy(m, base, src, tag):
    """A copy of a state folder to tamper with, owned by whoever runs
    skillgate."""
    dst = os.path.join(base, f"state-{tag}-{m.name}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    if h.IS_ROOT:
        for root, dirs, files in os.walk(dst):
            for x in [root] + [os.path.join(root, f) for f in files]:
                os.lchown(x, m.uid, m.uid)
    return dst


def log_of(state):
    return os.path.join(state, "skillgate", "audit.jsonl")


@test()
def trace_keep_holds_without_listing_the_folder_each_run(m, base):
    """Retention without a listing of the whole folder per run: a count
    kept beside the traces says when it is full; then the oldest go, down
    to trace_keep less 1/32. A count that lies (garbage, or traces removed
    by hand) costs a listing, never a trace too many."""
    env = config_env(m, base, f"cfg-keep-{m.name}", "trace_keep: 40\n")
    d = h.make_skill(base, f"keep-{m.name}", "print('kept')\n")
    folder = os.path.join(m.state, "skillgate", "traces")
    most = 0
    for i in range(45):
        m.run("run", d, env=env, check=0)
        most = max(most, len(m.traces()))
    now = m.traces()
    assert most <= 40 and 39 <= len(now) <= 40, (most, len(now))
    count = open(os.path.join(folder, ".count")).read()
    assert count == f"{len(now)}\n", (count, len(now))
    # a count that lies: garbage, then too low by 30 (the folder is full)
    with open(os.path.join(folder, ".count"), "w") as f:
        f.write("many\n")
    m.run("run", d, env=env, check=0)
    assert len(m.traces()) <= 40, len(m.traces())
    with open(os.path.join(folder, ".count"), "w") as f:
        f.write("5\n")
    for _ in range(3):
        m.run("run", d, env=env, check=0)
    # too low: the folder may pass trace_keep until the recount (every 64
    # runs or when the count says full), by no more than the runs since
    assert len(m.traces()) <= 43, len(m.traces())
    print(f"# {m.name}: at most {most} of trace_keep 40 over 45 runs; {len(now)} left")


def traces_of(state):
    folder = os.path.join(state, "skillgate", "traces")
    return sorted((os.path.join(folder, x) for x in os.listdir(folder) if x.endswith(".json")),
                  key=os.path.getmtime)


def run_in(m, state, *args, **kw):
    return m.run(*args, env={"XDG_STATE_HOME": state}, **kw)


def three_runs(m, base, tag):
    """Three runs of a small skill in a state folder of their own, each a
    refused write (a decision record) and its run record: the log ends in
    the last one's run record, which its trace names as its head."""
    st = new_state(m, base, tag)
    d = h.make_skill(base, f"{tag}-{m.name}", """
        try:
            open("/etc/sg-not-yours", "w")
        except OSError:
            print("refused")
        """)
    for _ in range(3):
        run_in(m, st, "run", d, check=0)
    lines = open(log_of(st), "rb").read().splitlines(True)
    last = json.loads(lines[-1])
    assert last["type"] == "run", last
    t = json.load(open(traces_of(st)[-1]))
    assert t["audit_head"] == {"seq": last["seq"], "hash": last["hash"]}, (t.get("audit_head"), last)
    assert last["trace"] == traces_of(st)[-1], (last["trace"], traces_of(st)[-1])
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 0 and "chain intact" in v.out, v.out + v.err
    assert f"head: record #{last['seq']} {last['hash']}" in v.out, v.out
    assert "traces: 3 name a record" in v.out, v.out
    return st, lines


@test()
def a_changed_last_record_is_not_a_torn_line(m, base):
    """One byte of the last record changed so that it no longer parses:
    verify said "1 torn line (a crash mid-write) skipped ... chain intact"
    and exited 0. A crash leaves only a last line without its newline; a
    complete line that is no record fails, named by its line number."""
    orig, lines = three_runs(m, base, "edit-last")
    st = state_copy(m, base, orig, "edit-last-copy")
    bad = lines[-1].replace(b'"type":"run"', b'"type" "run"', 1)
    assert bad != lines[-1]
    open(log_of(st), "wb").write(b"".join(lines[:-1]) + bad)
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 1, (v.returncode, v.out, v.err)
    assert f"audit.jsonl:{len(lines)}: the chain breaks here" in v.out, v.out
    assert "not a record" in v.out and "chain intact" not in v.out, v.out
    # a byte that still parses: the hash says so, as before
    bad = lines[-1].replace(b'"status":"', b'"status":"x', 1)
    assert bad != lines[-1]
    open(log_of(st), "wb").write(b"".join(lines[:-1]) + bad)
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 1 and f":{len(lines)}: the chain breaks here: its hash" in v.out, v.out
    # a blank line put in the middle is no record either
    open(log_of(st), "wb").write(b"".join(lines[:3]) + b"\n" + b"".join(lines[3:]))
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 1 and "audit.jsonl:4: the chain breaks here" in v.out, v.out


@test()
def records_cut_off_the_end_are_named_by_a_trace(m, base):
    """The last record deleted, then the last three: the chain that is left
    holds, and verify said "chain intact". Each trace names the chain's
    head after its run's records, so a log that no longer holds it fails
    verify, naming the trace."""
    orig, lines = three_runs(m, base, "cut-end")
    names = [os.path.basename(t) for t in traces_of(orig)]
    st = state_copy(m, base, orig, "cut-end-copy")
    for cut, named in ((1, names[-1]), (3, names[-2])):  # the last run's records and more
        open(log_of(st), "wb").write(b"".join(lines[:-cut]))
        v = run_in(m, st, "audit", "verify")
        assert v.returncode == 1, (cut, v.returncode, v.out, v.err)
        assert named in v.out and "cut off its end" in v.out, v.out
        assert f"the log ends at record #{len(lines) - cut}" in v.out, v.out
    # the last record's newline taken away, so that it reads as a tear
    open(log_of(st), "wb").write(b"".join(lines)[:-1])
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 1 and "1 torn line" in v.out and names[-1] in v.out, v.out
    # the log replaced by a fresh one (a chain of its own)
    os.unlink(log_of(st))
    d = h.make_skill(base, f"fresh-{m.name}", "print('other')\n")
    for _ in range(len(lines)):  # as long as the old one: its records are other records
        run_in(m, st, "run", d, check=0)
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 1 and "another record" in v.out, v.out
    assert f"{len(names)} traces name a head it does not hold" in v.out, v.out


@test()
def a_crash_torn_last_line_is_still_a_tear(m, base):
    """What a crash mid-write really leaves, the last line without its
    newline, is reported and is not tampering; the next append takes it
    off and records it in the chain, so no complete line is left that is
    not a record."""
    st, _ = three_runs(m, base, "torn")
    half = b'{"type":"run","run_id":"torn'
    with open(log_of(st), "ab") as f:
        f.write(half)
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 0, (v.returncode, v.out, v.err)
    assert "1 torn line" in v.out and "ends the log" in v.out and "chain intact" in v.out, v.out
    d = h.make_skill(base, f"after-torn-{m.name}", "print('next')\n")
    run_in(m, st, "run", d, check=0)
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 0 and "chain intact" in v.out, v.out
    assert "1 torn line (a crash mid-write) taken off" in v.out, v.out
    recs = [json.loads(x) for x in open(log_of(st), "rb").read().splitlines()]  # all parse
    torn = [r for r in recs if r["type"] == "torn_line"]
    assert len(torn) == 1 and torn[0]["bytes"] == len(half), torn
    assert torn[0]["start"] == half.decode(), torn


@test()
def a_run_recovered_from_its_journal_names_its_head(m, base):
    """The broker killed mid-run: the next start writes the run's records,
    then its trace, which names the head; so cutting the recovered run's
    record off the log is caught too."""
    st = new_state(m, base, "killed")
    d = h.make_skill(base, f"killed-{m.name}", """
        import time
        print("started", flush=True)
        for i in range(400):
            print("tick", i, flush=True)
            time.sleep(0.05)
        """)
    env = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": st,
           "LANG": "C.UTF-8", "ASAN_OPTIONS": "handle_segv=0"}
    cmd = [h.SG, "run", d]
    if h.IS_ROOT and m.uid:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, cwd="/")
    try:
        buf, end = b"", time.monotonic() + 30
        while b"tick 2" not in buf and time.monotonic() < end:
            chunk = proc.stdout.read1(4096)
            if not chunk:
                break
            buf += chunk
        assert b"tick 2" in buf, buf[-300:]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    time.sleep(0.5)  # the sandbox goes with its broker
    p = run_in(m, st, "list", "/nonexistent-folder")
    assert "recovered the run" in p.err, p.err
    lines = open(log_of(st), "rb").read().splitlines(True)
    last = json.loads(lines[-1])
    t = json.load(open(traces_of(st)[-1]))
    assert t["status"] == "incomplete" and t["trace_id"] == last["run_id"], (t["status"], last)
    assert t["audit_head"] == {"seq": last["seq"], "hash": last["hash"]}, t.get("audit_head")
    assert last["trace"] == traces_of(st)[-1], (last["trace"], traces_of(st)[-1])
    v = run_in(m, st, "audit", "verify")
    assert v.returncode == 0 and "chain intact" in v.out, v.out
    cut = state_copy(m, base, st, "killed-copy")
    open(log_of(cut), "wb").write(b"".join(lines[:-1]))
    v = run_in(m, cut, "audit", "verify")
    assert v.returncode == 1 and os.path.basename(traces_of(st)[-1]) in v.out, v.out


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
