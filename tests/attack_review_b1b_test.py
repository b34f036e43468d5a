#!/usr/bin/env python3
"""Attacks on b1b464e (root without sudo: what root makes for the skill is
root:nogroup with the owner's bits, and the broker renames/removes for it in
a declared folder nobody may not write).

Usage: attack_review_b1b_test.py path/to/skillgate path/to/source-root
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)


@test()
def a_rename_plants_no_name_in_a_folder_nobody_may_not_write(m, base):
    """moves_for_group/group_may check the objects named, never the folder a
    rename puts a new name into: the skill's own output moved into a root
    0700 subfolder or into .git/hooks (root 0755) of the declared folder."""
    out = os.path.join(base, f"b1b-{m.name}")
    priv = os.path.join(out, "private")
    hooks = os.path.join(out, ".git", "hooks")
    os.makedirs(priv)
    os.makedirs(hooks)
    os.chmod(out, 0o755)
    os.chmod(priv, 0o700)
    os.chmod(os.path.join(out, ".git"), 0o755)
    os.chmod(hooks, 0o755)
    script = """
        import os
        o = %r
        for src, dst in (("a", "private/planted"), ("b", ".git/hooks/pre-commit")):
            try:
                fd = os.open(o + "/" + src, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
                os.write(fd, b"#!/bin/sh\\nid > /tmp/pwned\\n"); os.close(fd)
                os.rename(o + "/" + src, o + "/" + dst)
                print(dst, "renamed", flush=True)
            except OSError as e:
                print(dst, "refused", e.errno, flush=True)
        """ % out
    extra = f"permissions:\n  filesystem:\n    write: [{out}]\n"
    d = h.make_skill(base, f"b1bren-{m.name}", script, yaml_extra=extra)
    p = m.run("run", "--prompt", "deny", d)
    print("#", m.name, p.out.replace("\n", " | "), file=sys.stderr)
    for rel in ("private/planted", ".git/hooks/pre-commit"):
        f = os.path.join(out, rel)
        st = os.stat(f) if os.path.exists(f) else None
        assert st is None, (rel, st and oct(st.st_mode), st and st.st_uid, p.out)


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
