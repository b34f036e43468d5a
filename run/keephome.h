/* A skill's own home, kept between its runs.
 *
 * Every run's HOME is a fresh private tmpfs, so a program that builds a
 * profile or cache on its first start (LibreOffice: 9-13 s against 2 s once
 * its profile exists) paid that start on every run. What a skill leaves in
 * its home is kept, per user (in that user's state folder, which no skill
 * ever sees: config.h's own folders are masked wherever a bind would show
 * them) and per skill (its name and real folder), and put back into the
 * next run's fresh home before the skill starts:
 *
 *   $XDG_STATE_HOME/skillgate/homes/<name>-<16 hex of sha256(real root)>/
 *       digest   the skill's content digest the kept home belongs to
 *       home/    what the run's home held at its end
 *
 * The home stays the tmpfs it was (its size cap, the credential decoys,
 * mount points of the working folder and named files beneath it): the
 * broker copies into it through the view's root fd, and out of it at the
 * end, on the home's own filesystem only (a mount on top is not the
 * home's), never following a link (links are copied as links), regular
 * files, folders and links only, no set-id bits. Only what sg_fs_class
 * calls a plain "file" is kept: a shell rc file, autostart entry or other
 * persistence place, and the credential paths (where the decoys are), are
 * discarded and reported as before. A changed skill (another content
 * digest) or `run --fresh-home` starts from an empty home and drops what
 * was kept. At most SG_VIEWS_MAX_ENTRIES entries, SG_VIEWS_MAX_DEPTH deep,
 * are copied either way; what is left out is counted and said. */
#ifndef SG_KEEPHOME_H
#define SG_KEEPHOME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sg_plan;

/* The folder a skill's home is kept in for this user (…/homes/<key>), or
 * NULL when the skill's folder cannot be named. Caller frees. */
char *sg_keephome_dir(const char *name, const char *root);

/* Before a run: the kept home belongs to digest, else (or with fresh) what
 * was kept is dropped. Makes the folders. 0, or -errno. */
int sg_keephome_prepare(const char *dir, const char *digest, bool fresh);

struct sg_keephome_count {
    size_t files, dirs, links, left_out;
    unsigned long long bytes;
    int err; /* the first error that stopped a copy (errno), or 0 */
};

/* Put the kept home into the run's fresh one (view_fd, the home's root),
 * owned by uid:gid when the broker is root. */
void sg_keephome_restore(const struct sg_plan *p, int view_fd, struct sg_keephome_count *c);
/* After the run: keep what its home holds, in place of what was kept. */
void sg_keephome_save(const struct sg_plan *p, int view_fd, struct sg_keephome_count *c);

/* What is kept for a skill (inspect): 0 and c filled, with *digest (caller
 * frees) the content digest it belongs to; -ENOENT when nothing is. */
int sg_keephome_info(const char *dir, struct sg_keephome_count *c, char **digest);

#endif
