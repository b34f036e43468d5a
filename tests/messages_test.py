#!/usr/bin/env python3
"""What a person reads (issue 52, item 8): each message says what happened,
once, in words that point at what to do. Each test runs as root and as an
unprivileged user through sandbox_test.py's harness; every name a skill
reaches for is reserved (*.test) and sent to a closed loopback port by the
harness's own --resolve config. Prints TAP.

Usage: messages_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
EXAMPLES = os.path.join(h.SRC, "examples", "skills")


@test()
def an_allowed_host_this_machine_cannot_reach_is_no_refusal(m, base):
    """weather declares api.weather.test:443; the harness points it at a
    closed port. Before, that read "network_egress_blocked ... refused"
    and, at the end, "refused: Fetch api.weather.test ... allow with:
    --policy", a rule that changes nothing. Now it says the host was
    allowed and this machine could not reach it, and the end lists no
    refusal."""
    p = m.run("run", "-i", '{"city": "Oslo"}', os.path.join(EXAMPLES, "weather"), check=1)
    assert "weather API unreachable" in p.out, p.out
    lines = [x for x in p.err.splitlines() if x.startswith("skillgate: ")]
    said = [x for x in lines if "api.weather.test" in x]
    # (urllib may try twice: the second is "repeated 1 more time")
    assert said and all(x.startswith("skillgate: network: TCP api.weather.test:443 was "
                                     "allowed") for x in said), p.err
    assert said[0].startswith("skillgate: network: TCP api.weather.test:443 was allowed, but "
                              "this machine could not reach it: upstream 127.0.0.1:9: "), said
    assert "(no refusal: this machine's DNS or network; --resolve api.weather.test:443:ADDR " \
           "points the name elsewhere)" in said[0], said
    assert not [x for x in lines if x.startswith("skillgate: refused:")], p.err
    assert "--policy" not in p.err and "network_egress_blocked" not in p.err, p.err
    t = m.last_trace()
    assert t["refusals"] == [], t["refusals"]
    ev = [e["data"] for e in t["events"] if e["kind"] == "network_egress_blocked"]
    assert ev and all(e["upstream_failed"] is True for e in ev), ev
    assert ev[0]["name"] == "api.weather.test" and ev[0]["port"] == 443, ev



UPSTREAM = r"""
import socket
try:
    c = socket.create_connection(("upstream.example.test", 443), timeout=10)
    c.sendall(b"\\x16\\x03\\x01")  # the proxy closes it: nothing upstream
    print("answered:", c.recv(1))
except OSError as e:
    print("failed:", e)
"""


@test()
def a_lookup_this_machine_cannot_make_is_no_refusal(m, base):
    """The same with the upstream lookup itself failing: skillgate runs in
    a network namespace of its own with nothing in it (unshare -n, made as
    root, then the mode's user), so the broker's getaddrinfo for the
    declared upstream.example.test fails and no packet can leave. Before:
    "refused: ... does not resolve" and "allow with: --policy"."""
    if not h.IS_ROOT or not shutil.which("unshare"):
        raise h.Skip("needs root and unshare(1) to give skillgate an empty network namespace")
    d = h.make_skill(base, "upstream", UPSTREAM, tools="Read Fetch",
                     yaml_extra="permissions:\n  network:\n    egress:\n"
                                "      - domain: upstream.example.test\n        ports: [443]\n")
    cmd = [h.SG, "run", "--prompt", "deny", d]
    if m.uid != 0:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    env = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
           "LANG": "C.UTF-8"}
    p = subprocess.run(["unshare", "-n", *cmd], capture_output=True, text=True, env=env,
                       cwd="/", timeout=60)
    assert p.returncode == 0 and ("answered: b''" in p.stdout or "failed:" in p.stdout), \
        (p.returncode, p.stdout, p.stderr)
    said = [x for x in p.stderr.splitlines() if "upstream.example.test" in x]
    assert said and said[0].startswith(
        "skillgate: network: TCP upstream.example.test:443 was allowed, but this machine could "
        "not reach it: upstream.example.test does not resolve: "), p.stderr
    assert not [x for x in p.stderr.splitlines() if x.startswith("skillgate: refused:")], p.stderr
    t = m.last_trace()
    assert t["refusals"] == [], t["refusals"]


ASK = r"""
import sys
print("tty:", sys.stdin.isatty(), flush=True)
a = input("Overwrite output.pdf? [y/N] ")
print("answer:", repr(a))
sys.exit(0 if a == "y" else 3)
"""


def scripts_skill(base, name, script):
    """Shaped as Anthropic's skills: SKILL.md and scripts/, no entrypoint."""
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: {name}\n---\nRun scripts/go.py\n")
    with open(os.path.join(d, "scripts", "go.py"), "w") as f:
        f.write(script)
    for root, dirs, files in os.walk(d):
        os.chmod(root, 0o755)
        for x in files:
            os.chmod(os.path.join(root, x), 0o644)
    return d


@test()
def a_script_that_asks_on_its_terminal_is_told_the_truth(m, base):
    """A script run from a terminal that asks a question: before, its
    input() read "{}" (the default input JSON) and it went on with that as
    the answer. Now its stdin is empty (EOF), and after the failure
    skillgate says it had no terminal and where what it needs goes. The
    input JSON still reaches a script when given, and SKILL_INPUT stays."""
    d = scripts_skill(base, "asker", ASK)
    code, out = h.run_in_pty(m, ["run", "--prompt", "deny", "--cwd", base, d, "--script",
                                 "scripts/go.py"], [])
    assert code == 1, (code, out)
    assert "tty: False" in out and "EOFError: EOF when reading a line" in out, out
    assert "answer:" not in out, out
    assert "skillgate: the script had no terminal and its stdin was empty (end of file): a " \
           "skill never reads yours, so a question it asked there got no answer; what it " \
           "needs goes in its arguments, or as JSON with --input" in out, out
    # given input, the script reads it, and nothing is said
    code, out = h.run_in_pty(m, ["run", "--prompt", "deny", "--cwd", base, "-i", '"y"', d,
                                 "--script", "scripts/go.py"], [])
    assert code == 3 and "answer: '\"y\"'" in out, (code, out)
    assert "had no terminal" not in out, out
    # the plan says so
    p = m.run("run", "--dry-run", "--cwd", base, d, "--script", "scripts/go.py", check=0)
    assert "stdin: empty (a script given no --input: end of file at once)" in p.out, p.out


COLOURS = r"""
import sys
print("\x1b[1;32mPASSED\x1b[0m 3 tests \x1b[95mmagenta\x1b[m \x1b[31mstill red")
print("\x1b]0;retitled\x07 \x1b[2J \x1b[8mhidden\x1b[0m \x1b[41mbg \x1b[30mblack")
sys.stderr.write("\x1b[33mwarning\x1b[0m: x\n")
"""


@test()
def colours_show_as_colours_and_nothing_else_passes(m, base):
    """A script's colours on a colour terminal were printed as \\e[32m;
    now they pass, each line ends with a reset (nothing runs on into
    skillgate's lines), and every other sequence (a title, a clear,
    concealed text, a background) is still shown escaped. NO_COLOR
    escapes them all, as before."""
    d = scripts_skill(base, "painter", COLOURS)
    args = ["run", "--prompt", "deny", "--cwd", base, d, "--script", "scripts/go.py"]
    code, out = h.run_in_pty(m, args, [])
    assert code == 0, (code, out)
    assert "\x1b[1;32mPASSED\x1b[0m 3 tests \x1b[95mmagenta\x1b[m \x1b[31mstill red" \
           "\x1b[0m\r\n" in out, repr(out)
    assert "\x1b[33mwarning\x1b[0m: x\x1b[0m" in out, repr(out)
    assert "\\e]0;retitled\\x07 \\e[2J \\e[8mhidden\x1b[0m \\e[41mbg \\e[30mblack" in out, \
        repr(out)
    for bad in ("\x1b]", "\x1b[2J", "\x1b[8m", "\x1b[41m", "\x07", "\x1b[30m"):
        assert bad not in out, (bad, repr(out))
    # the trace keeps every line escaped, colours too
    t = m.last_trace()
    lines = [e["message"] for e in t["events"] if e["kind"] == "stdout"]
    assert lines[0].startswith("\\e[1;32mPASSED"), lines
    code, out = h.run_in_pty(m, args, [], env={"NO_COLOR": "1"})
    assert code == 0 and "\\e[1;32mPASSED\\e[0m" in out and "\x1b[" not in out, repr(out)


LOOKS = r"""
import os, sys
for p in ("~/.clawdbot/clawdbot.json", "~/.todo-cli/config.json"):
    if not os.path.exists(os.path.expanduser(p)):
        print("config not found")
        sys.exit(1)
print("configured")
"""


def home_file(m, rel, text="{}"):
    p = os.path.join(m.home, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    if h.IS_ROOT:
        d = os.path.dirname(p)
        while d != m.home:
            os.chown(d, m.uid, m.uid)
            d = os.path.dirname(d)
        os.chown(p, m.uid, m.uid)


@test()
def a_config_in_the_home_the_skill_names_is_said_when_it_fails(m, base):
    """A ClawHub-shaped skill whose script looks for its config in the
    home: the sandbox's HOME is private, so it says "config not found".
    Before, skillgate said nothing. Now the end names each file its
    SKILL.md (or OpenClaw's requires.config) names that is in the real
    home and was not shown: OpenClaw's own folder as never shown (what to
    do instead), another file with the read path that shows it, which
    then works. A file the home does not hold, or a run that worked, is
    not mentioned."""
    home_file(m, ".clawdbot/clawdbot.json")
    home_file(m, ".todo-cli/config.json")
    d = scripts_skill(base, "chat-post", LOOKS)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write("---\nname: chat-post\ndescription: posts\nmetadata:\n  openclaw:\n"
                "    requires:\n      config: [\"~/.todo-cli/config.json\"]\n---\n"
                "Reads the gateway token from `~/.clawdbot/clawdbot.json`; see also "
                "~/.not-there/x.json and $HOME/../etc/passwd.\n")
    p = m.run("run", "--prompt", "deny", "--cwd", base, d, "--script", "scripts/go.py",
              check=1)
    assert "config not found" in p.out, p.out
    said = [x for x in p.err.splitlines() if "the skill's SKILL.md names" in x]
    assert len(said) == 2, p.err
    assert said[0] == ("skillgate: the skill's SKILL.md names ~/.clawdbot/clawdbot.json, which "
                       "is in your home and was not in the sandbox: OpenClaw's folder under its "
                       "former name is never shown to a skill; what the skill needs from it "
                       "goes in a variable (--env NAME) or a file in the working folder"), said
    assert said[1] == ("skillgate: the skill's SKILL.md names ~/.todo-cli/config.json, which is "
                       "in your home and was not in the sandbox (its HOME is private): a read "
                       "path in skillsandbox.yaml (permissions.filesystem.read: "
                       "[\"~/.todo-cli/config.json\"]) shows it read-only"), said
    assert "not-there" not in p.err and "passwd" not in p.err, p.err
    # the advice is true: declared, the file is there (OpenClaw's folder stays masked)
    with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
        f.write("skill:\n  name: chat-post\n  description: posts\npermissions:\n"
                "  filesystem:\n    read: [\"~/.todo-cli/config.json\"]\n")
    os.chmod(os.path.join(d, "skillsandbox.yaml"), 0o644)
    with open(os.path.join(d, "scripts", "go.py"), "w") as f:
        f.write("import os\nprint(open(os.path.expanduser('~/.todo-cli/config.json')).read())\n"
                "print(os.path.exists(os.path.expanduser('~/.clawdbot/clawdbot.json')))\n")
    p = m.run("run", "--prompt", "deny", "--cwd", base, d, "--script", "scripts/go.py",
              env={"HOME": m.home}, check=0)
    assert p.out == "{}\nFalse\n", p.out
    assert "SKILL.md names" not in p.err, p.err


WRITER = r"""
import os
try:
    open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "out.txt"), "w").write("x")
    print("wrote")
except OSError as e:
    print("failed:", e)
"""

VERBS = ("read", "write", "exec", "connect", "lookup")


def refused_lines(err):
    return [x for x in err.splitlines() if x.startswith("skillgate: refused: ")]


@test()
def a_read_is_said_as_a_read_and_an_attack_gets_no_way_to_allow_it(m, base):
    """malicious-weather only reads the decoys in ~/.ssh, ~/.aws ...: its
    end said "refused: Write ~/.ssh/id_ed25519 ... or run --write ~/.ssh".
    Now every refusal names what was attempted (read, write, exec,
    connect, lookup), and as the run is critical none is followed by a way
    to allow it. An honest skill's refused write still says how."""
    p = m.run("run", os.path.join(EXAMPLES, "malicious-weather"), check=None)
    lines = refused_lines(p.err)
    assert len(lines) >= 10, p.err
    for x in lines:
        assert x.split()[2] in VERBS, x
        assert "allow with" not in x and "--policy" not in x and "--write" not in x, x
        assert x.endswith("; not to be allowed: part of this run's attack (max severity "
                          "critical)"), x
    ssh = [x for x in lines if "/.ssh/" in x]
    assert ssh and all(x.startswith("skillgate: refused: read ") for x in ssh), ssh
    assert any("/.ssh/id_ed25519 (an empty decoy answered" in x for x in ssh), ssh
    assert any(x.startswith("skillgate: refused: lookup collector.attacker.test") for x in lines)
    assert any(x.startswith("skillgate: refused: connect 203.0.113.7 ") for x in lines)
    assert "Write(" not in p.err and "Fetch(" not in p.err, p.err
    t = m.last_trace()
    reads = [r for r in t["refusals"] if "/.ssh/" in r["subject"]]
    assert reads and all(r["attempt"] == "read" and r["attack"] is True and r["rule"] is None
                         for r in reads), reads
    # --json's last line: the same list, no rule for any of it
    p = m.run("run", "--json", os.path.join(EXAMPLES, "malicious-weather"), check=None)
    last = json.loads(p.out.strip().splitlines()[-1])
    assert last["kind"] == "refusals" and "unless it was part of an attack" in last["message"]
    assert all(r["attack"] is True and r["rule"] is None and r["attempt"] in VERBS
               for r in last["data"]["refusals"]), last
    # an honest skill's refused write says it is a write, and how to allow it
    d = scripts_skill(base, "writer", WRITER)
    p = m.run("run", "--prompt", "deny", "--cwd", base, d, "--script", "scripts/go.py",
              check=None)
    lines = refused_lines(p.err)
    want = f"skillgate: refused: write {d}/out.txt (undeclared, and nobody to ask: " \
           "--prompt deny, or no terminal) — allow " \
           f"with: --policy FILE with Write({d}/out.txt) under allow:, or run --write {d}"
    assert lines and lines[0].startswith(want), p.err


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
