/* One whole run of a skill, the same for every front end (the CLI, the
 * TUI, the MCP server): the plan, the permission engine, the session, the
 * trace written, the audit record appended. A front end gives a loaded
 * skill and a request (what the person or agent asked for) and gets the
 * run's facts, events on its bus and callbacks; it never sees the plan.
 * What each front end may change is decided here, in sg_runner_new. */
#ifndef SG_RUNNER_H
#define SG_RUNNER_H

#include <stdio.h>

#include <jansson.h>

#include "diag.h"
#include "loop.h"
#include "otel.h"
#include "perm.h"
#include "session.h"
#include "skill.h"

/* Who asks for the run. */
enum sg_front {
    SG_FRONT_CLI,   /* a person at `skillgate run` */
    SG_FRONT_TUI,   /* a person in the TUI */
    SG_FRONT_AGENT, /* an agent, through the MCP server */
};

struct sg_run_request {
    enum sg_front front;
    const char *input;           /* JSON text for SKILL_INPUT and stdin; NULL: "{}" */
    long long timeout_s;         /* 0: the manifest's. An agent may only shorten it */
    long long memory_mb;         /* 0: the manifest's (--memory) */
    char *const *host_env;       /* the environment to filter; NULL: ours */
    const char *script;          /* run this script of the skill instead (sandbox.h) */
    char *const *args;           /* its arguments, byte for byte */
    size_t nargs;
    const char *work_dir;        /* the working folder; NULL: see sg_run_opts */
    bool dry_run;                /* nothing is made: a manifest's missing $CWD folder is said */
    const char *python;          /* a Python environment or program; NULL: see sg_run_opts */
    /* a module run instead (`python -m MODULE`, as from the skill's folder:
     * that folder is sys.path[0]; the working folder stays work_dir's) */
    const char *module;
    /* for this run only, as if the manifest declared them (their origin
     * says "--env" / "--write"): variables passed from host_env by name
     * (never a value), folders made writable (by real path) */
    const char *const *env;
    size_t nenv;
    const char *const *write;
    size_t nwrite;
    bool no_records;             /* run even when the trace and audit record cannot be kept */
    bool fresh_home;             /* drop what the skill's own home kept (keephome.h) */
    bool no_kept_home;           /* vet: the home starts empty and nothing of it is kept */
    bool no_named;               /* vet: no file the arguments name is shown (named.h) */
    /* skillgate wrap (wrap.h): the skill is a command, shown the machine as
     * sg_run_opts.wrap says; copy_output: its output reaches ours unchanged;
     * masks: more places hidden, as path, why pairs */
    bool wrap, copy_output;
    char *const *masks;
    size_t nmasks;
    bool observe_reads;          /* skillgate record: note every path opened (reads.h) */
    bool not_a_look;             /* the agent started it (the hook's rewrite: --prompt
                                  * attached): it is no look of the person's at the skill,
                                  * so it never marks the skill seen (vetted) */
    /* a person's choices, ignored for an agent: */
    bool allow_degraded;         /* run without Landlock (said on every report) */
    const char *const *resolve;  /* "NAME:PORT:ADDR[:PORT2]", as curl's --resolve */
    size_t nresolve;
    const char *const *allow_upstream; /* loopback, private or metadata addresses */
    size_t nallow_upstream;
    /* --publish [HOSTPORT:]PORT: the skill's PORT published from the start
     * (declared or not), at this machine's 127.0.0.1:HOSTPORT when given */
    const char *const *publish;
    size_t npublish;
    /* who decides what the manifest did not grant (an agent's run always
     * asks: an attached TUI, else a terminal, else nobody, which denies) */
    enum sg_perm_mode pmode;
    bool pmode_set;              /* else: CLI asks when there is a terminal; TUI asks */
    const char *policy_file;     /* rules only, unless PROMPT was set too */
    bool allow_all;              /* every undeclared request allowed, loudly */
    int prompt_timeout;          /* seconds; 0: 30 */
    char *const *prompt_program; /* --prompt exec: (argv, NULL-terminated); NULL: config.yaml's
                                  * prompt_exec, unless --prompt chose another */
};

/* The facts of a prepared run a front end shows. */
struct sg_run_info {
    const char *skill_name, *run_id;
    long long memory_mb, timeout_s;
    bool degraded;               /* no Landlock */
    bool allow_all;
    /* the working folder the skill will be shown, its real path (the
     * plan's own: what a front end decides about is what is bound) */
    const char *cwd;
    /* what the person should hear before the run (a credential-looking
     * --env name passed as asked), one line each, NULL-terminated */
    const char *const *notes;
};

/* How a front end takes part in the run. */
struct sg_runner_opts {
    sg_perm_show_fn show;               /* NULL: the line prompt on /dev/tty */
    void *show_ctx;
    const struct sg_loop_source *sources;    /* the front end's, run first in sg_runner_run's loop */
    size_t nsources;
    const char *trace_out;              /* a second copy of the trace, or NULL */
    struct sg_span_ctx otel_parent;     /* the caller's span (an MCP call); not valid: the
                                         * environment's TRACEPARENT, else a new trace */
};

struct sg_runner_out {
    struct sg_run_result res;
    json_t *doc;       /* the trace document (the caller decrefs it) */
    char *trace_path;  /* where it was written (caller frees), or NULL */
    char *trace_path2; /* the --trace-out copy */
    int trace_err, trace_err2; /* -errno of the writes */
    int audit_err;
    char *journal_path; /* kept: the records failed; the next start writes them */
    int journal_err;    /* -errno of the journal's writes (what recovery would miss) */
    bool no_records;    /* --no-records: their failure is not the run's */
};

/* Start the OpenTelemetry export from the environment and config.yaml
 * (otel.h): 1 on, 0 off, -EINVAL with why (a wrong setting), -ENOSYS
 * (no libcurl: export off, why says it). Once a process. */
int sg_runner_otel_start(char *why, size_t whylen);

struct sg_runner;
/* Prepare sk's run under rq: nothing is executed and the host is not
 * changed. Returns 0, or the exit status `skillgate run` gives when it
 * will not run (SG_RUN_REFUSED, SG_RUN_SETUP_FAILED) with why set. */
int sg_runner_new(const struct sg_skill *sk, const struct sg_run_request *rq,
                  struct sg_runner **out, const char **why);
const struct sg_run_info *sg_runner_info(const struct sg_runner *r);
/* The dry run: everything the run would get. */
void sg_runner_print_plan(const struct sg_runner *r, FILE *f);
/* Run it, in a loop of the runner's own with o's sources first. Returns 0
 * once the run happened (whatever the skill did), or with problems in d
 * when nothing ran: -EINVAL, the policy or grants file is bad; another
 * -errno, the run's records could not be kept (journal.h; the request's
 * no_records runs anyway). Once per runner. */
int sg_runner_run(struct sg_runner *r, struct sg_event_bus *bus, const struct sg_runner_opts *o,
                  struct sg_runner_out *out, struct sg_diags *d);

/* The same in steps, for a front end whose own loop runs the run's sources
 * beside its own (the TUI): start, then turns of that loop while running,
 * then finish. start returns 0 once the run began or failed to (finish
 * says which), or -EINVAL with d as above. */
int sg_runner_start(struct sg_runner *r, struct sg_event_bus *bus, const struct sg_runner_opts *o,
                    struct sg_diags *d);
/* The run's poll sources (session.h; shared: the caller's fds are in the
 * same loop). None before start, after finish, or when the sandbox could
 * not be built. */
size_t sg_runner_sources(struct sg_runner *r, bool shared, struct sg_loop_source *out, size_t max);
/* Still running? *cap_ms: the longest the loop may wait (-1: no cap). */
bool sg_runner_running(const struct sg_runner *r, int *cap_ms);
/* A person stopped it: every process of the sandbox is killed. */
void sg_runner_stop(struct sg_runner *r);
/* skillgate got signo: the same, the run ends "interrupted by SIG…". */
/* The agent that asked for the run took it back: it ends "cancelled". */
void sg_runner_cancel(struct sg_runner *r);
void sg_runner_interrupt(struct sg_runner *r, int signo);
/* For a status bar. */
void sg_runner_live(struct sg_runner *r, struct sg_session_live *live);
/* The end: trace and audit record written, out filled. */
void sg_runner_finish(struct sg_runner *r, struct sg_runner_out *out);
void sg_runner_out_free(struct sg_runner_out *out);
/* A run started and never finished is stopped and its records written. */
void sg_runner_free(struct sg_runner *r);

/* 0 when arg is a well-formed --resolve NAME:PORT:ADDR[:PORT2]. */
int sg_runner_check_resolve(const char *arg);
/* 0 when arg is a well-formed --publish [HOSTPORT:]PORT (1024-65535). */
int sg_runner_check_publish(const char *arg);

#endif
