/* Declared host unix sockets in the plan (hostsock.h). */
#include "hostsock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

static char *origin_text(const struct sg_origin *o)
{
    return sg_xasprintf("%s:%d:%d %s", o->file ? o->file : "?", o->line, o->col,
                        o->field ? o->field : "");
}

int sg_plan_sockets(struct sg_plan *p, const struct sg_policy *pol, const char **why)
{
    static char msg[PATH_MAX + 128];
    if (!pol->nsockets)
        return 0;
    p->sockets = sg_xcalloc(pol->nsockets, sizeof *p->sockets);
    for (size_t i = 0; i < pol->nsockets; i++) {
        struct sg_plan_socket *s = &p->sockets[p->nsockets++];
        s->path = sg_xstrdup(pol->sockets[i].path);
        s->origin = origin_text(&pol->sockets[i].origin);
        s->fd = -1;
        struct stat st;
        /* the person's own path, as the kernel follows it; held, since a
         * freed inode's number is given to the next file made there (a
         * socket replaced at the same path would have the same one) */
        s->fd = open(s->path, O_PATH | O_CLOEXEC);
        if (s->fd < 0 || fstat(s->fd, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue; /* nothing to pin: the skill finds nothing there */
            int e = -errno;
            snprintf(msg, sizeof msg, "declared socket %.*s cannot be looked at: %s",
                     PATH_MAX, s->path, strerror(-e));
            *why = msg;
            return e;
        }
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(msg, sizeof msg, "declared socket %.*s is not a unix socket", PATH_MAX,
                     s->path);
            *why = msg;
            return -ENOTSOCK;
        }
        s->present = true;
        s->dev = st.st_dev, s->ino = st.st_ino, s->uid = st.st_uid;
        s->mode = st.st_mode & 07777;
    }
    return 0;
}

void sg_plan_sockets_mounts(struct sg_plan *p)
{
    for (size_t i = 0; i < p->nsockets; i++) {
        struct sg_plan_socket *s = &p->sockets[i];
        if (!s->present || sg_plan_shows(p, s->path))
            continue;
        p->mounts = sg_xrealloc(p->mounts, (p->nmounts + 1) * sizeof *p->mounts);
        struct sg_mount *m = &p->mounts[p->nmounts++];
        memset(m, 0, sizeof *m);
        m->kind = SG_MNT_BIND_RO;
        m->src = sg_xstrdup(s->path);
        m->dst = sg_xstrdup(s->path);
        m->declared = true;
        m->why = sg_xstrdup("declared host socket (permissions.unix_sockets): this socket "
                            "file only");
        s->bound = true;
    }
}

void sg_plan_sockets_free(struct sg_plan *p)
{
    for (size_t i = 0; i < p->nsockets; i++) {
        free(p->sockets[i].path);
        free(p->sockets[i].origin);
        if (p->sockets[i].fd >= 0)
            close(p->sockets[i].fd);
    }
    free(p->sockets);
    p->sockets = NULL, p->nsockets = 0;
}

const struct sg_plan_socket *sg_plan_socket_find(const struct sg_plan *p, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < p->nsockets; i++)
        if (p->sockets[i].present && p->sockets[i].dev == dev && p->sockets[i].ino == ino)
            return &p->sockets[i];
    return NULL;
}
