#include "unshown.h"

#include <string.h>
#include <sys/stat.h>

#include "agentdirs.h"
#include "config.h"
#include "homenamed.h"
#include "openclaw.h"
#include "sanitize.h"
#include "util.h"

/* What the skill names: its SKILL.md's body, then OpenClaw's config list. */
static size_t named(const struct sg_skill *sk, char **v)
{
    char *body = NULL;
    size_t len = 0, n = 0;
    if (sg_skill_read_body(sk, &body, &len) == 0)
        n = sg_home_named(body, len, v, SG_HOMENAMED_MAX);
    free(body);
    for (size_t i = 0; sk->openclaw && i < sk->openclaw->config.n && n < SG_HOMENAMED_MAX; i++) {
        const char *c = sk->openclaw->config.v[i];
        char *one[SG_HOMENAMED_MAX];
        size_t k = sg_home_named(c, strlen(c), one, SG_HOMENAMED_MAX);
        for (size_t j = 0; j < k; j++) {
            bool dup = false;
            for (size_t m = 0; m < n && !dup; m++)
                dup = !strcmp(v[m], one[j]);
            if (dup || n >= SG_HOMENAMED_MAX)
                free(one[j]);
            else
                v[n++] = one[j];
        }
    }
    return n;
}

/* Shown to the run: in the working folder or a declared path. */
static bool shown(const struct sg_skill *sk, const char *path, const char *cwd)
{
    const struct sg_policy *p = &sk->policy;
    if (cwd && sg_path_within(path, cwd))
        return true;
    for (size_t i = 0; i < p->nread; i++)
        if (sg_path_within(path, p->read[i].path))
            return true;
    for (size_t i = 0; i < p->nwrite; i++)
        if (sg_path_within(path, p->write[i].path))
            return true;
    return false;
}

/* Why nothing may show it, or NULL: an agent's folder, a credential place. */
static const char *never(const char *home, const char *path, const struct sg_agent_paths *ap)
{
    const struct sg_agent_path *a = NULL;
    if (sg_agent_paths_relation(ap, path, NULL, &a) == SG_AGENT_INSIDE)
        return a->what;
    for (size_t i = 0; sg_sensitive_home_paths[i]; i++) {
        cleanup_free char *m = sg_xasprintf("%s/%s", home, sg_sensitive_home_paths[i]);
        if (sg_path_within(path, m))
            return "a masked place (credentials, shell start files)";
    }
    return NULL;
}

static void say(FILE *f, const char *rel, const char *why)
{
    cleanup_free char *r = sg_sanitize_str(rel, 0);
    if (why)
        fprintf(f, "skillgate: the skill's SKILL.md names ~/%s, which is in your home and was "
                   "not in the sandbox: %s is never shown to a skill; what the skill needs "
                   "from it goes in a variable (--env NAME) or a file in the working folder\n",
                r, why);
    else
        fprintf(f, "skillgate: the skill's SKILL.md names ~/%s, which is in your home and was "
                   "not in the sandbox (its HOME is private): a read path in skillsandbox.yaml "
                   "(permissions.filesystem.read: [\"~/%s\"]) shows it read-only\n", r, r);
}

void sg_unshown_print(FILE *f, const struct sg_skill *sk, const char *cwd)
{
    const char *home = sg_invoking_home();
    char *v[SG_HOMENAMED_MAX];
    size_t n = home ? named(sk, v) : 0, said = 0;
    struct sg_agent_paths ap = {0};
    if (n)
        sg_agent_paths_get(&ap);
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *path = sg_xasprintf("%s/%s", home, v[i]);
        struct stat st;
        const char *why = NULL;
        if (said < SG_UNSHOWN_SAID && lstat(path, &st) == 0 &&
            ((why = never(home, path, &ap)) || !shown(sk, path, cwd))) {
            say(f, v[i], why);
            said++;
        }
        free(v[i]);
    }
    sg_agent_paths_free(&ap);
}
