/* Memory, pids and CPU limits in a cgroup of the run's own (v2, or the v1
 * controllers on hybrid hosts), when the broker may create one. */
#ifndef SG_CGROUP_H
#define SG_CGROUP_H

#include "sandbox.h"

/* Create the run's cgroup(s), write the limits and move pid in. */
int sg_cgroup_setup(const struct sg_plan *p, pid_t pid, struct sg_sandbox *sb);
void sg_cgroup_hits(const struct sg_sandbox *sb, struct sg_limit_hits *h);
/* memory.usage_in_bytes (v1) or memory.current (v2); -1 without a cgroup */
long long sg_cgroup_memory(const struct sg_sandbox *sb);
void sg_cgroup_remove(struct sg_sandbox *sb);
/* Remove cgroups of runs whose broker is gone, killing what is left in them. */
int sg_cgroup_clean_stale(void);

#endif
