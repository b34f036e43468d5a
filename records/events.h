/* The event stream of a run. Every front end and record (the CLI's
 * printers, the TUI, the MCP server's attach stream, the trace, the audit
 * record's captured output) is a sink: a function that gets each event as
 * it happens. */
#ifndef SG_EVENTS_H
#define SG_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ID, "kind", "watch label", severity, SkillSandbox's kind) — severity:
 * 0 info, 1 notice, 2 warning (something was stopped), 3 error; the last
 * is the nearest of SkillSandbox's 20 event kinds (its trace's snake_case
 * name), for its readers (the trace's skillsandbox_kind, `traces export
 * --skillsandbox`, the OTel span's sandbox.event.kind): what we stop is
 * its policy_violation where it has no kind of its own */
#define SG_EVENT_KINDS(X)                                                                  \
    X(SKILL_STARTED, "skill_started", "START", 0, "skill_started")                              \
    X(POLICY_APPLIED, "policy_applied", "POLICY", 0, "network_policy_applied")                  \
    X(ENV_FILTERED, "env_filtered", "ENV", 1, "env_var_access")                                 \
    X(SANDBOX_DEGRADED, "sandbox_degraded", "DEGRADED", 3, "policy_violation")                  \
    X(STDOUT, "stdout", "OUT", 0, "stdout")                                                     \
    X(STDERR, "stderr", "ERR", 0, "stderr")                                                     \
    X(OUTPUT_DROPPED, "output_dropped", "OUTPUT", 2, "resource_limit_hit")                      \
    X(FS_BLOCKED, "fs_blocked", "FS", 2, "file_blocked")                                        \
    X(SYSCALL_BLOCKED, "syscall_blocked", "SYSCALL", 2, "syscall_blocked")                      \
    X(DNS_RESOLUTION, "dns_resolution", "DNS", 0, "dns_resolution")                             \
    X(DNS_BLOCKED, "dns_blocked", "DNS", 2, "network_egress_blocked")                           \
    X(NETWORK_EGRESS_ALLOWED, "network_egress_allowed", "NET", 1, "network_egress_allowed")     \
    X(NETWORK_CONNECTION_CLOSED, "network_connection_closed", "NET", 0, "network_egress_allowed") \
    X(NETWORK_EGRESS_BLOCKED, "network_egress_blocked", "NET", 2, "network_egress_blocked")     \
    X(HOST_SOCKET_CONNECTED, "host_socket_connected", "SOCKET", 1, "network_egress_allowed")    \
    X(PORT_PUBLISHED, "port_published", "PUBLISH", 1, "network_policy_applied")                 \
    X(PORT_NOT_PUBLISHED, "port_not_published", "PUBLISH", 2, "network_egress_blocked")         \
    X(INBOUND, "inbound", "INBOUND", 1, "network_egress_allowed")                               \
    X(RESOURCE_LIMIT_HIT, "resource_limit_hit", "LIMIT", 2, "resource_limit_hit")               \
    X(WRITE_DISCARDED, "write_discarded", "DISCARD", 1, "file_write")                           \
    X(FILES_READ, "files_read", "READ", 0, "file_read")                                         \
    X(PATH_NAMED, "path_named", "NAMED", 1, "file_read")                                        \
    X(OUTPUT_ESCAPES, "output_escapes", "ESCAPES", 2, "policy_violation")                       \
    X(PERMISSION_ASKED, "permission_asked", "ASK", 1, "policy_violation")                       \
    X(PERMISSION_DECIDED, "permission_decided", "DECIDED", 1, "policy_violation")               \
    X(SKILL_COMPLETED, "skill_completed", "COMPLETE", 0, "skill_completed")                     \
    X(SKILL_FAILED, "skill_failed", "FAILED", 3, "skill_failed")

enum sg_event_kind {
#define X(id, name, label, sev, ss) SG_EV_##id,
    SG_EVENT_KINDS(X)
#undef X
    SG_EV_COUNT
};

struct sg_event {
    enum sg_event_kind kind;
    uint64_t mono_ns;   /* CLOCK_MONOTONIC */
    int64_t wall_ms;    /* CLOCK_REALTIME, milliseconds since the epoch */
    const char *message;/* text; for output events the raw line (may hold any bytes) */
    size_t message_len;
    json_t *data;       /* borrowed; may be NULL */
};

typedef void (*sg_event_sink_fn)(void *ctx, const struct sg_event *ev);

#define SG_MAX_SINKS 8
struct sg_event_bus {
    struct {
        sg_event_sink_fn fn;
        void *ctx;
    } sinks[SG_MAX_SINKS];
    size_t nsinks;
    size_t counts[SG_EV_COUNT];
    /* A WASM run: the layer that held, added to each refusal that has no
     * "layer" of its own (the WASI layer's reports have theirs): "kernel"
     * for what the kernel sandbox and the broker refused, "broker" for
     * output it cut or cleaned. NULL: not added. */
    const char *layer;
};

const char *sg_event_name(enum sg_event_kind k);
const char *sg_event_label(enum sg_event_kind k);
int sg_event_severity(enum sg_event_kind k);
/* SkillSandbox's event kind for k, as its trace names it (snake_case). */
const char *sg_event_ss_kind(enum sg_event_kind k);
/* The same by our kind's name (a trace's "kind"); NULL for a name we do
 * not have. */
const char *sg_event_ss_kind_of(const char *name);

void sg_bus_subscribe(struct sg_event_bus *b, sg_event_sink_fn fn, void *ctx);
/* Take out every sink whose context is ctx. */
void sg_bus_unsubscribe(struct sg_event_bus *b, void *ctx);
/* Emit an event; data is consumed (decref'd after every sink saw it). */
void sg_bus_emit(struct sg_event_bus *b, enum sg_event_kind k, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Emit with a message of raw bytes (output lines). */
void sg_bus_emit_raw(struct sg_event_bus *b, enum sg_event_kind k, const char *msg, size_t len,
                     json_t *data);

/* "HH:MM:SS.mmm" of a wall time, local. */
void sg_format_clock(int64_t wall_ms, char out[16]);
/* ISO 8601 UTC with milliseconds. */
void sg_format_iso(int64_t wall_ms, char out[32]);

#endif
