/* One whole run of a skill, the same for every front end (the CLI, the
 * TUI, later the MCP server): the permission engine, the session, the trace
 * written, the audit record appended. The front end brings its sinks on the
 * bus and, if it shows prompts itself, a show function and a poll hook. */
#ifndef SG_RUNNER_H
#define SG_RUNNER_H

#include <jansson.h>

#include "diag.h"
#include "perm.h"
#include "session.h"
#include "skill.h"

struct sg_runner_opts {
    enum sg_perm_mode pmode;
    const char *policy_file;
    int prompt_timeout;                 /* seconds */
    sg_perm_show_fn show;               /* NULL: the line prompt on /dev/tty */
    void *show_ctx;
    const struct sg_session_hook *hook; /* may be NULL */
    const char *input;                  /* for the audit record's hash */
    const char *trace_out;              /* a second copy of the trace, or NULL */
    bool person;                        /* a person runs it (CLI, TUI): their look at the
                                           manifests is remembered (seen.h); an agent's is not */
};

struct sg_runner_out {
    struct sg_run_result res;
    json_t *doc;       /* the trace document (the caller decrefs it) */
    char *trace_path;  /* where it was written (caller frees), or NULL */
    char *trace_path2; /* the --trace-out copy */
    int trace_err, trace_err2; /* -errno of the writes */
    int audit_err;
};

/* Returns 0 once the run happened (whatever the skill did), or -EINVAL with
 * problems in d when the policy or grants file is bad (nothing ran). */
int sg_runner_run(const struct sg_skill *sk, const struct sg_plan *plan, struct sg_event_bus *bus,
                  const struct sg_runner_opts *o, struct sg_runner_out *out, struct sg_diags *d);
void sg_runner_out_free(struct sg_runner_out *out);

#endif
