#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int beneath_how(int dfd, const char *rel, unsigned long long flags,
                       unsigned long long mode, bool links)
{
    bool makes = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
    /* never a setuid or setgid file: the broker makes it */
    struct open_how how = {.flags = flags | O_CLOEXEC, .mode = makes ? mode & 01777 : 0,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                                      (links ? 0 : RESOLVE_NO_SYMLINKS)};
    long fd = syscall(SYS_openat2, dfd, rel, &how, sizeof how);
    return fd < 0 ? -errno : (int)fd;
}

int sg_beneath_open(int dfd, const char *rel, unsigned long long flags,
                    unsigned long long mode)
{
    return beneath_how(dfd, rel, flags, mode, false);
}

int sg_beneath_file(int dfd, const char *rel, unsigned long long flags,
                    unsigned long long mode)
{
    return sg_beneath_file_links(dfd, rel, flags, mode, false);
}

int sg_beneath_file_links(int dfd, const char *rel, unsigned long long flags,
                          unsigned long long mode, bool links)
{
    /* never blocks: a FIFO without a reader is ENXIO here, not a hung loop */
    int f = beneath_how(dfd, rel, flags | O_NONBLOCK, mode, links);
    if (f < 0)
        return f;
    struct stat st;
    if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(f);
        return -EOPNOTSUPP;
    }
    int fl = fcntl(f, F_GETFL);
    if (!(flags & O_NONBLOCK) && fl >= 0)
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    return f;
}

int sg_beneath_parent(int dfd, char *rel, const char **last)
{
    return sg_beneath_parent_links(dfd, rel, last, false);
}

/* The parent folder of rel (beneath dfd) and its last component. */
int sg_beneath_parent_links(int dfd, char *rel, const char **last, bool links)
{
    char *slash = strrchr(rel, '/');
    if (!slash) {
        *last = rel;
        return fcntl(dfd, F_DUPFD_CLOEXEC, 3);
    }
    *slash = '\0';
    *last = slash + 1;
    return beneath_how(dfd, rel, O_PATH | O_DIRECTORY, 0, links);
}

int sg_beneath_open_links(int dfd, const char *rel, unsigned long long flags,
                          unsigned long long mode, bool links)
{
    return beneath_how(dfd, rel, flags, mode, links);
}
