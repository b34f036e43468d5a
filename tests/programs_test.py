#!/usr/bin/env python3
"""The programs a skill's own scripts run (issue 36, item 4): ordinary
programs (find, wc, sort) run without a question but still as events; one
program is one request however a path reaches it (/bin/lsof is
/usr/bin/lsof on a merged-/usr system); the person's deny rules come
first; the config file changes the set; and the line prompt takes one key,
without Enter, on a real terminal, with stdin not that terminal, and puts
the terminal back however skillgate ends. Each test runs for real, as root
and as an unprivileged user, through sandbox_test.py's harness. Prints TAP.

Usage: programs_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import pty
import resource
import select
import shutil
import signal
import subprocess
import sys
import termios
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

QUIET = "an ordinary program (config: quiet_programs)"

# A shell script as skills ship them: ordinary programs, and lsof by both of
# its names (on merged /usr, /bin is a link to usr/bin: one file).
COUNT_SH = """\
#!/bin/bash
n=$(find /etc -maxdepth 1 -name hostname | wc -l)
echo "find-wc: $n"
echo "sorted: $(printf 'b\\na\\n' | sort | tr '\\n' ' ')"
/bin/lsof -v >/dev/null 2>&1; echo "bin-lsof: $?"
/usr/bin/lsof -v >/dev/null 2>&1; echo "usr-lsof: $?"
"""


def skill(base, name, files):
    """SKILL.md with no allowed-tools (every tool may be asked for) and
    scripts/, as Anthropic's skills are."""
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: programs test {name}\n---\n"
                "Run `bash scripts/count.sh`.\n")
    for rel, text in files.items():
        with open(os.path.join(d, rel), "w") as f:
            f.write(textwrap.dedent(text))
        os.chmod(os.path.join(d, rel), 0o755)
    for root, _, _ in os.walk(d):
        os.chmod(root, 0o755)
    return d


def needs_lsof():
    if not os.path.isfile("/usr/bin/lsof") or os.path.realpath("/bin") != "/usr/bin":
        raise h.Skip("lsof at /usr/bin/lsof on a merged-/usr system (/bin -> usr/bin)")


def bash_decisions(m):
    """The trace's Bash decisions: (request, decision, decided_by)."""
    out = []
    for e in m.last_trace()["events"]:
        d = e.get("data") or {}
        if e["kind"] == "permission_decided" and d.get("tool") == "Bash":
            out.append((d["request"], d["decision"], d["decided_by"]))
    return out


def pty_run(m, args, answer, stdin_null=True, timeout=60, on_prompt=None):
    """skillgate on a real terminal with stdin NOT that terminal (/dev/null).
    Each prompt, once shown whole, is answered 0.7 s later (past its arming
    delay) with the keys answer(prompt's text) returns: a string, or a list
    of strings typed 0.5 s apart; no Enter unless given. on_prompt(fd, pid)
    runs when the first prompt shows. Returns (exit status, output, the
    terminal's lflag as skillgate left it)."""
    e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
         "XDG_CONFIG_HOME": os.path.join(m.state, "config"), "LANG": "C.UTF-8", "TERM": "dumb"}
    cmd = [h.SG, *args]
    if h.IS_ROOT and m.uid != 0:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir("/")
        if stdin_null:
            os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGQUIT leaves no core
        os.execve(shutil.which(cmd[0]) if "/" not in cmd[0] else cmd[0], cmd, e)
    buf = b""
    end = time.monotonic() + timeout
    answered = 0
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
        prompts = buf.split(b"--- skillgate:")[1:]
        if len(prompts) > answered and b"deny in " in prompts[answered]:
            if answered == 0 and on_prompt:
                on_prompt(fd, pid)
            keys = answer(prompts[answered].decode("utf-8", "replace"))
            answered += 1
            time.sleep(0.7)
            for i, k in enumerate([keys] if isinstance(keys, str) else keys):
                if i:
                    time.sleep(0.5)
                os.write(fd, k.encode())
    _, status = os.waitpid(pid, 0)
    lflag = termios.tcgetattr(fd)[3]  # the terminal's settings as skillgate left them
    os.close(fd)
    return os.waitstatus_to_exitcode(status), buf.decode("utf-8", "replace"), lflag


def deny_writes(keys):
    """An answer: keys for a program, d for anything else (a bash script's
    Write /dev/tty, which item 4 makes no question at all)."""
    return lambda text: keys if "run a program" in text else "d"


def cooked(lflag):
    return bool(lflag & termios.ICANON) and bool(lflag & termios.ECHO)


@test()
def ordinary_programs_run_unasked_and_one_key_answers_the_rest(m, base):
    """A bash script runs find, wc, sort, tr and lsof by /bin and /usr/bin
    under --prompt tty: one prompt (lsof, shown as /usr/bin/lsof), answered
    by one key with no Enter; find/wc/sort are events, never questions; the
    terminal is in cbreak mode while asking and as it was afterwards."""
    needs_lsof()
    d = skill(base, f"count-{m.name}", {"scripts/count.sh": COUNT_SH})
    during = {}

    def look(fd, pid):
        during["lflag"] = termios.tcgetattr(fd)[3]

    code, out, lflag = pty_run(m, ["run", "--prompt", "tty", d, "--cwd", d, "--script",
                                   "scripts/count.sh"], deny_writes("r"), on_prompt=look)
    assert code == 0, out
    assert out.count("asks to run a program") == 1, out
    assert "program: /usr/bin/lsof" in out and "/bin/lsof" not in out.replace("/usr/bin/lsof", ""), out
    assert "press a key, no Enter" in out and "-> allowed" in out, out
    assert "find-wc: 1" in out and "sorted: a b" in out, out
    assert "bin-lsof: 0" in out and "usr-lsof: 0" in out, out
    assert not cooked(during["lflag"]), "the prompt did not put the terminal in cbreak mode"
    assert cooked(lflag), "the terminal was left in cbreak mode"
    dec = bash_decisions(m)
    for prog in ("find", "wc", "sort", "tr"):
        hits = [x for x in dec if x[0].startswith(f"Bash(/usr/bin/{prog}")]
        assert hits and all(x[2] == QUIET and x[1] == "allow once" for x in hits), (prog, dec)
    lsof = [x for x in dec if "lsof" in x[0]]
    assert [x[0] for x in lsof] == ["Bash(/usr/bin/lsof -v)"] * 2, lsof
    assert lsof[0][2] == "person" and lsof[1][2].startswith("your answer for this run"), lsof


@test()
def other_keys_are_ignored_and_a_signal_puts_the_terminal_back(m, base):
    """Enter, a letter of no answer and an arrow key (ESC [ A, whose A is
    not [A]) answer nothing; a allows once, d denies at once. A SIGTERM or
    SIGQUIT to skillgate while it asks leaves the terminal as it was."""
    needs_lsof()
    d = skill(base, f"keys-{m.name}", {"scripts/count.sh": COUNT_SH})
    keys = iter([["\r\nx\x1b[A", "a"], "d"])
    code, out, lflag = pty_run(m, ["run", "--prompt", "tty", d, "--cwd", d, "--script",
                                   "scripts/count.sh"],
                               lambda text: next(keys) if "run a program" in text else "d")
    assert "save the grant" not in out, out  # the arrow key's A was not [A]
    # Enter, x and the arrow key did nothing: a allowed once, so the second
    # name of lsof asked again, and d denied it at once
    assert out.count("asks to run a program") == 2, out
    assert "bin-lsof: 0" in out and "usr-lsof: 126" in out, out
    assert cooked(lflag), "the terminal was left in cbreak mode"

    # SIGTERM: skillgate's own handler ends the run in order; SIGQUIT: the
    # default action, at once, after the prompt's handler put the terminal back
    for sig in (signal.SIGTERM, signal.SIGQUIT):
        def kill(fd, pid):
            assert not cooked(termios.tcgetattr(fd)[3])
            os.kill(pid, sig)

        code, out, lflag = pty_run(m, ["run", "--prompt", "tty", d, "--cwd", d, "--script",
                                       "scripts/count.sh"], lambda text: "", on_prompt=kill,
                                   timeout=20)
        assert code != 0, (sig, code, out)
        assert cooked(lflag), f"signal {sig} left the terminal in cbreak mode"


@test()
def a_deny_rule_comes_before_the_ordinary_programs(m, base):
    """A --policy deny rule on sort refuses sort (find and wc still run
    unasked); an allow rule naming /bin/lsof, /usr/bin/lsof or lsof covers
    both of its names; a symlink named sort to another program, and a shell or
    the run's interpreter fed code, are not ordinary programs; the run's
    interpreter running a file is."""
    d = skill(base, f"denysort-{m.name}", {"scripts/count.sh": COUNT_SH, "scripts/tricks.py": """\
        import os, subprocess
        os.makedirs("/tmp/b", exist_ok=True)
        os.symlink("/usr/bin/id", "/tmp/b/sort")
        with open("/tmp/b/x.py", "w") as f:
            f.write("print('FILE-RAN')")
        for argv in (["/tmp/b/sort"], ["/usr/bin/bash", "-c", "echo SHELL-RAN"],
                     ["/usr/bin/head", "-c", "3", "/etc/hostname"],
                     ["/usr/bin/python3", "/tmp/b/x.py"],
                     ["/usr/bin/python3", "-c", "print('CODE-RAN')"]):
            try:
                r = subprocess.run(argv, capture_output=True, text=True)
                print(argv[0], "ran", r.returncode, r.stdout.strip()[:20])
            except PermissionError:
                print(argv[0], "denied")
        """})
    pol = os.path.join(base, f"pol-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write('deny: ["Bash(sort:*)"]\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, d, "--cwd", d, "--script", "scripts/count.sh", check=0)
    assert "find-wc: 1" in p.out and "sorted: a b" not in p.out, p.out + p.err
    dec = bash_decisions(m)
    sort = [x for x in dec if x[0].startswith("Bash(/usr/bin/sort")]
    assert sort and sort[0][1] == "deny" and "Bash(sort:*)" in sort[0][2], dec
    assert [x for x in dec if x[0].startswith("Bash(/usr/bin/wc") and x[2] == QUIET], dec
    # a rule naming either path, or the name, is the same program
    if os.path.isfile("/usr/bin/lsof") and os.path.realpath("/bin") == "/usr/bin":
        for rule in ("Bash(/bin/lsof -v)", "Bash(/usr/bin/lsof -v)", "Bash(lsof:*)"):
            with open(pol, "w") as f:
                f.write(f'allow: ["{rule}"]\n')
            p = m.run("run", "--policy", pol, d, "--cwd", d, "--script", "scripts/count.sh",
                      check=0)
            assert "bin-lsof: 0" in p.out and "usr-lsof: 0" in p.out, (rule, p.out + p.err)
    p = m.run("run", "--prompt", "deny", d, "--cwd", d, "--script", "scripts/tricks.py", check=0)
    assert "/tmp/b/sort denied" in p.out, p.out + p.err
    assert "/usr/bin/bash denied" in p.out and "SHELL-RAN" not in p.out, p.out + p.err
    assert "/usr/bin/head ran 0" in p.out, p.out + p.err
    # the run's own interpreter (python3 here) running a file is quiet; fed code, it asks
    assert "FILE-RAN" in p.out and "CODE-RAN" not in p.out, p.out + p.err
    dec = bash_decisions(m)
    assert [x for x in dec if x[0].startswith("Bash(/tmp/b/sort") and x[1] == "deny"], dec
    assert not [x for x in dec if x[2] == QUIET and "head" not in x[0]], dec
    assert [x for x in dec if x[0] == "Bash(/usr/bin/python3 /tmp/b/x.py)" and
            x[2].startswith("the run's own interpreter")], dec


# An office suite's launcher as LibreOffice ships one (issue 52, item 1): a
# script that runs its own helpers from its installation (oosplash, then
# soffice.bin) and system programs (uname, id, getconf), one through a
# shell's -c line as popen runs it; soffice.bin also feeds a shell code with
# an expansion, and runs a file the skill wrote: those two are asked.
OFFICE = {
    "soffice": """\
        #!/bin/sh
        sd=$(dirname "$0")
        os=$(uname -s)
        "$sd/oosplash" "$@"
        """,
    "oosplash": """\
        #!/bin/sh
        sd=$(dirname "$0")
        exec "$sd/soffice.bin" "$@"
        """,
    "soffice.bin": """\
        #!/bin/sh
        id -u >/dev/null && getconf PAGESIZE >/dev/null && echo "system programs ran"
        /bin/sh -c 'getconf PAGESIZE 2>/dev/null' >/dev/null && echo "popen line ran"
        /bin/sh -c 'id -u >id.txt' 2>/dev/null || echo "a line writing a file asked"
        /bin/sh -c 'echo CODE-$((6*7))' 2>/dev/null || echo "shell code refused"
        ./helper.sh 2>/dev/null
        echo converted > doc.pdf && echo "soffice.bin done"
        """,
}

CONVERT_PY = """\
    import subprocess, sys
    with open("helper.sh", "w") as f:
        f.write("#!/bin/sh\\nid -g >/dev/null 2>&1 && echo HELPER-ID-RAN || echo helper id refused\\n")
    import os; os.chmod("helper.sh", 0o755)
    r = subprocess.run([sys.argv[1], "--headless", "--convert-to", "pdf", "doc.docx"])
    print("soffice exit", r.returncode)
    for _ in range(2):
        try:
            subprocess.run(["uname", "-r"], capture_output=True)
            print("uname ran")
        except PermissionError:
            print("uname refused")
    """


@test()
def one_answer_allows_a_program_and_the_system_programs_it_runs(m, base):
    """[p] on an office suite's launcher allows it with any arguments and
    the programs of root's that it and its children run: one question for
    the conversion, every one of them still a decision in the trace. A
    shell fed code and a file the skill wrote, run by the suite, are asked
    on their own; the skill's own script is no child of it (its uname is
    asked). A person's deny holds for the rest of the run: the second
    uname is refused without a question."""
    if not h.IS_ROOT:
        raise h.Skip("a root-owned installation to run needs root to make")
    inst = install_office(m)
    try:
        d = skill(base, f"office-{m.name}", {"scripts/convert.py": CONVERT_PY})
        w = os.path.join(base, f"work-{m.name}")
        os.makedirs(w)
        os.chown(w, m.uid, m.uid)
        asked = []

        def answer(text):
            if "run a program" not in text:
                return "a"  # a Write of the outputs
            asked.append(text)
            if "helper.sh" in text:  # the skill's own file: allowed once, never [p]
                assert "[p]" not in text, text
                return "a"
            return "p" if "program/soffice" in text and len(asked) == 1 else "d"

        code, out, _ = pty_run(m, ["run", "--prompt", "tty", d, "--cwd", w, "--script",
                                   "scripts/convert.py", "--", f"{inst}/program/soffice"],
                               answer, timeout=90)
        assert "[p] this program, this run" in asked[0], asked[0]
        assert "and the system's programs it and its children run" in asked[0], asked[0]
        assert "system programs ran" in out and "soffice.bin done" in out, out
        assert "popen line ran" in out, out  # sh -c with a line read whole, as popen runs
        assert "a line writing a file asked" in out, out
        assert "CODE-42" not in out and "shell code refused" in out, out
        # the helper ran (allowed once), but out of the tree: its id was asked
        assert "HELPER-ID-RAN" not in out and "helper id refused" in out, out
        assert out.count("uname refused") == 2, out
        assert os.path.isfile(os.path.join(w, "doc.pdf")), out
        # soffice, the shell fed code or writing a file, the skill's helper and its id,
        # the script's own uname
        assert len(asked) == 6, [a[-400:] for a in asked]
        dec = bash_decisions(m)
        under = f"your answer for this run: Bash({inst}/program/soffice:*), with the programs"
        for prog in ("/usr/bin/uname -s", f"{inst}/program/oosplash",
                     f"{inst}/program/soffice.bin", "/usr/bin/id -u", "/usr/bin/getconf",
                     "/usr/bin/sh -c 'getconf PAGESIZE 2>/dev/null'"):
            hits = [x for x in dec if x[0].startswith(f"Bash({prog}")]
            assert hits and all(x[1] == "allow once" and x[2].startswith(under)
                                for x in hits), (prog, dec)
        idg = [x for x in dec if x[0] == "Bash(/usr/bin/id -g)"]  # sh tries each PATH name
        assert idg and idg[0][2] == "person" and all(x[1] == "deny" for x in idg), dec
        uname = [x for x in dec if x[0] == "Bash(/usr/bin/uname -r)"]
        assert [x[1] for x in uname] == ["deny", "deny"], uname
        assert uname[0][2] == "person" and uname[1][2].startswith("your answer for this run"), uname
    finally:
        shutil.rmtree(inst, ignore_errors=True)


PREEXEC_PY = """\
    import os, subprocess, sys, time
    if os.fork() == 0:  # forked before the exec: the skill's code, not the program's
        time.sleep(0.3)
        try:
            subprocess.run(["uname", "-n"], capture_output=True)
            print("child uname ran", flush=True)
        except PermissionError:
            print("child uname refused", flush=True)
        os._exit(0)
    os.execv(sys.argv[1], [sys.argv[1], "--headless"])
    """

ENV_PY = """\
    import os, subprocess, sys
    subprocess.run([sys.argv[1], "--headless"], env=dict(os.environ, PYTHONPATH="/tmp"))
    """


def install_office(m):
    inst = f"/opt/sgtest-office-{m.name}-{os.getpid()}"
    os.makedirs(f"{inst}/program")
    for name, text in OFFICE.items():
        path = f"{inst}/program/{name}"
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        os.chmod(path, 0o755)
    for dd in (inst, f"{inst}/program"):
        os.chmod(dd, 0o755)
    return inst


@test()
def a_program_answer_takes_in_no_code_of_the_skills(m, base):
    """The answer's program makes no tree of what it runs when the skill's
    code could be in it: a process that forked before it ran the program
    (that child is the skill's), or an environment naming code for the
    program to load (PYTHONPATH, LD_PRELOAD ...). The program runs as
    allowed; what it and that child run is asked, and an event says why."""
    if not h.IS_ROOT:
        raise h.Skip("a root-owned installation to run needs root to make")
    inst = install_office(m)
    try:
        d = skill(base, f"office2-{m.name}", {
            "scripts/preexec.py": PREEXEC_PY, "scripts/env.py": ENV_PY,
            "scripts/launch.py": "import subprocess\n"
                                 "subprocess.run(['/usr/bin/ionice', '-c', '3', 'true'])\n"})
        if os.path.isfile("/usr/bin/ionice"):  # a launcher: "any arguments" is any program
            seen = []
            pty_run(m, ["run", "--prompt", "tty", d, "--cwd", d, "--script", "scripts/launch.py"],
                    lambda text: seen.append(text) or "d")
            assert seen and "ionice" in seen[0] and "[p]" not in seen[0], seen
        for script, why in (("scripts/preexec.py", "it had started other processes"),
                            ("scripts/env.py", "its environment names code for it to load")):
            asked = []

            def answer(text):
                asked.append(text)
                return "p" if len(asked) == 1 and "program/soffice" in text else "d"

            code, out, _ = pty_run(m, ["run", "--prompt", "tty", d, "--cwd", d, "--script",
                                       script, "--", f"{inst}/program/soffice"], answer)
            assert "[p] this program" in asked[0], (script, asked[0])
            events = m.last_trace()["events"]
            said = [e for e in events if (e.get("data") or {}).get("not_covered")]
            assert said and why in said[0]["data"]["not_covered"], (script, events[-5:])
            dec = bash_decisions(m)
            assert not [x for x in dec if "with the programs of root" in x[2]], (script, dec)
            assert [x for x in dec if x[0] == "Bash(/usr/bin/uname -s)" and
                    x[2] == "person"], (script, dec)
            if script == "scripts/preexec.py":
                assert "child uname refused" in out, out
                assert [x for x in dec if x[0] == "Bash(/usr/bin/uname -n)" and
                        x[2] == "person"], dec
            else:
                assert said[0]["data"]["name"] == "PYTHONPATH", said
    finally:
        shutil.rmtree(inst, ignore_errors=True)


# Another thread flips argv[1] between -s and -r while the exec is decided:
# what runs must be what was decided (issue 52's review: a race past a deny).
RACER_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static char arg[4] = "-s";
static volatile int started;
static void *flip(void *x)
{
    (void)x;
    started = 1;
    for (;;) {
        ((volatile char *)arg)[1] = 's';
        for (volatile int i = 0; i < 50; i++)
            ;
        ((volatile char *)arg)[1] = 'r';
        for (volatile int i = 0; i < 50; i++)
            ;
    }
    return NULL;
}
int main(void)
{
    int runs = 0, release = 0;
    for (int n = 0; n < 300; n++) {
        int p[2];
        if (pipe(p))
            return 1;
        pid_t c = fork();
        if (!c) {
            dup2(p[1], 1);
            pthread_t t;
            pthread_create(&t, 0, flip, 0);
            while (!started)
                ;
            for (volatile int i = 0; i < (n % 7) * 13; i++)
                ;
            char *av[] = {"uname", arg, NULL};
            execv("/usr/bin/uname", av);
            _exit(9);
        }
        close(p[1]);
        char buf[128] = "";
        ssize_t k = read(p[0], buf, sizeof buf - 1);
        close(p[0]);
        waitpid(c, 0, 0);
        if (k > 0) {
            runs++;
            release += strncmp(buf, "Linux", 5) != 0;
        }
    }
    printf("RACER: %d runs, %d printed the release\n", runs, release);
    return 0;
}
"""


@test()
def what_runs_is_the_argv_that_was_decided(m, base):
    """A thread flips an exec's argv[1] between an allowed -s and a denied
    -r while the broker reads it: the kernel's copy is checked at the new
    image's first instruction, and a mismatch is killed there (an event);
    uname -r never prints the kernel's release."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise h.Skip("a C compiler to build the racing program")
    d = skill(base, f"racer-{m.name}", {"scripts/racer.c": RACER_C,
                                        "scripts/race.sh": '#!/bin/sh\nexec "$0.bin"\n'})
    racer = os.path.join(d, "scripts/race.sh.bin")
    subprocess.run([cc, "-O1", "-pthread", "-o", racer, os.path.join(d, "scripts/racer.c")],
                   check=True)
    pol = os.path.join(base, f"race-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write(f'allow: ["Bash(/usr/bin/uname -s)", "Bash({racer})"]\n'
                'deny: ["Bash(/usr/bin/uname -r)"]\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, "--prompt", "deny", "--timeout", "120", d, "--cwd", d,
              "--script", "scripts/race.sh", check=0)
    assert "RACER:" in p.out, p.out + p.err
    runs, release = (int(w) for w in p.out.split("RACER:")[1].split()[0:3:2])
    assert runs > 0 and release == 0, p.out
    swaps = [e for e in m.last_trace()["events"]
             if (e.get("data") or {}).get("reason") == "arguments swapped"]
    print(f"#   {runs} runs of 300, {len(swaps)} caught with their arguments swapped")


ADOPT_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
    long r = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    printf("clone_parent %ld %d\n", r < 0 ? -1L : 0L, r < 0 ? errno : 0);
    r = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    printf("subreaper %ld %d\n", r, r < 0 ? errno : 0);
    return 0;
}
"""


@test()
def no_process_is_given_to_another_nor_adopts_orphans(m, base):
    """A child made another process's (clone's CLONE_PARENT) or a process
    adopting its descendants' orphans (PR_SET_CHILD_SUBREAPER) would put
    the skill's code under a program allowed with what it runs: both are
    refused with EPERM. A program run by a name not its own (argv[0]) is
    asked, never matched by a rule: git-init is git init."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise h.Skip("a C compiler to build the probe")
    d = skill(base, f"adopt-{m.name}", {"scripts/adopt.c": ADOPT_C,
                                        "scripts/adopt.sh": '#!/bin/sh\nexec "$0.bin"\n',
                                        "scripts/named.py": """\
        import os
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/usr/bin/uname", ["zcat", "-r"])
            except PermissionError:
                os._exit(13)
        print("named exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """})
    probe = os.path.join(d, "scripts/adopt.sh.bin")
    subprocess.run([cc, "-O1", "-o", probe, os.path.join(d, "scripts/adopt.c")], check=True)
    pol = os.path.join(base, f"adopt-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write(f'allow: ["Bash({probe})", "Bash(/usr/bin/uname:*)"]\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, "--prompt", "deny", d, "--cwd", d, "--script",
              "scripts/adopt.sh", check=0)
    assert "clone_parent -1 1" in p.out and "subreaper -1 1" in p.out, p.out + p.err
    p = m.run("run", "--policy", pol, "--prompt", "deny", d, "--cwd", d, "--script",
              "scripts/named.py", check=0)
    assert "named exit 13" in p.out, p.out + p.err
    dec = bash_decisions(m)
    assert [x for x in dec if x[0] == "Bash(/usr/bin/uname -r)" and x[1] == "deny"], dec


@test()
def the_config_file_changes_the_set(m, base):
    """quiet_programs: {remove: [wc]} asks for wc again (denied under
    --prompt deny, find still quiet; adding curl is only a warning,
    test_quiet.c); false asks for every program; a config with errors
    quiets nothing and says so."""
    d = skill(base, f"cfg-{m.name}", {"scripts/count.sh": COUNT_SH})
    cfgdir = os.path.join(m.home, ".config", "skillgate")
    cfg = os.path.join(cfgdir, "config.yaml")
    before = open(cfg).read()

    def with_config(extra):
        with open(cfg, "w") as f:
            f.write(before + extra)
        return m.run("run", "--prompt", "deny", d, "--cwd", d, "--script", "scripts/count.sh", check=0)

    try:
        p = with_config("quiet_programs:\n  remove: [wc]\n  add: [curl]\n")
        assert "find-wc: 1" not in p.out and "sorted: a b" in p.out, p.out + p.err
        dec = bash_decisions(m)
        assert [x for x in dec if x[0].startswith("Bash(/usr/bin/wc") and x[1] == "deny"], dec
        assert [x for x in dec if x[0].startswith("Bash(/usr/bin/find") and x[2] == QUIET], dec
        p = with_config("quiet_programs: false\n")
        dec = bash_decisions(m)
        assert not [x for x in dec if x[2] == QUIET], dec
        assert [x for x in dec if x[0].startswith("Bash(/usr/bin/find") and x[1] == "deny"], dec
        p = with_config("quiet_programs: 7\n")
        dec = bash_decisions(m)
        assert not [x for x in dec if x[2] == QUIET], dec
        msgs = [e["message"] for e in m.last_trace()["events"] if e["kind"] == "policy_applied"]
        assert any("quiet_programs off" in x for x in msgs), msgs
    finally:
        with open(cfg, "w") as f:
            f.write(before)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
