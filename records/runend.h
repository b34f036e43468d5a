/* How a run ended, as its records keep it: the end's name, the exit code
 * `skillgate run` gives, the output's sizes and digests, the peaks. The
 * session (run/session.c) fills it; the trace, the journal and the TUI
 * read it. */
#ifndef SG_RUNEND_H
#define SG_RUNEND_H

#include <stdint.h>

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
    /* when a limit stopped it, or it died (a signal, a failure) near one:
     * which, and how to raise it; else "" */
    char limit_note[256];
    long long memory_peak; /* bytes, the cgroup's peak or the broker's watch's; 0 where unknown */
    long long pids_peak;   /* processes and threads at once (pids.peak); 0 where unknown */
};

#endif
