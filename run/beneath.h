/* Opening what the broker acts on for a skill, beneath a folder it holds
 * open (a pinned declared folder, the skill's root): openat2 with
 * RESOLVE_BENEATH and no magic links, so that no name the skill made (a
 * symlink, "..", /proc/self/fd/N) leads the broker anywhere else. The
 * Write broker (writes.c), the disk cap (diskcap.c) and the Read broker
 * (reads.c) open through these. */
#ifndef SG_BENEATH_H
#define SG_BENEATH_H

#include <stdbool.h>

/* openat2 of rel beneath dfd: no symlinks, no magic links, no "..". */
int sg_beneath_open(int dfd, const char *rel, unsigned long long flags,
                    unsigned long long mode);
/* The same for a file the broker hands a skill: a regular file only
 * (-EOPNOTSUPP for a FIFO, device or socket; a FIFO without a reader is
 * -ENXIO), opened without ever blocking the broker. */
int sg_beneath_file(int dfd, const char *rel, unsigned long long flags,
                    unsigned long long mode);
/* The folder holding rel (beneath dfd), with rel cut at its last '/' and
 * *last its last component. */
int sg_beneath_parent(int dfd, char *rel, const char **last);
/* The same two, with symlinks followed as long as they stay beneath dfd
 * (an absolute link or one that climbs out: -EXDEV). */
int sg_beneath_file_links(int dfd, const char *rel, unsigned long long flags,
                          unsigned long long mode, bool links);
int sg_beneath_parent_links(int dfd, char *rel, const char **last, bool links);
/* openat2 of rel beneath dfd, symlinks followed while they stay beneath it
 * (links), or none followed. */
int sg_beneath_open_links(int dfd, const char *rel, unsigned long long flags,
                          unsigned long long mode, bool links);

#endif
