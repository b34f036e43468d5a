#!/usr/bin/env python3
"""Compiles one C file to a wasm32-wasi module (WASI preview 1) with Debian's
clang, lld and wasi-libc: wasm_cc.py CLANG SRC OUT [COPY_TO [EXTRA_FLAG...]].

COPY_TO is where the runnable skill keeps it (the example's wasm/skill.wasm
in the source tree, which the repository does not hold); written to a temporary
name and renamed, so a half-written module is never run."""
import os
import subprocess
import sys

clang, src, out = sys.argv[1:4]
copy_to = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
extra = sys.argv[5:]
subprocess.run([clang, "--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-Wall", "-Wextra",
                "-o", out, src, *extra], check=True)
if copy_to:
    os.makedirs(os.path.dirname(copy_to), exist_ok=True)
    tmp = f"{copy_to}.tmp.{os.getpid()}"
    with open(out, "rb") as f, open(tmp, "wb") as g:
        g.write(f.read())
    os.chmod(tmp, 0o644)
    os.replace(tmp, copy_to)
