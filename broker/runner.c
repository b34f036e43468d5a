#include "runner.h"

#include <errno.h>
#include <string.h>

#include "audit.h"
#include "digest.h"
#include "seen.h"
#include "sanitize.h"
#include "trace.h"
#include "util.h"

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

int sg_runner_run(const struct sg_skill *sk, const struct sg_plan *plan, struct sg_event_bus *bus,
                  const struct sg_runner_opts *o, struct sg_runner_out *out, struct sg_diags *d)
{
    memset(out, 0, sizeof *out);
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
    struct sg_perm_opts po = {.mode = o->pmode, .policy_file = o->policy_file,
                              .skill = plan->skill_name, .digest = digest,
                              .run_id = plan->run_id,
                              .timeout_s = o->prompt_timeout > 0 ? o->prompt_timeout : 30,
                              .bus = bus};
    struct sg_perm *perm = sg_perm_new(&po, d);
    if (!perm) {
        sg_trace_free(&trace);
        sg_buf_free(&cap.out);
        sg_buf_free(&cap.err);
        return -EINVAL;
    }
    if (o->show)
        sg_perm_set_frontend(perm, o->show, o->show_ctx);
    json_t *seen = manifests_seen(sk, bus);
    sg_session_run(plan, bus, perm, o->hook, &out->res);
    sg_perm_free(perm);
    out->doc = sg_trace_build(&trace, sk, plan, &out->res, digest);
    json_object_set_new(out->doc, "manifests", seen);
    if (o->person)
        sg_seen_mark(sk);
    out->trace_err = sg_trace_write(out->doc, NULL, sk->root, &out->trace_path);
    if (o->trace_out)
        out->trace_err2 = sg_trace_write(out->doc, o->trace_out, sk->root, &out->trace_path2);
    out->audit_err = audit_run(out->doc, plan, &out->res, &cap, o->input, out->trace_path);
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
