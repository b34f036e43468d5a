/* One skill vetted (issue 53): the static pass (its manifest read by its
 * ecosystem's rules, the risk of what it ships, what its text tells an
 * agent to run or hides: manifest/instructions.h) and the dynamic pass
 * (each runnable it ships run under the recording policy, nobody to ask,
 * decoy credentials in its home, declared hosts and write folders held
 * back, a short time bound), folded into a skillgate.vet/1 record
 * (records/vet.h) written to OUT/skills/KEY.json.
 *
 * Runs in a worker process of `skillgate vet` whose XDG_STATE_HOME and
 * XDG_CONFIG_HOME are the vetting's own (cmd_vet.c): the person's saved
 * grants, rules and config never apply, and the runs' audit records and
 * traces land in OUT. */
#ifndef SG_VETSKILL_H
#define SG_VETSKILL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct sg_skill;

#define SG_VET_RUNS_DEFAULT 8 /* runnables run per skill; the rest said as not run */

struct sg_vet_opts {
    const char *out;       /* the --out folder, absolute */
    long long timeout_s;   /* per runnable */
    size_t max_runs;       /* runnables per skill */
    bool static_only;      /* --static: no runnable is run */
    json_t *old;           /* --against: the earlier vetting's records, or NULL */
};

/* Vet sk, found at rel below the vetted root; its record written to
 * OUT/skills/KEY.json (whole or not at all). The verdict (records/vet.h),
 * or -errno when the record could not be written (*why says so). */
int sg_vet_skill(struct sg_skill *sk, const char *rel, const struct sg_vet_opts *o, char **why);

/* The words after a script's name in its usage line ("python
 * scripts/x.py IN --out OUT | jq" gives IN --out OUT): up to a shell
 * operator, quotes taken off as sh would for plain words. NULL when the
 * line does not name the script. New reference. */
json_t *sg_vet_usage_args(const char *usage, const char *script);

#endif
