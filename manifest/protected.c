#include "protected.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static const struct sg_protected_target targets[] = {
#define X(pat, scope, why) {pat, SG_PROTECT_##scope, why},
    SG_PROTECTED_TARGETS(X)
#undef X
};

const struct sg_protected_target *sg_protected_targets(size_t *n)
{
    *n = SG_ARRAY_LEN(targets);
    return targets;
}

/* A path's components, pointing into a copy of it: at most this many (a
 * PATH_MAX path has at most 2048; one with more is matched as far as this
 * goes and said protected: never truncated to a "no"). */
#define MAX_COMPS 2048
#define MAX_PAT 8

struct comps {
    char buf[PATH_MAX];
    const char *v[MAX_COMPS];
    size_t end[MAX_COMPS]; /* offset in the path just past each component */
    size_t n;
    bool whole;
};

static void split(const char *path, struct comps *c)
{
    c->n = 0;
    c->whole = snprintf(c->buf, sizeof c->buf, "%s", path) < (int)sizeof c->buf;
    char *save = NULL;
    for (char *t = strtok_r(c->buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (c->n == MAX_COMPS) {
            c->whole = false;
            break;
        }
        c->v[c->n] = t;
        c->end[c->n] = (size_t)(t - c->buf) + strlen(t);
        c->n++;
    }
}

enum mode { FULL, TREE, PREFIX };

/* Does pat[k..] match comps[i..n) the way mode asks? */
static bool mm(const char *const *pat, size_t k, size_t np, const struct comps *c, size_t i,
               enum mode m)
{
    if (k == np)
        return m == TREE || (m == FULL && i == c->n);
    if (i == c->n) {
        if (m == PREFIX)
            return true; /* patterns never end with "**": something is still to come */
        return !strcmp(pat[k], "**") && mm(pat, k + 1, np, c, i, m);
    }
    if (!strcmp(pat[k], "**"))
        return mm(pat, k + 1, np, c, i, m) || mm(pat, k, np, c, i + 1, m);
    return fnmatch(pat[k], c->v[i], FNM_CASEFOLD) == 0 && mm(pat, k + 1, np, c, i + 1, m);
}

static size_t pattern_comps(const char *pattern, char *buf, size_t max, const char **pat)
{
    snprintf(buf, max, "%s", pattern);
    size_t np = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, "/", &save); t && np < MAX_PAT; t = strtok_r(NULL, "/", &save))
        pat[np++] = t;
    return np;
}

/* The first target whose pattern matches at some start of c: its index,
 * or -1; *start the component where the match began. */
static ssize_t find(const struct comps *c, enum mode want_prefix, size_t *start)
{
    for (size_t s = 0; s < c->n; s++) {
        /* every pattern begins with a dot name or *.git: most paths have
         * neither, and are done with here */
        size_t l = strlen(c->v[s]);
        if (c->v[s][0] != '.' && (l < 4 || strcasecmp(c->v[s] + l - 4, ".git")))
            continue;
        for (size_t t = 0; t < SG_ARRAY_LEN(targets); t++) {
            char pb[128];
            const char *pat[MAX_PAT];
            size_t np = pattern_comps(targets[t].pattern, pb, sizeof pb, pat);
            enum mode m = want_prefix == PREFIX ? PREFIX
                          : targets[t].scope == SG_PROTECT_TREE ? TREE
                                                                : FULL;
            if (mm(pat, 0, np, c, s, m)) {
                *start = s;
                return (ssize_t)t;
            }
        }
    }
    return -1;
}

const char *sg_protected_path(const char *path, const char **pattern)
{
    static _Thread_local struct comps c; /* kept off the stack */
    size_t s;
    split(path, &c);
    ssize_t t = find(&c, FULL, &s);
    if (pattern)
        *pattern = t >= 0 ? targets[t].pattern : NULL;
    if (t < 0 && !c.whole) {
        if (pattern)
            *pattern = "?";
        return "a path too long to be checked whole";
    }
    return t >= 0 ? targets[t].why : NULL;
}

const char *sg_protected_move(const char *from, const char *to, bool dir)
{
    const char *w = sg_protected_path(from, NULL);
    if (w || (w = sg_protected_path(to, NULL)) || !dir)
        return w;
    static _Thread_local struct comps c;
    size_t s;
    split(to, &c);
    ssize_t t = find(&c, PREFIX, &s);
    if (t < 0)
        return NULL;
    /* a folder moved within the place it lands in (git renaming its own
     * folders inside .git) brings nothing from outside: what it holds was
     * made there, where the protected names were asked for already */
    size_t alen = c.end[s];
    if (!strncmp(from, to, alen) && from[alen] == '/')
        return NULL;
    return "a folder moved in where a protected target lies below it (what it holds would be "
           "run or trusted)";
}

/* ---- a declared folder's protected targets, for inspect ---- */

struct scan {
    size_t left;
    int max_depth;
    dev_t dev;
    long found;
    bool stopped;
    void (*cb)(void *ctx, const char *path, const char *why);
    void *ctx;
};

static void walk(struct scan *sc, int dfd, const char *path, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (sc->left == 0) {
            sc->stopped = true;
            break;
        }
        sc->left--;
        cleanup_free char *p = sg_xasprintf("%s/%s", path, e->d_name);
        const char *why = sg_protected_path(p, NULL);
        if (why) {
            sc->found++;
            sc->cb(sc->ctx, p, why); /* what lies below it is covered by it */
            continue;
        }
        struct stat st;
        if (depth >= sc->max_depth || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_dev != sc->dev)
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            walk(sc, sub, p, depth + 1);
    }
    closedir(d);
}

long sg_protected_scan(const char *dir, size_t max_entries, int max_depth,
                       void (*found)(void *ctx, const char *path, const char *why), void *ctx)
{
    struct scan sc = {.left = max_entries, .max_depth = max_depth, .cb = found, .ctx = ctx};
    const char *why = sg_protected_path(dir, NULL);
    if (why) {
        found(ctx, dir, why);
        return 1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return 0;
    }
    sc.dev = st.st_dev;
    walk(&sc, fd, strcmp(dir, "/") ? dir : "", 0);
    return sc.stopped ? -1 : sc.found;
}

struct note {
    struct sg_buf b;
    size_t n;
};

static void add_note(void *ctx, const char *path, const char *why)
{
    struct note *nt = ctx;
    if (nt->n++ < 8)
        sg_buf_printf(&nt->b, "%s%s (%s)", nt->n > 1 ? ", " : "", path, why);
}

char *sg_protected_note(const char *dir)
{
    struct note nt = {.n = 0};
    sg_buf_init(&nt.b, 64 * 1024);
    long k = sg_protected_scan(dir, SG_PROTECTED_SCAN_ENTRIES, SG_PROTECTED_SCAN_DEPTH,
                               add_note, &nt);
    if (nt.n == 0 && k >= 0) {
        sg_buf_free(&nt.b);
        return NULL;
    }
    sg_buf_append(&nt.b, "", 1);
    cleanup_free char *list = sg_buf_steal(&nt.b);
    const char *more = k < 0 ? "; the look stopped at its bound, so there may be more" : "";
    if (nt.n == 0)
        return sg_xasprintf("holds more than %d entries, not all looked at for protected "
                            "targets (.git/config, .git/hooks, .envrc ...): each is asked on "
                            "its own whatever this grant", SG_PROTECTED_SCAN_ENTRIES);
    return sg_xasprintf("holds protected targets, each asked on its own whatever this grant "
                        "(only a rule naming the file allows it): %s%s%s%s", list,
                        nt.n > 8 ? " and " : "", nt.n > 8 ? "more" : "", more);
}
