#include "pin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

#define MAX_LINKS 40 /* as the kernel's own walk */

static bool trusted(uid_t uid, uid_t owner)
{
    return uid == 0 || uid == owner;
}

/* May someone other than owner and root replace entries of folder dir?
 * Its owner may; anyone may where it is writable by others, unless it is
 * sticky (/tmp), where only an entry's owner may. A folder writable by its
 * group is taken as its owner's (user-private groups); sharing a folder
 * with a group is sharing it. */
static bool swappable(const struct stat *dir, const struct stat *entry, uid_t owner)
{
    if (!trusted(dir->st_uid, owner))
        return true;
    if (!(dir->st_mode & S_IWOTH))
        return false;
    return !(dir->st_mode & S_ISVTX) || !trusted(entry->st_uid, owner);
}

int sg_pin_path(const char *path, uid_t owner, uid_t writer, bool writable, char *why,
                size_t whylen)
{
    char todo[PATH_MAX * 2], name[NAME_MAX + 1];
    if (path[0] != '/' || strlen(path) >= PATH_MAX) {
        snprintf(why, whylen, "not an absolute path");
        return -EINVAL;
    }
    snprintf(todo, sizeof todo, "%s", path);
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return -errno;
    int links = 0;
    size_t pos = 0;
    for (;;) {
        while (todo[pos] == '/')
            pos++;
        if (!todo[pos])
            break;
        size_t len = strcspn(todo + pos, "/");
        if (len > NAME_MAX) {
            close(cur);
            snprintf(why, whylen, "a name longer than %d bytes", NAME_MAX);
            return -ENAMETOOLONG;
        }
        memcpy(name, todo + pos, len);
        name[len] = '\0';
        pos += len;
        struct stat dst, est;
        if (fstat(cur, &dst) < 0) {
            int e = -errno;
            close(cur);
            return e;
        }
        int next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 || fstat(next, &est) < 0) {
            int e = -errno;
            if (next >= 0)
                close(next);
            close(cur);
            snprintf(why, whylen, "%s: %s", name, strerror(-e));
            return e;
        }
        if (strcmp(name, ".") && strcmp(name, "..") && swappable(&dst, &est, owner)) {
            close(next), close(cur);
            snprintf(why, whylen, "%s (uid %u) lies in a folder that another user may change, "
                     "so it could be swapped after it was checked", name, (unsigned)est.st_uid);
            return -EPERM;
        }
        if (S_ISLNK(est.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlinkat(next, "", target, sizeof target - 1);
            close(next);
            if (!trusted(est.st_uid, owner)) {
                close(cur);
                snprintf(why, whylen, "%s is a symbolic link of uid %u", name,
                         (unsigned)est.st_uid);
                return -EPERM;
            }
            if (n < 0 || ++links > MAX_LINKS) {
                close(cur);
                snprintf(why, whylen, "%s: too many or unreadable symbolic links", name);
                return n < 0 ? -EINVAL : -ELOOP;
            }
            target[n] = '\0';
            char rest[PATH_MAX * 2];
            snprintf(rest, sizeof rest, "%s", todo + pos);
            if ((size_t)snprintf(todo, sizeof todo, "%s%s", target, rest) >= sizeof todo) {
                close(cur);
                return -ENAMETOOLONG;
            }
            pos = 0;
            if (target[0] == '/') { /* from the root again */
                close(cur);
                if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return -errno;
            }
            continue;
        }
        close(cur);
        cur = next;
    }
    struct stat st;
    if (fstat(cur, &st) < 0) {
        int e = -errno;
        close(cur);
        return e;
    }
    if (writable && !trusted(st.st_uid, owner) && st.st_uid != writer) {
        close(cur);
        snprintf(why, whylen, "it belongs to uid %u, not to you, root or the skill's user",
                 (unsigned)st.st_uid);
        return -EPERM;
    }
    return cur;
}

int sg_pin_check(pid_t pid, const char *dst, int pin)
{
    char root[32];
    snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
    int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -errno;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, rfd, dst, &how, sizeof how);
    close(rfd);
    if (fd < 0)
        return -errno;
    struct stat a, b;
    int r = fstat((int)fd, &a) < 0 || fstat(pin, &b) < 0 ? -errno : 0;
    close((int)fd);
    if (r == 0 && (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
        r = -ESTALE;
    return r;
}
