/* A SKILL.md frontmatter read line by line, as OpenClaw's loader reads one
 * that YAML cannot parse (src/markdown/frontmatter.ts, parseLineFrontmatter
 * in openclaw/openclaw): each line "key: value" that starts at the first
 * column, key of [A-Za-z0-9_-], is a field; its value is the rest of the
 * line, trimmed, one pair of surrounding quotes taken off; with nothing
 * after the colon, the lines indented below it (and blank ones) are its
 * value, joined and trimmed; an empty value is no field; a key said twice
 * keeps its last value (a warning says so; an error for a key in strict,
 * the fields skillgate enforces, on which YAML readers differ). Every other line is skipped. Lines end at "\n",
 * "\r\n" or "\r". So `description: Use when: the user asks` is the string
 * YAML refuses, as OpenClaw reads it. A value's line and column are where
 * its text starts in the file, so the text, put back at that column, is
 * the YAML it was.
 *
 * Where YAML would read a field skillgate enforces (strict) otherwise
 * than this reading does, it is an error, never a field dropped or
 * granted: a strict key with no value; a line YAML may read as one
 * (quoted, indented, spaced before the colon, "? key") not taken as it;
 * a strict key, or metadata naming "env", after a value whose quote or
 * "[" / "{" does not close on its line (YAML reads on into the next
 * lines); wasm (OpenSkills' field, not OpenClaw's); and, whatever the
 * keys, a line starting "---" or "..." (OpenClaw's frontmatter ends at
 * the first "---" line).
 *
 * skillgate reads a skill this way only where OpenClaw's rules apply
 * (openclaw.h), and only to take what OpenClaw takes: a field skillgate
 * enforces (allowed-tools, hooks, wasm; OpenClaw reads none of them) is
 * read from its text as YAML on its own, or refused (skillmd.c). */
#ifndef SG_FMLINES_H
#define SG_FMLINES_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "ynode.h"

/* at most this many fields: a frontmatter is a few dozen; the bytes are
 * capped before (SG_MANIFEST_MAX) */
#define SG_FMLINES_MAX_KEYS 1024

/* The fields of buf (len bytes, the frontmatter between its "---" lines,
 * whose first line is line first_line of file) as a mapping of scalars
 * with their line and column (quoted: a one-line value that had quotes),
 * in *out (an empty mapping when none); a key said twice to d (an error
 * when strict, which may be NULL, says so of it). -E2BIG past SG_FMLINES_MAX_KEYS fields,
 * *out then NULL. */
int sg_fmlines_parse(const char *buf, size_t len, int first_line,
                     bool (*strict)(const char *key), const char *file, struct sg_diags *d,
                     struct sg_ynode **out);

#endif
