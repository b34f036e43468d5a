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

static const char *named_by_git(const char *path);

const char *sg_protected_path(const char *path, const char **pattern)
{
    const char *w = list_path(path, pattern);
    if (!w && path[0] == '/' && (w = named_by_git(path)) && pattern)
        *pattern = "(git's configuration names it)";
    return w;
}

static const char *list_path(const char *path, const char **pattern)
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

/* Could a folder or link at path hold or reach a protected target below
 * it (path is a beginning of a pattern: .git/modules/m, .cargo,
 * .github)? The path of the match's first component is anchor (its length
 * in *alen), or NULL. */
static const char *place_of(const char *path, size_t *alen)
{
    static _Thread_local struct comps c;
    size_t s;
    split(path, &c);
    if (!c.whole) {
        *alen = 0;
        return "a path too long to be checked whole";
    }
    ssize_t t = find(&c, PREFIX, &s);
    if (t < 0)
        return NULL;
    *alen = c.end[s];
    return "a folder or link where a protected target would lie below it (what it holds or "
           "leads to would be run or trusted)";
}

const char *sg_protected_place(const char *path)
{
    size_t alen;
    const char *w = sg_protected_path(path, NULL);
    return w ? w : place_of(path, &alen);
}

const char *sg_protected_move(const char *from, const char *to, bool dir)
{
    const char *w = sg_protected_path(from, NULL);
    if (w || (w = sg_protected_path(to, NULL)) || !dir)
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

/* ---- what a repository's own configuration names ---- */

/* git runs hooks from core.hooksPath (a tracked .githooks, say), runs the
 * core.fsmonitor program, reads the files include.path names as its
 * configuration, and follows a .git/hooks that is a symlink. Those are
 * protected targets of that repository, found by reading its config (and
 * the person's global one) the way git does, one level of includes deep.
 * A few repositories are kept, each checked against its config file's
 * identity at every use. */
#define GIT_NAMED 8
#define GIT_CACHE 4
#define GIT_CONFIG_MAX (256 << 10)

struct git_named {
    char *dir;                /* the folder the lookup began in */
    char *root;               /* the worktree found above it ("" none) */
    char *cfg;                /* the config read ("" none) */
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    off_t size;
    char *tree[GIT_NAMED];    /* folders git runs what lies in */
    char *file[GIT_NAMED];    /* files git runs or reads as config */
    size_t ntree, nfile;
};

static void named_clear(struct git_named *g)
{
    free(g->dir), free(g->root), free(g->cfg);
    for (size_t i = 0; i < g->ntree; i++)
        free(g->tree[i]);
    for (size_t i = 0; i < g->nfile; i++)
        free(g->file[i]);
    memset(g, 0, sizeof *g);
}

/* path made absolute against base, its links resolved where it exists. */
static char *resolve_against(const char *base, const char *v)
{
    char *abs = v[0] == '/' ? sg_xstrdup(v)
                : !strncmp(v, "~/", 2) && sg_invoking_home()
                    ? sg_xasprintf("%s/%s", sg_invoking_home(), v + 2)
                    : sg_xasprintf("%s/%s", base, v);
    char *real = realpath(abs, NULL);
    if (real) {
        free(abs);
        return real;
    }
    sg_path_normalize(abs);
    return abs;
}

static void add_named(char **v, size_t *n, char *path)
{
    if (*n < GIT_NAMED)
        v[(*n)++] = path;
    else
        free(path);
}

/* The keys of cfg that name what git runs or reads: core.hooksPath and
 * core.fsmonitor (relative to the worktree root), include.path and
 * includeIf.*.path (relative to the config's folder). */
static void read_git_config(const char *cfg, const char *root, struct git_named *g, int depth)
{
    FILE *f = fopen(cfg, "re");
    if (!f)
        return;
    cleanup_free char *dir = sg_xstrdup(cfg);
    char *sl = strrchr(dir, '/');
    if (sl)
        *sl = '\0';
    char line[4096], section[64] = "";
    size_t read = 0;
    while (fgets(line, sizeof line, f) && (read += strlen(line)) < GIT_CONFIG_MAX) {
        char *l = line + strspn(line, " \t");
        if (*l == '[') {
            snprintf(section, sizeof section, "%.*s", (int)strcspn(l + 1, " \t\"]"), l + 1);
            continue;
        }
        char *eq = strchr(l, '=');
        if (!eq || *l == '#' || *l == ';')
            continue;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(l, " \t="), l);
        char *v = eq + 1 + strspn(eq + 1, " \t\"");
        v[strcspn(v, "\"\r\n#;")] = '\0';
        for (size_t k = strlen(v); k && (v[k - 1] == ' ' || v[k - 1] == '\t'); k--)
            v[k - 1] = '\0';
        if (!*v)
            continue;
        bool core = !strcasecmp(section, "core");
        bool incl = !strcasecmp(section, "include") || !strcasecmp(section, "includeIf");
        if (core && !strcasecmp(key, "hooksPath"))
            add_named(g->tree, &g->ntree, resolve_against(root, v));
        else if (core && !strcasecmp(key, "fsmonitor") && strcasecmp(v, "true") &&
                 strcasecmp(v, "false"))
            add_named(g->file, &g->nfile, resolve_against(root, v));
        else if (incl && !strcasecmp(key, "path")) {
            char *inc = resolve_against(dir, v);
            if (depth == 0)
                read_git_config(inc, root, g, 1);
            add_named(g->file, &g->nfile, inc);
        }
    }
    fclose(f);
}

/* The repository whose worktree holds dir: its root, and its config. */
static bool find_repo(const char *dir, char **root, char **cfg, char **gitdir)
{
    cleanup_free char *d = sg_xstrdup(dir);
    for (int depth = 0; depth < 256 && d[0] == '/'; depth++) {
        cleanup_free char *dotgit = sg_xasprintf("%s/.git", strcmp(d, "/") ? d : "");
        struct stat st;
        if (lstat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
            char *gd = NULL;
            if (S_ISREG(st.st_mode)) { /* "gitdir: PATH": a worktree or submodule */
                FILE *f = fopen(dotgit, "re");
                char line[PATH_MAX];
                if (f && fgets(line, sizeof line, f) && !strncmp(line, "gitdir:", 7)) {
                    char *v = line + 7 + strspn(line + 7, " \t");
                    v[strcspn(v, "\r\n")] = '\0';
                    gd = resolve_against(d, v);
                }
                if (f)
                    fclose(f);
            }
            if (!gd)
                gd = sg_xstrdup(dotgit);
            cleanup_free char *common = sg_xasprintf("%s/commondir", gd);
            FILE *c = fopen(common, "re");
            char line[PATH_MAX];
            cleanup_free char *base = NULL;
            if (c && fgets(line, sizeof line, c)) {
                line[strcspn(line, "\r\n")] = '\0';
                base = resolve_against(gd, line);
            }
            if (c)
                fclose(c);
            *cfg = sg_xasprintf("%s/config", base ? base : gd);
            *root = sg_xstrdup(d);
            *gitdir = gd;
            return true;
        }
        if (!strcmp(d, "/"))
            break;
        char *sl = strrchr(d, '/');
        *(sl == d ? sl + 1 : sl) = '\0';
    }
    return false;
}

static struct git_named *lookup_repo(const char *dir)
{
    static _Thread_local struct git_named cache[GIT_CACHE];
    static _Thread_local size_t next;
    struct git_named *g = NULL;
    struct stat st = {0};
    for (size_t i = 0; i < GIT_CACHE && !g; i++)
        if (cache[i].dir && !strcmp(cache[i].dir, dir))
            g = &cache[i];
    /* the same repository, with the same config as last time: kept (a
     * repository made since, nearer, has a config that was asked for) */
    if (g && !g->root[0])
        return g; /* no repository above: a .git made since was a question of its own */
    if (g && g->root[0]) {
        cleanup_free char *dotgit = sg_xasprintf("%s/.git", g->root);
        struct stat ds;
        if (lstat(dotgit, &ds) == 0 && stat(g->cfg, &st) == 0 && g->dev == st.st_dev &&
            g->ino == st.st_ino && g->size == st.st_size &&
            g->mtime.tv_sec == st.st_mtim.tv_sec && g->mtime.tv_nsec == st.st_mtim.tv_nsec)
            return g;
    }
    cleanup_free char *root = NULL, *cfg = NULL, *gitdir = NULL;
    bool repo = find_repo(dir, &root, &cfg, &gitdir);
    bool have = repo && stat(cfg, &st) == 0;
    if (!g)
        g = &cache[next++ % GIT_CACHE];
    named_clear(g);
    g->dir = sg_xstrdup(dir);
    g->root = sg_xstrdup(repo ? root : "");
    g->cfg = sg_xstrdup(repo ? cfg : "");
    if (!repo)
        return g;
    if (have) {
        g->dev = st.st_dev, g->ino = st.st_ino, g->size = st.st_size, g->mtime = st.st_mtim;
        read_git_config(cfg, root, g, 0);
    }
    /* the person's own configuration can name a hooks folder too */
    const char *home = sg_invoking_home();
    if (home && home[0] == '/') {
        cleanup_free char *gc = sg_xasprintf("%s/.gitconfig", home);
        cleanup_free char *xc = sg_xasprintf("%s/.config/git/config", home);
        read_git_config(gc, root, g, 0);
        read_git_config(xc, root, g, 0);
    }
    cleanup_free char *hooks = sg_xasprintf("%s/hooks", gitdir);
    if (lstat(hooks, &st) == 0 && S_ISLNK(st.st_mode))
        add_named(g->tree, &g->ntree, resolve_against(gitdir, "hooks"));
    return g;
}

static const char *named_by_git(const char *path)
{
    cleanup_free char *dir = sg_xstrdup(path);
    char *sl = strrchr(dir, '/');
    if (!sl)
        return NULL;
    *(sl == dir ? sl + 1 : sl) = '\0';
    const struct git_named *g = lookup_repo(dir);
    for (size_t i = 0; i < g->ntree; i++) {
        size_t n = strlen(g->tree[i]);
        if (!strncmp(path, g->tree[i], n) && (path[n] == '/' || path[n] == '\0'))
            return "git runs its hooks from there (its configuration's core.hooksPath, or a "
                   ".git/hooks that leads there)";
    }
    for (size_t i = 0; i < g->nfile; i++)
        if (!strcmp(path, g->file[i]))
            return "git runs it or reads it as its configuration (core.fsmonitor, "
                   "include.path)";
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
