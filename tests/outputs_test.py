#!/usr/bin/env python3
"""Issue 36: a skill's outputs behave like files and land where people expect.

Real skills write their output with shutil.copy (copymode: a chmod),
shutil.copy2 (copystat: utime and chmod), copytree, an atomic save (a temp
file renamed over), and mkdir -p. Outside the writable paths each of those
is a Write the broker does on the host file a person (or a rule) allowed;
a change to a file this run was already let write is not asked again; a
declared write path inside the working folder stays writable; and every
refusal the sandbox causes is an event naming the call and the path.

Usage: outputs_test.py path/to/skillgate path/to/source-root
"""
import functools
import json
import os
import re
import shutil
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

# The same calls as docx's comment.py, pptx's add_slide.py and a saver that
# writes a temp file and renames it over the output.
SAVER = """
    import os, shutil, sys, tempfile, time
    src, out = sys.argv[1], sys.argv[2]
    shutil.copy(src, out)                      # copyfile + copymode (chmod)
    shutil.copy2(src, out + ".copy2")          # + copystat (utime, chmod)
    with open(out, "a") as f:                  # the same file again, appended
        f.write("comment 1\\n")
        f.flush()
        os.fsync(f.fileno())
    os.chmod(out, 0o640)
    os.chown(out, os.stat(out).st_uid, os.stat(out).st_gid)  # keeps them: nothing to do
    os.utime(out, (1_000_000_000, 1_000_000_000))
    shutil.copy(src, out + ".cut")
    os.truncate(out + ".cut", 3)
    fd, tmp = tempfile.mkstemp(dir=".", prefix=".save-")
    os.write(fd, b"atomic\\n")
    os.close(fd)
    os.replace(tmp, out + ".saved")            # rename over, twice
    fd, tmp = tempfile.mkstemp(dir=".", prefix=".save-")
    os.write(fd, b"atomic 2\\n")
    os.close(fd)
    os.replace(tmp, out + ".saved")
    os.makedirs("outdir/a/b", exist_ok=True)   # mkdir -p of an output folder
    os.makedirs("outdir/a/b", exist_ok=True)
    shutil.copytree("outdir", "tree")
    print("saved", flush=True)
    """


def work_folder(m, base, name):
    """The person's working folder with one input file, theirs."""
    w = os.path.join(base, name)
    os.makedirs(w)
    with open(os.path.join(w, "in.txt"), "w") as f:
        f.write("hello\n")
    os.utime(os.path.join(w, "in.txt"), (1_500_000_000, 1_500_000_000))
    if h.IS_ROOT:
        os.chown(w, m.uid, m.uid)
        os.chown(os.path.join(w, "in.txt"), m.uid, m.uid)
    return w


def policy_file(m, base, text):
    p = os.path.join(base, f"policy-{m.name}.yaml")
    with open(p, "w") as f:
        f.write(text)
    if h.IS_ROOT:
        os.chown(p, m.uid, m.uid)
    return p


def check_outputs(w, m):
    out = os.path.join(w, "out.txt")
    assert open(out).read() == "hello\ncomment 1\n", open(out).read()
    st = os.stat(out)
    # as root without sudo the file is root's in the skill's group, the group
    # with the owner's bits (the skill writes it through its group)
    assert stat.S_IMODE(st.st_mode) == (0o660 if m.uid == 0 else 0o640), oct(st.st_mode)
    assert int(st.st_mtime) == 1_000_000_000, st.st_mtime
    assert st.st_uid == m.uid, (st.st_uid, m.uid)  # the person's, never nobody's or root's
    c2 = os.stat(out + ".copy2")
    assert open(out + ".copy2").read() == "hello\n"
    assert open(out + ".cut").read() == "hel"
    assert int(c2.st_mtime) == 1_500_000_000, c2.st_mtime  # copystat kept the source's time
    assert open(out + ".saved").read() == "atomic 2\n"
    assert os.path.isdir(os.path.join(w, "tree", "a", "b"))
    assert not [x for x in os.listdir(w) if x.startswith(".save-")], os.listdir(w)


@test()
def approved_outputs_behave_like_files(m, base):
    d = h.make_skill(base, f"saver-{m.name}", SAVER, tools="Read Write")
    w = work_folder(m, base, f"work-{m.name}")
    pol = policy_file(m, base, f"allow:\n  - Write({w}/**)\n")
    p = m.run("run", "--policy", pol, "--cwd", w, d, "--script", "main.py", "--", "in.txt",
              "out.txt", check=0)
    assert "saved" in p.out, p.err
    check_outputs(w, m)
    blocked = [e for e in m.last_trace()["events"] if e["kind"] == "fs_blocked"]
    assert not blocked, blocked


@test()
def a_file_the_person_allowed_is_asked_once(m, base):
    """One answer per output: the chmod, utime, reopen and truncate of a file
    this run was let write are not asked again; the temp file of an atomic
    save and its rename are (each a new name)."""
    script = """
        import os, shutil, sys
        shutil.copy2("in.txt", "out.txt")
        os.chmod("out.txt", 0o604)
        with open("out.txt", "a") as f:
            f.write("more\\n")
        os.truncate("out.txt", 4)
        print("done", open("out.txt").read(), flush=True)
        """
    d = h.make_skill(base, f"once-{m.name}", script, tools="Read Write")
    w = work_folder(m, base, f"work-{m.name}")
    code, out = h.run_in_pty(m, ["run", "--cwd", w, d, "--script", "main.py"],
                             [("allow once", "a\n")])
    assert code == 0 and "done hell" in out, out
    assert out.count("allow once") == 1, out
    assert stat.S_IMODE(os.stat(os.path.join(w, "out.txt")).st_mode) == (
        0o664 if m.uid == 0 else 0o604)
    decisions = [r for r in h.audit_decisions(m) if r["skill"] == f"once-{m.name}"]
    assert len(decisions) == 1 and decisions[0]["decision"] == "allow", decisions


@test()
def a_changed_file_is_asked_again(m, base):
    """What was approved is the object: the same name made anew by someone
    else in between is a new question, refused here with no one to ask."""
    script = """
        import os, time
        with open("out.txt", "w") as f:
            f.write("first\\n")
        os.replace("out.txt", "gone.txt")        # the approved file moves away
        try:
            os.chmod("gone.txt", 0o600)             # followed to its new name
            print("chmod moved ok", flush=True)
        except OSError as e:
            print("chmod moved", e.errno, flush=True)
        try:
            os.chmod("in.txt", 0o600)               # never approved
            print("chmod other ok", flush=True)
        except OSError as e:
            print("chmod other", e.errno, flush=True)
        """
    d = h.make_skill(base, f"moved-{m.name}", script, tools="Read Write")
    w = work_folder(m, base, f"work-{m.name}")
    pol = policy_file(m, base, f"allow:\n  - Write({w}/out.txt)\n  - Write({w}/gone.txt)\n")
    p = m.run("run", "--policy", pol, "--cwd", w, d, "--script", "main.py")
    assert "chmod moved ok" in p.out, (p.out, p.err)
    assert "chmod other 13" in p.out, (p.out, p.err)
    assert stat.S_IMODE(os.stat(os.path.join(w, "in.txt")).st_mode) == 0o644
    # refused by the rules (no one to ask): a decision naming the call and the file
    ev = [e for e in m.last_trace()["events"] if e["kind"] == "permission_decided"]
    assert any(e["data"].get("syscall") == "chmod" and e["data"]["subject"].endswith("/in.txt")
               and e["data"]["decision"] == "deny" for e in ev), ev


@test()
def refusals_name_the_call_and_the_path(m, base):
    """A mode, times or owner the sandbox refuses is an event, never a
    silent EROFS; setuid bits and owners are never given."""
    script = """
        import os
        for what, fn in [("chmod", lambda: os.chmod("in.txt", 0o600)),
                         ("utime", lambda: os.utime("in.txt", (1, 1))),
                         ("chown", lambda: os.chown("in.txt", os.getuid(), os.getgid())),
                         ("setuid", lambda: os.chmod("out.txt", 0o4755))]:
            try:
                fn()
                print(what, "ok", flush=True)
            except OSError as e:
                print(what, e.errno, flush=True)
        """
    d = h.make_skill(base, f"meta-{m.name}", script, tools="Read")
    w = work_folder(m, base, f"work-{m.name}")
    with open(os.path.join(w, "out.txt"), "w") as f:
        f.write("x")
    p = m.run("run", "--prompt", "deny", "--cwd", w, d, "--script", "main.py")
    for what in ("chmod", "utime", "chown", "setuid"):
        assert re.search(rf"^{what} (1|13)$", p.out, re.M), (what, p.out, p.err)
    assert stat.S_IMODE(os.stat(os.path.join(w, "in.txt")).st_mode) == 0o644
    assert int(os.stat(os.path.join(w, "in.txt")).st_mtime) == 1_500_000_000
    ev = [e["data"] for e in m.last_trace()["events"] if e["kind"] == "fs_blocked"]
    calls = {(e.get("syscall"), os.path.basename(e.get("path", ""))) for e in ev}
    assert ("chmod", "in.txt") in calls and ("utimensat", "in.txt") in calls, calls
    assert any(c[0] in ("chown", "fchownat") for c in calls), calls
    assert any(e.get("syscall") == "chmod" and e.get("mode") == 0o4755 for e in ev), ev


@test()
def a_declared_write_path_in_the_working_folder_stays_writable(m, base):
    w = work_folder(m, base, f"work-{m.name}")
    outdir = os.path.join(w, "pdf")
    os.makedirs(outdir)
    if h.IS_ROOT:
        os.chown(outdir, m.uid, m.uid)
    script = """
        with open(%r + "/filled.txt", "w") as f:
            f.write("filled\\n")
        print("filled", flush=True)
        """ % outdir
    extra = f"permissions:\n  filesystem:\n    write: [{outdir}]\n"
    d = h.make_skill(base, f"pdfout-{m.name}", script, yaml_extra=extra)
    p = m.run("run", "--dry-run", "--cwd", w, d, "--script", "main.py")
    rw = [l for l in p.out.splitlines() if outdir in l]
    assert rw and all("ro " not in l.split(outdir)[0] for l in rw if "[" in l), p.out
    # the working folder is shown read-only, and before the declared path
    order = [l.split()[1] for l in p.out.splitlines() if re.match(r"\s+r[ow]\s+/", l)]
    assert order.index(w) < order.index(outdir), order
    p = m.run("run", "--prompt", "deny", "--cwd", w, d, "--script", "main.py", check=0)
    assert "filled" in p.out
    assert open(os.path.join(outdir, "filled.txt")).read() == "filled\n"
    ev = [e for e in m.last_trace()["events"] if e["kind"] in ("fs_blocked", "permission_asked")]
    assert not ev, ev


@test()
def no_question_a_person_cannot_answer(m, base):
    """/dev/tty (a skill has no terminal) and the sandbox's own /var and
    /run (fontconfig's cache) are never asked: no answer could write a host
    folder there. Only the output is asked."""
    script = """
        import errno, os
        for p in ["/dev/tty", "/var/cache/fontconfig/a-le64.cache-9",
                  "/var/cache/fontconfig/b-le64.cache-9", "/run/lock/x",
                  "linked/stamp.sys"]:  # a host folder that is a link (LibreOffice's cache)
            try:
                os.makedirs(os.path.dirname(p), exist_ok=True)
            except OSError:
                pass
            try:
                open(p, "w").close()
                print("wrote", p, flush=True)
            except OSError as e:
                print("refused", p, errno.errorcode[e.errno], flush=True)
        fd = os.open("out.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"x")
        os.chmod("/proc/self/fd/%d" % fd, 0o640)  # LibreOffice's way of fchmod
        os.close(fd)
        print("done", flush=True)
        """
    d = h.make_skill(base, f"quiet-{m.name}", script, tools="Read Write")
    w = work_folder(m, base, f"work-{m.name}")
    os.makedirs(os.path.join(base, f"elsewhere-{m.name}"))
    os.symlink(os.path.join(base, f"elsewhere-{m.name}"), os.path.join(w, "linked"))
    code, out = h.run_in_pty(m, ["run", "--cwd", w, d, "--script", "main.py"],
                             [("allow once", "a\n")])
    assert code == 0 and "done" in out, out
    assert out.count("allow once") == 1 and "out.txt" in out.split("allow once")[0], out
    assert "refused /dev/tty ENXIO" in out, out
    assert "refused /var/cache/fontconfig/a-le64.cache-9" in out, out
    ev = [e for e in m.last_trace()["events"] if e["kind"] == "fs_blocked"]
    assert any(e["data"].get("private") and e["data"].get("path", "").startswith("/var/cache")
               for e in ev), ev
    assert sum(1 for e in ev if e["data"].get("private")) <= 2, ev  # counted, not one each
    assert "refused linked/stamp.sys" in out, out
    assert any(e["data"].get("reason") == "a symbolic link on the way" for e in ev), ev
    assert stat.S_IMODE(os.stat(os.path.join(w, "out.txt")).st_mode) in (0o640, 0o660)
    # none of it is an alarm: nothing of anybody's was reached
    t = m.last_trace()
    assert t["violation_summary"]["max_severity"] in ("none", "low"), t["violation_summary"]


@test()
def this_folder_covers_the_rest_of_the_outputs(m, base):
    """The first output asks; f (this folder, this run) answers it and the
    rest of that folder's writes, one key, no Enter."""
    script = """
        import os, shutil, tempfile
        open("a.txt", "w").write("a")
        shutil.copy2("a.txt", "b.txt")
        os.makedirs("sub/deeper", exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir="sub")
        os.write(fd, b"c")
        os.close(fd)
        os.replace(tmp, "sub/deeper/c.txt")
        print("outputs done", flush=True)
        """
    d = h.make_skill(base, f"folder-{m.name}", script, tools="Read Write")
    w = work_folder(m, base, f"work-{m.name}")
    code, out = h.run_in_pty(m, ["run", "--cwd", w, d, "--script", "main.py"],
                             [("this folder, this run", "f")])
    assert code == 0 and "outputs done" in out, out
    assert out.count("asks to write") == 1, out
    assert open(os.path.join(w, "sub", "deeper", "c.txt")).read() == "c"
    assert os.path.exists(os.path.join(w, "b.txt"))
    mine = [r for r in h.audit_decisions(m) if r["skill"] == f"folder-{m.name}"]
    assert mine[0]["decided_by"] == "person" and mine[0]["scope"] == "run", mine[0]
    assert all(r["decision"] == "allow" for r in mine), mine


@test()
def a_folder_the_skills_uid_cannot_write_is_said_and_works_as_root(m, base):
    """As root the skill is nobody: a declared folder root owns (0755) is
    said in validate, inspect and the dry run, and a new output there is
    made as root, the person, and is root's. Run by nobody, the folder is
    refused as the kernel refuses nobody, and nothing is said."""
    out = os.path.join(base, f"rootdir-{m.name}")
    os.makedirs(out)
    os.chmod(out, 0o755)
    script = """
        try:
            open(%r + "/report.txt", "w").write("report\\n")
            print("report written", flush=True)
        except OSError as e:
            print("report refused", e.errno, flush=True)
        """ % out
    extra = f"permissions:\n  filesystem:\n    write: [{out}]\n"
    d = h.make_skill(base, f"rootout-{m.name}", script, yaml_extra=extra)
    said = "may not write %s itself (uid 0, mode 0755)" % out
    for args in (["validate", d], ["inspect", d], ["run", "--dry-run", d]):
        p = m.run(*args)
        assert (said in p.out + p.err) == (m.name == "root"), (args, p.out, p.err)
    p = m.run("run", "--prompt", "deny", d)
    if m.name == "root":
        assert "report written" in p.out, (p.out, p.err)
        st = os.stat(os.path.join(out, "report.txt"))
        assert st.st_uid == 0, st.st_uid
    else:
        assert "report refused 13" in p.out, (p.out, p.err)


NOBODY_TRIES = """
    import os, mmap
    D, D2 = %r, %r
    def t(name, fn):
        try:
            print(name, "OK", fn(), flush=True)
        except OSError as e:
            print(name, "ERR", e.errno, flush=True)
    def rd(p, fl):
        fd = os.open(p, fl)
        try:
            return os.read(fd, 100)
        finally:
            os.close(fd)
    def wr(p, data):
        fd = os.open(p, os.O_WRONLY | os.O_APPEND)
        try:
            return os.write(fd, data)
        finally:
            os.close(fd)
    def mm(p):
        fd = os.open(p, os.O_RDWR)
        m = mmap.mmap(fd, 0)
        m[0:4] = b"MMAP"
        m.flush(); m.close(); os.close(fd)
        return "mmapped"
    t("rdwr_read_secret", lambda: rd(D + "/secret.txt", os.O_RDWR))
    t("rdonly_creat_read_secret", lambda: rd(D + "/secret.txt", os.O_RDONLY | os.O_CREAT))
    t("hardlink_write_outside", lambda: wr(D + "/hl.txt", b"PWNED-BY-NOBODY\\n"))
    t("other_user_write", lambda: wr(D + "/userfile.txt", b"NOBODY\\n"))
    t("suid_mmap", lambda: mm(D + "/suidm"))
    t("hook_hardlink_write", lambda: wr(D + "/hook.sh", b"echo HOOKED\\n"))
    t("d2_0700_read", lambda: rd(D2 + "/secret.txt", os.O_RDWR))
    t("own_file_write", lambda: wr(D + "/doc.xml", b"saved\\n"))
"""


@test(modes=("root",))
def roots_declared_folder_lends_nobody_no_more_than_a_save(m, base):
    """As root the skill is nobody, and the broker opens root's files in a
    declared folder for it as root (the person's own doc.xml saved over):
    only root's plain files (one name, no setid bit), only for writing.
    Nobody cannot read root's 0600 file through O_RDWR or O_CREAT, write
    a file outside through a hard link (nor a git hook by another name),
    write another user's file, or keep a setuid bit through an mmap."""
    D, D2, out = (os.path.join(base, x) for x in ("decl", "decl700", "outside"))
    for x in (D, D2, out, os.path.join(D, ".git", "hooks")):
        os.makedirs(x, exist_ok=True)
        os.chmod(x, 0o755)
    os.chmod(D2, 0o700)
    os.chmod(out, 0o700)

    def put(p, text, mode, uid=0):
        with open(p, "w") as f:
            f.write(text)
        os.chown(p, uid, uid)
        os.chmod(p, mode)
    put(os.path.join(D, "secret.txt"), "TOPSECRET-root-0600\n", 0o600)
    put(os.path.join(out, "victim.txt"), "VICTIM\n", 0o600)
    os.link(os.path.join(out, "victim.txt"), os.path.join(D, "hl.txt"))
    put(os.path.join(D, "userfile.txt"), "USERDATA\n", 0o600, uid=1234)
    put(os.path.join(D, "suidm"), "#!/bin/sh\necho hi\n", 0o4755)
    put(os.path.join(D, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
    os.link(os.path.join(D, ".git", "hooks", "pre-commit"), os.path.join(D, "hook.sh"))
    put(os.path.join(D2, "secret.txt"), "D2-SECRET\n", 0o600)
    put(os.path.join(D, "doc.xml"), "mine\n", 0o644)
    extra = f"permissions:\n  filesystem:\n    write: [{D}, {D2}]\n"
    d = h.make_skill(base, f"nobody-{m.name}", NOBODY_TRIES % (D, D2), yaml_extra=extra)
    p = m.run("run", "--prompt", "deny", d)
    assert "TOPSECRET" not in p.out and "D2-SECRET" not in p.out, p.out
    for name in ("rdwr_read_secret", "rdonly_creat_read_secret", "hardlink_write_outside",
                 "other_user_write", "hook_hardlink_write", "d2_0700_read"):
        assert f"{name} ERR" in p.out, (name, p.out)
    assert open(os.path.join(out, "victim.txt")).read() == "VICTIM\n"
    assert open(os.path.join(D, "userfile.txt")).read() == "USERDATA\n"
    assert "HOOKED" not in open(os.path.join(D, ".git", "hooks", "pre-commit")).read()
    st = os.stat(os.path.join(D, "suidm"))
    assert "suid_mmap ERR" in p.out or not st.st_mode & 0o6000, (p.out, oct(st.st_mode))
    # the person's own plain file is still saved over, as the save needs
    assert "own_file_write OK" in p.out, p.out
    assert open(os.path.join(D, "doc.xml")).read() == "mine\nsaved\n"


@test()
def saving_over_the_persons_own_file_in_a_declared_folder(m, base):
    """issue 52 item 11: in a declared write folder, the atomic save every
    office library makes (mkstemp in out/, then os.replace onto the
    person's doc.xml), a save in place and the removal of the person's old
    file work as the person could do them: as root without sudo (the skill
    is nobody, the folder and files root's 0755/0644) and as a user. No
    temporary file stays. A folder of root's there is still not moved for
    nobody, and the refusal names why, not "outside the writable paths"."""
    out = os.path.join(base, f"saved-{m.name}")
    os.makedirs(os.path.join(out, "kept"))
    os.makedirs(os.path.join(out, "private"))
    for name, text in (("doc.xml", "<old/>\n"), ("notes.txt", "old\n"), ("old.bak", "b\n"),
                       ("private/secret.txt", "s\n")):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    for x in (out, os.path.join(out, "kept")):
        os.chmod(x, 0o755)
    os.chmod(os.path.join(out, "private"), 0o700)
    if h.IS_ROOT:
        for root, dirs, files in os.walk(out):
            for x in [root] + [os.path.join(root, f) for f in files]:
                os.chown(x, m.uid, m.uid)
    script = """
        import os, tempfile
        o = %r
        fd, tmp = tempfile.mkstemp(dir=o, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write("<new/>\\n")
        os.replace(tmp, o + "/doc.xml")
        with open(o + "/notes.txt", "w") as f:
            f.write("new\\n")
        os.remove(o + "/old.bak")
        try:
            os.rename(o + "/kept", o + "/moved")
            print("folder moved", flush=True)
        except OSError as e:
            print("folder refused", e.errno, flush=True)
        try:
            open(o + "/private/secret.txt", "w").write("changed\\n")
            print("private written", flush=True)
        except OSError as e:
            print("private refused", e.errno, flush=True)
        print("saved", flush=True)
        """ % out
    extra = f"permissions:\n  filesystem:\n    write: [{out}]\n"
    d = h.make_skill(base, f"save-{m.name}", script, yaml_extra=extra)
    p = m.run("run", "--prompt", "deny", d)
    assert p.returncode == 0 and "saved" in p.out, (p.out, p.err)
    assert open(os.path.join(out, "doc.xml")).read() == "<new/>\n"
    assert open(os.path.join(out, "notes.txt")).read() == "new\n"
    assert os.stat(os.path.join(out, "notes.txt")).st_uid == m.uid
    left = sorted(os.listdir(out))
    assert not [x for x in left if x.endswith(".tmp")] and "old.bak" not in left, left
    t = m.last_trace()
    if m.name == "root":
        assert "folder refused 13" in p.out and "kept" in left, (p.out, left)
        # root's own 0700 folder in it is no door to nobody
        assert "private refused 13" in p.out, p.out
        assert open(os.path.join(out, "private", "secret.txt")).read() == "s\n"
        r = [x for x in t["refusals"] if x["subject"].endswith("/kept")]
        assert r and "as root the skill runs as nobody" in r[0]["why"], t["refusals"]
        assert "outside the writable paths" not in r[0]["why"], r
    else:
        assert "folder moved" in p.out and "moved" in left, (p.out, left)
        assert "private written" in p.out, p.out
    assert not [x for x in t["refusals"] if not x["subject"].endswith("/kept")], t["refusals"]


@test()
def an_approval_no_folder_could_carry_is_not_offered(m, base):
    """issue 52 item 10: a write to a folder the sandbox does not show
    (/srv/...: no host folder is behind it in the sandbox's root) is never
    asked of a person, a rule or the exec: program (a yes could make
    nothing: main asked, then said "could not be done ... a private
    tmpfs"); it is refused at once, and the words say the folder is not
    shown and how to show it (or that no --write may: a file in "/"). As
    root, --write then shows it and the same write lands on the host."""
    srv = f"/srv/skillgate-unshown-{m.name}-{os.getpid()}"
    target = srv + "/out.txt"
    log = os.path.join(base, f"asked-{m.name}.jsonl")
    prog = os.path.join(base, f"allow-all-{m.name}.py")
    with open(prog, "w") as f:
        f.write(f"#!{sys.executable}\nimport json, sys\nreq = json.load(sys.stdin)\n"
                f"open({log!r}, 'a').write(json.dumps(req) + '\\n')\n"
                "print(json.dumps({'decision': 'allow', 'scope': 'once', 'reason': 'yes'}))\n")
    os.chmod(prog, 0o755)
    open(log, "w").close()
    os.chmod(log, 0o666)
    policy = os.path.join(base, f"unshown-{m.name}.yaml")
    with open(policy, "w") as f:
        f.write(f"allow:\n  - Write({target})\n")
    top = f"/skillgate-unshown-{m.name}-{os.getpid()}.txt"  # "/": no --write shows it
    script = """
        try:
            open(%r, "w").write("landed\\n")
            print("written", flush=True)
        except OSError as e:
            print("refused", e.errno, flush=True)
        try:
            open(%r, "w").write("top\\n")
        except OSError as e:
            print("top refused", e.errno, flush=True)
        """ % (target, top)
    d = h.make_skill(base, f"unshown-{m.name}", script, tools="Read Write")
    for how in (["--prompt", f"exec:{prog}"], ["--policy", policy, "--prompt", "deny"]):
        p = m.run("run", *how, d)
        assert "refused 13" in p.out, (how, p.out, p.err)
        assert f"{srv} is not shown in the sandbox" in p.err, (how, p.err)
        t = m.last_trace()
        r = [x for x in t["refusals"] if x["subject"] == target]
        assert r and r[0]["why"] == "its folder is not shown in the sandbox", t["refusals"]
        assert f"run --write {srv}" in r[0]["allow"], r
        assert not [x for x in t["decisions"] if x.get("subject") == target], t["decisions"]
        assert "top refused 13" in p.out and not os.path.exists(top), p.out
        r = [x for x in t["refusals"] if x["subject"] == top]
        assert r and r[0]["why"].endswith("and no --write may show it"), t["refusals"]
        assert r[0]["allow"].startswith("nothing may allow it"), r
    assert open(log).read() == "", "the exec: program was asked"
    assert not os.path.exists(srv)
    if not h.IS_ROOT:
        return  # only root can make a folder in /srv for the second half
    os.makedirs(srv)
    try:
        os.chown(srv, m.uid, m.uid)
        p = m.run("run", "--write", srv, "--prompt", "deny", d)
        assert "written" in p.out, (p.out, p.err)
        assert open(target).read() == "landed\n"
    finally:
        shutil.rmtree(srv)


@test()
def a_recorded_manifest_runs_with_nothing_refused(m, base):
    """issue 36 item 8: after record, a run with --prompt deny and the written
    manifest refuses nothing the recording saw, and again the next time (a
    tracker rewrites the state it keeps in the working folder)."""
    script = """
        import json, os, shutil, sys, tempfile
        shutil.copy2("in.txt", "out.txt")
        with open("out.txt", "a") as f:
            f.write("filled\\n")
        tasks = json.load(open("tasks.json")) if os.path.exists("tasks.json") else []
        tasks.append("t%d" % len(tasks))
        fd, tmp = tempfile.mkstemp(dir=".")
        os.write(fd, json.dumps(tasks).encode())
        os.close(fd)
        os.replace(tmp, "tasks.json")
        print("tasks", len(tasks), flush=True)
        """
    d = h.make_skill(base, f"rec-{m.name}", script, tools="Read Write")
    os.chmod(d, 0o777)  # record --write replaces the manifest in it
    w = work_folder(m, base, f"work-{m.name}")
    p = m.run("record", "--allow-all", "--write", "--yes", "--cwd", w, d, "--script", "main.py",
              check=0)
    assert "wrote " in p.err and os.path.exists(os.path.join(w, "tasks.json")), (p.out, p.err)
    for n in (2, 3):
        p = m.run("run", "--prompt", "deny", "--cwd", w, d, "--script", "main.py")
        assert p.returncode == 0 and f"tasks {n}" in p.out, (n, p.out, p.err)
        t = m.last_trace()
        assert t["refusals"] == [], t["refusals"]
        assert not [e for e in t["events"] if e["kind"] == "fs_blocked"], t["events"]
    assert open(os.path.join(w, "out.txt")).read() == "hello\nfilled\n"


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
