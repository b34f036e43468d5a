/* What a skill left in its private views (views.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sanitize.h"
#include "util.h"
#include "views.h"
#include "writes.h"

static bool later(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

typedef void (*visit_fn)(void *ctx, const char *rel, const struct stat *st);

/* Every entry beneath the view's root fd (not the root itself), depth
 * first, on the root's own filesystem only. Returns the entries visited, or
 * SG_VIEWS_MAX_ENTRIES + 1 when the walk stopped at the cap. */
static size_t walk(int root, visit_fn fn, void *ctx)
{
    struct stat rst;
    if (fstat(root, &rst) < 0)
        return 0;
    struct frame {
        DIR *d;
        size_t len; /* of rel at this level */
    } stack[SG_VIEWS_MAX_DEPTH];
    int depth = 0;
    char rel[PATH_MAX] = "";
    int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    stack[0] = (struct frame){fd >= 0 ? fdopendir(fd) : NULL, 0};
    if (!stack[0].d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t seen = 0;
    while (depth >= 0) {
        struct frame *f = &stack[depth];
        struct dirent *e = readdir(f->d);
        if (!e) {
            closedir(f->d);
            depth--;
            continue;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++seen > SG_VIEWS_MAX_ENTRIES) {
            while (depth >= 0)
                closedir(stack[depth--].d);
            return seen;
        }
        int n = snprintf(rel + f->len, sizeof rel - f->len, "%s%s", f->len ? "/" : "", e->d_name);
        if (n < 0 || (size_t)n >= sizeof rel - f->len)
            continue; /* deeper than a path can name */
        struct stat st;
        if (fstatat(dirfd(f->d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != rst.st_dev)
            continue; /* gone, or a mount on top of the view: not the view's */
        fn(ctx, rel, &st);
        if (S_ISDIR(st.st_mode) && depth + 1 < SG_VIEWS_MAX_DEPTH) {
            int cfd = openat(dirfd(f->d), e->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            DIR *cd = cfd >= 0 ? fdopendir(cfd) : NULL;
            if (!cd && cfd >= 0)
                close(cfd);
            if (cd) {
                stack[++depth] = (struct frame){cd, f->len + (size_t)n};
                continue;
            }
        }
        rel[f->len] = '\0';
    }
    return seen;
}

static void newest(void *ctx, const char *rel, const struct stat *st)
{
    (void)rel;
    struct timespec *t = ctx;
    if (later(&st->st_ctim, t))
        *t = st->st_ctim;
}

void sg_views_baseline(const struct sg_sandbox *sb, struct sg_views_base *b)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < SG_VIEWS; i++) {
        struct stat st;
        if (sb->view_fd[i] < 0 || fstat(sb->view_fd[i], &st) < 0)
            continue;
        b->newest[i] = st.st_ctim;
        walk(sb->view_fd[i], newest, &b->newest[i]);
        b->have[i] = true;
    }
}

struct report {
    const struct sg_plan *p;
    struct sg_event_bus *bus;
    const char *view;       /* its path in the sandbox */
    bool home;
    struct timespec base;
    size_t shown, more;
    unsigned long long more_bytes;
};

static const char *type_of(mode_t m)
{
    return S_ISREG(m) ? "file" : S_ISLNK(m) ? "symlink" : S_ISFIFO(m) ? "fifo"
           : S_ISSOCK(m) ? "socket" : "other";
}

static void changed(void *ctx, const char *rel, const struct stat *st)
{
    struct report *r = ctx;
    if (S_ISDIR(st->st_mode) || !later(&st->st_ctim, &r->base))
        return;
    cleanup_free char *path = sg_xasprintf("%s/%s", r->view, rel);
    const char *cls = sg_fs_class(r->p->home, path);
    bool sensitive = strcmp(cls, "file") != 0;
    if (!sensitive && r->shown >= SG_VIEWS_MAX_SHOWN) {
        r->more++;
        r->more_bytes += (unsigned long long)st->st_size;
        return;
    }
    if (r->shown >= SG_VIEWS_MAX_SHOWN * 2) { /* sensitive ones too have an end */
        r->more++;
        return;
    }
    r->shown++;
    cleanup_free char *shown = sg_sanitize_str(path, 0);
    cleanup_free char *tilde = r->home ? sg_xasprintf("~/%s", rel) : NULL;
    cleanup_free char *tshown = tilde ? sg_sanitize_str(tilde, 0) : NULL;
    sg_bus_emit(r->bus, SG_EV_WRITE_DISCARDED,
                json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:b}", "view", r->view, "path", shown,
                          "type", type_of(st->st_mode), "bytes", (json_int_t)st->st_size, "class",
                          cls, "discarded", 1, "prevented", 1),
                "%s written in the sandbox's private %s (%s, %lld bytes): discarded with the "
                "sandbox, never on this machine%s",
                tshown ? tshown : shown, r->home ? "home" : r->view, type_of(st->st_mode),
                (long long)st->st_size,
                !strcmp(cls, "persistence") ? "; a persistence location: an attempt to stay"
                : !strcmp(cls, "credential") ? "; a credential location"
                                             : "");
}

/* A view filled to its size or its inodes: writes past it failed. */
static void full(const struct report *r, int fd)
{
    struct statvfs vs;
    if (fstatvfs(fd, &vs) < 0 || !vs.f_blocks)
        return;
    unsigned long long cap = (unsigned long long)vs.f_blocks * vs.f_frsize;
    unsigned long long left = (unsigned long long)vs.f_bavail * vs.f_frsize;
    bool no_inodes = vs.f_files && !vs.f_favail;
    if (left >= 64 * 1024 && !no_inodes)
        return;
    sg_bus_emit(r->bus, SG_EV_RESOURCE_LIMIT_HIT,
                json_pack("{s:s, s:s, s:I, s:I, s:b}", "limit", "tmpfs", "view", r->view, "cap",
                          (json_int_t)cap, "left", (json_int_t)left, "prevented", 1),
                "the sandbox's private %s reached its cap (%llu MiB%s): writes past it failed",
                r->home ? "home" : r->view, cap >> 20, no_inodes ? ", or its files" : "");
}

void sg_views_report(const struct sg_plan *p, const struct sg_sandbox *sb,
                     const struct sg_views_base *b, struct sg_event_bus *bus)
{
    for (int i = 0; i < SG_VIEWS; i++) {
        const char *view = sg_view_path(p, i);
        if (!b->have[i] || sb->view_fd[i] < 0 || !view)
            continue;
        struct report r = {.p = p, .bus = bus, .view = view, .home = i == SG_VIEW_HOME,
                           .base = b->newest[i]};
        size_t seen = walk(sb->view_fd[i], changed, &r);
        if (r.more)
            sg_bus_emit(bus, SG_EV_WRITE_DISCARDED,
                        json_pack("{s:s, s:I, s:I, s:s, s:b, s:b}", "view", view, "more",
                                  (json_int_t)r.more, "bytes", (json_int_t)r.more_bytes,
                                  "class", "file", "discarded", 1, "prevented", 1),
                        "%zu more files written in the sandbox's private %s (%llu bytes): "
                        "discarded with it", r.more, r.home ? "home" : view, r.more_bytes);
        if (seen > SG_VIEWS_MAX_ENTRIES)
            sg_bus_emit(bus, SG_EV_WRITE_DISCARDED,
                        json_pack("{s:s, s:I, s:s, s:b, s:b}", "view", view, "walked",
                                  (json_int_t)SG_VIEWS_MAX_ENTRIES, "class", "file", "discarded",
                                  1, "prevented", 1),
                        "the sandbox's private %s holds more than %d entries: only the first "
                        "were looked at", r.home ? "home" : view, SG_VIEWS_MAX_ENTRIES);
        full(&r, sb->view_fd[i]);
    }
}
