#!/usr/bin/env python3
"""`skillgate run SKILL --script PATH [--] ARG...` (issue 18): the skills
people have are a SKILL.md and a scripts/ folder whose scripts take file
paths relative to where the person works. Each test runs for real, as root
and again as an unprivileged user, through sandbox_test.py's harness, and
asserts what a user sees: the arguments as typed, the working folder
read-only at its own path, a write there asked for (denied, or done under a
rule), and a script or folder that would show more than it should refused
with exit status 126. Prints TAP.

Usage: scripts_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import re
import shutil
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

# Arguments a person types: spaces, quotes, shell words, non-ASCII, an
# option-looking one and an empty one, each must arrive as it is.
ARGS = ["two words", "it's \"quoted\"", "$HOME *", "é ü 中文 🙂", "-v", ""]

SHOW_PY = """\
import json, os, sys
print("ARGS " + json.dumps(sys.argv[1:]))
print("CWD " + os.getcwd())
"""
SHOW_SH = """\
#!/bin/bash
printf 'SH '; printf '%s|' "$@"; echo
"""
SHOW_SHEBANG = """\
#!/usr/bin/python3 -S
import json, sys
print("SHEBANG " + json.dumps(sys.argv[1:]))
"""


def scripts_skill(base, name, files):
    """A skill as Anthropic ships them: SKILL.md, no skillsandbox.yaml, a
    scripts/ folder, usage lines in a second Markdown file."""
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: scripts test {name}\n---\n"
                "See reference.md for the scripts.\n")
    with open(os.path.join(d, "reference.md"), "w") as f:
        f.write("Run `python scripts/show.py <in> <out>` from your folder.\n")
    for rel, (text, mode) in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(textwrap.dedent(text))
        os.chmod(p, mode)
    for root, dirs, _ in os.walk(d):
        os.chmod(root, 0o755)
    return d


def work_folder(base, m, name="work"):
    """The person's folder: theirs, in a folder nobody else may change (the
    sandbox refuses to show a folder that could be swapped after it was
    checked)."""
    w = os.path.join(base, f"{name}-{m.name}", "my files é")
    os.makedirs(w)
    os.chmod(os.path.dirname(w), 0o755)
    with open(os.path.join(w, "in put.txt"), "w") as f:
        f.write("twelve bytes")
    os.chmod(os.path.join(w, "in put.txt"), 0o644)
    os.chmod(w, 0o755)
    if h.IS_ROOT:
        os.chown(w, m.uid, m.uid)
    return w


@test()
def a_script_runs_with_its_arguments_as_typed(m, base):
    """The interpreter comes from the name (.py, .sh) or the #! line, the
    arguments arrive byte for byte, and the trace and audit record name the
    script, its arguments and the working folder."""
    d = scripts_skill(base, f"scripts-{m.name}", {
        "scripts/show.py": (SHOW_PY, 0o644),
        "scripts/show.sh": (SHOW_SH, 0o644),
        "scripts/tool": (SHOW_SHEBANG, 0o755),
    })
    w = work_folder(base, m)
    p = m.run("run", "--cwd", w, d, "--script", "scripts/show.py", "--", *ARGS, check=0)
    assert p.returncode == 0, p.out + p.err
    assert "ARGS " + json.dumps(ARGS) in p.out, p.out
    assert "CWD " + w in p.out, p.out
    t = m.last_trace()
    inv = t["invocation"]
    assert inv["script"] == "scripts/show.py" and inv["args"] == ARGS, inv
    assert inv["cwd"] == w and inv["working_folder"] is True, inv
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    rec = [json.loads(l) for l in open(log) if '"type":"run"' in l][-1]
    assert rec["invocation"]["args"] == ARGS, rec
    p = m.run("run", "--cwd", w, d, "--script", "scripts/show.sh", "--", *ARGS, check=0)
    assert p.returncode == 0, p.out + p.err
    assert "SH " + "".join(a + "|" for a in ARGS) in p.out, p.out
    p = m.run("run", "--cwd", w, d, "--script", "scripts/tool", "--", *ARGS, check=0)
    assert p.returncode == 0, p.out + p.err
    assert "SHEBANG " + json.dumps(ARGS) in p.out, p.out
    # the dry run says what would run, and runs nothing
    p = m.run("run", "--dry-run", "--cwd", w, d, "--script", "scripts/show.py", "--", "x")
    assert "script scripts/show.py with 1 argument" in p.out, p.out
    assert "your working folder, read-only" in p.out, p.out


WRITER = """\
import sys
data = open(sys.argv[1]).read()
print("READ", len(data))
try:
    with open(sys.argv[2], "w") as f:
        f.write(data.upper())
    print("WROTE", sys.argv[2])
except OSError as e:
    print("REFUSED", e.errno)
"""


@test()
def a_write_in_the_working_folder_is_asked_for(m, base):
    """The working folder is read-only at its own path: relative arguments
    mean what the person meant, and writing there is a Write request, denied
    under --prompt deny (nothing lands, the decision names the file) and
    done under a --policy rule that allows the folder."""
    d = scripts_skill(base, f"writer-{m.name}", {"scripts/fill.py": (WRITER, 0o644)})
    w = work_folder(base, m)
    out = os.path.join(w, "out put.txt")
    p = m.run("run", "--json", "--prompt", "deny", "--cwd", w, d, "--script",
              "scripts/fill.py", "--", "in put.txt", "out put.txt", check=0)
    assert "READ 12" in p.out and "REFUSED 13" in p.out, p.out + p.err
    assert not os.path.exists(out), "a denied write landed in the working folder"
    decided = [e for e in m.events(p) if e.get("kind") == "permission_decided"]
    assert any(out in e["message"] and "deny" in e["message"] for e in decided), decided
    pol = os.path.join(base, f"policy-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write(f'allow:\n  - "Write({w}/**)"\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, "--cwd", w, d, "--script", "scripts/fill.py", "--",
              "in put.txt", "out put.txt", check=0)
    assert "WROTE out put.txt" in p.out, p.out + p.err
    assert open(out).read() == "TWELVE BYTES"


LEAVER = """\
print("RAN")
"""


@test()
def a_script_outside_the_skill_is_refused(m, base):
    """--script names a file inside the skill's folder: "..", an absolute
    path, a symlink leading out, a folder, or nothing at all is refused with
    126 and a message naming it, before anything runs."""
    d = scripts_skill(base, f"leaver-{m.name}", {"scripts/ok.py": (LEAVER, 0o644)})
    outside = os.path.join(base, f"outside-{m.name}.py")
    with open(outside, "w") as f:
        f.write(LEAVER)
    os.symlink(outside, os.path.join(d, "scripts", "link.py"))
    w = work_folder(base, m)
    cases = {"../" + os.path.basename(outside): "climbs out", outside: "inside the skill",
             "scripts/link.py": "symlink", "scripts": "is not a file",
             "scripts/none.py": "does not exist"}
    for script, why in cases.items():
        p = m.run("run", "--cwd", w, d, "--script", script)
        assert p.returncode == 126, (script, p.returncode, p.out, p.err)
        assert "RAN" not in p.out, (script, p.out)
        assert script in p.err and why in p.err, (script, p.err)
    p = m.run("run", "--cwd", w, d, "--script", "scripts/ok.py", check=0)
    assert p.returncode == 0 and "RAN" in p.out, p.out + p.err


PEEKER = """\
import os, sys
for rel in ("../.ssh/id_rsa", "../.aws/credentials", "../notes.txt"):
    try:
        print("READ", rel, open(rel).read())
    except OSError as e:
        print("NOPE", rel, e.errno)
print("HERE", sorted(os.listdir(".")))
"""


@test()
def a_working_folder_in_the_home_shows_only_itself(m, base):
    """The home stays private: a working folder inside it is shown, the rest
    of the home (credentials, other files) is not. The home itself, or /, as
    the working folder is refused: the skill would see everything."""
    h.plant_credentials(m.home, m.uid)
    proj = os.path.join(m.home, "project")
    os.makedirs(proj)
    with open(os.path.join(proj, "data.csv"), "w") as f:
        f.write("a,b\n")
    if h.IS_ROOT:
        for p in (proj, os.path.join(proj, "data.csv")):
            os.chown(p, m.uid, m.uid)
    d = scripts_skill(base, f"peeker-{m.name}", {"scripts/peek.py": (PEEKER, 0o644)})
    p = m.run("run", "--cwd", proj, d, "--script", "scripts/peek.py", check=0)
    assert p.returncode == 0, p.out + p.err
    assert "HERE ['data.csv']" in p.out, p.out
    h.assert_no_planted(p.out, p.err)
    for rel in ("../.ssh/id_rsa", "../.aws/credentials", "../notes.txt"):
        assert f"NOPE {rel}" in p.out or f"READ {rel} \n" in p.out, p.out  # missing, or a decoy
    for where, word in ((m.home, "your home"), ("/", "/")):
        p = m.run("run", "--cwd", where, d, "--script", "scripts/peek.py")
        assert p.returncode == 126, (where, p.returncode, p.out, p.err)
        assert f"may not be {word}" in p.err, p.err
        assert "HERE" not in p.out, p.out


NAMED = """\
import os, sys
for a in sys.argv[1:]:
    a = a.split("=", 1)[1] if a.startswith("--") else a
    try:
        print("READ", a, open(a).read())
    except OSError as e:
        print("NOPE", a, e.errno)
named = sys.argv[1]
try:
    open(named, "a").write("changed")
    print("WROTE", named)
except OSError as e:
    print("NOWRITE", e.errno)
print("NEXT", sorted(os.listdir(os.path.dirname(named))))
"""


def named_files(base, m):
    """The person's file in a folder the skill does not see, a secret
    beside it, and one in the person's home."""
    far = os.path.join(base, f"elsewhere-{m.name}")
    os.makedirs(far)
    texts = {os.path.join(far, "form.pdf"): "FORM-BYTES",
             os.path.join(far, "beside.txt"): h.PLANTED + "-beside",
             os.path.join(m.home, "proj", "in.txt"): "HOME-PROJ"}
    for path, text in texts.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        os.chmod(os.path.dirname(path), 0o755)
        if h.IS_ROOT:
            os.chown(path, m.uid, m.uid)
    return far


@test()
def a_file_the_person_names_is_shown_read_only(m, base):
    """`run SKILL --script s.py /elsewhere/form.pdf` from another folder:
    the file named (as an argument, or an --option=PATH) is readable, the
    file itself and nothing beside it, read-only (a write is asked for and
    denied), and an event says so; a folder or a missing file in a folder
    the skill does not see is said before the run, never a silent "No such
    file"."""
    d = scripts_skill(base, f"named-{m.name}", {"scripts/read.py": (NAMED, 0o644)})
    far = named_files(base, m)
    form, home_in = os.path.join(far, "form.pdf"), os.path.join(m.home, "proj", "in.txt")
    w = work_folder(base, m)
    p = m.run("run", "--json", "--prompt", "deny", "--cwd", w, d, "--script",
              "scripts/read.py", "--", form, "--in=" + home_in, far,
              os.path.join(far, "out.pdf"), check=0)
    assert p.returncode == 0, p.out + p.err
    assert f"READ {form} FORM-BYTES" in p.out and f"READ {home_in} HOME-PROJ" in p.out, p.out
    assert "NOWRITE" in p.out and open(form).read() == "FORM-BYTES", p.out
    assert "NEXT ['form.pdf']" in p.out, p.out  # the file, not its folder
    h.assert_no_planted(p.out, p.err)
    named = [e for e in m.events(p) if e.get("kind") == "path_named"]
    shown = {e["data"]["path"] for e in named if e["data"]["shown"]}
    assert shown == {form, home_in}, named
    said = " ".join(e["message"] for e in named if not e["data"]["shown"])
    assert f"{far} is a folder outside the skill's view" in said and "--cwd DIR" in said, said
    assert os.path.join(far, "out.pdf") + ": nothing is there" in said, said
    kinds = [e["kind"] for e in m.last_trace()["events"]]
    assert kinds.count("path_named") == 4, kinds
    # what a run shown a named file wrote in its home is not kept: the file
    # was for this run only
    saved = [e["data"]["home_saved"] for e in m.last_trace()["events"]
             if isinstance((e.get("data") or {}).get("home_saved"), dict)]
    assert saved and saved[0].get("kept") is False and saved[0]["named"], saved
    # the file's mount point, left in the private /tmp when the sandbox
    # went, is no file the skill wrote
    assert "write_discarded" not in kinds, m.last_trace()["events"]
    # the plain run says it on stderr, before the skill's output is judged
    p = m.run("run", "--cwd", w, d, "--script", "scripts/read.py", form, check=0)
    assert f"{form}, named on the command line, is shown to the skill read-only" in p.err, p.err
    # the dry run shows both, and runs nothing
    p = m.run("run", "--dry-run", "--cwd", w, d, "--script", "scripts/read.py", "--", form, far)
    assert f"{form}  [named on the command line: this file only" in p.out, p.out
    assert f"not shown: {far} is a folder outside the skill's view" in p.out, p.out
    # and to a module's run (python -m, as skill-creator documents it)
    p = m.run("run", "--cwd", w, d, "-m", "scripts.read", form, check=0)
    assert f"READ {form} FORM-BYTES" in p.out, p.out + p.err


@test()
def a_named_file_in_a_masked_place_is_refused(m, base):
    """A named file the sandbox never shows (a credential, through a link
    too) refuses the run with 126 and a message naming it; nothing runs."""
    h.plant_credentials(m.home, m.uid)
    d = scripts_skill(base, f"namedsecret-{m.name}", {"scripts/read.py": (NAMED, 0o644)})
    w = work_folder(base, m)
    link = os.path.join(w, "key.txt")
    os.symlink(os.path.join(m.home, ".ssh", "id_rsa"), link)
    for named in (os.path.join(m.home, ".ssh", "id_rsa"), "key.txt",
                  "--key=" + os.path.join(m.home, ".aws", "credentials")):
        p = m.run("run", "--cwd", w, d, "--script", "scripts/read.py", "--", named)
        assert p.returncode == 126, (named, p.returncode, p.out, p.err)
        assert "named on the command line, is not shown to the skill" in p.err, p.err
        assert "READ" not in p.out, p.out
        h.assert_no_planted(p.out, p.err)


@test()
def a_named_file_is_never_a_secret_a_link_or_the_home_hides(m, base):
    """Review 6: a link the skill ships in its own folder, named as its
    usage line says (samples/x.yml -> ../../.config/gh/hosts.yml), showed
    the token at its real path; and the secrets a private home hides that
    are not on the seed list (gh's hosts.yml, .pgpass, histories) were
    shown when named. Neither is shown now."""
    gh = os.path.join(m.home, ".config", "gh", "hosts.yml")
    pg = os.path.join(m.home, ".pgpass")
    for path in (gh, pg):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(h.PLANTED + "-" + os.path.basename(path))
        os.chmod(path, 0o600)
        if h.IS_ROOT:
            os.chown(path, m.uid, m.uid)
    d = scripts_skill(base, f"namedlink-{m.name}", {"scripts/read.py": (NAMED, 0o644)})
    os.makedirs(os.path.join(d, "samples"))
    os.symlink(os.path.relpath(gh, os.path.join(d, "samples")),
               os.path.join(d, "samples", "example.yml"))
    os.chmod(os.path.join(d, "samples"), 0o755)
    p = m.run("run", "--cwd", d, d, "--script", "scripts/read.py", "--", "samples/example.yml",
              check=0)
    assert "a link in the skill's own folder that leads out of it" in p.err, p.out + p.err
    h.assert_no_planted(p.out, p.err)
    w = work_folder(base, m)
    for named in (gh, pg, "--cfg=" + gh):
        p = m.run("run", "--cwd", w, d, "--script", "scripts/read.py", "--", named)
        assert p.returncode == 126, (named, p.returncode, p.out, p.err)
        assert "never shown to a skill" in p.err, p.err
        h.assert_no_planted(p.out, p.err)


SPARSE = """\
import os, sys
home = os.path.expanduser("~")
p = os.path.join(home, ".cache", "mark")
print("SEES", open(p).read() if os.path.exists(p) else None)
if sys.argv[1] == "sparse":
    for i in range(6):
        with open(os.path.join(home, f"s{i}"), "w") as f:
            f.truncate(64 << 20)
elif sys.argv[1] == "link":
    os.makedirs(os.path.join(home, ".lcl", "share", "applications"))
    open(os.path.join(home, ".lcl", "share", "applications", "x.desktop"), "w").write("x")
    os.symlink(".lcl", os.path.join(home, ".local"))
elif sys.argv[1] == "linked":
    print("DESKTOP", os.path.exists(os.path.join(home, ".local/share/applications/x.desktop")))
elif sys.argv[1] == "plant":
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write("OLD-CONTENT")
    import time; time.sleep(4)
"""


@test()
def a_kept_home_holds_no_more_than_the_home_and_no_old_content(m, base):
    """Review 6: sparse files cost the home nothing and the disk their
    whole size (6 x 64 MiB in a 64 MiB home: 384 MB kept); and a run of the
    old content that ended after the new content's run had dropped the
    kept home put the old one back under the new digest."""
    d = scripts_skill(base, f"sparse-{m.name}", {"scripts/s.py": (SPARSE, 0o644)})
    w = work_folder(base, m)
    m.run("run", "--cwd", w, d, "--script", "scripts/s.py", "--", "sparse", check=0)
    kept = os.path.join(kept_home(m, d)["place"], "home")
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(kept) for f in fs)
    assert size <= 64 << 20, size
    # the class is read from the path: a link above a persistence place is
    # no way to keep one (~/.local -> .lcl, .lcl/share/applications/x.desktop)
    m.run("run", "--fresh-home", "--cwd", w, d, "--script", "scripts/s.py", "--", "link",
          check=0)
    p = m.run("run", "--cwd", w, d, "--script", "scripts/s.py", "--", "linked", check=0)
    assert "DESKTOP False" in p.out, p.out + p.err
    import subprocess
    e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state, "LANG": "C.UTF-8"}
    cmd = [h.SG, "run", "--cwd", w, d, "--script", "scripts/s.py", "--", "plant"]
    if h.IS_ROOT and m.uid != 0:
        cmd = ["setpriv", f"--reuid={m.uid}", f"--regid={m.uid}", "--clear-groups", *cmd]
    old = subprocess.Popen(cmd, env=e, cwd="/", stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    with open(os.path.join(d, "NOTES.md"), "w") as f:
        f.write("a new version\n")
    p = m.run("run", "--cwd", w, d, "--script", "scripts/s.py", "--", "look", check=0)
    assert "SEES None" in p.out, p.out + p.err
    old.wait(timeout=30)
    p = m.run("run", "--cwd", w, d, "--script", "scripts/s.py", "--", "look", check=0)
    assert "SEES None" in p.out, p.out + p.err


# A program that builds a profile on its first start, as LibreOffice does
# (9-13 s cold, 2 s once ~/.config/libreoffice exists): slow when its
# profile is missing, fast when it is there.
PROFILE = """\
import os, sys, time
home = os.path.expanduser("~")
prof = os.path.join(home, ".config", "fakeoffice", "registry.xcu")
print("BASHRC", os.path.exists(os.path.join(home, ".bashrc")))
print("SSHCONF", os.path.exists(os.path.join(home, ".ssh", "config")))
print("HERE", sorted(os.listdir(os.getcwd())))
if os.path.exists(prof):
    print("WARM", open(prof).read(), os.readlink(prof + ".link"), os.stat(prof).st_uid)
    sys.exit(0)
time.sleep(1.5)
os.makedirs(os.path.dirname(prof))
with open(prof, "w") as f:
    f.write("PROFILE-" + sys.argv[1])
os.symlink("registry.xcu", prof + ".link")
os.makedirs(os.path.join(home, ".cache", "fontconfig"))
with open(os.path.join(home, ".cache", "fontconfig", "x.cache-9"), "wb") as f:
    f.write(b"\\0" * 65536)
with open(os.path.join(home, ".bashrc"), "a") as f:
    f.write("echo persisted\\n")
os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
with open(os.path.join(home, ".ssh", "config"), "w") as f:
    f.write("Host *\\n")
print("COLD")
"""


def kept_home(m, d):
    p = m.run("inspect", "--json", d, check=0)
    return json.loads(p.out)["home"]


@test()
def a_skills_home_is_kept_between_its_runs(m, base):
    """Issue 52 item 4: the second run of a program that builds a profile
    on its first start finds its profile (caches, links as links, owned by
    the skill) and is fast; shell rc files and credential places are not
    kept; inspect shows what is kept; --fresh-home and a changed skill start
    clean; the working folder under the home never goes into the kept one."""
    d = scripts_skill(base, f"office-{m.name}", {"scripts/convert.py": (PROFILE, 0o644)})
    proj = os.path.join(m.home, "office-proj")  # the mode's home is shared by the tests
    os.makedirs(proj)
    with open(os.path.join(proj, "doc.txt"), "w") as f:
        f.write("the person's")
    if h.IS_ROOT:
        os.chown(proj, m.uid, m.uid)
    run = lambda *extra: m.run("run", "--json", "--cwd", proj, *extra, d, "--script",
                               "scripts/convert.py", "--", "one", check=0)
    assert not kept_home(m, d)["kept"]
    p = run()
    assert p.returncode == 0 and "COLD" in p.out, p.out + p.err
    home = kept_home(m, d)
    assert home["kept"] and home["current"] and home["files"] == 2, home
    assert home["bytes"] == 65536 + len("PROFILE-one"), home
    assert "/skillgate/homes/" in home["place"] and home["place"].startswith(m.state), home
    saved = [e for e in m.events(p) if "home_saved" in (e.get("data") or {})]
    assert saved and saved[0]["data"]["home_saved"]["files"] == 2, saved
    # the rc file and the credential place were discarded, and said so
    gone = {e["data"]["path"] for e in m.events(p) if e.get("kind") == "write_discarded"}
    assert any(g.endswith("/.bashrc") for g in gone), gone
    kept = os.path.join(home["place"], "home")
    names = sorted(os.path.relpath(os.path.join(r, x), kept)
                   for r, ds, fs in os.walk(kept) for x in ds + fs)
    assert names == [".cache", ".cache/fontconfig", ".cache/fontconfig/x.cache-9", ".config",
                     ".config/fakeoffice", ".config/fakeoffice/registry.xcu",
                     ".config/fakeoffice/registry.xcu.link"], names  # no proj/doc.txt
    t0 = time.monotonic()
    p = run()
    warm = time.monotonic() - t0
    want_uid = m.uid if m.uid != 0 else h.NOBODY
    assert f"WARM PROFILE-one registry.xcu {want_uid}" in p.out, p.out + p.err
    assert "BASHRC False" in p.out and "SSHCONF False" in p.out, p.out
    assert "HERE ['doc.txt']" in p.out, p.out
    assert warm < 1.5, warm  # the cold start alone sleeps 1.5 s
    assert not [e for e in m.events(p) if e.get("kind") == "write_discarded"], p.out
    # --fresh-home starts from an empty home; a file named from the home
    # is shown there, and its mount point is not kept
    named = os.path.join(m.home, "named", "in.txt")
    os.makedirs(os.path.dirname(named), exist_ok=True)
    with open(named, "w") as f:
        f.write("x")
    p = m.run("run", "--json", "--fresh-home", "--cwd", proj, d, "--script",
              "scripts/convert.py", "--", "one", named, check=0)
    assert "COLD" in p.out and "WARM" not in p.out, p.out + p.err
    assert not os.path.exists(os.path.join(kept, "named")), os.listdir(kept)
    # a run shown a named file keeps nothing (the file was for that run only)
    assert not os.path.exists(os.path.join(kept, ".config", "fakeoffice", "registry.xcu"))
    p = run()  # the next plain run starts cold and is kept again
    assert "COLD" in p.out, p.out + p.err
    assert os.path.exists(os.path.join(kept, ".config", "fakeoffice", "registry.xcu"))
    # a changed skill (another content digest) starts clean too
    with open(os.path.join(d, "NOTES.md"), "w") as f:
        f.write("changed\n")
    home = kept_home(m, d)
    assert home["kept"] and not home["current"], home
    p = run()
    assert "COLD" in p.out, p.out + p.err


@test()
def a_kept_home_is_never_another_skills(m, base):
    """The same name in another folder, and a skill that looks for the kept
    homes where they are, find nothing."""
    d = scripts_skill(base, f"office2-{m.name}", {"scripts/convert.py": (PROFILE, 0o644)})
    w = work_folder(base, m)
    p = m.run("run", "--cwd", w, d, "--script", "scripts/convert.py", "--", "mine", check=0)
    assert "COLD" in p.out, p.out + p.err
    place = kept_home(m, d)["place"]
    twin = scripts_skill(os.path.join(base, "twin"), f"office2-{m.name}",
                         {"scripts/convert.py": (PROFILE, 0o644),
                          "scripts/read.py": (NAMED, 0o644)})
    os.chmod(os.path.join(base, "twin"), 0o755)
    p = m.run("run", "--cwd", w, twin, "--script", "scripts/convert.py", "--", "twin", check=0)
    assert "COLD" in p.out and "PROFILE-mine" not in p.out, p.out + p.err
    assert kept_home(m, twin)["place"] != place
    # named where it is kept: skillgate's own state folder, never shown
    p = m.run("run", "--cwd", w, twin, "--script", "scripts/read.py", "--",
              os.path.join(place, "home", ".config", "fakeoffice", "registry.xcu"))
    assert p.returncode == 126 and "skillgate's own state folder" in p.err, p.out + p.err
    assert "PROFILE-mine" not in p.out, p.out + p.err


def install_plugin(home, plugin_id, install_path, enabled):
    """What `/plugin install` leaves in ~/.claude: installed_plugins.json
    (format 2) naming the plugin's folder, and enabledPlugins."""
    plugins = os.path.join(home, ".claude", "plugins")
    os.makedirs(plugins, exist_ok=True)
    with open(os.path.join(plugins, "installed_plugins.json"), "w") as f:
        json.dump({"version": 2, "plugins": {plugin_id: [
            {"scope": "user", "installPath": install_path, "version": "1.0.0",
             "installedAt": "2026-11-01T00:00:00.000Z", "isLocal": False}]}}, f)
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump({"enabledPlugins": {plugin_id: enabled}}, f)
    for root, dirs, files in os.walk(os.path.join(home, ".claude")):
        os.chmod(root, 0o755)
        for x in files:
            os.chmod(os.path.join(root, x), 0o644)


@test()
def a_plugin_skill_runs_by_the_name_claude_code_gives_it(m, base):
    """A Claude Code plugin's skill is listed as "plugin:skill" with whether
    the plugin is enabled, and `run plugin:skill --script` runs it like a
    folder; a bare name that only a plugin has is not guessed: the message
    names the places searched and the plugin name that ends in it."""
    plugin = os.path.join(base, f"cache-{m.name}", "docs-kit", "1.0.0")
    os.makedirs(os.path.join(plugin, ".claude-plugin"))
    with open(os.path.join(plugin, ".claude-plugin", "plugin.json"), "w") as f:
        json.dump({"name": "docs-kit", "skills": ["./skills/shower"]}, f)
    scripts_skill(os.path.join(plugin, "skills"), "shower", {"scripts/show.py": (SHOW_PY, 0o644),
                                                             "scripts/show.sh": (SHOW_SH, 0o644)})
    scripts_skill(os.path.join(plugin, "skills"), "undeclared",
                  {"scripts/show.py": (SHOW_PY, 0o644)})
    for root, dirs, files in os.walk(os.path.dirname(os.path.dirname(plugin))):
        os.chmod(root, 0o755)
    install_plugin(m.home, "docs-kit@team-market", plugin, False)
    w = work_folder(base, m)
    p = m.run("list", "--json", check=0)
    found = {s["id"]: s for s in json.loads(p.out)["skills"]}
    assert "docs-kit:shower" in found and "docs-kit:undeclared" not in found, p.out + p.err
    sk = found["docs-kit:shower"]
    assert sk["source"] == "plugin" and sk["mode"] == "scripts", sk
    assert sk["plugin"] == {"id": "docs-kit@team-market", "name": "docs-kit",
                            "scope": "user", "enabled": False}, sk
    p = m.run("list", check=0)
    assert "docs-kit:shower" in p.out and "(disabled in Claude Code)" in p.out, p.out
    p = m.run("run", "--cwd", w, "docs-kit:shower", "--script", "scripts/show.py", "--", *ARGS,
              check=0)
    assert p.returncode == 0, p.out + p.err
    assert "ARGS " + json.dumps(ARGS) in p.out, p.out
    assert m.last_trace()["skill_root"] == os.path.join(plugin, "skills", "shower")
    p = m.run("run", "--cwd", w, "shower", "--script", "scripts/show.py")
    assert p.returncode == 2 and "ARGS" not in p.out, (p.returncode, p.out, p.err)
    assert "no skill of that name" in p.err and "~/.claude/plugins" in p.err, p.err
    assert "did you mean docs-kit:shower?" in p.err, p.err


ENV_PY = """\
import os
for k in ("TODO_TOKEN", "TODO_REGION", "OTHER_SECRET"):
    print("ENV", k, os.environ.get(k, "-"))
"""


CLAWHUB_MD = """\
---
name: Todo Tasks
description: Manage tasks via a token (PAT): lists, due dates.
models: [gpt-4, claude]
allowed-tools:
  - Read
  - Bash
metadata: {"clawdbot":{"primaryEnv":"TODO_TOKEN","requires":{"env":["TODO_TOKEN"]}}}
---
Run `python3 scripts/env.py`.
"""


def own_tree(m, top):
    """The folders and files below top: the user's, no one else may change them."""
    for r, _, files in os.walk(top):
        os.chmod(r, 0o755)
        for n in files:
            os.chmod(os.path.join(r, n), 0o644)
        if h.IS_ROOT:
            os.chown(r, m.uid, m.uid)
            for n in files:
                os.chown(os.path.join(r, n), m.uid, m.uid)


@test()
def a_skill_openclaw_loads_runs_by_its_folder_name(m, base):
    """Issue 52: a skill as `clawhub install` leaves it in ~/.openclaw/skills,
    shaped as 49 of ClawHub's are: an unquoted ": " in its description (no
    YAML), a name that is not its folder (the registry's slug), a
    deliberate `models:`. OpenClaw loads it; skillgate reads it the same
    way (line by line, allowed-tools from its own text, metadata as JSON),
    names it by its folder, validates it with warnings only, and runs it
    with the variable its metadata names, no other."""
    d = os.path.join(m.home, ".openclaw", "skills", "todo-tasks-pat")
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(CLAWHUB_MD)
    with open(os.path.join(d, "scripts", "env.py"), "w") as f:
        f.write(ENV_PY)
    own_tree(m, os.path.join(m.home, ".openclaw"))
    p = m.run("validate", "todo-tasks-pat", check=0)
    f = os.path.join(d, "SKILL.md")
    assert p.out.strip().endswith("todo-tasks-pat: valid, 3 warnings"), p.out + p.err
    assert f"{f}:3:44: warning: YAML syntax: mapping values" in p.err, p.err
    assert "skillgate reads it the same way" in p.err, p.err
    assert f'{f}:4:1: warning: models: unknown key, ignored; did you mean "model"?' in p.err, p.err
    p = m.run("inspect", "todo-tasks-pat", check=0)
    assert re.search(r"TODO_TOKEN\s+<- SKILL.md:8:37 metadata.clawdbot.primaryEnv", p.out), p.out
    assert "Manage tasks via a token (PAT): lists, due dates." in p.out, p.out
    env = {"TODO_TOKEN": "t1", "TODO_REGION": "eu", "OTHER_SECRET": "s2"}
    w = work_folder(base, m)
    p = m.run("run", "--cwd", w, "todo-tasks-pat", "--script", "scripts/env.py", env=env,
              check=0)
    for want in ("ENV TODO_TOKEN t1", "ENV TODO_REGION -", "ENV OTHER_SECRET -"):
        assert want in p.out, p.out + p.err
    p = m.run("inspect", "todo-tasks-pta", check=2)  # a typo of the folder: that folder's
    assert 'did you mean "Todo Tasks"?' in p.err, p.err
    # a name wins over a folder, as OpenClaw keys skills by name; the
    # person is told which was taken and how to name the other
    other = os.path.join(m.home, ".openclaw", "skills", "zz-other")
    os.makedirs(other)
    with open(os.path.join(other, "SKILL.md"), "w") as f:
        f.write("---\nname: todo-tasks-pat\ndescription: another\n---\n")
    own_tree(m, other)
    p = m.run("inspect", "todo-tasks-pat", check=0)
    assert f"Location  {other}" in p.out, p.out
    assert (f'note: "todo-tasks-pat" names the skill in {other}; another skill is kept in a '
            f'folder of that name, {d}: name it by that path') in p.err, p.err


@test()
def a_field_only_yaml_or_only_openclaw_reads_is_refused(m, base):
    """Issue 52, review of the frontmatter reading: a field hidden after a
    line break only YAML sees (U+2028), or after a quote left open on its
    line (YAML reads the next lines into the description, OpenClaw's line
    reading reads them as fields), is refused where it is: validate says
    the line and column, and run passes no variable, runs nothing."""
    meta = 'metadata: {"openclaw": {"requires": {"env": ["TODO_TOKEN"]}}}'
    cases = {
        "hidden-break": ("---\nname: hidden-break\ndescription: Formats notes.\u2028" + meta +
                         "\n---\n", "3:28: error: YAML characters: U+2028"),
        "open-quote": ("---\nname: open-quote\ndescription: 'Formats notes: fast\n" + meta +
                       "\nit reads no secrets.'\nversion: 1.0 (beta): stable\n---\n",
                       "4:1: error: metadata: follows a value that opens a quote"),
    }
    env = {"TODO_TOKEN": "t1"}
    w = work_folder(base, m)
    for name, (md, want) in cases.items():
        d = os.path.join(m.home, ".openclaw", "skills", name)
        os.makedirs(os.path.join(d, "scripts"))
        with open(os.path.join(d, "SKILL.md"), "w", encoding="utf-8") as f:
            f.write(md)
        with open(os.path.join(d, "scripts", "env.py"), "w") as f:
            f.write(ENV_PY)
        own_tree(m, os.path.join(m.home, ".openclaw"))
        p = m.run("validate", name, check=None)
        assert p.returncode != 0, p.out + p.err
        assert f"{d}/SKILL.md:{want}" in p.err, p.err
        p = m.run("run", "--cwd", w, name, "--script", "scripts/env.py", env=env, check=None)
        assert p.returncode != 0 and "ENV TODO_TOKEN" not in p.out, p.out + p.err


@test()
def a_name_the_working_folder_and_the_person_both_answer_is_refused(m, base):
    """Issue 52, review: a .claude/skills skill in the working folder and
    one of the person's own (~/.claude/skills) named alike: `run NAME`
    refuses the name, naming both paths, and runs neither; by its path
    each still runs."""
    w = work_folder(base, m)
    mine = scripts_skill(os.path.join(m.home, ".claude", "skills"), "notes-amb",
                         {"scripts/env.py": (ENV_PY, 0o644)})
    theirs = scripts_skill(os.path.join(w, ".claude", "skills"), "notes-amb",
                           {"scripts/env.py": (ENV_PY, 0o644)})
    own_tree(m, os.path.join(m.home, ".claude"))
    own_tree(m, os.path.join(w, ".claude"))
    p = m.run("run", "--cwd", w, "notes-amb", "--script", "scripts/env.py", check=None)
    assert p.returncode != 0 and "ENV TODO_TOKEN" not in p.out, p.out + p.err
    assert (f'"notes-amb" names two skills, {mine} (' in p.err and f"{theirs} (" in p.err
            and "name the one you mean by its path" in p.err), p.err
    p = m.run("run", "--cwd", w, mine, "--script", "scripts/env.py", check=0)
    assert "ENV TODO_TOKEN -" in p.out, p.out + p.err


@test()
def an_openclaw_skill_runs_with_the_variables_it_declares(m, base):
    """A ClawHub skill (metadata.openclaw) in the working folder's skills/
    is found by name, validates (by OpenClaw's rules: no refusal, no word
    about its metadata being a mapping), and runs with
    exactly the variables its requires.env, primaryEnv and envVars name;
    its install step is shown and never run."""
    w = work_folder(base, m)
    root = os.path.join(os.path.dirname(w), "skills")
    d = scripts_skill(root, "todo-cli", {"scripts/env.py": (ENV_PY, 0o644)})
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write("---\nname: todo-cli\ndescription: todo lists\nmetadata:\n  openclaw:\n"
                "    requires:\n      env: [TODO_TOKEN]\n      bins: [python3]\n"
                "    envVars:\n      - {name: TODO_REGION, required: false}\n"
                "    install:\n      - {kind: node, package: todo-cli-evil, bins: [todo]}\n"
                "---\nRun `python scripts/env.py`.\n")
    for r, _, _ in os.walk(root):
        os.chmod(r, 0o755)
    p = m.run("validate", d, check=0)
    assert p.out.strip().endswith(": valid") and "metadata" not in p.err, p.out + p.err
    p = m.run("inspect", d, check=0)
    assert "node: todo-cli-evil (gives todo)  (shown only: never run)" in p.out, p.out
    assert re.search(r"needs programs\s+python3 -> /usr/bin/python3", p.out), p.out
    env = {"TODO_TOKEN": "t1", "TODO_REGION": "eu", "OTHER_SECRET": "s2"}
    p = m.run("run", "--cwd", os.path.dirname(w), "todo-cli", "--script", "scripts/env.py",
              env=env, check=0)
    assert p.returncode == 0, p.out + p.err
    for want in ("ENV TODO_TOKEN t1", "ENV TODO_REGION eu", "ENV OTHER_SECRET -"):
        assert want in p.out, p.out
    assert not os.path.exists(os.path.join(m.home, ".npm")), "an install step ran"


VENV_PY = """\
import os, sys
import venvmod
print("MOD", venvmod.MSG)
print("PREFIX", sys.prefix)
print("VENV", os.environ.get("VIRTUAL_ENV"))
try:
    with open(venvmod.__file__, "a") as f:
        f.write("# changed by the skill")
    print("CHANGED the environment")
except OSError as e:
    print("KEPT", e.errno)
"""


@test()
def a_virtual_environment_is_used_read_only(m, base):
    """An active virtual environment (VIRTUAL_ENV), or --python with its
    folder or its program, is what a script's python3 is: its packages
    import, it is shown read-only at its own path (inside the home too),
    and the dry run and the trace say which Python was used; a --python
    that is not a Python is refused with 126."""
    import subprocess
    venv = os.path.join(m.home, "venvs", "tools é")
    r = subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv],
                       capture_output=True)
    if r.returncode != 0:
        raise h.Skip("python3 -m venv: " + r.stderr.decode()[-200:] +
                     " (scripts/dev setup installs python3-venv)")
    site = subprocess.run([os.path.join(venv, "bin", "python3"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    mod = os.path.join(site, "venvmod.py")
    with open(mod, "w") as f:
        f.write('MSG = "from the environment"\n')
    for root, dirs, files in os.walk(os.path.join(m.home, "venvs")):
        if h.IS_ROOT:
            os.chown(root, m.uid, m.uid)
            for x in files + dirs:
                os.lchown(os.path.join(root, x), m.uid, m.uid)
    d = scripts_skill(base, f"venv-{m.name}", {"scripts/use.py": (VENV_PY, 0o644),
                                              "scripts/other.py": (LEAVER, 0o644)})
    w = work_folder(base, m)
    for how, extra, env in (("VIRTUAL_ENV", [], {"VIRTUAL_ENV": venv}),
                            ("--python", ["--python", venv], None),
                            ("--python", ["--python", os.path.join(venv, "bin", "python")],
                             None)):
        p = m.run("run", "--prompt", "deny", "--cwd", w, *extra, d, "--script",
                  "scripts/use.py", env=env, check=0)
        assert p.returncode == 0, (how, p.out, p.err)
        assert "MOD from the environment" in p.out, (how, p.out, p.err)
        assert f"PREFIX {venv}" in p.out and f"VENV {venv}" in p.out, (how, p.out)
        assert "KEPT" in p.out and "CHANGED" not in p.out, (how, p.out)
        py = m.last_trace()["invocation"]["python"]
        assert py["environment"] == venv and py["from"] == how, py
        assert py["program"].startswith(venv + "/bin/python"), py
    assert open(mod).read() == 'MSG = "from the environment"\n'
    p = m.run("run", "--dry-run", "--cwd", w, d, "--script", "scripts/use.py",
              env={"VIRTUAL_ENV": venv}, check=0)
    assert f"python {venv}/bin/python3 (the environment {venv}, read-only" in p.out, p.out
    assert f"ro     {venv}  [the Python environment, read-only]" in p.out, p.out
    # without one, the system's python3 runs and the module is not there
    p = m.run("run", "--cwd", w, d, "--script", "scripts/use.py", check=None)
    assert p.returncode != 0 and "No module named 'venvmod'" in p.err, (p.out, p.err)
    for bad, why in ((os.path.join(base, "none"), "does not exist"),
                     (w, "has no bin/python3"), (mod, "is not a program")):
        p = m.run("run", "--cwd", w, "--python", bad, d, "--script", "scripts/other.py")
        assert p.returncode == 126 and "RAN" not in p.out, (bad, p.returncode, p.out, p.err)
        assert why in p.err, (bad, p.err)


@test()
def the_pdf_forms_example_fills_a_copy_you_approve(m, base):
    """The example shaped like Anthropic's pdf skill, as the manual's tour
    runs it: inspect a PDF in your folder, write a filled copy under a rule
    that allows that folder (pypdf, from Debian, as real scripts import it),
    and the copy reads back with its new title; under --prompt deny the
    copy is refused and never lands."""
    import shutil
    import subprocess
    if subprocess.run(["/usr/bin/python3", "-c", "import pypdf"],
                      capture_output=True).returncode != 0:
        raise h.Skip("python3-pypdf (scripts/dev setup installs it)")
    skill = os.path.join(h.EXAMPLES, "pdf-forms")
    w = work_folder(base, m, "papers")
    shutil.copy(os.path.join(skill, "samples", "hello.pdf"), os.path.join(w, "hello.pdf"))
    with open(os.path.join(w, "values.json"), "w") as f:
        json.dump({"title": "Filled by skillgate é"}, f)
    for x in ("hello.pdf", "values.json"):
        os.chmod(os.path.join(w, x), 0o644)
    p = m.run("run", "--cwd", w, skill, "--script", "scripts/inspect_pdf.py", "--", "hello.pdf",
              check=0)
    assert "pages: 2" in p.out and "title: A sample for pdf-text" in p.out, p.out + p.err
    out = os.path.join(w, "filled copy.pdf")
    p = m.run("run", "--prompt", "deny", "--cwd", w, skill, "--script", "scripts/fill_copy.py",
              "--", "hello.pdf", "values.json", "filled copy.pdf")
    assert p.returncode != 0 and not os.path.exists(out), (p.returncode, p.out, p.err)
    pol = os.path.join(base, f"papers-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write(f'allow:\n  - "Write({w}/**)"\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, "--cwd", w, skill, "--script", "scripts/fill_copy.py",
              "--", "hello.pdf", "values.json", "filled copy.pdf", check=0)
    assert "wrote filled copy.pdf" in p.out, p.out + p.err
    p = m.run("run", "--cwd", w, skill, "--script", "scripts/inspect_pdf.py", "--",
              "filled copy.pdf", check=0)
    assert "title: Filled by skillgate é" in p.out, p.out + p.err



# ------------------------------------------------ issue 36: run options and refusals

# Shaped like Anthropic's pdf skill (name, description, license; no
# allowed-tools; scripts run from the person's folder); its check script
# asks poppler's pdfinfo, twice, as scripts/check_fillable_fields.py does
# for each file, and says "Is poppler installed?" when that fails.
PDFINFO = shutil.which("pdfinfo") or shutil.which("gzip")  # poppler, else a program every
PDF_CHECK = f"""\
import subprocess, sys
for f in sys.argv[1:]:
    try:
        r = subprocess.run([{os.path.basename(PDFINFO)!r}, f], capture_output=True)
        print("RAN", r.returncode)
    except OSError as e:
        print("Is poppler installed?", type(e).__name__)
"""


def pdf_skill(base, name, tools=None):
    d = scripts_skill(base, name, {"scripts/check_fields.py": (PDF_CHECK, 0o644)})
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: Comprehensive PDF manipulation toolkit. Use "
                f"when filling PDF forms.\nlicense: Proprietary. LICENSE.txt has complete "
                f"terms\n" + (f"allowed-tools: {tools}\n" if tools else "") +
                "---\n# PDF\nRun `python scripts/check_fields.py <file.pdf>`.\n")
    return d


@test()
def every_refusal_is_named_at_the_end_with_the_way_to_allow_it(m, base):
    """Under --prompt deny nobody sees a prompt, and the script only says "Is
    poppler installed?". The end of the run names the refused program once
    (two refusals, one line with a count), why, and the rule that allows it;
    the rule given back in a --policy file does allow it; --json ends with
    the same list, and so does the trace. With allowed-tools that leave Bash
    out, the way is the manifest's line instead."""
    prog = os.path.realpath(PDFINFO)
    name = os.path.basename(prog)
    d = pdf_skill(base, f"pdf-{m.name}")
    w = work_folder(base, m)
    p = m.run("run", "--prompt", "deny", "--cwd", w, d, "--script", "scripts/check_fields.py",
              "--", "a.pdf", "b.pdf", check=0)
    assert p.out.count("Is poppler installed?") == 2, p.out + p.err
    lines = [l for l in p.err.splitlines() if l.startswith("skillgate: refused: ")]
    assert len(lines) == 1, p.err
    last = p.err.splitlines().index(lines[0])
    assert "completed (exit 0)" in p.err.splitlines()[last - 1], p.err  # after the usual line
    assert f"refused: exec {prog}, " in lines[0] and " times " in lines[0], lines
    rule = f"Bash({name}:*)"
    assert f"allow with: --policy FILE with {rule} under allow:" in lines[0], lines
    assert "skillgate tui --attach" in lines[0], lines
    t = m.last_trace()
    assert [(r["tool"], r["subject"], r["rule"]) for r in t["refusals"]] == [
        ("Bash", prog, rule)] and t["refusals"][0]["count"] >= 2, t["refusals"]
    p = m.run("run", "--json", "--prompt", "deny", "--cwd", w, d, "--script",
              "scripts/check_fields.py", "--", "a.pdf", check=0)
    last = m.events(p)[-1]
    assert last["kind"] == "refusals" and last["data"]["refusals"][0]["rule"] == rule, last
    pol = os.path.join(base, f"pdf-policy-{m.name}.yaml")
    with open(pol, "w") as f:
        f.write(f'allow:\n  - "{rule}"\n')
    os.chmod(pol, 0o644)
    p = m.run("run", "--policy", pol, "--cwd", w, d, "--script", "scripts/check_fields.py",
              "--", "a.pdf", check=0)
    assert "RAN " in p.out and "Is poppler installed?" not in p.out, p.out + p.err
    assert "refused:" not in p.err, p.err
    assert m.last_trace()["refusals"] == [], m.last_trace()["refusals"]
    d = pdf_skill(base, f"pdf-tools-{m.name}", tools="Read Write")
    p = m.run("run", "--policy", pol, "--cwd", w, d, "--script", "scripts/check_fields.py",
              "--", "a.pdf", check=0)
    assert f"refused: exec {prog} (Bash is not in allowed-tools) — allow with: {rule} in " \
           "SKILL.md's allowed-tools" in p.err, p.err


# skill-creator's scripts import their package: `python -m
# scripts.package_skill` from the skill's folder, or ModuleNotFoundError.
PACKAGE_PY = """\
import os, sys
from scripts.quick_validate import VALID
print("MODULE", __name__, VALID, os.path.basename(sys.argv[0]))
print("ARGS", sys.argv[1:])
print("CWD", os.getcwd())
for n in ("SG_T_PASSED", "SG_T_KEPT_API_KEY"):
    print("ENV", n, os.environ.get(n, "-"))
if len(sys.argv) > 2:
    try:
        with open(os.path.join(sys.argv[2], "my-skill.skill"), "w") as f:
            f.write("zip")
        print("PACKAGED")
    except OSError as e:
        print("REFUSED", e.errno)
"""


def creator_skill(base, name):
    d = scripts_skill(base, name, {"scripts/__init__.py": ("", 0o644),
                                   "scripts/quick_validate.py": ("VALID = 'valid'\n", 0o644),
                                   "scripts/package_skill.py": (PACKAGE_PY, 0o644)})
    return d


@test()
def a_module_runs_as_python_m_from_the_skills_folder(m, base):
    """--module (-m) runs `python -m M` with the skill's folder first on
    sys.path, so the package's own imports work, the arguments as typed and
    the working folder the person's; --script cannot (ModuleNotFoundError).
    A name that is no module, or --module with --script, is refused."""
    d = creator_skill(base, f"creator-{m.name}")
    w = work_folder(base, m)
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--", "my-skill", check=0)
    assert p.returncode == 0, p.out + p.err
    assert "MODULE __main__ valid package_skill.py" in p.out, p.out
    assert "ARGS ['my-skill']" in p.out and f"CWD {w}" in p.out, p.out
    assert m.last_trace()["run_options"]["module"] == "scripts.package_skill"
    p = m.run("run", "--cwd", w, d, "--script", "scripts/package_skill.py", check=1)
    assert "ModuleNotFoundError" in p.err, p.out + p.err
    p = m.run("run", "--dry-run", "--cwd", w, d, "--module", "scripts.package_skill", check=0)
    assert "--module scripts.package_skill: python -m" in p.out, p.out
    for bad in (["--module", "scripts/package_skill.py"], ["--module", "a..b"],
                ["--module", "x", "--script", "scripts/package_skill.py"]):
        p = m.run("run", "--cwd", w, d, *bad, check=126)
        assert "--module" in p.err, p.err


@test()
def env_passes_the_one_variable_named(m, base):
    """--env NAME passes that variable of skillgate's environment and no
    other; the dry run shows where it came from (never its value), the trace
    and the audit record keep the name, a credential-looking name is said,
    and an unset name or one skillgate sets itself is refused."""
    d = creator_skill(base, f"env-{m.name}")
    w = work_folder(base, m)
    env = {"SG_T_PASSED": "value-one", "SG_T_KEPT_API_KEY": "value-two"}
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--env", "SG_T_PASSED",
              env=env, check=0)
    assert p.returncode == 0, p.out + p.err
    assert "ENV SG_T_PASSED value-one" in p.out and "ENV SG_T_KEPT_API_KEY -" in p.out, p.out
    assert m.last_trace()["run_options"]["env"] == ["SG_T_PASSED"]
    log = os.path.join(m.state, "skillgate", "audit.jsonl")
    rec = [json.loads(l) for l in open(log) if '"type":"run"' in l][-1]
    assert "env:SG_T_PASSED" in rec["permissions_granted"], rec["permissions_granted"]
    p = m.run("run", "--dry-run", "--cwd", w, d, "-m", "scripts.package_skill", "--env",
              "SG_T_KEPT_API_KEY", env=env, check=0)
    assert "SG_T_KEPT_API_KEY=<from your environment, 9 characters>  <- --env" in p.out, p.out
    assert "value-two" not in p.out and "holds a secret" in p.out, p.out
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--env",
              "SG_T_KEPT_API_KEY", env=env, check=0)
    assert "ENV SG_T_KEPT_API_KEY value-two" in p.out and "holds a secret" in p.err, p.out + p.err
    p = m.run("run", "--dry-run", "--cwd", w, d, "-m", "scripts.package_skill", "--env",
              "PYTHONPATH", env={"PYTHONPATH": "/nowhere"}, check=0)
    assert "--env PYTHONPATH: it changes what code the skill's programs load" in p.out, p.out
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--env", "SG_T_UNSET",
              check=126)
    assert "SG_T_UNSET is not set" in p.err, p.err
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--env", "PATH", check=126)
    assert "skillgate sets PATH itself" in p.err, p.err
    p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--env", "A=b", check=126)
    assert "not an environment variable name" in p.err, p.err


@test()
def write_grants_a_folder_for_one_run(m, base):
    """--write DIR makes that folder writable for this run only: the dry run
    shows `rw DIR [--write]`, the file lands there, the trace keeps the
    folder; the next run without it is refused the same write. /, the home
    and skillgate's own folders are refused, and so is a missing folder."""
    d = creator_skill(base, f"out-{m.name}")
    w = work_folder(base, m)
    out = os.path.join(w, "dist")  # in the working folder, which is read-only
    os.makedirs(out)
    os.chmod(out, 0o777)  # the skill's uid as root is nobody (issue 36, item 2: the lead's)
    link = os.path.join(base, f"dist-link-{m.name}")
    os.symlink(out, link)
    p = m.run("run", "--dry-run", "--cwd", w, d, "-m", "scripts.package_skill",
              "--write", link, check=0)
    assert re.search(r"\n  rw +" + re.escape(out) + r"  \[--write\]\n", p.out), p.out
    p = m.run("run", "--prompt", "deny", "--cwd", w, d, "-m", "scripts.package_skill",
              "--write", link, "--", "my-skill", out, check=0)
    assert "PACKAGED" in p.out, p.out + p.err
    assert open(os.path.join(out, "my-skill.skill")).read() == "zip"
    assert m.last_trace()["run_options"]["write"] == [out]
    os.unlink(os.path.join(out, "my-skill.skill"))
    p = m.run("run", "--prompt", "deny", "--cwd", w, d, "-m", "scripts.package_skill",
              "--", "my-skill", out, check=0)
    assert "REFUSED 13" in p.out and not os.listdir(out), p.out + p.err
    assert f"refused: write {out}/my-skill.skill (" in p.err, p.err
    assert f"or run --write {out}, or a person asked" in p.err, p.err
    for bad, why in (("/", "may not be /"), (m.home, "may not be your home"),
                     (m.state, "skillgate's own"), (os.path.join(out, "none"), "not a folder")):
        p = m.run("run", "--cwd", w, d, "-m", "scripts.package_skill", "--write", bad, check=126)
        assert why in p.err, (bad, p.err)

if __name__ == "__main__":
    sys.exit(h.main(TESTS))
