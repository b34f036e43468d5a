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
 * is the TraceEventKind SkillSandbox gives the same happening (its OTel
 * span name follows from it, otelrun.c), NULL where it has none */
#define SG_EVENT_KINDS(X)                                                                  \
    X(SKILL_STARTED, "skill_started", "START", 0, "SkillStarted")                          \
    X(POLICY_APPLIED, "policy_applied", "POLICY", 0, "NetworkPolicyApplied")               \
    X(ENV_FILTERED, "env_filtered", "ENV", 1, "EnvVarAccess")                              \
    X(SANDBOX_DEGRADED, "sandbox_degraded", "DEGRADED", 3, NULL)                           \
    X(STDOUT, "stdout", "OUT", 0, "Stdout")                                                \
    X(STDERR, "stderr", "ERR", 0, "Stderr")                                                \
    X(OUTPUT_DROPPED, "output_dropped", "OUTPUT", 2, "ResourceLimitHit")                   \
    X(FS_BLOCKED, "fs_blocked", "FS", 2, "FileBlocked")                                    \
    X(SYSCALL_BLOCKED, "syscall_blocked", "SYSCALL", 2, "SyscallBlocked")                  \
    X(DNS_RESOLUTION, "dns_resolution", "DNS", 0, "DnsResolution")                         \
    X(DNS_BLOCKED, "dns_blocked", "DNS", 2, "NetworkEgressBlocked")                        \
    X(NETWORK_EGRESS_ALLOWED, "network_egress_allowed", "NET", 1, "NetworkEgressAllowed")  \
    X(NETWORK_CONNECTION_CLOSED, "network_connection_closed", "NET", 0, NULL)              \
    X(NETWORK_EGRESS_BLOCKED, "network_egress_blocked", "NET", 2, "NetworkEgressBlocked")  \
    X(HOST_SOCKET_CONNECTED, "host_socket_connected", "SOCKET", 1, NULL)                   \
    X(PORT_PUBLISHED, "port_published", "PUBLISH", 1, NULL)                                \
    X(PORT_NOT_PUBLISHED, "port_not_published", "PUBLISH", 2, NULL)                        \
    X(INBOUND, "inbound", "INBOUND", 1, NULL)                                              \
    X(RESOURCE_LIMIT_HIT, "resource_limit_hit", "LIMIT", 2, "ResourceLimitHit")            \
    X(WRITE_DISCARDED, "write_discarded", "DISCARD", 1, NULL)                              \
    X(FILES_READ, "files_read", "READ", 0, "FileRead")                                     \
    X(OUTPUT_ESCAPES, "output_escapes", "ESCAPES", 2, NULL)                                \
    X(PERMISSION_ASKED, "permission_asked", "ASK", 1, NULL)                                \
    X(PERMISSION_DECIDED, "permission_decided", "DECIDED", 1, NULL)                        \
    X(SKILL_COMPLETED, "skill_completed", "COMPLETE", 0, "SkillCompleted")                 \
    X(SKILL_FAILED, "skill_failed", "FAILED", 3, "SkillFailed")

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
/* SkillSandbox's TraceEventKind for k (CamelCase, as its Debug prints it;
 * its trace has it in snake_case), NULL when it has none. */
const char *sg_event_ss_kind(enum sg_event_kind k);

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
