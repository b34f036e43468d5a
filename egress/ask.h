/* The one decision the network broker needs, handed in by the run
 * (run/fetchask.c), so that egress never reaches into the decision room:
 * may the skill reach host (port 0: any port of it)? That is Fetch, in
 * the permission engine's words. */
#ifndef SG_EGRESS_ASK_H
#define SG_EGRESS_ASK_H

#include <stdbool.h>

/* Called once per question: at once when a rule, a grant or the manifest
 * decides, later when a person does. by says who decided ("person", a
 * rule's text, "declared in the manifest"); it may be NULL. */
typedef void (*sg_fetch_answer_fn)(void *actx, bool allowed, const char *by);

/* Why whoever asked stopped waiting ("it closed the connection"), or NULL
 * while it still waits: asked while the question waits, it must never
 * block. */
typedef const char *(*sg_fetch_gone_fn)(void *actx);

struct sg_fetch_asker {
    /* May the skill ask for Fetch at all (a non-empty allowed-tools
     * without Fetch or WebFetch refuses every undeclared host unasked)? */
    bool (*may_ask)(void *ctx);
    /* Ask; detail says what the request is for, to the person. gone
     * (may be NULL) lets an abandoned question be denied unanswered. */
    void (*ask)(void *ctx, const char *host, int port, const char *detail,
                sg_fetch_answer_fn answer, sg_fetch_gone_fn gone, void *actx);
    void *ctx;
};

#endif
