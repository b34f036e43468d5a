#include "vetskill.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "digest.h"
#include "instructions.h"
#include "perm.h"
#include "rating.h"
#include "record.h"
#include "runner.h"
#include "sanitize.h"
#include "skill.h"
#include "stopsig.h"
#include "util.h"
#include "vet.h"

#define VET_PROBLEMS_MAX 20 /* manifest problems kept in a record */
#define VET_ARGS_MAX 32     /* words taken from a usage line */

/* ---- the static pass ---- */

static json_t *static_problems(const struct sg_skill *sk)
{
    json_t *out = json_array();
    for (int sev = SG_ERROR; sev >= SG_WARNING; sev--) /* errors first */
        for (size_t i = 0; i < sk->diags.n && json_array_size(out) < VET_PROBLEMS_MAX; i++) {
            if (sk->diags.v[i].sev != (enum sg_severity)sev)
                continue;
            cleanup_free char *line = sg_diag_format(&sk->diags.v[i]);
            json_t *s = json_string(line);
            json_array_append_new(out, s ? s : json_string("(a problem whose text is not UTF-8)"));
        }
    return out;
}

static json_t *static_findings(const struct sg_skill *sk, json_int_t *dropped)
{
    struct sg_findings f = {0};
    int e = sg_skill_static_scan(sk, &f);
    json_t *out = json_array();
    for (size_t i = 0; i < f.n; i++) {
        const struct sg_finding *g = &f.v[i];
        static const char *const lv[] = {"note", "review", "malicious"};
        json_t *one = json_pack("{s:s, s:s, s:s, s:o, s:o}", "kind",
                                sg_finding_kind_name(g->kind), "level", lv[g->level], "what",
                                sg_finding_kind_desc(g->kind), "file", sg_vet_text(g->file),
                                "line", g->line > 0 ? json_integer(g->line) : json_null());
        if (g->excerpt)
            json_object_set_new(one, "excerpt", sg_vet_text(g->excerpt));
        if (g->decoded)
            json_object_set_new(one, "decoded", sg_vet_text(g->decoded));
        json_array_append_new(out, one);
    }
    *dropped = (json_int_t)f.dropped;
    if (e < 0)
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:n, s:n, s:s}", "kind",
                                             "unreadable", "level", "review", "what",
                                             "the skill's files could not all be read", "file",
                                             "line", "excerpt", strerror(-e)));
    sg_findings_free(&f);
    return out;
}

static json_t *static_pass(const struct sg_skill *sk)
{
    char why[256] = "";
    enum sg_risk risk = sg_skill_risk(sk, why, sizeof why);
    json_int_t dropped = 0;
    json_t *findings = static_findings(sk, &dropped);
    return json_pack("{s:I, s:I, s:I, s:o, s:s, s:s, s:o, s:I}", "errors",
                     (json_int_t)sg_diags_count(&sk->diags, SG_ERROR), "blocking",
                     (json_int_t)sg_diags_blocking(&sk->diags), "warnings",
                     (json_int_t)sg_diags_count(&sk->diags, SG_WARNING), "problems",
                     static_problems(sk), "risk", sg_risk_name(risk), "risk_why", why,
                     "findings", findings, "findings_dropped", dropped);
}

/* ---- what it ships that runs, and with what ---- */

/* The end of a word of a usage line that starts at s (quotes taken off
 * into w); NULL at a shell operator or the line's end. */
static const char *usage_word(const char *s, struct sg_buf *w)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || strchr("|;&>#`", *s) || (*s == '<' && !strchr(s, '>')) || !strncmp(s, "2>", 2))
        return NULL;
    while (*s && *s != ' ' && *s != '\t') {
        if (*s == '\'' || *s == '"') {
            const char *end = strchr(s + 1, *s);
            if (!end)
                return NULL;
            sg_buf_append(w, s + 1, (size_t)(end - s - 1));
            s = end + 1;
            continue;
        }
        if (strchr("|;&`", *s))
            break;
        sg_buf_append(w, s, 1);
        s++;
    }
    return s;
}

json_t *sg_vet_usage_args(const char *usage, const char *script)
{
    const char *base = strrchr(script, '/') ? strrchr(script, '/') + 1 : script;
    const char *at = usage ? strstr(usage, base) : NULL;
    if (!at)
        return NULL;
    at += strlen(base);
    while (*at && *at != ' ' && *at != '\t' && *at != '`')
        at++;
    json_t *args = json_array();
    for (const char *s = at; s && json_array_size(args) < VET_ARGS_MAX;) {
        struct sg_buf w;
        sg_buf_init(&w, 4096);
        s = usage_word(s, &w);
        cleanup_free char *word = sg_buf_steal(&w);
        json_t *j = s && word && *word ? json_string(word) : NULL;
        if (j)
            json_array_append_new(args, j);
    }
    return args;
}

/* An entrypoint found by convention that is one of the scripts (a skill
 * of one script): run once, as the script. */
static bool entry_is_a_script(const struct sg_policy *p)
{
    for (size_t i = 0; p->entry.detected && i < p->nscripts; i++)
        for (size_t k = 0; k < p->entry.nargs; k++)
            if (!strcmp(p->entry.args[k], p->scripts[i]))
                return true;
    return false;
}

/* {runnable, script, args, args_from} of each thing sk ships that runs. */
static json_t *runnables(const struct sg_skill *sk)
{
    const struct sg_policy *p = &sk->policy;
    json_t *out = json_array();
    if ((p->entry.command && !entry_is_a_script(p)) || p->mode == SG_MODE_WASM)
        json_array_append_new(out, json_pack("{s:s, s:n, s:[], s:s}", "runnable", "(entrypoint)",
                                             "script", "args", "args_from", "none"));
    for (size_t i = 0; i < p->nscripts; i++) {
        json_t *args = sg_vet_usage_args(p->script_usage[i], p->scripts[i]);
        json_t *from = NULL;
        if (args)
            from = json_string("its usage line in the skill's text");
        else {
            json_decref(args);
            args = json_pack("[s]", "--help");
            from = json_string("--help");
        }
        json_array_append_new(out, json_pack("{s:s, s:s, s:o, s:o, s:s?}", "runnable",
                                             p->scripts[i], "script", p->scripts[i], "args",
                                             args, "args_from", from, "usage",
                                             p->script_usage[i]));
    }
    return out;
}

/* ---- one run ---- */

static void on_stop_signal(void *ctx, int signo)
{
    sg_runner_interrupt(ctx, signo);
}

/* Does sk declare host (a refused Fetch's subject)? */
static bool declares_host(const struct sg_skill *sk, const char *host)
{
    for (size_t i = 0; host && i < sk->policy.negress; i++) {
        const char *d = sk->policy.egress[i].domain;
        if (!strcasecmp(d, host) ||
            (sk->policy.egress[i].wildcard && sg_str_has_suffix(host, d + 1)))
            return true;
    }
    return false;
}

static void mark_declared(const struct sg_skill *sk, json_t *entry)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(entry, "refused"), i, v) {
        const char *tool = json_string_value(json_object_get(v, "tool"));
        if (tool && !strcmp(tool, "Fetch"))
            json_object_set_new(v, "declared", json_boolean(declares_host(
                                                   sk, json_string_value(json_object_get(v, "subject")))));
    }
}

/* Who decides a vetting run's requests: a program it runs is allowed
 * (inside the sandbox: no network, decoys, writes held back; what it
 * reaches for is then refused and recorded), every other request is
 * refused. Answered from the loop, never from inside the engine's show. */
#define VET_DECIDED_BY "skillgate vet: programs run in the sandbox; hosts, writes and sockets refused"
struct vet_fe {
    struct sg_perm *perm;
    uint64_t id;
    enum sg_decision d;
    bool pending;
};

static void vet_show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct vet_fe *fe = ctx;
    fe->pending = pr != NULL;
    if (!pr)
        return;
    fe->perm = pr->perm;
    fe->id = pr->id;
    fe->d = pr->q->tool == SG_PT_BASH ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
}

static int vet_fe_timeout(void *ctx)
{
    return ((struct vet_fe *)ctx)->pending ? 0 : -1;
}

static void vet_fe_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    (void)p, (void)n;
    struct vet_fe *fe = ctx;
    if (!fe->pending)
        return;
    fe->pending = false;
    sg_perm_answer_by(fe->perm, fe->id, fe->d, VET_DECIDED_BY);
}

struct run_spec {
    const char *out, *key, *work;
    size_t n;
    long long timeout_s;
};

/* A vetting run's environment: none of the vetting's own (a CI runner's
 * tokens are in it), whatever the skill declares. */
static char *vet_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL};

/* What a manifest grants beyond record's hold (record.h) that would reach
 * the host from a vetting run: folders of the vetting machine shown (what
 * a skill reads there it can print, and its output is in the trace a
 * report hands on), variables of the vetting's environment, host sockets
 * (a declared docker.sock), ports published on the host, writes in the
 * working folder. Held back for the run, given back after. */
struct vet_hold {
    struct sg_record_hold rec;
    size_t nread, nenv, nsockets, nlisten, ncwd_write;
    enum sg_seccomp_profile profile;
    struct sg_limits limits;
};

static void vet_hold(struct sg_skill *sk, struct vet_hold *h)
{
    struct sg_policy *p = &sk->policy;
    sg_record_policy(sk, &h->rec);
    h->nread = p->nread, h->nenv = p->nenv, h->nsockets = p->nsockets, h->nlisten = p->nlisten;
    h->ncwd_write = p->ncwd_write;
    p->nread = p->nenv = p->nsockets = p->nlisten = p->ncwd_write = 0;
    /* nor does it choose how it is watched: a declared permissive profile
     * lets ptrace and the other calls that make a run malicious pass
     * unseen, and its limits (64 GiB, 32768 processes, 1 GiB of output a
     * stream) are the vetting machine's, shared by every --jobs worker:
     * the default profile at least, each limit at most its default */
    h->profile = p->profile, h->limits = p->limits;
    if (p->profile == SG_SECCOMP_PERMISSIVE)
        p->profile = SG_SECCOMP_DEFAULT;
#define X(f, key, def, min, max, unit) \
    if (p->limits.f.value > (def))     \
        p->limits.f.value = (def);
    SG_LIMITS(X)
#undef X
}

static void vet_release(struct sg_skill *sk, struct vet_hold *h)
{
    struct sg_policy *p = &sk->policy;
    p->profile = h->profile, p->limits = h->limits;
    p->nread = h->nread, p->nenv = h->nenv, p->nsockets = h->nsockets, p->nlisten = h->nlisten;
    p->ncwd_write = h->ncwd_write;
    sg_record_policy_restore(sk, &h->rec);
}

/* The request of a vetting run: nobody to ask, a fresh home kept nowhere,
 * the vetting's own working folder. */
static void vet_request(struct sg_run_request *rq, json_t *r, const struct run_spec *s,
                        char **argv)
{
    json_t *args = json_object_get(r, "args");
    size_t n = json_array_size(args);
    for (size_t i = 0; i < n; i++)
        argv[i] = (char *)json_string_value(json_array_get(args, i));
    *rq = (struct sg_run_request){
        .front = SG_FRONT_CLI, .pmode = SG_PERM_PROMPT, .pmode_set = true,
        .timeout_s = s->timeout_s, .host_env = vet_env, .work_dir = s->work,
        .script = json_string_value(json_object_get(r, "script")), .args = argv, .nargs = n,
        .fresh_home = true, .no_kept_home = true, .no_named = true};
}

/* Run r (a runnables() entry) under the recording policy; its runs[]
 * entry, or NULL with *why when it did not start. */
static json_t *run_one(struct sg_skill *sk, json_t *r, const struct run_spec *s, char **why)
{
    char *argv[VET_ARGS_MAX + 1] = {0};
    struct sg_run_request rq;
    vet_request(&rq, r, s, argv);
    cleanup_free char *trace_rel = sg_xasprintf("traces/%s-%zu.json", s->key, s->n);
    cleanup_free char *trace_out = sg_xasprintf("%s/%s", s->out, trace_rel);
    struct vet_hold hold;
    vet_hold(sk, &hold);
    struct sg_runner *run = NULL;
    const char *rwhy = NULL;
    json_t *entry = NULL;
    if (sg_runner_new(sk, &rq, &run, &rwhy) != 0) {
        *why = sg_xstrdup(rwhy ? rwhy : "refused to start");
        vet_release(sk, &hold);
        return NULL;
    }
    struct sg_event_bus bus = {0};
    struct vet_fe fe = {0};
    const struct sg_loop_source srcs[] = {
        sg_stopsig_source(on_stop_signal, run),
        {"vet's answers", NULL, vet_fe_dispatch, vet_fe_timeout, &fe},
    };
    struct sg_runner_opts rop = {.sources = srcs, .nsources = SG_ARRAY_LEN(srcs),
                                 .trace_out = trace_out, .show = vet_show, .show_ctx = &fe};
    struct sg_runner_out rout;
    struct sg_diags pd = {0};
    if (sg_runner_run(run, &bus, &rop, &rout, &pd) == 0) {
        entry = sg_vet_run_entry(rout.doc, json_string_value(json_object_get(r, "runnable")),
                                 json_object_get(r, "args"),
                                 json_string_value(json_object_get(r, "args_from")),
                                 rout.trace_err2 ? NULL : trace_rel);
        sg_runner_out_free(&rout);
    } else {
        *why = pd.n ? sg_diag_format(&pd.v[0]) : sg_xstrdup("the run did not start");
    }
    sg_print_diags(stderr, &pd);
    sg_diags_free(&pd);
    sg_runner_free(run);
    vet_release(sk, &hold);
    if (entry) /* by what it declares, given back: held, its egress list is empty */
        mark_declared(sk, entry);
    return entry;
}

/* ---- the record ---- */

static void add_not_run(json_t *not_run, const char *runnable, const char *why)
{
    json_array_append_new(not_run, json_pack("{s:s, s:s}", "runnable", runnable, "why", why));
}

static void dynamic_pass(struct sg_skill *sk, json_t *rec, const char *key,
                         const struct sg_vet_opts *o)
{
    json_t *list = runnables(sk), *runs = json_array(), *not_run = json_array(), *r;
    cleanup_free char *work = sg_xasprintf("%s/work/%s", o->out, key);
    bool blocked = sg_diags_blocking(&sk->diags) > 0;
    size_t i;
    if (!blocked && !o->static_only)
        (void)sg_mkdir_p(work, 0755, (uid_t)-1, (gid_t)-1);
    json_array_foreach(list, i, r) {
        const char *name = json_string_value(json_object_get(r, "runnable"));
        if (blocked)
            add_not_run(not_run, name, "its manifest has errors that stop a run");
        else if (o->static_only)
            add_not_run(not_run, name, "--static: nothing was run");
        else if (json_array_size(runs) >= o->max_runs)
            add_not_run(not_run, name, "past --max-runs");
        if (blocked || o->static_only || json_array_size(runs) >= o->max_runs)
            continue;
        struct run_spec s = {.out = o->out, .key = key, .work = work, .n = i,
                             .timeout_s = o->timeout_s};
        cleanup_free char *why = NULL;
        json_t *e = run_one(sk, r, &s, &why);
        if (e)
            json_array_append_new(runs, e);
        else
            add_not_run(not_run, name, why ? why : "did not start");
        if (sg_stopsig_first())
            break;
    }
    (void)rmdir(work);
    json_decref(list);
    json_object_set_new(rec, "runs", runs);
    json_object_set_new(rec, "not_run", not_run);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *new_record(const struct sg_skill *sk, const char *rel)
{
    char digest[SG_DIGEST_STRLEN];
    int e = sg_skill_digest(sk->root, digest, NULL);
    cleanup_free char *dg = e < 0 ? sg_xasprintf("unreadable: %s", strerror(-e))
                                  : sg_xstrdup(digest);
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:s}", "schema", "skillgate.vet/1", "path",
                     sg_vet_text(rel), "name", sg_vet_text(sk->name ? sk->name : sk->dirname),
                     "version", sg_vet_text(sk->version), "description",
                     sg_vet_text(sk->description), "digest", dg);
}

int sg_vet_skill(struct sg_skill *sk, const char *rel, const struct sg_vet_opts *o, char **why)
{
    long long t0 = now_ms();
    char key[17];
    sg_vet_key(rel, key);
    json_t *rec = new_record(sk, rel);
    json_object_set_new(rec, "static", static_pass(sk));
    dynamic_pass(sk, rec, key, o);
    sg_vet_decide(rec);
    if (o->old)
        sg_vet_compare(rec, sg_vet_find(o->old, json_string_value(json_object_get(rec, "path"))));
    json_object_set_new(rec, "duration_ms", json_integer(now_ms() - t0));
    int verdict = sg_vet_verdict_parse(json_string_value(json_object_get(rec, "verdict")));
    cleanup_free char *path = sg_xasprintf("%s/skills/%s.json", o->out, key);
    cleanup_free char *text = json_dumps(rec, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    json_decref(rec);
    int e = text ? sg_write_file_atomic(path, text, 0644) : -ENOMEM;
    if (e < 0) {
        *why = sg_xasprintf("%s: %s", path, strerror(-e));
        return e;
    }
    return verdict;
}
