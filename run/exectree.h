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

#define SG_EXECTREE_MAX 1024 /* live roots and barriers; the dead are dropped */

struct sg_exectree_root {
    pid_t pid;
    unsigned long long start;
    bool barrier;   /* a process of the tree that ran a program no answer of it
                     * covered (a file the skill wrote, allowed once): it and its
                     * children are out of the tree */
    char rule[512]; /* the answer's rule, as the events name it */
};

struct sg_exectree {
    struct sg_exectree_root roots[SG_EXECTREE_MAX];
    size_t n;
};

/* pid's parent and start time from /proc; false when it is gone. */
bool sg_proc_parent(pid_t pid, pid_t *ppid, unsigned long long *start);
/* pid (a process that has just run the allowed program, stopped before
 * its first instruction) becomes a root. NULL, or why not (static): it
 * cannot be named, there is no room, it has children already (a process
 * forked before the exec runs the skill's code, not the program's), or its
 * environment makes the program load code of the skill's (env_unsafe).
 * Then its children are asked, as before the answer. */
const char *sg_exectree_add(struct sg_exectree *t, pid_t pid, const char *rule,
                            char *const *env, size_t nenv);
/* pid (stopped at its exec) leaves the tree with its children: NULL, or
 * why it could not be marked (then the caller kills it). */
const char *sg_exectree_bar(struct sg_exectree *t, pid_t pid);
/* A reason pid's environment (the new image's, read while it is stopped
 * at its exec) makes a program load or run code it names (LD_PRELOAD,
 * BASH_ENV, PYTHONPATH, NODE_OPTIONS, GIT_CONFIG_*, ...) other than as the
 * sandbox was launched (env, nenv: the same NAME=value passes), or that
 * it cannot be read whole; NULL when it does not. name (size n) says
 * which. */
const char *sg_exectree_env_unsafe(pid_t pid, char *const *env, size_t nenv, char *name,
                                   size_t n);
/* The root pid is or descends from, or NULL (also when a barrier comes
 * first on the way up). */
const struct sg_exectree_root *sg_exectree_of(const struct sg_exectree *t, pid_t pid);

#endif
