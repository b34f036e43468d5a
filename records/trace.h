/* trace.json: every event of a run, the outcome and the classification, in a
 * superset of SkillSandbox's format. Written atomically, O_EXCL and
 * O_NOFOLLOW, under $XDG_STATE_HOME/skillgate/traces/, never inside a skill. */
#ifndef SG_TRACE_H
#define SG_TRACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "policy.h"
#include "runend.h"
#include "skill.h"

struct sg_plan;

#define SG_TRACE_MAX_EVENTS 20000         /* output events beyond this are counted */
/* Other events (enforcements, decisions) kept in the list: a flood of
 * different ones is counted past it (violation_summary stays exact), so the
 * broker's memory stays bounded; a flood of the same one is one event with
 * "repeated": N. */
#define SG_TRACE_MAX_OTHER 5000
#define SG_TRACE_MAX_BYTES (8 << 20)      /* message bytes kept */

struct sg_classifier;
struct sg_trace {
    json_t *events;
    size_t dropped_events;
    size_t bytes;
    struct sg_classifier *cls; /* every event, kept or dropped: the summary stays exact */
    size_t kept_other;         /* events in the list that are not output */
    char *last_raw;            /* the last event kept (not output), as it came */
    size_t last_len;
    enum sg_event_kind last_kind;
};

void sg_trace_init(struct sg_trace *t);
void sg_trace_free(struct sg_trace *t);
/* An event sink (ctx is the struct sg_trace). */
void sg_trace_sink(void *ctx, const struct sg_event *ev);

/* The whole trace document. digest is the skill's content digest taken
 * before the launch (the code that ran, even if the run changed its files);
 * "" when it could not be taken. */
json_t *sg_trace_build(struct sg_trace *t, const struct sg_skill *sk, const struct sg_plan *plan,
                       const struct sg_run_result *res, const char *digest);
/* The same in two halves: what is known before the launch (identity,
 * policy, invocation, limits: the run's journal keeps it, so that a trace
 * can be written without the broker), then the document from it and the
 * run's events and result. */
json_t *sg_trace_head(const struct sg_skill *sk, const struct sg_plan *plan, const char *digest);
json_t *sg_trace_doc(json_t *head, struct sg_trace *t, const struct sg_run_result *res);
/* $XDG_STATE_HOME/skillgate (default ~/.local/state/skillgate). Caller frees. */
char *sg_state_dir(void);
/* Write doc to path, or (path NULL) to a new file in the traces folder.
 * Refuses a path inside skill_root and symlinks. *written gets the path. */
int sg_trace_write(json_t *doc, const char *path, const char *skill_root, char **written);
/* A new trace's file name in the traces folder (the time, the skill, the
 * run), chosen before it is written: the run's audit record names it, and
 * the trace then names the chain's head after that record ("audit_head").
 * Caller frees. */
char *sg_trace_name(json_t *doc);
/* An event's "timestamp" (2026-01-02T03:04:05.678Z) in milliseconds since
 * the epoch; -1 when it is no such time (a forged trace's too). */
int64_t sg_trace_time_ms(const char *iso);
/* The traces folder's path of such a name. Caller frees. */
char *sg_trace_path_of(const char *name);
/* sg_trace_write into the traces folder under name (NULL: a new one);
 * -EINVAL for a name that is not a plain "*.json" name of that folder. */
int sg_trace_write_named(json_t *doc, const char *name, const char *skill_root, char **written);
/* sg_trace_write_named in two halves, so a caller can sync other files
 * while the trace's own fsync runs: stage writes and syncs a temporary
 * file beside the name; publish gives it the name (never over another:
 * -EEXIST), syncs the folder, and frees p; drop removes the temporary
 * file and frees p. */
struct sg_trace_pending {
    int dfd;
    bool own; /* dfd is the traces folder's, ours to close */
    char *tmp, *name, *target;
};
int sg_trace_stage_named(json_t *doc, const char *name, const char *skill_root,
                         struct sg_trace_pending *p);
int sg_trace_publish(struct sg_trace_pending *p, json_t *doc, char **written);
void sg_trace_pending_drop(struct sg_trace_pending *p);
/* SHA-256 of the policy part of a skill's JSON (what the run was allowed). */
char *sg_policy_digest(const struct sg_skill *sk);

#endif
