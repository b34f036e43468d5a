/* One run of a skill: launch it under its plan, a table of poll sources
 * (loop.h: the front end, output, nflog, egress, permissions, decoys,
 * seccomp notifications, exec, connect, stdin, pid 1's control socket, the
 * disk cap, the timeout timer, pid 1's pidfd), the loop, and the end said
 * as a result and an event. Every happening is an event. */
#ifndef SG_SESSION_H
#define SG_SESSION_H

#include <poll.h>
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
};

enum sg_run_end { SG_END_EXITED, SG_END_SIGNALED, SG_END_TIMEOUT, SG_END_SETUP_FAILED,
                  SG_END_EXEC_FAILED };

struct sg_run_result {
    enum sg_run_end end;
    int exit_code;           /* what `skillgate run` exits with */
    int skill_status;        /* the skill's wait status, when it ran */
    int64_t started_ms, ended_ms;
    uint64_t bytes[2], dropped[2]; /* stdout, stderr */
    char out_sha256[72], err_sha256[72]; /* over every byte read, dropped or not */
    char failed_step[512]; /* room for a path and why it was refused */
    int failed_errno;
};

/* Output lines longer than this are cut (at a UTF-8 boundary) into several events. */
#define SG_LINE_MAX 4096

/* What a front end sees of a live run (for a status bar). */
struct sg_session_live {
    pid_t pid;              /* pid 1 of the sandbox, 0 before launch */
    int64_t started_ms;
    long long memory_bytes; /* the cgroup's usage; -1 where there is no cgroup */
    bool exited;
};

/* A front end that shares the session's poll loop (the TUI): its fds are
 * polled with the broker's, so neither ever blocks the other. dispatch
 * returns true to stop the run (the whole sandbox is killed). */
struct sg_session_hook {
    size_t (*pollfds)(void *ctx, struct pollfd *out, size_t max);
    bool (*dispatch)(void *ctx, const struct pollfd *pfds, size_t n,
                     const struct sg_session_live *live);
    int (*timeout)(void *ctx); /* ms until it wants to run again; -1 none */
    void *ctx;
};
#define SG_HOOK_MAX_FDS 24

struct sg_perm;
struct sg_plan;
/* perm decides what the manifest did not grant (NULL: deny it all); hook
 * may be NULL. */
int sg_session_run(const struct sg_plan *plan, struct sg_event_bus *bus, struct sg_perm *perm,
                   const struct sg_session_hook *hook, struct sg_run_result *res);

#endif
