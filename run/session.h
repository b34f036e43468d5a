/* One run of a skill: launch it under its plan, a table of poll sources
 * (loop.h: output, nflog, egress, permissions, decoys, seccomp
 * notifications, exec, connect, stdin, pid 1's control socket, the disk
 * cap, the timeout timer, pid 1's pidfd) that the caller runs in its own
 * loop beside its own sources (a terminal, an agent's socket), and the end
 * said as a result and an event. Every happening is an event. */
#ifndef SG_SESSION_H
#define SG_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "runend.h"

/* Output lines longer than this are cut (at a UTF-8 boundary) into several events. */
#define SG_LINE_MAX 4096

/* What a front end sees of a live run (for a status bar). */
struct sg_session_live {
    pid_t pid;              /* pid 1 of the sandbox, 0 before launch */
    int64_t started_ms;
    long long memory_bytes; /* the cgroup's peak usage; -1 where there is no cgroup */
    bool exited;
    bool paused;            /* the timeout is paused: a person is deciding */
    int64_t paused_ms;      /* the time the timeout was paused, so far */
};

struct sg_perm;
struct sg_plan;
struct sg_session;
struct sg_loop_source;
/* Launch plan's sandbox and start the skill; perm decides what the
 * manifest did not grant (NULL: deny it all). 0 with *out, or -errno when
 * the sandbox could not be built (res says where, and the end was
 * emitted: there is nothing to finish). */
int sg_session_start(const struct sg_plan *plan, struct sg_event_bus *bus, struct sg_perm *perm,
                     struct sg_session **out, struct sg_run_result *res);
/* The run's poll sources in the order they must be dispatched, for the
 * caller's loop (loop.h). shared: a front end's fds are in that loop too
 * (the output is read in smaller batches then, so its keys stay quick). */
size_t sg_session_sources(struct sg_session *s, bool shared, struct sg_loop_source *out, size_t max);
#define SG_SESSION_SOURCES 16
/* Is the run still going? *cap_ms: the longest the loop may wait now
 * (-1: no cap; after the exit, what is left of the 2 s drain). */
bool sg_session_running(const struct sg_session *s, int *cap_ms);
/* A person stopped it: every process of the sandbox is killed. */
void sg_session_stop(struct sg_session *s);
/* skillgate got signo (SIGINT, SIGTERM, SIGHUP): the same, and the run
 * ends "interrupted", exit status 128 + signo. */
void sg_session_interrupt(struct sg_session *s, int signo);
/* The client that asked for the run took the request back (MCP's
 * notifications/cancelled): the same, and the run ends "cancelled". */
void sg_session_cancel(struct sg_session *s);
/* What a status bar shows (the memory is read at most every 250 ms). */
void sg_session_live(struct sg_session *s, struct sg_session_live *live);
/* The end: the last packets and messages, limits hit, the result and its
 * event. s is freed. */
void sg_session_finish(struct sg_session *s, struct sg_run_result *res);

#endif
