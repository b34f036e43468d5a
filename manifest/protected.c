#include "protected.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitnamed.h"
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

static const char *list_path(const char *path, const char **pattern);

/* A pattern cut into components once: before "**" and after it (at most
 * one "**", never first or last: the matcher is linear in the path). */
struct pat {
    const char *pre[MAX_PAT], *post[MAX_PAT];
    size_t npre, npost;
    bool any; /* has "**" */
    char buf[128];
};

static struct pat pats[SG_ARRAY_LEN(targets)];

static void cut_patterns(void)
{
    for (size_t t = 0; t < SG_ARRAY_LEN(targets); t++) {
        struct pat *q = &pats[t];
        snprintf(q->buf, sizeof q->buf, "%s", targets[t].pattern);
        char *save = NULL;
        for (char *c = strtok_r(q->buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
            if (!strcmp(c, "**"))
                q->any = true;
            else if (!q->any && q->npre < MAX_PAT)
                q->pre[q->npre++] = c;
            else if (q->any && q->npost < MAX_PAT)
                q->post[q->npost++] = c;
        }
    }
}

static bool comp_is(const char *pat, const char *comp)
{
    return strpbrk(pat, "*?[") ? fnmatch(pat, comp, FNM_CASEFOLD) == 0
                               : strcasecmp(pat, comp) == 0;
}

/* Do k pattern components match c from i (all inside the path)? */
static bool run_at(const char *const *pc, size_t k, const struct comps *c, size_t i)
{
    if (i + k > c->n)
        return false;
    for (size_t j = 0; j < k; j++)
        if (!comp_is(pc[j], c->v[i + j]))
            return false;
    return true;
}

/* Does the path end inside pc (its last components match pc's first
 * ones, and more of pc would still follow)? */
static bool ends_inside(const char *const *pc, size_t k, const struct comps *c, size_t i)
{
    size_t have = c->n - i;
    return have < k && run_at(pc, have, c, i);
}

/* Where target t matches c as mode asks: the component its match begins
 * at, or -1. Linear in the path: for a pattern with "**" only the first
 * place its head matches needs trying (a later one allows no more). */
static ssize_t match_one(size_t t, const struct comps *c, enum mode m)
{
    const struct pat *q = &pats[t];
    for (size_t s = 0; s < c->n; s++) {
        if (!comp_is(q->pre[0], c->v[s]))
            continue;
        if (!q->any) {
            bool hit = m == PREFIX ? ends_inside(q->pre, q->npre, c, s)
                                   : run_at(q->pre, q->npre, c, s) &&
                                         (m == TREE || s + q->npre == c->n);
            if (hit)
                return (ssize_t)s;
            continue;
        }
        if (!run_at(q->pre, q->npre, c, s))
            continue; /* a later start may still match the head whole */
        size_t from = s + q->npre;
        if (m == PREFIX)
            return (ssize_t)s; /* "**" takes the rest, and post is still to come */
        if (m == FULL)
            return from + q->npost <= c->n && run_at(q->post, q->npost, c, c->n - q->npost)
                       ? (ssize_t)s
                       : -1;
        for (size_t j = from; j + q->npost <= c->n; j++)
            if (run_at(q->post, q->npost, c, j))
                return (ssize_t)s;
        return -1;
    }
    return -1;
}

/* Does comp begin some pattern that does not begin with a dot? */
static bool first_of_some(const char *comp)
{
    for (size_t t = 0; t < SG_ARRAY_LEN(targets); t++)
        if (pats[t].pre[0][0] != '.' && comp_is(pats[t].pre[0], comp))
            return true;
    return false;
}

/* The first target matching c as mode asks (PREFIX: a path a folder or a
 * link could stand at, with a target below it): its index, or -1; *start
 * the component where the match began. */
static ssize_t find(const struct comps *c, enum mode want, size_t *start)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cut_patterns);
    /* most paths hold no component any pattern begins with: done here */
    bool any = false;
    for (size_t i = 0; i < c->n && !any; i++)
        any = c->v[i][0] == '.' || first_of_some(c->v[i]);
    if (!any)
        return -1;
    for (size_t t = 0; t < SG_ARRAY_LEN(targets); t++) {
        enum mode m = want == PREFIX ? PREFIX
                      : targets[t].scope == SG_PROTECT_TREE ? TREE
                                                            : FULL;
        ssize_t s = match_one(t, c, m);
        if (s >= 0) {
            *start = (size_t)s;
            return (ssize_t)t;
        }
    }
    return -1;
}

/* A hook's sample (hooks/pre-commit.sample): git runs hooks only by their
 * names, never a sample, so `git clone` and `git init` ask no question per
 * sample; the hooks folder itself, and a rename or link to a hook's name,
 * are asked. A sample that is a symbolic link, or a file with another name
 * too (a hook hard-linked to it), is no mere sample. */
static bool hook_sample(const char *path)
{
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    if (!base || n < 7 || strcmp(path + n - 7, ".sample") || base - path < 6 ||
        strncmp(base - 6, "/hooks", 6))
        return false;
    struct stat st;
    return lstat(path, &st) < 0 || (S_ISREG(st.st_mode) && st.st_nlink == 1);
}

const char *sg_protected_path(const char *path, const char **pattern)
{
    bool sample = hook_sample(path);
    const char *w = sample ? NULL : list_path(path, pattern);
    if (sample && pattern)
        *pattern = NULL;
    /* a sample a config names (core.fsmonitor = .git/hooks/x.sample) is
     * run by that name: protected, though a hooks folder's tree is not */
    if (!w && path[0] == '/' && (w = sg_git_named(path, sample)) && pattern)
        *pattern = "(git's configuration names it)";
    return w;
}

static const char *list_path(const char *path, const char **pattern)
{
    /* on the heap: 36 KB is too much for a stack, and as a thread-local it
     * would be in every thread's (the exporter's is 256 KB) */
    cleanup_free struct comps *c = sg_xmalloc(sizeof *c);
    size_t s;
    split(path, c);
    ssize_t t = find(c, FULL, &s);
    if (pattern)
        *pattern = t >= 0 ? targets[t].pattern : NULL;
    if (t < 0 && !c->whole) {
        if (pattern)
            *pattern = "?";
        return "a path too long to be checked whole";
    }
    return t >= 0 ? targets[t].why : NULL;
}

/* Could a folder or link at path hold or reach a protected target below
 * it (path is a beginning of a pattern: .git/modules/m, .cargo,
 * .github)? The path of the match's first component is anchor (its length
 * in *alen), or NULL. */
static const char *place_of(const char *path, size_t *alen)
{
    cleanup_free struct comps *c = sg_xmalloc(sizeof *c); /* as list_path's */
    size_t s;
    split(path, c);
    if (!c->whole) {
        *alen = 0;
        return "a path too long to be checked whole";
    }
    ssize_t t = find(c, PREFIX, &s);
    if (t < 0)
        return NULL;
    *alen = c->end[s];
    return "a folder or link where a protected target would lie below it (what it holds or "
           "leads to would be run or trusted)";
}

const char *sg_protected_place(const char *path)
{
    size_t alen;
    const char *w = sg_protected_path(path, NULL);
    if (!w)
        w = place_of(path, &alen);
    return w ? w : sg_git_named_below(path);
}

const char *sg_protected_move(const char *from, const char *to, bool dir)
{
    const char *w = sg_protected_path(from, NULL);
    if (w || (w = sg_protected_path(to, NULL)) || !dir)
        return w;
    /* a folder that holds what a repository's config names, moved away, or
     * one moved where such a thing would lie below it (tools -> .../hooks) */
    if ((w = sg_git_named_below(from)) || (w = sg_git_named_below(to)))
        return w;
    /* a folder or link moved in where a target would lie below it, or one
     * that may hold targets moved away, unless it moves within the place
     * the match begins at (git renaming its own folders inside .git: what
     * they hold was made there, where the protected names were asked for) */
    const char *ends[2][2] = {{to, from}, {from, to}};
    for (size_t i = 0; i < 2; i++) {
        size_t alen;
        const char *why = place_of(ends[i][0], &alen);
        if (why && !(alen && !strncmp(ends[i][1], ends[i][0], alen) &&
                     ends[i][1][alen] == '/'))
            return why;
    }
    return NULL;
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
