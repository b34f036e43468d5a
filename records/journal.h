/* A run's journal: what lets its trace and audit record be written when
 * the broker never gets to write them (SIGKILL, a crash, a power cut, a
 * disk that filled during the run).
 *
 * $XDG_STATE_HOME/skillgate/runs/<run_id>.journal, mode 0600, JSON lines:
 * a head (the trace's head, the audit record's head, the start time, the
 * broker's pid, the audit chain's seq before the run), then the run's
 * events as they happen, then the end ("end": the result). Whether the
 * run's audit records and trace were written is not noted: recovery looks
 * for them (its record after that seq in the log, its trace by its name),
 * so it writes each at most once whenever the broker died (the order of
 * the end and why each crash point is safe: run/runner.c,
 * sg_runner_finish). Journals of older brokers may carry "audit" and
 * "trace" steps; they are still read. The
 * broker holds an flock on
 * it for the whole run, so a journal nobody holds is an orphan: the next
 * start of skillgate (any command) writes its trace, status "incomplete",
 * and its audit record into the chain, and removes it.
 *
 * The head is written and fsync'd before the skill is launched: a run that
 * started always has one. The loop only appends to a buffer; a thread of
 * the journal's own writes it as it fills (each batch one write) and makes
 * it durable at every decision and at least every second (a thread that never allocates: the
 * raw clone of the sandbox's pid 1 may happen beside it). Bounded: output
 * past SG_JOURNAL_OUTPUT bytes and anything past SG_JOURNAL_MAX is only
 * counted. */
#ifndef SG_JOURNAL_H
#define SG_JOURNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "events.h"

#define SG_JOURNAL_MAX (4 << 20)
#define SG_JOURNAL_OUTPUT (1 << 20)
/* What a run's records may need on the state folder's disk: the journal,
 * then a trace (SG_TRACE_MAX_BYTES of messages and their framing) and its
 * audit record. Checked before launch. */
#define SG_RECORDS_RESERVE (24LL << 20)

struct sg_journal;

/* Make the journal of run_id with its head (taken) and sync it. 0, or
 * -errno (the records could not be kept: the run must not start). */
int sg_journal_open(const char *run_id, json_t *head, struct sg_journal **out);
/* An event sink (ctx: the journal). */
void sg_journal_sink(void *ctx, const struct sg_event *ev);
/* A step of the end (a JSON object, taken): returns once it is in the
 * file (a killed broker's journal has it), not on the disk; the thread's
 * fdatasync follows at once, beside the caller's next writes. */
int sg_journal_note(struct sg_journal *j, json_t *line);
/* Wait until everything taken so far is on disk. 0, or the first -errno. */
int sg_journal_sync(struct sg_journal *j);
/* The end: with done (the trace and the audit record are written) the
 * journal is removed; without, it stays, unlocked, for the next start.
 * Returns the first -errno its writes met (0: all of it is on disk). */
int sg_journal_close(struct sg_journal *j, bool done);
const char *sg_journal_path(const struct sg_journal *j);

/* Can the records of a run be kept? 0, or -errno with why (static or
 * valid until the next call): the state folder and the audit log must be
 * writable and SG_RECORDS_RESERVE free. */
int sg_records_check(const char **why);

/* One orphaned run, recovered (or not: err). */
struct sg_recovered {
    char *run_id, *skill, *trace_path, *end_reason;
    int err; /* -errno: its records could not be written; the journal stays */
};
/* Every journal in the state folder that no broker holds: its trace and
 * audit record written (when they were not already), then removed. Cheap
 * when there is none (one failed open). */
size_t sg_journal_recover(struct sg_recovered **out);
void sg_recovered_free(struct sg_recovered *v, size_t n);

/* The parser of a journal's bytes (for recovery and fuzzing): the head,
 * the events replayed into sink(ctx, ev), and what the end steps and a
 * crash note said. A torn or garbled line is skipped and counted. */
struct sg_journal_read {
    json_t *head;          /* NULL: no head (nothing ran) */
    json_t *end;           /* the "end" step: how the run ended, when the broker saw it */
    char *trace_path;      /* a "trace" step's path */
    json_t *audit;         /* an "audit" step: the run's records are in the log; its
                            * "head" (the chain's head after them) and "trace" name */
    int crash_signal;      /* a crash note's signal, or 0 */
    long long last_wall_ms;
    size_t events, bad_lines;
    unsigned long long bytes[2]; /* stdout, stderr as the skill wrote them */
};
void sg_journal_parse(const char *buf, size_t len, sg_event_sink_fn sink, void *ctx,
                      struct sg_journal_read *out);
void sg_journal_read_free(struct sg_journal_read *r);

#endif
