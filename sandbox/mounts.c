#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* a + b into buf; -ENAMETOOLONG instead of a silently cut path. */
static int join(char *buf, size_t n, const char *a, const char *b)
{
    int w = snprintf(buf, n, "%s%s", a, b);
    return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

static int set_attr(const char *path, unsigned long long set, bool recursive)
{
    struct mount_attr a = {.attr_set = set};
    if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a,
                sizeof a) < 0)
        return -errno;
    return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
    return sg_mkdir_p(path, mode, (uid_t)-1, (gid_t)-1);
}

/* An empty file to bind over, in a folder that exists. */
static int touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno != EEXIST)
        return -errno;
    if (fd >= 0)
        close(fd);
    return 0;
}

static int make_file(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash && slash != buf) {
        *slash = '\0';
        int r = mkdir_p(buf, 0755);
        if (r < 0)
            return r;
    }
    return touch(path);
}

static int bind(const char *src, const char *target, bool writable)
{
    struct stat st;
    if (stat(src, &st) < 0)
        return -errno;
    int r = S_ISDIR(st.st_mode) ? mkdir_p(target, 0755) : make_file(target);
    if (r < 0)
        return r;
    if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -errno;
    return set_attr(target, (writable ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID |
                                (writable ? MOUNT_ATTR_NODEV : 0),
                    true);
}

static int tmpfs(const char *target, const struct sg_mount *m, uid_t uid, gid_t gid)
{
    int r = mkdir_p(target, 0755);
    if (r < 0)
        return r;
    char opts[160];
    /* nr_inodes bounds the kernel memory size= does not count (plan.c) */
    if (m->owned)
        snprintf(opts, sizeof opts, "mode=%04o,size=%lld,nr_inodes=%lld,uid=%u,gid=%u", m->mode,
                 m->size, m->inodes, uid, gid);
    else
        snprintf(opts, sizeof opts, "mode=%04o,size=%lld,nr_inodes=%lld", m->mode, m->size,
                 m->inodes);
    if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return -errno;
    return 0;
}

static int dev(const char *target, long long shm_size, long long shm_inodes)
{
    static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
    static const char *const links[][2] = {{"fd", "/proc/self/fd"},
                                           {"stdin", "/proc/self/fd/0"},
                                           {"stdout", "/proc/self/fd/1"},
                                           {"stderr", "/proc/self/fd/2"}};
    char p[PATH_MAX], opts[96];
    int r = mkdir_p(target, 0755);
    if (r < 0)
        return r;
    if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=65536") < 0)
        return -errno;
    for (size_t i = 0; i < SG_ARRAY_LEN(nodes); i++) {
        char src[32], name[32];
        snprintf(src, sizeof src, "/dev/%s", nodes[i]);
        snprintf(name, sizeof name, "/%s", nodes[i]);
        /* in the tmpfs just mounted: no folder to make */
        if ((r = join(p, sizeof p, target, name)) < 0 || (r = touch(p)) < 0)
            return r;
        if (mount(src, p, NULL, MS_BIND, NULL) < 0)
            return -errno;
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(links); i++) {
        char name[32];
        snprintf(name, sizeof name, "/%s", links[i][0]);
        if ((r = join(p, sizeof p, target, name)) < 0)
            return r;
        if (symlink(links[i][1], p) < 0)
            return -errno;
    }
    if ((r = join(p, sizeof p, target, "/shm")) < 0 || (r = mkdir_p(p, 01777)) < 0)
        return r;
    snprintf(opts, sizeof opts, "mode=1777,size=%lld,nr_inodes=%lld", shm_size, shm_inodes);
    if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return -errno;
    return set_attr(target, MOUNT_ATTR_RDONLY, false);
}

static int mask(const char *target, const char *devnull)
{
    struct stat st;
    if (lstat(target, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISDIR(st.st_mode)) {
        if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                  "mode=0000,size=4096") < 0)
            return -errno;
        return 0;
    }
    if (mount(devnull, target, NULL, MS_BIND, NULL) < 0)
        return -errno;
    return set_attr(target, MOUNT_ATTR_RDONLY, false);
}

int sg_mounts_setup(const struct sg_plan *p, const char *rundir, char *step, size_t steplen)
{
    char t[PATH_MAX], devnull[PATH_MAX];
    int r;
#define FAIL(...)                                  \
    do {                                           \
        snprintf(step, steplen, __VA_ARGS__);      \
        return r;                                  \
    } while (0)
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        r = -errno;
        FAIL("make mounts private");
    }
    if (mount("tmpfs", rundir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1048576") < 0) {
        r = -errno;
        FAIL("mount the new root");
    }
    if ((r = join(devnull, sizeof devnull, rundir, "/dev/null")) < 0)
        FAIL("path of /dev/null");
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if ((r = join(t, sizeof t, rundir, m->dst)) < 0)
            FAIL("mount %s", m->dst);
        switch (m->kind) {
        case SG_MNT_SYMLINK:
            r = symlink(m->src, t) < 0 ? -errno : 0;
            break;
        case SG_MNT_BIND_RO:
        case SG_MNT_BIND_RW:
            r = bind(m->src, t, m->kind == SG_MNT_BIND_RW);
            break;
        case SG_MNT_TMPFS:
            r = tmpfs(t, m, p->skill_uid, p->skill_gid);
            break;
        case SG_MNT_PROC:
            r = mkdir_p(t, 0555);
            if (r == 0 && mount("proc", t, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                r = -errno;
            break;
        case SG_MNT_DEV:
            r = dev(t, p->limits[SG_PL_TMPFS].value, p->limits[SG_PL_INODES].value);
            break;
        case SG_MNT_MASK:
            r = mask(t, devnull);
            break;
        }
        if (r < 0)
            FAIL("mount %s", m->dst);
    }
    if ((r = set_attr(rundir, MOUNT_ATTR_RDONLY, false)) < 0)
        FAIL("make the new root read-only");
    if (chdir(rundir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
        umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
        r = -errno;
        FAIL("pivot_root");
    }
    return 0;
#undef FAIL
}
