/* What a run left in its private views and what it tried to write into
 * the sandbox's own system folders, said once at the end (issue 52, item
 * 8): a LibreOffice or matplotlib run writes fontconfig and profile caches
 * by the dozen, and 8-31 lines of write_discarded and "refused: Write
 * /var/cache/fontconfig/..." after a run that worked told the person
 * nothing they could act on. The plain printer folds those events here
 * and prints one line; a file in a persistence or credential place is
 * still said on its own, as it comes, and --watch, --json, the TUI and the
 * trace keep every event. */
#ifndef SG_LEFTOVER_H
#define SG_LEFTOVER_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "events.h"

#define SG_LEFTOVER_NAMED 3 /* paths named in the line; the rest counted */

struct sg_leftover {
    unsigned long long files, bytes; /* discarded from the private views */
    char *named[SG_LEFTOVER_NAMED];
    size_t nnamed;
    char *views[4]; /* the views they were in ("home", "/tmp", ...) */
    size_t nviews;
    bool walk_cut;                 /* a view held more than the walk looks at */
    unsigned long long system;     /* writes into the sandbox's own system folders */
    char *system_first;
};

/* true: ev is one of those (a write_discarded of an ordinary file, a
 * refused write into /var, /run or /dev), counted into l and not to be
 * printed on its own. */
bool sg_leftover_take(struct sg_leftover *l, const struct sg_event *ev);
/* The one line, "skillgate: discarded with the sandbox ...\n"; nothing
 * when nothing was taken. */
void sg_leftover_print(FILE *f, const struct sg_leftover *l);
/* The run's refusals without the system-folder writes the line said
 * (a new reference). */
json_t *sg_leftover_refusals(const struct sg_leftover *l, json_t *refusals);
void sg_leftover_free(struct sg_leftover *l);

#endif
