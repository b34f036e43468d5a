#include "diag.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
    if (src->n) { /* memcpy from an empty list's NULL is undefined */
        sg_grow(&dst->v, &dst->cap, dst->n + src->n, sizeof *dst->v);
        memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    }
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

char *sg_diag_excerpt(const struct sg_diag *g)
{
    if (g->line <= 0 || !g->file)
        return NULL;
    cleanup_fd int fd = open(g->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_size > (off_t)SG_DIAG_EXCERPT_FILE_MAX)
        return NULL;
    cleanup_free char *buf = sg_xmalloc((size_t)st.st_size + 1);
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    const char *l = buf, *end = buf + n;
    for (int k = 1; k < g->line && l < end; k++) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        l = nl ? nl + 1 : end;
    }
    if (l >= end && g->line > 1)
        return NULL;
    size_t len = strcspn(l, "\r\n");
    struct sg_buf b;
    sg_buf_init(&b, len * 2 + 64);
    char head[32];
    int w = snprintf(head, sizeof head, "%5d | ", g->line) - 2;
    sg_buf_printf(&b, "%s", head);
    sg_buf_append(&b, l, len);
    if (g->col > 0) {
        sg_buf_printf(&b, "\n%*s| ", w, "");
        /* under each character before the column: a blank, or the tab it is */
        for (size_t i = 0, c = 1; i < len && c < (size_t)g->col; i++) {
            if ((l[i] & 0xc0) == 0x80)
                continue; /* a UTF-8 continuation byte: one blank per character */
            sg_buf_append(&b, l[i] == '\t' ? "\t" : " ", 1);
            c++;
        }
        sg_buf_append(&b, "^", 1);
    }
    return sg_buf_steal(&b);
}
