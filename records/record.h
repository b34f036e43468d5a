/* What a skill actually needs, learnt from runs of it (skillgate record):
 * the runs' traces folded into one profile (hosts and ports reached,
 * programs run, files written, what was tried and refused, peak memory,
 * time, output, the files opened to read: reads.h), the smallest
 * skillsandbox.yaml that lets exactly that pass without a prompt, and the
 * profile against what the skill declares. Environment variables are not
 * observed: they are kept as declared, and the file says so; so are the
 * declared reads when a run did not observe its reads whole. */
#ifndef SG_RECORD_H
#define SG_RECORD_H

#include <jansson.h>

#include "skill.h"

/* The recording policy, applied to sk for its runs and taken back after:
 * its declared hosts held back, its declared write folders shown read-only
 * (a write there is then a request the broker carries out once allowed),
 * every tool allowed to ask, so that each use is a request the trace sees. */
struct sg_record_hold {
    size_t negress, nwrite, nread;
    struct sg_path *read, *shown;
    bool restricted, held;
};
void sg_record_policy(struct sg_skill *sk, struct sg_record_hold *h);
void sg_record_policy_restore(struct sg_skill *sk, struct sg_record_hold *h);

/* The traces (skillgate.trace/1) folded into one profile. */
json_t *sg_record_profile(json_t *const *traces, size_t n);

/* The minimal skillsandbox.yaml for sk and the profile, with comments that
 * say where every value came from and the headroom the limits have. */
char *sg_record_manifest(const struct sg_skill *sk, json_t *profile);

/* Declared against used: {"over": [...], "under": [...], "tried": [...]}, each
 * item {what: "network"|"write"|"read"|"program"|"file", name, note}: declared and
 * never used (over-asking), used and never declared (the prompts it will
 * cause, or the attack), tried and refused during the recording. */
json_t *sg_record_compare(const struct sg_skill *sk, json_t *profile);

/* The same as text lines for a terminal (sanitized). */
char *sg_record_compare_text(json_t *cmp);

/* Declared beside observed, one row per host, folder, program and limit,
 * for a screen of at least 80 columns (sanitized). */
char *sg_record_side_by_side(const struct sg_skill *sk, json_t *profile, json_t *cmp);

#endif
