#include "runner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "digest.h"
#include "lineprompt.h"
#include "parse.h"
#include "plantext.h"
#include "sandbox.h"
#include "seen.h"
#include "sanitize.h"
#include "trace.h"
#include "util.h"

struct sg_runner {
    const struct sg_skill *sk;
    struct sg_plan plan;
    struct sg_tools tools; /* what allowed-tools lets it ask for (the broker's, not the plan's) */
    struct sg_run_info info;
    enum sg_perm_mode pmode;
    const char *policy_file, *input;
    int prompt_timeout;
    bool person; /* a person runs it (CLI, TUI): their look at the manifests is
                    remembered (seen.h); an agent's is not */
    bool ran;
};

/* The first bytes of each stream, for the audit record. */
struct capture {
    struct sg_buf out, err;
};

static void capture_sink(void *ctx, const struct sg_event *ev)
{
    struct capture *c = ctx;
    if (ev->kind != SG_EV_STDOUT && ev->kind != SG_EV_STDERR)
        return;
    struct sg_buf *b = ev->kind == SG_EV_STDOUT ? &c->out : &c->err;
    if (b->len + ev->message_len + 1 <= b->max) {
        sg_buf_append(b, ev->message, ev->message_len);
        sg_buf_append(b, "\n", 1);
    } else {
        b->dropped += ev->message_len + 1;
    }
}

static char *sha256_text(const char *s)
{
    char *out = sg_xmalloc(SG_DIGEST_STRLEN);
    sg_sha256_text(s, strlen(s), out);
    return out;
}

/* One audit record for the run, after its trace. */
static int audit_run(json_t *doc, const struct sg_plan *plan, const struct sg_run_result *res,
                      struct capture *cap, const char *input, const char *trace_path)
{
    const char *status = json_string_value(json_object_get(doc, "status"));
    bool denied = false;
    size_t di;
    json_t *dj;
    json_array_foreach(json_object_get(doc, "decisions"), di, dj)
    {
        const char *dn = json_string_value(json_object_get(dj, "decision"));
        denied |= dn && strstr(dn, "deny");
    }
    /* a run that failed after a request of its was refused failed for that */
    const char *st = !strcmp(status, "timeout")                                ? "timeout"
                     : !strcmp(status, "completed") && res->exit_code == 0    ? "success"
                     : denied                                                 ? "permission_denied"
                                                                              : "failed";
    cleanup_free char *in = sha256_text(input ? input : "{}");
    cleanup_free char *outs = sg_sanitize(cap->out.data ? cap->out.data : "", cap->out.len, SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB);
    cleanup_free char *errs = sg_sanitize(cap->err.data ? cap->err.data : "", cap->err.len, SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB);
    json_t *used = json_array();
    for (size_t i = 0; i < plan->negress; i++)
        json_array_append_new(used, json_sprintf("network:%s", plan->egress[i].domain));
    for (size_t i = 0; i < plan->nrw; i++)
        json_array_append_new(used, json_sprintf("write:%s", plan->rw_paths[i]));
    for (size_t i = 0; i < plan->npassed; i++)
        json_array_append_new(used, json_sprintf("env:%s", plan->passed[i]));
    json_t *rec = json_pack(
        "{s:s, s:s, s:s, s:O, s:O, s:O, s:s, s:s, s:O, s:s, s:s, s:O, s:O, s:o, s:s, s:s, s:o}",
        "type", "run", "run_id", plan->run_id, "skill", plan->skill_name, "version",
        json_object_get(doc, "skill_version"), "digest", json_object_get(doc, "skill_digest"),
        "policy_digest", json_object_get(doc, "policy_digest"), "input_sha256", in,
        "output_sha256", res->out_sha256[0] ? res->out_sha256 : "", "exit_code",
        json_object_get(doc, "exit_code"), "status", st, "started_at",
        json_string_value(json_object_get(doc, "started_at")), "duration_ms",
        json_object_get(doc, "duration_ms"), "max_severity",
        json_object_get(json_object_get(doc, "violation_summary"), "max_severity"),
        "permissions_used", used, "stdout", outs, "stderr", errs, "trace",
        trace_path ? json_string(trace_path) : json_null());
    cleanup_free char *path = sg_audit_path();
    int r = sg_audit_append(path, rec);
    json_decref(rec);
    return r;
}


/* Have the manifests changed since a person last looked? Said on the bus
 * (and so in the trace's events) and as the trace's "manifests" field. */
static json_t *manifests_seen(const struct sg_skill *sk, struct sg_event_bus *bus)
{
    struct sg_seen s;
    sg_seen_compare(sk, &s);
    json_t *files = json_array();
    char list[128] = "";
    for (size_t i = 0; i < SG_SEEN_NFILES; i++)
        if (s.changed[i]) {
            json_array_append_new(files, json_string(sg_seen_files[i]));
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", sg_seen_files[i]);
        }
    const char *state = s.state == SG_SEEN_NEW ? "new" : s.state == SG_SEEN_SAME ? "same" : "changed";
    json_t *doc = json_pack("{s:s, s:s?, s:o}", "state", state, "last_seen",
                            s.when[0] ? s.when : NULL, "changed", files);
    if (s.state == SG_SEEN_CHANGED)
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED, json_deep_copy(doc),
                    "the manifests changed since they were last seen (%s): %s; skillgate tui "
                    "shows the diff", s.when, list);
    return doc;
}

/* --resolve NAME:PORT:ADDR[:PORT2], numeric ADDR ([v6] in brackets). */
static int parse_resolve(const char *arg, struct sg_resolve *r)
{
    char buf[512];
    long long v;
    if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
        return -EINVAL;
    char *p1 = strchr(buf, ':');
    if (!p1)
        return -EINVAL;
    *p1++ = '\0';
    char *p2 = strchr(p1, ':');
    if (!p2)
        return -EINVAL;
    *p2++ = '\0';
    if (sg_parse_ll(p1, 1, 65535, &v) < 0)
        return -EINVAL;
    r->port = (uint16_t)v;
    r->to_port = 0;
    char *addr = p2, *rest;
    if (*addr == '[') {
        addr++;
        char *close = strchr(addr, ']');
        if (!close)
            return -EINVAL;
        *close = '\0';
        rest = close + 1;
    } else {
        rest = strchr(addr, ':'); /* a v4 address has none: this one starts PORT2 */
        if (!rest)
            rest = addr + strlen(addr);
    }
    if (*rest == ':') {
        *rest = '\0';
        if (sg_parse_ll(rest + 1, 1, 65535, &v) < 0)
            return -EINVAL;
        r->to_port = (uint16_t)v;
    } else if (*rest) {
        return -EINVAL;
    }
    unsigned char bin[16];
    if (inet_pton(AF_INET, addr, bin) != 1 && inet_pton(AF_INET6, addr, bin) != 1)
        return -EINVAL;
    cleanup_free char *norm = NULL;
    const char *why = NULL;
    if (sg_domain_normalize(buf, &norm, &why) < 0)
        return -EINVAL;
    r->name = steal_pointer(&norm);
    r->addr = sg_xstrdup(addr);
    return 0;
}

int sg_runner_check_resolve(const char *arg)
{
    struct sg_resolve r;
    int e = parse_resolve(arg, &r);
    if (e == 0)
        free(r.name), free(r.addr);
    return e;
}

/* Who decides what the manifest did not grant, by front end. */
static enum sg_perm_mode perm_mode(const struct sg_run_request *rq)
{
    if (rq->front == SG_FRONT_AGENT)
        return SG_PERM_PROMPT; /* an attached TUI, else a terminal, else nobody: deny */
    if (rq->allow_all)
        return SG_PERM_ALLOW_ALL;
    enum sg_perm_mode m = rq->pmode;
    if (!rq->pmode_set && rq->front == SG_FRONT_TUI)
        m = SG_PERM_PROMPT;
    else if (!rq->pmode_set) { /* ask a person when there is a terminal to ask on */
        int t = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        m = t >= 0 ? SG_PERM_PROMPT : SG_PERM_DENY_ALL;
        if (t >= 0)
            close(t);
    }
    if (rq->policy_file && !(rq->pmode_set && rq->pmode == SG_PERM_PROMPT))
        m = SG_PERM_POLICY;
    return m;
}

int sg_runner_new(const struct sg_skill *sk, const struct sg_run_request *rq,
                  struct sg_runner **out, const char **why)
{
    extern char **environ;
    *out = NULL;
    *why = NULL;
    if (sg_skill_has_errors(sk)) {
        *why = "refusing to run a skill with errors";
        return SG_RUN_REFUSED;
    }
    bool agent = rq->front == SG_FRONT_AGENT;
    struct sg_run_opts ro = {.input = rq->input, .timeout_s = rq->timeout_s,
                             .host_env = rq->host_env ? rq->host_env : environ};
    if (agent && ro.timeout_s > sk->policy.limits.runtime_s.value)
        ro.timeout_s = 0; /* an agent may shorten the manifest's limit, never lengthen it */
    struct sg_resolve res_v[64];
    size_t nres = 0;
    if (!agent) {
        ro.allow_degraded = rq->allow_degraded;
        for (size_t i = 0; i < rq->nresolve && nres < SG_ARRAY_LEN(res_v); i++)
            if (parse_resolve(rq->resolve[i], &res_v[nres]) == 0)
                nres++;
        ro.resolve = res_v;
        ro.nresolve = nres;
        ro.allow_upstream = (char *const *)rq->allow_upstream;
        ro.nallow_upstream = rq->nallow_upstream;
    }
    struct sg_runner *r = sg_xcalloc(1, sizeof *r);
    int e = sg_plan_build(sk, &ro, &r->plan, why);
    for (size_t i = 0; i < nres; i++)
        free(res_v[i].name), free(res_v[i].addr);
    if (e < 0) {
        bool no_landlock = e == -ENOTSUP && r->plan.landlock_abi == 0 && !ro.allow_degraded;
        free(r);
        return no_landlock ? SG_RUN_SETUP_FAILED : SG_RUN_REFUSED;
    }
    r->sk = sk;
    sg_tools_from_policy(&sk->policy, &r->tools);
    r->pmode = perm_mode(rq);
    r->policy_file = agent ? NULL : rq->policy_file;
    r->input = rq->input;
    r->prompt_timeout = rq->prompt_timeout > 0 ? rq->prompt_timeout : 30;
    r->person = !agent;
    r->info = (struct sg_run_info){.skill_name = r->plan.skill_name, .run_id = r->plan.run_id,
                                   .memory_mb = r->plan.limits[SG_PL_MEMORY].value,
                                   .timeout_s = r->plan.limits[SG_PL_TIMEOUT].value,
                                   .degraded = r->plan.degraded,
                                   .allow_all = r->pmode == SG_PERM_ALLOW_ALL};
    *out = r;
    return 0;
}

const struct sg_run_info *sg_runner_info(const struct sg_runner *r)
{
    return &r->info;
}

void sg_runner_print_plan(const struct sg_runner *r, FILE *f)
{
    sg_plan_print(f, &r->plan);
}

void sg_runner_free(struct sg_runner *r)
{
    if (!r)
        return;
    sg_plan_free(&r->plan);
    sg_tools_free(&r->tools);
    free(r);
}

int sg_runner_run(struct sg_runner *r, struct sg_event_bus *bus, const struct sg_runner_opts *o,
                  struct sg_runner_out *out, struct sg_diags *d)
{
    const struct sg_skill *sk = r->sk;
    const struct sg_plan *plan = &r->plan;
    memset(out, 0, sizeof *out);
    if (r->ran)
        return -EALREADY;
    r->ran = true;
    char digest[SG_DIGEST_STRLEN] = "";
    if (sg_skill_digest(sk->root, digest, NULL) < 0)
        digest[0] = '\0';
    struct sg_trace trace;
    sg_trace_init(&trace);
    sg_bus_subscribe(bus, sg_trace_sink, &trace);
    struct capture cap;
    sg_buf_init(&cap.out, SG_AUDIT_OUTPUT_CAP);
    sg_buf_init(&cap.err, SG_AUDIT_OUTPUT_CAP);
    sg_bus_subscribe(bus, capture_sink, &cap);
    struct sg_perm_opts po = {.mode = r->pmode, .policy_file = r->policy_file,
                              .skill = plan->skill_name, .digest = digest,
                              .run_id = plan->run_id, .timeout_s = r->prompt_timeout,
                              .tools = &r->tools, .bus = bus};
    struct sg_perm *perm = sg_perm_new(&po, d);
    if (!perm) {
        sg_trace_free(&trace);
        sg_buf_free(&cap.out);
        sg_buf_free(&cap.err);
        return -EINVAL;
    }
    struct sg_lineprompt *lp = NULL;
    if (o->show)
        sg_perm_set_frontend(perm, o->show, o->show_ctx);
    else if (r->pmode == SG_PERM_PROMPT && (lp = sg_lineprompt_open()))
        sg_lineprompt_attach(lp, perm); /* else nobody to ask: denied */
    json_t *seen = manifests_seen(sk, bus);
    sg_session_run(plan, bus, perm, o->hook, &out->res);
    sg_perm_free(perm);
    sg_lineprompt_close(lp);
    out->doc = sg_trace_build(&trace, sk, plan, &out->res, digest);
    json_object_set_new(out->doc, "manifests", seen);
    if (r->person)
        sg_seen_mark(sk);
    out->trace_err = sg_trace_write(out->doc, NULL, sk->root, &out->trace_path);
    if (o->trace_out)
        out->trace_err2 = sg_trace_write(out->doc, o->trace_out, sk->root, &out->trace_path2);
    out->audit_err = audit_run(out->doc, plan, &out->res, &cap, r->input, out->trace_path);
    sg_sandbox_reap(); /* pid 1's teardown ran while the trace was written */
    sg_buf_free(&cap.out);
    sg_buf_free(&cap.err);
    sg_trace_free(&trace);
    return 0;
}

void sg_runner_out_free(struct sg_runner_out *out)
{
    json_decref(out->doc);
    free(out->trace_path);
    free(out->trace_path2);
    memset(out, 0, sizeof *out);
}
