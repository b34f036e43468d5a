/* The end of a failed run: the files in the person's home that the
 * skill's own words name (homenamed.h), that are there, and that the run
 * did not show; each with the way to show it, or the reason nothing may
 * (an agent's folder, a credential place). A skill that looked for one
 * said "config not found" and skillgate said nothing (issue 52, item 8). */
#ifndef SG_UNSHOWN_H
#define SG_UNSHOWN_H

#include <stdio.h>

#include "skill.h"

#define SG_UNSHOWN_SAID 3 /* lines at most */

/* cwd: the working folder the run showed (its real path), or NULL. */
void sg_unshown_print(FILE *f, const struct sg_skill *sk, const char *cwd);

#endif
