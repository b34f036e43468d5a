#include "exectree.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* The line from a process to its root is this long at most. */
#define MAX_DEPTH 128

bool sg_proc_parent(pid_t pid, pid_t *ppid, unsigned long long *start)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    cleanup_fd int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "pid (comm) state ppid ..."; comm may hold spaces and ')' */
    char *s = strrchr(buf, ')');
    if (!s || s[1] != ' ')
        return false;
    s += 2; /* field 3, the state */
    for (int field = 3; field < 22; field++) {
        if (field == 4)
            *ppid = (pid_t)strtol(s, NULL, 10);
        s = strchr(s, ' ');
        if (!s)
            return false;
        s++;
    }
    char *end;
    *start = strtoull(s, &end, 10);
    return end != s;
}

bool sg_exectree_add(struct sg_exectree *t, pid_t pid, const char *rule)
{
    pid_t ppid;
    unsigned long long start;
    if (t->n == SG_EXECTREE_MAX || !sg_proc_parent(pid, &ppid, &start))
        return false;
    struct sg_exectree_root *r = &t->roots[t->n++];
    r->pid = pid, r->start = start;
    snprintf(r->rule, sizeof r->rule, "%s", rule);
    return true;
}

static const struct sg_exectree_root *root_named(const struct sg_exectree *t, pid_t pid,
                                                 unsigned long long start)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->roots[i].pid == pid && t->roots[i].start == start)
            return &t->roots[i];
    return NULL;
}

const struct sg_exectree_root *sg_exectree_of(const struct sg_exectree *t, pid_t pid)
{
    if (!t->n)
        return NULL;
    pid_t ppid = 0;
    unsigned long long start, child_start = ~0ULL;
    for (int depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
        if (!sg_proc_parent(pid, &ppid, &start) || start > child_start)
            return NULL; /* gone, or a pid reused since the child was born */
        const struct sg_exectree_root *r = root_named(t, pid, start);
        if (r)
            return r;
        child_start = start;
        pid = ppid;
    }
    return NULL;
}
