#!/usr/bin/env python3
"""`skillgate demo --auto` in a real terminal (tmux): the unsandboxed step
shows what the attacker's stand-in received, the sandboxed step blocks every
vector, the honest skill gets its answer, the risky request is asked and
denied, and the throwaway workspace is gone afterwards. The demo lives in a
world of its own: the presenter's grants (one allowing the attacker's host)
change nothing, none of its runs lands in the presenter's traces or audit
log, and no screen shows the presenter's home; --keep copies its records
out. Prints TAP.

Usage: demo_test.py PATH/TO/skillgate SOURCE_ROOT

Nothing leaves the machine: the unsandboxed step runs in fresh user, network
and mount namespaces with only loopback (the demo refuses otherwise), and the
sandboxed ones reach only a stand-in on 127.0.0.1. Every wait is bounded.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SG = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(sys.argv[2])
IN_CI = bool(os.environ.get("CI"))


def tap_skip_or_fail(n, name, why):
    if IN_CI:
        print(f"not ok {n} - {name}\n# {why} (required in CI)")
        return False
    print(f"ok {n} - {name} # SKIP {why}")
    return True


def kernel_can_unshare():
    r = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "--mount", "true"],
                       capture_output=True, timeout=10)
    return r.returncode == 0


def events_text(screen):
    """The events pane's text, its rows joined: an event wraps at words, so a
    long word may start the next row (the pane right of the output pane when
    both show, else the screen)."""
    rows = [ln.split("││", 1)[1] if "││" in ln else ln for ln in screen.splitlines()]
    return re.sub(r"[\s│]+", " ", " ".join(rows))


# skillgate demos that outlived their terminal (each a line for the TAP
# output): a closed terminal ends a program; none may be left running
STUCK, NOTES = [], []


def descendants(pid):
    kids = {}
    for d in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(d) as f:
                st = f.read()
            kids.setdefault(int(st.rsplit(")", 1)[1].split()[1]), []).append(int(d.split("/")[2]))
        except (OSError, ValueError, IndexError):
            pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def ended_with_its_terminal(pid, within=15.0):
    """The demo in a pane whose tmux server was killed ends within `within`
    seconds (SIGHUP). If it does not, it and what it started are killed and
    it is said: a failure, except where LeakSanitizer's exit check holds it
    (the process traced by a child of its own: the ASan tree's checker, not
    skillgate, which is only noted)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}") or \
                open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
            return
        time.sleep(0.1)
    tree = descendants(pid)
    try:
        with open(f"/proc/{pid}/status") as f:
            tracer = int(re.search(r"TracerPid:\s*(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        tracer = 0
    for p in tree:
        try:
            os.kill(p, 9)
        except OSError:
            pass
    if tracer and tracer in tree:
        NOTES.append(f"skillgate demo (pid {pid}) was held {within:.0f} s after its terminal "
                     "closed by LeakSanitizer's exit check (traced by its own child); killed")
    else:
        STUCK.append(f"skillgate demo (pid {pid}) still ran {within:.0f} s after its terminal "
                     "closed; killed")


class Tmux:
    def __init__(self, env, cols=200, rows=40):
        self.sock = f"sgdemo{os.getpid()}"
        self.env = env
        self.cols, self.rows = cols, rows

    def t(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              timeout=10, check=check)

    def start(self, cmd):
        envs = [f"{k}={v}" for k, v in self.env.items()]
        self.t("new-session", "-d", "-x", str(self.cols), "-y", str(self.rows),
               "env", "-i", *envs, *cmd, ";", "set-option", "remain-on-exit", "on")

    def screen(self):
        return self.t("capture-pane", "-p", check=False).stdout

    def dead(self):
        return self.t("display", "-p", "#{pane_dead}", check=False).stdout.strip() == "1"

    def kill(self):
        path = self.t("display", "-p", "#{socket_path}", check=False).stdout.strip()
        pid = self.t("display", "-p", "#{pane_pid}", check=False).stdout.strip()
        self.t("kill-server", check=False)
        if path.endswith(self.sock) and os.path.exists(path):
            os.unlink(path)  # tmux leaves its socket behind
        if pid.isdigit():
            ended_with_its_terminal(int(pid))


def narration_at_80x24(env):
    """On an 80x24 terminal: the first frame shows the skill as a marketplace
    lists it (not an empty "No run yet"), every word of the first step's
    narration is on screen (wrapped at words, none cut); then, stepping on,
    the pane the step is about fills the screen (at least 10 rows of events
    while the unsandboxed skill steals), not half of it. None, or the
    problem."""
    tm = Tmux(env, cols=80, rows=24)
    tm.sock += "n"
    try:
        tm.start([SG, "demo"])
        end = time.monotonic() + 30
        s = ""
        while time.monotonic() < end and "Space: next" not in s:
            time.sleep(0.1)
            s = tm.screen()
        flat = " ".join(s.split())
        want = ("malicious-weather looks like a weather lookup from a skills marketplace. First "
                "it runs the way agents run skills today: no sandbox at all. Everything is a "
                "throwaway world: fake credentials, and \"the internet\" is a stand-in on loopback.")
        if want not in flat or "\u203a" in s.split("skillgate demo  (1/")[-1]:
            return "at 80x24 the narration is cut instead of wrapped:\n" + s
        if "No run yet" in s or "as a skills marketplace lists it" not in s:
            return "the first frame does not show the skill:\n" + s
        tm.t("send-keys", "Space")  # to step 1, then run it
        while time.monotonic() < end and "Space: run this step" not in s:
            time.sleep(0.1)
            s = tm.screen()
        tm.t("send-keys", "Space")
        rows = 0
        while time.monotonic() < end and rows < 10:
            time.sleep(0.2)
            s = tm.screen()
            lines = s.split("\n")
            top = next((i for i, l in enumerate(lines) if l.startswith("┌─ Events")), None)
            bottom = next((i for i, l in enumerate(lines) if top is not None and i > top
                           and l.startswith("└")), None)
            rows = bottom - top - 1 if top is not None and bottom is not None else 0
        if rows < 10:
            return f"at 80x24 the events pane has {rows} rows during the theft:\n" + s
        return None
    finally:
        tm.t("send-keys", "q", check=False)
        tm.kill()


# What the audience reads at each step (tui/demo.c's steps): whole, wrapped at words.
NARRATION = [
    ("skillgate demo  (1/6)",
     "malicious-weather looks like a weather lookup from a skills marketplace. First it runs "
     "the way agents run skills today: no sandbox at all. Everything is a throwaway world: fake "
     "credentials, and \"the internet\" is a stand-in on loopback."),
    ("1. Without skillgate  (2/6)",
     "malicious-weather runs with your (fake) environment and home folder. In the events pane, "
     "every red line is something the attacker's stand-in received."),
    ("2. The same skill under skillgate  (3/6)",
     "Its own namespaces, Landlock, seccomp, nftables, a filtered environment, decoy "
     "credentials. Every way out is blocked and classified live; the trace names the MITRE "
     "techniques. \"stash: SUCCEEDED\" means it wrote into the sandbox's throwaway home: gone "
     "with the run."),
    ("3. An honest skill still works  (4/6)",
     "weather declares one API: api.weather.test:443 (a stand-in on loopback here). skillgate "
     "lets exactly that through its proxy, and nothing else."),
    ("4. A risky request: you decide  (5/6)",
     "tidy-cache runs rm -rf on a folder: a program its manifest does not declare. skillgate "
     "stops the call and asks: a allows it once, d denies it."),
    ("That was skillgate  (6/6)",
     "Every run left a trace (listed here, screen 3) and a hash-chained audit record, in the "
     "demo's own throwaway state (--keep DIR keeps it). q quits; skillgate tui DIR browses your "
     "skills."),
]


INTRO = ("Run the skill with input `{\"city\": \"Oslo\"}`. It calls the weather API with the "
         "key in `WEATHER_API_KEY` and prints the current conditions as JSON.")


def narration_of(screen):
    """The narration's title and its text rows joined by spaces (a word cut
    across two rows does not read back as itself)."""
    lines = screen.split("\n")
    at = next((i for i, l in enumerate(lines) if "/6)" in l and l.startswith(" ")), None)
    if at is None:
        return None, ""
    text = []
    for l in lines[at + 1:]:
        if l.strip().startswith(("Space", "running...")):
            break
        text.append(l.strip())
    return lines[at].strip(), " ".join(text)


def pane_rows(screen, title):
    """The rows inside the box titled title (None: no such box), and
    whether the box is drawn at the left edge (the whole width or the left
    half) or elsewhere; a row is the text between the box's borders."""
    lines = screen.split("\n")
    for i, l in enumerate(lines):
        col = l.find("┌─ " + title)
        if col < 0:
            continue
        rows = []
        for m in lines[i + 1:]:
            if m[col:col + 1] == "└":
                return rows
            inner = m[col + 1:]
            rows.append(inner[:inner.find("│")] if "│" in inner else inner)
        return rows
    return None


class Walk:
    """One manual walk through the demo at a size: Space steps; each check
    names what the audience should see and returns the problem or None."""

    def __init__(self, env, cols, rows):
        self.tm = Tmux(env, cols=cols, rows=rows)
        self.tm.sock += f"w{cols}"
        self.size = f"{cols}x{rows}"
        self.cols = cols
        self.problems = []
        self.s = ""

    def wait(self, pred, secs=40):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            self.s = self.tm.screen()
            if pred(self.s):
                return True
            time.sleep(0.15)
        return False

    def bad(self, what):
        self.problems.append(f"at {self.size}: {what}:\n{self.s}")

    def keys(self, *k):
        self.tm.t("send-keys", *k)

    def step(self, n, done_hint):
        """Space to step n (k/6) and, when it runs something, Space to run it
        and wait for its end."""
        title = NARRATION[n][0]
        self.keys("Space")
        if not self.wait(lambda s: title in s):
            return self.bad(f"step {title} never came")
        if done_hint == "run":
            self.keys("Space")
            if not self.wait(lambda s: "Space: next" in s or "permission request" in s):
                return self.bad(f"step {title} never ended")
        self.check_narration(n)

    def check_narration(self, n):
        title, text = narration_of(self.s)
        if title is None or not title.startswith(NARRATION[n][0]) or text != NARRATION[n][1]:
            self.bad(f"the narration of step {n + 1} is not whole or not wrapped at words "
                     f"(read back: {text!r})")

    def check_first(self, pane, first, more=True):
        """The step's pane is shown, its first row is the run's first line
        (first), it has no blank row in it unless everything fits, and says
        what is below."""
        rows = pane_rows(self.s, pane)
        if rows is None:
            return self.bad(f"the {pane} pane is not shown")
        if not rows or first not in rows[0]:
            return self.bad(f"the {pane} pane does not start from its first line ({first})")
        if more and any(not r.strip() for r in rows):
            return self.bad(f"the {pane} pane has blank rows while more is below")
        if more and "more below" not in self.s:
            self.bad(f"the {pane} pane does not say what is below")

    def check_keys_act(self, pane, first, last):
        """G and g act on the pane shown (the focus is where the audience
        looks): G shows its last line, g its first again."""
        self.keys("G")
        if not self.wait(lambda s: last in "".join(r.strip() for r in pane_rows(s, pane) or []),
                         5):
            return self.bad(f"G does not show the last line of the {pane} pane ({last})")
        self.keys("g")
        if not self.wait(lambda s: first in (pane_rows(s, pane) or [""])[0], 5):
            self.bad(f"g does not bring the {pane} pane back to its first line ({first})")

    def run(self):
        narrow = self.size == "80x24"
        try:
            self.tm.start([SG, "demo"])
            if not self.wait(lambda s: "Space: next" in s, 30):
                return self.bad("the demo did not start")
            self.check_narration(0)
            intro = [r.strip() for r in pane_rows(self.s, "malicious-weather, as a skills") or []]
            at = next((i for i, r in enumerate(intro) if r.startswith("Run the skill")), len(intro))
            para = intro[at:at + next((k for k, r in enumerate(intro[at:]) if not r), 9)]
            if " ".join(para) != INTRO or any(len(r) < self.cols - 24 for r in para[:-1]):
                self.bad("the first frame does not wrap SKILL.md's paragraph as one")
            self.step(1, "run")  # without skillgate: what it steals, from the first theft
            self.check_first("Events", "STOLEN: HTTPS POST")
            if narrow and pane_rows(self.s, "Output") is not None:
                self.bad("the output pane takes rows the thefts need")
            self.step(2, "run")  # under skillgate: the blocks, from the first event
            self.check_first("Events", "POLICY")
            if "max severity critical" not in self.s:
                self.bad("the verdict (max severity critical) is not on screen")
            if "allow with" in self.s:
                self.bad("the blocked attack is followed by how to allow it")
            self.check_keys_act("Events", "POLICY", "refused:")
            self.step(3, "run")  # the honest skill's answer
            out = pane_rows(self.s, "Output")
            if out is None or '"temperature_c": 4.5' not in "".join(out):
                self.bad("the honest skill's answer is not in the output pane")
            self.step(4, "run")  # the risky request, asked; denied
            if not self.wait(lambda s: "permission request" in s and "/usr/bin/rm" in s):
                return self.bad("the risky request was not asked")
            time.sleep(1.5)  # the prompt arms after a short delay
            self.keys("d")
            if not self.wait(lambda s: "Space: next" in s):
                return self.bad("the risky step did not end after d")
            out = pane_rows(self.s, "Output")
            if out is None or "rm was refused" not in "".join(out):
                self.bad("the output pane does not show the refused rm")
            self.step(5, "none")  # the end: each run's verdict, no advice to allow
            if not self.wait(lambda s: "malicious-weather" in s and "critical" in s, 10):
                self.bad("the last step does not show the runs' verdicts")
            if "allow with" in self.s:
                self.bad("the last step ends on how to allow a refused request")
        finally:
            self.tm.t("send-keys", "q", check=False)
            self.tm.kill()


STEPS = "demo_steps_show_what_they_narrate_at_80x24_and_120x40"


def steps_at(env, cols, rows):
    w = Walk(env, cols, rows)
    w.run()
    return w.problems


def main():
    print("1..2")
    name = "demo_auto_walks_through_all_steps"
    if not shutil.which("tmux"):
        return tap_skip_or_fail(1, name, "tmux is not installed") and \
            tap_skip_or_fail(2, STEPS, "tmux is not installed")
    if not kernel_can_unshare():
        why = "this kernel refuses unprivileged user+net namespaces"
        return tap_skip_or_fail(1, name, why) and tap_skip_or_fail(2, STEPS, why)
    base = tempfile.mkdtemp(prefix="sg-demo-test-")
    os.chmod(base, 0o755)
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": os.path.join(base, "home"),
           "XDG_STATE_HOME": os.path.join(base, "state"),
           "XDG_CONFIG_HOME": os.path.join(base, "config"),
           "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):  # reports go to files, not the screen
        opts = [o for o in os.environ.get(k, "").split(":") if o]
        env[k] = ":".join(opts + [f"log_path={os.path.join(base, 'sanitizer')}"])
    os.makedirs(env["HOME"])
    # the presenter's own grant: always allow the skill's exfiltration host
    digest = json.loads(subprocess.run(
        [SG, "inspect", "--json", os.path.join(SRC, "examples", "skills", "malicious-weather")],
        env=env, capture_output=True, text=True, check=True).stdout)["digest"]
    grants = os.path.join(env["XDG_CONFIG_HOME"], "skillgate", "grants.yaml")
    os.makedirs(os.path.dirname(grants), mode=0o700)
    with open(grants, "w") as f:
        f.write(f"grants:\n  - skill: \"malicious-weather\"\n    digest: \"{digest}\"\n"
                "    rule: \"Fetch(collector.attacker.test)\"\n    effect: \"allow\"\n"
                "    created: \"2026-11-01T00:00:00Z\"\n")
    os.chmod(grants, 0o600)
    with open(grants, "rb") as f:
        grants_before = f.read()
    kept = os.path.join(base, "kept")
    before = set(glob.glob("/var/tmp/skillgate-demo-*"))
    narrow = narration_at_80x24(env)
    tm = Tmux(env)
    seen = {"stolen": False, "blocked": False, "weather": False, "prompt": False,
            "closing": False}
    screens = []
    problems_seen = []
    try:
        tm.start([SG, "demo", "--auto", "--pace", "1", "--keep", kept])
        end = time.monotonic() + 150
        while time.monotonic() < end:
            s = tm.screen()
            screens.append(s)
            ev = events_text(s)
            seen["stolen"] |= "STOLEN: HTTPS POST to collector.attacker.test: received AW" in ev \
                and "STOLEN: raw TCP to 203.0.113.7:443: received AWS_ACCESS_KEY_ID=AKIA" in ev
            seen["blocked"] |= "malicious-weather" in s and "[vector] https-exfil: BLOCKED" in s
            seen["weather"] |= '"temperature_c": 4.5' in s and "max severity none" in s
            seen["prompt"] |= "permission request" in s and "/usr/bin/rm" in s
            seen["closing"] |= "That was skillgate  (6/6)" in s  # --auto shows the end too
            if "Every vector is blocked" in s:
                problems_seen.append("the narration says every vector is blocked while the "
                                     "skill's stash succeeds in its throwaway home")
            if tm.dead():
                break
            time.sleep(0.1)
        dead = tm.dead()
    finally:
        tm.kill()
    traces = [json.load(open(p)) for p in glob.glob(os.path.join(kept, "skillgate", "traces",
                                                                 "*.json"))]
    by = {t["skill_name"]: t for t in traces}
    audit = os.path.join(kept, "skillgate", "audit.jsonl")
    recs = [json.loads(l) for l in open(audit)] if os.path.exists(audit) else []
    left = set(glob.glob("/var/tmp/skillgate-demo-*")) - before
    problems = ([narrow] if narrow else []) + sorted(set(problems_seen))
    mine = os.path.join(env["XDG_STATE_HOME"], "skillgate")
    for sub in ("traces", "audit.jsonl"):
        if os.path.exists(os.path.join(mine, sub)):
            problems.append(f"the demo wrote into the presenter's records: {mine}/{sub}")
    with open(grants, "rb") as f:
        if f.read() != grants_before:
            problems.append("the presenter's grants.yaml changed")
    shown = [s for s in screens if env["HOME"] in s.replace("\n", "")]
    if shown:
        problems.append("a screen showed the presenter's home:\n" + shown[0])
    if mw_allowed := [r for r in recs if r.get("type") == "decision" and
                      "collector.attacker.test" in r.get("request", "") and
                      r.get("decision") == "allow"]:
        problems.append(f"the presenter's grant decided in the demo: {mw_allowed}")
    for k, v in seen.items():
        if not v:
            problems.append(f"never saw the {k} step on screen")
    if not dead:
        problems.append("the demo did not end by itself")
    mw = by.get("malicious-weather")
    if not mw or mw["violation_summary"]["max_severity"] != "critical" or \
            not mw["violation_summary"]["all_prevented"]:
        problems.append(f"malicious-weather trace: {mw and mw['violation_summary']}")
    wx = by.get("weather")
    if not wx or wx["exit_code"] != 0:
        problems.append(f"weather trace: {wx and (wx['exit_code'], wx['status'])}")
    dec = [r for r in recs if r.get("type") == "decision" and r.get("skill") == "tidy-cache"]
    if not any(r["decision"] == "deny" and r["decided_by"] == "person" and "/usr/bin/rm" in
               r["request"] for r in dec):
        problems.append(f"no person's deny of rm in the audit log: {dec}")
    if left:
        problems.append(f"the workspace was left behind: {left}")
    for p in glob.glob(os.path.join(base, "sanitizer*")):
        with open(p, errors="replace") as f:
            problems.append(f"the sanitizers reported: {f.read()[:3000]}")
    if problems:
        print(f"not ok 1 - {name}")
        for p in problems:
            print(f"# {p}")
        for line in (screens[-1] if screens else "").splitlines():
            print(f"#   | {line}")
    else:
        print(f"ok 1 - {name}")
    # a demo left running after its terminal closed, in either test, fails here
    walked = steps_at(env, 80, 24) + steps_at(env, 120, 40) + STUCK
    for n in NOTES:
        print(f"# note: {n}")
    print(f"{'not ok' if walked else 'ok'} 2 - {STEPS}")
    for p in walked:
        for line in p.splitlines():
            print(f"# {line}")
    shutil.rmtree(base, ignore_errors=True)
    return not problems and not walked


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
