#!/usr/bin/env python3
"""Writes a text file as a C string constant: embed.py IN OUT NAME."""
import sys

src, out, name = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    text = f.read()
with open(out, "w", encoding="utf-8") as f:
    f.write(f"/* generated from {src.rsplit('/', 1)[-1]} by embed.py */\n")
    f.write(f"static const char {name}[] =\n")
    for line in text.splitlines(keepends=True):
        if not line.isascii():
            sys.exit(f"{src}: not ASCII: {line!r}")
        # '?' escaped: no trigraph can form in ISO C modes
        esc = (line.replace("\\", "\\\\").replace('"', '\\"').replace("?", "\\?")
               .replace("\n", "\\n"))
        f.write(f'    "{esc}"\n')
    f.write("    ;\n")
