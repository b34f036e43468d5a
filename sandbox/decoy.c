#include "decoy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static const char *const decoys[] = {
#define X(p) p,
    SG_DECOYS(X)
#undef X
};

const char *sg_decoy_path(size_t i)
{
    return i < SG_ARRAY_LEN(decoys) ? decoys[i] : "?";
}

/* Is HOME private (a tmpfs of ours) rather than a declared host folder? */
static bool home_private(const struct sg_plan *p)
{
    return sg_path_private(p, p->home);
}

static int make_decoy(const struct sg_plan *p, const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    /* folders the skill can walk into, like the real ones */
    int r = sg_mkdir_p(dir, 0700, p->skill_uid, p->skill_gid);
    if (r < 0)
        return r;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    r = fchown(fd, p->skill_uid, p->skill_gid) < 0 ? -errno : 0;
    close(fd);
    return r;
}

size_t sg_decoys_setup(const struct sg_plan *p, int fds[SG_MAX_DECOYS])
{
    size_t n = 0;
    for (size_t i = 0; i < SG_MAX_DECOYS; i++)
        fds[i] = -1;
    if (!home_private(p))
        return 0;
    for (size_t i = 0; i < SG_ARRAY_LEN(decoys) && i < SG_MAX_DECOYS; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", p->home, decoys[i]);
        if (make_decoy(p, path) < 0)
            continue;
        int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK,
                               O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            break; /* no fanotify here: the decoys still hide nothing real */
        if (fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, path) < 0) {
            close(fd);
            continue;
        }
        fds[i] = fd;
        n++;
    }
    return n;
}
