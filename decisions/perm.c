#include "perm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "execprompt.h"
#include "perm_int.h"
#include "sanitize.h"
#include "shellcmd.h"
#include "util.h"

#define MAX_PENDING 64

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* An agent's command line as it wrote it (check_tool_permission puts the
 * first word in subject, the rest in args). */
char *sg_agent_line(const struct sg_preq *q)
{
    return sg_xasprintf("%s%s%s", q->subject, q->args[0] ? " " : "", q->args);
}

/* q, narrowed to one simple command c of the agent's line: the program as
 * written (./ls or /tmp/ls is not the ls a scope names), the arguments as
 * quoted words that read back exactly. */
void sg_agent_one_command(const struct sg_preq *q, const struct sg_shell_cmd *c,
                          struct sg_preq *out)
{
    *out = *q;
    SG_PREQ_SET(out, subject, c->argv[0]);
    SG_PREQ_SET(out, name, c->argv[0]);
    struct sg_shell_cmd rest = {.argv = c->argv + 1, .argc = c->argc - 1};
    cleanup_free char *args = sg_shell_join(&rest);
    SG_PREQ_SET(out, args, args);
}

/* ---- the engine ---- */

struct pending {
    struct sg_preq q;
    sg_perm_cont cont;
    void *ctx;
    sg_perm_gone_fn gone; /* why its caller stopped waiting, or NULL (may be NULL) */
    int64_t asked_ms;
    uint64_t id; /* what a front end's answer names: never another request's */
    bool passed; /* the program said "ask" (or could not be asked it): a person decides */
};

#define AUDIT_PER_KIND 20

#define AUDIT_KINDS 64

#define AUDIT_FLUSH_EVERY 10000

struct audit_kind {
    char *tool, *by;
    bool allow;
    char *seen[AUDIT_PER_KIND]; /* the requests written as records of their own */
    size_t nseen;
    unsigned long long more;    /* counted since the last "decisions" record */
    char first[32], last[32];
    json_t *examples;
};

struct sg_perm {
    /* a person's stop with request stop_id on screen (sg_perm_deny_at_end):
     * denied in the person's name when the run ends, once its processes
     * are dead, never before */
    uint64_t stop_id;
    bool stop_set;
    bool ending;   /* sg_perm_cancel_all: what waits is denied by the run's end */
    struct sg_perm_opts o;
    char *skill, *digest, *run_id, *grants_file;
    struct sg_prule *rules;
    size_t nrules;
    /* the requests waiting for a person; the head is shown */
    struct pending queue[MAX_PENDING];
    size_t nqueue;
    uint64_t next_id;
    bool quiet;               /* record without an event (sg_perm_record of a refusal) */
    struct audit_kind *kinds; /* the run's decisions, counted (audit_decision) */
    size_t nkinds;
    bool shown;
    int64_t shown_ms, deadline_ms;
    char last_by[512];       /* who made the last decision */
    char why_buf[512];       /* the prompt's why, when it is composed */
    char *answer_rule;       /* the rule the person's answer keeps, when narrowed */
    json_t *kept;            /* the rules the answer being recorded kept (its event's "kept") */
    bool answer_tree;        /* ... and it covers what the program runs (answer_program) */
    sg_perm_show_fn fe_show; /* a front end shows the prompt */
    void *fe_ctx;
    size_t (*fe_pollfds)(void *ctx, struct pollfd *out, size_t max); /* its own fds */
    void (*fe_dispatch)(void *ctx, const struct pollfd *p, size_t n);
    bool deferring, deferred; /* left to the agent's own prompt (defer_without_frontend) */
    const char *session[SG_SHELL_MAX_CMDS]; /* the rules the last "this session" answer kept */
    size_t nsession;
    struct sg_pprog_call *call; /* the program deciding the head (o.program) */
    uint64_t call_id;
};

static const char *run_source(const struct sg_perm *p)
{
    return p->o.session ? "this session" : "this run";
}

void sg_perm_defer(struct sg_perm *p, const struct sg_preq *q, const char *why)
{
    p->deferring = p->deferred = true;
    sg_perm_audit(p, q, SG_DEC_DENY, why, 0);
    p->deferring = false;
}

bool sg_perm_deferred(const struct sg_perm *p)
{
    return p->deferred;
}

int sg_perm_add_session_rule(struct sg_perm *p, const char *text)
{
    struct sg_prule r;
    const char *why;
    if (sg_prule_parse(text, SG_EFF_ALLOW, "this session", &r, &why) < 0)
        return -EINVAL;
    sg_rules_add(&p->rules, &p->nrules, &r);
    return 0;
}

size_t sg_perm_session_rules(const struct sg_perm *p, const char *const **rules)
{
    *rules = p->session;
    return p->nsession;
}

const struct sg_tools *sg_perm_tools(const struct sg_perm *p)
{
    static const struct sg_tools none = {.restricted = true};
    return p && p->o.tools ? p->o.tools : &none;
}

struct sg_perm *sg_perm_new(const struct sg_perm_opts *o, struct sg_diags *d)
{
    struct sg_perm *p = sg_xcalloc(1, sizeof *p);
    p->kinds = sg_xcalloc(AUDIT_KINDS, sizeof *p->kinds);
    p->o = *o;
    p->skill = sg_xstrdup(o->skill ? o->skill : "?");
    p->digest = sg_xstrdup(o->digest ? o->digest : "");
    p->run_id = sg_xstrdup(o->run_id ? o->run_id : "");
    p->grants_file = o->grants_file ? sg_xstrdup(o->grants_file) : sg_grants_path();
    if (o->policy_file && sg_rules_load(o->policy_file, &p->rules, &p->nrules, d) < 0) {
        sg_perm_free(p);
        return NULL;
    }
    int err;
    cleanup_free char *untrusted = NULL;
    /* a skill whose digest could not be taken has no grants: an "always"
     * pinned to no digest would hold for any code */
    json_t *grants = p->digest[0] ? sg_grants_read(p->grants_file, d, &err, &untrusted)
                                  : (err = 0, json_array());
    if (err == -EPERM && o->bus) /* d has it for stderr; the trace and the TUI get this */
        sg_bus_emit(o->bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:s}", "grants_ignored", p->grants_file, "reason",
                              untrusted),
                    "grants file ignored, no saved \"always\" decision applies: %s", untrusted);
    size_t i;
    json_t *g;
    json_array_foreach(grants, i, g)
    {
        const char *sk = json_string_value(json_object_get(g, "skill"));
        const char *dg = json_string_value(json_object_get(g, "digest"));
        const char *rt = json_string_value(json_object_get(g, "rule"));
        const char *ef = json_string_value(json_object_get(g, "effect"));
        if (!sk || !dg || !rt || !ef || strcmp(sk, p->skill) || strcmp(dg, p->digest))
            continue; /* another skill's, or this skill's before it changed */
        struct sg_prule r;
        const char *why;
        if (sg_prule_parse(rt, !strcmp(ef, "deny") ? SG_EFF_DENY : SG_EFF_ALLOW, "grant", &r,
                           &why) == 0)
            sg_rules_add(&p->rules, &p->nrules, &r);
    }
    json_decref(grants);
    return p;
}

/* A run's decisions in the audit log, bounded: a flood of refusals (20,000
 * refused creates) was 20,000 fsync'd records. Per kind of decision (tool,
 * allow or deny, who decided), the first AUDIT_PER_KIND different requests
 * are records of their own; a request identical to one of those, and every
 * one past them, is counted, and one "decisions" record per kind says how
 * many, with the first and last time and the first requests: when the run
 * ends (sg_perm_free), and every AUDIT_FLUSH_EVERY counted on the way, so a
 * day-long flood leaves a bounded log and a killed broker loses at most
 * that many counts. */
static void flush_kind(struct sg_perm *p, struct audit_kind *k)
{
    if (!k->more)
        return;
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o}",
                            "type", "decisions", "time", k->last, "run_id", p->run_id, "skill",
                            p->skill, "digest", p->digest, "tool", k->tool, "decision",
                            k->allow ? "allow" : "deny", "decided_by", k->by, "count",
                            (json_int_t)k->more, "first", k->first, "last", k->last,
                            "examples", json_deep_copy(k->examples));
    cleanup_free char *path = sg_audit_path();
    sg_audit_post(path, rec); /* the writer's now: the examples are cleared below */
    k->more = 0;
    json_array_clear(k->examples);
}

/* true: written on its own (a new kind, or a new request of a kind not yet
 * past its bound); false: counted */
static bool audit_counts_it(struct sg_perm *p, const char *tool, bool allow, const char *by,
                            const char *req, const char *iso)
{
    struct audit_kind *k = NULL;
    for (size_t i = 0; i < p->nkinds && !k; i++)
        if (p->kinds[i].allow == allow && !strcmp(p->kinds[i].tool, tool) &&
            !strcmp(p->kinds[i].by, by))
            k = &p->kinds[i];
    if (!k) {
        if (p->nkinds == AUDIT_KINDS)
            return true; /* more kinds than that: each is its own record, as before */
        k = &p->kinds[p->nkinds++];
        *k = (struct audit_kind){.tool = sg_xstrdup(tool), .by = sg_xstrdup(by), .allow = allow,
                                 .examples = json_array()};
    }
    for (size_t i = 0; i < k->nseen; i++)
        if (!strcmp(k->seen[i], req))
            goto counted;
    if (k->nseen < AUDIT_PER_KIND) {
        k->seen[k->nseen++] = sg_xstrdup(req);
        return true;
    }
counted:
    if (!k->more)
        snprintf(k->first, sizeof k->first, "%s", iso);
    snprintf(k->last, sizeof k->last, "%s", iso);
    if (json_array_size(k->examples) < 5)
        json_array_append_new(k->examples, json_string(req));
    if (++k->more >= AUDIT_FLUSH_EVERY)
        flush_kind(p, k);
    return false;
}

static void audit_flush_all(struct sg_perm *p)
{
    for (size_t i = 0; i < p->nkinds; i++) {
        struct audit_kind *k = &p->kinds[i];
        flush_kind(p, k);
        for (size_t j = 0; j < k->nseen; j++)
            free(k->seen[j]);
        free(k->tool), free(k->by);
        json_decref(k->examples);
    }
    p->nkinds = 0;
}

/* A rule or a grant decided (rule_by's words): the event says "allowed by"
 * rather than a person's "allow once". */
static bool by_rule(const char *by)
{
    return sg_str_has_prefix(by, "grant ") || sg_str_has_prefix(by, "rule ") ||
           sg_str_has_prefix(by, "your answer for this run");
}

void sg_perm_audit(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                   const char *by, int64_t latency)
{
    snprintf(p->last_by, sizeof p->last_by, "%s", by);
    /* an agent's own tool (check_tool_permission) is recorded by its name */
    cleanup_free char *rule = q->agent_tool[0]
                                  ? sg_xasprintf("%s(%s%s%s)", q->agent_tool, q->subject,
                                                 q->args[0] ? " " : "", q->args)
                                  : sg_preq_rule(q);
    const char *tool_name = q->agent_tool[0] ? q->agent_tool : sg_ptool_name(q->tool);
    char iso[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    sg_format_iso((int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, iso);
    const char *scope = d == SG_DEC_ALLOW_ONCE  ? "once"
                        : d == SG_DEC_ALLOW_RUN ? "run"
                        : d == SG_DEC_ALLOW_ALWAYS || d == SG_DEC_DENY_ALWAYS ? "always"
                                                                              : "once";
    cleanup_free char *req = sg_sanitize_str(rule, 0);
    cleanup_free char *args = sg_sanitize_str(q->args, 0);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "type",
                            "decision", "time", iso, "run_id", p->run_id, "skill", p->skill,
                            "digest", p->digest, "tool", tool_name, "request", req,
                            "args", args, "decision",
                            p->deferring ? "ask" : sg_decision_allows(d) ? "allow" : "deny",
                            "scope", scope, "latency_ms", (json_int_t)latency);
    json_object_set_new(rec, "decided_by", json_string(by));
    /* a protected target (protected.h): what only an exact rule allows */
    const char *prot = sg_preq_protected(q);
    if (prot)
        json_object_set_new(rec, "protected", json_string(prot));
    json_t *kept = steal_pointer(&p->kept); /* remember()'s, for this answer only */
    if (kept && !json_array_size(kept))
        json_decref(steal_pointer(&kept));
    if (p->o.audit_extra)
        json_object_update(rec, p->o.audit_extra);
    if (audit_counts_it(p, tool_name, sg_decision_allows(d), by, req, iso)) {
        cleanup_free char *path = sg_audit_path();
        sg_audit_post(path, json_incref(rec)); /* the writer thread's: never the loop's wait */
    }
    if (p->o.bus && !p->quiet) {
        /* what was asked for, as data: traces diff compares programs, paths, hosts */
        cleanup_free char *subject = sg_sanitize_str(q->subject, 0);
        json_t *ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:s}", "tool", tool_name,
                               "request", req, "decision", sg_decision_name(d), "decided_by", by,
                               "scope", scope, "latency_ms", (json_int_t)latency, "prevented",
                               !sg_decision_allows(d), "subject", subject);
        if (q->tool == SG_PT_FETCH && q->port > 0)
            json_object_set_new(ev, "port", json_integer(q->port));
        if (prot)
            json_object_set_new(ev, "protected", json_string(prot));
        if (kept) /* the rules the answer kept: the grant as saved, a glob maybe */
            json_object_set(ev, "kept", kept);
        /* a Write names the call it stopped (chmod, rename, unlinkat...) */
        bool call = q->tool == SG_PT_WRITE && !q->agent_tool[0] && args[0];
        if (call)
            json_object_set_new(ev, "syscall", json_string(args));
        /* the message says it when it is no open: a chmod, a rename */
        bool say = call && strncmp(args, "open", 4) && strcmp(args, "creat");
        sg_bus_emit(p->o.bus, SG_EV_PERMISSION_DECIDED, ev, "%s: %s (%s)%s%s", req,
                    by_rule(by) ? (sg_decision_allows(d) ? "allowed" : "denied")
                                : sg_decision_name(d),
                    by, say ? "; the call: " : "", say ? args : "");
    }
    json_decref(kept);
    json_decref(rec);
}

void sg_perm_record(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                    const char *by)
{
    if (!p)
        return;
    /* a refusal has its own enforcement event already (one refusal, one
     * count); an allowance is shown as a decision */
    p->quiet = !sg_decision_allows(d);
    sg_perm_audit(p, q, d, by, 0);
    p->quiet = false;
}

/* Remember a decision: for the run, or as a grant pinned to the digest. */
/* Who decided, when a rule did: "grant Bash(x)", "your answer for this
 * run: Bash(x)", "rule Bash(x) (policy.yaml:4)". */
static void rule_by(const struct sg_prule *hit, char *out, size_t n)
{
    if (!strcmp(hit->source, "grant"))
        snprintf(out, n, "grant %s", hit->text);
    else if (!strcmp(hit->source, "this run") || !strcmp(hit->source, "this session"))
        snprintf(out, n, "your answer for %s: %s", hit->source, hit->text);
    else
        snprintf(out, n, "rule %s (%s)", hit->text, hit->source);
}

/* The rules an answer to q keeps: the one the person narrowed it to, or
 * the one the prompt showed; for an agent's command line of several
 * simple commands, one exact rule each (that is how a line is matched:
 * every command must be allowed). */
static size_t rules_to_keep(struct sg_perm *p, const struct sg_preq *q, char **out, size_t max)
{
    char *answered = p ? steal_pointer(&p->answer_rule) : NULL;
    if (q->answer_only) { /* nothing kept, and nothing shown as kept */
        free(answered);
        return 0;
    }
    if (answered) {
        out[0] = answered;
        return 1;
    }
    if (q->tool == SG_PT_BASH && q->agent_tool[0] &&
        sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) == SG_PT_BASH) {
        cleanup_free char *line = sg_agent_line(q);
        struct sg_shell sh;
        const char *why;
        if (sg_shell_parse(line, &sh, &why) < 0)
            return 0; /* asked every time: no rule could ever match it */
        size_t n = 0;
        /* a line that changes folder keeps nothing: each command's words
         * were read in a folder the rule would not be; nor does a program
         * named by a relative path (./run is whatever is there next time) */
        for (size_t i = 0; i < sh.n; i++) {
            const char *a0 = sh.cmds[i].argv[0];
            if (!strcmp(a0, "cd") || !strcmp(a0, "pushd") || !strcmp(a0, "popd") ||
                !strcmp(a0, "chdir")) {
                sg_shell_free(&sh);
                return 0;
            }
        }
        struct sg_preq *one = sg_xmalloc(sizeof *one);
        for (size_t i = 0; i < sh.n && n < max; i++) {
            if (strchr(sh.cmds[i].argv[0], '/') && sh.cmds[i].argv[0][0] != '/')
                continue;
            sg_agent_one_command(q, &sh.cmds[i], one);
            out[n++] = sg_preq_rule(one);
        }
        free(one);
        sg_shell_free(&sh);
        return n;
    }
    out[0] = sg_preq_rule(q);
    return 1;
}

/* A person's "deny" holds for the rest of the run: the same request is
 * refused without a question (a host on any port, since its lookups and
 * its connections are one decision to the person). Not in an agent's
 * session, whose lines come one at a time to the agent's own prompt. */
static void hold_denial(struct sg_perm *p, const struct sg_preq *q)
{
    if (q->cut || q->unsure || p->o.session || q->agent_tool[0])
        return;
    /* a name on any port; an address (a published port asks as 127.0.0.1)
     * keeps its port: another port of it is another service */
    unsigned char a[16];
    bool literal = inet_pton(AF_INET, q->subject, a) == 1 || inet_pton(AF_INET6, q->subject, a) == 1;
    cleanup_free char *text = q->tool == SG_PT_FETCH && !literal
                                  ? sg_xasprintf("Fetch(%s)", q->subject)
                                  : sg_preq_rule(q);
    struct sg_prule r;
    const char *why;
    if (sg_prule_parse(text, SG_EFF_DENY, "this run", &r, &why) == 0)
        sg_rules_add(&p->rules, &p->nrules, &r);
}

static void remember(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                     const char *by)
{
    bool tree = p->answer_tree;
    p->answer_tree = false;
    if (d == SG_DEC_DENY && !strcmp(by, "person"))
        hold_denial(p, q);
    if (q->cut || q->answer_only ||
        (d != SG_DEC_ALLOW_RUN && d != SG_DEC_ALLOW_ALWAYS && d != SG_DEC_DENY_ALWAYS)) {
        free(steal_pointer(&p->answer_rule));
        return;
    }
    char *texts[SG_SHELL_MAX_CMDS];
    size_t nt = rules_to_keep(p, q, texts, SG_ARRAY_LEN(texts));
    json_decref(p->kept); /* what was saved, as saved: a report shows it (issue 54, item 9) */
    p->kept = json_array();
    for (size_t i = 0; i < nt; i++) {
        cleanup_free char *safe = sg_sanitize_str(texts[i], 0);
        json_array_append_new(p->kept, json_string(safe));
    }
    p->nsession = 0;
    struct sg_diags dd = {0};
    int err = 0;
    cleanup_free char *untrusted = NULL;
    json_t *list = d == SG_DEC_ALLOW_RUN || !p->digest[0]
                       ? NULL /* no digest: kept for this run only (sg_perm_new) */
                       : sg_grants_read(p->grants_file, &dd, &err, &untrusted);
    char iso[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    sg_format_iso((int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, iso);
    for (size_t i = 0; i < nt; i++) {
        struct sg_prule r;
        const char *why;
        if (sg_prule_parse(texts[i], d == SG_DEC_DENY_ALWAYS ? SG_EFF_DENY : SG_EFF_ALLOW,
                           d == SG_DEC_ALLOW_RUN ? run_source(p) : "grant", &r, &why) == 0) {
            r.tree = tree && d == SG_DEC_ALLOW_RUN;
            sg_rules_add(&p->rules, &p->nrules, &r);
            if (d == SG_DEC_ALLOW_RUN && p->nsession < SG_ARRAY_LEN(p->session))
                p->session[p->nsession++] = p->rules[p->nrules - 1].text;
        }
        if (list)
            json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "skill", p->skill,
                                                  "digest", p->digest, "rule", texts[i], "effect",
                                                  d == SG_DEC_DENY_ALWAYS ? "deny" : "allow",
                                                  "created", iso));
        free(texts[i]);
    }
    if (list && !err)
        sg_grants_save(p->grants_file, list);
    json_decref(list);
    sg_diags_free(&dd);
}

static enum sg_effect evaluate_one(struct sg_perm *p, const struct sg_preq *q,
                                   const struct sg_prule **hit);
static bool hidden_matters(const struct sg_preq *q);

/* The agent works in another folder than its project's (Claude Code
 * keeps a cd from one call to the next and names the project in
 * CLAUDE_PROJECT_DIR): git there reads that folder's repository. */
static bool outside_project(const struct sg_preq *q)
{
    const char *proj = secure_getenv("CLAUDE_PROJECT_DIR");
    if (!proj || proj[0] != '/' || !q->cwd[0])
        return false;
    cleanup_free char *real = realpath(proj, NULL);
    return !real || strcmp(real, q->cwd) != 0;
}

/* An agent's command line: denied when any simple command in it is,
 * allowed only when every one is; one that cannot be read exactly is never
 * allowed by a rule (deny rules still see it as written). */
static enum sg_effect evaluate_line(struct sg_perm *p, const struct sg_preq *q,
                                    const struct sg_prule **hit)
{
    cleanup_free char *line = sg_agent_line(q);
    struct sg_shell sh;
    const char *why;
    *hit = NULL;
    if (sg_shell_parse(line, &sh, &why) < 0) {
        for (size_t i = 0; i < p->nrules; i++)
            if (p->rules[i].effect == SG_EFF_DENY && sg_prule_matches(&p->rules[i], q)) {
                *hit = &p->rules[i];
                return SG_EFF_DENY;
            }
        return SG_EFF_ASK;
    }
    enum sg_effect e = SG_EFF_ALLOW;
    const struct sg_prule *first_allow = NULL;
    struct sg_preq *one = sg_xmalloc(sizeof *one);
    bool moved = outside_project(q); /* git there reads that folder's repository */
    for (size_t i = 0; i < sh.n; i++) {
        const struct sg_prule *h;
        sg_agent_one_command(q, &sh.cmds[i], one);
        enum sg_effect ei = evaluate_one(p, one, &h);
        const char *mwhy;
        if (!sg_shell_read_whole_in(sh.cmds[i].argv, sh.cmds[i].argc, &moved, &mwhy) &&
            ei == SG_EFF_ALLOW)
            ei = SG_EFF_ASK; /* no rule allows what the reader does not model */
        if (ei == SG_EFF_DENY) {
            *hit = h;
            e = SG_EFF_DENY;
            break;
        }
        if (ei == SG_EFF_ASK)
            e = SG_EFF_ASK;
        else if (!first_allow)
            first_allow = h;
    }
    free(one);
    sg_shell_free(&sh);
    if (e == SG_EFF_ALLOW)
        *hit = first_allow;
    return e;
}

static enum sg_effect evaluate(struct sg_perm *p, const struct sg_preq *q, const struct sg_prule **hit)
{
    if (q->tool == SG_PT_BASH && q->agent_tool[0])
        return evaluate_line(p, q, hit);
    return evaluate_one(p, q, hit);
}

/* A person's "this folder, this run" (f) covers the folder's ordinary
 * files, never a high-risk one below it (.git/hooks, ~/.local/bin, an
 * autostart entry): those are asked one at a time. */
static bool folder_answer_misses(struct sg_perm *p, const struct sg_prule *r,
                                 const struct sg_preq *q)
{
    size_t n = r->pattern ? strlen(r->pattern) : 0;
    if (q->tool != SG_PT_WRITE || n < 3 || strcmp(r->pattern + n - 3, "/**") || !r->source ||
        strcmp(r->source, run_source(p)))
        return false;
    char why[256];
    return sg_preq_risk(q, sg_invoking_home(), why, sizeof why) >= SG_RL_HIGH;
}

/* An answer a person gave before (a grant, "this session" or "this run"),
 * not a rule of the policy file. */
static bool kept_answer(const struct sg_perm *p, const struct sg_prule *r)
{
    return r->source && (!strcmp(r->source, "grant") || !strcmp(r->source, run_source(p)));
}

static enum sg_effect evaluate_one(struct sg_perm *p, const struct sg_preq *q,
                                   const struct sg_prule **hit)
{
    *hit = NULL;
    if (q->cut || q->unsure)
        return SG_EFF_ASK; /* never matched on what did not fit, or was read two ways */
    /* deny, then ask, on the program however it is reached; only then allow */
    bool unknown = false;
    if ((*hit = sg_rules_limit(p->rules, p->nrules, q, SG_EFF_DENY, &unknown)))
        return SG_EFF_DENY;
    if (unknown && hidden_matters(q))
        return SG_EFF_ASK; /* a launcher hides what runs from a deny rule */
    if ((*hit = sg_rules_limit(p->rules, p->nrules, q, SG_EFF_ASK, &unknown)) ||
        (unknown && hidden_matters(q)))
        return SG_EFF_ASK;
    /* a protected target (.git/config, .git/hooks, .envrc ...): only a
     * rule that names that exact file allows it, never a glob, a folder
     * answer or a bare Write */
    bool exact_only = sg_preq_protected(q) != NULL;
    for (size_t i = 0; i < p->nrules; i++)
        if (p->rules[i].effect == SG_EFF_ALLOW && sg_prule_matches(&p->rules[i], q) &&
            (!exact_only || sg_prule_exact(&p->rules[i])) &&
            !(q->answer_only && kept_answer(p, &p->rules[i])) &&
            !folder_answer_misses(p, &p->rules[i], q)) {
            *hit = &p->rules[i];
            return SG_EFF_ALLOW;
        }
    return SG_EFF_ASK;
}

static void show(struct sg_perm *p);

static void show_frontend(struct sg_perm *p);

static void decide_head(struct sg_perm *p, enum sg_decision d, const char *by);

/* What the deny and ask rules alone say of one request. */
/* A launcher that hides its program matters for an agent's line, which
 * runs outside any sandbox; a skill's every exec stops in the broker, the
 * hidden program's too, and is decided there on its own. */
static bool hidden_matters(const struct sg_preq *q)
{
    return q->agent_tool[0] != '\0';
}

static enum sg_effect limit_one(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n)
{
    bool unknown = false;
    const struct sg_prule *hit = sg_rules_limit(p->rules, p->nrules, q, SG_EFF_DENY, &unknown);
    unknown = unknown && hidden_matters(q);
    if (hit) {
        rule_by(hit, by, n);
        return SG_EFF_DENY;
    }
    if (!unknown)
        hit = sg_rules_limit(p->rules, p->nrules, q, SG_EFF_ASK, &unknown);
    unknown = unknown && hidden_matters(q);
    if (hit)
        rule_by(hit, by, n);
    else if (unknown)
        snprintf(by, n, "a launcher (env, sudo, sh -c ...) hides the program it runs");
    return hit || unknown ? SG_EFF_ASK : SG_EFF_ALLOW;
}

static enum sg_effect limits(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n,
                             bool reading);

enum sg_effect sg_perm_limits(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n)
{
    return limits(p, q, by, n, true);
}

enum sg_effect sg_perm_rule_limits(struct sg_perm *p, const struct sg_preq *q, char *by,
                                   size_t n)
{
    return limits(p, q, by, n, false);
}

/* reading: a line the reader does not read whole is asked too */
static enum sg_effect limits(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n,
                             bool reading)
{
    if (n)
        by[0] = '\0';
    if (q->cut) {
        snprintf(by, n, "too long to read whole");
        return SG_EFF_ASK;
    }
    if (q->unsure) {
        snprintf(by, n, "%s", q->argv0[0] ? "run by a name that is not its own (argv[0])"
                                          : "a path read two ways (as written, and as the "
                                            "kernel walks it)");
        return SG_EFF_ASK;
    }
    if (q->tool != SG_PT_BASH || !q->agent_tool[0] ||
        sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) != SG_PT_BASH)
        return limit_one(p, q, by, n);
    cleanup_free char *line = sg_agent_line(q);
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse(line, &sh, &why) < 0) {
        snprintf(by, n, "cannot be read exactly: %s", why);
        return SG_EFF_ASK;
    }
    enum sg_effect e = SG_EFF_ALLOW;
    struct sg_preq *one = sg_xmalloc(sizeof *one);
    char b2[512];
    bool moved = outside_project(q); /* git there reads that folder's repository */
    for (size_t i = 0; i < sh.n && e != SG_EFF_DENY; i++) {
        sg_agent_one_command(q, &sh.cmds[i], one);
        enum sg_effect ei = limit_one(p, one, b2, sizeof b2);
        const char *mwhy = NULL, *a0 = sh.cmds[i].argv[0];
        bool whole = !reading ||
                     sg_shell_read_whole_in(sh.cmds[i].argv, sh.cmds[i].argc, &moved, &mwhy);
        if (ei == SG_EFF_ALLOW && !whole) {
            ei = SG_EFF_ASK; /* asked, never allowed on a reading */
            snprintf(b2, sizeof b2, "not read whole: %s: %s", a0, mwhy);
        }
        if (ei != SG_EFF_ALLOW && (ei == SG_EFF_DENY || e == SG_EFF_ALLOW)) {
            e = ei;
            snprintf(by, n, "%s", b2);
        }
    }
    free(one);
    sg_shell_free(&sh);
    return e;
}

enum sg_effect sg_perm_peek(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n)
{
    const struct sg_prule *hit;
    enum sg_effect e = evaluate(p, q, &hit);
    if (hit)
        rule_by(hit, by, n);
    else if (n)
        by[0] = '\0';
    return e;
}

int sg_perm_request(struct sg_perm *p, const struct sg_preq *q, sg_perm_cont cont, void *ctx,
                    enum sg_decision *dec)
{
    return sg_perm_request_watched(p, q, cont, ctx, NULL, dec);
}

int sg_perm_request_watched(struct sg_perm *p, const struct sg_preq *q, sg_perm_cont cont,
                            void *ctx, sg_perm_gone_fn gone, enum sg_decision *dec)
{
    const struct sg_prule *hit;
    enum sg_effect e = evaluate(p, q, &hit);
    char by[512];
    if (e == SG_EFF_DENY || e == SG_EFF_ALLOW) {
        rule_by(hit, by, sizeof by);
        *dec = e == SG_EFF_ALLOW ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
        sg_perm_audit(p, q, *dec, by, 0);
        return 1;
    }
    if (p->o.mode == SG_PERM_ALLOW_ALL) {
        *dec = SG_DEC_ALLOW_ONCE;
        sg_perm_audit(p, q, *dec, "--allow-all (no person was asked)", 0);
        return 1;
    }
    if (p->o.mode == SG_PERM_DENY_ALL || p->o.mode == SG_PERM_POLICY) {
        *dec = SG_DEC_DENY;
        sg_perm_audit(p, q, *dec,
                       p->o.mode == SG_PERM_POLICY ? "policy: no rule allows it" : "deny-all",
                       0);
        return 1;
    }
    if (!p->fe_show && !p->o.program && p->o.defer_without_frontend) {
        *dec = SG_DEC_DENY;
        sg_perm_defer(p, q, "no skillgate TUI attached: the agent's own prompt asks");
        return 1;
    }
    if ((!p->fe_show && !p->o.program) || p->nqueue >= MAX_PENDING) {
        *dec = SG_DEC_DENY;
        sg_perm_audit(p, q, *dec,
                       p->nqueue >= MAX_PENDING ? "too many waiting" : "no terminal to ask on", 0);
        return 1;
    }
    p->queue[p->nqueue++] = (struct pending){.q = *q, .cont = cont, .ctx = ctx,
                                             .gone = gone, .asked_ms = now_ms(), .id = ++p->next_id};
    if (p->o.bus) {
        cleanup_free char *r = sg_preq_rule(q);
        cleanup_free char *rs = sg_sanitize_str(r, 0);
        sg_bus_emit(p->o.bus, SG_EV_PERMISSION_ASKED,
                    json_pack("{s:s, s:s, s:i}", "tool", sg_ptool_name(q->tool), "request", rs,
                              "queued", (int)p->nqueue),
                    "%s: waiting for %s (%zu in the queue)", rs,
                    p->o.program ? "the permission program" : "a person", p->nqueue);
    }
    if (!p->shown)
        show(p);
    else
        show_frontend(p); /* the counter changed */
    return 0;
}

#define WHY_TEXT "no rule allows it; its manifest does not declare it"
#define WHY_AGENT "no rule or grant allows it; the agent does it outside any sandbox"

static void show_frontend(struct sg_perm *p)
{
    if (!p->fe_show)
        return;
    /* the program decides the head first: the person sees it only after
     * an "ask" */
    if (!p->nqueue || (p->o.program && !p->queue[0].passed)) {
        p->fe_show(p->fe_ctx, NULL);
        return;
    }
    /* the rules an answer keeps, one a line: exactly what is saved */
    char *texts[SG_SHELL_MAX_CMDS];
    size_t nt = rules_to_keep(NULL, &p->queue[0].q, texts, SG_ARRAY_LEN(texts));
    struct sg_buf b;
    sg_buf_init(&b, SIZE_MAX / 2);
    for (size_t i = 0; i < nt; i++) {
        if (i)
            sg_buf_append(&b, "\n", 1);
        sg_buf_append(&b, texts[i], strlen(texts[i]));
        free(texts[i]);
    }
    sg_buf_append(&b, "", 1);
    cleanup_free char *rule = sg_buf_steal(&b);
    /* a protected target: why, and that only this file may be allowed */
    const char *prot = sg_preq_protected(&p->queue[0].q);
    if (prot)
        snprintf(p->why_buf, sizeof p->why_buf,
                 "a protected target: %s. No folder answer, glob rule or --write covers it; "
                 "an answer here is for this file only", prot);
    struct sg_perm_prompt pr = {.perm = p, .q = &p->queue[0].q, .skill = p->skill,
                                .session = p->o.session,
                                .why = prot                          ? p->why_buf
                                       : p->queue[0].q.agent_tool[0] ? WHY_AGENT
                                                                     : WHY_TEXT,
                                .rule = rule, .queued = p->nqueue, .shown_ms = p->shown_ms,
                                .deadline_ms = p->deadline_ms, .id = p->queue[0].id};
    p->fe_show(p->fe_ctx, &pr);
}

void sg_perm_set_frontend(struct sg_perm *p, sg_perm_show_fn show_fn, void *ctx)
{
    p->fe_show = show_fn;
    p->fe_ctx = ctx;
}

void sg_perm_set_frontend_fds(struct sg_perm *p,
                              size_t (*pollfds)(void *ctx, struct pollfd *out, size_t max),
                              void (*dispatch)(void *ctx, const struct pollfd *pfds, size_t n))
{
    p->fe_pollfds = pollfds;
    p->fe_dispatch = dispatch;
}

const char *sg_perm_last_decided_by(const struct sg_perm *p)
{
    return p->last_by;
}

void sg_perm_answer(struct sg_perm *p, enum sg_decision d)
{
    if (p && p->nqueue && p->shown && p->queue[0].q.cut && sg_decision_allows(d))
        d = SG_DEC_DENY; /* what could not be shown whole is never approved */
    if (p && p->nqueue && p->shown)
        decide_head(p, d, "person");
}

int sg_perm_answer_rule(struct sg_perm *p, uint64_t id, enum sg_decision d, const char *rule,
                        const char **why)
{
    *why = NULL;
    if (!p || !p->nqueue || !p->shown || p->queue[0].id != id)
        return -ESTALE;
    if (p->queue[0].q.cut) {
        *why = "a request that could not be shown whole keeps no rule";
        return -EINVAL;
    }
    if (d != SG_DEC_ALLOW_ALWAYS && d != SG_DEC_DENY_ALWAYS && d != SG_DEC_ALLOW_RUN) {
        *why = "only a rule kept for the run or always can be narrowed";
        return -EINVAL;
    }
    struct sg_prule r;
    if (sg_prule_parse(rule, d == SG_DEC_DENY_ALWAYS ? SG_EFF_DENY : SG_EFF_ALLOW, "grant", &r,
                       why) < 0)
        return -EINVAL;
    bool covers = sg_prule_matches(&r, &p->queue[0].q);
    sg_prule_free(&r);
    if (!covers) {
        *why = "that rule does not cover this request";
        return -EINVAL;
    }
    free(p->answer_rule);
    p->answer_rule = sg_xstrdup(rule);
    decide_head(p, d, "person");
    return 0;
}

char *sg_preq_program_rule(const struct sg_preq *q)
{
    if (q->tool != SG_PT_BASH || q->agent_tool[0] || q->cut || q->unsure ||
        !q->system_program || q->subject[0] != '/' || sg_program_runs_any_code(q->subject))
        return NULL; /* an interpreter with any arguments is any code */
    struct sg_buf b;
    sg_buf_init(&b, SIZE_MAX / 2);
    sg_buf_append(&b, "Bash(", 5);
    sg_shell_quote(&b, q->subject, true);
    sg_buf_append(&b, ":*)", 3);
    return sg_buf_steal(&b);
}

int sg_perm_answer_program(struct sg_perm *p, uint64_t id, const char **why)
{
    *why = NULL;
    if (!p || !p->nqueue || !p->shown || p->queue[0].id != id)
        return -ESTALE;
    cleanup_free char *rule = sg_preq_program_rule(&p->queue[0].q);
    if (!rule) {
        *why = "only a program of the system's that is no shell or interpreter can be allowed "
               "with what it runs";
        return -EINVAL;
    }
    free(p->answer_rule);
    p->answer_rule = steal_pointer(&rule);
    p->answer_tree = true;
    decide_head(p, SG_DEC_ALLOW_RUN, "person");
    return 0;
}

const char *sg_perm_tree_rule(const struct sg_perm *p, const struct sg_preq *q)
{
    for (size_t i = 0; p && i < p->nrules; i++)
        if (p->rules[i].tree && p->rules[i].effect == SG_EFF_ALLOW &&
            sg_prule_matches(&p->rules[i], q))
            return p->rules[i].text;
    return NULL;
}

bool sg_preq_folder_offered(const struct sg_preq *q, const char *home, char *why, size_t n)
{
    why[0] = '\0';
    if (q->tool != SG_PT_WRITE || q->agent_tool[0] || q->subject[0] != '/')
        return false; /* no folder to offer: no why about a place */
    if (q->cut) {
        snprintf(why, n, "the path was not shown whole");
        return false;
    }
    const char *slash = strrchr(q->subject, '/');
    size_t dn = (size_t)(slash - q->subject), hn = home ? strlen(home) : 0;
    if (slash == q->subject) {
        snprintf(why, n, "its folder is /, every file");
        return false;
    }
    /* never the home or a folder above it, nor one of its dot folders (rc
     * files, keys, settings): those are answered one file at a time */
    if (hn && (!strncmp(home, q->subject, dn) && (home[dn] == '/' || home[dn] == '\0'))) {
        snprintf(why, n, "its folder is your home or holds it");
        return false;
    }
    if (hn && !strncmp(q->subject, home, hn) && q->subject[hn] == '/' &&
        q->subject[hn + 1] == '.') {
        snprintf(why, n, "it is in one of your home's dot folders (settings, keys, rc files)");
        return false;
    }
    /* a system folder, a persistence place: one file at a time */
    if (sg_preq_risk(q, home, why, n) < SG_RL_HIGH)
        return true;
    if (!why[0])
        snprintf(why, n, "a high-risk place");
    return false;
}

char *sg_preq_folder_rule(const struct sg_preq *q, const char *home)
{
    char why[256];
    if (!sg_preq_folder_offered(q, home, why, sizeof why))
        return NULL;
    /* a folder rule matches its prefix as written (rules.c path_matches):
     * the folder's name goes in unescaped, glob characters and all */
    const char *slash = strrchr(q->subject, '/');
    return sg_xasprintf("Write(%.*s/**)", (int)(slash - q->subject), q->subject);
}

int sg_perm_answer_id(struct sg_perm *p, uint64_t id, enum sg_decision d)
{
    if (!p || !p->nqueue || !p->shown || p->queue[0].id != id)
        return -ESTALE; /* that request is settled already: this answer is not another's */
    if (p->queue[0].q.cut && sg_decision_allows(d))
        return -EPERM; /* what could not be shown whole is never approved */
    decide_head(p, d, "person");
    return 0;
}

int sg_perm_answer_by(struct sg_perm *p, uint64_t id, enum sg_decision d, const char *by)
{
    if (!p || !p->nqueue || !p->shown || p->queue[0].id != id)
        return -ESTALE;
    if (p->queue[0].q.cut && sg_decision_allows(d))
        d = SG_DEC_DENY; /* what could not be read whole is never allowed */
    decide_head(p, d, by);
    return 0;
}

static void ask_program(struct sg_perm *p);

static void show(struct sg_perm *p)
{
    if (!p->nqueue || (!p->fe_show && !p->o.program) || p->ending)
        return; /* (the run's end denies what waits: nothing is shown, no program started) */
    p->shown = true;
    p->shown_ms = now_ms();
    p->deadline_ms = p->shown_ms + (int64_t)p->o.timeout_s * 1000;
    show_frontend(p);
    if (p->o.program && !p->queue[0].passed)
        ask_program(p);
}

/* "program NAME" as a decision's decided_by names it. */
static void program_by(const struct sg_perm *p, const char *what, char *by, size_t n)
{
    /* the whole command: "python3" alone would not say which program */
    struct sg_buf b;
    sg_buf_init(&b, 240);
    for (size_t i = 0; p->o.program[i]; i++)
        if (sg_buf_printf(&b, "%s%s", i ? " " : "", p->o.program[i]) < 0) {
            sg_buf_printf(&b, "...");
            break;
        }
    cleanup_free char *cmd = sg_buf_steal(&b);
    cleanup_free char *name = sg_sanitize_str(cmd ? cmd : "", 0);
    snprintf(by, n, "program %s: %s", name, what);
}

/* The head goes on to the person (the program said "ask", or could not be
 * asked it); with nobody there, a deny (or, for the agent's hook, the
 * agent's own prompt). */
static void pass_on(struct sg_perm *p, const char *why)
{
    char by[512];
    program_by(p, why, by, sizeof by);
    if (p->fe_show) {
        /* the same deadline: the program's time and the person's are one
         * prompt's (the hook must answer before the agent gives up on it) */
        p->queue[0].passed = true;
        show_frontend(p);
        return;
    }
    if (p->o.defer_without_frontend) {
        struct pending head = p->queue[0];
        memmove(p->queue, p->queue + 1, (p->nqueue - 1) * sizeof *p->queue);
        p->nqueue--;
        p->shown = false;
        char b2[600];
        snprintf(b2, sizeof b2, "%s; no skillgate TUI attached: the agent's own prompt asks", by);
        sg_perm_defer(p, &head.q, b2);
        head.cont(head.ctx, SG_DEC_DENY);
        if (p->nqueue)
            show(p);
        return;
    }
    char b2[600];
    snprintf(b2, sizeof b2, "%s; nobody to ask", by);
    decide_head(p, SG_DEC_DENY, b2);
}

/* The head's request to the program, started now. */
static void ask_program(struct sg_perm *p)
{
    struct pending *h = &p->queue[0];
    if (p->call && p->call_id == h->id)
        return;
    sg_pprog_free(steal_pointer(&p->call));
    json_t *req = sg_pprog_request_json(&h->q, p->run_id, p->skill, p->digest,
                                       h->q.agent_tool[0] ? WHY_AGENT : WHY_TEXT);
    if (!req) {
        pass_on(p, "not asked: the request cannot be shown to it exactly");
        return;
    }
    int err = 0;
    p->call = sg_pprog_start(p->o.program, req, &err);
    json_decref(req);
    if (!p->call) {
        char by[512], what[128];
        snprintf(what, sizeof what, "cannot be started (%s)", strerror(-err));
        program_by(p, what, by, sizeof by);
        decide_head(p, SG_DEC_DENY, by);
        return;
    }
    p->call_id = h->id;
}

/* The program's answer, once it is whole. */
static void program_answered(struct sg_perm *p)
{
    enum sg_decision d;
    char why[300], by[512];
    enum sg_pprog_answer a = sg_pprog_answer(p->call, &d, why, sizeof why);
    sg_pprog_free(steal_pointer(&p->call));
    if (a == SG_PPROG_ASK) {
        char w2[340];
        snprintf(w2, sizeof w2, "said ask (%s)", why);
        pass_on(p, w2);
        return;
    }
    if (sg_decision_allows(d) && p->queue[0].q.cut) { /* never approved: not shown whole */
        d = SG_DEC_DENY;
        snprintf(why, sizeof why, "a request that does not fit is never approved");
    }
    program_by(p, why, by, sizeof by);
    decide_head(p, d, by);
}

static void decide_head(struct sg_perm *p, enum sg_decision d, const char *by)
{
    struct pending head = p->queue[0];
    if (p->call && p->call_id == head.id) /* decided otherwise (a timeout, the run's end) */
        sg_pprog_free(steal_pointer(&p->call));
    memmove(p->queue, p->queue + 1, (p->nqueue - 1) * sizeof *p->queue);
    p->nqueue--;
    p->shown = false;
    remember(p, &head.q, d, by);
    sg_perm_audit(p, &head.q, d, by, now_ms() - head.asked_ms);
    head.cont(head.ctx, d);
    /* later requests a new rule now settles are settled without asking;
     * those whose callers stopped waiting are denied unshown (a skill that
     * gives up request after request never flashes a prompt per request) */
    for (size_t i = 0; i < p->nqueue;) {
        const struct sg_prule *hit;
        const struct pending *at = &p->queue[i];
        const char *why = !p->stop_set && !p->ending && at->gone ? at->gone(at->ctx) : NULL;
        enum sg_effect e = why ? SG_EFF_DENY : evaluate(p, &at->q, &hit);
        if (e == SG_EFF_ASK) {
            i++;
            continue;
        }
        struct pending x = p->queue[i];
        memmove(p->queue + i, p->queue + i + 1, (p->nqueue - i - 1) * sizeof *p->queue);
        p->nqueue--;
        enum sg_decision dx = e == SG_EFF_ALLOW ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
        char b2[512];
        if (why)
            snprintf(b2, sizeof b2, "the skill stopped waiting (%s)", why);
        else
            rule_by(hit, b2, sizeof b2);
        sg_perm_audit(p, &x.q, dx, b2, now_ms() - x.asked_ms);
        x.cont(x.ctx, dx);
    }
    if (p->nqueue) {
        show(p);
        return;
    }
    /* a continuation's request may have been shown, then settled in the
     * loop above: nothing is on screen, nor asked of a program */
    p->shown = false;
    sg_pprog_free(steal_pointer(&p->call));
    if (p->fe_show)
        show_frontend(p);
}

size_t sg_perm_pollfds(struct sg_perm *p, struct pollfd *out, size_t max)
{
    if (!p || !p->shown)
        return 0;
    size_t n = 0;
    if (p->call && max) /* the program's answer first */
        out[n++] = (struct pollfd){.fd = sg_pprog_fd(p->call), .events = POLLIN};
    if (p->fe_pollfds && n < max)
        n += p->fe_pollfds(p->fe_ctx, out + n, max - n);
    return n;
}

#define GONE_CHECK_MS 200

/* The shown requests whose callers stopped waiting (their process killed,
 * their connection closed) are denied: nothing would be done with an
 * answer, and the prompt would hold the skill's clock for nothing. */
static void drop_gone(struct sg_perm *p)
{
    const char *why;
    if (p->stop_set)
        return; /* the person stopped the run: its end decides what waits */
    while (p->shown && p->nqueue && p->queue[0].gone &&
           (why = p->queue[0].gone(p->queue[0].ctx))) {
        char by[160];
        snprintf(by, sizeof by, "the skill stopped waiting (%s)", why);
        decide_head(p, SG_DEC_DENY, by);
    }
}

void sg_perm_dispatch(struct sg_perm *p, const struct pollfd *pfds, size_t n)
{
    if (!p || !p->shown)
        return;
    if (p->call) {
        int fd = sg_pprog_fd(p->call);
        bool ready = false;
        for (size_t i = 0; i < n; i++)
            ready |= pfds[i].fd == fd && pfds[i].revents;
        if (ready && sg_pprog_read(p->call)) {
            program_answered(p);
            return;
        }
    }
    if (n && p->fe_dispatch && p->fe_pollfds)
        p->fe_dispatch(p->fe_ctx, pfds, n);
    drop_gone(p);
    if (p->shown && now_ms() >= p->deadline_ms) {
        char by[512];
        if (p->call)
            program_by(p, "no answer in time (killed)", by, sizeof by);
        decide_head(p, SG_DEC_DENY, p->call ? by : "timeout (nobody answered)");
    }
}

int sg_perm_timeout(const struct sg_perm *p)
{
    if (!p || !p->shown)
        return -1;
    int64_t left = p->deadline_ms - now_ms();
    if (p->nqueue && p->queue[0].gone && left > GONE_CHECK_MS)
        left = GONE_CHECK_MS; /* asked again then whether its caller still waits */
    return left < 0 ? 0 : (int)left;
}

static size_t source_fds(void *c, struct pollfd *out, size_t max)
{
    return sg_perm_pollfds(c, out, max);
}

static void source_dispatch(void *c, const struct pollfd *pfds, size_t n)
{
    sg_perm_dispatch(c, pfds, n);
}

static int source_timeout(void *c)
{
    return sg_perm_timeout(c);
}

struct sg_loop_source sg_perm_source(struct sg_perm *p)
{
    return (struct sg_loop_source){"permissions", source_fds, source_dispatch, source_timeout, p};
}

void sg_perm_cancel_all(struct sg_perm *p)
{
    if (!p)
        return;
    p->ending = true; /* its processes killed: "the run ended", not each one "gone" */
    while (p->nqueue)
        decide_head(p, SG_DEC_DENY,
                    p->stop_set && p->queue[0].id == p->stop_id ? "person" : "the run ended");
    p->ending = false;
}

void sg_perm_deny_at_end(struct sg_perm *p, uint64_t id)
{
    if (p)
        p->stop_id = id, p->stop_set = true;
}

int sg_perm_free(struct sg_perm *p)
{
    if (!p)
        return 0;
    /* whoever still waits is denied: the run is over */
    sg_perm_cancel_all(p);
    audit_flush_all(p);
    int err = sg_audit_flush(); /* every decision on disk before the run's record */
    for (size_t i = 0; i < p->nrules; i++)
        sg_prule_free(&p->rules[i]);
    free(p->rules);
    sg_pprog_free(p->call);
    free(p->skill), free(p->digest), free(p->run_id), free(p->grants_file), free(p->answer_rule);
    json_decref(p->kept);
    free(p->kinds);
    free(p);
    return err;
}

size_t sg_perm_waiting(const struct sg_perm *p)
{
    return p ? p->nqueue : 0;
}

int sg_perm_prompt_timeout(const struct sg_perm *p)
{
    return p ? p->o.timeout_s : 0;
}

size_t sg_perm_limit_programs(const struct sg_perm *p, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; p && i < p->nrules && n < max; i++) {
        const struct sg_prule *r = &p->rules[i];
        if ((r->effect != SG_EFF_DENY && r->effect != SG_EFF_ASK) || r->tool != SG_PT_BASH ||
            r->agent)
            continue;
        const char *w = r->nwords ? r->words[0] : NULL;
        if (w && *w && !strpbrk(w, "*?["))
            out[n++] = w;
    }
    return n;
}
