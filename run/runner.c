#include "runner.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "digest.h"
#include "journal.h"
#include "lineprompt.h"
#include "otelrun.h"
#include "loop.h"
#include "parse.h"
#include "plantext.h"
#include "refusals.h"
#include "runopts.h"
#include "sandbox.h"
#include "seen.h"
#include "sanitize.h"
#include "keephome.h"
#include "trace.h"
#include "util.h"

struct sg_runner {
    const struct sg_skill *sk;
    struct sg_plan plan;
    struct sg_tools tools; /* what allowed-tools lets it ask for (the broker's, not the plan's) */
    struct sg_run_info info;
    enum sg_perm_mode pmode;
    const char *policy_file, *input;
    int prompt_timeout;
    bool person; /* a person runs it (CLI, TUI): their look at the manifests is
                    remembered (seen.h); an agent's is not */
    bool no_records; /* run even when the records cannot be kept */
    bool fresh_home; /* --fresh-home: what the skill's home kept is dropped (keephome.h) */
    json_t *options; /* the run options (--env, --write, --module) as the trace keeps them */
    bool agent;       /* an agent asked for the run (MCP) */
    size_t sk_nwrite; /* the manifest's own write paths (the rest are --write's) */
    bool ask_options; /* an agent's: a person approves its env and write before the run */
    char **program;  /* the permission program (OpenSkills' custom callback), or NULL */
    char **notes;    /* sg_run_info.notes */
    size_t nnotes;
    bool ran;
    /* a started run */
    struct run_state *run;
};

/* What a run holds from sg_runner_start to sg_runner_finish. */
struct run_state {
    char digest[SG_DIGEST_STRLEN];
    struct sg_trace trace;
    struct sg_audit_capture cap;
    struct sg_perm *perm;
    struct sg_lineprompt *lp;
    json_t *seen;
    struct sg_session *session; /* NULL when the sandbox could not be built */
    struct sg_run_result res;
    const char *trace_out;
    struct sg_event_bus *bus;
    json_t *trace_head, *audit_head; /* what the journal's head holds too */
    struct sg_journal *journal;      /* NULL only with no_records */
    struct sg_otel_run *otel;        /* the run's spans; NULL when export is off */
    bool halted; /* stopped, cancelled or interrupted before the sandbox was there */
};

static void run_state_free(struct run_state *st)
{
    if (st->journal)
        sg_bus_unsubscribe(st->bus, st->journal);
    json_decref(st->trace_head);
    json_decref(st->audit_head);
    sg_bus_unsubscribe(st->bus, &st->trace);
    sg_bus_unsubscribe(st->bus, &st->cap);
    if (st->otel) {
        sg_bus_unsubscribe(st->bus, st->otel);
        sg_otel_run_discard(st->otel);
    }
    sg_audit_capture_free(&st->cap);
    sg_trace_free(&st->trace);
    free(st);
}

/* What the run was given, for its audit record (what it used is read from
 * its trace when the record is made). */
static json_t *permissions_granted(const struct sg_plan *plan)
{
    json_t *used = json_array();
    for (size_t i = 0; i < plan->negress; i++)
        json_array_append_new(used, json_sprintf("network:%s", plan->egress[i].domain));
    for (size_t i = 0; i < plan->nrw; i++)
        json_array_append_new(used, json_sprintf("write:%s", plan->rw_paths[i]));
    for (size_t i = 0; i < plan->npassed; i++)
        json_array_append_new(used, json_sprintf("env:%s", plan->passed[i]));
    return used;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No record, no run: the journal made and synced before the launch, and
 * room for the trace and the audit record. With no_records a run goes on
 * without them, and says so. */
static int keep_records(struct sg_runner *r, struct run_state *st, struct sg_diags *d)
{
    const struct sg_plan *plan = &r->plan;
    st->trace_head = sg_trace_head(r->sk, plan, st->digest);
    if (r->pmode == SG_PERM_ALLOW_ALL) /* said in the record too, not only on stderr */
        json_object_set_new(st->trace_head, "allow_all", json_true());
    st->audit_head = sg_audit_run_head(plan->run_id, plan->skill_name, r->input,
                                       permissions_granted(plan));
    const char *why = NULL;
    int e = sg_records_check(&why);
    if (!e) {
        json_t *head = json_pack("{s:O, s:O, s:I}", "trace", st->trace_head, "audit",
                                 st->audit_head, "started_ms", (json_int_t)wall_ms());
        e = sg_journal_open(plan->run_id, head, &st->journal);
        if (e)
            why = strerror(-e);
    }
    if (!e) {
        sg_bus_subscribe(st->bus, sg_journal_sink, st->journal);
        return 0;
    }
    cleanup_free char *state = sg_state_dir();
    sg_diag_add(d, r->no_records ? SG_WARNING : SG_ERROR, state, 0, 0, NULL,
                "%s: this run's records cannot be kept (%s)%s",
                r->no_records ? "running anyway (--no-records)" : "not run", why,
                r->no_records ? "" : "; --no-records runs it without them");
    json_object_set_new(st->trace_head, "records",
                        json_sprintf("not kept before the run (--no-records): %s", why));
    return r->no_records ? 0 : e;
}

/* Have the manifests changed since a person last looked? Said on the bus
 * (and so in the trace's events) and as the trace's "manifests" field. */
static json_t *manifests_seen(const struct sg_skill *sk, struct sg_event_bus *bus)
{
    struct sg_seen s;
    sg_seen_compare(sk, &s);
    json_t *files = json_array();
    char list[128] = "";
    for (size_t i = 0; i < SG_SEEN_NFILES; i++)
        if (s.changed[i]) {
            json_array_append_new(files, json_string(sg_seen_files[i]));
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", sg_seen_files[i]);
        }
    const char *state = s.state == SG_SEEN_NEW ? "new" : s.state == SG_SEEN_SAME ? "same" : "changed";
    json_t *doc = json_pack("{s:s, s:s?, s:o}", "state", state, "last_seen",
                            s.when[0] ? s.when : NULL, "changed", files);
    if (s.state == SG_SEEN_CHANGED)
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED, json_deep_copy(doc),
                    "the manifests changed since they were last seen (%s): %s; skillgate tui "
                    "shows the diff", s.when, list);
    return doc;
}

/* --resolve NAME:PORT:ADDR[:PORT2], numeric ADDR ([v6] in brackets). */
static int parse_resolve(const char *arg, struct sg_resolve *r)
{
    char buf[512];
    long long v;
    if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
        return -EINVAL;
    char *p1 = strchr(buf, ':');
    if (!p1)
        return -EINVAL;
    *p1++ = '\0';
    char *p2 = strchr(p1, ':');
    if (!p2)
        return -EINVAL;
    *p2++ = '\0';
    if (sg_parse_ll(p1, 1, 65535, &v) < 0)
        return -EINVAL;
    r->port = (uint16_t)v;
    r->to_port = 0;
    char *addr = p2, *rest;
    if (*addr == '[') {
        addr++;
        char *close = strchr(addr, ']');
        if (!close)
            return -EINVAL;
        *close = '\0';
        rest = close + 1;
    } else {
        rest = strchr(addr, ':'); /* a v4 address has none: this one starts PORT2 */
        if (!rest)
            rest = addr + strlen(addr);
    }
    if (*rest == ':') {
        *rest = '\0';
        if (sg_parse_ll(rest + 1, 1, 65535, &v) < 0)
            return -EINVAL;
        r->to_port = (uint16_t)v;
    } else if (*rest) {
        return -EINVAL;
    }
    unsigned char bin[16];
    if (inet_pton(AF_INET, addr, bin) != 1 && inet_pton(AF_INET6, addr, bin) != 1)
        return -EINVAL;
    cleanup_free char *norm = NULL;
    const char *why = NULL;
    if (sg_domain_normalize(buf, &norm, &why) < 0)
        return -EINVAL;
    r->name = steal_pointer(&norm);
    r->addr = sg_xstrdup(addr);
    return 0;
}

int sg_runner_check_publish(const char *arg)
{
    struct sg_publish p;
    return sg_runopts_publish_one(arg, &p);
}

int sg_runner_check_resolve(const char *arg)
{
    struct sg_resolve r;
    int e = parse_resolve(arg, &r);
    if (e == 0)
        free(r.name), free(r.addr);
    return e;
}

/* What the trace keeps of the options, the dry run's word for a --write
 * folder, and what the person hears first. */
static void options_record(struct sg_runner *r, const struct sg_run_request *rq,
                           const struct sg_opt_view *v)
{
    bool entry_args = rq->nargs && !rq->script && !rq->module;
    if (!rq->nenv && !rq->nwrite && !rq->module && !entry_args && !r->plan.npublish)
        return;
    json_t *env = json_array(), *write = json_array();
    for (size_t i = 0; i < rq->nenv; i++) {
        json_array_append_new(env, json_string(rq->env[i]));
        bool secret = sg_runopts_secret_name(rq->env[i]), code = sg_runopts_code_name(rq->env[i]);
        if (secret || code) {
            r->notes = sg_xrealloc(r->notes, (r->nnotes + 2) * sizeof *r->notes);
            r->notes[r->nnotes++] = sg_xasprintf(
                "--env %s: %s; passed as you asked", rq->env[i],
                code ? "it changes what code the skill's programs load and run"
                     : "its name says it holds a secret: the skill can read it, and send it "
                       "wherever its network allows");
            r->notes[r->nnotes] = NULL;
        }
    }
    for (size_t i = 0; i < v->nreals; i++)
        json_array_append_new(write, json_string(v->reals[i]));
    /* the dry run's word for a folder only --write made writable (one the
     * manifest declares too keeps its own) */
    for (size_t i = r->sk_nwrite; i < v->sk.policy.nwrite; i++)
        for (size_t k = 0; k < r->plan.nmounts; k++) {
            struct sg_mount *m = &r->plan.mounts[k];
            if (m->kind == SG_MNT_BIND_RW && !strcmp(m->dst, v->sk.policy.write[i].path)) {
                free(m->why);
                m->why = sg_xstrdup("--write");
            }
        }
    r->options = json_pack("{s:o, s:o, s:s?}", "env", env, "write", write, "module", rq->module);
    if (r->plan.npublish) { /* as the person gave them: "8080:3117", or "3117" */
        json_t *pub = json_array();
        for (size_t i = 0; i < r->plan.npublish; i++) {
            const struct sg_publish *q = &r->plan.publish[i];
            char one[16];
            if (q->host)
                snprintf(one, sizeof one, "%u:%u", q->host, q->port);
            else
                snprintf(one, sizeof one, "%u", q->port);
            json_array_append_new(pub, json_string(one));
        }
        json_object_set_new(r->options, "publish", pub);
    }
    if (entry_args) { /* MCP run_skill's args for the entrypoint (SkillSandbox's) */
        json_t *a = json_array();
        for (size_t i = 0; i < rq->nargs; i++)
            json_array_append_new(a, json_string(rq->args[i]));
        json_object_set_new(r->options, "entrypoint_args", a);
    }
}

/* Who decides what the manifest did not grant, by front end. */
static enum sg_perm_mode perm_mode(const struct sg_run_request *rq)
{
    if (rq->front == SG_FRONT_AGENT)
        return SG_PERM_PROMPT; /* an attached TUI, else a terminal, else nobody: deny */
    if (rq->allow_all)
        return SG_PERM_ALLOW_ALL;
    enum sg_perm_mode m = rq->pmode;
    if (!rq->pmode_set && rq->front == SG_FRONT_TUI)
        m = SG_PERM_PROMPT;
    else if (!rq->pmode_set) { /* ask a person when there is a terminal to ask on */
        int t = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        m = t >= 0 ? SG_PERM_PROMPT : SG_PERM_DENY_ALL;
        if (t >= 0)
            close(t);
    }
    if (rq->policy_file && !(rq->pmode_set && rq->pmode == SG_PERM_PROMPT))
        m = SG_PERM_POLICY;
    return m;
}

int sg_runner_otel_start(char *why, size_t whylen)
{
    struct sg_config cfg;
    struct sg_diags cd = {0};
    cleanup_free char *cfgpath = sg_config_default_path();
    if (sg_config_load(cfgpath, &cfg, &cd) < 0)
        sg_config_free(&cfg);
    int r = sg_otel_start(&cfg, why, whylen);
    sg_config_free(&cfg);
    sg_diags_free(&cd);
    return r;
}

/* A numeric loopback address (127/8, ::1, ::ffff:127/104). */
static bool loopback_addr(const char *a)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, a, b) == 1)
        return b[0] == 127;
    static const unsigned char one[16] = {[15] = 1};
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    return inet_pton(AF_INET6, a, b) == 1 &&
           (!memcmp(b, one, 16) || (!memcmp(b, mapped, 12) && b[12] == 127));
}

int sg_runner_new(const struct sg_skill *sk, const struct sg_run_request *rq,
                  struct sg_runner **out, const char **why)
{
    extern char **environ;
    *out = NULL;
    *why = NULL;
    if (sg_skill_has_errors(sk)) {
        *why = "refusing to run a skill with errors";
        return SG_RUN_REFUSED;
    }
    bool agent = rq->front == SG_FRONT_AGENT;
    struct sg_run_opts ro = {.input = rq->input, .timeout_s = rq->timeout_s,
                             .memory_mb = agent ? 0 : rq->memory_mb,
                             .host_env = rq->host_env ? rq->host_env : environ,
                             .script = rq->script, .args = rq->args, .nargs = rq->nargs,
                             .work_dir = rq->work_dir, .python = rq->python,
                             .observe_reads = rq->observe_reads, .wrap = rq->wrap,
                             .copy_output = rq->copy_output, .no_named = rq->no_named,
                             .masks = rq->masks,
                             .nmasks = rq->nmasks,
                             .stdin_empty = !rq->input && (rq->script || rq->module)};
    if (agent && ro.timeout_s > sk->policy.limits.runtime_s.value)
        ro.timeout_s = 0; /* an agent may shorten the manifest's limit, never lengthen it */
    struct sg_publish pubs[SG_MAX_PORTS];
    size_t npub = 0;
    if (!agent && sg_runopts_publish(rq, pubs, SG_ARRAY_LEN(pubs), &npub, why) < 0)
        return SG_RUN_REFUSED;
    ro.publish = pubs;
    ro.npublish = npub;
    struct sg_resolve res_v[64];
    size_t nres = 0;
    if (!agent) {
        ro.allow_degraded = rq->allow_degraded;
        for (size_t i = 0; i < rq->nresolve && nres < SG_ARRAY_LEN(res_v); i++)
            if (parse_resolve(rq->resolve[i], &res_v[nres]) == 0)
                nres++;
        ro.allow_upstream = (char *const *)rq->allow_upstream;
        ro.nallow_upstream = rq->nallow_upstream;
    }
    /* resolve: in your config, for every run (an agent's too: it is yours,
     * not the agent's); a --resolve for the same name and port wins */
    struct sg_config cfg;
    struct sg_diags cd = {0};
    cleanup_free char *cfgpath = sg_config_default_path();
    if (sg_config_load(cfgpath, &cfg, &cd) < 0)
        sg_config_free(&cfg); /* what it had read, and the path: none of it is used */
    for (size_t i = 0; i < cfg.nresolve && nres < SG_ARRAY_LEN(res_v); i++) {
        if (parse_resolve(cfg.resolve[i], &res_v[nres]) < 0)
            continue;
        bool given = false;
        for (size_t k = 0; k < nres; k++)
            given |= res_v[k].port == res_v[nres].port && !strcmp(res_v[k].name, res_v[nres].name);
        if (given)
            free(res_v[nres].name), free(res_v[nres].addr);
        else
            nres++;
    }
    /* otel: in your config too; started once a process (the environment
     * wins); a wrong setting turns export off, said by the front end
     * (sg_otel_off_why): telemetry never stops a run */
    char otel_why[256];
    sg_otel_start(&cfg, otel_why, sizeof otel_why);
    /* the permission program: --prompt exec:, else config.yaml's unless
     * --prompt picked another callback (deny, tty) */
    char **program = rq->prompt_program ? sg_strv_dup(rq->prompt_program)
                     : !rq->pmode_set && !rq->allow_all ? sg_strv_dup(cfg.prompt_exec)
                                                        : NULL;
    /* the ports skillgate's own settings point at, which no published port
     * takes on this machine: the exporter's, and the permission programs'
     * (config.yaml's too, when --prompt chose another) */
    struct sg_own_ports *own = sg_xcalloc(1, sizeof *own);
    sg_otel_own_ports(&cfg, own);
    sg_runopts_prompt_ports(rq->prompt_program, own);
    sg_runopts_prompt_ports(cfg.prompt_exec, own);
    sg_runopts_prompt_ports(cfg.hook_prompt_exec, own);
    for (size_t i = 0; i < nres; i++) /* a name you send to a service of this machine */
        if (loopback_addr(res_v[i].addr))
            sg_own_ports_add(own, SG_OWN_RESOLVE, res_v[i].to_port ? res_v[i].to_port
                                                                   : res_v[i].port);
    sg_config_free(&cfg);
    sg_diags_free(&cd);
    ro.resolve = res_v;
    ro.nresolve = nres;
    struct sg_runner *r = sg_xcalloc(1, sizeof *r);
    struct sg_opt_view view;
    char here[PATH_MAX];
    /* a module runs in the working folder, as a script does */
    if ((rq->module || rq->script) && !ro.work_dir)
        ro.work_dir = getcwd(here, sizeof here) ? here : ".";
    /* the skill's own home, kept between its runs (keephome.h); a wrapped
     * command sees the person's */
    cleanup_free char *keep = rq->wrap || rq->no_kept_home ? NULL
                              : sg_keephome_dir(sk->name ? sk->name : sk->dirname, sk->root);
    ro.keep_home = keep;
    r->fresh_home = rq->fresh_home;
    int e = sg_opt_view_make(&view, sk, ro.work_dir, rq, ro.host_env, why);
    if (e == 0)
        e = sg_plan_build(&view.sk, &ro, &r->plan, why);
    for (size_t i = 0; i < nres; i++)
        free(res_v[i].name), free(res_v[i].addr);
    r->sk_nwrite = sk->policy.nwrite;
    if (e == 0)
        options_record(r, rq, &view);
    sg_opt_view_free(&view, sk->policy.nwrite, sk->policy.nenv);
    if (e < 0) {
        bool no_landlock = e == -ENOTSUP && r->plan.landlock_abi == 0 && !ro.allow_degraded;
        sg_strv_free(program);
        free(own);
        free(r);
        return no_landlock ? SG_RUN_SETUP_FAILED : SG_RUN_REFUSED;
    }
    r->plan.own_ports = own; /* the plan's now */
    r->sk = sk;
    sg_tools_from_policy(&sk->policy, &r->tools);
    r->pmode = perm_mode(rq);
    /* a program decides where there is no terminal too; not under rules
     * only (--policy), --allow-all or --prompt deny */
    if (program && r->pmode == SG_PERM_DENY_ALL && !rq->pmode_set)
        r->pmode = SG_PERM_PROMPT;
    if (program && r->pmode == SG_PERM_PROMPT)
        r->program = steal_pointer(&program);
    sg_strv_free(program);
    r->policy_file = agent ? NULL : rq->policy_file;
    r->input = r->plan.input; /* the plan's copy: the caller's may be gone by the end */
    r->prompt_timeout = rq->prompt_timeout > 0 ? rq->prompt_timeout : 30;
    /* a look of the person's: the TUI, or the command line on a terminal
     * (not an agent's shell: Claude Code's Bash has no terminal and sets
     * CLAUDECODE); only such a run marks the skill seen (vetted) */
    r->person = !agent && !rq->not_a_look && !rq->wrap &&
                (rq->front != SG_FRONT_CLI ||
                 (isatty(0) && isatty(2) && !getenv("CLAUDECODE")));
    r->no_records = !agent && rq->no_records;
    r->agent = agent;
    r->ask_options = agent && (rq->nenv || rq->nwrite);
    r->info = (struct sg_run_info){.skill_name = r->plan.skill_name, .run_id = r->plan.run_id,
                                   .memory_mb = r->plan.limits[SG_PL_MEMORY].value,
                                   .timeout_s = r->plan.limits[SG_PL_TIMEOUT].value,
                                   .degraded = r->plan.degraded,
                                   .allow_all = r->pmode == SG_PERM_ALLOW_ALL,
                                   .cwd = r->plan.cwd,
                                   .notes = (const char *const *)r->notes};
    *out = r;
    return 0;
}

const struct sg_run_info *sg_runner_info(const struct sg_runner *r)
{
    return &r->info;
}

void sg_runner_print_plan(const struct sg_runner *r, FILE *f)
{
    sg_plan_print(f, &r->plan);
    if (!r->options)
        return;
    fputs("\nRun options (yours, for this run only; kept in the trace as run_options and in "
          "the audit record)\n", f);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r->options, "env"), i, v)
    {
        fputs("  --env ", f);
        sg_print_safe(f, json_string_value(v));
        fputs(": passed from your environment (its value is not shown)\n", f);
    }
    json_array_foreach(json_object_get(r->options, "write"), i, v)
    {
        fputs("  --write ", f);
        sg_print_safe(f, json_string_value(v));
        fputs(": writable for this run (rw above)\n", f);
    }
    for (size_t k = 0; k < r->plan.npublish; k++) {
        const struct sg_publish *q = &r->plan.publish[k];
        if (q->host)
            fprintf(f, "  --publish %u:%u: the skill's port %u at this machine's 127.0.0.1:%u "
                       "(the port you named; refused, never moved, if it is taken or one "
                       "skillgate's own settings point at)\n", q->host, q->port, q->port, q->host);
        else
            fprintf(f, "  --publish %u: the skill's port %u published from the start, at a "
                       "port of this machine's 127.0.0.1 the kernel picks\n", q->port, q->port);
    }
    const char *m = json_string_value(json_object_get(r->options, "module"));
    if (m) {
        fputs("  --module ", f);
        sg_print_safe(f, m);
        fputs(": python -m, the skill's folder first on sys.path, in the working folder ", f);
        sg_print_safe(f, r->plan.cwd);
        fputc('\n', f);
    }
    for (size_t k = 0; k < r->nnotes; k++) {
        fputs("  note: ", f);
        sg_print_safe(f, r->notes[k]);
        fputc('\n', f);
    }
}

/* The loop over src until the run is over (or poll fails). */
static void turn_until_done(struct sg_runner *r, const struct sg_loop_source *src, size_t n)
{
    int cap;
    while (sg_runner_running(r, &cap) && sg_loop_turn(src, n, cap) == 0)
        ;
}

void sg_runner_free(struct sg_runner *r)
{
    if (!r)
        return;
    if (r->run) { /* started and never finished: the records are still written */
        struct sg_runner_out out;
        sg_runner_stop(r);
        struct sg_loop_source src[SG_SESSION_SOURCES];
        turn_until_done(r, src, sg_runner_sources(r, false, src, SG_ARRAY_LEN(src)));
        sg_runner_finish(r, &out);
        sg_runner_out_free(&out);
    }
    sg_plan_free(&r->plan);
    sg_tools_free(&r->tools);
    sg_strv_free(r->program);
    json_decref(r->options);
    for (size_t i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r);
}

/* ---- an agent's run options, asked of a person before the run ---- */

struct asked {
    bool decided;
    enum sg_decision d;
};

static void on_asked(void *ctx, enum sg_decision d)
{
    struct asked *a = ctx;
    a->decided = true;
    a->d = d;
}

/* One question, waited for in a loop of the front end's sources and the
 * prompt's (its own timeout denies; a stop ends the wait, denied too). */
static bool approved(struct sg_runner *r, struct run_state *st, const struct sg_runner_opts *o,
                     const struct sg_preq *q)
{
    struct asked a = {0};
    enum sg_decision d = SG_DEC_DENY;
    if (sg_perm_request(st->perm, q, on_asked, &a, &d) == 1)
        return sg_decision_allows(d);
    struct sg_loop_source src[SG_LOOP_MAX_SOURCES];
    size_t n = 0;
    for (size_t i = 0; i < o->nsources && n < SG_LOOP_MAX_SOURCES - 1; i++)
        src[n++] = o->sources[i];
    src[n++] = sg_perm_source(st->perm);
    int64_t end = wall_ms() + ((int64_t)r->prompt_timeout + 10) * 1000;
    while (!a.decided && !st->halted && wall_ms() < end)
        if (sg_loop_turn(src, n, 1000) < 0)
            break;
    if (!a.decided)
        sg_perm_cancel_all(st->perm);
    return a.decided && sg_decision_allows(a.d);
}

/* An agent's env and write grant what its manifest did not: each is a
 * question, decided and recorded as any request (an attached TUI, else a
 * terminal, else nobody: denied). NULL when all were approved, else the
 * first refused, in words (caller frees). */
static char *ask_options(struct sg_runner *r, struct run_state *st, const struct sg_runner_opts *o)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r->options, "write"), i, v)
    {
        struct sg_preq q = {.tool = SG_PT_WRITE, .port = -1, .run_option = true};
        SG_PREQ_SET(&q, subject, json_string_value(v));
        SG_PREQ_SET(&q, host, json_string_value(v));
        SG_PREQ_SET(&q, cwd, r->plan.cwd);
        SG_PREQ_SET(&q, detail, "the agent asks that this folder be writable for the whole run "
                                "(run_skill's write)");
        if (!approved(r, st, o, &q))
            return sg_xasprintf("run_skill's write %s was not approved", json_string_value(v));
    }
    json_array_foreach(json_object_get(r->options, "env"), i, v)
    {
        struct sg_preq q = {.tool = SG_PT_BASH, .port = -1, .run_option = true};
        SG_PREQ_SET(&q, agent_tool, "Env");
        SG_PREQ_SET(&q, subject, json_string_value(v));
        SG_PREQ_SET(&q, cwd, r->plan.cwd);
        SG_PREQ_SET(&q, detail, "run_skill's env: the agent asks that this variable of "
                                "skillgate's environment be passed to the skill, inside the "
                                "sandbox, for this run");
        if (!approved(r, st, o, &q))
            return sg_xasprintf("run_skill's env %s was not approved", json_string_value(v));
    }
    return NULL;
}

/* Not run: a run option was refused. The run's records say so. */
static void refuse_run(struct run_state *st, const char *why)
{
    struct sg_run_result *res = &st->res;
    memset(res, 0, sizeof *res);
    res->started_ms = res->ended_ms = wall_ms();
    res->end = SG_END_SETUP_FAILED;
    res->exit_code = SG_RUN_REFUSED;
    snprintf(res->failed_step, sizeof res->failed_step, "run options");
    snprintf(res->end_reason, sizeof res->end_reason, "not run: %s", why);
    sg_bus_emit(st->bus, SG_EV_SKILL_FAILED,
                json_pack("{s:s, s:s}", "reason", "refused", "step", "run options"),
                "not run: %s", why);
}

int sg_runner_start(struct sg_runner *r, struct sg_event_bus *bus, const struct sg_runner_opts *o,
                    struct sg_diags *d)
{
    const struct sg_skill *sk = r->sk;
    const struct sg_plan *plan = &r->plan;
    int e;
    if (r->ran)
        return -EALREADY;
    struct run_state *st = sg_xcalloc(1, sizeof *st);
    if (plan->wrap) /* no skill's code: a grant holds for every wrapped command */
        snprintf(st->digest, sizeof st->digest, "wrap");
    else if (sg_skill_digest(sk->root, st->digest, NULL) < 0)
        st->digest[0] = '\0';
    /* the trace hears the permission engine's first events too */
    st->bus = bus;
    sg_trace_init(&st->trace);
    sg_bus_subscribe(bus, sg_trace_sink, &st->trace);
    sg_audit_capture_init(&st->cap);
    sg_bus_subscribe(bus, sg_audit_capture_sink, &st->cap);
    /* what the home kept belongs to this content, or is dropped (an empty
     * digest keeps nothing) */
    int ke = r->plan.keep_home ? sg_keephome_prepare(r->plan.keep_home, st->digest,
                                                     r->fresh_home) : 0;
    if (ke == 0 && r->plan.keep_home)
        r->plan.keep_digest = sg_xstrdup(st->digest);
    if (ke < 0) {
        free(steal_pointer(&r->plan.keep_home));
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED, json_pack("{s:s}", "home_not_kept", strerror(-ke)),
                    "the skill's own home cannot be kept (%s): this run's is new and goes with "
                    "it", strerror(-ke));
    }
    if ((st->otel = sg_otel_run_begin(plan->skill_name, plan->run_id, &o->otel_parent)))
        sg_bus_subscribe(bus, sg_otel_run_sink, st->otel);
    struct sg_perm_opts po = {.mode = r->pmode, .policy_file = r->policy_file,
                              .skill = plan->skill_name, .digest = st->digest,
                              .run_id = plan->run_id, .timeout_s = r->prompt_timeout,
                              .program = r->program,
                              .tools = &r->tools, .bus = bus};
    st->perm = sg_perm_new(&po, d);
    if (!st->perm) {
        run_state_free(st);
        return -EINVAL;
    }
    if ((e = keep_records(r, st, d)) < 0) {
        sg_perm_free(st->perm);
        run_state_free(st);
        return e;
    }
    r->ran = true;
    r->run = st;
    st->trace_out = o->trace_out;
    if (o->show)
        sg_perm_set_frontend(st->perm, o->show, o->show_ctx);
    else if (r->pmode == SG_PERM_PROMPT && (st->lp = sg_lineprompt_open()))
        sg_lineprompt_attach(st->lp, st->perm); /* else nobody to ask: denied */
    st->seen = manifests_seen(sk, bus);
    cleanup_free char *refused = r->ask_options ? ask_options(r, st, o) : NULL;
    if (refused) {
        refuse_run(st, refused);
        return 0;
    }
    /* the audit writer idle (not inside malloc) when pid 1 is cloned: a raw
     * clone gets none of fork's care for another thread's locks */
    sg_audit_flush();
    sg_otel_pause(); /* and the exporter's thread: no batch in flight */
    if (sg_session_start(plan, bus, st->perm, &st->session, &st->res) < 0)
        st->session = NULL;
    sg_otel_resume();
    return 0;
}

size_t sg_runner_sources(struct sg_runner *r, bool shared, struct sg_loop_source *out, size_t max)
{
    return r->run && r->run->session ? sg_session_sources(r->run->session, shared, out, max) : 0;
}

bool sg_runner_running(const struct sg_runner *r, int *cap_ms)
{
    *cap_ms = -1;
    return r->run && r->run->session && sg_session_running(r->run->session, cap_ms);
}

void sg_runner_stop(struct sg_runner *r)
{
    if (r->run)
        r->run->halted = true;
    if (r->run && r->run->session)
        sg_session_stop(r->run->session);
}

void sg_runner_cancel(struct sg_runner *r)
{
    if (r->run)
        r->run->halted = true;
    if (r->run && r->run->session)
        sg_session_cancel(r->run->session);
}

void sg_runner_interrupt(struct sg_runner *r, int signo)
{
    if (r->run)
        r->run->halted = true;
    if (r->run && r->run->session)
        sg_session_interrupt(r->run->session, signo);
}

void sg_runner_live(struct sg_runner *r, struct sg_session_live *live)
{
    if (r->run && r->run->session)
        sg_session_live(r->run->session, live);
}

/* The audit log's fsync, beside the trace's (sg_runner_finish). */
struct audit_sync {
    pthread_t thread;
    int fd, err;
};

static void *audit_sync_thread(void *arg)
{
    struct audit_sync *as = arg;
    as->err = sg_audit_sync(as->fd);
    return NULL;
}

/* The input a trace keeps whole (its "input"); a longer one is only counted
 * ("input_bytes"): it is the person's, and the audit keeps its SHA-256. */
#define TRACE_INPUT_MAX (64 * 1024)

void sg_runner_finish(struct sg_runner *r, struct sg_runner_out *out)
{
    struct run_state *st = r->run;
    const struct sg_skill *sk = r->sk;
    memset(out, 0, sizeof *out);
    if (!st)
        return;
    if (st->session)
        sg_session_finish(st->session, &st->res);
    out->res = st->res;
    if (st->journal) /* if the records fail now, the next start still knows the end (in
                      * the file before the record is: a killed broker's recovery agrees) */
        sg_journal_note(st->journal,
                        json_pack("{s:s, s:s, s:i, s:I, s:s, s:I, s:I, s:s}", "type", "end", "end",
                                  sg_run_end_name(out->res.end), "exit_code", out->res.exit_code,
                                  "ended_ms", (json_int_t)out->res.ended_ms, "end_reason",
                                  out->res.end_reason, "stdout_bytes",
                                  (json_int_t)out->res.bytes[0], "stderr_bytes",
                                  (json_int_t)out->res.bytes[1], "output_sha256",
                                  out->res.out_sha256));
    int decisions_err = sg_perm_free(st->perm);
    sg_lineprompt_close(st->lp);
    out->doc = sg_trace_doc(st->trace_head, &st->trace, &out->res);
    json_object_set_new(out->doc, "manifests", st->seen);
    if (r->options) /* the person's decisions for this run, recorded like grants */
        json_object_set(out->doc, "run_options", r->options);
    /* what was refused, once each, and how to allow it (refusals.h) */
    json_object_set_new(out->doc, "refusals", sg_refusals_of(out->doc, r->agent));
    /* what the run was given, for a report's Reproduce (the audit keeps its SHA-256) */
    if (r->input && strlen(r->input) <= TRACE_INPUT_MAX)
        json_object_set_new(out->doc, "input", json_string(r->input)); /* not UTF-8: left out */
    else if (r->input)
        json_object_set_new(out->doc, "input_bytes", json_integer((json_int_t)strlen(r->input)));
    if (st->otel) { /* the root span ends and leaves while the records are written */
        sg_bus_unsubscribe(st->bus, st->otel);
        sg_otel_run_close(st->otel, out->doc);
    }
    if (r->person) /* the code that ran: the digest taken at the start ("" if none) */
        sg_seen_mark_digest(sk, st->digest);
    /* The end, in as few serial disk flushes as a crash allows (issue 39):
     *
     *   1. the "end" step into the journal (in the file; its fdatasync runs
     *      on the journal's thread while the trace and the records are
     *      built, and is waited for before 2)
     *   2. the run's refusals and record into the audit log, one write
     *      under its lock, the lock let go (group commit, audit.c)
     *   3. at once: the log's fsync on a thread of its own, the trace's
     *      temporary file written and fsync'd here, the journal's
     *      fdatasync on its thread; all three waited for
     *   4. the trace's rename (never over another), the traces folder's
     *      fsync: three flushes' latency in all, not five
     *   5. the journal removed (no flush: a journal a power cut brings back
     *      finds its record and its trace in place and is removed again)
     *
     * The trace names the chain's head after the record ("audit_head":
     * audit verify holds the log to every trace, so records cut off the
     * log's end are caught, issue 34), so it carries its name only after
     * the log's fsync. Recovery writes what is missing and only that: the
     * record when the log holds none of this run after the seq the
     * journal's head kept (sg_audit_find_run), the trace when no file has
     * its name (a temporary one is removed and written again). So:
     *   killed before 2: the record and the trace from the journal;
     *   killed after 2 (synced or not, the write is in the file): the
     *     record found, the trace written under the name it gives;
     *   killed after 4: both found, the journal removed;
     *   power cut before 3 is done: the record is on the disk or not, and
     *     recovery finds it or writes it; no trace carries a name yet;
     *   power cut after 4: both on the disk before skillgate returned. */
    cleanup_free char *tname = sg_trace_name(out->doc);
    cleanup_free char *tpath = sg_trace_path_of(tname);
    json_t *rec = sg_audit_run_record(out->doc, st->audit_head, out->res.out_sha256,
                                      st->cap.out.data, st->cap.out.len, st->cap.err.data,
                                      st->cap.err.len, tpath);
    cleanup_free char *log = sg_audit_path();
    json_t *recs = rec ? sg_audit_refusal_records(out->doc, st->audit_head) : NULL;
    int afd = -1;
    if (recs)
        json_array_append(recs, rec);
    /* the "end" step on the disk before the record is in the log: a power
     * cut must not bring back a journal without the end beside a record
     * that has it (recovery would write the trace "incomplete" under a
     * record that says how the run ended). Its fdatasync ran while the
     * trace and the records above were built. */
    if (st->journal)
        sg_journal_sync(st->journal); /* its errors: sg_journal_close */
    out->audit_err = recs ? sg_audit_append_nosync(log, recs, &afd) : -EINVAL;
    json_decref(recs);
    json_t *head = out->audit_err ? NULL : sg_audit_head_of(rec);
    json_decref(rec);
    struct audit_sync as = {.fd = afd};
    bool syncing = afd >= 0 && pthread_create(&as.thread, NULL, audit_sync_thread, &as) == 0;
    if (head)
        json_object_set(out->doc, "audit_head", head);
    /* the run's spans: at most SG_OTEL_END_WAIT_MS more, while the log's
     * fsync runs; what became of them goes into the trace */
    sg_otel_run_end(st->otel, out->doc);
    st->otel = NULL;
    struct sg_trace_pending tp;
    out->trace_err = sg_trace_stage_named(out->doc, tname, sk->root, &tp);
    if (syncing)
        pthread_join(as.thread, NULL);
    else if (afd >= 0)
        as.err = sg_audit_sync(afd);
    if (!out->audit_err)
        out->audit_err = as.err;
    if (st->journal)
        sg_journal_sync(st->journal); /* its errors: sg_journal_close */
    if (head && out->audit_err) {
        /* the record may not be on the disk: no trace names it */
        json_object_del(out->doc, "audit_head");
        if (!out->trace_err)
            sg_trace_pending_drop(&tp);
        out->trace_err = sg_trace_stage_named(out->doc, tname, sk->root, &tp);
    }
    json_decref(head);
    if (!out->trace_err)
        out->trace_err = sg_trace_publish(&tp, out->doc, &out->trace_path);
    if (st->trace_out)
        out->trace_err2 = sg_trace_write(out->doc, st->trace_out, sk->root, &out->trace_path2);
    if (!out->audit_err)
        out->audit_err = decisions_err;
    if (st->journal) {
        bool done = !out->trace_err && !out->audit_err;
        if (!done)
            out->journal_path = sg_xstrdup(sg_journal_path(st->journal));
        sg_bus_unsubscribe(st->bus, st->journal);
        out->journal_err = sg_journal_close(st->journal, done);
        st->journal = NULL;
    }
    out->no_records = r->no_records;
    sg_sandbox_reap(); /* pid 1's teardown ran while the trace was written */
    run_state_free(st);
    r->run = NULL;
}

int sg_runner_run(struct sg_runner *r, struct sg_event_bus *bus, const struct sg_runner_opts *o,
                  struct sg_runner_out *out, struct sg_diags *d)
{
    memset(out, 0, sizeof *out);
    int e = sg_runner_start(r, bus, o, d);
    if (e < 0)
        return e;
    struct sg_loop_source src[SG_LOOP_MAX_SOURCES];
    size_t n = 0;
    bool shared = false;
    for (size_t i = 0; i < o->nsources && n < SG_LOOP_MAX_SOURCES; i++) {
        src[n++] = o->sources[i];
        shared |= o->sources[i].pollfds != NULL;
    }
    n += sg_runner_sources(r, shared, src + n, SG_LOOP_MAX_SOURCES - n);
    turn_until_done(r, src, n);
    sg_runner_finish(r, out);
    return 0;
}

void sg_runner_out_free(struct sg_runner_out *out)
{
    json_decref(out->doc);
    free(out->trace_path);
    free(out->trace_path2);
    free(out->journal_path);
    memset(out, 0, sizeof *out);
}
