#include "resolve.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

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
    if (i != SIZE_MAX)
        *out = steal_pointer(&d.v[i].skill);
    if (dout)
        *dout = d;
    else
        sg_discovery_free(&d);
    return *out ? 0 : -ENOENT;
}
