#!/usr/bin/env python3
"""A permission program that asks the team's policy service: it posts the
request skillgate wrote on stdin to the service and prints the service's
answer. Anything wrong (the service down, slow, an error, an answer that
is no JSON object) exits non-zero, and skillgate denies: nothing fails open.

Usage: ask-service.py URL   (e.g. http://127.0.0.1:8787/decide)
"""
import json
import sys
import urllib.request


def main():
    url = sys.argv[1]
    body = sys.stdin.buffer.read()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        answer = json.loads(r.read(65536))
    if not isinstance(answer, dict):
        sys.exit("the service's answer is no JSON object")
    json.dump(answer, sys.stdout)
    print()


if __name__ == "__main__":
    main()
