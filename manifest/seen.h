/* What a person last looked at of a skill, so that a changed manifest is
 * shown as changed.
 *
 * A skill that could write its own folder once widened its next run by
 * appending hosts and paths to its skillsandbox.yaml (issue 15, item 6).
 * The folder is read-only to the skill now, but a skill's manifests also
 * change by an update, a pull, another tool. Grants are bound to the
 * skill's content digest, so a changed skill asks again; this keeps a copy
 * of its two manifests (SKILL.md, skillsandbox.yaml, each capped) as of the
 * person's last look (a run from the CLI or the TUI, or "mark as seen" on
 * the Skills screen), in skillgate's private state folder under
 * seen/<sha256 of the skill's real path>/, so that the Skills screen and
 * every run's trace can say what changed since, and show it as a diff.
 *
 * The manifests alone do not say what runs: a pull, an update or the agent
 * itself can replace scripts/fmt.py and leave both manifests as they were,
 * and the hook's rewrite would run the new code with the secrets and hosts
 * the manifest declares, allowed outright (issue 35, item 2). So the store
 * also keeps the skill's content digest as of the look (sg_skill_digest,
 * the digest grants are pinned to), and sg_seen_compare_code says whether
 * the skill's code now is the code last looked at. A store from before the
 * digest was kept says it is not. */
#ifndef SG_SEEN_H
#define SG_SEEN_H

#include <stdbool.h>
#include <stddef.h>

#include "skill.h"

#define SG_SEEN_MAX (256 * 1024) /* bytes of one manifest kept and compared */
#define SG_SEEN_NFILES 2

enum sg_seen_state { SG_SEEN_NEW, SG_SEEN_SAME, SG_SEEN_CHANGED };

struct sg_seen {
    enum sg_seen_state state;
    char when[32];                  /* the last look, UTC ISO 8601; "" when new */
    bool changed[SG_SEEN_NFILES];   /* per manifest, in sg_seen_files order */
    /* sg_seen_compare_code only: the skill's content digest now is the one
     * remembered. False when none was remembered (a store from before the
     * digest was kept, a look whose digest could not be taken) or it cannot
     * be taken now. */
    bool code_same;
};

/* "SKILL.md", "skillsandbox.yaml" */
extern const char *const sg_seen_files[SG_SEEN_NFILES];

/* Compare the skill's manifests now with the remembered copies. Reads only.
 * 0 or -errno (an unreadable store: state NEW). */
int sg_seen_compare(const struct sg_skill *sk, struct sg_seen *out);
/* sg_seen_compare, and code_same: hashes the whole skill (sg_skill_digest,
 * up to SG_DIGEST_MAX_BYTES read), so it costs what a grant check costs.
 * A skill vetted to run as it is needs state SG_SEEN_SAME and code_same.
 * 0 or -errno, as sg_seen_compare; a digest that cannot be taken is not an
 * error, only code_same false. */
int sg_seen_compare_code(const struct sg_skill *sk, struct sg_seen *out);
/* Remember the manifests as they are now and the content digest (each a
 * file, temp file + rename, 0600). digest is the skill's sg_skill_digest
 * taken before this call (a run passes the one it ran under, so it hashes
 * the skill once); NULL: take it now, before the manifests are read; "":
 * it could not be taken, forget the remembered one. Taken before the
 * manifests are read, a change in between shows as changed code, never as
 * the same. 0 or -errno; the manifests are remembered even when the digest
 * cannot be taken (that error is returned, and code_same is false). */
int sg_seen_mark_digest(const struct sg_skill *sk, const char *digest);
/* sg_seen_mark_digest(sk, NULL). */
int sg_seen_mark(const struct sg_skill *sk);
/* A unified diff of manifest i (remembered -> now), by Debian's diff -u,
 * capped at 64 KiB; *out is NUL-terminated, the caller frees it. 0 or
 * -errno. */
int sg_seen_diff(const struct sg_skill *sk, size_t i, char **out);

#endif
