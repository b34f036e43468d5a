/* The sandbox's filesystem: a tmpfs root holding read-only host system
 * directories, private /tmp, HOME, /run and /var, the skill's folder, the
 * declared paths, a minimal /dev, a fresh /proc and masks; then pivot_root. */
#ifndef SG_MOUNTS_H
#define SG_MOUNTS_H

#include <stddef.h>

#include "sandbox.h"

/* Run in the sandbox's mount namespace as its root. rundir is the host
 * directory that becomes the new root. On failure returns -errno and names
 * the step in step. */
int sg_mounts_setup(const struct sg_plan *p, const char *rundir, char *step, size_t steplen);

#endif
