#!/usr/bin/env bash
# Smoke run of one libFuzzer target: seed corpus from the bundled examples,
# a bounded number of runs and seconds, and any crash, leak or timeout fails.
set -euo pipefail
exe=$1 src=$2 name=$3
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
i=0
for f in "$src"/examples/skills/*/SKILL.md "$src"/examples/skills/*/skillsandbox.yaml \
         "$src"/tests/fuzz-seeds/*; do
    [ -f "$f" ] || continue
    cp "$f" "$corpus/seed$i"
    i=$((i + 1))
done
# SKILL.md + NUL + skillsandbox.yaml: both readers in one input.
for d in "$src"/examples/skills/*/; do
    if [ -f "$d/SKILL.md" ] && [ -f "$d/skillsandbox.yaml" ]; then
        { cat "$d/SKILL.md"; printf '\0'; cat "$d/skillsandbox.yaml"; } > "$corpus/pair$i"
        i=$((i + 1))
    fi
done
echo "# $name: $i seeds"
exec "$exe" -runs="${FUZZ_RUNS:-30000}" -max_total_time="${FUZZ_SECONDS:-45}" \
    -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
