/* Landlock on top of the mounts: the skill may create, change or remove
 * files only below the paths the plan makes writable, and (ABI 6+) may not
 * reach abstract unix sockets or signal processes outside its domain. */
#ifndef SG_LANDLOCK_H
#define SG_LANDLOCK_H

#include "sandbox.h"

/* Restrict the calling process (no_new_privs must be set). Paths are inside
 * the sandbox. Returns 0, or -errno (-ENOTSUP when the kernel has none). */
int sg_landlock_apply(const struct sg_plan *p);
/* What the ABI gives, for the plan: a static description. */
const char *sg_landlock_describe(int abi);

#endif
