#include "discover.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "config.h"
#include "openclaw.h"
#include "skill.h"
#include "util.h"

static const char *const source_names[] = {
#define X(id, name, desc) [SG_SRC_##id] = name,
    SG_SOURCES(X)
#undef X
};
static const char *const source_descs[] = {
#define X(id, name, desc) [SG_SRC_##id] = desc,
    SG_SOURCES(X)
#undef X
};

const char *sg_source_name(enum sg_source s)
{
    return source_names[s];
}

const char *sg_source_desc(enum sg_source s)
{
    return source_descs[s];
}

/* Directories already visited, by (dev, inode): breaks symlink loops and
 * keeps a place reached twice (cwd == home) from listing its skills twice. */
struct seen {
    uint64_t *keys; /* open addressing; 0 = empty */
    size_t cap, n;
};

static uint64_t seen_key(const struct stat *st)
{
    uint64_t k = ((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)st->st_ino;
    return k ? k : 1;
}

/* Returns true when newly added. */
static bool seen_add(struct seen *s, const struct stat *st)
{
    if (s->n * 2 >= s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        uint64_t *nk = sg_xcalloc(nc, sizeof *nk);
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->keys[i])
                continue;
            size_t j = s->keys[i] & (nc - 1);
            while (nk[j])
                j = (j + 1) & (nc - 1);
            nk[j] = s->keys[i];
        }
        free(s->keys);
        s->keys = nk;
        s->cap = nc;
    }
    uint64_t k = seen_key(st);
    size_t j = k & (s->cap - 1);
    while (s->keys[j]) {
        if (s->keys[j] == k)
            return false;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = k;
    s->n++;
    return true;
}

struct ctx {
    struct sg_discovery *out;
    struct seen seen;
    bool dir_cap_warned;
    const char *openclaw; /* the place being scanned, when it is OpenClaw's */
};

static bool count_dir(struct ctx *c, const char *path)
{
    if (++c->out->dirs_visited <= SG_DISCOVER_MAX_DIRS)
        return true;
    if (!c->dir_cap_warned)
        sg_diag_add(&c->out->diags, SG_WARNING, path, 0, 0, NULL,
                    "stopped after visiting %d directories", SG_DISCOVER_MAX_DIRS);
    c->dir_cap_warned = true;
    return false;
}

/* Sorted names of the subdirectories of path worth descending into
 * (no dot-folders, no node_modules). */
static size_t subdirs(struct ctx *c, const char *path, char ***out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t n = 0;
    int r = fd < 0 ? -errno : sg_list_dir_fd(fd, SG_LIST_DIRS, SIZE_MAX, out, &n);
    if (r < 0) {
        sg_diag_add(&c->out->diags, SG_WARNING, path, 0, 0, NULL, "cannot read: %s",
                    strerror(-r));
        return 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp((*out)[i], "node_modules") == 0)
            free((*out)[i]);
        else
            (*out)[kept++] = (*out)[i];
    }
    return kept;
}

static void add_skill(struct ctx *c, const char *path, enum sg_source src,
                      const struct sg_plugin *pl)
{
    struct sg_skill *sk = NULL;
    int r = sg_skill_load_found(path, c->openclaw, &sk);
    if (r < 0) {
        if (r != -ENODATA)
            sg_diag_add(&c->out->diags, SG_WARNING, path, 0, 0, NULL, "cannot load: %s",
                        strerror(-r));
        return;
    }
    struct sg_discovery *o = c->out;
    sg_grow(&o->v, &o->cap, o->n + 1, sizeof *o->v);
    const char *base = sk->name ? sk->name : sk->dirname;
    char *name = pl ? sg_xasprintf("%s:%s", pl->name, base) : sg_xstrdup(base);
    o->v[o->n++] = (struct sg_found){
        .skill = sk, .source = src, .shadowed_by = SIZE_MAX, .name = name, .plugin = pl};
}

static bool is_skill_dir(const char *path)
{
    char buf[PATH_MAX];
    struct stat st;
    snprintf(buf, sizeof buf, "%s/SKILL.md", path);
    if (lstat(buf, &st) == 0)
        return true;
    snprintf(buf, sizeof buf, "%s/skillsandbox.yaml", path);
    return lstat(buf, &st) == 0;
}

/* A skills directory: a skill itself, or folders holding skills (nested
 * categories allowed, a skill's own subfolders never searched). */
static void scan(struct ctx *c, const char *path, enum sg_source src, int depth,
                 const struct sg_plugin *pl)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    if (!seen_add(&c->seen, &st) || !count_dir(c, path))
        return;
    if (is_skill_dir(path)) {
        add_skill(c, path, src, pl);
        return;
    }
    if (depth >= SG_DISCOVER_MAX_DEPTH)
        return;
    char **names;
    size_t n = subdirs(c, path, &names);
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *sub = sg_xasprintf("%s/%s", path, names[i]);
        scan(c, sub, src, depth + 1, pl);
        free(names[i]);
    }
    free(names);
}

/* Look for .claude/skills folders below path (not path's own: that one is
 * the project source). */
static void find_nested(struct ctx *c, const char *path, int depth, struct seen *walked)
{
    struct stat st;
    if (depth > SG_DISCOVER_NESTED_DEPTH || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    if (!seen_add(walked, &st) || !count_dir(c, path))
        return;
    if (depth > 0) {
        cleanup_free char *sk = sg_xasprintf("%s/.claude/skills", path);
        scan(c, sk, SG_SRC_NESTED, 0, NULL);
    }
    char **names;
    size_t n = subdirs(c, path, &names);
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *sub = sg_xasprintf("%s/%s", path, names[i]);
        find_nested(c, sub, depth + 1, walked);
        free(names[i]);
    }
    free(names);
}

static const struct sg_discovery *sort_ctx;

static int cmp_by_name(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sort_ctx->v[i].name, sort_ctx->v[j].name);
    return c ? c : (i < j ? -1 : i > j);
}

/* Same name twice: the first found (highest precedence) wins. Sorting keeps
 * this O(n log n): 10,000 skills must not cost 50 million comparisons. */
static void mark_shadowing(struct sg_discovery *o)
{
    if (o->n < 2)
        return;
    size_t *idx = sg_xmalloc(o->n * sizeof *idx);
    for (size_t i = 0; i < o->n; i++)
        idx[i] = i;
    sort_ctx = o;
    qsort(idx, o->n, sizeof *idx, cmp_by_name);
    sort_ctx = NULL;
    for (size_t g = 0; g < o->n;) {
        size_t w = idx[g], e = g + 1;
        while (e < o->n && !strcmp(o->v[idx[e]].name, o->v[w].name))
            e++;
        for (size_t k = g + 1; k < e; k++) {
            size_t i = idx[k];
            struct sg_skill *lose = o->v[i].skill, *win = o->v[w].skill;
            o->v[i].shadowed_by = w;
            sg_diag_add(&lose->diags, SG_WARNING,
                        lose->skill_md ? lose->skill_md : lose->sandbox_yaml, 0, 0, "name",
                        "\"%s\" is shadowed by %s (%s), which takes precedence", o->v[i].name,
                        win->display, sg_source_name(o->v[w].source));
            sg_diag_add(&win->diags, SG_WARNING,
                        win->skill_md ? win->skill_md : win->sandbox_yaml, 0, 0, "name",
                        "\"%s\" shadows %s (%s)", o->v[w].name, lose->display,
                        sg_source_name(o->v[i].source));
        }
        g = e;
    }
    free(idx);
}

/* One of OpenClaw's places below the home; a '*' component is each
 * folder there whose name it matches (sorted, at most
 * SG_OPENCLAW_AGENTS_MAX). */
static void scan_one_place(struct ctx *c, const char *home, const char *rel,
                           enum sg_source src)
{
    cleanup_free char *p = sg_xasprintf("%s/%s", home, rel);
    cleanup_free char *why = sg_xasprintf("found in ~/%s, where OpenClaw keeps skills", rel);
    c->openclaw = why;
    scan(c, p, src, 0, NULL);
    c->openclaw = NULL;
}

static void scan_place(struct ctx *c, const char *home, const char *rel, enum sg_source src)
{
    const char *star = strchr(rel, '*');
    if (!star) {
        scan_one_place(c, home, rel, src);
        return;
    }
    const char *cs = star;
    while (cs > rel && cs[-1] != '/')
        cs--;
    const char *ce = star + strcspn(star, "/");
    cleanup_free char *parent = sg_xasprintf("%s/%.*s", home, (int)(cs - rel), rel);
    cleanup_free char *pat = sg_xstrndup(cs, (size_t)(ce - cs));
    char **names = NULL;
    size_t n = 0, taken = 0;
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the list closes it */
    if (fd < 0 || sg_list_dir_fd(fd, SG_LIST_DIRS, SG_DISCOVER_MAX_DIRS, &names, &n) < 0)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        if (taken < SG_OPENCLAW_AGENTS_MAX && fnmatch(pat, names[i], FNM_PERIOD) == 0) {
            taken++;
            cleanup_free char *one = sg_xasprintf("%.*s%s%s", (int)(cs - rel), rel, names[i], ce);
            scan_one_place(c, home, one, src); /* a '*' in a name is that name */
        }
        free(names[i]);
    }
    free(names);
}

/* OpenClaw's places below the home in its order (openclaw.h), with
 * ~/.agents/skills, which it reads between its workspace and its managed
 * skills. Its default workspace is the agent's working folder: left out
 * when only the person's own places count. */
static void scan_openclaw_home(struct ctx *c, const char *home, bool persons_only)
{
    static const struct {
        const char *rel;
        bool ws;
    } places[] = {
#define X(rel, ws) {rel, ws},
        SG_OPENCLAW_PLACES(X)
#undef X
    };
    bool agents_done = false;
    for (size_t i = 0; i < SG_ARRAY_LEN(places); i++) {
        if (!places[i].ws && !agents_done) {
            cleanup_free char *a = sg_xasprintf("%s/.agents/skills", home);
            scan(c, a, SG_SRC_SHARED, 0, NULL);
            agents_done = true;
        }
        if (places[i].ws && persons_only)
            continue;
        scan_place(c, home, places[i].rel, places[i].ws ? SG_SRC_OPENCLAW : SG_SRC_SHARED);
    }
}

int sg_discover(const struct sg_discover_opts *o, struct sg_discovery *out)
{
    memset(out, 0, sizeof *out);
    struct ctx c = {.out = out};
    for (size_t i = 0; i < o->ndirs; i++) {
        struct stat st;
        int e = stat(o->dirs[i], &st) < 0 ? errno : 0;
        if (e || !S_ISDIR(st.st_mode)) {
            sg_diag_add(&out->diags, SG_ERROR, o->dirs[i], 0, 0, NULL, "%s",
                        e == ENOENT ? "does not exist"
                        : e         ? strerror(e)
                                    : "not a folder (list takes folders of skills)");
            continue;
        }
        scan(&c, o->dirs[i], SG_SRC_CLI, 0, NULL);
    }
    if (o->defaults) {
        const char *home = o->home ? o->home : sg_invoking_home();
        char cwdbuf[PATH_MAX];
        const char *cwd = o->persons_only ? NULL
                          : o->cwd        ? o->cwd
                                          : getcwd(cwdbuf, sizeof cwdbuf);
        if (home) {
            cleanup_free char *p = sg_xasprintf("%s/.claude/skills", home);
            scan(&c, p, SG_SRC_USER, 0, NULL);
        }
        cleanup_free char *cfgpath = o->config_file ? sg_xstrdup(o->config_file)
                                                    : sg_config_default_path();
        struct sg_config cfg;
        sg_config_load(cfgpath, &cfg, &out->diags);
        for (size_t i = 0; i < cfg.nskill_dirs; i++)
            scan(&c, cfg.skill_dirs[i], SG_SRC_CONFIG, 0, NULL);
        sg_config_free(&cfg);
        if (cwd) {
            cleanup_free char *p = sg_xasprintf("%s/.claude/skills", cwd);
            scan(&c, p, SG_SRC_PROJECT, 0, NULL);
            struct seen walked = {0};
            find_nested(&c, cwd, 0, &walked);
            free(walked.keys);
            /* where OpenClaw (and clawhub install) keep a workspace's skills */
            static const char *const ws[] = {"skills", ".agents/skills"};
            for (size_t i = 0; i < SG_ARRAY_LEN(ws); i++) {
                cleanup_free char *w = sg_xasprintf("%s/%s", cwd, ws[i]);
                cleanup_free char *why =
                    sg_xasprintf("found in ./%s, where OpenClaw keeps a workspace's skills", ws[i]);
                c.openclaw = why;
                scan(&c, w, SG_SRC_WORKSPACE, 0, NULL);
                c.openclaw = NULL;
            }
        }
        if (home)
            scan_openclaw_home(&c, home, o->persons_only);
        if (home) {
            sg_plugins_load(home, cwd, &out->plugins, &out->diags);
            for (size_t i = 0; i < out->plugins.n; i++) {
                const struct sg_plugin *pl = &out->plugins.v[i];
                for (size_t k = 0; k < pl->nskill_paths; k++)
                    scan(&c, pl->skill_paths[k], SG_SRC_PLUGIN, 0, pl);
            }
        }
    }
    free(c.seen.keys);
    mark_shadowing(out);
    return 0;
}

/* The name of the folder a skill was found in, as the place holds it (a
 * symlink's own name, not its target's). */
static const char *installed_as(const struct sg_found *f)
{
    const char *slash = strrchr(f->skill->display, '/');
    return slash && slash[1] ? slash + 1 : f->skill->display;
}

size_t sg_discovery_find(const struct sg_discovery *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].shadowed_by == SIZE_MAX && !strcmp(d->v[i].name, name))
            return i;
    /* the folder it was installed as: ClawHub's slug, which `clawhub
     * install` names the folder and the skill's name need not be */
    return sg_discovery_find_folder(d, name);
}

static int place_kind(enum sg_source s)
{
    return s == SG_SRC_PROJECT || s == SG_SRC_NESTED ? 1 : s == SG_SRC_USER || s == SG_SRC_SHARED ? 2 : 0;
}

size_t sg_discovery_ambiguous(const struct sg_discovery *d, size_t i)
{
    int k = place_kind(d->v[i].source);
    for (size_t j = 0; k && j < d->n; j++) {
        int kj = place_kind(d->v[j].source);
        if (d->v[j].shadowed_by == i && kj && kj != k)
            return j;
    }
    return SIZE_MAX;
}

size_t sg_discovery_find_folder(const struct sg_discovery *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].skill && !d->v[i].plugin && !strcmp(installed_as(&d->v[i]), name))
            return i;
    return SIZE_MAX;
}

size_t sg_discovery_nearest(const struct sg_discovery *d, const char *name)
{
    struct sg_nearest near;
    sg_nearest_init(&near, name);
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].shadowed_by != SIZE_MAX)
            continue;
        const char *n = d->v[i].name, *colon = strrchr(n, ':');
        if (sg_nearest_offer(&near, n))
            best = i;
        if (colon && sg_nearest_offer(&near, colon + 1))
            best = i;
        if (d->v[i].skill && !d->v[i].plugin &&
            sg_nearest_offer(&near, installed_as(&d->v[i])))
            best = i;
    }
    return best;
}

void sg_discovery_free(struct sg_discovery *d)
{
    for (size_t i = 0; i < d->n; i++) {
        sg_skill_free(d->v[i].skill);
        free(d->v[i].name);
    }
    free(d->v);
    sg_plugins_free(&d->plugins);
    sg_diags_free(&d->diags);
    memset(d, 0, sizeof *d);
}
