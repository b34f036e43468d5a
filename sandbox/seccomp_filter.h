/* seccomp profiles (libseccomp). Denied calls go to the broker as user
 * notifications, so every denial is seen and becomes an event. */
#ifndef SG_SECCOMP_FILTER_H
#define SG_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#include "policy.h"

#define SG_SECCOMP_MAX_INSNS 4096 /* the kernel's BPF_MAXINSNS */

/* Options beside the profile. SG_SECCOMP_OBSERVE_READS (skillgate record):
 * every open goes to the broker, reads too, and every lookup of a path
 * (stat, access, readlink; not fstat), which the broker notes and lets
 * continue (run/reads.h); without it neither leaves the kernel. */
#define SG_SECCOMP_OBSERVE_READS 1u

/* Load the profile's filter into the calling process (no_new_privs must be
 * set). Returns the notification fd, or -errno. */
int sg_seccomp_load(enum sg_seccomp_profile p, unsigned opts);

/* The same filter as BPF, for the skill process to install: libseccomp
 * takes 0.3-0.5 ms to build it. *insns is malloc'd. */
int sg_seccomp_export(enum sg_seccomp_profile p, unsigned opts, struct sock_filter **insns,
                      size_t *n);
/* The same, from the filters compiled at build time (without opts) when the
 * running kernel gives libseccomp the API level they were made for
 * (seccomp_bpf.c); otherwise sg_seccomp_export. */
int sg_seccomp_filter(enum sg_seccomp_profile p, unsigned opts, struct sock_filter **insns,
                      size_t *n);
/* The API level the built-in filters were compiled for; -1: none built. */
int sg_seccomp_prebuilt_level(void);
/* Install exported BPF with a notification listener, as sg_seccomp_load
 * does (no_new_privs must be set). Returns the listener fd, or -errno. */
int sg_seccomp_install(const struct sock_filter *insns, size_t n);

#endif
