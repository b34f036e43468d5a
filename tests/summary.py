#!/usr/bin/env python3
"""Turn meson's test logs into one count of test cases.

Each cmocka program and the CLI test print TAP, so every case is counted, not
just every program; a program that fails outside its cases (a crash, an ASan
report at exit) counts as one more failure. The last line is
"N passed, N failed" (", N skipped" when some were skipped), as CI expects;
each skip is listed right above it with its reason.
Above the counts, the last lines of each failed case's diagnostics (its
"# " lines: the assertion and what it saw), so that a log that keeps only
its tail still says why.
Above the counts, each suite's time in each build (seconds), so that a
suite that grows slow shows.
Exit status 1 when anything failed or a build ran no test at all.
"""
import json
import os
import re
import sys

DIAG_LINES = 6     # of each failed case's diagnostics, its last
DIAG_WIDTH = 400   # characters of each such line
TAP = re.compile(r"^(ok|not ok)\b(?:\s+\d+)?(?:\s*-\s*)?([^#]*)(#\s*(SKIP|TODO)\S*\s*(.*))?$")


def count(build):
    path = os.path.join(build, "meson-logs", "testlog.json")
    passed = failed = skipped = 0
    failures, skips, why = [], [], []
    if not os.path.exists(path):
        return 0, 1, 0, [f"{build}: no test log (the tests did not run)"], [], []
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for r in records:
        name = r["name"].split(":", 1)[-1].strip()
        cases = []
        diag = {}
        for line in (r.get("stdout") or "").splitlines():
            m = TAP.match(line)
            if m:
                cases.append((m.group(1) == "ok", m.group(2).strip(), m.group(4),
                              (m.group(5) or "").strip()))
            elif line.startswith("#") and cases:
                diag.setdefault(len(cases) - 1, []).append(line)
        if r["result"] == "SKIP" and not cases:
            skipped += 1
            skips.append(f"{build}: {name}: the whole program skipped")
            continue
        for n, (ok, case, directive, reason) in enumerate(cases):
            if directive == "SKIP":
                skipped += 1
                skips.append(f"{build}: {name}: {case}: {reason or 'no reason given'}")
            elif ok:
                passed += 1
            else:
                failed += 1
                failures.append(f"{build}: {name}: {case}")
                why.append((f"{build}: {name}: {case}", diag.get(n, [])[-DIAG_LINES:]))
        case_failed = any(not ok for ok, _, _, _ in cases)
        if r["result"] not in ("OK", "EXPECTEDFAIL", "SKIP") and not case_failed:
            failed += 1
            failures.append(f"{build}: {name}: {r['result']} (exit {r.get('returncode')})")
        elif not cases and r["result"] == "OK":
            passed += 1
    if not records:
        failed += 1
        failures.append(f"{build}: ran no test")
    return passed, failed, skipped, failures, skips, why


def times(builds):
    """Each suite's seconds in each build, as a table."""
    t = {}
    for b in builds:
        path = os.path.join(b, "meson-logs", "testlog.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    name = r["name"].split(":", 1)[-1].strip()
                    t.setdefault(name, {})[b] = r.get("duration", 0.0)
    w = max([len(n) for n in t] + [5])
    print(f"{'suite':<{w}}" + "".join(f" {b:>11}" for b in builds))
    for name in sorted(t, key=lambda n: -max(t[n].values())):
        print(f"{name:<{w}}" + "".join(
            f" {t[name][b]:>10.1f}s" if b in t[name] else f" {'-':>11}" for b in builds))
    print(f"{'total':<{w}}" + "".join(
        f" {sum(v.get(b, 0) for v in t.values()):>10.1f}s" for b in builds))


def main(builds):
    times(builds)
    tp = tf = ts = 0
    allfail, allskip, counts = [], [], []
    for b in builds:
        p, f, s, fl, sk, why = count(b)
        counts.append(f"{b}: {p} passed, {f} failed, {s} skipped")
        tp, tf, ts = tp + p, tf + f, ts + s
        allfail += fl
        allskip += sk
        for case, lines in why:
            print(f"why {case} failed:")
            for line in lines or ["# (it printed no diagnostics)"]:
                print(f"  {line[:DIAG_WIDTH]}")
    for line in counts:
        print(line)
    for line in allfail:
        print(f"FAILED {line}")
    for line in allskip:
        print(f"SKIPPED {line}")
    print(f"{tp} passed, {tf} failed" + (f", {ts} skipped" if ts else ""))
    return 1 if tf else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
