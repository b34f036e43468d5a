/* The Write broker: calls that would create, change or remove files,
 * stopped in the kernel by seccomp and shown to the broker. Under the plan's
 * writable paths they continue (a creation in a declared write path is the
 * broker's and counted: diskcap.h); elsewhere a rule or a person decides
 * (Write), or the broker answers EACCES and emits fs_blocked.
 *
 * A path through /proc or a descriptor link (/proc/self/root/..., /proc/PID/
 * cwd, /proc/self/fd/N, /dev/fd/N, /dev/stdout) names nothing the broker can
 * check: the kernel follows a magic link to an object. Such a call is
 * decided on the object: the skill's own descriptor link to a pipe or to
 * null, zero, full, random or urandom is opened again by the broker and
 * handed over; every other write-intent call through them is refused
 * (EACCES, fs_blocked naming the place it names). openat2 never reaches
 * this file: its flags are in the skill's memory (session.c: ENOSYS).
 *
 * The path is read from the skill's memory, so a multithreaded skill can
 * change it after the check: that can only make an event name the wrong
 * path or let a call continue that the kernel then refuses (read-only mounts
 * and Landlock still hold). An approved Write is never "continued": the
 * broker opens exactly the path it showed (openat2, no symlinks, beneath
 * the host folder the sandbox path maps to, pinned before launch: pins[i]
 * for mount i, see sandbox/pin.h) and injects the descriptor with
 * SECCOMP_IOCTL_NOTIF_ADDFD, or performs the mkdir, unlink or rename itself. */
#ifndef SG_WRITES_H
#define SG_WRITES_H

#include <seccomp.h>
#include <stdbool.h>

#include "events.h"
#include "sandbox.h"

struct sg_perm;
struct sg_diskcap;
/* 0: not a write call; 1: resp is filled in, answer it now; 2: answered
 * already or later: a person is being asked (Write), and the broker does
 * the approved operation itself and injects its result, or refuses; or a
 * creation in a declared write path was done and counted (diskcap.h). */
int sg_writes_handle(const struct sg_plan *p, const int *pins, struct sg_perm *perm,
                      struct sg_diskcap *dc, int notify_fd, const struct seccomp_notif *req,
                      const char *syscall, struct seccomp_notif_resp *resp,
                      struct sg_event_bus *bus);


/* Is path (absolute, normalized, inside the sandbox) writable under p? */
bool sg_writes_writable(const struct sg_plan *p, const char *path);
/* Where in a home a file runs again later (shell start, login, autostart):
 * relative to the home, NULL-terminated. */
extern const char *const sg_persistence_home_paths[];
/* What writing to path would mean: "persistence", "credential" or "file". */
const char *sg_fs_class(const char *home, const char *path);

#endif
