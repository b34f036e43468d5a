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
        self.t("kill-server", check=False)
        if path.endswith(self.sock) and os.path.exists(path):
            os.unlink(path)  # tmux leaves its socket behind


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


def main():
    print("1..1")
    name = "demo_auto_walks_through_all_steps"
    if not shutil.which("tmux"):
        return tap_skip_or_fail(1, name, "tmux is not installed")
    if not kernel_can_unshare():
        return tap_skip_or_fail(1, name, "this kernel refuses unprivileged user+net namespaces")
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
    shutil.rmtree(base, ignore_errors=True)
    return not problems


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
