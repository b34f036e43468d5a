#include "diag.h"

#include "util.h"

void sg_diag_add(struct sg_diags *d, enum sg_severity sev, const char *file, int line,
                 int col, const char *field, const char *fmt, ...)
{
    sg_grow(&d->v, &d->cap, d->n + 1, sizeof *d->v);
    struct sg_diag *g = &d->v[d->n++];
    va_list ap;
    va_start(ap, fmt);
    g->msg = sg_xvasprintf(fmt, ap);
    va_end(ap);
    g->sev = sev;
    g->spec_only = false;
    g->file = sg_xstrdup(file ? file : "-");
    g->line = line;
    g->col = col;
    g->field = field && *field ? sg_xstrdup(field) : NULL;
}

size_t sg_diags_blocking(const struct sg_diags *d)
{
    size_t c = 0;
    for (size_t i = 0; i < d->n; i++)
        c += d->v[i].sev == SG_ERROR && !d->v[i].spec_only;
    return c;
}

size_t sg_diags_count(const struct sg_diags *d, enum sg_severity sev)
{
    size_t c = 0;
    for (size_t i = 0; i < d->n; i++)
        c += d->v[i].sev == sev;
    return c;
}

void sg_diags_move(struct sg_diags *dst, struct sg_diags *src)
{
    sg_grow(&dst->v, &dst->cap, dst->n + src->n, sizeof *dst->v);
    memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    free(src->v);
    memset(src, 0, sizeof *src);
}

void sg_diags_free(struct sg_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].field);
        free(d->v[i].msg);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

char *sg_diag_format(const struct sg_diag *g)
{
    char pos[48] = "";
    if (g->line > 0 && g->col > 0)
        snprintf(pos, sizeof pos, ":%d:%d", g->line, g->col);
    else if (g->line > 0)
        snprintf(pos, sizeof pos, ":%d", g->line);
    return sg_xasprintf("%s%s: %s: %s%s%s", g->file, pos,
                        g->sev == SG_ERROR ? "error" : "warning", g->field ? g->field : "",
                        g->field ? ": " : "", g->msg);
}
