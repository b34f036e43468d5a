#!/usr/bin/env python3
"""Headless screen tests of the TUI (tig's approach): each tests/screens/NAME.script
drives `skillgate tui --script` at a fixed size, and every screen it dumps is
compared with an expected file. Prints TAP.

Usage: screen_test.py PATH/TO/skillgate SOURCE_ROOT [--update]
  --update  rewrites the expected files from what the screens show now,
            normalised as below (for people, after reading the diff; CI never
            passes it)

A script is the TUI's own script language (tui/script.c) plus a header of
comments the runner reads:
  # size: 80x24                  the screen (default 80x24)
  # dirs: examples/skills ...    skill folders, relative to the source root
                                 (skillgate runs there, so paths show relative)
  # needs: sandbox               runs a skill for real (see below)
  # mask: REGEX                  host-specific text in this script's screens,
                                 replaced by "~" on both sides
`dump @OUT@/1`, `dump @OUT@/2`, ... are compared with NAME.expected,
NAME-2.expected, ...; @OUT@ is a temporary folder.

Every script runs with its own HOME, XDG_STATE_HOME and XDG_CONFIG_HOME under
/tmp/sgscreen.XXXXXXXX, filled from tests/screens/fixtures/{state,config}
(four traces and two grants), LANG=C.UTF-8, TERM=xterm-256color, no NO_COLOR,
and --theme default.

Before comparing, both sides are normalised, and only for what is genuinely
volatile:
  always   the temporary folder's random part   /tmp/sgscreen.XXXXXXXX
           (same length, so clipping does not move)
  scripts that run a skill (needs: sandbox), where the fixtures are not the
  source of what is shown:
           wall-clock times          HH:MM:SS
           the run's vital signs     N.Ns elapsed; the pid and the peak memory
                                     after it are left out (whole, clipped or
                                     gone as the digits before them vary)
           durations                 N ms, duration=Nms
           the trace file            trace TRACE (and the rows it wraps onto)
           the environment's size    N stripped (the harness may add sanitizer
                                     variables)
           the mount count           N mounts... (the host's /lib32, /lib64;
                                     to the end of the pane's line)
           the prompt's countdown    deny in N s - only from 1 up: a countdown
                                     of 0 right after the prompt opened is a bug
           the Run timeline's rows   output / events (where marks fall moves
                                     with the run's timing)
  A field whose width varies also takes the blanks after it, so a pane's
  right border does not move with it.
A script that runs a skill needs root or unprivileged user namespaces: where
`skillgate run` cannot work, it fails with the reason when CI is set, and is
skipped with the reason elsewhere.
"""
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

SG = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(sys.argv[2])
UPDATE = "--update" in sys.argv[3:]
SCREENS = os.path.join(SRC, "tests", "screens")
FIXTURES = os.path.join(SCREENS, "fixtures")
IN_CI = bool(os.environ.get("CI"))
# meson and the sanitizer build set these; the harness passes them on
PASS_ENV = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "MSAN_OPTIONS", "MALLOC_PERTURB_")

ALWAYS = [
    (re.compile(r"/tmp/sgscreen\.([A-Za-z0-9_]{1,8})"),
     lambda m: "/tmp/sgscreen." + "X" * len(m.group(1))),
]


def vital_signs(m):
    state, counts, name, limit, paused = m.groups()[:5]
    # what follows the time (the pid, the peak memory) is whole, clipped or
    # gone at a column that moves with the clock's digits: left out
    # (tui_test's memory_shown_is_the_peak checks the peak)
    return f" {state}  {counts}  {name}  N.Ns{limit or ''}{paused or ''}"


RUN = [
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "HH:MM:SS"),
    (re.compile(r"^ (WAITING FOR YOU|running|stopping|done)  (blocked \d+ · asked \d+ · "
                r"allowed \d+)  (\S+)  \d+\.\ds(/\d+s)?( paused)?(.*)$", re.M), vital_signs),
    (re.compile(r"\b\d+ ms\b"), "N ms"),
    (re.compile(r"resumes after \d+"), "resumes after N"),  # how long the script's answer took
    (re.compile(r"decides \(\d+\.\ds of"), "decides (N.Ns of"),  # the time left then
    # the trace's path: on the outcome's row, or on rows of its own under it
    (re.compile(r"  trace /\S*(\n {2}\S+)*$", re.M), "  trace TRACE"),
    (re.compile(r"\bduration=\d+ms *"), "duration=Nms "),
    (re.compile(r"\b\d+ stripped *"), "N stripped "),
    (re.compile(r"\b\d+ mounts\b[^│\n]*"), "N mounts..."),
    (re.compile(r"\bdeny in [1-9]\d* s\b"), "deny in N s"),
    # the Run screen's timeline: where in its width a line or a refusal
    # falls moves with the run's timing (tui_test checks its marks)
    (re.compile(r"^ output  .*$", re.M), " output  TIMELINE"),
    (re.compile(r"^ events  [.x?+]+ T hide *$", re.M), " events  TIMELINE"),
]


def header(text):
    """The runner's settings from the script's leading comments."""
    h = {"size": "80x24", "dirs": [], "needs": set(), "mask": []}
    for line in text.splitlines():
        m = re.match(r"\s*#\s*(size|dirs|needs|mask):\s*(.*?)\s*$", line)
        if not m:
            continue
        key, val = m.groups()
        if key == "size":
            h["size"] = val
        elif key == "dirs":
            h["dirs"] += val.split()
        elif key == "needs":
            h["needs"] |= set(val.split())
        else:
            h["mask"].append(re.compile(val))
    return h


def normalise(text, h):
    rules = ALWAYS + (RUN if "sandbox" in h["needs"] else []) + [(m, "~") for m in h["mask"]]
    for rx, rep in rules:
        text = rx.sub(rep, text)
    return text


def environment(root):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(root, "home"),
           "XDG_STATE_HOME": os.path.join(root, "state"),
           "XDG_CONFIG_HOME": os.path.join(root, "config"),
           "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    for k in PASS_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


class Sandbox:
    """Whether `skillgate run` works here: asked once, the first time a script needs it."""
    reason = False

    @classmethod
    def unavailable(cls):
        if cls.reason is not False:
            return cls.reason
        root = tempfile.mkdtemp(prefix="sgscreen.", dir="/tmp")
        try:
            os.chmod(root, 0o755)
            d = os.path.join(root, "preflight")
            os.makedirs(d)
            with open(os.path.join(d, "SKILL.md"), "w") as f:
                f.write("---\nname: preflight\ndescription: x\nallowed-tools: Read\n---\n")
            with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
                f.write("skill:\n  name: preflight\nentrypoint:\n  command: python3\n"
                        "  args: [main.py]\n")
            with open(os.path.join(d, "main.py"), "w") as f:
                f.write("print('ok')\n")
            for x in os.listdir(d):
                os.chmod(os.path.join(d, x), 0o644)
            os.chmod(d, 0o755)
            p = subprocess.run([SG, "run", d], capture_output=True, text=True, cwd="/",
                               env=environment(root), timeout=60)
            if p.returncode == 0 and p.stdout.strip() == "ok":
                cls.reason = None
            else:
                why = " | ".join(p.stderr.strip().splitlines())[-400:]
                cls.reason = (f"skillgate run does not work here (needs root or unprivileged "
                              f"user namespaces): {why}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return cls.reason


def expected_name(name, k):
    return os.path.join(SCREENS, f"{name}.expected" if k == 1 else f"{name}-{k}.expected")


def diff_lines(want, got, label):
    return list(difflib.unified_diff(want.splitlines(), got.splitlines(),
                                     f"{label} (expected)", f"{label} (screen)", lineterm=""))


def run_script(path):
    """Returns a list of problems (empty: every screen matched)."""
    name = os.path.basename(path)[:-len(".script")]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    h = header(text)
    dumps = re.findall(r"^\s*dump\s+@OUT@/(\S+)\s*$", text, re.M)
    if dumps != [str(k) for k in range(1, len(dumps) + 1)] or not dumps:
        return [f"{name}: dumps must be `dump @OUT@/1`, `dump @OUT@/2`, ... in order (got {dumps})"]
    root = tempfile.mkdtemp(prefix="sgscreen.", dir="/tmp")
    try:
        os.chmod(root, 0o755)
        for d in ("home", "out"):
            os.makedirs(os.path.join(root, d))
        shutil.copytree(os.path.join(FIXTURES, "state"), os.path.join(root, "state"))
        shutil.copytree(os.path.join(FIXTURES, "config"), os.path.join(root, "config"))
        out = os.path.join(root, "out")
        script = os.path.join(root, "script")
        with open(script, "w", encoding="utf-8") as f:
            f.write(text.replace("@OUT@", out))
        cmd = [SG, "tui", "--theme", "default", "--script", script, "--size", h["size"],
               *h["dirs"]]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=SRC,
                               env=environment(root), timeout=120)
        except subprocess.TimeoutExpired:
            return [f"{name}: skillgate tui did not finish in 120 s"]
        problems = []
        if p.returncode != 0:
            problems.append(f"{name}: skillgate tui exited {p.returncode}\n{p.stderr.strip()}")
        elif p.stderr.strip():
            problems.append(f"{name}: unexpected stderr\n{p.stderr.strip()}")
        for k in range(1, len(dumps) + 1):
            label = os.path.basename(expected_name(name, k))
            try:
                with open(os.path.join(out, str(k)), encoding="utf-8") as f:
                    got = normalise(f.read(), h)
            except FileNotFoundError:
                problems.append(f"{label}: the script never reached dump {k}")
                continue
            exp = expected_name(name, k)
            if UPDATE:
                with open(exp, "w", encoding="utf-8") as f:
                    f.write(got)
                continue
            try:
                with open(exp, encoding="utf-8") as f:
                    want = normalise(f.read(), h)
            except FileNotFoundError:
                problems.append(f"{label}: missing (screen_test.py --update writes it); the "
                                f"screen:\n{got}")
                continue
            if want != got:
                problems.append(f"{label}: the screen differs\n" +
                                "\n".join(diff_lines(want, got, label)))
        extra = [e for e in glob.glob(os.path.join(SCREENS, f"{name}-*.expected"))
                 if re.fullmatch(re.escape(name) + r"-(\d+)\.expected", os.path.basename(e))
                 and int(re.search(r"-(\d+)\.expected$", e).group(1)) > len(dumps)]
        for e in extra:
            if UPDATE:
                os.unlink(e)
            else:
                problems.append(f"{os.path.basename(e)}: no dump of the script makes it")
        return problems
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    scripts = sorted(glob.glob(os.path.join(SCREENS, "*.script")))
    print(f"1..{len(scripts)}")
    failed = 0
    for i, path in enumerate(scripts, 1):
        name = os.path.basename(path)[:-len(".script")]
        with open(path, encoding="utf-8") as f:
            h = header(f.read())
        if "sandbox" in h["needs"]:
            why = Sandbox.unavailable()
            if why and IN_CI:
                failed += 1
                print(f"not ok {i} - {name}\n# {why}")
                continue
            if why:
                print(f"ok {i} - {name} # SKIP {why}")
                continue
        t0 = time.monotonic()
        try:
            problems = run_script(path)
        except Exception:  # noqa: BLE001 - every failure is reported as TAP
            problems = [traceback.format_exc()]
        if problems:
            failed += 1
            print(f"not ok {i} - {name}")
            for pr in problems:
                for line in pr.splitlines():
                    print(f"# {line}")
        else:
            print(f"ok {i} - {name} ({time.monotonic() - t0:.1f}s)"
                  + (" (expected files written)" if UPDATE else ""))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
