#!/usr/bin/env python3
"""The house rule of issue 37: no function in the product is over 150
lines, so that each can be read whole. A function is counted from its
opening `{` at column 0 to its closing `}` at column 0 (how this project
writes every function); its name is the last identifier before the `(` in
the lines above the `{`. TAP: one case per product folder.

Usage: function_length.py SOURCE_ROOT [MAX]
"""
import os
import re
import sys

FOLDERS = ["lib", "manifest", "sandbox", "records", "egress", "decisions", "run", "agent",
           "tui", "cli"]


def long_functions(path, limit):
    """(name, lines) of each function in path longer than limit."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            j, head = i - 1, lines[i - 1]
            while j > 0 and "(" not in head:  # a signature split over lines
                j -= 1
                head = lines[j] + " " + head
            names = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            n = k - i + 1
            if n > limit:
                out.append((names[0] if names else "?", n))
            i = k
        i += 1
    return out


def main():
    root = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    print(f"1..{len(FOLDERS)}")
    failed = 0
    for n, folder in enumerate(FOLDERS, 1):
        found = []
        for f in sorted(os.listdir(os.path.join(root, folder))):
            if f.endswith(".c"):
                found += [(f, name, k) for name, k in
                          long_functions(os.path.join(root, folder, f), limit)]
        if found:
            failed += 1
            print(f"not ok {n} - {folder}/: no function over {limit} lines")
            for f, name, k in found:
                print(f"# {folder}/{f}: {name}: {k} lines")
        else:
            print(f"ok {n} - {folder}/: no function over {limit} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
