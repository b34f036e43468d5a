#include "rating.h"

#include <stdio.h>

#include "openclaw.h"

/* Without allowed-tools: what the skill ships that runs. */
static enum sg_risk ships(const struct sg_policy *p, const char **what)
{
    if (p->nsockets)
        return *what = "declares a host socket (a daemon outside acts for it)", SG_RISK_HIGH;
    if (p->entry.command || p->mode == SG_MODE_SCRIPTS || p->nscripts)
        return *what = "ships code it runs (an entrypoint or scripts)", SG_RISK_HIGH;
    if (p->mode == SG_MODE_WASM)
        return *what = "ships a WASM module (it reaches only its preopens)", SG_RISK_MEDIUM;
    return *what = NULL, SG_RISK_LOW;
}

/* Without allowed-tools and code of its own: what it declares. */
static const char *declares(const struct sg_skill *sk)
{
    const struct sg_policy *p = &sk->policy;
    const struct sg_openclaw *o = sk->openclaw;
    if (p->negress)
        return "declares hosts";
    if (p->nwrite)
        return "declares writable paths";
    if (o && (o->bins.n || o->any_bins.n))
        return "its OpenClaw metadata names programs for the agent to run";
    if (p->nenv || (o && (o->env.n || o->primary_env)))
        return "declares environment variables (credentials, often)";
    return NULL;
}

enum sg_risk sg_skill_risk(const struct sg_skill *sk, char *why, size_t n)
{
    const struct sg_policy *p = &sk->policy;
    const char *what = NULL;
    enum sg_risk r;
    if (p->tools_restricted) {
        r = sg_policy_max_risk(p);
        what = p->nsockets ? "declares a host socket" : "the riskiest tool its allowed-tools lists";
    } else if ((r = ships(p, &what)) == SG_RISK_LOW) {
        what = declares(sk);
        r = what ? SG_RISK_MEDIUM : SG_RISK_LOW;
        if (!what)
            what = "instructions only, nothing declared";
    }
    if (why && n)
        snprintf(why, n, "%s%s", what, p->tools_restricted ? "" : "; no allowed-tools");
    return r;
}
