/* Vetting a marketplace (issue 53): one record per skill, what decides its
 * verdict, and many shards' records joined into one report. Pure functions
 * of JSON documents: `skillgate vet` (cli/vetskill.c) fills a record from
 * the static pass and the traces of its runs; `vet merge` joins the
 * records; records/vetreport.c writes the HTML and SARIF.
 *
 * The verdict is decided on what happened, never on a name: a threat
 * class the classifier (classify.h) gave a run's events, or a finding of
 * the static reading of the skill's text (instructions.h). Critical and
 * high classes, and text that decodes and runs hidden code or hides text
 * from its reader, are malicious; medium classes, a credential place read,
 * a host the skill does not declare reached for, review findings and a
 * manifest that stops a run need review; low classes (a program refused)
 * are notes. A skill none of whose runnables ran is never clean: it needs
 * review, saying so.
 *
 * Formats in docs/json.md: skillgate.vet/1 (a record), skillgate.vetrun/1
 * (a shard's summary), skillgate.vetreport/1 (the merged report). Every
 * string a skill chose is stored raw; the writers sanitize. */
#ifndef SG_VET_H
#define SG_VET_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define SG_VET_VERDICTS(X) X(MALICIOUS, "malicious") X(REVIEW, "needs_review") X(CLEAN, "clean")

enum sg_vet_verdict {
#define X(id, name) SG_VET_##id,
    SG_VET_VERDICTS(X)
#undef X
    SG_VET_VERDICT_COUNT
};

#define SG_VET_RECORD_MAX (8u << 20) /* bytes of one record file read back */
#define SG_VET_RECORDS_MAX 200000    /* records in one merge */
#define SG_VET_EVIDENCE_MAX 5        /* evidence lines kept per reason */
#define SG_VET_EVIDENCE_BYTES 400    /* bytes of each */

/* vet's own reasons (beside the threat classes and the static reader's
 * finding kinds): X("rule", "what it means") */
#define SG_VET_RULES(X)                                                                       \
    X("undeclared_host", "a run reached for a host its manifest does not declare (refused)")  \
    X("not_finished", "a run was stopped before it ended (its time bound, a signal): what it " \
                      "would do after was not watched")                                        \
    X("not_run", "a runnable the skill ships was not run (past --max-runs, a manifest that "   \
                 "stops a run, a run that did not start): that part was not watched")          \
    X("manifest_errors", "the manifest has errors its agent would not load it with, or "      \
                         "breaks rules of the Agent Skills spec that agents let pass (a note)") \
    X("download_run_from_ip", "a download from a bare public IP address run as code, on one "  \
                              "line of its text or code")                                      \
    X("unreadable", "the skill's files could not all be read")

const char *sg_vet_verdict_name(enum sg_vet_verdict v);
/* -1 for a name that is none of ours */
int sg_vet_verdict_parse(const char *s);

/* The record file's name for a skill at rel (its path below the vetted
 * root): the first 16 hex digits of its SHA-256, then ".json". */
void sg_vet_key(const char *rel, char out[17]);

/* A run's entry (runs[]) from its trace: status, exit, duration, the
 * classes with their evidence, the hosts it reached for that the trace
 * refused or held back. runnable, args and args_from as given; trace_rel
 * names the trace file (NULL: none kept). New reference. */
json_t *sg_vet_run_entry(json_t *trace, const char *runnable, json_t *args,
                         const char *args_from, const char *trace_rel);

/* Fill rec's "verdict" and "reasons" from its "static", "runs" and
 * "not_run" (replacing what was there). */
void sg_vet_decide(json_t *rec);

/* s as a JSON string: as it is when it is UTF-8, else with its bytes shown
 * escaped (a file or folder name is any bytes; json_pack would refuse it,
 * and the finding or the record would go with it). JSON null for NULL. */
json_t *sg_vet_text(const char *s);

/* The record of a skill whose vetting left none (its worker failed or was
 * killed): needs review, never absent from the report. */
json_t *sg_vet_not_vetted(const char *rel, const char *why);

/* rec's "changes" against old (the same skill's record in an earlier
 * vetting, or NULL when it had none): new, changed (another digest) or
 * same, and the reasons that came or went. */
void sg_vet_compare(json_t *rec, json_t *old);

/* The records of a vetting: every DIR/skills/<key>.json of a `vet --out`
 * folder, or the skills of a merged skillgate.vetreport/1 file. Appended
 * to arr; 0, or -errno with *why (the file and what is wrong; caller
 * frees). */
int sg_vet_load(const char *path, json_t *arr, char **why);

/* The one record of arr for a skill's path, or NULL (borrowed). */
json_t *sg_vet_find(json_t *arr, const char *path);

/* Join records (from any number of shards, in any order) into one
 * skillgate.vetreport/1: ranked (malicious, needs review, clean, then by
 * path), totals, and with old (the earlier vetting's records, or NULL)
 * the skills it had that this one has not. The same records give the same
 * document. A path two records give with different digests is an error:
 * -EEXIST with *why. */
int sg_vet_merge(json_t *records, json_t *old, json_t **out, char **why);

#endif
