/* audit.jsonl: append-only, one record per run and one per decision, each
 * carrying the SHA-256 of the record before it, written with O_APPEND and
 * fsync'd. A torn last line (a crash mid-write) is detected, not trusted:
 * the next append takes it off and writes a torn_line record in its place,
 * so every complete line of the log is a record of the chain. */
#ifndef SG_AUDIT_H
#define SG_AUDIT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "util.h"

#define SG_AUDIT_LINE_MAX (256 * 1024)
#define SG_AUDIT_OUTPUT_CAP 4096 /* stdout/stderr kept in a run record */

/* $XDG_STATE_HOME/skillgate/audit.jsonl. Caller frees. */
char *sg_audit_path(void);

/* Append rec (a JSON object; "prev", "seq" and "hash" are added). Takes the
 * lock, reads the chain's tip, writes one line, lets the lock go, fsyncs
 * (group commit: see audit.c). Returns 0 or -errno. */
int sg_audit_append(const char *path, json_t *rec);
/* The same for recs (an array), chained in order in one write. */
int sg_audit_append_all(const char *path, json_t *recs);
/* The two halves: written whole under the lock, which is let go; *fd (the
 * log, open) is for sg_audit_sync, which fsyncs it and closes it. So a
 * caller can sync other files while the log's fsync runs. */
int sg_audit_append_nosync(const char *path, json_t *recs, int *fd);
int sg_audit_sync(int fd);
/* The refusals of a run no person saw, from its trace document: one
 * decision record per distinct refusal with its count (the first 20 of
 * each tool; past them one "refusals" record per tool with the count).
 * An array (maybe empty), appended with the run's record after them in
 * one write (sg_audit_append_all). */
json_t *sg_audit_refusal_records(json_t *doc, json_t *head);

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
    int torn;         /* 1: the log ends in half a line without its newline */
    size_t torn_taken; /* torn_line records: half lines a later append took off */
    long long head_seq; /* the chain's head: its last record (0: none) */
    char head[80];
    size_t traces;     /* traces beside the log whose head the log holds */
    size_t traces_old; /* traces that name no head (older, or their record failed) */
    size_t traces_bad; /* traces whose head the log does not hold */
    char trace[PATH_MAX + 300]; /* the first of those (by the head it names) */
};
/* Verify the whole chain, through every rotated file, oldest first: a file
 * missing from the middle, or changed, breaks it. Every complete line must
 * be a record that chains; only the last line of the log may be half a
 * record (without its newline: a crash mid-write), and it is not counted.
 * Then the traces folder beside the log (read first, so a run finishing
 * meanwhile is no false alarm): each trace's "audit_head" must be a record
 * of the chain, so records cut off its end are named by the trace that saw
 * them. Returns 0 when all holds, -EBADMSG otherwise (bad_line set: the
 * chain; else trace set: a trace). */
int sg_audit_verify(const char *path, struct sg_audit_check *c);

/* The chain's head after a record sg_audit_append wrote: {"seq", "hash"},
 * what a run's trace and journal keep (NULL: rec was not written). */
json_t *sg_audit_head_of(json_t *rec);

/* The first SG_AUDIT_OUTPUT_CAP bytes of each stream, for the record: an
 * event sink (ctx: the capture). */
struct sg_audit_capture {
    struct sg_buf out, err;
};
void sg_audit_capture_init(struct sg_audit_capture *c);
void sg_audit_capture_sink(void *ctx, const struct sg_event *ev);
void sg_audit_capture_free(struct sg_audit_capture *c);

/* The chain's tip now: the seq of the log's last whole record (0: none).
 * Read without the lock: a record appended after this call has a higher
 * seq. A run's journal keeps it, so its recovery knows where to look. */
long long sg_audit_tip_seq(const char *path);
/* The run record of run_id among the records after after_seq (negative:
 * no bound), walked from the log's end backwards (through rotated files
 * when a rotation record is met) until a record at or before after_seq
 * (without a bound: at most SG_AUDIT_FIND_MAX bytes and 4 files); NULL
 * when it is not there. *refusals (when it is not): its refusal records
 * are there (written in the same write as the run record, before it: a
 * write a kill cut short). Recovery
 * asks this instead of a flushed note of the broker's: a run is appended
 * once, whenever its broker died. */
#define SG_AUDIT_FIND_MAX (64LL << 20)
#define SG_AUDIT_FIND_FILES 100000 /* a guard against rotation records in a loop */
json_t *sg_audit_find_run(const char *path, const char *run_id, long long after_seq,
                          bool *refusals);

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
