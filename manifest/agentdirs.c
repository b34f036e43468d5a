/* AI agents' own folders and files (agentdirs.h). */
#include "agentdirs.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "homes.h"
#include "util.h"

static const struct {
    const char *rel, *what, *areas;
} entries[] = {
#define X(rel, what, areas) {rel, what, areas},
    SG_AGENT_PATHS(X)
#undef X
};

static void add(struct sg_agent_paths *ap, size_t *cap, const char *path, size_t e, bool yours)
{
    if (ap->n >= SG_AGENT_PATHS_MAX)
        return;
    for (size_t i = 0; i < ap->n; i++)
        if (!strcmp(ap->v[i].path, path))
            return;
    sg_grow(&ap->v, cap, ap->n + 1, sizeof *ap->v);
    ap->v[ap->n++] = (struct sg_agent_path){.path = sg_xstrdup(path), .real = sg_path_real(path),
                                            .what = entries[e].what,
                                            .areas = entries[e].areas, .yours = yours};
}

static void read_paths(struct sg_agent_paths *ap);

/* Worked out once per held snapshot of the homes (sg_homes_hold). */
static _Thread_local struct sg_agent_paths cached;
static _Thread_local unsigned cached_gen;

void sg_agent_paths_get(struct sg_agent_paths *ap)
{
    unsigned gen = sg_homes_held();
    if (!gen) {
        read_paths(ap);
        return;
    }
    if (cached_gen != gen) {
        sg_agent_paths_free(&cached);
        read_paths(&cached);
        cached_gen = gen;
    }
    ap->n = cached.n;
    ap->v = sg_xcalloc(cached.n ? cached.n : 1, sizeof *ap->v);
    for (size_t i = 0; i < cached.n; i++) {
        ap->v[i] = cached.v[i];
        ap->v[i].path = sg_xstrdup(cached.v[i].path);
        ap->v[i].real = cached.v[i].real ? sg_xstrdup(cached.v[i].real) : NULL;
    }
}

static void read_paths(struct sg_agent_paths *ap)
{
    memset(ap, 0, sizeof *ap);
    size_t cap = 0;
    const char *mine = sg_invoking_home();
    if (mine && mine[0] == '/')
        for (size_t e = 0; e < SG_ARRAY_LEN(entries); e++) {
            cleanup_free char *p = sg_xasprintf("%s/%s", strcmp(mine, "/") ? mine : "",
                                                entries[e].rel);
            add(ap, &cap, p, e, true);
        }
    struct sg_homes hs;
    sg_homes_get(&hs);
    for (size_t h = 0; h < hs.n; h++)
        for (size_t e = 0; e < SG_ARRAY_LEN(entries); e++) {
            cleanup_free char *p = sg_xasprintf("%s/%s", hs.v[h].real, entries[e].rel);
            struct stat st;
            if (hs.v[h].yours || lstat(p, &st) == 0)
                add(ap, &cap, p, e, hs.v[h].yours);
        }
    sg_homes_free(&hs);
    static const struct {
        const char *var, *like;
    } env[] = {
#define X(var, like) {var, like},
        SG_AGENT_ENV(X)
#undef X
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(env); i++) {
        const char *v = secure_getenv(env[i].var);
        if (!v || v[0] != '/' || !strcmp(v, "/"))
            continue; /* relative or "/": nothing a bind would name */
        cleanup_free char *norm = sg_path_real(v); /* "..", "//" and links resolved */
        if (!norm || !strcmp(norm, "/"))
            continue;
        for (size_t e = 0; e < SG_ARRAY_LEN(entries); e++)
            if (!strcmp(entries[e].rel, env[i].like))
                add(ap, &cap, norm, e, true);
    }
}

void sg_agent_paths_free(struct sg_agent_paths *ap)
{
    for (size_t i = 0; i < ap->n; i++) {
        free(ap->v[i].path);
        free(ap->v[i].real);
    }
    free(ap->v);
    memset(ap, 0, sizeof *ap);
}

bool sg_path_within_pattern(const char *path, const char *dir, const char *rel)
{
    if (!sg_path_within(path, dir))
        return false;
    const char *r = path + (strcmp(dir, "/") ? strlen(dir) : 0);
    if (*r != '/')
        return false;
    r++;
    size_t k = 1, seen = 0;
    for (const char *p = rel; *p; p++)
        k += *p == '/';
    const char *e = r;
    for (; *e; e++)
        if (*e == '/' && ++seen == k)
            break;
    cleanup_free char *head = sg_xstrndup(r, (size_t)(e - r));
    return fnmatch(rel, head, FNM_PATHNAME | FNM_PERIOD) == 0;
}

bool sg_agent_path_in_skills(const struct sg_agent_path *a, const char *real)
{
    for (const char *s = a->areas; *s;) {
        size_t l = strcspn(s, " ");
        if (l) {
            cleanup_free char *area = sg_xstrndup(s, l);
            if (sg_path_within_pattern(real, a->real, area))
                return true;
        }
        s += l;
        s += *s == ' ';
    }
    return false;
}

enum sg_agent_rel sg_agent_paths_relation(const struct sg_agent_paths *ap, const char *path,
                                          const char *own_root,
                                          const struct sg_agent_path **which)
{
    if (which)
        *which = NULL;
    if (!path || path[0] != '/')
        return SG_AGENT_NONE;
    cleanup_free char *real = sg_path_real(path);
    cleanup_free char *own = own_root ? sg_path_real(own_root) : NULL;
    enum sg_agent_rel best = SG_AGENT_NONE;
    for (size_t i = 0; i < ap->n; i++) {
        const struct sg_agent_path *a = &ap->v[i];
        if (sg_path_within(path, a->path) || sg_path_within(real, a->real)) {
            /* the skill's own files, where the agent keeps its skills */
            if (own && sg_path_within(real, own) && sg_agent_path_in_skills(a, own))
                continue;
            if (which && (best != SG_AGENT_INSIDE || (a->yours && !(*which)->yours)))
                *which = a;
            best = SG_AGENT_INSIDE;
        } else if (best == SG_AGENT_NONE &&
                   (sg_path_within(a->path, path) || sg_path_within(a->real, real))) {
            if (which)
                *which = a;
            best = SG_AGENT_HOLDS;
        }
    }
    return best;
}
