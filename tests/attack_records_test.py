#!/usr/bin/env python3
"""Attack tests for the records a flood leaves (issue 14, items 5 and 6): a
skill that makes hundreds of thousands of refused calls must not make the
trace undercount them (the kept event list is capped; the counts are not),
nor flood the --json stream or the audit log with copies of one event.
Each test runs as root and again as an unprivileged user, through
sandbox_test.py's harness. Prints TAP.

Usage: attack_records_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

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
    assert t["output"]["trace_events_dropped"] > 0  # the list was capped, the counts were not
    assert len(t["events"]) <= 40000 + 10


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
