#!/usr/bin/env python3
"""End-to-end tests of the skillgate command line: what a user types and sees.

Usage: cli_test.py PATH/TO/skillgate SOURCE_ROOT. Prints TAP.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

SG = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(sys.argv[2])
EXAMPLES = os.path.join(SRC, "examples", "skills")
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def run(*args, cwd=None, env=None, code=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    p = subprocess.run([SG, *args], capture_output=True, text=True, cwd=cwd, env=e, timeout=60)
    if code is not None and p.returncode != code:
        raise AssertionError(f"skillgate {' '.join(args)}: exit {p.returncode}, wanted {code}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class TempDir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="sgcli.")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


@test
def version_and_help():
    p = run("--version", code=0)
    assert re.fullmatch(r"skillgate \d+\.\d+\.\d+\n", p.stdout), p.stdout
    p = run("--help", code=0)
    for cmd in ("validate", "inspect", "list"):
        assert cmd in p.stdout
        h = run(cmd, "--help", code=0)
        assert h.stdout.startswith(f"usage: skillgate {cmd}"), h.stdout
    p = run("frobnicate", code=2)
    assert "unknown command 'frobnicate'" in p.stderr
    run("inspect", code=2)
    run("validate", "--bogus", code=2)


@test
def demo_usage_names_every_option_it_takes():
    # the usage line is what a typo prints: an option the demo takes (its
    # own help lists it) is in it, --theme too
    h = run("demo", "--help", code=0).stdout
    usage = h.splitlines()[0]
    for opt in re.findall(r"^  (--[a-z-]+)", h, re.M):
        assert opt in usage, f"{opt} missing from {usage!r}"
    assert "--theme NAME" in usage, usage
    bad = run("demo", "--bogus", code=2)
    assert "--theme" in bad.stderr, bad.stderr


@test
def an_unknown_theme_in_config_names_the_file_and_line():
    with TempDir() as d:
        cfg = write(d, "config/skillgate/config.yaml",
                    "audit_rotate_kb: 100\ntheme: no-such-theme\n")
        env = {"XDG_CONFIG_HOME": os.path.join(d, "config"),
               "XDG_STATE_HOME": os.path.join(d, "state"), "HOME": d}
        p = run("tui", "--script", os.devnull, env=env, code=2)
        assert f"{cfg}:2: error: theme: \"no-such-theme\"" in p.stderr, p.stderr
        assert "looked for no-such-theme.yaml" in p.stderr, p.stderr
        # --theme on the command line is no line of the config
        p = run("tui", "--theme", "no-such-theme", "--script", os.devnull, env=env, code=2)
        assert cfg not in p.stderr, p.stderr


@test
def a_wasm_skill_without_its_module_is_invalid():
    with TempDir() as d:
        skill = os.path.join(d, "code-review-wasm")
        shutil.copytree(os.path.join(EXAMPLES, "code-review-wasm"), skill)
        run("validate", skill, code=0)
        shutil.rmtree(os.path.join(skill, "wasm"))
        p = run("validate", skill, code=1)
        out = p.stdout + p.stderr
        assert re.search(r"SKILL\.md:\d+:\d+: error: wasm: .*module is absent: "
                         + re.escape(os.path.join(skill, "wasm", "skill.wasm")), out), out
        assert "invalid" in out, out


@test
def the_attack_examples_mapping_agrees_with_the_trace():
    # one source: a row of ATTACK.md naming the class a trace gives the
    # attempt says that class's technique from SG_THREAT_CLASSES
    with open(os.path.join(SRC, "records", "classify.h"), encoding="utf-8") as f:
        classes = dict(re.findall(r'X\([A-Z_]+, "([a-z_]+)", "[a-z]+", "[a-z-]+",\s*"(T[\d.]+)"',
                                  f.read()))
    assert classes.get("credential_harvesting"), classes
    with open(os.path.join(EXAMPLES, "malicious-weather", "ATTACK.md"), encoding="utf-8") as f:
        rows = [r for r in f.read().splitlines() if r.startswith("| ") and "classified" in r]
    assert rows, "no row of ATTACK.md names a class"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        cls = re.search(r"classified `([a-z_]+)`", cells[3])
        assert cls and cls.group(1) in classes, row
        assert cells[2].split()[0] == classes[cls.group(1)], (row, classes[cls.group(1)])


@test
def mistakes_on_the_command_line_say_what_was_meant():
    """Issue 24: a typo'd command gets a suggestion, an option is not a
    command, a missing folder says so, a bad subcommand names the good ones,
    and the help fits 80 columns."""
    p = run("validat", code=2)
    assert "unknown command 'validat': did you mean validate?" in p.stderr, p.stderr
    assert "usage:" not in p.stderr, "one line, not the whole help"
    p = run("recrod", code=2)
    assert "did you mean record?" in p.stderr, p.stderr
    p = run("--bogus", code=2)
    assert "unknown option '--bogus'" in p.stderr, p.stderr
    p = run("frobnicate", code=2)
    assert "unknown command 'frobnicate' (skillgate --help lists them)" in p.stderr, p.stderr
    p = run("list", "/nonexistent-sg-folder", code=2)
    assert "/nonexistent-sg-folder: error: does not exist" in p.stderr, p.stderr
    p = run("list", "/etc/hostname", code=2)
    assert "not a folder" in p.stderr, p.stderr
    for cmd, verb, names in (("audit", "frob", "verify, tail, show"),
                             ("grants", "frob", "list, revoke"),
                             ("traces", "frob", "list, diff, report, export")):
        p = run(cmd, verb, code=2)
        assert f"{cmd} has no command 'frob' ({names})" in p.stderr, p.stderr
    p = run("audit", code=2)
    assert "audit needs a command: verify, tail, show" in p.stderr, p.stderr
    p = run("audit", "show", code=2)
    assert "audit show: wrong arguments" in p.stderr, p.stderr
    p = run("--help", code=0)
    long = [line for line in p.stdout.splitlines() if len(line) > 79]
    assert not long, long
    for cmd in ("validate", "inspect", "list", "run", "record", "traces", "audit", "grants",
                "tui", "demo", "serve", "hook"):
        h = run(cmd, "--help", code=0)
        long = [line for line in h.stdout.splitlines() if len(line) > 79]
        assert not long, (cmd, long)
    # an unknown action in the config's keys: is pointed at where the action is
    # written, a bad key name at the keys
    with TempDir() as d:
        cfg = write(d, "skillgate/config.yaml", 'keys:\n  frobnicate: "x"\n  quit: "q Bogus"\n')
        os.chmod(os.path.dirname(cfg), 0o700)
        os.chmod(cfg, 0o600)
        p = run("tui", env={"XDG_CONFIG_HOME": d})
        assert "config.yaml:2:3: error: keys.frobnicate: no such action" in p.stderr, p.stderr
        assert "config.yaml:3:9: error: keys.quit: unknown key name 'Bogus'" in p.stderr, p.stderr
    # a missing theme is said once, with where it was looked for
    p = run("tui", "--theme", "no-such-theme")
    said = [line for line in p.stderr.splitlines() if "no-such-theme" in line]
    assert len(said) == 1 and "looked for" in said[0], p.stderr
    # every problem of an egress entry, each message with its value once
    with TempDir() as d:
        write(d, "SKILL.md", "---\nname: %s\ndescription: d\n---\n" % os.path.basename(d))
        write(d, "skillsandbox.yaml", 'permissions:\n  network:\n    egress:\n'
              '      - domain: "*"\n        ports: [70000]\n'
              '      - domain: "*.com"\n        ports: [443]\n')
        p = run("validate", d, code=1)
        assert 'egress[0].ports[0]: 70000 is out of range' in p.stderr, p.stderr
        assert 'egress[0].domain: "*": would allow every host' in p.stderr, p.stderr
        assert 'egress[1].domain: "*.com": a wildcard needs' in p.stderr, p.stderr
    # a wrapped usage keeps its summary in the summary column
    lines = run("--help", code=0).stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("  run SKILL"))
    j = next(k for k in range(i, len(lines)) if lines[k].startswith(" " * 29 + "run a skill"))
    assert j > i, lines[i:j + 1]


@test
def a_folder_of_skills_is_validated_skill_by_skill():
    p = run("validate", EXAMPLES, code=0)
    assert p.stdout.count(": valid") == len(os.listdir(EXAMPLES)), p.stdout
    assert f"{EXAMPLES}: {len(os.listdir(EXAMPLES))} skills, " in p.stdout, p.stdout
    with TempDir() as d:
        write(d, "good/SKILL.md", "---\nname: good\ndescription: fine\n---\n")
        write(d, "bad/SKILL.md", "---\nname: bad\n---\n")
        p = run("validate", d, code=1)
        assert "good: valid" in p.stdout and "bad: invalid" in p.stdout, p.stdout
        assert "2 skills, 1 valid, 1 not" in p.stdout, p.stdout
        os.makedirs(os.path.join(d, "empty"))
        p = run("validate", os.path.join(d, "empty"), code=2)
        assert "not a skill" in p.stderr, p.stderr


def complete(script, *words):
    """What the bash completion offers after `skillgate WORDS` (the last one
    being typed)."""
    cmd = (f"source {script}; COMP_WORDS=(skillgate {' '.join(words)}); "
           f"COMP_CWORD={len(words)}; _skillgate; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    env = dict(os.environ, PATH=os.path.dirname(SG) + ":" + os.environ.get("PATH", ""))
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@test
def install_puts_the_manual_completions_and_docs_in_place():
    """Issue 24: `meson install` installs skillgate(1) (every command, the
    files, the exit statuses), bash and zsh completions and the documents."""
    build = os.path.dirname(SG)
    with TempDir() as d:
        p = subprocess.run(["meson", "install", "-C", build, "--destdir", d, "--no-rebuild",
                            "--quiet"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        files = {os.path.relpath(os.path.join(r, f), d).split("/", 2)[-1]
                 for r, _, fs in os.walk(d) for f in fs}
        for want in ("bin/skillgate", "share/man/man1/skillgate.1",
                     "share/bash-completion/completions/skillgate",
                     "share/zsh/vendor-completions/_skillgate",
                     "share/doc/skillgate/README.md", "share/doc/skillgate/json.md",
                     "share/doc/skillgate/manual/README.md",
                     "share/doc/skillgate/manual/enforcement.md",
                     "share/doc/skillgate/LICENSE", "share/skillgate/themes/default.yaml"):
            assert want in files, (want, sorted(files)[:20])
        chapters = sorted(os.listdir(os.path.join(SRC, "docs", "manual")))
        assert len(chapters) > 5, chapters
        for chapter in chapters:
            assert "share/doc/skillgate/manual/" + chapter in files, chapter
        prefix = next(os.path.dirname(r) for r, _, fs in os.walk(d)
                      if r.endswith("/bin") and "skillgate" in fs)
        man = open(os.path.join(prefix, "share/man/man1/skillgate.1")).read()
        commands = [line.split()[0] for line in run("--help").stdout.splitlines()
                    if line.startswith("  ") and not line.startswith("   ")
                    and not line.strip().startswith("-")]
        assert "record" in commands and "hook" in commands, commands
        for c in commands:
            assert re.search(r'^\.(B|BI|BR) "?' + c + r'\b', man, re.M), f"{c} not in the manual"
        for section in ("EXIT STATUS", "FILES", "RULES", "config.yaml", "grants.yaml",
                        "audit.jsonl"):
            assert section in man, section
        zsh = open(os.path.join(prefix, "share/zsh/vendor-completions/_skillgate")).read()
        for c in commands:
            assert f"'{c}:" in zsh, f"{c} not in the zsh completion"
        bash = os.path.join(prefix, "share/bash-completion/completions/skillgate")
        assert complete(bash, "val") == ["validate"]
        assert complete(bash, "rec") == ["record"]
        assert complete(bash, "traces", "d") == ["diff"]
        assert "--prompt" in complete(bash, "run", "--pro")
        assert complete(bash, "run", "--prompt", "") == ["tty", "deny", "attached"]
        assert "default" in complete(bash, "tui", "--theme", "")


@test
def examples_are_valid():
    dirs = sorted(os.path.join(EXAMPLES, d) for d in os.listdir(EXAMPLES))
    assert len(dirs) == 8, dirs
    p = run("validate", *dirs, code=0)
    assert p.stdout.count(": valid\n") == 8, p.stdout
    assert p.stderr == "", p.stderr


@test
def errors_name_file_line_column_and_field():
    with TempDir() as t:
        write(t, "bad-skill/SKILL.md",
              "---\nname: Bad_Skill\ndescription: x\nallowed-tools: Read Bash(git\nfoo: 1\n---\n")
        write(t, "bad-skill/skillsandbox.yaml",
              "skill:\n  name: bad-skill\npermissions:\n  network:\n    egress:\n"
              "      - domain: https://evil.test/x\n        ports: [0]\n"
              "resources:\n  memory_mb: -1\n")
        p = run("validate", os.path.join(t, "bad-skill"), code=1)
        md = os.path.join(t, "bad-skill", "SKILL.md")
        y = os.path.join(t, "bad-skill", "skillsandbox.yaml")
        want = [
            f"{md}:2:7: error: name: \"Bad_Skill\" may hold only lower-case letters, digits "
            "and '-' (Agent Skills spec; OpenClaw's loader would take it)",
            f"{md}:4:16: error: allowed-tools[1]: \"Bash(git\": unbalanced '('",
            f"{md}:5:1: warning: foo: unknown key, ignored",
            f"{y}:7:17: error: permissions.network.egress[0].ports[0]: 0 is out of range (1..65535)",
            f"{y}:9:14: error: resources.memory_mb: -1 is out of range (16..65536)",
        ]
        for line in want:
            assert line in p.stderr.splitlines(), f"missing: {line}\n{p.stderr}"
        assert "invalid (" in p.stdout


@test
def warnings_alone_pass_unless_strict():
    with TempDir() as t:
        d = os.path.join(t, "warny")
        write(t, "warny/SKILL.md", "---\nname: warny\ndescription: x\ncolour: red\n---\n")
        p = run("validate", d, code=0)
        assert "valid, 1 warning" in p.stdout
        run("validate", "--strict", d, code=1)


@test
def not_a_skill():
    with TempDir() as t:
        p = run("validate", t, code=2)
        assert "not a skill (no SKILL.md or skillsandbox.yaml)" in p.stderr
        p = run("inspect", os.path.join(t, "missing"), code=2)
        assert "No such file or directory" in p.stderr


@test
def inspect_json_is_the_resolved_policy():
    w = os.path.join(EXAMPLES, "weather")
    j = json.loads(run("inspect", "--json", w, code=0).stdout)
    assert j["schema"] == "skillgate.inspect/1"
    assert j["name"] == "weather" and j["valid"] is True
    assert j["mode"] == "native" and j["max_risk"] == "medium"
    assert [t["name"] for t in j["tools"]["list"]] == ["Read", "Fetch"]
    assert j["tools"]["list"][1]["capabilities"] == ["network"]
    eg = j["network"]["egress"]
    assert eg == [{"domain": "api.weather.test", "wildcard": False, "ports": [443],
                   "origin": {"file": "skillsandbox.yaml", "line": 10, "column": 17,
                              "field": "permissions.network.egress[0].domain"}}], eg
    assert [e["name"] for e in j["env"]] == ["WEATHER_API_KEY"]
    assert j["limits"]["memory_mb"]["value"] == 128
    assert j["limits"]["memory_mb"]["origin"]["field"] == "resources.memory_mb"
    assert j["limits"]["max_pids" if "max_pids" in j["limits"] else "pids"]["origin"]["file"] == "default"
    assert j["entrypoint"]["command"] == "python3" and j["entrypoint"]["args"] == ["main.py"]
    assert j["filesystem"]["write"] == []
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", j["digest"])
    again = json.loads(run("inspect", "--json", w).stdout)
    assert again["digest"] == j["digest"]
    evil = json.loads(run("inspect", "--json", os.path.join(EXAMPLES, "malicious-weather")).stdout)
    assert evil["digest"] != j["digest"]
    # each tool also as the manifest wrote it, beside its parsed form
    with TempDir() as d:
        write(d, "scoped/SKILL.md", "---\nname: scoped\ndescription: d\n"
                                    "allowed-tools: Read, Bash(git add:*) mcp__gh__issue\n---\n")
        t = json.loads(run("inspect", "--json", os.path.join(d, "scoped"), code=0).stdout)
        assert [(x["written"], x["name"], x["scope"]) for x in t["tools"]["list"]] == [
            ("Read", "Read", None), ("Bash(git add:*)", "Bash", "git add:*"),
            ("mcp__gh__issue", "mcp__gh__issue", None)], t["tools"]


@test
def digest_follows_the_code():
    with TempDir() as t:
        shutil.copytree(os.path.join(EXAMPLES, "weather"), os.path.join(t, "weather"))
        d = os.path.join(t, "weather")
        before = json.loads(run("inspect", "--json", d).stdout)["digest"]
        with open(os.path.join(d, "main.py"), "a") as f:
            f.write("\n# changed\n")
        after = json.loads(run("inspect", "--json", d).stdout)["digest"]
        assert before != after


@test
def inspect_human_says_where_each_capability_came_from():
    p = run("inspect", os.path.join(EXAMPLES, "notes-writer"), code=0)
    assert re.search(r"write  \S*/\.local/share/notes-writer  <- skillsandbox\.yaml:9:13 "
                     r"permissions\.filesystem\.write\[0\]", p.stdout), p.stdout
    assert "Write [med] read skill root, write skill root  <- SKILL.md:6:5 allowed-tools[1]" in p.stdout
    assert "Digest    sha256:" in p.stdout
    p = run("inspect", os.path.join(EXAMPLES, "code-review"), code=0)
    assert "mode: instructions (context: fork)" in p.stdout
    assert "every connection is refused" in p.stdout


@test
def a_scripts_own_option_before_dashdash_says_where_dashdash_goes():
    """Issue 52, item 8: `run SKILL -m X --skill-name y` took --skill-name
    as run's and stopped with getopt's word alone; it now says the option
    may be the script's and shows the line with -- in its place. Nothing
    runs (exit 2)."""
    skill = os.path.join(EXAMPLES, "weather")
    p = run("run", skill, "-m", "scripts.aggregate", "--skill-name", "y", code=2)
    assert "skillgate: --skill-name is not an option of run; if it is the script's own, put " \
           "-- before the script's arguments: skillgate run SKILL -m scripts.aggregate -- " \
           "--skill-name ..." in p.stderr, p.stderr
    p = run("run", skill, "--script", "main.py", "-q", code=2)
    assert "run SKILL --script main.py -- -q ..." in p.stderr, p.stderr
    # a typo of run's own, before any script: the nearest option, no -- hint
    p = run("run", skill, "--jsno", code=2)
    assert "did you mean --json?" in p.stderr and "put --" not in p.stderr, p.stderr


@test
def a_skill_without_allowed_tools_is_rated_by_what_it_ships_and_declares():
    """Issue 52, item 8: every ClawHub skill (no allowed-tools) was [HIGH].
    Now an instruction-only skill that declares nothing is low, one whose
    OpenClaw metadata names programs and a key is medium, one that ships
    scripts is high; inspect says on what; list, JSON agree. A skill with
    allowed-tools is rated by its riskiest tool, as before."""
    with TempDir() as t:
        write(t, "plain-notes/SKILL.md", "---\nname: plain-notes\ndescription: how to "
              "write notes\n---\nWrite short notes.\n")
        write(t, "todo-cli/SKILL.md", "---\nname: todo-cli\ndescription: Manage tasks via "
              "the Todoist API.\nmetadata:\n  openclaw:\n    requires:\n      env: "
              "[TODOIST_API_KEY]\n      bins: [curl]\n    primaryEnv: TODOIST_API_KEY\n---\n"
              "Use curl.\n")
        write(t, "converter/SKILL.md", "---\nname: converter\ndescription: converts "
              "files\n---\nRun scripts/a.py or scripts/b.py\n")
        write(t, "converter/scripts/a.py", "print(1)\n")
        write(t, "converter/scripts/b.py", "print(2)\n")
        env = {"NO_COLOR": "1"}
        want = {"plain-notes": ("low", "[low]", "instructions only, nothing declared; no "
                                "allowed-tools"),
                "todo-cli": ("medium", "[med]", "its OpenClaw metadata names programs for the "
                             "agent to run; no allowed-tools"),
                "converter": ("high", "[HIGH]", "ships code it runs (an entrypoint or "
                              "scripts); no allowed-tools")}
        for name, (risk, badge, why) in want.items():
            p = run("inspect", os.path.join(t, name), env=env, code=0)
            assert f"Skill     {name}  {badge}" in p.stdout, p.stdout
            assert f"Risk      {risk}: {why}\n" in p.stdout, p.stdout
            j = json.loads(run("inspect", "--json", os.path.join(t, name), code=0).stdout)
            assert j["max_risk"] == risk and j["risk_why"] == why, j
        lst = run("list", t, env=env, code=0).stdout
        for name, (risk, badge, why) in want.items():
            assert re.search(rf"^{name}\s+{re.escape(badge)} ", lst, re.M), lst
        by = {x["name"]: x for x in json.loads(run("list", "--json", t, code=0).stdout)["skills"]}
        assert {k: by[k]["max_risk"] for k in want} == {k: v[0] for k, v in want.items()}, by
    p = run("inspect", os.path.join(EXAMPLES, "weather"), env={"NO_COLOR": "1"}, code=0)
    assert "Risk      medium: the riskiest tool its allowed-tools lists\n" in p.stdout, p.stdout


@test
def a_skill_of_scripts_lists_them_with_their_usage():
    """Shaped like Anthropic's pdf skill: SKILL.md, no skillsandbox.yaml,
    scripts (one a folder down, an __init__.py that is no script), usage
    lines in a second Markdown file. Mode "scripts"; inspect shows each
    script with its usage; run without --script lists them and exits 126,
    running nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "forms")
        write(d, "SKILL.md", "---\nname: forms\ndescription: fill PDF forms\n---\n"
              "Read forms.md first.\n")
        write(d, "forms.md", "First run `python scripts/check.py <file.pdf>`, then:\n\n"
              "    python scripts/fill.py <in.pdf> <values.json> <out.pdf>\n"
              "scripts/fill.pyc is no script of ours.\n")
        write(d, "scripts/check.py", "print('RAN')\n")
        write(d, "scripts/fill.py", "print('RAN')\n")
        write(d, "scripts/office/unpack.py", "print('RAN')\n")
        write(d, "scripts/office/__init__.py", "")
        j = json.loads(run("inspect", "--json", d, code=0).stdout)
        assert j["mode"] == "scripts", j["mode"]
        assert j["scripts"] == ["scripts/check.py", "scripts/fill.py",
                                "scripts/office/unpack.py"], j["scripts"]
        assert j["script_usage"] == {
            "scripts/check.py": "python scripts/check.py <file.pdf>",
            "scripts/fill.py": "python scripts/fill.py <in.pdf> <values.json> <out.pdf>"}, \
            j["script_usage"]
        h = run("inspect", d, code=0).stdout
        assert "usage: python scripts/check.py <file.pdf>" in h, h
        assert "--script PATH" in h, h
        p = run("run", d, code=126)
        assert "has 3 scripts and no entrypoint: pick one with --script" in p.stderr, p.stderr
        assert "scripts/office/unpack.py" in p.stderr and "RAN" not in p.stdout, p.stderr
        p = run("run", d, "extra", code=2)  # arguments belong to a script
        assert "usage" in p.stderr.lower(), p.stderr


@test
def list_json_summarizes_tier_one():
    j = json.loads(run("list", "--json", EXAMPLES, code=0).stdout)
    assert j["schema"] == "skillgate.list/1"
    by = {s["name"]: s for s in j["skills"]}
    assert set(by) == {"weather", "malicious-weather", "code-review", "pdf-text", "shell-tool",
                       "notes-writer", "pdf-forms", "code-review-wasm"}
    assert by["shell-tool"]["max_risk"] == "high"
    assert by["code-review"]["max_risk"] == "low" and by["code-review"]["mode"] == "instructions"
    assert by["code-review-wasm"]["mode"] == "wasm", by["code-review-wasm"]
    assert {t["name"] for t in by["shell-tool"]["tools"]} == {"Bash", "Read"}
    assert all(s["source"] == "cli" and s["valid"] and s["shadowed_by"] is None
               for s in j["skills"])
    assert "\n" not in by["weather"]["description"]


@test
def terminal_output_is_sanitized():
    with TempDir() as t:
        write(t, "evil/SKILL.md",
              "---\nname: evil\ndescription: \"hi \\e[2J\\e]0;pwned\\a \\u202e gnp.exe\"\n---\n")
        for args in (("list", t), ("inspect", os.path.join(t, "evil")),
                     ("validate", os.path.join(t, "evil"))):
            p = run(*args)
            for out in (p.stdout, p.stderr):
                assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, (args, out)
        p = run("list", t, code=0)
        assert "hi \\e[2J\\e]0;pwned\\x07 \\u{202e} gnp.exe" in p.stdout, p.stdout


@test
def discovery_places_and_shadowing():
    with TempDir() as t:
        write(t, "proj/.claude/skills/alpha/SKILL.md", "---\nname: alpha\ndescription: project\n---\n")
        write(t, "proj/pkg/.claude/skills/beta/SKILL.md", "---\nname: beta\ndescription: nested\n---\n")
        write(t, "extra/alpha/SKILL.md", "---\nname: alpha\ndescription: from config\n---\n")
        write(t, "xdg/skillgate/config.yaml", f"skill_dirs: [{os.path.join(t, 'extra')}]\n")
        p = run("list", "--json", cwd=os.path.join(t, "proj"),
                env={"XDG_CONFIG_HOME": os.path.join(t, "xdg")}, code=0)
        skills = [s for s in json.loads(p.stdout)["skills"] if s["root"].startswith(t)]
        got = [(s["name"], s["source"], s["shadowed_by"] is not None) for s in skills]
        assert got == [("alpha", "config", False), ("alpha", "project", True),
                       ("beta", "nested", False)], got
        p = run("list", cwd=os.path.join(t, "proj"), env={"XDG_CONFIG_HOME": os.path.join(t, "xdg")})
        assert "SHADOWED" in p.stdout and "is shadowed by" in p.stdout


@test
def a_name_other_than_its_folder_is_an_error_that_still_runs():
    """The Agent Skills spec wants name == folder and validate says so (exit
    1); Claude Code loads such skills anyway, so list, inspect and a dry run
    still work, with the error in plain view."""
    with TempDir() as d:
        write(d, "plugin-folder/SKILL.md", "---\nname: other-name\ndescription: greets\n---\n")
        write(d, "plugin-folder/main.sh", "echo hi\n")
        skill = os.path.join(d, "plugin-folder")
        p = run("validate", skill, code=1)
        assert "must equal the folder name \"plugin-folder\"" in p.stdout + p.stderr, p
        p = run("inspect", skill, code=0)
        assert re.search(r"\n\nProblems\n  \S+/SKILL\.md:2:7: error: name: ", p.stdout), p.stdout
        p = run("inspect", "--json", skill, code=0)
        j = json.loads(p.stdout)
        assert j["valid"] is False and j["runnable"] is True, j
        (diag,) = [x for x in j["problems"] if x["severity"] == "error"]
        assert diag["blocks_run"] is False, diag
        assert "Claude Code's and OpenClaw's loaders accept it" in diag["message"], diag
        p = run("run", "--dry-run", skill, code=0)
        assert "main.sh" in p.stdout, p.stdout
        p = run("list", "--json", d, code=0)
        (s,) = json.loads(p.stdout)["skills"]
        assert s["name"] == "other-name", s


@test
def validate_takes_the_names_run_takes():
    """`validate NAME` finds a skill as `run NAME` does: a personal skill by
    its name, a Claude Code plugin's as plugin:skill, and an unknown name is
    answered with where it looked and the plugin name it may have meant."""
    with TempDir() as t:
        home, cwd = os.path.join(t, "home"), os.path.join(t, "work")
        os.makedirs(cwd)
        os.umask(0o022)
        write(home, ".claude/skills/alpha/SKILL.md", "---\nname: alpha\ndescription: a\n---\n")
        write(t, "cache/plug/skills/hello/SKILL.md",
              "---\nname: hello\ndescription: greets\n---\n")
        write(t, "cache/plug/skills/hello/main.sh", "echo hi\n")
        write(home, ".claude/plugins/installed_plugins.json", json.dumps(
            {"version": 2, "plugins": {"plug@mkt": [
                {"scope": "user", "installPath": os.path.join(t, "cache", "plug")}]}}))
        env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(t, "xdg")}
        p = run("validate", "plug:hello", cwd=cwd, env=env, code=0)
        assert p.stdout.startswith(os.path.join(t, "cache/plug/skills/hello") + ": valid"), p
        p = run("validate", "alpha", "plug:hello", cwd=cwd, env=env, code=0)
        assert p.stdout.count(": valid") == 2, p.stdout
        p = run("run", "--dry-run", "plug:hello", cwd=cwd, env=env, code=0)
        assert "main.sh" in p.stdout, p.stdout
        p = run("validate", "hello", cwd=cwd, env=env, code=2)
        assert "no skill of that name" in p.stderr and "did you mean plug:hello" in p.stderr, p


@test
def clawhub_skills_are_judged_by_openclaw_rules():
    """A skill as `clawhub install` leaves it in OpenClaw's workspace: its
    folder is the registry's slug, its name has capitals, it carries homepage
    and version. Found where OpenClaw keeps skills it is judged by OpenClaw's
    rules (valid, `validate NAME` and list find it by its name); a SKILL.md
    OpenClaw itself would skip is refused, saying so. The same skill in a
    Claude Code folder keeps the Agent Skills spec's rules."""
    clawhub = ("---\nname: Weather Pro\ndescription: Forecasts.\nhomepage: https://w.test\n"
               "version: 1.2.0\nauthor: someone\n---\n")
    with TempDir() as t:
        home, cwd = os.path.join(t, "home"), os.path.join(t, "work")
        os.makedirs(cwd)
        ws = os.path.join(home, ".openclaw", "workspace", "skills")
        write(ws, "weather/SKILL.md", clawhub)
        write(ws, "notes/SKILL.md", "# Notes\n\nTakes notes.\n")
        write(home, ".claude/skills/weather/SKILL.md", clawhub)
        env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(t, "xdg")}
        p = run("validate", os.path.join(ws, "weather"), cwd=cwd, env=env, code=0)
        assert p.stdout.strip().endswith("weather: valid, 1 warning"), p.stdout
        assert "OpenClaw takes any name (this skill found in ~/.openclaw/workspace/skills" in (
            p.stderr), p.stderr
        assert "homepage" not in p.stderr and "version" not in p.stderr, p.stderr
        p = run("validate", "Weather Pro", cwd=cwd, env=env, code=0)
        assert os.path.join(ws, "weather") + ": valid" in p.stdout, p.stdout
        p = run("validate", os.path.join(ws, "notes"), cwd=cwd, env=env, code=1)
        assert "OpenClaw would refuse it too" in p.stderr, p.stderr
        p = run("validate", os.path.join(home, ".claude/skills/weather"), cwd=cwd, env=env, code=1)
        assert "(Agent Skills spec; OpenClaw's loader would take it)" in p.stderr, p.stderr
        assert "homepage: unknown key" in p.stderr, p.stderr
        p = run("list", "--json", cwd=cwd, env=env, code=0)
        got = sorted((s["id"], s["source"], s["valid"]) for s in json.loads(p.stdout)["skills"]
                     if s["root"].startswith(t))
        assert got == [("Weather Pro", "openclaw", True), ("notes", "openclaw", False),
                       ("weather", "user", False)], got


@test
def a_key_that_denies_never_allows():
    """keys: in config.yaml may not make Enter, Esc, ^C or a deny key allow:
    the TUI refuses to start and names the file, line and action."""
    cases = [("allow-once: \"a Esc\"", "keys.allow-once", "Esc denies"),
             ("allow-run: \"r d\"", "keys.allow-run", "d denies"),
             ("allow-always: Enter", "keys.allow-always", "Enter and Space")]
    for entry, field, why in cases:
        with tempfile.TemporaryDirectory() as cfg:
            write(cfg, "skillgate/config.yaml", f"keys:\n  {entry}\n")
            p = run("tui", env={"XDG_CONFIG_HOME": cfg}, code=2)
            assert re.search(rf"config\.yaml:2:\d+: error: {re.escape(field)}: .*{why}", p.stderr), (
                entry, p.stderr)


@test
def run_options_for_one_run_on_the_command_line():
    """Issue 36: run's help names --env, --write and -m; a module or a
    script takes ARGs, a bare skill does not; --env and --write say how
    many they take; the bash completion offers the options, folders after
    run's --write and variable names after --env. (What they do is in
    tests/scripts_test.py, run for real.)"""
    h = run("run", "--help", code=0).stdout
    for opt in ("-m, --module M", "--env NAME", "--write DIR"):
        assert opt in h, h
    with TempDir() as d:
        write(d, "SKILL.md", "---\nname: %s\ndescription: d\n---\n" % os.path.basename(d))
        write(d, "scripts/x.py", "print(1)\n")
        p = run("run", d, "an-argument", code=2)
        assert "usage: skillgate run" in p.stderr, p.stderr
        p = run("run", *sum((["--env", f"V{i}"] for i in range(33)), []), d, code=2)
        assert "--env at most 32 times" in p.stderr, p.stderr
        p = run("run", *sum((["--write", d] for i in range(33)), []), d, code=2)
        assert "--write at most 32 times" in p.stderr, p.stderr
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "completions",
                          "skillgate.bash")
    opts = complete(script, "run", "--")
    for o in ("--env", "--write", "--module"):
        assert o in opts, opts
    with TempDir() as d:
        os.makedirs(os.path.join(d, "outdir"))
        assert complete(script, "run", "--write", os.path.join(d, "out")) == [
            os.path.join(d, "outdir")]
    os.environ["SG_CLI_TEST_VARIABLE"] = "1"
    assert complete(script, "run", "--env", "SG_CLI_TEST_VAR") == ["SG_CLI_TEST_VARIABLE"]


@test
def a_skill_name_typo_gets_the_nearest_name():
    """Issue 38: `run wether` beside the examples says did you mean
    "weather" rather than listing every place skills are kept; every
    command that takes a skill's name does (they share the lookup). A name
    near none keeps the list of places."""
    with TempDir() as t:
        env = {"HOME": t, "XDG_CONFIG_HOME": os.path.join(t, "xdg")}
        cwd = os.path.dirname(EXAMPLES)
        for args in (("run", "wether"), ("run", "--dry-run", "wether"), ("inspect", "wether"),
                     ("validate", "wether"), ("record", "--prompt", "deny", "wether")):
            p = run(*args, cwd=cwd, env=env, code=2)
            assert 'did you mean "weather"?' in p.stderr, (args, p.stderr)
            assert "~/.claude/skills" not in p.stderr, (args, p.stderr)
        p = run("run", "shell-tol", cwd=cwd, env=env, code=2)
        assert 'did you mean "shell-tool"?' in p.stderr, p.stderr
        p = run("run", "zzqqxx", cwd=cwd, env=env, code=2)
        assert "did you mean" not in p.stderr and "~/.claude/skills" in p.stderr, p.stderr


@test
def an_unknown_long_option_gets_the_nearest_one():
    """Issue 38: after getopt's own complaint, the command's long option a
    typo most likely meant; none when nothing is near, and none for an
    ambiguous abbreviation (getopt names the candidates itself)."""
    p = run("run", "--jsno", "weather", code=2)
    assert "unrecognized option '--jsno'" in p.stderr, p.stderr
    assert "did you mean --json?" in p.stderr, p.stderr
    p = run("run", "--dryrun=1", "weather", code=2)
    assert "did you mean --dry-run?" in p.stderr, p.stderr
    p = run("validate", "--strcit", EXAMPLES, code=2)
    assert "did you mean --strict?" in p.stderr, p.stderr
    p = run("inspect", "--jsn", "weather", code=2)
    assert "did you mean --json?" in p.stderr, p.stderr
    p = run("run", "--zzqqxx", "weather", code=2)
    assert "did you mean" not in p.stderr, p.stderr
    p = run("run", "--w", "weather", code=2)
    assert "did you mean" not in p.stderr, p.stderr


@test
def a_manifest_key_near_a_known_one_is_an_error():
    """Issue 38: a misspelt key would leave its limit or its tools at the
    default without a word; near a known key of the same level it is an
    error naming file, line, key and the key meant. A key near none stays
    a warning."""
    with TempDir() as t:
        d, name = os.path.join(t, "typo-skill"), "typo-skill"
        write(d, "skillsandbox.yaml",
              "skill:\n  name: %s\n  description: d\nresources:\n  max_runtime_secs: 10\n"
              "  gpu: 1\npermissions:\n  network:\n    egress:\n      - domian: a.test\n"
              "        ports: [443]\n" % name)
        p = run("validate", d, code=1)
        f = os.path.join(d, "skillsandbox.yaml")
        assert (f'{f}:5:3: error: resources.max_runtime_secs: unknown key; did you mean '
                f'"max_runtime_seconds"?') in p.stderr, p.stderr
        assert f"{f}:6:3: warning: resources.gpu: unknown key, ignored" in p.stderr, p.stderr
        assert (f'{f}:10:9: error: permissions.network.egress[0].domian: unknown key; did you '
                f'mean "domain"?') in p.stderr, p.stderr
    with TempDir() as t:
        d, name = os.path.join(t, "typo-skill"), "typo-skill"
        write(d, "SKILL.md", "---\nname: %s\ndescription: d\nallowed_tools: Read\n"
                             "tags: [x]\n---\n" % name)
        p = run("validate", d, code=1)
        f = os.path.join(d, "SKILL.md")
        assert (f'{f}:4:1: error: allowed_tools: unknown key; did you mean "allowed-tools"?'
                in p.stderr), p.stderr
        assert f"{f}:5:1: warning: tags: unknown key, ignored" in p.stderr, p.stderr


@test
def a_tab_in_yaml_indentation_is_named():
    """Issue 38: libyaml's "found character that cannot start any token"
    for a tab says what it is, where."""
    with TempDir() as t:
        d, name = os.path.join(t, "typo-skill"), "typo-skill"
        write(d, "skillsandbox.yaml", "skill:\n  name: %s\n  description: d\nresources:\n"
                                      "\tmemory_mb: 64\n" % name)
        p = run("validate", d, code=1)
        f = os.path.join(d, "skillsandbox.yaml")
        assert (f"{f}:5:1: error: YAML syntax: tabs are not allowed in YAML indentation; use "
                "spaces") in p.stderr, p.stderr
        assert "cannot start any token" not in p.stderr, p.stderr
    with TempDir() as t:
        d, name = os.path.join(t, "typo-skill"), "typo-skill"
        write(d, "SKILL.md", "---\nname: %s\ndescription: d\nallowed-tools:\n  - Read\n"
                             " \t- Grep\n---\n" % name)
        p = run("validate", d, code=1)
        f = os.path.join(d, "SKILL.md")
        assert f"{f}:6:2: error: YAML syntax: tabs are not allowed in YAML indentation" in \
            p.stderr, p.stderr


def main():
    print(f"1..{len(TESTS)}")
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        try:
            fn()
            print(f"ok {i} - {fn.__name__}")
        except Exception:  # noqa: BLE001 - report every failure as TAP
            failed += 1
            print(f"not ok {i} - {fn.__name__}")
            for line in traceback.format_exc().splitlines():
                print(f"# {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
