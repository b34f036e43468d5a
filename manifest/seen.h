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
 * every run's trace can say what changed since, and show it as a diff. */
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
};

/* "SKILL.md", "skillsandbox.yaml" */
extern const char *const sg_seen_files[SG_SEEN_NFILES];

/* Compare the skill's manifests now with the remembered copies. Reads only.
 * 0 or -errno (an unreadable store: state NEW). */
int sg_seen_compare(const struct sg_skill *sk, struct sg_seen *out);
/* Remember the manifests as they are now (temp file, rename; 0600). */
int sg_seen_mark(const struct sg_skill *sk);
/* A unified diff of manifest i (remembered -> now), by Debian's diff -u,
 * capped at 64 KiB; *out is NUL-terminated, the caller frees it. 0 or
 * -errno. */
int sg_seen_diff(const struct sg_skill *sk, size_t i, char **out);

#endif
