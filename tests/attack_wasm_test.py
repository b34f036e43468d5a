#!/usr/bin/env python3
"""WASM skills (issue 40): a WASI preview-1 module runs under Node.js's
node:wasi inside the same kernel sandbox as a native skill, and two layers
hold at once. Each attack comes from a real module built from C by the
build (tests/wasm/attack.c, the same one module in every test, its attack
chosen by SKILL_INPUT): a path outside the preopens, `..` and symlink
escapes of a preopen (node:wasi follows a preopen's symlinks out of it, so
there the kernel layer is what holds), writes into a read-only preopen,
memory past memory_mb (grown, and asked for up front), a module that spins
forever, terminal escapes, environment that was not allowed. Each is
refused, and the trace says by which layer. The example skill
(examples/skills/code-review-wasm) reviews its files; the dry run and
inspect show the WASM plan. Each test runs as root and as an ordinary user,
through sandbox_test.py's harness. Prints TAP.

Usage: attack_wasm_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)

BUILT = os.path.join(os.path.dirname(h.SG), "tests")
EXAMPLE = os.path.join(h.EXAMPLES, "code-review-wasm")
PLANTED = h.PLANTED


def module(name):
    """A module the build made; in CI a missing one fails the test."""
    p = os.path.join(BUILT, f"{name}.wasm")
    if not os.path.exists(p):
        raise h.Skip(f"{p} was not built: the build needs clang, lld, wasi-libc and "
                     "libclang-rt-14-dev-wasm32 (scripts/dev installs them)")
    if not shutil.which("node"):
        raise h.Skip("no node: WASM skills run under Node.js's node:wasi (package nodejs)")
    return p


def make_wasm_skill(base, name, wasm_block="", mod="attack", tools="Read", extra=None):
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "wasm"))
    shutil.copy(module(mod), os.path.join(d, "wasm", "skill.wasm"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: WASM attack test {name}\n"
                f"allowed-tools: {tools}\n{wasm_block}---\nA hostile module.\n")
    for rel, target in (extra or {}).items():
        os.symlink(target, os.path.join(d, rel))
    for root, dirs, files in os.walk(d):
        os.chmod(root, 0o755)
        for x in files:
            if not os.path.islink(os.path.join(root, x)):
                os.chmod(os.path.join(root, x), 0o644)
    return d


def attack(m, d, name, check=None, timeout=120, env=None):
    p = m.run("run", "--json", "--input", json.dumps({"attack": name}), d, timeout=timeout,
              check=check, env=env)
    evs = m.events(p)
    out = "".join(e["message"] + "\n" for e in evs if e["kind"] == "stdout")
    line = next((ln for ln in out.splitlines() if ln.startswith("result ")), None)
    res = json.loads(line[len("result "):]) if line else None
    return p, evs, out, res


def blocked(evs, layer=None):
    return [e["data"] for e in evs if e["kind"] == "fs_blocked"
            and (layer is None or e["data"].get("layer") == layer)]


WASI_ENOTCAPABLE, WASI_EROFS, WASI_EACCES, WASI_EINVAL = 76, 69, 2, 28


@test()
def the_example_reviews_its_files_under_both_layers(m, base):
    if not os.path.exists(os.path.join(EXAMPLE, "wasm", "skill.wasm")):
        module("attack")  # says why (nothing built), or fails in CI
        raise AssertionError("examples/skills/code-review-wasm/wasm/skill.wasm was not built")
    p = m.run("run", "--json", "--input", json.dumps({"files": ["sample/unsafe.c"]}), EXAMPLE,
              check=0)
    evs = m.events(p)
    out = "".join(e["message"] for e in evs if e["kind"] == "stdout")
    report = json.loads(out)
    assert report["skill"] == "code-review-wasm", report
    rules = {f["rule"] for f in report["files"][0]["findings"]}
    assert "unbounded-copy" in rules and "secret" in rules, report
    started = [e for e in evs if e["kind"] == "policy_applied" and e["data"].get("layer") == "wasi"]
    assert started and started[0]["data"]["runtime"] == "node:wasi", evs
    plan = next(e["data"] for e in evs if e["kind"] == "policy_applied" and "wasm" in e["data"])
    assert plan["wasm"]["preopens"][0] == {"guest": "/skill", "host": EXAMPLE,
                                           "mode": "read-only"}, plan["wasm"]
    assert "/usr" in plan["landlock_readable"] and "/etc" not in plan["landlock_readable"], plan
    t = m.last_trace()
    assert t["status"] == "completed" and t["exit_code"] == 0, (t["status"], t["exit_code"])
    # with no input it reviews every sample file
    p = m.run("run", "--json", EXAMPLE, check=0)
    out = "".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
    assert len(json.loads(out)["files"]) >= 2, out


@test()
def the_dry_run_and_inspect_show_the_wasm_plan(m, base):
    d = make_wasm_skill(base, "planned", "wasm:\n  filesystem:\n    write: [out]\n"
                        "  env:\n    allow: [WASM_OK]\n  memory_mb: 64\n  random_seed: 7\n"
                        "  network:\n    allow: [api.example.test]\n")
    p = m.run("run", "--dry-run", d, check=0)
    assert re.search(r"WASI layer: node:wasi of Node\.js \d+\.\d+", p.out), p.out
    for want in (f"preopen /skill -> {d}  read-only",
                 f"preopen {d}/out  read-write", "memory: 64 MB (1024 pages",
                 "random_seed 7: random_get gives SHA-256", "WASI preview 1 has no sockets",
                 "2. kernel layer", "readable (nothing else, besides the writable): /usr",
                 "--wasm-max-mem-pages=1024", "<skillgate's WASI runner"):
        assert want in p.out, f"{want!r} not in the dry run:\n{p.out}"
    assert "SKILL_INPUT TIMEOUT_MS" in p.out, p.out
    v = m.run("validate", d)
    assert "WASI preview 1 has no sockets" in v.out + v.err, v.out + v.err
    i = m.run("inspect", d, check=0)
    assert "a WASM module, wasm/skill.wasm" in i.out and "WASI layer: node:wasi" in i.out, i.out


@test()
def paths_outside_the_preopens_are_refused_by_the_wasi_layer(m, base):
    d = make_wasm_skill(base, "outside")
    p, evs, out, res = attack(m, d, "outside", check=0)
    assert res and res["dotdot"] == WASI_ENOTCAPABLE and res["absolute"] == WASI_ENOTCAPABLE, out
    assert res["libc"] != 0 and "leaked" not in res, res
    ws = blocked(evs, "wasi")
    assert any(b["path"].endswith("/etc/hostname") and b["why"].startswith(("outside the preopened folders", "an absolute path"))
               for b in ws), evs
    t = m.last_trace()
    assert any(e["kind"] == "fs_blocked" and e["data"]["layer"] == "wasi" for e in t["events"])


@test()
def symlink_escapes_of_a_preopen_are_refused(m, base):
    # node:wasi follows these out of the preopen to the host's /etc (in the
    # sandbox's view, read-only, for native skills): bare node read
    # /etc/hostname through them. The runner resolves each path as the
    # kernel will and refuses it first (WASI layer); Landlock, which keeps a
    # WASM run's reads to the runtime's files and the preopens, stands
    # behind it (the first version of the runner left it to Landlock, which
    # refused it: EACCES, layer kernel)
    with open("/etc/hostname") as f:
        host = f.read().strip()
    d = make_wasm_skill(base, "links", extra={"escape": "/etc",
                                              "rel": "../" * 16 + "etc"})
    for name in ("symlink", "symlink_rel"):
        p, evs, out, res = attack(m, d, name, check=0)
        assert res and res["errno"] == WASI_ENOTCAPABLE, (name, out)
        assert not res.get("data") and (not host or host not in out), (name, out)
        ws = blocked(evs, "wasi")
        assert any(b["path"].endswith("/hostname") and "symlink" in b["why"] for b in ws), \
            (name, evs)


@test()
def every_way_past_the_symlink_check_is_refused(m, base):
    # the second review's: a final link opened without FOLLOW, a NUL, bytes
    # that are not UTF-8, a path over 4 KiB (each read /usr/lib/os-release,
    # which Landlock lets the runtime read), stat and readlink through a link
    d = make_wasm_skill(base, "esc", extra={"u": "/usr/lib/os-release", "ud": "/usr/lib"})
    os.symlink("/usr/lib", os.path.join(d.encode(), b"\xff"))
    p, evs, out, res = attack(m, d, "esc", check=0)
    want = {"nofollow": WASI_ENOTCAPABLE, "follow": WASI_ENOTCAPABLE, "nul": WASI_EINVAL,
            "utf8": WASI_EINVAL, "long": WASI_EINVAL, "stat": WASI_ENOTCAPABLE,
            "readlink": WASI_ENOTCAPABLE}
    assert res == want, out
    assert "PRETTY_NAME" not in out
    whys = [b["why"] for b in blocked(evs, "wasi")]
    assert len(whys) >= 7 and any("NUL" in w for w in whys) and \
        any("not UTF-8" in w for w in whys) and any("over 4096" in w for w in whys), whys


@test()
def a_link_moved_under_an_open_folder_is_refused(m, base):
    # the third review's: uvwasi reopens a folder by its path (fd_readdir,
    # calls through its descriptor); a link to /usr/lib moved into that
    # path after the open led out, and the module could make such links
    # itself (s -> ".", then "s/s/../../usr/lib", which node's JavaScript
    # realpath misread)
    d = make_wasm_skill(base, "swap", "wasm:\n  filesystem:\n    write: [out]\n")
    out_dir = os.path.join(d, "out")
    os.makedirs(out_dir)
    os.symlink("/usr/lib", os.path.join(out_dir, "esc"))  # the person's, in the write path
    if h.IS_ROOT:
        os.chown(out_dir, m.uid, m.uid)
        os.lchown(os.path.join(out_dir, "esc"), m.uid, m.uid)
    p, evs, out, res = attack(m, d, "swap", check=0)
    assert res and res["mkdir"] == 0 and res["open"] == 0, out
    assert res["symlink"] == 63, out  # EPERM: a module makes no symlink
    calls = {b["syscall"] for b in blocked(evs, "wasi")}
    if res["rename"] == 0:  # moved: the WASI layer refuses what the path leads to now
        assert res["readdir"] == WASI_ENOTCAPABLE and res["through"] == WASI_ENOTCAPABLE, out
        assert {"fd_readdir", "path_open", "path_symlink"} <= calls, calls
    else:  # as root the broker, which does the skill's renames there, refused the move
        assert res["rename"] == WASI_EACCES, out
        assert any(b["syscall"] == "path_rename" for b in blocked(evs, "kernel")), blocked(evs)
        assert "path_symlink" in calls, calls


@test()
def links_the_skill_ships_are_read_as_the_kernel_reads_them(m, base):
    # the fourth review's: uvwasi followed a final link itself, reading an
    # absolute target in the guest's names (/skill/...) and a relative one
    # as text, while the checks read them as the kernel does; the module
    # read /usr/lib/os-release and listed /usr/lib with no event
    d = make_wasm_skill(base, "shipped", extra={"esc": "/usr/lib",
                                                "abs": "/skill/esc/os-release",
                                                "a": "sub/deep", "y": "a/../q",
                                                "L": "a/../y/"})
    os.makedirs(os.path.join(d, "sub", "deep"))
    os.makedirs(os.path.join(d, "q"))
    os.symlink("/usr/lib", os.path.join(d, "sub", "q"))
    for r, ds, fs in os.walk(d):
        os.chmod(r, 0o755)
    p, evs, out, res = attack(m, d, "shipped", check=0)
    assert res and res["abs"] != 0 and res["abs_read"] == -1, out
    assert res["dir"] != 0 and res["stat"] != 0, out
    assert "PRETTY_NAME" not in out
    assert len(blocked(evs, "wasi")) >= 3, blocked(evs)


@test()
def a_folders_name_prefix_is_no_way_out(m, base):
    # the fifth review's: from a folder d, "../dX/os-release" passed uvwasi's
    # text-prefix check and opened d/X/os-release (X -> /usr/lib); a trailing
    # slash made the kernel follow a link a stat said not to; and a stat
    # through a link that stays inside still works
    d = make_wasm_skill(base, "prefix", extra={"ul": "/usr/lib", "alias": "SKILL.md"})
    os.makedirs(os.path.join(d, "d"))
    os.symlink("/usr/lib", os.path.join(d, "d", "X"))
    os.chmod(os.path.join(d, "d"), 0o755)
    p, evs, out, res = attack(m, d, "prefix", check=0)
    assert res and res["d"] == 0 and res["prefix"] == WASI_ENOTCAPABLE, out
    assert res["slash"] == WASI_ENOTCAPABLE, out
    assert res["alias"] == 0 and res["alias_type"] == 4, out  # a regular file
    whys = [b["why"] for b in blocked(evs, "wasi")]
    assert any("climbs out of its descriptor" in w for w in whys), whys


@test(modes=("root",))
def a_preopens_own_folder_is_no_entry_to_change(m, base):
    # the sixth review's: rmdir(out, ".") acts on the entry "out" in the
    # skill's (read-only) folder, outside the out preopen; the kernel
    # refused it, the WASI layer now does
    d = make_wasm_skill(base, "entry", "wasm:\n  filesystem:\n    write: [out]\n")
    out_dir = os.path.join(d, "out")
    os.makedirs(out_dir)
    os.chown(out_dir, m.uid, m.uid)
    p, evs, out, res = attack(m, d, "rmdir_self", check=0)
    assert res and res["dot"] == WASI_ENOTCAPABLE and res["dotdot"] == WASI_ENOTCAPABLE, out
    assert os.path.isdir(out_dir)
    assert len([b for b in blocked(evs, "wasi") if b["syscall"] == "path_remove_directory"]) == 2


@test()
def memory_outside_linear_memory_meets_the_kernel_layer(m, base):
    # 20 tables of 10 million entries: 1.6 GB V8's page cap does not count;
    # the cgroup (root) or the broker's watch of resident memory (a user
    # without one; RLIMIT_AS before issue 52) holds it
    d = make_wasm_skill(base, "tables", "wasm:\n  memory_mb: 16\n", mod="tables")
    p = m.run("run", "--json", d, timeout=120)
    evs = m.events(p)
    out = "".join(e["message"] for e in evs if e["kind"] == "stdout")
    assert p.returncode != 0 and "grown" not in out, (p.returncode, out)
    plan = next(e["data"] for e in evs if e["kind"] == "policy_applied" and "limits" in e["data"])
    if plan["limits"]["memory"]["mechanism"].startswith("cgroup"):
        lim = [e["data"] for e in evs if e["kind"] == "resource_limit_hit"]
        assert any(x.get("limit") == "memory" and x["layer"] == "kernel" for x in lim), lim
    else:  # the broker saw it past the limit and stopped the run
        lim = [e["data"] for e in evs if e["kind"] == "resource_limit_hit"]
        assert any(x.get("limit") == "memory" and x["layer"] == "broker" for x in lim), lim
        failed = [e["data"] for e in evs if e["kind"] == "skill_failed"]
        assert failed and failed[0].get("reason") == "memory", failed


@test()
def a_read_only_preopen_takes_no_write(m, base):
    d = make_wasm_skill(base, "rowrite")
    before = sorted(os.listdir(d))
    with open(os.path.join(d, "SKILL.md")) as f:
        md = f.read()
    p, evs, out, res = attack(m, d, "write_ro", check=0)
    assert res and all(res[k] == WASI_EROFS for k in ("create", "mkdir", "unlink", "trunc")), out
    ws = blocked(evs, "wasi")
    assert len([b for b in ws if b["why"].startswith("a read-only preopen")]) >= 4, ws
    assert sorted(os.listdir(d)) == before
    with open(os.path.join(d, "SKILL.md")) as f:
        assert f.read() == md


@test()
def a_writable_preopen_is_written(m, base):
    d = make_wasm_skill(base, "rwwrite", "wasm:\n  filesystem:\n    write: [out]\n")
    out_dir = os.path.join(d, "out")  # the user's own folder, as it would be
    os.makedirs(out_dir)
    if h.IS_ROOT:
        os.chown(out_dir, m.uid, m.uid)
    p, evs, out, res = attack(m, d, "write_rw", check=0)
    assert res and res["errno"] == 0 and res["wrote"] == 5, out
    with open(os.path.join(d, "out", "made.txt")) as f:
        assert f.read() == "made\n"


@test()
def a_module_opens_what_its_manifest_names_as_written(m, base):
    """issue 52 item 9: with `read: [data]` and `write: [out]`, a module's
    fopen("data/in.txt") finds the skill's data/in.txt (a "." preopen, as
    `wasmtime --dir .` gives), as "./data/in.txt" and "/skill/data/in.txt"
    do; out/ is written by its relative name and below /skill; the skill's
    folder and data/ stay read-only by any name, and "../" stays out."""
    d = make_wasm_skill(base, "relnames", "wasm:\n  filesystem:\n    read: [data]\n"
                        "    write: [out]\n")
    os.makedirs(os.path.join(d, "data"))
    os.makedirs(os.path.join(d, "out"))
    with open(os.path.join(d, "data", "in.txt"), "w") as f:
        f.write("first line\n")
    with open(os.path.join(base, "outside.txt"), "w") as f:
        f.write("not the module's\n")
    os.chmod(os.path.join(d, "data"), 0o755)
    os.chmod(os.path.join(d, "data", "in.txt"), 0o644)
    if h.IS_ROOT:
        os.chown(os.path.join(d, "out"), m.uid, m.uid)
    with open(os.path.join(d, "SKILL.md")) as f:
        md = f.read()
    p, evs, out, res = attack(m, d, "relative", check=0)
    assert res and res["rel"] == 0 and res["text"] == "first line", out
    assert res["abs"] == 0 and res["dot"] == 0, res
    assert res["wrel"] == 0 and res["wskill"] == 0, res
    with open(os.path.join(d, "out", "rel.txt")) as f:
        assert f.read() == "rel\n"
    with open(os.path.join(d, "out", "skill.txt")) as f:
        assert f.read() == "skill\n"
    assert res["ro"] != 0 and res["rodata"] != 0 and res["up"] != 0, res
    with open(os.path.join(d, "SKILL.md")) as f:
        assert f.read() == md
    with open(os.path.join(d, "data", "in.txt")) as f:
        assert f.read() == "first line\n"
    ro = [b for b in blocked(evs, "wasi") if b["why"].startswith("a read-only preopen")]
    assert len(ro) >= 2, blocked(evs)
    p = m.run("run", "--dry-run", d, check=0)
    for want in (f"preopen . -> {d}  read-only", f"preopen ./data -> {d}/data  read-only",
                 f"preopen /skill/out -> {d}/out  read-write"):
        assert want in p.out, f"{want!r} not in the dry run:\n{p.out}"


@test()
def memory_past_memory_mb_is_held_by_the_wasi_layer(m, base):
    d = make_wasm_skill(base, "hog", "wasm:\n  memory_mb: 64\n")
    p, evs, out, res = attack(m, d, "memory", check=0)
    assert res and 32 <= res["mb"] < 64, out
    lim = [e["data"] for e in evs if e["kind"] == "resource_limit_hit"]
    assert any(x.get("limit") == "memory" and x["layer"] == "wasi" for x in lim), lim
    # a module that asks for 1 GiB up front is not instantiated at all
    d2 = make_wasm_skill(base, "bighog", "wasm:\n  memory_mb: 64\n", mod="bigmem")
    p = m.run("run", "--json", d2)
    assert p.returncode != 0, p.out
    lim = [e["data"] for e in m.events(p) if e["kind"] == "resource_limit_hit"]
    assert any(x.get("limit") == "memory" and x["layer"] == "wasi" for x in lim), p.out[-2000:]
    assert "more memory than memory_mb grants" in p.out, p.out[-2000:]


@test()
def a_spinning_module_is_stopped_by_the_brokers_timer(m, base):
    d = make_wasm_skill(base, "spinner", "wasm:\n  timeout_ms: 2000\n")
    p, evs, out, res = attack(m, d, "spin", timeout=60)
    assert p.returncode == 124, (p.returncode, p.err)
    lim = [e["data"] for e in evs if e["kind"] == "resource_limit_hit"]
    assert any(x.get("limit") == "timeout" and x.get("layer") == "broker" for x in lim), lim
    assert m.last_trace()["status"] == "timeout"


@test()
def terminal_escapes_from_a_module_are_cleaned(m, base):
    d = make_wasm_skill(base, "escapes")
    # as a person watches it (--watch, or a terminal): cleaned lines
    p = m.run("run", "--watch", "--input", json.dumps({"attack": "escapes"}), d, check=0)
    assert "visible-marker" in p.out, p.out
    assert "\x1b" not in p.out and "\x07" not in p.out, repr(p.out)
    t = m.last_trace()
    esc = [e["data"] for e in t["events"] if e["kind"] == "output_escapes"]
    assert esc and all(x["layer"] == "broker" for x in esc), esc


@test()
def the_module_sees_only_the_allowed_environment(m, base):
    d = make_wasm_skill(base, "envdump", "wasm:\n  env:\n    allow: [WASM_OK]\n")
    p, evs, out, res = attack(m, d, "env", check=0,
                              env={"WASM_OK": "fine", "SG_LEAK": PLANTED, "NODE_OPTIONS":
                                   "--require=/nonexistent-planted.js"})
    names = {e.split("=", 1)[0] for e in res["env"]}
    assert names == {"WASM_OK", "SKILL_ID", "SKILL_NAME", "SKILL_INPUT", "TIMEOUT_MS"}, names
    assert "WASM_OK=fine" in res["env"] and PLANTED not in out, res
    h.assert_no_planted(p.out, p.err)


@test()
def a_random_seed_makes_random_repeatable(m, base):
    d = make_wasm_skill(base, "seeded", "wasm:\n  random_seed: 7\n")
    a = attack(m, d, "random", check=0)[3]["random"]
    b = attack(m, d, "random", check=0)[3]["random"]
    assert a == b and len(a) == 32, (a, b)
    d2 = make_wasm_skill(base, "unseeded")
    c = attack(m, d2, "random", check=0)[3]["random"]
    e = attack(m, d2, "random", check=0)[3]["random"]
    assert c != e and c != a, (c, e)


# ---- the fresh-view review's attacks (each failed on the first version)


@test()
def the_report_channel_is_out_of_the_modules_reach(m, base):
    # through a shipped p -> /proc, fd 3 opened for reading would let the
    # module take its own refusals out of the record (it did, as a user)
    d = make_wasm_skill(base, "steal", extra={"p": "/proc"})
    p, evs, out, res = attack(m, d, "steal", check=0)
    # refused by the runner (the link leaves the preopen); behind it, /proc is
    # out of the kernel layer's reads and the channel is a socket, which no
    # open through /proc reaches (ENXIO)
    assert res and res["errno"] == WASI_ENOTCAPABLE, out


@test()
def a_long_or_nul_path_does_not_hide_a_refusal(m, base):
    d = make_wasm_skill(base, "hide", extra={"escape": "/etc"})
    p, evs, out, res = attack(m, d, "hide", check=0)
    assert res and res["long"] == WASI_ENOTCAPABLE and res["nul"] == WASI_EINVAL, out
    ws = [b for b in blocked(evs, "wasi") if b["path"].endswith("/hostname")]
    assert ws and ws[0]["cut"] is True and " [...] " in ws[0]["path"], blocked(evs)
    assert any(b["path"].startswith("/skill/pwn.txt\\x00x") for b in blocked(evs, "wasi")), \
        blocked(evs)
    # 700 control characters: 4 KiB once JSON-escaped, still one report
    p, evs, out, res = attack(m, d, "ctl", check=0)
    assert res and res["errno"] == WASI_ENOTCAPABLE, out
    assert any(b["path"].endswith("/hostname") and "\\x01" in b["path"]
               for b in blocked(evs, "wasi")), blocked(evs)


@test()
def a_flood_of_refusals_does_not_hide_the_one_that_matters(m, base):
    # 1,200 of the same cheap refusal, then the escape: repeats are counted,
    # not budgeted, so the escape is still one event of its own
    d = make_wasm_skill(base, "flood", extra={"escape": "/etc"})
    p, evs, out, res = attack(m, d, "flood", check=0)
    assert res and res["errno"] == WASI_ENOTCAPABLE, out
    assert any(b["path"].endswith("escape/hostname") for b in blocked(evs, "wasi")), \
        [e["message"] for e in evs if e["kind"] == "output_dropped"]
    dropped = [e["data"] for e in evs if e["kind"] == "output_dropped"]
    assert dropped and dropped[0]["repeats"] == 1199 and dropped[0]["dropped"] == 0, dropped


@test()
def the_runtimes_own_proc_is_out_of_reach(m, base):
    # /proc/self/environ, maps, mem of the runtime: not in the kernel
    # layer's reads of a WASM run
    d = make_wasm_skill(base, "procread", extra={"p": "/proc"})
    p, evs, out, res = attack(m, d, "proc", check=0)
    assert res and res["errno"] == WASI_ENOTCAPABLE and "leaked" not in res, out
    assert any(b["path"].endswith("p/self/environ") for b in blocked(evs, "wasi")), evs


@test()
def a_module_cannot_signal_its_runtime(m, base):
    # proc_raise(SIGUSR1) started node's inspector on 127.0.0.1:9229, which
    # runs any JavaScript it is sent (and a declared listen port published it)
    d = make_wasm_skill(base, "inspector")
    with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
        f.write("skill:\n  name: inspector\n  description: x\npermissions:\n  network:\n"
                "    listen: [9229]\n")
    os.chmod(os.path.join(d, "skillsandbox.yaml"), 0o644)
    p, evs, out, res = attack(m, d, "inspector", check=0)
    assert res and res["errno"] == 52, out  # ENOSYS
    err = "".join(e["message"] for e in evs if e["kind"] == "stderr")
    assert "Debugger listening" not in err, err
    assert not [e for e in evs if e["kind"] in ("port_published", "port_not_published")], evs
    assert any(b["syscall"] == "proc_raise" and b["layer"] == "wasi" for b in blocked(evs)), evs


@test()
def nothing_declared_for_the_network_is_allowed_to_a_module(m, base):
    d = make_wasm_skill(base, "netdecl", "wasm:\n  network:\n    allow: [api.example.test]\n")
    with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
        f.write("skill:\n  name: netdecl\n  description: x\npermissions:\n  network:\n"
                "    listen: [8080]\n    egress:\n      - domain: other.example.test\n"
                "        ports: [443]\n")
    os.chmod(os.path.join(d, "skillsandbox.yaml"), 0o644)
    dry = m.run("run", "--dry-run", d, check=0).out
    assert "api.example.test" not in dry.split("Network (")[1].split("\n\n")[0], dry
    assert "other.example.test" not in dry.split("Network (")[1].split("\n\n")[0], dry
    assert "not allowed by the kernel layer either" in dry, dry


@test()
def the_dry_run_shows_no_value_of_the_environment_and_a_big_input_runs(m, base):
    d = make_wasm_skill(base, "envplan", "wasm:\n  env:\n    allow: [WASM_TOKEN]\n")
    p = m.run("run", "--dry-run", d, check=0, env={"WASM_TOKEN": PLANTED})
    assert PLANTED not in p.out + p.err, p.out
    # 64 KiB of backslashes: 128 KiB as a JSON string, past one exec string
    big = json.dumps({"attack": "args", "pad": "\\" * 32000})
    p = m.run("run", "--json", "--input", big, d)
    out = "".join(e["message"] for e in m.events(p) if e["kind"] == "stdout")
    assert out.startswith("result "), p.out[-2000:]  # it ran (and found no attack by name)


@test(modes=("root",))
def a_declared_path_at_skill_is_refused(m, base):
    d = make_wasm_skill(base, "collide", "wasm:\n  filesystem:\n    write: [/skill]\n")
    p = m.run("run", "--dry-run", d)
    assert p.returncode != 0 and "/skill or below it" in p.out + p.err, p.out + p.err


@test(modes=("root",))
def a_native_skill_is_not_told_its_hosts_reach_nothing(m, base):
    d = os.path.join(base, "natnet")
    os.makedirs(d)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write("---\nname: natnet\ndescription: x\nwasm:\n  network:\n"
                "    allow: [api.example.test]\n---\nx\n")
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write("print('hi')\n")
    v = m.run("validate", d)
    assert "no sockets" not in v.out + v.err, v.out + v.err


@test(modes=("root",))
def a_component_is_refused_with_why(m, base):
    d = make_wasm_skill(base, "component")
    with open(os.path.join(d, "wasm", "skill.wasm"), "wb") as f:
        f.write(b"\0asm\x0d\x00\x01\x00" + b"\0" * 64)
    v = m.run("validate", d)
    assert v.returncode != 0, v.out
    said = v.out + v.err
    assert "wasm/skill.wasm" in said and "WebAssembly component" in said, said
    p = m.run("run", d)
    assert p.returncode != 0 and "WebAssembly component" in p.out + p.err, p.out + p.err


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
