/* A run as OpenTelemetry spans, shaped as SkillSandbox's otel.rs shapes
 * them, live (otel.h sends them):
 *
 *   skill_execution (root; SERVER; ends with the run: exit code, duration,
 *   │                violations, classification, status)
 *   ├── sandbox.policy.network_deny   one child span per enforcement event
 *   ├── sandbox.fs.blocked            (SkillSandbox's names; each is sent
 *   ├── sandbox.permission.decision   as it happens, not at the run's end)
 *   │   (a person's or a rule's decision: from the question to the answer)
 *   └── ...
 *   root span events: output lines and the other events (at most
 *   SG_OTEL_MAX_EVENTS, the rest counted)
 *
 * Attributes: SkillSandbox's sandbox.event.kind / sandbox.event.message /
 * sandbox.enforcement / sandbox.data.<field>, plus skillgate.event.kind
 * (our name) beside them. */
#ifndef SG_OTELRUN_H
#define SG_OTELRUN_H

#include <jansson.h>

#include "events.h"
#include "otel.h"

struct sg_otel_run;

/* NULL when export is off. parent: the caller's span (an MCP call), else
 * the TRACEPARENT of the environment, else a new trace. */
struct sg_otel_run *sg_otel_run_begin(const char *skill_name, const char *run_id,
                                      const struct sg_span_ctx *parent);
/* The event bus's sink (ctx: the run). */
void sg_otel_run_sink(void *ctx, const struct sg_event *ev);
/* The run's end, in two steps so that the spans leave while the records
 * are written: close takes the trace doc's summary into the root span and
 * ends it (its batch leaves at once); end waits at most
 * SG_OTEL_END_WAIT_MS for the run's spans to leave (close first if it was
 * not called). end adds
 * "otel": {endpoint, trace_id, span_id, spans_sent, spans_dropped,
 * failed_requests, last_error} to doc. Frees r. */
void sg_otel_run_close(struct sg_otel_run *r, const json_t *doc);
void sg_otel_run_end(struct sg_otel_run *r, json_t *doc);
/* A run that never started: nothing is sent. */
void sg_otel_run_discard(struct sg_otel_run *r);

#endif
