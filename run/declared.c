#include "declared.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "beneath.h"
#include "config.h"
#include "diskcap.h"
#include "protected.h"
#include "util.h"

/* The path an open descriptor's object has now, in the broker's view. */
static int fd_path(int fd, char *out, size_t n)
{
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(self, out, n - 1);
    if (k < 0)
        return -errno;
    if ((size_t)k >= n - 1)
        return -ENAMETOOLONG;
    out[k] = '\0';
    return 0;
}

const struct sg_mount *sg_deepest_mount(const struct sg_plan *p, const char *path)
{
    const struct sg_mount *best = NULL;
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (m->kind == SG_MNT_SYMLINK || !sg_path_within(path, m->dst))
            continue;
        if (!best || strlen(m->dst) >= strlen(best->dst))
            best = m;
    }
    return best;
}

const struct sg_mount *sg_host_bind(const struct sg_plan *p, const char *path, const char **below)
{
    const struct sg_mount *best = sg_deepest_mount(p, path);
    if (!best || (best->kind != SG_MNT_BIND_RO && best->kind != SG_MNT_BIND_RW))
        return NULL;
    const char *r = path + strlen(best->dst);
    while (*r == '/')
        r++;
    *below = r;
    return best;
}

/* w filled in from its folder pfd (taken) and last name, beneath pin. */
static int settle(struct sg_where *w, const struct sg_mount *b, const char *pinreal, int pfd,
                  const char *last)
{
    char dir[PATH_MAX];
    int r = fd_path(pfd, dir, sizeof dir);
    if (!r && !sg_path_within(dir, pinreal))
        r = -EXDEV; /* deleted meanwhile ("... (deleted)"), or not beneath */
    const char *rest = dir + strlen(pinreal);
    if (!r && (snprintf(w->last, sizeof w->last, "%s", last) >= (int)sizeof w->last ||
               snprintf(w->real, sizeof w->real, "%s/%s", strcmp(dir, "/") ? dir : "", last) >=
                   (int)sizeof w->real ||
               snprintf(w->spath, sizeof w->spath, "%s%s/%s", strcmp(b->dst, "/") ? b->dst : "",
                        strcmp(pinreal, "/") ? rest : dir, last) >= (int)sizeof w->spath))
        r = -ENAMETOOLONG;
    if (r < 0) {
        close(pfd);
        return r;
    }
    w->pfd = pfd;
    w->bind = b;
    return 0;
}

int sg_declared_where(const struct sg_plan *p, const int *pins, const char *path, bool follow,
                      struct sg_where *w)
{
    memset(w, 0, sizeof *w);
    w->pfd = -1;
    const char *below;
    const struct sg_mount *b = sg_host_bind(p, path, &below);
    if (!b || b->kind != SG_MNT_BIND_RW)
        return -EROFS;
    int pin = pins ? pins[b - p->mounts] : -1;
    if (pin < 0)
        return -EBADF;
    if (!*below)
        return -EBUSY; /* the bind's own folder: a mount point */
    char pinreal[PATH_MAX], rel[PATH_MAX];
    int r = fd_path(pin, pinreal, sizeof pinreal);
    if (r < 0)
        return r;
    if (snprintf(rel, sizeof rel, "%s", below) >= (int)sizeof rel)
        return -ENAMETOOLONG;
    /* at most 40 links, as the kernel follows */
    for (int hops = 0;; hops++) {
        char buf[PATH_MAX], t[PATH_MAX], dir[PATH_MAX];
        const char *last;
        memcpy(buf, rel, sizeof buf);
        int pfd = sg_beneath_parent_links(pin, buf, &last, true);
        if (pfd < 0)
            return pfd;
        if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
            close(pfd);
            return -EINVAL; /* a link ending in "..": nothing here is made there */
        }
        struct stat st;
        bool link = follow && fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode);
        if (!link)
            return settle(w, b, pinreal, pfd, last);
        ssize_t n = hops < 40 ? readlinkat(pfd, last, t, sizeof t - 1) : -1;
        r = hops >= 40 ? -ELOOP : n < 0 ? -errno : n == 0 ? -ENOENT : 0;
        if (!r) {
            t[n] = '\0';
            /* an absolute link names the sandbox's root, never followed
             * from the host folder (RESOLVE_BENEATH refuses it too) */
            r = t[0] == '/' ? -EXDEV : fd_path(pfd, dir, sizeof dir);
        }
        if (!r && !sg_path_within(dir, pinreal))
            r = -EXDEV;
        char hop[PATH_MAX];
        if (!r && !w->via)
            w->via = snprintf(hop, sizeof hop, "%s/%s", strcmp(dir, "/") ? dir : "", last) >=
                             (int)sizeof hop
                         ? "a path too long to be checked whole"
                         : sg_protected_path(hop, NULL);
        const char *rd = dir + (strcmp(pinreal, "/") ? strlen(pinreal) : 0);
        while (!r && *rd == '/')
            rd++;
        if (!r && snprintf(rel, sizeof rel, "%s%s%s", rd, *rd ? "/" : "", t) >= (int)sizeof rel)
            r = -ENAMETOOLONG;
        close(pfd);
        if (r < 0)
            return r;
    }
}

int sg_declared_unlink(const struct sg_plan *p, const struct sg_where *w, int flags)
{
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    int r = unlinkat(w->pfd, w->last, flags & AT_REMOVEDIR) < 0 ? -errno : 0;
    sg_become_broker(&sv);
    return r;
}

int sg_declared_rename(const struct sg_plan *p, const struct sg_where *from,
                       const struct sg_where *to, unsigned flags)
{
    if (from->bind != to->bind)
        return -EXDEV; /* two binds are two mounts to the kernel */
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    int r = syscall(SYS_renameat2, from->pfd, from->last, to->pfd, to->last, flags) < 0 ? -errno
                                                                                         : 0;
    sg_become_broker(&sv);
    return r;
}

int sg_declared_link(const struct sg_plan *p, const struct sg_where *from,
                     const struct sg_where *to)
{
    if (from->bind != to->bind)
        return -EXDEV;
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    int r = linkat(from->pfd, from->last, to->pfd, to->last, 0) < 0 ? -errno : 0;
    sg_become_broker(&sv);
    return r;
}

int sg_declared_symlink(const struct sg_plan *p, const char *target, const struct sg_where *w)
{
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    int r = symlinkat(target, w->pfd, w->last) < 0 ? -errno : 0;
    sg_become_broker(&sv);
    return r;
}

int sg_declared_mknod(const struct sg_plan *p, const struct sg_where *w, mode_t mode)
{
    mode_t type = mode & S_IFMT;
    if (type && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK)
        return -EPERM; /* a device: the skill has no CAP_MKNOD */
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    int r = mknodat(w->pfd, w->last, (type ? type : S_IFREG) | (mode & 07777), 0) < 0 ? -errno
                                                                                      : 0;
    sg_become_broker(&sv);
    return r;
}

int sg_declared_truncate(const struct sg_plan *p, const struct sg_where *w, long long len)
{
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    /* never blocks: a FIFO without a reader is ENXIO, not a held loop */
    int f = openat(w->pfd, w->last, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    int r = f < 0 ? -errno : 0;
    sg_become_broker(&sv);
    struct stat st;
    if (r == -ENXIO || r == -ELOOP || (!r && (fstat(f, &st) < 0 || !S_ISREG(st.st_mode))))
        r = -EINVAL; /* the kernel's answer to truncate of what is no regular file */
    if (!r && ftruncate(f, (off_t)len) < 0)
        r = -errno;
    if (f >= 0)
        close(f);
    return r;
}

int sg_declared_chmod(const struct sg_plan *p, const struct sg_where *w, mode_t mode,
                      bool nofollow)
{
    int o = openat(w->pfd, w->last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (o < 0)
        return -errno;
    struct stat st;
    int r = fstat(o, &st) < 0 ? -errno : 0;
    if (!r && S_ISLNK(st.st_mode))
        r = nofollow ? -EOPNOTSUPP : -ELOOP; /* a link left unfollowed: the kernel's answers */
    if (!r) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", o);
        struct sg_skill_creds sv;
        sg_become_skill(p, &sv);
        r = fchmodat(AT_FDCWD, self, mode & 07777, 0) < 0 ? -errno : 0;
        sg_become_broker(&sv);
    }
    close(o);
    return r;
}
