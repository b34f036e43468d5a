/* audit.jsonl: append-only, one record per run and one per decision, each
 * carrying the SHA-256 of the record before it, written with O_APPEND and
 * fsync'd. A torn last line (a crash mid-write) is detected, not trusted. */
#ifndef SG_AUDIT_H
#define SG_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "util.h"

#define SG_AUDIT_LINE_MAX (256 * 1024)
#define SG_AUDIT_OUTPUT_CAP 4096 /* stdout/stderr kept in a run record */

/* $XDG_STATE_HOME/skillgate/audit.jsonl. Caller frees. */
char *sg_audit_path(void);

/* Append rec (a JSON object; "prev", "seq" and "hash" are added). Takes the
 * lock, reads the chain's tip, writes one line, fsyncs. Returns 0 or -errno. */
int sg_audit_append(const char *path, json_t *rec);
/* The refusals of a run no person saw, from its trace document: one
 * decision record per distinct refusal with its count (the first 20 of
 * each tool; past them one "refusals" record per tool with the count).
 * Appended before the run's record. */
int sg_audit_append_refusals(const char *path, json_t *doc, json_t *head);

/* The same off the caller's thread: rec (taken, the caller's reference) is
 * queued and a writer thread appends it, in the order posted. For the run's
 * loop, which never waits on disk. */
void sg_audit_post(const char *path, json_t *rec);
/* Wait until everything posted is on disk (appended and fsync'd). Returns
 * 0, or the first -errno of those appends since the last flush. */
int sg_audit_flush(void);

/* A log over this size goes on in a new file (audit.jsonl is renamed
 * audit.<last seq>.jsonl); the new file's first record (type "rotation")
 * names the old one and chains to its last record. config.yaml's
 * audit_rotate_kb sets it. */
#define SG_AUDIT_ROTATE_DEFAULT (64LL << 20)
void sg_audit_set_rotate(long long bytes);

struct sg_audit_check {
    size_t records;
    size_t files;     /* the log and the rotated files before it */
    char file[512];   /* the file the last record checked (or the break) is in */
    size_t bad_line;  /* 1-based line of the first bad record, 0 when all good */
    char why[200];
    int torn;         /* lines that are half a record (a crash mid-write) */
};
/* Verify the whole chain, through every rotated file, oldest first: a file
 * missing from the middle, or changed, breaks it. Returns 0 when it holds,
 * -EBADMSG otherwise. */
int sg_audit_verify(const char *path, struct sg_audit_check *c);

/* The first SG_AUDIT_OUTPUT_CAP bytes of each stream, for the record: an
 * event sink (ctx: the capture). */
struct sg_audit_capture {
    struct sg_buf out, err;
};
void sg_audit_capture_init(struct sg_audit_capture *c);
void sg_audit_capture_sink(void *ctx, const struct sg_event *ev);
void sg_audit_capture_free(struct sg_audit_capture *c);

/* Is the last record of the log at path the run record of run_id? (A run
 * recovered from its journal may have got that far before its broker died.) */
bool sg_audit_ends_with_run(const char *path, const char *run_id);

/* What a run's audit record takes from the start of the run (the journal
 * keeps it): run_id, skill, input_sha256, permissions_used. */
json_t *sg_audit_run_head(const char *run_id, const char *skill, const char *input,
                          json_t *permissions_used);
/* A run's audit record: the outcome from its trace document, its start
 * (sg_audit_run_head), the first bytes of its output (sanitized here) and
 * where its trace is (NULL: not written). */
json_t *sg_audit_run_record(json_t *doc, json_t *head, const char *out_sha256,
                            const char *out, size_t outn, const char *err, size_t errn,
                            const char *trace_path);

/* The hash of a record: SHA-256 of its canonical JSON without "hash". */
char *sg_audit_hash(json_t *rec);

#endif
