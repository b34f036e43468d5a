/* The network broker's one question (egress/ask.h), answered by the
 * permission engine: the run hands egress this, so that egress never
 * includes the decision room. */
#ifndef SG_FETCHASK_H
#define SG_FETCHASK_H

#include "ask.h"

struct sg_perm;

/* An asker over perm (borrowed; NULL: the skill may never ask). */
struct sg_fetch_asker sg_fetch_asker_of(struct sg_perm *perm);

#endif
