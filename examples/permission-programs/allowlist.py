#!/usr/bin/env python3
"""A permission program for `skillgate run --prompt exec:...` (OpenSkills'
custom callback): skillgate writes one request as a JSON object on stdin
and reads one answer from stdout.

The team's rules:
  Fetch  only to a host listed in the allowlist file (one name a line,
         "*.example.test" for a domain and its subdomains), for the run
  Bash   never a program outside /usr/bin; inside it, a person decides
  Write  a person decides

Usage: allowlist.py [ALLOWLIST]   (default: team-allowlist.txt beside it)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def allowed_hosts(path):
    with open(path) as f:
        return [line.strip().lower() for line in f
                if line.strip() and not line.startswith("#")]


def listed(host, patterns):
    host = host.lower().rstrip(".")
    for p in patterns:
        if p.startswith("*.") and (host == p[2:] or host.endswith(p[1:])):
            return True
        if host == p:
            return True
    return False


def decide(req, patterns):
    tool = req["tool"]
    if tool == "Fetch":
        if listed(req.get("host", ""), patterns):
            return "allow", "run", "on the team allowlist"
        return "deny", "once", f"{req.get('host')} is not on the team allowlist"
    if tool == "Bash":
        program = req.get("program", "")
        if not program.startswith("/usr/bin/"):
            return "deny", "once", f"{program} is outside /usr/bin"
        return "ask", "once", "a program in /usr/bin: a person decides"
    return "ask", "once", "not the team's to say"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "team-allowlist.txt")
    req = json.load(sys.stdin)
    decision, scope, reason = decide(req, allowed_hosts(path))
    json.dump({"decision": decision, "scope": scope, "reason": reason}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
