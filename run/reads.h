/* What a recorded skill opened to read or looked up (skillgate record).
 *
 * A recording's seccomp filter (SG_SECCOMP_OBSERVE_READS) stops every open
 * in the kernel, reads too, and every lookup of a path (stat, lstat,
 * newfstatat and statx unless AT_EMPTY_PATH, access, faccessat(2),
 * readlink(at)). An open without write intent and a lookup are noted here
 * and let go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the broker decides
 * nothing about a read; the mounts, masks and Landlock do, as in every run.
 * An open with write intent is the write broker's (writes.h).
 *
 * Where a path lies decides how it is kept. In what every run is given (the
 * system folders, the skill's own folder, /proc, /dev, a Python environment,
 * the working folder) only a count per place, and so for what the skill
 * finds in its private /tmp and HOME (its own files; a credential there is
 * a decoy, kept); in a declared folder, a mask, /run and /var (empty here),
 * outside everything the sandbox shows, or not found in a private view, the
 * path itself: whether it was there in the sandbox, and if not, whether it
 * is on this machine (what the skill would have needed declared).
 *
 * The path is read from the skill's memory: a multithreaded skill can make
 * a record name another path than the one it used. A record can be lied
 * to; the enforcement cannot. */
#ifndef SG_READS_H
#define SG_READS_H

#include <seccomp.h>

#include "events.h"
#include "sandbox.h"

/* distinct paths kept outside the given places, and their bytes (the
 * trace's room: a path can be 4 KiB); past either, counted */
#define SG_READS_MAX_PATHS 4096
#define SG_READS_MAX_BYTES (512 << 10)

struct sg_reads;
struct sg_reads *sg_reads_new(const struct sg_plan *p);
void sg_reads_free(struct sg_reads *rd);

/* 0: not a read (an open with write intent, another call); 1: noted, resp
 * filled in to let it continue. */
int sg_reads_handle(struct sg_reads *rd, int notify_fd, const struct seccomp_notif *req,
                    const char *syscall, struct seccomp_notif_resp *resp);

/* At the end of the run, while the private views' roots (view_fd, from
 * sg_sandbox, may be NULL) are still open: one files_read event with what
 * was noted. A path not found in the sandbox is looked for on this
 * machine, one component at a time: no link
 * followed, no automount triggered, nothing looked up inside a network,
 * automount or FUSE filesystem (then "unchecked"). */
void sg_reads_report(struct sg_reads *rd, const int *view_fd, struct sg_event_bus *bus);

#endif
