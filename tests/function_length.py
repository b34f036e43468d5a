#!/usr/bin/env python3
"""The house rule of issue 37: no function in the product is over 150
lines, so that each can be read whole. A function is counted from its
opening `{` at column 0 to its closing `}` at column 0 (how this project
writes every function); its name is the first identifier before a `(` in
the declaration above the `{` (from its line at column 0, over indented
continuation lines, with any `__attribute__((...))` left out). Headers count
too: a static inline function is product code. TAP: one case per product
folder, each long function named as FILE:FUNCTION:LINES.

Usage: function_length.py SOURCE_ROOT [MAX]
"""
import os
import re
import sys

FOLDERS = ["lib", "manifest", "sandbox", "records", "egress", "decisions", "run", "agent",
           "tui", "cli"]


def strip_attributes(text):
    """text without its __attribute__((...)) groups (balanced parentheses)."""
    out, i = "", 0
    while True:
        k = text.find("__attribute__", i)
        if k < 0:
            return out + text[i:]
        out += text[i:k]
        j = text.find("(", k)
        if j < 0:
            return out
        depth = 0
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        i = j


def function_name(lines, brace):
    """The name declared above the `{` on line brace: the declaration starts
    at the nearest line at column 0 (its continuation lines are indented)."""
    j = brace - 1
    while j > 0 and lines[j][:1] in (" ", "\t"):
        j -= 1
    names = re.findall(r"([A-Za-z_]\w*)\s*\(", strip_attributes(" ".join(lines[j:brace])))
    return names[0] if names else "?"


def long_functions(path, limit):
    """(name, lines) of each function in path longer than limit."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            n = k - i + 1
            if n > limit:
                out.append((function_name(lines, i), n))
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
            if f.endswith((".c", ".h")):
                found += [(f, name, k) for name, k in
                          long_functions(os.path.join(root, folder, f), limit)]
        if found:
            failed += 1
            print(f"not ok {n} - {folder}/: no function over {limit} lines")
            for f, name, k in found:
                print(f"# {folder}/{f}:{name}:{k}")
        else:
            print(f"ok {n} - {folder}/: no function over {limit} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
