/* Memory, pids and CPU limits in a cgroup of the run's own (v2, or the v1
 * controllers on hybrid hosts), when the broker may create one. */
#ifndef SG_CGROUP_H
#define SG_CGROUP_H

#include "sandbox.h"

#define SG_CGROUP_V1_MAX 3 /* memory, pids, cpu */

/* Where this process may make a run's cgroups: 2 or 1 (the version) with
 * base[] filled (v2: base[0], the folder that gets "skillgate/<run>"; v1:
 * one folder per controller, memory, pids, cpu, where cpu may be NULL), or
 * 0. Root uses the hierarchy's top. Anyone else uses the cgroup it was
 * started in when that is delegated to it (systemd's Delegate=yes, or an
 * administrator's chown), else on v2 its systemd user@UID.service when it
 * runs inside it (sg_cgroup_user_service): v1, its memory and pids folders (cpu when it
 * may) are writable; v2, its own cgroup is writable, offers memory and
 * pids, and either has them on for its children already or holds no
 * process but this one (which moves into a leaf of its own at launch, the
 * kernel's rule that a cgroup with children holds no process). why says
 * what is missing when 0. Looks only; changes nothing. */
int sg_cgroup_find(bool as_root, char *base[SG_CGROUP_V1_MAX], bool *delegated, char *why,
                   size_t whylen);
/* v2, the cgroup a systemd machine delegates to each user: the
 * "user@UID.service" folder on path (this process's cgroup, as in
 * /proc/self/cgroup, under top), when it is a whole component of it, for
 * this uid, the folder is writable by this process, and its
 * cgroup.subtree_control has memory and pids on. Its children get those
 * controllers without a write to the manager's settings, and moving a
 * process from its own cgroup inside it needs write access there only.
 * NULL otherwise (malloc'd). */
char *sg_cgroup_user_service(const char *top, const char *path, uid_t uid);

/* v1: create the run's cgroups, write their limits and open each one's
 * "tasks" file for pid 1 to enter itself (tasks[i] is -1 where there is
 * none). Moving another process in takes the kernel's
 * global threadgroup lock, whose first writer waits for an RCU grace
 * period (8-20 ms measured); a single thread moving itself does not. The
 * kernel checks the opener's credentials, so pid 1 needs no privilege of
 * its own. */
int sg_cgroup_prepare(const struct sg_plan *p, struct sg_sandbox *sb, int tasks[SG_CGROUP_V1_MAX]);
/* In pid 1, single-threaded: write "0" (the caller) to each of the n
 * "tasks" fds, close them. */
int sg_cgroup_enter(int *tasks, size_t n);
/* v2: create the run's cgroup, write the limits, move pid in. */
int sg_cgroup_setup(const struct sg_plan *p, pid_t pid, struct sg_sandbox *sb);
void sg_cgroup_hits(const struct sg_sandbox *sb, struct sg_limit_hits *h);
/* The most memory the run's cgroup has held: memory.max_usage_in_bytes
 * (v1) or memory.peak (v2; memory.current before Linux 5.19, which the
 * caller keeps the largest of); -1 without a cgroup */
long long sg_cgroup_memory(const struct sg_sandbox *sb);
/* The most processes and threads the run's cgroup has held at once
 * (pids.peak, v1 and v2, where the kernel keeps it); -1 without one */
long long sg_cgroup_pids_peak(const struct sg_sandbox *sb);
void sg_cgroup_remove(struct sg_sandbox *sb);
/* Remove cgroups of runs whose broker is gone, killing what is left in them. */
int sg_cgroup_clean_stale(void);

#endif
