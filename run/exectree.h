/* The programs a person allowed "with what they run", for this run
 * (perm.h sg_perm_answer_program): their processes, and whether an exec
 * comes from one of them or from a process they started.
 *
 * A process is named by its pid and its start time (field 22 of
 * /proc/PID/stat), so a pid reused by another process is not the one that
 * was allowed. The line from a process to its root is read parent by
 * parent in /proc; each parent must have started no later than its child
 * (a pid reused after the child was born started later), and a process
 * whose parent died was handed to the sandbox's init, which is no root:
 * what cannot be read that way is no descendant, and is asked. */
#ifndef SG_EXECTREE_H
#define SG_EXECTREE_H

#include <stdbool.h>
#include <sys/types.h>

#define SG_EXECTREE_MAX 64

struct sg_exectree_root {
    pid_t pid;
    unsigned long long start;
    char rule[512]; /* the answer's rule, as the events name it */
};

struct sg_exectree {
    struct sg_exectree_root roots[SG_EXECTREE_MAX];
    size_t n;
};

/* pid's parent and start time from /proc; false when it is gone. */
bool sg_proc_parent(pid_t pid, pid_t *ppid, unsigned long long *start);
/* pid (a process that has just run the allowed program) becomes a root;
 * false when it cannot be named, or there is no room (then its children
 * are asked, as before the answer). */
bool sg_exectree_add(struct sg_exectree *t, pid_t pid, const char *rule);
/* The root pid is or descends from, or NULL. */
const struct sg_exectree_root *sg_exectree_of(const struct sg_exectree *t, pid_t pid);

#endif
