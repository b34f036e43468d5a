/* The homes no bind may show whole (issue 34, item 8).
 *
 * The sandbox replaces the invoking user's home by a private one, and
 * every place it shows from the host is a bind made after that: a working
 * folder, a --python environment or a declared path that is a home, or a
 * folder above one (/home, /tmp/x with HOME below it, "/"), is bound over
 * the private home and shows the real one, OAuth tokens and all (the
 * credential masks name only a seed list). So such a path is refused,
 * wherever it comes from: the CLI's --cwd, MCP's run_skill cwd, --python,
 * a manifest's filesystem.read and write.
 *
 * The homes are the invoking user's (sg_invoking_home) and every
 * account's in the passwd database that is a real folder, except a
 * placeholder: "/" or a folder in the system trees every sandbox shows
 * read-only anyway (/usr, /bin, /sbin, /lib*, /etc: daemon's /usr/sbin,
 * bin's /bin). They are compared as objects, never as strings only: each
 * home's real path and every folder on its way up to "/" are stat'ed, and
 * a path clashes when stat (following links, as a bind follows them) finds
 * the same device and inode there, so a symlink (/tmp/x -> /home), a
 * second mount of /home or a home reached through a linked folder is
 * caught as well. A bind takes the mounts below its folder with it, so a
 * folder is also refused when a mount below it shows a home or a folder
 * above one (a backup mount of the home, a second mount of the root
 * filesystem): every mount point in /proc/self/mountinfo under the path is
 * compared the same way. Costs one pass over the passwd database and a few
 * stats per home, once per run, and one read of the mount table per path. */
#ifndef SG_HOMES_H
#define SG_HOMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* passwd entries looked at, at most (a directory service that enumerates
 * without end still ends) */
#define SG_HOMES_MAX 4096

struct sg_home {
    char *path;   /* as passwd or HOME names it */
    char *real;   /* its symlinks resolved */
    bool yours;   /* the invoking user's (or an account of the same uid) */
};

struct sg_homes {
    struct sg_home *v;
    size_t n;
};

enum sg_home_rel { SG_HOME_NONE, SG_HOME_IS, SG_HOME_HOLDS };

void sg_homes_get(struct sg_homes *hs);
void sg_homes_free(struct sg_homes *hs);

/* While held (nested holds count), sg_homes_get copies one snapshot read
 * at the first hold instead of reading every account again, and the
 * agents' paths (agentdirs.h) are worked out once: a plan asks for them
 * three times in a few milliseconds. So are, for the same snapshot,
 * realpath's answers (sg_path_real, config.h), the stat of each home's
 * folders up to "/" and the mount table (sg_homes_relation): a plan asked
 * them hundreds of times. Per thread; the snapshot is as old as the hold,
 * as the one a plan read was before, and all of it goes with the last
 * release. sg_homes_held: a number that names the snapshot (0: none
 * held). */
void sg_homes_hold(void);
void sg_homes_release(void);
unsigned sg_homes_held(void);

/* How the absolute path stands to the homes: it is one (SG_HOME_IS) or a
 * folder above one (SG_HOME_HOLDS); *which (may be NULL) is that home, the
 * invoking user's first. A path inside a home is SG_HOME_NONE. */
enum sg_home_rel sg_homes_relation(const struct sg_homes *hs, const char *path,
                                   const struct sg_home **which);

/* "your home /h", "a folder that holds your home /h", "another account's
 * home /h", "a folder that holds another account's home /h", into buf. */
const char *sg_homes_describe(enum sg_home_rel rel, const struct sg_home *h, char *buf,
                              size_t size);

#endif
