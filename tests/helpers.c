#include "helpers.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skill.h"
#include "util.h"

char *th_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *t = sg_xasprintf("%s/sgtest.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(t))
        fail_msg("mkdtemp: %s", strerror(errno));
    chmod(t, 0755);
    return t;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
        chmod(p, 0700), rmdir(p);
    else
        unlink(p);
    return 0;
}

void th_rmrf(const char *path)
{
    nftw(path, rm_cb, 64, FTW_DEPTH | FTW_PHYS);
}

void th_mkdirs(const char *dir, const char *rel)
{
    char *p = sg_xasprintf("%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
    free(p);
}

void th_write_n(const char *dir, const char *rel, const char *content, size_t n)
{
    char *p = sg_xasprintf("%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    if (strcmp(p, dir) != 0)
        th_mkdirs(dir, p + strlen(dir) + 1);
    *slash = '/';
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("open %s: %s", p, strerror(errno));
    if (write(fd, content, n) != (ssize_t)n)
        fail_msg("write %s", p);
    close(fd);
    free(p);
}

void th_write(const char *dir, const char *rel, const char *content)
{
    th_write_n(dir, rel, content, strlen(content));
}

const struct sg_diag *th_find(const struct sg_diags *d, ...)
{
    for (size_t i = 0; i < d->n; i++) {
        char *line = sg_diag_format(&d->v[i]);
        va_list ap;
        va_start(ap, d);
        bool all = true;
        const char *needle;
        while ((needle = va_arg(ap, const char *)))
            if (!strstr(line, needle))
                all = false;
        va_end(ap);
        free(line);
        if (all)
            return &d->v[i];
    }
    return NULL;
}

void th_dump(const struct sg_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        char *line = sg_diag_format(&d->v[i]);
        print_message("#   | %s\n", line);
        free(line);
    }
}

void th_assert_diag_at(const struct sg_diags *d, enum sg_severity sev, int line, int col,
                       const char *field, const char *part, const char *file, int fline)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct sg_diag *g = &d->v[i];
        if (g->sev != sev || (line && g->line != line) || (col && g->col != col))
            continue;
        if (field && (!g->field || strcmp(g->field, field) != 0))
            continue;
        if (part && !strstr(g->msg, part))
            continue;
        return;
    }
    print_message("# %s:%d: no %s at %d:%d field %s containing \"%s\"; problems were:\n", file,
                  fline, sev == SG_ERROR ? "error" : "warning", line, col,
                  field ? field : "(any)", part ? part : "");
    th_dump(d);
    _fail(file, fline);
}

struct sg_skill *th_skill(const char *md, const char *y)
{
    /* The folder name is the skill name the tests use: "demo". */
    return sg_skill_from_buffers("/nonexistent/demo", md, md ? strlen(md) : 0, y,
                                 y ? strlen(y) : 0);
}

size_t th_read_seed(const char *name, unsigned char *buf, size_t max)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz-seeds/%s", SG_SOURCE_ROOT, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, max, f);
    fclose(f);
    return n;
}
