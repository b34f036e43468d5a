/* Calls that would create, change or remove files, stopped in the kernel by
 * seccomp and shown to the broker. Under the plan's writable paths they
 * continue; elsewhere the broker answers EACCES and emits fs_blocked.
 *
 * The path is read from the skill's memory, so a multithreaded skill can
 * change it after the check: that can only make an event name the wrong
 * path or let a call continue that the kernel then refuses (read-only mounts
 * and Landlock still hold). Nothing is ever allowed on the strength of it. */
#ifndef SG_FSWATCH_H
#define SG_FSWATCH_H

#include <seccomp.h>
#include <stdbool.h>

#include "events.h"
#include "sandbox.h"

/* True when nr is one of the write calls (then resp is filled in). */
bool sg_fswatch_handle(const struct sg_plan *p, int notify_fd, const struct seccomp_notif *req,
                       const char *syscall, struct seccomp_notif_resp *resp,
                       struct sg_event_bus *bus);

/* Is path (absolute, normalized, inside the sandbox) writable under p? */
bool sg_fswatch_writable(const struct sg_plan *p, const char *path);
/* Lexically normalize an absolute path in place ("/a/./b/../c" -> "/a/c"). */
void sg_path_normalize(char *path);
/* What writing to path would mean: "persistence", "credential" or "file". */
const char *sg_fs_class(const char *home, const char *path);

#endif
