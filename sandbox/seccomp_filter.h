/* seccomp profiles (libseccomp). Denied calls go to the broker as user
 * notifications, so every denial is seen and becomes an event. */
#ifndef SG_SECCOMP_FILTER_H
#define SG_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#include "policy.h"

#define SG_SECCOMP_MAX_INSNS 4096 /* the kernel's BPF_MAXINSNS */

/* Load the profile's filter into the calling process (no_new_privs must be
 * set). Returns the notification fd, or -errno. */
int sg_seccomp_load(enum sg_seccomp_profile p);

/* The same filter as BPF, compiled ahead: libseccomp takes ~0.6 ms to build
 * it, which the broker spends while the sandbox mounts instead of the skill
 * process before its exec. *insns is malloc'd. */
int sg_seccomp_export(enum sg_seccomp_profile p, struct sock_filter **insns, size_t *n);
/* Install exported BPF with a notification listener, as sg_seccomp_load
 * does (no_new_privs must be set). Returns the listener fd, or -errno. */
int sg_seccomp_install(const struct sock_filter *insns, size_t n);

#endif
