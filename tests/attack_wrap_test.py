#!/usr/bin/env python3
"""Issue 51: the agent's Bash decided on what runs, not on how the line
reads. Each attack line below broke the hook's static reading on main
(b4638eb); each is tried in both of the hook's modes, as root and as an
unprivileged user, with events exactly as Claude Code sends them
(PreToolUse):

- reader only: the line is asked, never allowed on a reading (item 3);
- sandboxed (hook: {sandbox_bash: true}): the hook allows the line
  rewritten to run under `skillgate wrap`; that command is then run as
  Claude Code runs it, and the denied program never runs, the audit
  record naming it (item 2).

And `skillgate wrap` itself (item 1): stdin, stdout, stderr and the exit
status pass through; writes outside the working folder are refused and
said; credentials are masked; srt's and Claude Code's settings keep their
meaning; a pattern or a repository's widening is not taken. Claude Code's
own sandbox settings: one sandbox runs a line, never two nested;
dangerouslyDisableSandbox and excludedCommands are asked.

No packet leaves the machine: nothing here names a host.

Usage: attack_wrap_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402
import attack_agent_test as ag  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

# The breaks of the issue, under deny: [Bash(touch:*)] and allow rules for
# each program the line names on its face. Each creates its own file F<n>
# in the project when the denied touch runs. (name, line, needs)
ATTACKS = [
    ("BASH_CMDS by printf -v", "printf -v 'BASH_CMDS[ls]' /usr/bin/touch; ls F1", None),
    ("jobs -x", "jobs -x touch F2", None),
    ("compgen -C", "compgen -C 'touch F3' x", None),
    ("mapfile -C", "mapfile -C 'touch F4' -c 1 <<< x", None),
    ("declare BASH_CMDS", "declare 'BASH_CMDS[ls]=/usr/bin/touch'; ls F5", None),
    ("PS4 with set -x", "PS4='$(touch F6)'; set -x; true", None),
    ("xargs env", "echo touch F7 | xargs env", None),
    ("xargs nohup", "echo touch F8 | xargs nohup", None),
    ("xargs setsid", "echo touch F12 | xargs setsid -w", None),
    ("xargs stdbuf", "echo touch F13 | xargs stdbuf -o0", None),
    ("xargs nice", "echo touch F14 | xargs nice", None),
    ("rbash -c", "rbash -c 'touch F9'", "rbash"),
    ("ssh-agent", "ssh-agent touch F10", "ssh-agent"),
    ("dbus-run-session", "dbus-run-session -- touch F11", "dbus-run-session"),
    # found by the review of the fix: the program by another name or route
    ("a #! interpreter", "printf '#!/usr/bin/touch F15\\n' > s && chmod +x s && ./s", None),
    ("a link on PATH", "mkdir -p b && ln -sf /usr/bin/touch b/mytouch && "
                       "PATH=$PWD/b:$PATH mytouch F16", None),
    ("the dynamic loader", "/lib64/ld-linux-x86-64.so.2 /usr/bin/touch F17",
     "/lib64/ld-linux-x86-64.so.2"),
    # third review: a multi-call program's applet is its argv[0]
    ("busybox by argv[0]", "(exec -a touch busybox F18)", "busybox"),
]
ALLOWS = ["git", "printf", "ls", "jobs", "compgen", "mapfile", "declare", "set", "true", "echo",
          "xargs", "rbash", "ssh-agent", "dbus-run-session", "env", "nohup", "setsid",
          "stdbuf", "nice", "cd", "cp", "shopt"]
POLICY = ('deny:\n  - "Bash(touch:*)"\nallow:\n' +
          "".join(f'  - "Bash({p}:*)"\n' for p in ALLOWS))


def config(m, sandbox):
    """config.yaml of the mode: the test names' resolve lines, and the hook's mode."""
    p = h.write_resolve_config(os.path.join(m.home, ".config"), m.uid)
    with open(p, "a") as f:
        f.write(f"hook:\n  sandbox_bash: {'true' if sandbox else 'false'}\n")
    return p


def person(m, *paths):
    """Places of the person's that the wrapped command runs as: as root
    without sudo that is nobody (a skill's identity: never real root), so
    there the home is passable and the places are nobody's."""
    if h.IS_ROOT and m.uid == 0:
        os.chmod(m.home, 0o711)
    for p in paths:
        for d, ds, fs in os.walk(p):
            for x in [d] + [os.path.join(d, y) for y in ds + fs]:
                if h.IS_ROOT:
                    os.chown(x, h.NOBODY if m.uid == 0 else m.uid,
                             h.NOBODY if m.uid == 0 else m.uid, follow_symlinks=False)
    return paths[0] if paths else None


def as_person(m, cmd):
    """cmd as the identity a wrapped command has (person())."""
    if h.IS_ROOT and m.uid == 0:
        return ["setpriv", f"--reuid={h.NOBODY}", f"--regid={h.NOBODY}", "--clear-groups", *cmd]
    return as_mode(m, cmd)


def env_of(m, base):
    return {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
            "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": os.path.join(base, "run")}


def as_mode(m, cmd):
    if h.IS_ROOT and m.uid != 0:
        return ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    return cmd


def run_as_claude(m, base, command, cwd, stdin=b""):
    """The tool input's command, as Claude Code's Bash tool runs it."""
    return subprocess.run(as_mode(m, ["bash", "-c", command]), input=stdin,
                          capture_output=True, env=env_of(m, base), cwd=cwd, timeout=120,
                          start_new_session=True)


def wrap(m, base, args, cwd, stdin=b"", extra_env=None):
    e = env_of(m, base)
    e.update(extra_env or {})
    return subprocess.run(as_mode(m, [h.SG, "wrap", *args]), input=stdin, capture_output=True,
                          env=e, cwd=cwd, timeout=120, start_new_session=True)


def audit(m):
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    return [json.loads(x) for x in open(log) if x.strip()] if os.path.exists(log) else []


def present(prog):
    return prog is None or (os.path.exists(prog) if prog.startswith("/")
                            else shutil.which(prog, path="/usr/bin:/bin"))


@test()
def reader_asks_every_break_never_allows(m, base):
    """Item 3: without the sandbox, each break is asked; plain lines the
    rules name are still allowed, and a deny rule still denies plainly."""
    config(m, sandbox=False)
    proj = ag.project(m, base)
    ag.policy(m, POLICY)
    for name, line, _ in ATTACKS + [
            ("printf -v HOME", "printf -v HOME /tmp; cd; cp x .claude/settings.json", None),
            ("printf -v CDPATH", "printf -v CDPATH /tmp; cd skillgate", None),
            ("cdable_vars", "shopt -s cdable_vars; cd HOME", None),
            # a folder's own repository: its config runs (second review)
            ("cd then git", "cd sub && git diff --no-index a b", None),
            ("env -C", "env -C sub git diff", None),
            ("env GIT_DIR", "env GIT_DIR=sub git diff", None),
            ("git config", "git config core.pager 'touch F' && git log", None),
            ("zsh arithmetic", "printf '%d' 'path[$(touch F1)]'", None),
            ("zsh assignment", "printf %d PATH=0 && ls", None),
            ("git after cd, in sh -c", "bash -c 'cd sub && git diff'", None),
            ("git after cd, through env", "cd sub && env git diff", None)]:
        out = ag.hook(m, base, "Bash", {"command": line}, proj)
        assert ag.decision(out) != "allow", (name, out)
    for line in ("ls -la", "printf '%s\\n' hello", "echo hi && ls"):
        out = ag.hook(m, base, "Bash", {"command": line}, proj)
        assert ag.decision(out) == "allow", (line, out)
    out = ag.hook(m, base, "Bash", {"command": "touch F0"}, proj)
    assert ag.decision(out) == "deny", out
    # a cd in an earlier call: Claude Code keeps the folder and names the
    # project; git in another folder reads that folder's repository
    sub = os.path.join(proj, "sub")
    os.makedirs(sub, exist_ok=True)
    ag.own(m, sub)
    out = hook_in(m, base, "git diff", sub, proj)
    assert ag.decision(out) != "allow", out
    out = hook_in(m, base, "git diff", proj, proj)
    assert ag.decision(out) == "allow", out


def hook_in(m, base, line, cwd, project):
    """A Bash PreToolUse event with Claude Code's CLAUDE_PROJECT_DIR."""
    ev = {"session_id": f"wrap-{m.name}", "cwd": cwd, "hook_event_name": "PreToolUse",
          "tool_name": "Bash", "tool_input": {"command": line}, "tool_use_id": "toolu_W"}
    e = {**env_of(m, base), "CLAUDE_PROJECT_DIR": project}
    p = subprocess.run(as_mode(m, [h.SG, "hook"]), input=json.dumps(ev).encode(),
                       capture_output=True, env=e, timeout=60, cwd=cwd, start_new_session=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)["hookSpecificOutput"]


@test()
def sandboxed_the_denied_program_never_runs(m, base):
    """Item 2: with sandbox_bash, each break is allowed rewritten to run
    under skillgate wrap; run as Claude Code runs it, touch never runs, and
    the audit log has the refusal of /usr/bin/touch."""
    config(m, sandbox=True)
    proj = ag.project(m, base)
    ag.policy(m, POLICY)
    tried = 0
    for name, line, needs in ATTACKS:
        out = ag.hook(m, base, "Bash", {"command": line}, proj)
        if ag.decision(out) == "deny":  # a deny rule named it on its face (rbash -c)
            assert "Bash(touch:*)" in out["permissionDecisionReason"], (name, out)
            tried += 1
            continue
        assert ag.decision(out) == "allow", (name, out)
        cmd = out["updatedInput"]["command"]
        assert " wrap " in cmd and "bash -c" in cmd, cmd
        if not present(needs):
            continue  # the hook's answer is checked; there is no such program to run
        tried += 1
        before = len(audit(m))
        run_as_claude(m, base, cmd, proj)
        made = [f for f in os.listdir(proj) if f.startswith("F")]
        assert not made, (name, made)
        recs = [r for r in audit(m)[before:] if r.get("type") == "decision"]
        touch = [r for r in recs if "touch" in r.get("request", "")]
        assert not [r for r in recs if r.get("decision") == "allow" and
                    r.get("request", "").startswith("Bash(/usr/bin/touch")], (name, recs)
        # the refusal names the program; ssh-agent, made undumpable, gets no
        # further as an ordinary user (the broker cannot resolve its paths)
        # (busybox is refused as itself: its argv[0] is no safe reading)
        named = [r for r in (recs if "busybox" in name else touch) if r.get("decision") == "deny"]
        assert named or (name == "ssh-agent" and m.name == "user"), (
            name, [r.get("request") for r in recs])
    assert tried >= 14, tried  # busybox only where it is installed
    # a plainly denied line is still denied on its face
    out = ag.hook(m, base, "Bash", {"command": "touch F0"}, proj)
    assert ag.decision(out) == "deny", out


@test()
def sandboxed_the_agents_own_files_stay_out_of_reach(m, base):
    """Item 2: whatever HOME or CDPATH says, the agent's policy and its
    settings cannot be changed from a sandboxed line."""
    config(m, sandbox=True)
    proj = ag.project(m, base)
    pol = ag.policy(m, POLICY)
    claude = os.path.join(m.home, ".claude")
    os.makedirs(claude, exist_ok=True)
    settings = os.path.join(claude, "settings.json")
    with open(settings, "w") as f:
        f.write('{"hooks": {}}\n')
    ag.own(m, claude, settings)
    before = {p: open(p).read() for p in (pol, settings)}
    line = (f"echo '{{\"disableAllHooks\": true}}' > evil.json; "
            f"cp evil.json {settings}; printf -v HOME %s '{m.home}'; cp evil.json ~/.claude/; "
            f"CDPATH={m.home}/.config; cd skillgate && echo 'allow: [\"Bash(*)\"]' > "
            f"hook-policy.yaml; cp evil.json {pol}")
    out = ag.hook(m, base, "Bash", {"command": line}, proj)
    assert ag.decision(out) == "allow", out
    run_as_claude(m, base, out["updatedInput"]["command"], proj)
    for p, text in before.items():
        assert open(p).read() == text, p


@test()
def claude_codes_sandbox_settings_keep_their_meaning(m, base):
    """Item 2: Claude Code's sandbox on: one sandbox runs the line, never
    both; dangerouslyDisableSandbox and excludedCommands are asked."""
    config(m, sandbox=True)
    proj = ag.project(m, base)
    ag.policy(m, POLICY)
    cdir = os.path.join(proj, ".claude")
    os.makedirs(cdir, exist_ok=True)
    ag.own(m, cdir)

    def settings(obj):
        p = os.path.join(cdir, "settings.json")
        with open(p, "w") as f:
            json.dump(obj, f)
        ag.own(m, p)

    settings({"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True}})
    out = ag.hook(m, base, "Bash", {"command": "ls"}, proj)
    assert ag.decision(out) == "allow" and out["updatedInput"]["dangerouslyDisableSandbox"] is True
    assert "in place of Claude Code's" in out["permissionDecisionReason"], out
    # the repository may not keep skillgate's sandbox out: asked
    settings({"sandbox": {"enabled": True, "allowUnsandboxedCommands": False}})
    out = ag.hook(m, base, "Bash", {"command": "ls"}, proj)
    assert ag.decision(out) == "ask" and "repository" in out["permissionDecisionReason"], out
    assert "updatedInput" not in out, out
    # your own settings may: Claude Code's sandbox runs it, never nested
    os.remove(os.path.join(cdir, "settings.json"))
    mine = os.path.join(m.home, ".claude")
    os.makedirs(mine, exist_ok=True)
    with open(os.path.join(mine, "settings.json"), "w") as f:
        json.dump({"sandbox": {"enabled": True, "allowUnsandboxedCommands": False}}, f)
    ag.own(m, mine, os.path.join(mine, "settings.json"))
    out = ag.hook(m, base, "Bash", {"command": "ls"}, proj)
    assert ag.decision(out) == "allow" and "updatedInput" not in out, out
    out = ag.hook(m, base, "Bash", {"command": "jobs -x touch F2"}, proj)
    assert ag.decision(out) != "allow", out  # and the reader decides, as an allowlist
    # the project's settings as a link are read as Claude Code reads them:
    # enabled: false there wins over yours, so skillgate's sandbox runs it
    other = os.path.join(base, "cs.json")
    with open(other, "w") as f:
        json.dump({"sandbox": {"enabled": False}}, f)
    os.chmod(other, 0o644)
    os.symlink(other, os.path.join(cdir, "settings.json"))
    out = ag.hook(m, base, "Bash", {"command": "ls"}, proj)
    assert ag.decision(out) == "allow" and " wrap " in out["updatedInput"]["command"], out
    os.remove(os.path.join(cdir, "settings.json"))
    os.remove(os.path.join(mine, "settings.json"))
    settings({"sandbox": {"enabled": False, "excludedCommands": ["docker", "git push:*"]}})
    for line in ("docker ps", "git push origin main"):
        out = ag.hook(m, base, "Bash", {"command": line}, proj)
        assert ag.decision(out) != "allow" and "excludedCommands" in out[
            "permissionDecisionReason"], out
    out = ag.hook(m, base, "Bash", {"command": "git status"}, proj)
    assert ag.decision(out) == "allow" and "updatedInput" in out, out
    out = ag.hook(m, base, "Bash", {"command": "ls", "dangerouslyDisableSandbox": True}, proj)
    assert ag.decision(out) != "allow" and "dangerouslyDisableSandbox" in out[
        "permissionDecisionReason"], out


@test()
def wrap_passes_stdio_and_exit_status_through(m, base):
    """Item 1: a script or CI job sees the command's own bytes and status."""
    proj = person(m, ag.project(m, base))
    blob = bytes(range(256)) * 64 + b"no newline at the end"
    p = wrap(m, base, ["--", "sh", "-c", "cat; printf 'E\\001' >&2; exit 7"], proj, stdin=blob,
             extra_env={"API_TOKEN": "t", "HTTPS_PROXY": "http://u:pw@proxy.test:3128"})
    assert p.returncode == 7, (p.returncode, p.stderr[-2000:])
    assert p.stdout == blob, (len(p.stdout), p.stdout[-50:])
    assert p.stderr == b"E\x01", p.stderr[-500:]
    # writes in the working folder are the command's; its folder is as it was
    p = wrap(m, base, ["--", "sh", "-c", "mkdir -p out && echo data > out/f && cat out/f"], proj)
    assert p.returncode == 0 and p.stdout == b"data\n", p.stderr[-2000:]
    assert open(os.path.join(proj, "out", "f")).read() == "data\n"
    t = m.last_trace()
    assert t["skill_name"] == "wrap", t["skill_name"]
    # every argument byte for byte, whatever its encoding
    p = wrap(m, base, ["--", "printf", "[%s]", "a", b"\xff", "b", "\U0001f916"], proj)
    assert p.stdout == b"[a][\xff][b][\xf0\x9f\xa4\x96]", (p.stdout, p.stderr[-500:])
    # stdin opened read-write is given read-only: no write through it
    f = os.path.join(base, "outside-stdin")
    with open(f, "w") as fh:
        fh.write("kept\n")
    with open(f, "r+b") as fh:
        p = subprocess.run(as_mode(m, [h.SG, "wrap", "--", "sh", "-c", "cat; echo x >&0"]),
                           stdin=fh, capture_output=True, env=env_of(m, base), cwd=proj,
                           timeout=60)
    assert p.stdout == b"kept\n" and open(f).read() == "kept\n", (p.stdout, p.stderr[-500:])


@test()
def wrap_refuses_writes_elsewhere_and_says_so(m, base):
    """Item 1: srt fails such a write silently; wrap refuses it (nobody to
    ask here) and says what it refused; credentials are masked."""
    proj = person(m, ag.project(m, base))
    # the home is shown read-only (a private /tmp hides the host's)
    outside = os.path.join(m.home, "outside")
    os.makedirs(outside)
    person(m, outside)
    ssh = os.path.join(m.home, ".ssh")
    os.makedirs(ssh, exist_ok=True)
    with open(os.path.join(ssh, "id_ed25519"), "w") as f:
        f.write(h.PLANTED)
    person(m, ssh, os.path.join(ssh, "id_ed25519"))
    p = wrap(m, base, ["--", "sh", "-c",
                       f"echo x > {outside}/f; cat {ssh}/id_ed25519; echo ok > here"], proj)
    err = p.stderr.decode()
    assert not os.path.exists(os.path.join(outside, "f"))
    assert h.PLANTED.encode() not in p.stdout + p.stderr
    assert os.path.exists(os.path.join(proj, "here"))
    assert "refused" in err and f"{outside}/f" in err, err[-2000:]
    # a --write folder is writable for the call
    p = wrap(m, base, ["--write", outside, "--", "sh", "-c", f"echo y > {outside}/g"], proj)
    assert p.returncode == 0 and os.path.exists(os.path.join(outside, "g")), p.stderr[-2000:]


@test()
def wrap_reads_srt_and_claude_code_settings(m, base):
    """Item 1: srt's settings file and Claude Code's `sandbox` object, each
    key as its owner documents it; what cannot be modelled is refused."""
    proj = ag.project(m, base)
    extra, secret = os.path.join(m.home, "extra"), os.path.join(m.home, "secret")
    for d in (extra, secret):
        os.makedirs(d)
        person(m, d)
    with open(os.path.join(secret, "s"), "w") as f:
        f.write(h.PLANTED)
    ro = os.path.join(proj, "vendor")
    os.makedirs(ro)
    ag.own(m, ro)
    srt = os.path.join(base, "srt.json")
    with open(srt, "w") as f:
        json.dump({"filesystem": {"allowWrite": [extra], "denyRead": [secret],
                                  "denyWrite": [ro]},
                   "network": {"allowedDomains": ["api.example.test"]}}, f)
    os.chmod(srt, 0o644)
    line = (f"echo a > {extra}/a; cat {secret}/s; echo b > {ro}/b; echo c > c")
    p = wrap(m, base, ["--settings", srt, "--", "sh", "-c", line], proj)
    assert os.path.exists(os.path.join(extra, "a")), p.stderr[-2000:]
    assert h.PLANTED.encode() not in p.stdout + p.stderr
    assert not os.path.exists(os.path.join(ro, "b"))
    assert os.path.exists(os.path.join(proj, "c"))
    # Claude Code's form: // is the root, the rest relative to the file
    cc = os.path.join(base, "cc.json")
    with open(cc, "w") as f:
        json.dump({"sandbox": {"filesystem": {"denyRead": ["//" + secret.lstrip("/")]},
                               "credentials": {"envVars": [{"name": "PLAIN_VAR",
                                                            "mode": "deny"}]}}}, f)
    os.chmod(cc, 0o644)
    p = wrap(m, base, ["--settings", cc, "--", "sh", "-c",
                       f"cat {secret}/s; echo \"[$PLAIN_VAR][$OTHER_VAR][$API_TOKEN]\""], proj,
             extra_env={"PLAIN_VAR": "p", "OTHER_VAR": "o", "API_TOKEN": "t"})
    assert h.PLANTED.encode() not in p.stdout
    assert p.stdout.strip().endswith(b"[][o][]"), p.stdout[-300:]
    # a pattern is refused with the file, key and value
    with open(srt, "w") as f:
        json.dump({"filesystem": {"denyRead": ["~/**.kdbx"]}}, f)
    p = wrap(m, base, ["--settings", srt, "--", "true"], proj)
    assert p.returncode == 126 and b"denyRead" in p.stderr and b"**.kdbx" in p.stderr, p.stderr
    # a broken file: its line and column
    with open(srt, "w") as f:
        f.write('{"filesystem": {\n  "allowWrite": [}\n')
    p = wrap(m, base, ["--settings", srt, "--", "true"], proj)
    assert p.returncode == 126 and f"{srt}:2:".encode() in p.stderr, p.stderr
    # a repository's denyWrite through a link to a host place shows nothing
    # of it (the bind goes to the real path, and only inside the folder)
    os.symlink("/var", os.path.join(proj, "y"))
    with open(srt, "w") as f:
        json.dump({"filesystem": {"denyWrite": ["y"], "denyRead": ["y/nothing-there"]}}, f)
    p = wrap(m, base, ["--settings", srt, "--", "ls", "-A", "/var"], proj)
    assert p.returncode == 0 and p.stdout == b"", (p.stdout[-500:], p.stderr[-1000:])
    os.remove(os.path.join(proj, "y"))
    # the repository's own settings narrow, never widen
    cdir = os.path.join(proj, ".claude")
    os.makedirs(cdir)
    with open(os.path.join(cdir, "settings.json"), "w") as f:
        json.dump({"sandbox": {"filesystem": {"allowWrite": ["//" + extra.lstrip("/")],
                                              "denyRead": ["//" + secret.lstrip("/")]}}}, f)
    ag.own(m, cdir, os.path.join(cdir, "settings.json"))
    p = wrap(m, base, ["--", "sh", "-c", f"echo z > {extra}/z; cat {secret}/s"], proj)
    assert not os.path.exists(os.path.join(extra, "z")), p.stderr[-2000:]
    assert h.PLANTED.encode() not in p.stdout
    assert b"widen" in p.stderr, p.stderr[-2000:]
    # from a subfolder of the project, its settings still hold
    sub = os.path.join(proj, "sub")
    os.makedirs(sub)
    ag.own(m, sub)
    p = wrap(m, base, ["--", "cat", f"{secret}/s"], sub)
    assert h.PLANTED.encode() not in p.stdout, p.stdout
    # a URL with a user part in a value is kept out; a *_PATH name is not
    p = wrap(m, base, ["--", "sh", "-c", "echo \"[$PIP_INDEX_URL][$NODE_PATH]\""], proj,
             extra_env={"PIP_INDEX_URL": "https://ghp_x@pypi.example.test/simple",
                        "NODE_PATH": "/n"})
    assert p.stdout.strip().endswith(b"[][/n]"), p.stdout


def need(*progs):
    for p in progs:
        if not shutil.which(p, path="/usr/bin:/bin"):
            raise h.Skip(f"{p} is not installed (scripts/dev installs it)")


@test()
def real_work_finishes_as_bare(m, base):
    """Item 1: a C project's make && make test, git commit in a local
    repository, pytest of a small package and npm ci from a local cache,
    with nobody answering anything: each ends as it does bare."""
    need("make", "cc", "git", "npm")
    proj = person(m, ag.project(m, base))
    with open(os.path.join(proj, "Makefile"), "w") as f:
        f.write("all: hello\nhello: hello.c\n\tcc -O1 -o hello hello.c\n"
                "test: hello\n\t./hello | grep -q hi\n")
    with open(os.path.join(proj, "hello.c"), "w") as f:
        f.write('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    os.makedirs(os.path.join(proj, "pkg"))
    with open(os.path.join(proj, "pkg", "__init__.py"), "w") as f:
        f.write("def add(a, b):\n    return a + b\n")
    with open(os.path.join(proj, "test_pkg.py"), "w") as f:
        f.write("from pkg import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    for d, ds, fs in os.walk(proj):
        person(m, d, *[os.path.join(d, x) for x in fs + ds])
    steps = [
        ["sh", "-c", "make && make test"],
        ["sh", "-c", "git -c user.name=t -c user.email=t@t.test add -A && "
                     "git -c user.name=t -c user.email=t@t.test commit -qm first && "
                     "git log --oneline"],
    ]
    # the repository is there before (making .git is a protected target's
    # creation, asked on its own: issue 50)
    r = subprocess.run(as_person(m, ["git", "init", "-q", proj]), capture_output=True,
                       env=env_of(m, base), timeout=60)
    assert r.returncode == 0, r.stderr
    if shutil.which("pytest-3", path="/usr/bin:/bin") or subprocess.run(
            ["python3", "-c", "import pytest"], capture_output=True).returncode == 0:
        steps.append(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    elif h.IN_CI:
        raise h.Skip("pytest is not installed (python3-pytest)")
    for cmd in steps:
        p = wrap(m, base, ["--", *cmd], proj)
        assert p.returncode == 0, (cmd, p.returncode, p.stdout[-1500:], p.stderr[-2500:])
        if cmd[0] == "sh" and "git" in cmd[2]:
            assert b"first" in p.stdout, p.stdout
    assert os.path.exists(os.path.join(proj, "hello"))
    # npm ci from a local cache: a package packed here, its tarball the cache
    lib = os.path.join(base, "leftpad")
    os.makedirs(lib)
    with open(os.path.join(lib, "package.json"), "w") as f:
        json.dump({"name": "leftpad-local", "version": "1.0.0", "main": "index.js"}, f)
    with open(os.path.join(lib, "index.js"), "w") as f:
        f.write("module.exports = (s, n) => s.padStart(n);\n")
    app = os.path.join(base, "app")
    os.makedirs(app)
    for d in (lib, app):
        for dd, ds, fs in os.walk(d):
            ag.own(m, dd, *[os.path.join(dd, x) for x in fs + ds])
    e = {"npm_config_cache": os.path.join(app, ".npm"), "npm_config_offline": "true",
         "npm_config_audit": "false", "npm_config_fund": "false",
         "npm_config_update_notifier": "false"}
    r = subprocess.run(as_mode(m, ["npm", "pack", lib, "--pack-destination", app]),
                       capture_output=True, env={**env_of(m, base), **e}, cwd=app, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    with open(os.path.join(app, "package.json"), "w") as f:
        json.dump({"name": "app", "version": "1.0.0",
                   "dependencies": {"leftpad-local": "file:leftpad-local-1.0.0.tgz"}}, f)
    ag.own(m, os.path.join(app, "package.json"))
    r = subprocess.run(as_mode(m, ["npm", "install", "--package-lock-only"]), capture_output=True,
                       env={**env_of(m, base), **e}, cwd=app, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    p = wrap(m, base, ["--", "sh", "-c", "npm ci && node -e \"console.log(require('leftpad-local')('x', 3))\""],
             app, extra_env=e)
    assert p.returncode == 0 and p.stdout.endswith(b"  x\n"), (p.stdout[-500:], p.stderr[-2500:])


def main():
    return h.main(TESTS)


if __name__ == "__main__":
    sys.exit(main())
