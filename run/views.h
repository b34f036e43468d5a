/* What a skill left in its private views (HOME when private, /tmp,
 * /dev/shm): writes the sandbox let happen because they land nowhere, and
 * that a person vetting the skill still has to see. The views' roots come
 * from the sandbox (sg_sandbox.view_fd); their state before the skill starts
 * is the baseline, and at the end every file changed since is one
 * write_discarded event (a persistence location, ~/.bashrc or
 * ~/.config/autostart, is classified as such), and a view at its size cap
 * is a resource_limit_hit. Only what the walk sees: bounded in entries and
 * depth, never following links, never leaving the view's own tmpfs. */
#ifndef SG_VIEWS_H
#define SG_VIEWS_H

#include <jansson.h>
#include <time.h>

#include "events.h"
#include "sandbox.h"

#define SG_VIEWS_MAX_ENTRIES 20000 /* walked per view; past it, the walk says so */
#define SG_VIEWS_MAX_DEPTH 24
#define SG_VIEWS_MAX_SHOWN 32      /* files named one by one; the rest counted */

struct sg_views_base {
    struct timespec newest[SG_VIEWS]; /* the latest ctime before the skill ran */
    json_t *known[SG_VIEWS];          /* the inodes there then ("123": true) */
    bool have[SG_VIEWS];
};

/* Before the skill starts. */
void sg_views_baseline(const struct sg_sandbox *sb, struct sg_views_base *b);
void sg_views_base_free(struct sg_views_base *b);
/* After it ended: the events. */
void sg_views_report(const struct sg_plan *p, const struct sg_sandbox *sb,
                     const struct sg_views_base *b, struct sg_event_bus *bus);

#endif
