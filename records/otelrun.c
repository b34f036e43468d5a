/* A run as OpenTelemetry spans (otelrun.h). */
#include "otelrun.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Output lines as events of the root: the first ones only, so that a
 * skill's printing cannot take the places of the other events */
#define OUTPUT_EVENTS 64
/* and the other events that are no child span (lookups, connections
 * closed, questions): the rest of the root's 128 keeps room for the end */
#define OTHER_EVENTS 48

struct sg_otel_run {
    struct sg_span *root;
    struct sg_span_ctx ctx; /* the root's, kept after it ended */
    uint64_t sent0, dropped0, failed0;
    size_t outputs, outputs_unsent, others, others_unsent;
};

/* SkillSandbox's span name for its kind (otel.rs's span_name), or ours
 * under sandbox.* where it has none. */
static const char *span_name(enum sg_event_kind k)
{
    switch (k) {
    case SG_EV_NETWORK_EGRESS_ALLOWED: return "sandbox.policy.network_allow";
    case SG_EV_NETWORK_EGRESS_BLOCKED:
    case SG_EV_DNS_BLOCKED: return "sandbox.policy.network_deny";
    case SG_EV_POLICY_APPLIED: return "sandbox.policy.network_setup";
    case SG_EV_ENV_FILTERED: return "sandbox.policy.env_filter";
    case SG_EV_FILES_READ: return "sandbox.fs.read";
    case SG_EV_PATH_NAMED: return "sandbox.fs.named";
    case SG_EV_FS_BLOCKED: return "sandbox.fs.blocked";
    case SG_EV_SYSCALL_BLOCKED: return "sandbox.seccomp.blocked";
    case SG_EV_STDOUT: return "sandbox.skill.stdout";
    case SG_EV_STDERR: return "sandbox.skill.stderr";
    case SG_EV_SKILL_STARTED: return "sandbox.skill.started";
    case SG_EV_SKILL_COMPLETED: return "sandbox.skill.completed";
    case SG_EV_SKILL_FAILED: return "sandbox.skill.failed";
    case SG_EV_DNS_RESOLUTION: return "sandbox.dns.resolve";
    case SG_EV_RESOURCE_LIMIT_HIT:
    case SG_EV_OUTPUT_DROPPED: return "sandbox.resource.limit_hit";
    case SG_EV_SANDBOX_DEGRADED: return "sandbox.policy.degraded";
    case SG_EV_NETWORK_CONNECTION_CLOSED: return "sandbox.net.closed";
    case SG_EV_HOST_SOCKET_CONNECTED: return "sandbox.net.host_socket";
    case SG_EV_PORT_PUBLISHED: return "sandbox.net.published";
    case SG_EV_PORT_NOT_PUBLISHED: return "sandbox.net.not_published";
    case SG_EV_INBOUND: return "sandbox.net.inbound";
    case SG_EV_WRITE_DISCARDED: return "sandbox.fs.write_discarded";
    case SG_EV_OUTPUT_ESCAPES: return "sandbox.skill.output_escapes";
    case SG_EV_PERMISSION_ASKED: return "sandbox.permission.asked";
    case SG_EV_PERMISSION_DECIDED: return "sandbox.permission.decision";
    case SG_EV_COUNT: break;
    }
    return "sandbox.event";
}

/* Child spans, as SkillSandbox's is_enforcement_event, and ours that stop
 * or let something through. */
static bool enforcement(enum sg_event_kind k)
{
    switch (k) {
    case SG_EV_NETWORK_EGRESS_BLOCKED: case SG_EV_NETWORK_EGRESS_ALLOWED:
    case SG_EV_POLICY_APPLIED: case SG_EV_ENV_FILTERED: case SG_EV_FS_BLOCKED:
    case SG_EV_SYSCALL_BLOCKED: case SG_EV_RESOURCE_LIMIT_HIT: case SG_EV_DNS_BLOCKED:
    case SG_EV_OUTPUT_DROPPED: case SG_EV_SANDBOX_DEGRADED: case SG_EV_HOST_SOCKET_CONNECTED:
    case SG_EV_PORT_NOT_PUBLISHED: case SG_EV_WRITE_DISCARDED: case SG_EV_OUTPUT_ESCAPES:
    case SG_EV_PERMISSION_DECIDED:
        return true;
    default:
        return false;
    }
}

/* Error status ("blocked"), as SkillSandbox sets it. */
static bool blocked(enum sg_event_kind k, const json_t *data)
{
    switch (k) {
    case SG_EV_NETWORK_EGRESS_BLOCKED: case SG_EV_FS_BLOCKED: case SG_EV_SYSCALL_BLOCKED:
    case SG_EV_RESOURCE_LIMIT_HIT: case SG_EV_DNS_BLOCKED: case SG_EV_PORT_NOT_PUBLISHED:
        return true;
    case SG_EV_PERMISSION_DECIDED:
        return json_is_true(json_object_get(data, "prevented"));
    default:
        return false;
    }
}

static uint64_t event_ns(const struct sg_event *ev)
{
    return ev->wall_ms > 0 ? (uint64_t)ev->wall_ms * 1000000ull : sg_otel_now_ns();
}

struct sg_otel_run *sg_otel_run_begin(const char *skill_name, const char *run_id,
                                      const struct sg_span_ctx *parent)
{
    if (!sg_otel_on())
        return NULL;
    struct sg_span_ctx env = {0};
    if (!parent || !parent->valid) {
        const char *tp = secure_getenv("TRACEPARENT");
        if (tp && sg_traceparent_parse(tp, strlen(tp), &env))
            parent = &env;
    }
    struct sg_otel_run *r = sg_xcalloc(1, sizeof *r);
    r->root = sg_span_begin("skill_execution", parent, SG_SPAN_SERVER, 0);
    sg_span_cstr(r->root, "sandbox.skill.name", skill_name);
    sg_span_cstr(r->root, "sandbox.trace_id", run_id);
    struct sg_otel_stats st;
    sg_otel_stats(&st);
    r->sent0 = st.sent;
    r->dropped0 = st.dropped;
    r->failed0 = st.failed_requests;
    return r;
}

/* SkillSandbox's kind as its otel.rs writes sandbox.event.kind: the Rust
 * variant's name (file_blocked -> FileBlocked). */
static void ss_variant(enum sg_event_kind k, char out[64])
{
    size_t n = 0;
    bool up = true;
    for (const char *p = sg_event_ss_kind(k); *p && n + 1 < 64; p++) {
        if (*p == '_') {
            up = true;
            continue;
        }
        out[n++] = up ? (char)toupper((unsigned char)*p) : *p;
        up = false;
    }
    out[n] = '\0';
}

static void attributes(struct sg_span *s, const struct sg_event *ev)
{
    char ss[64];
    ss_variant(ev->kind, ss);
    sg_span_str(s, "sandbox.event.message", ev->message, ev->message_len);
    sg_span_cstr(s, "sandbox.event.kind", ss);
    sg_span_cstr(s, "skillgate.event.kind", sg_event_name(ev->kind));
    if (enforcement(ev->kind))
        sg_span_bool(s, "sandbox.enforcement", true);
    sg_span_json(s, "sandbox.data", ev->data);
}

void sg_otel_run_sink(void *ctx, const struct sg_event *ev)
{
    struct sg_otel_run *r = ctx;
    if (!r || !r->root)
        return;
    uint64_t at_ns = event_ns(ev);
    bool output = ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR;
    if (output && r->outputs++ >= OUTPUT_EVENTS) {
        r->outputs_unsent++;
        return;
    }
    bool end = ev->kind == SG_EV_SKILL_COMPLETED || ev->kind == SG_EV_SKILL_FAILED;
    if (!output && !end && !enforcement(ev->kind) && r->others++ >= OTHER_EVENTS) {
        r->others_unsent++;
        return;
    }
    if (!enforcement(ev->kind)) {
        char ss[64];
        ss_variant(ev->kind, ss);
        json_t *at = json_pack("{s:s, s:s}", "sandbox.event.kind", ss, "skillgate.event.kind",
                               sg_event_name(ev->kind));
        const char *k;
        json_t *v;
        if (!output)
            json_object_foreach(ev->data, k, v)
            {
                cleanup_free char *key = sg_xasprintf("sandbox.data.%s", k);
                json_object_set(at, key, v);
            }
        sg_span_event(r->root, span_name(ev->kind), at_ns, ev->message, ev->message_len, NULL,
                      at);
        json_decref(at);
        return;
    }
    /* a decision spans from the question to the answer */
    uint64_t start = at_ns;
    json_int_t lat = json_integer_value(json_object_get(ev->data, "latency_ms"));
    if (ev->kind == SG_EV_PERMISSION_DECIDED && lat > 0 && (uint64_t)lat * 1000000ull < at_ns)
        start = at_ns - (uint64_t)lat * 1000000ull;
    struct sg_span_ctx root = sg_span_context(r->root);
    struct sg_span *s = sg_span_begin(span_name(ev->kind), &root, SG_SPAN_INTERNAL, start);
    attributes(s, ev);
    if (blocked(ev->kind, ev->data))
        sg_span_set_status(s, SG_STATUS_ERROR, "blocked");
    if (ev->kind == SG_EV_PERMISSION_DECIDED)
        sg_span_keep(s); /* a decision is never lost to a flood of refusals */
    sg_span_end(s, at_ns);
}

/* "credential_harvesting" -> count, as SkillSandbox names it:
 * sandbox.classification.<class>.count */
static void classification(struct sg_span *root, const json_t *vs)
{
    json_t *cls = json_object_get(vs, "classifications"), *c;
    size_t i;
    cleanup_free char *names = NULL;
    json_array_foreach(cls, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "class"));
        if (!name)
            continue;
        cleanup_free char *key = sg_xasprintf("sandbox.classification.%s.count", name);
        for (char *p = key; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        sg_span_int(root, key, json_integer_value(json_object_get(c, "count")));
        char *n = names ? sg_xasprintf("%s, %s", names, name) : sg_xstrdup(name);
        free(names);
        names = n;
    }
    sg_span_int(root, "sandbox.classification.total_enforcements",
                json_integer_value(json_object_get(vs, "total_enforcements")));
    sg_span_cstr(root, "sandbox.classification.max_severity",
                 json_string_value(json_object_get(vs, "max_severity")));
    sg_span_cstr(root, "sandbox.classification.classes", names ? names : "");
}

void sg_otel_run_close(struct sg_otel_run *r, const json_t *doc)
{
    if (!r || !r->root)
        return;
    struct sg_span *root = r->root;
    r->ctx = sg_span_context(root);
    sg_span_cstr(root, "sandbox.skill.version",
                 json_string_value(json_object_get(doc, "skill_version")));
    sg_span_cstr(root, "skillgate.skill.digest",
                 json_string_value(json_object_get(doc, "skill_digest")));
    sg_span_cstr(root, "skillgate.status", json_string_value(json_object_get(doc, "status")));
    size_t violations = json_array_size(json_object_get(doc, "policy_violations"));
    sg_span_int(root, "sandbox.violations.count", (int64_t)violations);
    json_t *ec = json_object_get(doc, "exit_code");
    if (json_is_integer(ec))
        sg_span_int(root, "sandbox.exit_code", json_integer_value(ec));
    json_t *dur = json_object_get(doc, "duration_ms");
    if (json_is_integer(dur))
        sg_span_int(root, "sandbox.duration_ms", json_integer_value(dur));
    json_t *vs = json_object_get(doc, "violation_summary");
    if (violations)
        sg_span_bool(root, "sandbox.violations.all_prevented",
                     !json_is_false(json_object_get(vs, "all_prevented")));
    if (vs)
        classification(root, vs);
    if (r->outputs_unsent)
        sg_span_int(root, "skillgate.output_lines_not_sent", (int64_t)r->outputs_unsent);
    if (r->others_unsent)
        sg_span_int(root, "skillgate.events_not_sent", (int64_t)r->others_unsent);
    if (json_is_integer(ec) && json_integer_value(ec) == 0) {
        sg_span_set_status(root, SG_STATUS_OK, NULL);
    } else {
        cleanup_free char *m =
            json_is_integer(ec) ? sg_xasprintf("exit_code=%lld", (long long)json_integer_value(ec))
                                : sg_xstrdup("incomplete");
        sg_span_set_status(root, SG_STATUS_ERROR, m);
    }
    sg_span_end(root, 0);
    r->root = NULL;
    sg_otel_flush(0); /* the run's last batch leaves now, not at the next tick */
}

void sg_otel_run_end(struct sg_otel_run *r, json_t *doc)
{
    if (!r)
        return;
    sg_otel_run_close(r, doc);
    struct sg_span_ctx ctx = r->ctx;
    bool all = sg_otel_flush(SG_OTEL_END_WAIT_MS);
    struct sg_otel_stats st;
    sg_otel_stats(&st);
    /* not gone within the wait (a collector that hangs): not delivered, as
     * far as this run can tell; they may still leave later */
    uint64_t late = all ? 0 : st.pending;
    const char *err = st.failed_requests > r->failed0 ? st.last_error
                      : late ? "the collector did not answer within the run's end wait"
                             : NULL;
    char tid[33], sid[17];
    for (int i = 0; i < 16; i++)
        snprintf(tid + 2 * i, 3, "%02x", ctx.trace_id[i]);
    for (int i = 0; i < 8; i++)
        snprintf(sid + 2 * i, 3, "%02x", ctx.span_id[i]);
    json_object_set_new(doc, "otel",
                        json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s?}", "endpoint",
                                  sg_otel_endpoint(), "trace_id", tid, "span_id", sid,
                                  "spans_sent", (json_int_t)(st.sent - r->sent0),
                                  "spans_dropped", (json_int_t)(st.dropped - r->dropped0 + late),
                                  "failed_requests",
                                  (json_int_t)(st.failed_requests - r->failed0), "last_error", err));
    free(r);
}

void sg_otel_run_discard(struct sg_otel_run *r)
{
    if (!r)
        return;
    sg_span_discard(r->root);
    free(r);
}
