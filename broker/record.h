/* What a skill actually needs, learnt from runs of it (skillgate record):
 * the runs' traces folded into one profile (hosts and ports reached,
 * programs run, files written, what was tried and refused, peak memory,
 * time, output), the smallest skillsandbox.yaml that lets exactly that pass
 * without a prompt, and the profile against what the skill declares.
 * Reads and environment variables are not observed: they are kept as
 * declared, and the file says so. */
#ifndef SG_RECORD_H
#define SG_RECORD_H

#include <jansson.h>

#include "skill.h"

/* The traces (skillgate.trace/1) folded into one profile. */
json_t *sg_record_profile(json_t *const *traces, size_t n);

/* The minimal skillsandbox.yaml for sk and the profile, with comments that
 * say where every value came from and the headroom the limits have. */
char *sg_record_manifest(const struct sg_skill *sk, json_t *profile);

/* Declared against used: {"over": [...], "under": [...], "tried": [...]}, each
 * item {what: "network"|"write"|"program"|"limit", name, note}: declared and
 * never used (over-asking), used and never declared (the prompts it will
 * cause, or the attack), tried and refused during the recording. */
json_t *sg_record_compare(const struct sg_skill *sk, json_t *profile);

/* The same as text lines for a terminal (sanitized). */
char *sg_record_compare_text(json_t *cmp);

#endif
