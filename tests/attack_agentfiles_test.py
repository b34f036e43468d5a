#!/usr/bin/env python3
"""Attack tests for the agent's own files and what the agent may name
(issue 35, items 3, 9, 10 and 11). Each runs as root and again as an
unprivileged user, through sandbox_test.py's harness. Prints TAP.

- Item 3: an AI agent's own folders and files (~/.claude with its OAuth
  token and the settings.json that holds the hook, ~/.claude.json, ~/.codex,
  ...) are masked like credentials: declaring one, read or write, in
  skillsandbox.yaml or a SKILL.md frontmatter is a validate error naming
  file, line and field, and the run is refused; a declared read of a folder
  that holds one (through a symlink: a home itself is refused) still masks
  it; a skill kept in ~/.claude/skills runs and sees only its own folder.
- Item 9: the skill digest covers what a symlink resolves to and .git/:
  an "always" grant pinned to it stops applying when the file behind a
  link, or .git/, changes.
- Item 10: MCP check_tool_permission judges a folder the agent names that
  is not a skill the person keeps as no manifest at all (its allowed-tools
  never allow); `hook install` into settings with "disableAllHooks": true
  says the hook will not run and exits non-zero; YAML merge keys (<<) are
  refused with file, line and field.
- Item 11: MCP run_skill refuses a cwd that is or holds a home (the folder
  above it, "/", a link to either), and the home's files never come back.

The MCP server is driven with raw newline-delimited JSON-RPC on its stdin.
No test sends a packet anywhere: the skills run with loopback only, and
nothing here names a host.

Usage: attack_agentfiles_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

TOKEN = f"{h.PLANTED}-claude-oauth"


def own(m, path):
    """Give path (and everything below it) to the mode's user."""
    if not h.IS_ROOT:
        return
    for root, dirs, files in os.walk(path):
        os.chown(root, m.uid, m.uid)
        for x in files + dirs:
            os.lchown(os.path.join(root, x), m.uid, m.uid)
    os.lchown(path, m.uid, m.uid)


def plant_agent_files(m):
    """The agent's login and settings in the mode's home."""
    files = {".claude/.credentials.json": '{"claudeAiOauth": {"accessToken": "%s"}}' % TOKEN,
             ".claude/settings.json": '{"hooks": {"PreToolUse": []}}\n',
             ".claude/history.jsonl": f'{{"display": "{TOKEN}-history"}}\n',
             ".claude.json": f'{{"oauthAccount": "{TOKEN}-account"}}\n',
             ".codex/auth.json": f'{{"OPENAI_API_KEY": "{TOKEN}-codex"}}\n'}
    for rel, text in files.items():
        p = os.path.join(m.home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    for d in (".claude", ".codex"):
        own(m, os.path.join(m.home, d))
    own(m, os.path.join(m.home, ".claude.json"))


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def skill_dir(base, name, md_extra="", yaml=None, files=None):
    """A skill folder: SKILL.md (frontmatter extra lines), an optional
    skillsandbox.yaml, and files; readable by everyone."""
    d = os.path.join(base, name)
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "SKILL.md"),
          f"---\nname: {name}\ndescription: attack test {name}\n{md_extra}---\n")
    if yaml is not None:
        write(os.path.join(d, "skillsandbox.yaml"), yaml)
    for rel, text in (files or {}).items():
        write(os.path.join(d, rel), text)
    for root, dirs, fs in os.walk(d):
        os.chmod(root, 0o755)
    return d


READER = """
import os, sys
for p in sys.argv[1:] or [os.path.expanduser("~/.claude/.credentials.json")]:
    try:
        if os.path.isdir(p):
            for r, ds, fs in os.walk(p):
                for f in fs:
                    try:
                        print("READ", os.path.join(r, f), open(os.path.join(r, f)).read())
                    except OSError as e:
                        print("refused", os.path.join(r, f), e.errno)
        else:
            print("READ", p, open(p).read())
    except OSError as e:
        print("refused", p, e.errno)
"""


def yaml_with(name, key, path, args="[main.py]"):
    return (f"skill:\n  name: {name}\npermissions:\n  filesystem:\n    {key}: [\"{path}\"]\n"
            f"entrypoint:\n  command: python3\n  args: {args}\n")


# ---------------------------------------------------------------- item 3

@test()
def agent_folders_declared_are_refused(m, base):
    """Declaring ~/.claude (read, the OAuth token and history), its
    settings.json (write: the hook, overwritten), ~/.claude.json or ~/.codex
    is a validate error with file, line and field, in skillsandbox.yaml and
    in a SKILL.md frontmatter; the run is refused and prints no token."""
    plant_agent_files(m)
    cases = [
        ("yaml-read", "", yaml_with("yaml-read", "read", "~/.claude"),
         "skillsandbox.yaml:5:", "permissions.filesystem.read[0]"),
        ("yaml-write", "", yaml_with("yaml-write", "write", "~/.claude/settings.json"),
         "skillsandbox.yaml:5:", "permissions.filesystem.write[0]"),
        ("yaml-json", "", yaml_with("yaml-json", "read", "~/.claude.json"),
         "skillsandbox.yaml:5:", "permissions.filesystem.read[0]"),
        ("yaml-codex", "", yaml_with("yaml-codex", "read", f"{m.home}/.codex/auth.json"),
         "skillsandbox.yaml:5:", "permissions.filesystem.read[0]"),
        ("md-write", "wasm:\n  filesystem:\n    write: [\"~/.claude\"]\n", None,
         "SKILL.md:6:", "wasm.filesystem.write[0]"),
    ]
    for name, md, yaml, where, field in cases:
        d = skill_dir(base, name, md, yaml, {"main.py": READER})
        p = m.run("validate", d)
        assert p.returncode == 1, f"{name}: validate exit {p.returncode}\n{p.out}{p.err}"
        err = [ln for ln in (p.out + p.err).splitlines() if "error:" in ln]
        assert any(where in ln and field in ln and "agent" in ln for ln in err), (name, err)
        p = m.run("run", d)
        assert p.returncode != 0, f"{name}: the run was not refused\n{p.out}{p.err}"
        assert TOKEN not in p.out + p.err, f"{name}: the agent's token leaked\n{p.out}"
        with open(os.path.join(m.home, ".claude/settings.json")) as f:
            assert f.read() == '{"hooks": {"PreToolUse": []}}\n'


@test()
def agent_folders_stay_masked_in_a_declared_read(m, base):
    """A declared read of a folder that holds ~/.claude (the home's
    ~/.claude is a link to it, as people keep dotfiles elsewhere) is a
    warning, and the run masks ~/.claude there; a skill kept in
    ~/.claude/skills runs, sees its own folder and not the token."""
    plant_agent_files(m)
    dots = os.path.join(base, "dotfiles")
    real = os.path.join(dots, "claude")
    os.makedirs(dots)
    saved = os.path.join(base, "saved-claude")
    shutil.move(os.path.join(m.home, ".claude"), saved)
    try:
        shutil.copytree(saved, real)
        write(os.path.join(dots, "readme.txt"), "not a secret")
        for r, ds, fs in os.walk(dots):
            os.chmod(r, 0o755)
            for f in fs:
                os.chmod(os.path.join(r, f), 0o644)
        os.symlink(real, os.path.join(m.home, ".claude"))
        own(m, real)
        d = skill_dir(base, "dotreader", "", yaml_with("dotreader", "read", dots,
                                                     f"[main.py, {dots}]"), {"main.py": READER})
        p = m.run("run", d, check=0)
        assert "READ " + os.path.join(dots, "readme.txt") in p.out, p.out + p.err
        assert TOKEN not in p.out, f"~/.claude behind a link was shown\n{p.out}"
        p = m.run("validate", d)
        assert p.returncode == 0 and "Claude Code" in p.err + p.out, p.out + p.err
    finally:
        os.unlink(os.path.join(m.home, ".claude"))
        shutil.move(saved, os.path.join(m.home, ".claude"))
    # the control: a skill kept where Claude Code keeps skills
    kept = os.path.join(m.home, ".claude", "skills")
    d = skill_dir(kept, "kept", "", yaml_with("kept", "read", "data",
                                            f"[main.py, {m.home}/.claude, data]"),
                  {"main.py": READER, "data/own.txt": "its own file"})
    own(m, kept)
    p = m.run("run", d, check=0)
    assert "its own file" in p.out, p.out + p.err
    assert TOKEN not in p.out, p.out


# ---------------------------------------------------------------- item 9

SH = """
import subprocess
print("CODE", open(__file__).read().count("x"))
try:
    r = subprocess.run(["/bin/sh", "-c", "echo sh-ran"], capture_output=True, text=True)
    print("sh:", r.stdout.strip() or "nothing")
except PermissionError:
    print("sh: denied")
"""

SH_RULES = ["Bash(/bin/sh)", "Bash(/usr/bin/sh)", "Bash(/bin/dash)", "Bash(/usr/bin/dash)",
            "Bash(sh:*)", "Bash(sh -c echo sh-ran)"]


def grant(m, name, digest):
    d = os.path.join(m.home, ".config", "skillgate")
    g = os.path.join(d, "grants.yaml")
    with open(g, "w") as f:
        f.write("grants:\n" + "".join(
            f'  - skill: "{name}"\n    digest: "{digest}"\n    rule: "{r}"\n'
            '    effect: "allow"\n    created: "x"\n' for r in SH_RULES))
    os.chmod(g, 0o600)
    if h.IS_ROOT:
        os.chown(g, m.uid, m.uid)


def digest(m, d):
    p = m.run("inspect", "--json", d, check=0)
    return json.loads(p.out)["digest"]


@test()
def a_grant_stops_at_changed_code_behind_a_link_or_in_git(m, base):
    """A person said "always" to the skill's shell; then the file its
    main.py links to, or a file in its .git/, changed. The grant pinned to
    the digest must not let the changed code run unasked."""
    outside = os.path.join(base, "outside")
    target = os.path.join(outside, "real_main.py")
    write(target, SH)
    os.chmod(outside, 0o755)
    name = f"linked-{m.name}"
    # the sandbox shows the target: a declared read folder (its /tmp is private)
    d = skill_dir(base, name, "allowed-tools: \"\"\n",
                  yaml_with(name, "read", outside))
    os.symlink(target, os.path.join(d, "main.py"))
    grant(m, name, digest(m, d))
    p = m.run("run", "--prompt", "deny", d, check=0)
    assert "sh: sh-ran" in p.out, f"the control: the grant did not apply\n{p.out}{p.err}"
    write(target, SH.replace("CODE", "CODE xxx changed"))  # the code behind the link
    p = m.run("run", "--prompt", "deny", d, check=0)
    assert "changed" in p.out, p.out + p.err
    assert "sh: denied" in p.out, f"changed code behind a link ran under an old grant\n{p.out}"
    # .git/: the sandbox shows it; code can be read from there
    write(target, SH)
    os.makedirs(os.path.join(d, ".git"))
    write(os.path.join(d, ".git", "payload.py"), "print('v1')\n")
    os.chmod(os.path.join(d, ".git"), 0o755)
    grant(m, name, digest(m, d))
    p = m.run("run", "--prompt", "deny", d, check=0)
    assert "sh: sh-ran" in p.out, p.out + p.err
    write(os.path.join(d, ".git", "payload.py"), "print('v2: evil')\n")
    p = m.run("run", "--prompt", "deny", d, check=0)
    assert "sh: denied" in p.out, f"a changed .git/ kept the grant\n{p.out}"


@test()
def the_digest_of_link_cycles_ends(m, base):
    """Links to the folder itself, to its parent and to each other: the
    digest is taken (bounded) and the skill still runs."""
    name = f"cycles-{m.name}"
    top = os.path.join(base, "top")
    d = skill_dir(top, name, "", f"skill:\n  name: {name}\nentrypoint:\n  command: python3\n"
                                 "  args: [main.py]\n", {"main.py": "print('ran')\n"})
    os.chmod(top, 0o755)
    for ln, to in (("self", "."), ("up", ".."), ("a", "b"), ("b", "a")):
        os.symlink(to, os.path.join(d, ln))
    t0 = time.monotonic()
    dg = digest(m, d)
    assert dg.startswith("sha256:") and time.monotonic() - t0 < 20, dg
    assert digest(m, d) == dg
    p = m.run("run", d, check=0)
    assert "ran" in p.out, p.out + p.err


# ---------------------------------------------------------------- item 10

class Serve:
    """skillgate serve as the mode's user, spoken to in raw JSON lines."""

    def __init__(self, m, cwd="/"):
        env = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
               "LANG": "C.UTF-8"}
        cmd = [h.SG, "serve"]
        if h.IS_ROOT and m.uid != 0:
            cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, cwd=cwd,
                                  start_new_session=True)
        self.buf = b""
        self.got = {}
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "attack", "version": "1"}}})
        assert "result" in self.wait(0, 20), "initialize failed"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def wait(self, rid, timeout):
        end = time.monotonic() + timeout
        while rid not in self.got and time.monotonic() < end:
            r, _, _ = select.select([self.p.stdout], [], [], 0.2)
            if not r:
                continue
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            self.buf += chunk
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                o = json.loads(line)
                if "id" in o:
                    self.got[o["id"]] = o
        assert rid in self.got, f"no answer to request {rid} in {timeout}s"
        return self.got.pop(rid)

    def call(self, rid, name, args, timeout=60):
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
        return self.wait(rid, timeout)["result"]

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


@test()
def check_tool_permission_ignores_a_folder_the_agent_wrote(m, base):
    """The agent writes a SKILL.md whose allowed-tools declare what it wants
    (Bash(rm:*), a write path) and asks check_tool_permission on it: that
    folder is no skill the person keeps, so its declarations allow nothing
    (nobody to ask here: denied). The same manifest kept in
    ~/.claude/skills is honoured (the control)."""
    md = "allowed-tools: Read Bash(rm:*) Write\n"
    yaml = f"skill:\n  name: NAME\npermissions:\n  filesystem:\n    write: [\"{base}/out\"]\n"
    wrote = skill_dir(base, "agent-wrote", md, yaml.replace("NAME", "agent-wrote"))
    kept_root = os.path.join(m.home, ".claude", "skills")
    kept = skill_dir(kept_root, "person-kept", md, yaml.replace("NAME", "person-kept"))
    own(m, kept_root)
    s = Serve(m)
    try:
        asks = [("Bash", "rm -rf /tmp/x"), ("Write", f"{base}/out/a.txt")]
        for i, (tool, what) in enumerate(asks):
            r = s.call(10 + i, "check_tool_permission",
                       {"skill": wrote, "tool": tool, "description": what})
            sc = r["structuredContent"]
            assert sc["decision"] == "deny", f"{tool} {what}: the agent's own folder allowed it {sc}"
            assert "declared" not in sc["decided_by"], sc
            assert "not used" in sc.get("manifest", ""), sc
            r = s.call(20 + i, "check_tool_permission",
                       {"skill": kept, "tool": tool, "description": what})
            sc = r["structuredContent"]
            assert sc["decision"] == "allow", f"the control: {tool} {what} {sc}"
    finally:
        s.close()


@test()
def hook_install_says_disabled_hooks_will_not_run(m, base):
    """settings.json with "disableAllHooks": true runs no hook: install
    must not report success as if the hook would run."""
    settings = os.path.join(base, "settings.json")
    write(settings, '{\n  "disableAllHooks": true\n}\n', 0o666)
    os.chmod(base, 0o777)
    p = m.run("hook", "install", "--settings", settings)
    assert p.returncode != 0, f"exit 0 into disabled hooks\n{p.out}{p.err}"
    assert "disableAllHooks" in p.err and "will not run" in p.err, p.err
    assert "is now Claude Code's PreToolUse hook" not in p.out, p.out
    # the control: hooks on
    write(settings, '{\n  "disableAllHooks": false\n}\n', 0o666)
    p = m.run("hook", "install", "--settings", settings)
    assert p.returncode == 0 and "disableAllHooks" not in p.err, p.out + p.err


@test()
def yaml_merge_keys_are_refused(m, base):
    """<<: merges a mapping in for PyYAML, js-yaml and Go's yaml; skillgate
    read it as an unknown key. Refused, with file, line and field."""
    cases = [("merge-md", "allowed-tools: Read\n<<: {allowed-tools: Bash}\n", None,
              "SKILL.md:5:", "<<"),
             ("merge-yaml", "", "skill:\n  name: merge-yaml\npermissions:\n  <<:\n"
                                "    filesystem:\n      read: [/etc]\n", "skillsandbox.yaml:4:",
              "permissions.<<"),
             ("merge-meta", "metadata:\n  <<: {a: b}\n", None, "SKILL.md:5:", "metadata.<<")]
    for name, md, yaml, where, field in cases:
        d = skill_dir(base, name, md, yaml)
        p = m.run("validate", d)
        assert p.returncode == 1, f"{name}: exit {p.returncode}\n{p.out}{p.err}"
        err = [ln for ln in (p.out + p.err).splitlines() if "error:" in ln]
        assert any(where in ln and f"{field}:" in ln and "merge" in ln for ln in err), (name, err)


# ---------------------------------------------------------------- item 11

@test()
def run_skill_of_a_folder_the_agent_wrote_grants_nothing(m, base):
    """run_skill on a folder the agent wrote, whose manifest declares a read
    of the home's documents, a secret and a host: it was run, the document
    came back. Not kept by the person and asking for more than its own
    folder, it is refused; kept in ~/.claude/skills it runs (the control)."""
    docs = os.path.join(m.home, "Documents")
    os.makedirs(docs, exist_ok=True)
    write(os.path.join(docs, "plan.txt"), "TOP-SECRET-DOC")
    own(m, docs)
    own(m, os.path.join(docs, "plan.txt"))
    reader = {"scripts/x.py": "import os\nprint('got:', open(os.path.expanduser("
                              "'~/Documents/plan.txt')).read())\n"}
    yaml = ("skill:\n  name: NAME\npermissions:\n  filesystem:\n    read: [\"~/Documents\"]\n"
            "  env_vars:\n    allow: [AWS_SECRET_ACCESS_KEY]\n")
    wrote = skill_dir(base, "evil", "", yaml.replace("NAME", "evil"), reader)
    kept_root = os.path.join(m.home, ".claude", "skills")
    kept = skill_dir(kept_root, "kept", "", yaml.replace("NAME", "kept"), reader)
    own(m, kept_root)
    work = os.path.join(base, "work-kept")
    os.makedirs(work)
    os.chmod(work, 0o755)
    s = Serve(m, cwd=work)  # the agent's project: a cwd elsewhere is a Read (issue 50)
    try:
        r = s.call(50, "run_skill", {"skill": wrote, "script": "scripts/x.py",
                                     "timeout_seconds": 30}, timeout=90)
        txt = json.dumps(r)
        assert "TOP-SECRET-DOC" not in txt and r.get("isError"), txt[:1500]
        assert "not a skill you keep" in txt and "AWS_SECRET_ACCESS_KEY" in txt, txt[:1500]
        r = s.call(51, "run_skill", {"skill": kept, "script": "scripts/x.py", "cwd": work,
                                     "timeout_seconds": 30}, timeout=90)
        assert "got: TOP-SECRET-DOC" in json.dumps(r), json.dumps(r)[:1500]
    finally:
        s.close()


@test()
def run_skill_cwd_that_holds_a_home_is_refused(m, base):
    """cwd = the folder above the home, "/", or a link to the folder above:
    refused with a clear error, and nothing of the home comes back."""
    h.plant_credentials(m.home, m.uid)
    name = f"lister-{m.name}"
    d = skill_dir(base, name, "", None, {"scripts/list.py": READER.replace(
        'sys.argv[1:] or [os.path.expanduser("~/.claude/.credentials.json")]', '["."]')})
    above = os.path.dirname(m.home)
    link = os.path.join(base, "to-above")
    os.symlink(above, link)
    work = os.path.join(base, "work")
    write(os.path.join(work, "f.txt"), "work file")
    os.chmod(work, 0o755)
    s = Serve(m, cwd=work)  # the agent's project: a cwd elsewhere is a Read (issue 50)
    try:
        for i, cwd in enumerate([above, "/", link, m.home]):
            r = s.call(30 + i, "run_skill", {"skill": d, "script": "scripts/list.py",
                                             "cwd": cwd, "timeout_seconds": 30}, timeout=90)
            txt = json.dumps(r)
            assert h.PLANTED not in txt, f"cwd {cwd}: the home's files came back\n{txt[:2000]}"
            assert r.get("isError") and "home" in txt or "may not be /" in txt, (cwd, txt[:1500])
        # the control: a folder of its project runs
        r = s.call(40, "run_skill", {"skill": d, "script": "scripts/list.py", "cwd": work,
                                     "timeout_seconds": 30}, timeout=90)
        assert not r.get("isError") and "work file" in json.dumps(r), json.dumps(r)[:1500]
    finally:
        s.close()


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
