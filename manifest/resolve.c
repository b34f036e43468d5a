#include "resolve.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "sanitize.h"
#include "util.h"

int sg_skill_resolve(const char *arg, const char *cwd, struct sg_skill **out,
                     struct sg_discovery *dout, bool *path_given)
{
    *out = NULL;
    struct stat st;
    bool path = strchr(arg, '/') || !*arg || lstat(arg, &st) == 0;
    if (path_given)
        *path_given = path;
    if (dout)
        memset(dout, 0, sizeof *dout);
    if (path)
        return sg_skill_load(arg, out);
    struct sg_discover_opts o = {.defaults = true, .cwd = cwd};
    struct sg_discovery d;
    sg_discover(&o, &d);
    size_t i = sg_discovery_find(&d, arg);
    bool ambiguous = i != SIZE_MAX && sg_discovery_ambiguous(&d, i) != SIZE_MAX;
    if (i != SIZE_MAX && !ambiguous)
        *out = steal_pointer(&d.v[i].skill);
    if (dout)
        *dout = d;
    else
        sg_discovery_free(&d);
    return *out ? 0 : ambiguous ? -ENOTUNIQ : -ENOENT;
}

char *sg_resolve_ambiguous(const struct sg_discovery *d, const char *arg)
{
    size_t i = sg_discovery_find(d, arg);
    size_t j = i == SIZE_MAX ? SIZE_MAX : sg_discovery_ambiguous(d, i);
    if (j == SIZE_MAX)
        return sg_xstrdup("the name is not one skill's");
    cleanup_free char *a = sg_sanitize_str(arg, 0);
    cleanup_free char *p = sg_sanitize_str(d->v[i].skill->display, 0);
    cleanup_free char *q = sg_sanitize_str(d->v[j].skill->display, 0);
    return sg_xasprintf("\"%s\" names two skills, %s (%s) and %s (%s): one is the working "
                        "folder's and one your own, and skillgate does not choose between them; "
                        "name the one you mean by its path",
                        a, p, sg_source_desc(d->v[i].source), q, sg_source_desc(d->v[j].source));
}
