/* Declared write paths (--write, a manifest's write paths, an agent's
 * writable folder for the run): every call that makes, moves or removes a
 * name there, or changes a file's size or mode, is done by the broker
 * (issue 50, item 1).
 *
 * A grant of a folder is not a grant of what git, shells and editors run
 * from it (protected.h): `.git/config`, `.git/hooks`, `.envrc` and the
 * rest are asked on their own however the folder was granted. A decision
 * on a name the skill wrote would be a race (another thread rewrites the
 * string between the broker's look and the kernel's), and a symlink the
 * skill made names one object by another's name. So the broker finds the
 * object the kernel would reach, as the kernel would: beneath the folder
 * pinned before launch (pin.h), every symlink on the way followed while it
 * stays beneath it (and the last one where the call follows it), and
 * decides on that object's real path; then it does the call itself, as
 * the skill (its fsuid, fsgid, no groups: the kernel checks the same
 * permissions), on the folder it opened and the name it checked, so that
 * nothing is read from the skill again. Opens and mkdir were the broker's
 * already (diskcap.h); here are rename, link, symlink, mknod, unlink,
 * rmdir, truncate and chmod. A name can change only through the broker,
 * one call at a time, so what it looked at is what it acts on.
 *
 * Cost: two to four openat2 and a readlink per call more than letting it
 * continue (tens of microseconds), on calls that are rarer than writes. */
#ifndef SG_DECLARED_H
#define SG_DECLARED_H

#include <limits.h>
#include <stdbool.h>

#include "sandbox.h"

/* The deepest mount over a sandbox path (a symlink entry is no mount), or
 * NULL: it decides what the path is (a read-only bind inside the private
 * /tmp is read-only). */
const struct sg_mount *sg_deepest_mount(const struct sg_plan *p, const char *path);
/* The bind a sandbox path lies in (the deepest mount over it decides), and
 * the path below it; NULL when that is a private tmpfs, a mask or the
 * sandbox's own root: no host place. */
const struct sg_mount *sg_host_bind(const struct sg_plan *p, const char *path,
                                    const char **below);

/* Where a path in a declared write path leads: its folder (opened beneath
 * the pinned folder), its last name there, and the object's real host
 * path and path in the sandbox. */
struct sg_where {
    int pfd;                 /* O_PATH folder, the caller closes it */
    char last[NAME_MAX + 1];
    char real[PATH_MAX];     /* on the host: what protected.h matches */
    char spath[PATH_MAX];    /* in the sandbox: what a question shows */
    const struct sg_mount *bind;
    const char *via;         /* why a name a followed link was at is protected (git
                              * goes by the name: a hook linked to its sample), or NULL */
};

/* Find what path (absolute, normalized, in a SG_MNT_BIND_RW bind) names,
 * as the kernel would: follow says whether the last component is followed
 * when it is a symlink. 0, or the kernel's answer (-ENOENT, -ENOTDIR,
 * -ELOOP), -EXDEV for a link that leaves the folder (never followed by the
 * broker), -EBUSY for the bind's own folder (a mount point), -EROFS when no
 * declared write path holds it. */
int sg_declared_where(const struct sg_plan *p, const int *pins, const char *path, bool follow,
                      struct sg_where *w);

/* The calls, done as the skill on what sg_declared_where found. 0 or
 * -errno (the kernel's answer). */
int sg_declared_unlink(const struct sg_plan *p, const struct sg_where *w, int flags);
int sg_declared_rename(const struct sg_plan *p, const struct sg_where *from,
                       const struct sg_where *to, unsigned flags);
int sg_declared_link(const struct sg_plan *p, const struct sg_where *from,
                     const struct sg_where *to);
int sg_declared_symlink(const struct sg_plan *p, const char *target, const struct sg_where *w);
/* mode as mknod's (type bits, permissions already masked by the caller):
 * only a regular file, FIFO or socket (a device: -EPERM, as for the skill) */
int sg_declared_mknod(const struct sg_plan *p, const struct sg_where *w, mode_t mode);
int sg_declared_truncate(const struct sg_plan *p, const struct sg_where *w, long long len);
/* nofollow: the call asked not to follow a last symlink (-EOPNOTSUPP on one) */
int sg_declared_chmod(const struct sg_plan *p, const struct sg_where *w, mode_t mode,
                      bool nofollow);

#endif
