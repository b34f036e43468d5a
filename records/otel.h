/* OpenTelemetry export: spans of runs, MCP calls and hook decisions, sent
 * live to an OTLP/HTTP collector (protobuf, ExportTraceServiceRequest) as
 * SkillSandbox sends them (its `sandbox.*` names), so a team watches skill
 * runs in the Jaeger, Tempo or Datadog it already runs.
 *
 * Configured the standard way, off when no endpoint is set:
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  the URL, used as it is
 *   OTEL_EXPORTER_OTLP_ENDPOINT         base URL; "/v1/traces" is added
 *   OTEL_EXPORTER_OTLP_HEADERS          k=v,k2=v2 (values percent-decoded)
 *   OTEL_EXPORTER_OTLP_TIMEOUT          ms per request (default 10000)
 *   OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf only (else refused)
 *   OTEL_SERVICE_NAME                   default "skillgate"
 *   OTEL_RESOURCE_ATTRIBUTES            k=v,k2=v2
 *   OTEL_SDK_DISABLED=true              off
 *   OTEL_BSP_SCHEDULE_DELAY (ms, 1000), OTEL_BSP_MAX_QUEUE_SIZE (2048),
 *   OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512)
 * and the same keys, lower case without the OTEL_ prefix and with
 * "exporter_otlp_" dropped, in config.yaml's `otel:` map (the environment
 * wins): otel: {endpoint: URL, headers: {k: v}, service_name: NAME, ...}.
 *
 * One exporter a process, on a thread of its own: a span is built by its
 * owner, handed over at its end, queued (bounded: a full queue drops and
 * counts), and sent in batches every schedule delay. libcurl does HTTP; it
 * is loaded (dlopen) only when export is on, so a run without it pays no
 * load time for libcurl's twenty libraries. A collector that is down,
 * hangs or answers an error never blocks the broker's loop: a request has
 * its timeout, failures drop the batch and are counted, and the end of a
 * run waits at most SG_OTEL_END_WAIT_MS for its spans to leave. */
#ifndef SG_OTEL_H
#define SG_OTEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SG_OTEL_END_WAIT_MS 1000
#define SG_OTEL_MAX_ATTRS 128    /* per span or span event (OTel's default limit) */
#define SG_OTEL_MAX_EVENTS 128   /* per span */
#define SG_OTEL_VALUE_MAX 4096   /* bytes of one attribute value, cut at a UTF-8 boundary */
#define SG_OTEL_TRACEPARENT_MAX 512 /* a longer traceparent is not read */

/* W3C trace context (traceparent): version 00, trace-id, parent-id, flags. */
struct sg_span_ctx {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags;
    bool valid;
};

/* Parse a traceparent header value ("00-<32 hex>-<16 hex>-<2 hex>", lower
 * case hex, ids not all zero; a later version's longer value is read by
 * its first four fields, as the W3C spec says). false: not valid. */
bool sg_traceparent_parse(const char *s, size_t len, struct sg_span_ctx *out);
/* "00-...-...-.." into out (56 bytes). */
void sg_traceparent_format(const struct sg_span_ctx *c, char out[56]);

/* Start the exporter from the environment and cfg (may be NULL). 0: off;
 * 1: on; -EINVAL: a setting is wrong (why names it); -ENOSYS: libcurl
 * could not be loaded (why says so): export is then off, and
 * sg_otel_off_why says why (a run goes on: telemetry never stops one). */
int sg_otel_start(const struct sg_config *cfg, char *why, size_t whylen);
bool sg_otel_on(void);
/* The endpoint spans go to, without userinfo or query ("" when off). */
const char *sg_otel_endpoint(void);

struct sg_otel_stats {
    uint64_t queued, sent, dropped; /* spans */
    uint64_t pending;               /* handed over, neither sent nor dropped yet */
    uint64_t failed_requests;
    char last_error[160];           /* of the last failed request, "" if none */
};
void sg_otel_stats(struct sg_otel_stats *out);
/* Wait until every span ended before now has left (or was dropped), at
 * most wait_ms. true when they all did. */
bool sg_otel_flush(int wait_ms);
/* The end of the process: flush (at most wait_ms; none once a wait ran
 * out), then the thread stops (a transfer in flight is aborted). Once. */
void sg_otel_shutdown(int wait_ms);
/* Around a raw clone (pid 1's): no batch is encoded, sent or freed by the
 * exporter thread in between, so it holds no allocator lock the child
 * would inherit. Spans may still be handed over. */
void sg_otel_pause(void);
void sg_otel_resume(void);
/* The ports the exporter's endpoint settings name (the environment's and
 * cfg's, both: on or off), added to o as SG_OWN_OTEL: a port published for
 * a skill never takes one (egress/publish.h). */
struct sg_own_ports;
void sg_otel_own_ports(const struct sg_config *cfg, struct sg_own_ports *o);
/* Export was asked for (an endpoint set) and is off: why; else NULL. */
const char *sg_otel_off_why(void);

enum sg_span_kind { SG_SPAN_INTERNAL = 1, SG_SPAN_SERVER = 2, SG_SPAN_CLIENT = 3 };
enum sg_span_status { SG_STATUS_UNSET = 0, SG_STATUS_OK = 1, SG_STATUS_ERROR = 2 };

struct sg_span;
/* A span, started now (or at start_ns, CLOCK_REALTIME nanoseconds, when not
 * 0), child of parent (NULL or invalid: a new trace). NULL when export is
 * off: every function below takes NULL and does nothing. */
struct sg_span *sg_span_begin(const char *name, const struct sg_span_ctx *parent,
                              enum sg_span_kind kind, uint64_t start_ns);
struct sg_span_ctx sg_span_context(const struct sg_span *s);
/* Attributes (key static or copied; a value cut to SG_OTEL_VALUE_MAX and
 * made printable UTF-8). Past SG_OTEL_MAX_ATTRS: counted as dropped. */
void sg_span_str(struct sg_span *s, const char *key, const char *v, size_t len);
void sg_span_cstr(struct sg_span *s, const char *key, const char *v);
void sg_span_int(struct sg_span *s, const char *key, int64_t v);
void sg_span_bool(struct sg_span *s, const char *key, bool v);
void sg_span_double(struct sg_span *s, const char *key, double v);
/* Each member of a JSON object as an attribute prefix.member (strings,
 * integers, reals, booleans as such; arrays and objects as their JSON). */
void sg_span_json(struct sg_span *s, const char *prefix, const json_t *obj);
/* A span event at time_ns (0: now) with the attributes of attrs (may be
 * NULL; members as sg_span_json does with prefix). Past SG_OTEL_MAX_EVENTS:
 * counted as dropped. */
void sg_span_event(struct sg_span *s, const char *name, uint64_t time_ns, const char *message,
                   size_t message_len, const char *prefix, const json_t *attrs);
void sg_span_set_status(struct sg_span *s, enum sg_span_status st, const char *message);
/* Let it past a full queue (up to one and a half times its size; a root
 * span, up to twice: the last room is the roots'), so that a flood of
 * other spans does not take it out. */
void sg_span_keep(struct sg_span *s);
/* End at end_ns (0: now) and hand to the exporter (s is gone). */
void sg_span_end(struct sg_span *s, uint64_t end_ns);
/* Drop without sending. */
void sg_span_discard(struct sg_span *s);

uint64_t sg_otel_now_ns(void);

/* Encode spans as an OTLP ExportTraceServiceRequest (for the exporter and
 * the unit test). Returns a malloc'd buffer, *len set. */
uint8_t *sg_otel_encode(struct sg_span *const *spans, size_t n, size_t *len);

#endif
