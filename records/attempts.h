/* What a run attempted, for a person vetting a skill: every request the
 * sandbox stopped, asked a person about, or let through, by what it
 * reached for (files, programs, network, limits, other). One tally,
 * filled from the live events (the Run screen) or from a trace's events
 * (the traces index, the Skills screen), and one way to say it. */
#ifndef SG_ATTEMPTS_H
#define SG_ATTEMPTS_H

#include <jansson.h>
#include <stddef.h>

#include "events.h"

#define SG_ATT_WHAT(X) X(FILES, "files") X(PROGRAMS, "programs") X(NETWORK, "network") \
    X(LIMITS, "limits") X(OTHER, "other")
#define SG_ATT_HOW(X) X(BLOCKED, "blocked") X(ASKED, "asked") X(ALLOWED, "allowed")

enum sg_att_what {
#define X(id, name) SG_ATT_##id,
    SG_ATT_WHAT(X)
#undef X
    SG_ATT_WHAT_COUNT
};
enum sg_att_how {
#define X(id, name) SG_ATT_##id,
    SG_ATT_HOW(X)
#undef X
    SG_ATT_HOW_COUNT
};

struct sg_attempts {
    unsigned long n[SG_ATT_HOW_COUNT][SG_ATT_WHAT_COUNT];
};

/* What one event counts as (an sg_att_how), and for what (*what, an
 * sg_att_what); -1 for an event that is no attempt. A decision counts as
 * blocked or allowed, its question as asked. */
int sg_attempts_how(enum sg_event_kind k, json_t *data, enum sg_att_what *what);
/* Count one event (kind and its data); events that are no attempt are
 * ignored. */
void sg_attempts_add(struct sg_attempts *a, enum sg_event_kind k, json_t *data);
/* The same from a trace event ({"kind": ..., "data": ...}). */
void sg_attempts_add_json(struct sg_attempts *a, json_t *event);
/* The part of an event's data the tally reads ({"tool", "prevented",
 * "syscall"}; NULL when none): what a run streamed elsewhere (tui
 * --attach) carries so that both ends count alike. */
json_t *sg_attempts_fields(json_t *data);
unsigned long sg_attempts_total(const struct sg_attempts *a, enum sg_att_how how);
/* "blocked 3 (network 2, files 1) · asked 1 (programs 1) · allowed 0", or
 * "nothing blocked, asked or allowed" (caller frees). */
char *sg_attempts_text(const struct sg_attempts *a);
/* {"blocked": {"network": 2, ...}, ...} (zeros left out), and back. */
json_t *sg_attempts_json(const struct sg_attempts *a);
void sg_attempts_from_json(struct sg_attempts *a, json_t *j);

#endif
