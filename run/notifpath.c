#include "notifpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perm.h"
#include "util.h"

int sg_notif_read_str(int memfd, uint64_t addr, char *buf, size_t max)
{
    size_t got = 0;
    if (max == 0)
        return -ENAMETOOLONG;
    while (got + 1 < max) {
        size_t want = 256 - ((addr + got) % 256); /* never cross into an unmapped page early */
        if (want > max - 1 - got)
            want = max - 1 - got;
        ssize_t n = pread(memfd, buf + got, want, (off_t)(addr + got));
        if (n <= 0)
            return -EFAULT;
        if (memchr(buf + got, '\0', (size_t)n))
            return 0;
        got += (size_t)n;
    }
    buf[max - 1] = '\0';
    return -ENAMETOOLONG;
}

/* The folder or file that /proc/PID/<link> is, named from the skill's root:
 * its link text, checked to lead back to the same inode inside the root. */
static int name_of(pid_t pid, const char *link, bool want_dir, char *out, size_t max)
{
    char lp[64];
    snprintf(lp, sizeof lp, "/proc/%d/%s", (int)pid, link);
    struct stat want;
    if (stat(lp, &want) < 0)
        return errno == ENOENT ? -EBADF : -errno;
    if (want_dir && !S_ISDIR(want.st_mode))
        return -ENOTDIR; /* a pipe, a socket, an anonymous inode, a file */
    ssize_t n = readlink(lp, out, max - 1);
    if (n < 0)
        return -errno;
    if ((size_t)n >= max - 1)
        return -ENAMETOOLONG;
    out[n] = '\0';
    if (out[0] != '/')
        return want_dir ? -ENOTDIR : -ENOENT; /* "pipe:[…]", "anon_inode:…" */
    struct stat got;
    int fd = sg_notif_open(pid, out, O_PATH, true);
    if (fd < 0)
        return -ENOENT; /* deleted, renamed away, or a name with " (deleted)" */
    int r = fstat(fd, &got) < 0 ? -errno : 0;
    close(fd);
    if (r == 0 && (got.st_dev != want.st_dev || got.st_ino != want.st_ino))
        r = -ENOENT;
    return r;
}

int sg_notif_path(pid_t pid, int memfd, int dirfd, uint64_t addr, int at_empty, char *out,
                  size_t max)
{
    char rel[PATH_MAX];
    int r = sg_notif_read_str(memfd, addr, rel, sizeof rel);
    return r < 0 ? r : sg_notif_join(pid, dirfd, rel, at_empty, out, max);
}

int sg_notif_join(pid_t pid, int dirfd, const char *rel, int at_empty, char *out, size_t max)
{
    char base[PATH_MAX], link[32];
    int r;
    if (rel[0] == '/') {
        if (strlen(rel) >= max)
            return -ENAMETOOLONG;
        memcpy(out, rel, strlen(rel) + 1);
        return sg_path_normalize(out);
    }
    if (dirfd == AT_FDCWD)
        snprintf(link, sizeof link, "cwd");
    else if (dirfd < 0)
        return -EBADF;
    else
        snprintf(link, sizeof link, "fd/%d", dirfd);
    if (!rel[0]) {
        if (!at_empty)
            return -ENOENT;
        r = name_of(pid, link, false, base, sizeof base);
        if (r < 0)
            return r;
        if (strlen(base) >= max)
            return -ENAMETOOLONG;
        memcpy(out, base, strlen(base) + 1);
        return sg_path_normalize(out);
    }
    r = name_of(pid, link, true, base, sizeof base);
    if (r < 0)
        return r;
    int w = snprintf(out, max, "%s/%s", base, rel);
    if (w < 0 || (size_t)w >= max)
        return -ENAMETOOLONG;
    return sg_path_normalize(out);
}

int sg_notif_open(pid_t pid, const char *path, int flags, bool follow)
{
    char root[32];
    snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
    cleanup_fd int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -errno;
    struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, rfd, path, &how, sizeof how);
    return fd < 0 ? -errno : (int)fd;
}

int sg_notif_lstat(pid_t pid, const char *path, struct stat *st)
{
    int fd = sg_notif_open(pid, path, O_PATH, false);
    if (fd < 0)
        return fd;
    int r = fstat(fd, st) < 0 ? -errno : 0;
    close(fd);
    return r;
}

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

bool sg_notif_waits_killable(void)
{
    static int killable = -1; /* flags are checked before the filter: EFAULT, the flag is known */
    if (killable < 0) {
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                         SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
                         NULL);
        killable = r < 0 && errno == EFAULT;
    }
    return killable;
}

const char *sg_notif_gone_why(void)
{
    return sg_notif_waits_killable() ? SG_PERM_GONE_PROCESS
                                     : SG_PERM_GONE_PROCESS ", or a signal interrupted its call";
}
