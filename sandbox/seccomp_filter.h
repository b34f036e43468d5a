/* seccomp profiles (libseccomp). Denied calls go to the broker as user
 * notifications, so every denial is seen and becomes an event. */
#ifndef SG_SECCOMP_FILTER_H
#define SG_SECCOMP_FILTER_H

#include "policy.h"

/* Load the profile's filter into the calling process (no_new_privs must be
 * set). Returns the notification fd, or -errno. */
int sg_seccomp_load(enum sg_seccomp_profile p);

#endif
