#!/usr/bin/env bash
# shell-tool: a directory summary made of ordinary programs.
set -eu
dir=.
if [ -n "${SKILL_INPUT:-}" ]; then
    # {"dir": "..."} without a JSON parser: take the value of "dir" if present.
    d=$(printf '%s' "$SKILL_INPUT" | sed -n 's/.*"dir"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
    [ -n "$d" ] && dir=$d
fi
case "$dir" in /*) ;; *) dir="${SKILL_ROOT:-.}/$dir" ;; esac
[ -d "$dir" ] || { echo "not a directory: $dir" >&2; exit 1; }

echo "== $dir"
echo "-- entries"
ls -la "$dir" | head -n 20
echo "-- largest files"
du -a "$dir" 2>/dev/null | sort -rn | head -n 5
echo "-- line counts"
find "$dir" -maxdepth 1 -type f -print0 | xargs -0 -r wc -l | sort -rn | head -n 6
