/* Validation problems, each tied to a file, a line, a column and a field.
 * manifest/ never prints: it collects these and the caller decides. */
#ifndef SG_DIAG_H
#define SG_DIAG_H

#include <stdbool.h>
#include <stddef.h>

enum sg_severity { SG_WARNING, SG_ERROR };

struct sg_diag {
    enum sg_severity sev;
    char *file;  /* as the user named it: "examples/skills/x/SKILL.md" */
    int line;    /* 1-based; 0 when the problem is about the whole file */
    int col;     /* 1-based; 0 when unknown */
    char *field; /* dotted path: "permissions.network.egress[0].ports" */
    char *msg;
    bool spec_only; /* an error against the Agent Skills spec that Claude Code
                     * itself lets pass: validate fails, the skill still runs */
};

struct sg_diags {
    struct sg_diag *v;
    size_t n, cap;
};

void sg_diag_add(struct sg_diags *d, enum sg_severity sev, const char *file, int line,
                 int col, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
size_t sg_diags_count(const struct sg_diags *d, enum sg_severity sev);
/* Errors that stop a run (every error but the spec-only ones). */
size_t sg_diags_blocking(const struct sg_diags *d);
/* Move every entry of src to the end of dst. */
void sg_diags_move(struct sg_diags *dst, struct sg_diags *src);
void sg_diags_free(struct sg_diags *d);
/* "FILE:LINE:COL: error: field: message" (LINE/COL omitted when 0). */
char *sg_diag_format(const struct sg_diag *g);
/* The line the diagnostic points at and a caret under its column:
 * "   4 | allowed-tools: Read Bash(git\n     |                ^" (tabs kept,
 * so a terminal that draws them alike lines the caret up). NULL when it
 * has no line, or the file is not a regular file of at most
 * SG_DIAG_EXCERPT_FILE_MAX bytes (caller frees). */
#define SG_DIAG_EXCERPT_FILE_MAX (1u << 20)
char *sg_diag_excerpt(const struct sg_diag *g);

#endif
