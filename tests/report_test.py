#!/usr/bin/env python3
"""`skillgate traces report` (issue 38, item 13): one run as one
self-contained HTML or Markdown file. Real example skills run (as root and
as an unprivileged user, through sandbox_test.py's harness), then their
traces are reported by run id and by path, in both formats; a hostile skill
of our own (tests/report/skills/hostile-report) prints script, HTML, event
handlers, Markdown links and images, backticks, terminal sequences and
bidi controls, and names a path with them: its report must show every one
as text. Last, the HTML reports are loaded in a real browser (Debian's
headless chromium driven by puppeteer-core, pinned in
tests/report/package-lock.json; scripts/dev runs `npm ci` there) with every
request but the page itself refused: no console error, no page error, no
dialog, no script run, and a screenshot of each in
build/meson-logs/report-screens/ (or $SG_REPORT_SCREENS).

Where chromium or tests/report/node_modules is missing, the browser test
fails with the reason when CI is set and is skipped with it otherwise (this
test never runs npm itself: it sends no packet anywhere). Every name the
skills reach for is reserved (*.test) and refused by the sandbox's DNS stub.
Prints TAP.

Usage: report_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402
from htmltags import Tags  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
REPORTDIR = os.path.join(h.SRC, "tests", "report")
HOSTILE = os.path.join(REPORTDIR, "skills", "hostile-report")
SECTIONS = ["verdict", "summary", "manifest", "timeline", "decisions", "refusals", "output",
            "diff", "reproduce"]
MD_HEADINGS = ["## Run", "## Skill and manifest", "## Verdict and classes", "## Timeline",
               "## Decisions", "## Refused attempts", "## Output",
               "## Against the previous version", "## Reproduce"]
CSP = ("default-src 'none'; style-src 'sha256-")
BIDI = [chr(c) for c in (*range(0x202a, 0x202f), *range(0x2066, 0x206a), 0x200e, 0x200f)]
# what our pages are made of: any other tag or attribute came from a skill
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "section",
        "table", "tr", "th", "td", "ul", "li", "em", "span", "pre", "svg", "rect", "line",
        "text", "footer"}
ATTRS = {"lang", "charset", "http-equiv", "content", "name", "id", "class", "xmlns", "role",
         "width", "height", "viewbox", "x", "y", "x1", "y1", "x2", "y2", "fill", "stroke",
         "font-size", "text-anchor"}


def check_html(page):
    """The page's tags and attributes are only ours; returns its text."""
    assert page.startswith("<!DOCTYPE html>"), page[:200]
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}' in page, page[:600]
    assert "<script" not in page.lower(), "a <script> in the report"
    p = Tags(TAGS, ATTRS)
    p.feed(page)
    p.close()
    assert not p.bad, p.bad[:10]
    for sec in SECTIONS:
        assert f'<section id="{sec}">' in page, sec
    assert "<svg " in page, "no timeline"
    return "".join(p.text)


def md_outside_code(md):
    """What a Markdown renderer would not show as code: fenced blocks and
    code spans taken out (CommonMark's rules: a span closes with a backtick
    run of the same length)."""
    out, lines, i = [], md.split("\n"), 0
    while i < len(lines):  # bounded: i grows every turn
        m = re.match(r"^(`{3,})", lines[i])
        if m:
            fence = m.group(1)
            i += 1
            while i < len(lines) and not re.fullmatch(f"`{{{len(fence)},}}\\s*", lines[i]):
                i += 1
            i += 1
            continue
        out.append(lines[i])
        i += 1
    text, kept, j = "\n".join(out), [], 0
    while j < len(text):  # bounded: j grows every turn
        m = re.compile(r"`+").search(text, j)
        if not m:
            kept.append(text[j:])
            break
        kept.append(text[j:m.start()])
        close = re.compile(r"(?<!`)" + "`" * len(m.group(0)) + r"(?!`)").search(text, m.end())
        if not close:
            kept.append(m.group(0))
            j = m.end()
            continue
        j = close.end()
    return "".join(kept)


def check_md(md):
    for hd in MD_HEADINGS:
        assert "\n" + hd + "\n" in md, hd
    bare = md_outside_code(md)
    for bad in ("<", "javascript:", "](", "onerror", "\x1b"):
        assert bad not in bare, (bad, [x for x in bare.splitlines() if bad in x][:5])
    return bare


def no_raw_controls(text):
    for c in BIDI + ["\x1b", "\x07", "\x08", "\x7f", "\u009b"]:
        assert c not in text, f"a raw U+{ord(c):04X} in the report"


def traces_of(m, skill):
    out = []
    for p in m.traces():
        with open(p) as f:
            t = json.load(f)
        if t["skill_name"] == skill:
            out.append((p, t))
    return out


def run_weather_twice(m, base):
    """weather, then the same skill with other code: a previous version."""
    d = os.path.join(base, "w", "weather")
    shutil.copytree(os.path.join(h.EXAMPLES, "weather"), d)
    for root, dirs, files in os.walk(os.path.dirname(d)):
        os.chmod(root, 0o755)
    m.run("run", "--prompt", "deny", "-i", '{"city": "Oslo"}', d, check=1)
    with open(os.path.join(d, "main.py"), "a") as f:
        f.write("\n# version two\n")
    m.run("run", "--prompt", "deny", "-i", '{"city": "Oslo"}', d, check=1)
    runs = traces_of(m, "weather")[-2:]  # the mode's state folder holds other tests' too
    assert len(runs) == 2 and runs[0][1]["skill_root"] == runs[1][1]["skill_root"] == d, \
        [p for p, _ in runs]
    assert runs[0][1]["skill_digest"] != runs[1][1]["skill_digest"]
    return runs


def run_malicious(m, base):
    """malicious-weather under a policy file: decisions made by a rule."""
    pol = os.path.join(base, "policy.yaml")
    with open(pol, "w") as f:
        f.write('deny:\n  - "Fetch(collector.attacker.test)"\n')
    os.chmod(pol, 0o644)
    m.run("run", "--policy", pol, "-i", '{"city": "Oslo"}',
          os.path.join(h.EXAMPLES, "malicious-weather"), check=0, timeout=90)
    return traces_of(m, "malicious-weather")[-1]


def run_hostile(m):
    m.run("run", "--prompt", "deny", HOSTILE, check=0)
    return traces_of(m, "hostile-report")[-1]


def kinds(t, pred):
    return [e for e in t["events"] if pred(e)]


@test()
def reports_an_example_by_run_id_and_by_path(m, base):
    (p1, t1), (p2, t2) = run_weather_twice(m, base)
    out = os.path.join(m.home, "weather.html")
    m.run("traces", "report", t2["trace_id"], "--html", "-o", out, check=0)
    with open(out) as f:
        page = f.read()
    text = check_html(page)
    no_raw_controls(page)
    for want in ("weather", t2["trace_id"], t2["skill_digest"], t2["policy_digest"],
                 "No threat observed", "api.weather.test", "weather API unreachable"):
        assert want in text, want
    # the previous version's run, its diff, and the commands to reproduce
    diff = page.split('<section id="diff">')[1].split("</section>")[0]
    assert t1["trace_id"] in diff and "code changed" in diff, diff
    repro = page.split('<section id="reproduce">')[1].split("</section>")[0]
    assert f"skillgate traces diff {t1['trace_id']} {t2['trace_id']}" in repro, repro
    assert f"skillgate audit show {t2['trace_id']}" in repro, repro
    # the same run by its trace's path, as Markdown on stdout
    md = m.run("traces", "report", p2, "--md", check=0).out
    check_md(md)
    no_raw_controls(md)
    assert f"`{t2['trace_id']}`" in md and "code changed" in md, md[:3000]
    # the first run has no previous version
    md1 = m.run("traces", "report", p1, "--md", check=0).out
    assert "No run of a previous version" in md1, md1
    # --against and --no-diff
    md2 = m.run("traces", "report", t1["trace_id"], "--md", "--against", t2["trace_id"],
                check=0).out
    assert "code changed" in md2, md2
    md3 = m.run("traces", "report", t2["trace_id"], "--md", "--no-diff", check=0).out
    assert "No run of a previous version" in md3, md3
    # what cannot be found is said, exit 2
    p = m.run("traces", "report", "no-such-run", check=2)
    assert "no trace no-such-run" in p.err, p.err
    p = m.run("traces", "report", check=2)
    p = m.run("traces", "report", t2["trace_id"], "-o", "/nonexistent-dir/x.html", check=2)
    assert "/nonexistent-dir/x.html" in p.err, p.err


@test()
def every_decision_with_who_made_it_and_every_refusal(m, base):
    path, t = run_malicious(m, base)
    page = m.run("traces", "report", t["trace_id"], check=0).out  # HTML is the default
    check_html(page)
    # the verdict, its classes and their MITRE ids
    verdict = page.split('<section id="verdict">')[1].split("</section>")[0]
    assert '<span class="sev sev-critical">CRITICAL</span> — an attack' in verdict, verdict[:500]
    classes = t["violation_summary"]["classifications"]
    assert classes, t["violation_summary"]
    for c in classes:
        for k in ("class", "mitre_tactic", "mitre_technique"):
            assert f"<td>{c[k]}</td>" in verdict, (k, c[k])
    # every decision: one row each kind (identical ones grouped, counted), the rule
    # that made it named
    decided = kinds(t, lambda e: e["kind"] == "permission_decided")
    groups = {(e["data"]["request"], e["data"]["decision"], e["data"]["scope"],
               e["data"]["decided_by"]) for e in decided}
    dec = page.split('<section id="decisions">')[1].split("</section>")[0]
    assert dec.count("<tr class=") == len(groups) > 0, (dec.count("<tr class="), len(groups))
    assert sum(int(n) for n in re.findall(r"<td>(\d+)</td></tr>", dec)) == len(decided), dec
    assert re.search(r"<td>rule</td><td>rule Fetch\(collector\.attacker\.test\) \([^<]*"
                     r"/policy\.yaml:2\)</td>", dec), dec[:3000]
    assert "<td>policy file (no rule: denied)</td><td>policy: no rule allows it</td>" in dec
    # every refused attempt
    refused = kinds(t, lambda e: (e.get("data") or {}).get("prevented") is True and e["kind"]
                    not in ("permission_decided", "env_filtered"))
    ref = page.split('<section id="refusals">')[1].split("</section>")[0]
    table = ref.split("<h3>")[0]
    assert table.count("<tr><td>+") == len(refused) > 0, (table.count("<tr><td>+"), len(refused))
    assert "How to allow each" not in ref and "part of this run's attack" in ref, ref[-600:]
    md = m.run("traces", "report", path, "--md", check=0).out
    bare = check_md(md)
    assert "MITRE ATT&CK tactic `credential-access`, technique `T1555`" in md, md[:4000]
    assert md.count(" by **rule**: ") == len(
        {g for g in groups if g[3].startswith("rule ")}), md
    assert "**Verdict:** **CRITICAL** — an attack: " in md
    assert "severity **CRITICAL**" in bare  # our word, never the trace's string


@test()
def hostile_output_is_shown_as_text(m, base):
    path, t = run_hostile(m)
    page = m.run("traces", "report", t["trace_id"], "--html", check=0).out
    text = check_html(page)
    no_raw_controls(page)
    # each payload, as the text it was
    for shown in ("<script>alert(1)</script><script>window.__pwned=1</script>",
                  "<img src=x onerror=alert(1)><img src=x onerror=window.__pwned=1>",
                  "[x](javascript:alert(1)) [y](javascript:window.__pwned=1)",
                  "![i](https://exfil.test/p.png)",
                  '<a href="javascript:window.__pwned=1">click</a>',
                  "</pre></td></tr></table></section><script>window.__pwned=1</script>",
                  "`` ` ``` code `fence` ```` breaks",
                  "quote \" apostrophe ' ampersand &amp; &lt;b&gt; </title></style>",
                  "bidi \\u{202a}LRE\\u{202b} RLE\\u{202c} PDF\\u{202d} LRO\\u{202e} RLO"
                  "\\u{2066} LRI\\u{2067} RLI\\u{2068} FSI\\u{2069} PDI",
                  "controls \\e[31mred\\e[0m bell\\x07",
                  "<script>window.__pwned=1<\\u{202e}>.txt"):
        assert shown in text, shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<span class="esc">\\u{202e}</span>' in page
    assert "&amp;amp;" in page and "&quot;" in page and "&#39;" in page
    # cut for display, and said so; the trace keeps it all
    assert re.search(r"L{1000,} … \d+ more bytes", text), "the 5000-byte line is not said cut"
    assert re.search(r"\d+ more bytes in \d+ more lines not shown", text), "no flood notice"
    # the refused write of a hostile path is listed, escaped
    ref = page.split('<section id="refusals">')[1].split("</section>")[0]
    assert "&lt;script&gt;window.__pwned=1&lt;" in ref, ref[:2000]

    md = m.run("traces", "report", path, "--md", check=0).out
    no_raw_controls(md)
    check_md(md)
    for shown in ("<script>alert(1)</script>", "[x](javascript:alert(1))",
                  "![i](https://exfil.test/p.png)", "\\u{202e}", "\\e[31m"):
        assert shown in md, shown
    # a backtick run in the text gets a longer fence around it
    assert "`````stdout: `` ` ``` code `fence` ```` breaks`````" in md or \
        "`````` `` ` ``` code `fence` ```` breaks``````" in md or \
        "````` `` ` ``` code `fence` ```` breaks `````" in md, \
        [x for x in md.splitlines() if "fence" in x][:3]


def section(page, sec):
    return page.split(f'<section id="{sec}">')[1].split("</section>")[0]


@test()
def the_verdict_comes_first_and_an_attack_is_never_taught(m, base):
    """Issue 54, item 9: the verdict sat under 30 rows of tables with no
    colour, and a critical run's report ended in a "How to allow each"
    list that taught a reader to permit it; the home's paths were absolute.
    Now the verdict and the attempts that decided it come first, the
    severity coloured (an HTML class of ours) and in words, no way to allow
    an attack's refusals is given, and the home is ~."""
    path, t = run_malicious(m, base)
    page = m.run("traces", "report", t["trace_id"], "--html", check=0).out
    text = check_html(page)
    first = re.findall(r'<section id="([a-z]+)">', page)
    assert first[0] == "verdict", first
    verdict = section(page, "verdict")
    assert '<p class="verdict">Verdict: <span class="sev sev-critical">CRITICAL</span> — an ' \
           'attack: ' in verdict, verdict[:600]
    assert "no way to allow any of it is given" in verdict
    # the classes, the most severe first, each coloured
    sevs = re.findall(r'<td><span class="sev sev-([a-z]+)">', verdict)
    order = ["critical", "high", "medium", "low"]
    assert sevs and sevs == sorted(sevs, key=order.index), sevs
    ref = section(page, "refusals")
    assert "How to allow each" not in page and "allow with" not in page, ref[-2000:]
    assert "--policy" not in page and "--write" not in ref, ref[-2000:]
    assert re.search(r"\d+ refused requests were part of this run's attack: no way to allow "
                     r"them is given\.", ref), ref[-800:]
    # the home is ~: the decoys are ~/.ssh/..., never the author's home
    home = os.path.realpath(m.home)
    assert "read of ~/.ssh/id_ed25519" in text, verdict[:3000]
    assert home + "/" not in page, [x for x in page.splitlines() if home + "/" in x][:3]
    md = m.run("traces", "report", path, "--md", check=0).out
    check_md(md)
    assert md.index("## Verdict and classes") < md.index("## Run\n"), md[:2000]
    assert "**Verdict:** **CRITICAL** — an attack: " in md, md[:2000]
    assert "severity **CRITICAL**" in md and "How to allow each" not in md, md[:4000]
    assert "`read of ~/.ssh/id_ed25519:" in md and home + "/" not in md


SLEEPER = """
    import os, subprocess
    for _ in range(30):
        subprocess.run(["sleep", "0.01"], check=True)
        subprocess.run(["true"], check=True)
    subprocess.run(["uname"], check=True, stdout=subprocess.DEVNULL)
    try:
        open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out.txt"), "w")
    except OSError as e:
        print("write refused", e.errno)
    print("slept")
    """


@test()
def repeated_decisions_are_grouped_and_the_saved_rule_is_shown(m, base):
    """60 identical allowed `sleep` calls were 60 rows over the person's own
    answer; the rule that answer kept (a glob: Bash(/usr/bin/uname:*)) was missing,
    and so was the input from Reproduce. Now identical decisions are one
    row with a count, the person's first and with what was saved, the
    input is in Reproduce (in the home, as ~/), and an honest run's
    refused write still says how to allow it."""
    d = h.make_skill(m.home, f"sleeper-{os.getpid()}", SLEEPER, tools="Read Bash(sleep:*)")
    if h.IS_ROOT:
        for root, dirs, files in os.walk(d):
            os.chown(root, m.uid, m.uid)
    code, out = h.run_in_pty(m, ["run", "-i", '{"city": "Oslo"}', d],
                             [("uname", "p")], timeout=90)
    assert "slept" in out, out[-6000:]
    t = traces_of(m, os.path.basename(d))[-1][1]
    decided = kinds(t, lambda e: e["kind"] == "permission_decided")
    sleeps = [e for e in decided if "sleep" in e["data"]["request"]]
    assert len(sleeps) >= 2, [e["data"] for e in decided]
    mine = [e["data"] for e in decided if e["data"]["decided_by"] == "person"]
    assert mine and mine[0]["kept"] == ["Bash(/usr/bin/uname:*)"], mine
    page = m.run("traces", "report", t["trace_id"], "--html", check=0).out
    check_html(page)
    dec = section(page, "decisions")
    rows = dec.split("<tr class=")[1:]
    assert len(rows) < len(decided), (len(rows), len(decided))
    assert "Bash(/usr/bin/uname)" in rows[0] and "<td>person</td>" in rows[0], rows[0]
    assert "kept for the rest of this run: Bash(/usr/bin/uname:*)" in rows[0], rows[0]
    grouped = [x for x in rows if "sleep" in x]
    assert len(grouped) == 1 and f"<td>{len(sleeps)}</td></tr>" in grouped[0], grouped
    repro = section(page, "reproduce")
    rel = os.path.relpath(d, m.home)
    assert f"skillgate run -i &#39;{{&quot;city&quot;: &quot;Oslo&quot;}}&#39; ~/{rel}\n" in repro, \
        repro
    ref = section(page, "refusals")
    assert "How to allow each" in ref and "--write ~/" in ref, ref[-1500:]
    md = m.run("traces", "report", t["trace_id"], "--md", check=0).out
    check_md(md)
    assert f"skillgate run -i '{{\"city\": \"Oslo\"}}' ~/{rel}" in md, md[-1500:]
    assert f" — {len(sleeps)}×\n" in md, md
    assert "kept for the rest of this run: `Bash(/usr/bin/uname:*)`" in md, md


EVIL = "<img src=x onerror=window.__pwned=1>`[l](javascript:alert(1))`\u202e\x1b]0;t\x07"


def forged_trace(n_decisions):
    """A trace written by hand, every string in it hostile, timestamps only
    (no monotonic clock), and many decisions."""
    ev = []
    for i in range(n_decisions):
        ts = f"2026-01-01T00:00:{i % 60:02d}.{i % 1000:03d}Z"
        ev.append({"timestamp": ts, "kind": "permission_decided", "message": EVIL,
                   "data": {"tool": EVIL, "request": f"Fetch({i}){EVIL}", "decision": "deny",
                            "decided_by": EVIL, "scope": EVIL, "prevented": True}})
        ev.append({"timestamp": ts, "kind": "fs_blocked", "message": f"refused {i} {EVIL}",
                   "data": {"path": EVIL, "prevented": True}, "repeated": 3})
        ev.append({"timestamp": ts, "kind": "stdout", "message": EVIL, "data": None})
    return {"schema": "skillgate.trace/1", "trace_id": EVIL, "skill_name": EVIL,
            "skill_version": EVIL, "skill_root": "/x/" + EVIL, "skill_digest": EVIL,
            "policy_digest": EVIL, "started_at": EVIL, "completed_at": EVIL, "status": EVIL,
            "end_reason": EVIL, "exit_code": 0, "duration_ms": 5,
            "invocation": {"argv": [EVIL, EVIL], "cwd": EVIL, "working_folder": True,
                           "script": EVIL, "args": [EVIL, "it's"]},
            "limits": {EVIL: {"value": 1, "unit": EVIL, "mechanism": EVIL}},
            "manifests": {"state": EVIL}, "output": {"stdout_bytes": 1},
            "events": ev, "decisions": [e["data"] for e in ev[::3]],
            "violation_summary": {"total_enforcements": 1, "max_severity": EVIL,
                                  "all_prevented": False,
                                  "classifications": [{"class": EVIL, "severity": EVIL,
                                                       "mitre_tactic": EVIL,
                                                       "mitre_technique": EVIL, "count": 1,
                                                       "evidence": [EVIL]}]},
            "refusals": [{"tool": EVIL, "subject": EVIL, "count": 1, "why": EVIL,
                          "allow": EVIL}]}


@test(modes=("user",))
def a_forged_trace_is_hostile_everywhere_and_loses_no_decision(m, base):
    path = os.path.join(base, "forged.json")
    with open(path, "w") as f:
        json.dump(forged_trace(3000), f)
    os.chmod(path, 0o644)
    page = m.run("traces", "report", path, "--html", "--no-diff", check=0).out
    check_html(page)
    no_raw_controls(page)
    dec = page.split('<section id="decisions">')[1].split("</section>")[0]
    assert dec.count("<tr class=") == 3000, dec.count("<tr class=")
    ref = page.split('<section id="refusals">')[1].split("</section>")[0].split("<h3>")[0]
    assert ref.count("<tr><td>+") == 3000 and ref.count("(and 3 more times)") == 3000
    assert "NOT every one was prevented" in page
    md = m.run("traces", "report", path, "--md", "--no-diff", check=0).out
    check_md(md)
    no_raw_controls(md)
    assert md.count("\n- +") >= 6000, md.count("\n- +")


@test(modes=("user",))
def output_past_its_cap_is_counted_not_listed(m, base):
    """A line cut for the output's room spends it: the lines after it (here
    each starting with a two-byte character, of which none fits) are
    counted, not each given a row of its own."""
    ev = [{"timestamp": "2026-01-01T00:00:00.000Z", "kind": "stdout", "message": "a" * 2000}
          for _ in range(131)]
    ev.append({"timestamp": "2026-01-01T00:00:00.000Z", "kind": "stdout", "message": "a" * 143})
    ev += [{"timestamp": "2026-01-01T00:00:01.000Z", "kind": "stdout", "message": "\u00e9" * 2}
           for _ in range(5000)]
    path = os.path.join(base, "tail.json")
    with open(path, "w") as f:
        json.dump({"skill_name": "tail", "events": ev}, f)
    os.chmod(path, 0o644)
    page = m.run("traces", "report", path, "--html", "--no-diff", check=0).out
    out = page.split('<section id="output">')[1].split("</section>")[0]
    assert out.count("<tr class=") <= 133, out.count("<tr class=")
    assert "4999 more lines not shown" in out or "5000 more lines not shown" in out, out[-400:]
    md = m.run("traces", "report", path, "--md", "--no-diff", check=0).out
    out = md.split("\n## Output\n")[1].split("\n## ")[0]
    assert out.count("\n- +") <= 133, out.count("\n- +")
    assert "more lines not shown" in out, out[-400:]


@test(modes=("user",))
def a_report_file_is_private_as_its_trace(m, base):
    """-o writes what the skill printed: readable by its owner only, as the
    trace it comes from (0600) and the TUI's report are."""
    path = os.path.join(base, "small.json")
    with open(path, "w") as f:
        json.dump(forged_trace(1), f)
    os.chmod(path, 0o644)
    out = os.path.join(m.home, "report.html")
    old = os.umask(0o022)
    try:
        m.run("traces", "report", path, "--html", "--no-diff", "-o", out, check=0)
    finally:
        os.umask(old)
    assert os.stat(out).st_mode & 0o777 == 0o600, oct(os.stat(out).st_mode)


@test(modes=("user",))
def a_long_name_cut_in_the_page_title_is_plain_text(m, base):
    """<title> is plain text: the cut marker there holds no markup (it
    would show as "<em class=...>" in the browser's tab)."""
    t = forged_trace(1)
    t["skill_name"] = "n" * 3000
    path = os.path.join(base, "long.json")
    with open(path, "w") as f:
        json.dump(t, f)
    os.chmod(path, 0o644)
    page = m.run("traces", "report", path, "--html", "--no-diff", check=0).out
    title = page.split("<title>")[1].split("</title>")[0]
    assert "<" not in title and "1000 more bytes" in title, title[-200:]


@test(modes=("user",))
def reproduce_commands_take_no_option_from_the_trace(m, base):
    """A forged trace's folder, script, working folder or run id that starts
    with "-" must not become an option of the commands a person copies
    (`skillgate run --allow-all --script s -- /the/skill` would run the
    skill named after "--" with no sandbox for its undeclared requests)."""
    t = forged_trace(1)
    t["skill_root"] = "--allow-all"
    t["trace_id"] = "-o/tmp/x"
    t["invocation"] = {"cwd": "-", "working_folder": True, "script": "-s",
                       "args": ["/home/u/.skills/evil", "-v"]}
    path = os.path.join(base, "opts.json")
    with open(path, "w") as f:
        json.dump(t, f)
    os.chmod(path, 0o644)
    for fmt in ("--md", "--html"):
        page = m.run("traces", "report", path, fmt, "--no-diff", check=0).out
        rep = page.split("Reproduce")[-1]
        for line in rep.splitlines():
            if "skillgate " in line or line.startswith("cd"):
                words = line.split("#")[0].split()
                words = words[1:] if words[0] == "cd" else words[2:]
                theirs = [w for w in words if w.startswith(("-", "'-"))
                          and w not in ("--script", "--", "--html", "-o", "'-v'", "-v")]
                assert not theirs, (fmt, line)
        assert "./--allow-all" in rep and "./-o/tmp/x" in rep and " -- /home/u/.skills/evil -v" in rep, rep[:600]


def screens_dir():
    d = os.environ.get("SG_REPORT_SCREENS") or os.path.join(
        os.path.dirname(h.SG), "meson-logs", "report-screens")
    os.makedirs(d, exist_ok=True)
    return d


def browser_tools():
    """(node, chromium) or raise Skip with the reason."""
    node = shutil.which("node")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not node:
        raise h.Skip("node is needed for the browser test (apt-get install nodejs)")
    if not chromium:
        raise h.Skip("chromium is needed for the browser test (apt-get install chromium)")
    if not os.path.isfile(os.path.join(REPORTDIR, "node_modules", "puppeteer-core",
                                       "package.json")):
        raise h.Skip("puppeteer-core is not installed: cd tests/report && npm ci "
                     "(scripts/dev test does it)")
    return node, chromium


@test(modes=("user",))
def reports_load_in_a_browser_with_nothing_run_or_fetched(m, base):
    node, chromium = browser_tools()
    (_, _), (_, t2) = run_weather_twice(m, base)
    _, mal = run_malicious(m, base)
    _, hos = run_hostile(m)
    shots = screens_dir()
    pages = tempfile.mkdtemp(prefix="sgreport.")
    files = []
    try:
        for name, t in (("weather", t2), ("malicious-weather", mal), ("hostile-report", hos)):
            p = os.path.join(pages, f"report-{name}.html")
            with open(p, "w") as f:
                f.write(m.run("traces", "report", t["trace_id"], "--html", check=0).out)
            files.append(p)
        p = subprocess.run([node, os.path.join(REPORTDIR, "check.mjs"), chromium, shots, *files],
                           capture_output=True, text=True, timeout=240, cwd=REPORTDIR,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
        results = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
        assert len(results) == len(files), p.stdout[-2000:]
        for r in results:
            who = os.path.basename(r["file"])
            assert r["console"] == [], (who, r["console"])
            assert r["pageErrors"] == [], (who, r["pageErrors"])
            assert r["dialogs"] == [], (who, r["dialogs"])
            assert r["refused"] == [], (who, "asked for", r["refused"])
            assert r["pwned"] is False, (who, "a script ran")
            for k in ("scripts", "images", "links", "frames", "handlers"):
                assert r[k] == 0, (who, k, r[k])
            assert r["sections"] == SECTIONS, (who, r["sections"])
            assert r["svg"] == 1, who
            assert r["csp"].startswith(CSP), (who, r["csp"])
            assert "sans-serif" in r["styled"], (who, "our <style> did not apply", r["styled"])
            for shot in (r["screenshot"], r["timelineShot"]):
                assert os.path.getsize(shot) > 1000, shot
        hostile = [r for r in results if "hostile" in r["file"]][0]
        assert "<script>alert(1)</script>" in hostile["text"]
        assert "\\u{202e}" in hostile["text"]
    finally:
        shutil.rmtree(pages, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
