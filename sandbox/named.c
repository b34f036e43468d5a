/* Files a person names on a script's command line (named.h). */
#include "named.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "util.h"

static const char named_why[] = "named on the command line: this file only, read-only for "
                                "this run";

/* The path an argument names: the argument, or an option's value
 * (--in=PATH); NULL when it names none. */
static const char *path_part(const char *arg)
{
    if (arg[0] == '-') {
        const char *eq = strchr(arg, '=');
        return eq && eq[1] ? eq + 1 : NULL;
    }
    return arg[0] ? arg : NULL;
}

static void unshown(struct sg_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unshown(struct sg_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sg_xvasprintf(fmt, ap);
    va_end(ap);
    p->unshown = sg_xrealloc(p->unshown, (p->nunshown + 1) * sizeof *p->unshown);
    p->unshown[p->nunshown++] = s;
}

static void bind_named(struct sg_plan *p, const char *real, const char *dst, const struct stat *st)
{
    p->mounts = sg_xrealloc(p->mounts, (p->nmounts + 1) * sizeof *p->mounts);
    struct sg_mount *m = &p->mounts[p->nmounts++];
    memset(m, 0, sizeof *m);
    m->kind = SG_MNT_BIND_RO;
    m->src = sg_xstrdup(real);
    m->dst = sg_xstrdup(dst);
    m->named = true;
    /* pinned as the object the masks were checked against (its real path
     * when it was read), not whatever that path names at the end of the
     * plan: a folder on the way swapped for a link to ~/.ssh meanwhile
     * would be bound, with the masks judged on the old path */
    m->planned = true, m->pdev = st->st_dev, m->pino = st->st_ino;
    m->why = sg_xstrdup(named_why);
}

/* A named file never shown: recorded as a named mask, which
 * sg_plan_named_check turns into the run's refusal. */
static void refuse(struct sg_plan *p, const char *dst, const char *why)
{
    p->mounts = sg_xrealloc(p->mounts, (p->nmounts + 1) * sizeof *p->mounts);
    struct sg_mount *m = &p->mounts[p->nmounts++];
    memset(m, 0, sizeof *m);
    m->kind = SG_MNT_MASK;
    m->dst = sg_xstrdup(dst);
    m->named = true;
    m->why = sg_xstrdup(why);
}

static size_t named_count(const struct sg_plan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nmounts; i++)
        n += p->mounts[i].named;
    return n;
}

/* Nothing there: a file the script is to write, or a word that is no
 * path. Said only for a path whose folder exists and is not in view. */
static void missing(struct sg_plan *p, const char *arg, const char *abs)
{
    cleanup_free char *dir = sg_xstrdup(abs);
    char *sl = strrchr(dir, '/');
    if (sl && sl != dir)
        *sl = '\0';
    struct stat st;
    if (!strchr(arg, '/') || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || sg_plan_shows(p, dir))
        return;
    unshown(p, "%s: nothing is there, and its folder %s is not in the skill's view, so a file "
            "the script writes there fails; run from that folder (cd, or --cwd DIR) or declare "
            "it (filesystem.write)", arg, dir);
}

/* One argument: bind the regular file it names when the view lacks it. */
static void name_one(struct sg_plan *p, const char *from, const char *arg)
{
    const char *s = path_part(arg);
    if (!s)
        return;
    cleanup_free char *abs = s[0] == '/' ? sg_xstrdup(s) : sg_xasprintf("%s/%s", from, s);
    if (strlen(abs) >= PATH_MAX || sg_path_normalize(abs) < 0)
        return; /* no path the kernel would open */
    cleanup_free char *real = realpath(abs, NULL);
    struct stat st;
    if (!real || stat(real, &st) < 0)
        return missing(p, s, abs);
    if (sg_plan_shows(p, abs) && sg_plan_shows(p, real))
        return; /* in view already: the working folder, the skill's, /usr, ... */
    /* a link the skill ships in its own folder names what its author chose,
     * not the person: samples/x.yml -> ../../../.config/gh/hosts.yml would
     * show the token to the skill whose usage line names samples/x.yml */
    cleanup_free char *root = sg_path_real(p->skill_root);
    if (sg_path_within(abs, p->skill_root) || (root && sg_path_within(abs, root)))
        return unshown(p, "%s is a link in the skill's own folder that leads out of it (to %s): "
                       "not shown; name the file it leads to yourself", s, real);
    const char *secret = sg_plan_secret_place(p, abs, real);
    if (secret)
        return refuse(p, abs, secret);
    if (!S_ISREG(st.st_mode))
        return unshown(p, "%s is %s outside the skill's view: only files named are shown; run "
                       "from it (cd, or --cwd DIR) or declare it (filesystem.read)", s,
                       S_ISDIR(st.st_mode) ? "a folder" : "no regular file");
    for (size_t i = 0; i < p->nmounts; i++)
        if (p->mounts[i].named && !strcmp(p->mounts[i].src, real))
            return; /* named twice */
    if (named_count(p) >= SG_NAMED_MAX)
        return unshown(p, "%s is not shown: more than %d files are named; run from their "
                       "folder (cd, or --cwd DIR)", s, SG_NAMED_MAX);
    /* at the path named, unless a host folder in view holds that name (a
     * link there then leads to the real path, bound instead) */
    bind_named(p, real, sg_plan_shows(p, abs) ? real : abs, &st);
}

void sg_plan_named_mounts(struct sg_plan *p, const struct sg_run_opts *o)
{
    const char *from = p->cwd ? p->cwd : p->skill_root;
    for (size_t i = 0; !p->wrap && !o->no_named && i < o->nargs; i++)
        name_one(p, from, o->args[i]);
}

int sg_plan_named_check(const struct sg_plan *p, const char **why)
{
    static char msg[PATH_MAX + 256];
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (!m->named || m->kind != SG_MNT_MASK)
            continue;
        snprintf(msg, sizeof msg, "%s, named on the command line, is not shown to the skill: %s; "
                 "copy the file the script needs to another folder", m->dst, m->why);
        *why = msg;
        return -EPERM;
    }
    return 0;
}
