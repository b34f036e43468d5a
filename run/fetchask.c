#include "fetchask.h"

#include <stdio.h>
#include <stdlib.h>

#include "perm.h"
#include "util.h"

struct wait {
    struct sg_perm *perm;
    sg_fetch_answer_fn answer;
    sg_fetch_gone_fn gone;
    void *actx;
};

static void decided(void *ctx, enum sg_decision d)
{
    struct wait *w = ctx;
    w->answer(w->actx, sg_decision_allows(d), sg_perm_last_decided_by(w->perm));
    free(w);
}

static const char *wait_gone(void *ctx)
{
    struct wait *w = ctx;
    return w->gone(w->actx);
}

static bool may_ask(void *ctx)
{
    struct sg_perm *perm = ctx;
    const struct sg_tools *t = sg_perm_tools(perm);
    return perm && (!t->restricted || t->fetch_listed);
}

static void ask(void *ctx, const char *host, int port, const char *detail,
                sg_fetch_answer_fn answer, sg_fetch_gone_fn gone, void *actx)
{
    struct wait *w = sg_xmalloc(sizeof *w);
    *w = (struct wait){.perm = ctx, .answer = answer, .gone = gone, .actx = actx};
    struct sg_preq q = {.tool = SG_PT_FETCH, .port = port};
    SG_PREQ_SET(&q, subject, host); /* too long: cut, and so asked */
    snprintf(q.detail, sizeof q.detail, "%s", detail);
    enum sg_decision d;
    if (sg_perm_request_watched(w->perm, &q, decided, w, gone ? wait_gone : NULL, &d) == 1)
        decided(w, d);
}

struct sg_fetch_asker sg_fetch_asker_of(struct sg_perm *perm)
{
    return (struct sg_fetch_asker){.may_ask = may_ask, .ask = ask, .ctx = perm};
}
