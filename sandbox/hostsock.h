/* Declared host unix sockets (permissions.unix_sockets), in the plan.
 *
 * A declared socket is pinned when the plan is made: the path the person
 * wrote (symlinks followed, as they would be) is opened on the host
 * (O_PATH, held while the plan lives, so the inode is never freed and its
 * number never given to a socket made there later) and the socket's
 * device and inode kept. The broker lets a connect through
 * when the object the skill's path reaches is that inode, and never by
 * comparing paths: a symlink the skill makes to it reaches the same
 * object, and another socket put at the same path after the plan does not.
 *
 * For the skill to reach it at all the socket file must be in its view:
 * when no bind of the plan already shows the path, the socket file itself
 * is bound read-only at the same path (a read-only mount does not stop a
 * connect; the broker connects anyway, to the object it opened). Like
 * every bind, it is pinned again at launch and checked before the skill
 * runs (pin.h), and a socket inside a masked credential folder or
 * skillgate's own folders stays masked. */
#ifndef SG_HOSTSOCK_H
#define SG_HOSTSOCK_H

#include "sandbox.h"

/* Pin each declared socket: 0, or -errno with *why (a path that is there
 * but is not a socket refuses the run; one that is missing is kept
 * unpinned, shown in the plan, and nothing is bound for it). */
int sg_plan_sockets(struct sg_plan *p, const struct sg_policy *pol, const char **why);
/* Bind the pinned sockets no bind of the plan shows yet; called after the
 * other binds and before the masks. */
void sg_plan_sockets_mounts(struct sg_plan *p);
void sg_plan_sockets_free(struct sg_plan *p);

/* The declared socket that is this object, or NULL. */
const struct sg_plan_socket *sg_plan_socket_find(const struct sg_plan *p, dev_t dev, ino_t ino);

#endif
