/* libFuzzer target for the reader of what a skill's text tells an agent to
 * run and what it hides (instructions.h): whatever the bytes, as Markdown
 * and as a script, at most SG_FINDINGS_MAX findings (the rest counted),
 * each a known kind at its kind's level, on a line of the input, with an
 * excerpt of at most SG_FINDING_EXCERPT_MAX bytes and decoded text of at
 * most SG_FINDING_DECODED_MAX, neither holding a NUL (strlen is the whole
 * string: ASan checks the bytes are there), never the same kind twice on
 * one line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instructions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct sg_findings *f, const uint8_t *data, size_t size)
{
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (f->n > SG_FINDINGS_MAX)
        abort();
    for (size_t i = 0; i < f->n; i++) {
        const struct sg_finding *g = &f->v[i];
        if (g->kind < 0 || g->kind >= SG_FIND_NKINDS || g->level != sg_finding_kind_level(g->kind))
            abort();
        if (g->line < 1 || (size_t)g->line > lines || !g->excerpt ||
            strlen(g->excerpt) > SG_FINDING_EXCERPT_MAX)
            abort();
        if (g->decoded && strlen(g->decoded) > SG_FINDING_DECODED_MAX)
            abort();
        for (size_t j = 0; j < i; j++)
            if (f->v[j].line == g->line && f->v[j].kind == g->kind &&
                !strcmp(f->v[j].file, g->file))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_findings f = {0};
    sg_instructions_scan("SKILL.md", (const char *)data, size, 1, &f);
    check(&f, data, size);
    sg_findings_free(&f);
    f = (struct sg_findings){0};
    sg_hidden_unicode_scan("scripts/x.sh", (const char *)data, size, &f);
    check(&f, data, size);
    sg_findings_free(&f);
    return 0;
}
