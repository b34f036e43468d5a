/* What a skill left in its private views (views.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "beneath.h"
#include "sanitize.h"
#include "util.h"
#include "views.h"
#include "writes.h"

static bool later(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

typedef void (*visit_fn)(void *ctx, const char *rel, const struct stat *st);

/* Every entry beneath the directory fd root (not root itself), depth
 * first, on the filesystem of dev only, each named prefix/rel. Returns the
 * entries visited, or SG_VIEWS_MAX_ENTRIES + 1 when the walk stopped at the
 * cap. */
static size_t walk_under(int root, dev_t dev, const char *prefix, visit_fn fn, void *ctx)
{
    struct frame {
        DIR *d;
        size_t len; /* of rel at this level */
    } stack[SG_VIEWS_MAX_DEPTH];
    int depth = 0;
    char rel[PATH_MAX] = "";
    size_t plen = prefix && *prefix ? (size_t)snprintf(rel, sizeof rel, "%s", prefix) : 0;
    if (plen >= sizeof rel)
        return 0;
    int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    stack[0] = (struct frame){fd >= 0 ? fdopendir(fd) : NULL, plen};
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
        if (fstatat(dirfd(f->d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
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

static size_t walk(int root, visit_fn fn, void *ctx)
{
    struct stat rst;
    return fstat(root, &rst) < 0 ? 0 : walk_under(root, rst.st_dev, NULL, fn, ctx);
}

struct base_walk {
    struct timespec *newest;
    json_t *known;
};

static void ino_key(char out[24], ino_t ino)
{
    snprintf(out, 24, "%llu", (unsigned long long)ino);
}

static void newest(void *ctx, const char *rel, const struct stat *st)
{
    (void)rel;
    struct base_walk *w = ctx;
    char k[24];
    ino_key(k, st->st_ino);
    json_object_set_new(w->known, k, json_true());
    if (later(&st->st_ctim, w->newest))
        *w->newest = st->st_ctim;
}

void sg_views_baseline(const struct sg_sandbox *sb, struct sg_views_base *b)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < SG_VIEWS; i++) {
        struct stat st;
        if (sb->view_fd[i] < 0 || fstat(sb->view_fd[i], &st) < 0)
            continue;
        b->newest[i] = st.st_ctim;
        b->known[i] = json_object();
        struct base_walk w = {&b->newest[i], b->known[i]};
        walk(sb->view_fd[i], newest, &w);
        b->have[i] = true;
    }
}

void sg_views_base_free(struct sg_views_base *b)
{
    for (int i = 0; i < SG_VIEWS; i++) {
        json_decref(b->known[i]);
        b->known[i] = NULL;
    }
}

struct report {
    const struct sg_plan *p;
    struct sg_event_bus *bus;
    const char *view;       /* its path in the sandbox */
    bool home;
    struct timespec base;
    json_t *known;          /* the inodes of the baseline */
    size_t shown, more;
    unsigned long long more_bytes;
    const char *more_class; /* the most telling class among those counted */
    json_t *said;           /* rel paths reported already (the persistence places first) */
};

/* A write that lands in the throwaway views means what sg_fs_class says,
 * except a repository's hooks: `git init` there makes sample hooks, and a
 * hook in a private view runs nowhere. */
static const char *view_class(const struct report *r, const char *path)
{
    const char *cls = sg_fs_class(r->p->home, path);
    if (!strcmp(cls, "persistence") && strstr(path, "/.git/")) {
        for (size_t i = 0; sg_persistence_home_paths[i]; i++) {
            cleanup_free char *place = sg_xasprintf("%s/%s", r->p->home,
                                                    sg_persistence_home_paths[i]);
            size_t n = strlen(place);
            if (!strncmp(path, place, n) && (path[n] == '/' || !path[n]))
                return cls;
        }
        return "file";
    }
    return cls;
}

static const char *type_of(mode_t m)
{
    return S_ISREG(m) ? "file" : S_ISLNK(m) ? "symlink" : S_ISFIFO(m) ? "fifo"
           : S_ISSOCK(m) ? "socket" : "other";
}

static void changed(void *ctx, const char *rel, const struct stat *st)
{
    struct report *r = ctx;
    /* changed since the baseline: a later ctime, or, as ctime ticks every few
     * ms, the baseline's own newest time on a file that was not there then */
    char k[24];
    ino_key(k, st->st_ino);
    bool fresh = later(&st->st_ctim, &r->base) ||
                 (!later(&r->base, &st->st_ctim) && !json_object_get(r->known, k));
    if (S_ISDIR(st->st_mode) || !fresh || json_object_get(r->said, rel))
        return;
    json_object_set_new(r->said, rel, json_true());
    cleanup_free char *path = sg_xasprintf("%s/%s", r->view, rel);
    if (sg_plan_mount_at(r->p, path))
        return; /* a mount point the sandbox made (a named file's), left when it went */
    const char *cls = view_class(r, path);
    bool sensitive = strcmp(cls, "file") != 0;
    if ((!sensitive && r->shown >= SG_VIEWS_MAX_SHOWN) || r->shown >= SG_VIEWS_MAX_SHOWN * 2) {
        /* counted; the sensitive ones too have an end */
        r->more++;
        r->more_bytes += (unsigned long long)st->st_size;
        if (sensitive && (!r->more_class || strcmp(r->more_class, "persistence")))
            r->more_class = cls;
        return;
    }
    r->shown++;
    cleanup_free char *shown = sg_sanitize_str(path, 0);
    cleanup_free char *tilde = r->home ? sg_xasprintf("~/%s", rel) : NULL;
    cleanup_free char *tshown = tilde ? sg_sanitize_str(tilde, 0) : NULL;
    /* a plain file in a kept home stays for the skill's next runs
     * (keephome.h): said, and in the trace, but nothing was discarded */
    bool kept = r->home && r->p->keep_home && !sensitive;
    json_t *data = json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:b}", "view", r->view, "path",
                             shown, "type", type_of(st->st_mode), "bytes",
                             (json_int_t)st->st_size, "class", cls, "discarded", !kept,
                             "prevented", !kept);
    if (kept) {
        json_object_set_new(data, "kept", json_true());
        sg_bus_emit(r->bus, SG_EV_WRITE_DISCARDED, data,
                    "%s written in the skill's own home (%s, %lld bytes): kept for its next "
                    "runs, never in your home", tshown, type_of(st->st_mode),
                    (long long)st->st_size);
        return;
    }
    sg_bus_emit(r->bus, SG_EV_WRITE_DISCARDED, data,
                "%s written in the sandbox's private %s (%s, %lld bytes): discarded with the "
                "sandbox, never on this machine%s",
                tshown ? tshown : shown, r->home ? "home" : r->view, type_of(st->st_mode),
                (long long)st->st_size,
                !strcmp(cls, "persistence") ? "; a persistence location: an attempt to stay"
                : !strcmp(cls, "credential") ? "; a credential location"
                                             : "");
}

/* The home's persistence places are looked at before the walk, outside its
 * cap: no pile of files elsewhere can hide a changed ~/.bashrc. Each is
 * reached beneath the view without following a link (openat2), and only
 * on the view's own filesystem. */
static void persistence_first(struct report *r, int root)
{
    struct stat rst;
    if (fstat(root, &rst) < 0)
        return;
    for (size_t i = 0; sg_persistence_home_paths[i]; i++) {
        const char *rel = sg_persistence_home_paths[i];
        int fd = sg_beneath_open(root, rel, O_PATH | O_NOFOLLOW, 0);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && st.st_dev == rst.st_dev) {
            if (!S_ISDIR(st.st_mode)) {
                changed(r, rel, &st);
            } else {
                int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0) {
                    walk_under(dfd, rst.st_dev, rel, changed, r);
                    close(dfd);
                }
            }
        }
        close(fd);
    }
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
                           .base = b->newest[i], .known = b->known[i],
                           .said = json_object()};
        if (r.home)
            persistence_first(&r, sb->view_fd[i]);
        size_t seen = walk(sb->view_fd[i], changed, &r);
        if (r.more)
            sg_bus_emit(bus, SG_EV_WRITE_DISCARDED,
                        json_pack("{s:s, s:I, s:I, s:s, s:b, s:b}", "view", view, "more",
                                  (json_int_t)r.more, "bytes", (json_int_t)r.more_bytes,
                                  "class", r.more_class ? r.more_class : "file", "discarded", 1,
                                  "prevented", 1),
                        "%zu more files written in the sandbox's private %s (%llu bytes): "
                        "%s%s", r.more, r.home ? "home" : view, r.more_bytes,
                        r.home && p->keep_home ? "the plain ones kept for the skill's next runs, "
                                                 "the rest discarded"
                                               : "discarded with it",
                        r.more_class ? "; some in persistence or credential places" : "");
        json_decref(r.said);
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
