/* Calls that would create, change or remove files, stopped in the kernel by
 * seccomp and shown to the broker. Under the plan's writable paths they
 * continue; elsewhere the broker answers EACCES and emits fs_blocked.
 *
 * The path is read from the skill's memory, so a multithreaded skill can
 * change it after the check: that can only make an event name the wrong
 * path or let a call continue that the kernel then refuses (read-only mounts
 * and Landlock still hold). An approved Write is never "continued": the
 * broker opens exactly the path it showed (openat2, no symlinks, beneath
 * the host folder the sandbox path maps to, pinned before launch: pins[i]
 * for mount i, see sandbox/pin.h) and injects the descriptor with
 * SECCOMP_IOCTL_NOTIF_ADDFD, or performs the mkdir, unlink or rename itself. */
#ifndef SG_FSWATCH_H
#define SG_FSWATCH_H

#include <seccomp.h>
#include <stdbool.h>

#include "events.h"
#include "sandbox.h"

struct sg_perm;
/* 0: not a write call; 1: resp is filled in, answer it now; 2: a person is
 * being asked (Write): the call is answered later, by the broker doing the
 * approved operation itself and injecting its result, or refused. */
int sg_fswatch_handle(const struct sg_plan *p, const int *pins, struct sg_perm *perm, int notify_fd,
                      const struct seccomp_notif *req, const char *syscall,
                      struct seccomp_notif_resp *resp, struct sg_event_bus *bus);

/* Is path (absolute, normalized, inside the sandbox) writable under p? */
bool sg_fswatch_writable(const struct sg_plan *p, const char *path);
/* What writing to path would mean: "persistence", "credential" or "file". */
const char *sg_fs_class(const char *home, const char *path);

#endif
