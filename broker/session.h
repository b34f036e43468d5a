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

/* Exit codes of `skillgate run` beyond the skill's own (documented). */
enum {
    SG_RUN_TIMEOUT = 124,     /* the wall-clock limit killed it */
    SG_RUN_SETUP_FAILED = 125,/* the sandbox could not be built */
    SG_RUN_REFUSED = 126,     /* nothing to run (instruction-only, WASM) or refused */
    SG_RUN_EXEC_FAILED = 127, /* the entrypoint could not be executed */
    SG_RUN_NO_RECORDS = 74,   /* the run's records could not be kept (EX_IOERR) */
};

/* X(ID, "status" in the trace and the audit record) */
#define SG_RUN_ENDS(X)                                                                    \
    X(EXITED, "completed")                                                                \
    X(SIGNALED, "killed")                                                                 \
    X(TIMEOUT, "timeout")                                                                 \
    X(SETUP_FAILED, "setup_failed")                                                       \
    X(EXEC_FAILED, "exec_failed")                                                         \
    X(INTERRUPTED, "interrupted") /* a signal to skillgate: the sandbox was stopped */    \
    X(CANCELLED, "cancelled")     /* the agent that asked for it took the request back */ \
    X(INCOMPLETE, "incomplete")   /* the broker died: written from its journal later */
enum sg_run_end {
#define X(id, name) SG_END_##id,
    SG_RUN_ENDS(X)
#undef X
};
const char *sg_run_end_name(enum sg_run_end e);

struct sg_run_result {
    enum sg_run_end end;
    int exit_code;           /* what `skillgate run` exits with */
    int skill_status;        /* the skill's wait status, when it ran */
    int64_t started_ms, ended_ms;
    uint64_t bytes[2], dropped[2]; /* stdout, stderr */
    char out_sha256[72], err_sha256[72]; /* over every byte read, dropped or not */
    char failed_step[512]; /* room for a path and why it was refused */
    int failed_errno;
    char end_reason[160];  /* how it ended, in words: "interrupted by SIGINT" */
    long long memory_peak; /* bytes, the cgroup's peak; 0 where unknown */
    long long pids_peak;   /* processes and threads at once (pids.peak); 0 where unknown */
};

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
#define SG_SESSION_SOURCES 14
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
