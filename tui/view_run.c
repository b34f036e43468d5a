/* The run screen: the skill's output on one side, the enforcement events on
 * the other, a status bar with the run's vital signs. A local run is
 * started here and its sources join the TUI's own loop (tui_run_sources),
 * after the terminal's, so keys and the skill never wait on each other;
 * the screen is redrawn at most every FRAME_MS however fast the skill
 * prints (app.c), and the scrollback is bounded (what was dropped is
 * shown). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "attempts.h"
#include "events.h"
#include "record.h"
#include "refusals.h"
#include "ring.h"
#include "runner.h"
#include "skill.h"
#include "timeline.h"
#include "tui.h"
#include "util.h"

#define OUT_LINES 20000
#define OUT_BYTES (8u << 20)
#define EV_LINES 5000
#define EV_BYTES (2u << 20)

enum { PANE_OUT, PANE_EV };

/* A pane follows new lines until moved. The events pane has one cursor
 * (cur): the moves, ]/[ }/{, search and y all go to it or act on it, it
 * is the one row highlighted (and marked ▸), and it is shown whole,
 * wrapped under its row. Following, the cursor is the last event. The
 * output pane has none: the moves scroll it, a search marks its matches. */
#define PANE_ROWS_MAX 256 /* rows of a pane a click can point at */

struct pane {
    struct tui_ring ring;
    bool follow;
    bool has_cursor;
    uint64_t top;        /* seq of the first line shown when not following */
    uint64_t cur;        /* seq of the cursor's line when not following */
    int left, rows;
    char search[256];
    uint64_t match_seq;  /* the output pane's current match (for n/N) */
    int y, x, h, w;      /* where it was last drawn (a click focuses it) */
    uint64_t at_row[PANE_ROWS_MAX]; /* the line (seq) each row showed (UINT64_MAX: none) */
};

struct run {
    struct pane pane[2];
    int focus;
    bool maximized;
    char filter[64];
    int filter_sev;      /* -1: none */
    /* the run */
    char skill[128];
    bool active, done, stop, degraded;
    struct sg_session_live live;
    long long mem_limit_mb, timeout_s;
    int64_t started_ms, ended_ms;
    size_t stolen; /* a run without the sandbox: what the attacker got out */
    bool record;                 /* a recording (skillgate record): its result at the end */
    struct sg_record_hold hold;
    struct sg_attempts att; /* what it attempted, by kind (a local run's) */
    struct tui_timeline tl; /* its output rate and attempts over time */
    int show_tl;            /* T: -1 as the height allows, 0 hidden, 1 shown */
    bool att_known;
    struct {
        int port, host;
    } pub[32];   /* where the skill's ports were published: said again at the end */
    size_t npub;
    int exit_code;
    char outcome[160];
    char trace[4096];
    /* a local run in progress: a skill's, or a process outside skillgate */
    struct sg_runner *runner;
    struct sg_skill *sk;
    struct sg_event_bus bus;
    struct child *child;
    void (*on_end)(void *ctx);
    void *end_ctx;
};

static struct run *R(struct tui_view *v)
{
    if (!v->data) {
        struct run *r = sg_xcalloc(1, sizeof *r);
        tui_ring_init(&r->pane[PANE_OUT].ring, OUT_LINES, OUT_BYTES);
        tui_ring_init(&r->pane[PANE_EV].ring, EV_LINES, EV_BYTES);
        r->pane[0].follow = r->pane[1].follow = true;
        r->pane[PANE_EV].has_cursor = true;
        r->pane[0].match_seq = r->pane[1].match_seq = UINT64_MAX;
        r->filter_sev = -1;
        r->show_tl = -1;
        v->data = r;
    }
    return v->data;
}

static bool ev_visible(const struct run *r, const struct tui_line *l)
{
    if (r->filter_sev >= 0)
        return l->severity >= r->filter_sev;
    if (!r->filter[0])
        return true;
    return strstr(sg_event_name((enum sg_event_kind)l->kind), r->filter) ||
           strcasestr(sg_event_label((enum sg_event_kind)l->kind), r->filter);
}

/* ---- the event sink ---- */

static void sink(void *ctx, const struct sg_event *ev)
{
    struct tui *t = ctx;
    struct run *r = R(&t->views[TUI_S_RUN]);
    int sev = sg_event_severity(ev->kind);
    if (ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR) {
        tui_ring_push(&r->pane[PANE_OUT].ring, ev->message, ev->message_len, ev->kind, sev,
                      ev->wall_ms);
        tui_tl_add(&r->tl, ev->wall_ms, TUI_TL_OUT, ev->message_len + 1);
    } else {
        /* the data too: Enter on the events pane shows every event in full */
        cleanup_free char *data =
            json_object_size(ev->data) ? json_dumps(ev->data, JSON_COMPACT | JSON_PRESERVE_ORDER)
                                       : NULL;
        enum sg_att_what what;
        int how = sg_attempts_how(ev->kind, ev->data, &what);
        tui_ring_push_data(&r->pane[PANE_EV].ring, ev->message, ev->message_len, data,
                           data ? strlen(data) : 0, ev->kind, sev, how, ev->wall_ms);
        if (how >= 0) { /* sg_attempts_add's count, from the one lookup */
            r->att.n[how][what]++;
            tui_tl_add_attempt(&r->tl, ev->wall_ms, how, 1);
        }
        json_int_t host = json_integer_value(json_object_get(ev->data, "host_port"));
        if (ev->kind == SG_EV_PORT_PUBLISHED && host > 0 && r->npub < SG_ARRAY_LEN(r->pub)) {
            r->pub[r->npub].port = (int)json_integer_value(json_object_get(ev->data, "port"));
            r->pub[r->npub++].host = (int)host;
        }
        const char *miss = json_string_value(json_object_get(ev->data, "missing"));
        if (ev->kind == SG_EV_SANDBOX_DEGRADED && miss && !strcmp(miss, "landlock"))
            r->degraded = true; /* the banner is Landlock's; unwatched decoys are an event */
        r->att_known = true;
    }
    t->dirty = true;
}

static void run_begin(struct tui *t, struct run *r, const char *name, long long mem_mb,
                      long long timeout_s, bool local)
{
    int demo = tui_demo_pane(t); /* the demo: the step's pane, focused, read from its start */
    for (int i = 0; i < 2; i++) {
        tui_ring_clear(&r->pane[i].ring);
        r->pane[i].follow = demo < 0, r->pane[i].top = 0;
        r->pane[i].left = 0;
    }
    r->focus = demo < 0 ? r->focus : demo;
    snprintf(r->skill, sizeof r->skill, "%s", name);
    r->active = true, r->done = r->stop = r->degraded = false;
    r->stolen = 0;
    r->filter[0] = '\0', r->filter_sev = -1; /* a new run shows all its events */
    for (int i = 0; i < 2; i++)
        r->pane[i].search[0] = '\0', r->pane[i].match_seq = UINT64_MAX;
    r->att = (struct sg_attempts){0};
    r->att_known = false;
    r->npub = 0;
    r->live = (struct sg_session_live){.memory_bytes = -1};
    r->mem_limit_mb = mem_mb;
    r->timeout_s = timeout_s;
    r->started_ms = tui_now_ms();
    tui_tl_reset(&r->tl, r->started_ms);
    r->outcome[0] = r->trace[0] = '\0';
    t->running = local; /* a local run owns the loop until it ends */
    if (t->cur != TUI_S_PAGER)
        tui_switch(t, TUI_S_RUN);
}

static void run_end(struct tui *t, struct run *r)
{
    r->active = false;
    r->done = true;
    r->ended_ms = tui_now_ms();
    t->running = false;
    t->dirty = true;
    void (*fn)(void *) = r->on_end;
    r->on_end = NULL;
    if (fn)
        fn(r->end_ctx);
}

/* The run is over: its records, what the screen says of it. */
static void run_finish(struct tui *t, struct run *r)
{
    struct sg_runner_out out;
    sg_runner_finish(r->runner, &out);
    r->exit_code = out.res.exit_code;
    /* a sample every 250 ms misses a short run's; 0 is "unknown" (runend.h:
     * no cgroup and no sample, a run that never started): the header keeps
     * saying n/a, never "0 KB" */
    if (out.res.memory_peak > 0 && out.res.memory_peak > r->live.memory_bytes)
        r->live.memory_bytes = out.res.memory_peak;
    json_t *vs = json_object_get(out.doc, "violation_summary");
    snprintf(r->outcome, sizeof r->outcome, "%s, exit %d, %lld ms, max severity %s",
             json_string_value(json_object_get(out.doc, "status")), out.res.exit_code,
             (long long)(out.res.ended_ms - out.res.started_ms),
             json_string_value(json_object_get(vs, "max_severity")));
    snprintf(r->trace, sizeof r->trace, "%s", out.trace_path ? out.trace_path : "");
    /* a limit that stopped it, or that it died near: which, and the raise */
    if (out.res.limit_note[0])
        tui_ring_push(&r->pane[PANE_EV].ring, out.res.limit_note, strlen(out.res.limit_note),
                      SG_EV_RESOURCE_LIMIT_HIT, sg_event_severity(SG_EV_RESOURCE_LIMIT_HIT),
                      tui_now_ms());
    /* where the skill's pages were, said again as the run ends */
    for (size_t i = 0; i < r->npub; i++) {
        char m[128];
        int n = snprintf(m, sizeof m, "the skill's :%d was at http://127.0.0.1:%d/ (closed with "
                                      "the run)", r->pub[i].port, r->pub[i].host);
        tui_ring_push(&r->pane[PANE_EV].ring, m, (size_t)n, SG_EV_PORT_PUBLISHED,
                      sg_event_severity(SG_EV_PORT_PUBLISHED), tui_now_ms());
    }
    /* the end names each refused request once, and how to allow it */
    json_t *refusals = json_object_get(out.doc, "refusals");
    cleanup_free char *refused = sg_refusals_text(refusals, sg_invoking_home());
    size_t k = 0; /* one line per refusal: y on it copies the rule that would allow it */
    for (const char *l = refused, *e; *l; l = e + 1, k++) {
        e = strchr(l, '\n');
        const char *rule = json_string_value(json_object_get(json_array_get(refusals, k), "rule"));
        json_t *o = rule ? json_pack("{s:s}", "request", rule) : NULL;
        cleanup_free char *data = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        tui_ring_push_data(&r->pane[PANE_EV].ring, l, (size_t)(e - l), data,
                           data ? strlen(data) : 0, SG_EV_PERMISSION_DECIDED, 2, -1, tui_now_ms());
    }
    char *recorded = NULL; /* a recording's result: declared beside observed */
    if (r->record) {
        sg_record_policy_restore(r->sk, &r->hold);
        json_t *doc = out.doc;
        json_t *profile = sg_record_profile(&doc, 1);
        json_t *cmp = sg_record_compare(r->sk, profile);
        cleanup_free char *side = sg_record_side_by_side(r->sk, profile, cmp);
        cleanup_free char *man = sg_record_manifest(r->sk, profile);
        recorded = sg_xasprintf("What %s used, beside what it declares (each use was "
                                "yours to answer):\n\n%s\nThe smallest manifest that lets "
                                "this run pass unasked\n(skillgate record --write writes "
                                "it):\n\n%s",
                                r->skill, side, man ? man : "");
        json_decref(cmp);
        json_decref(profile);
        r->record = false;
    }
    if (out.trace_err < 0)
        tui_message(t, "the trace could not be written: %s", strerror(-out.trace_err));
    else if (out.audit_err < 0)
        tui_message(t, "the audit log could not be appended: %s", strerror(-out.audit_err));
    if (out.journal_path)
        tui_message(t, "the run's journal stays in %s: the next start writes its records",
                    out.journal_path);
    sg_runner_out_free(&out);
    sg_runner_free(r->runner);
    sg_skill_free(r->sk);
    r->runner = NULL, r->sk = NULL;
    memset(&r->bus, 0, sizeof r->bus);
    run_end(t, r);
    if (recorded) {
        cleanup_free char *title = sg_xasprintf("Recorded: %s", r->skill);
        tui_pager_show(t, title, recorded);
        free(recorded);
    }
}

void tui_run(struct tui *t, const struct tui_run_spec *spec)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    if (r->runner || r->child)
        return; /* one local run at a time */
    struct sg_skill *sk = NULL;
    int e = sg_skill_load(spec->path, &sk);
    if (e < 0) {
        tui_message(t, "cannot load %s: %s", spec->path, strerror(-e));
        goto ended;
    }
    struct sg_run_request rq = {.front = SG_FRONT_TUI, .input = spec->input, .host_env = spec->env,
                                .resolve = spec->resolve, .nresolve = spec->nresolve,
                                .pmode = (enum sg_perm_mode)spec->pmode,
                                .pmode_set = spec->pmode_set,
                                .prompt_timeout = t->o.prompt_timeout, .script = spec->script,
                                .args = spec->args, .nargs = spec->nargs,
                                .work_dir = spec->work_dir, .write = spec->write,
                                .nwrite = spec->nwrite};
    struct sg_runner *run = NULL;
    const char *why = NULL;
    r->record = spec->record;
    rq.observe_reads = r->record;
    if (r->record)
        sg_record_policy(sk, &r->hold);
    if (sg_runner_new(sk, &rq, &run, &why) != 0) {
        if (r->record)
            sg_record_policy_restore(sk, &r->hold);
        r->record = false;
        tui_message(t, "%s will not run: %s", sk->display,
                    sg_skill_has_errors(sk) ? "its manifest has errors" : why ? why : "?");
        sg_skill_free(sk);
        goto ended;
    }
    if (sg_otel_off_why()) /* telemetry settings never stop a run: said, and off */
        tui_message(t, "OpenTelemetry export off: %s", sg_otel_off_why());
    const struct sg_run_info *info = sg_runner_info(run);
    /* a script's run is titled with it and its arguments */
    struct sg_buf title;
    sg_buf_init(&title, 512);
    sg_buf_printf(&title, "%s", info->skill_name);
    if (spec->script) {
        sg_buf_printf(&title, " %s", spec->script);
        for (size_t i = 0; i < spec->nargs; i++)
            sg_buf_printf(&title, strpbrk(spec->args[i], " '\"") || !spec->args[i][0]
                                      ? " \"%s\"" : " %s", spec->args[i]);
    }
    run_begin(t, r, title.data, info->memory_mb, info->timeout_s, true);
    sg_buf_free(&title);
    r->on_end = spec->on_end, r->end_ctx = spec->end_ctx;
    sg_bus_subscribe(&r->bus, sink, t);
    struct sg_runner_opts o = {.show = tui_prompt_show, .show_ctx = t};
    struct sg_diags d = {0};
    tui_draw_now(t);
    if (sg_runner_start(run, &r->bus, &o, &d) < 0) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("bad policy");
        tui_message(t, "not run: %s", m);
        sg_diags_free(&d);
        sg_runner_free(run);
        if (r->record)
            sg_record_policy_restore(sk, &r->hold);
        r->record = false;
        sg_skill_free(sk);
        memset(&r->bus, 0, sizeof r->bus);
        run_end(t, r);
        return;
    }
    sg_diags_free(&d);
    r->runner = run, r->sk = sk;
    return; /* the TUI's loop runs it (tui_run_sources) */
ended:
    if (spec->on_end)
        spec->on_end(spec->end_ctx);
}

void tui_run_start(struct tui *t, const char *skill_path, const char *input)
{
    struct tui_run_spec s = {.path = skill_path, .input = input};
    tui_run(t, &s);
}

/* ---- a process outside skillgate (the demo's "before") ---- */

struct child_stream {
    int fd, kind;
    char line[SG_LINE_MAX];
    size_t len;
};

struct child {
    pid_t pid;
    struct child_stream cs[2];
    int64_t deadline_ms;
};

static void child_line(struct tui *t, struct run *r, int kind, const char *s, size_t n)
{
    static const char tag[] = "[attacker] ";
    if (n >= sizeof tag - 1 && !memcmp(s, tag, sizeof tag - 1)) {
        cleanup_free char *m = sg_xasprintf("STOLEN: %.*s", (int)(n - (sizeof tag - 1)),
                                            s + sizeof tag - 1);
        tui_ring_push(&r->pane[PANE_EV].ring, m, strlen(m), SG_EV_NETWORK_EGRESS_ALLOWED, 3,
                      tui_now_ms());
        r->stolen++;
        tui_tl_add(&r->tl, tui_now_ms(), TUI_TL_ALLOWED, 1); /* what got out */
    } else {
        tui_ring_push(&r->pane[PANE_OUT].ring, s, n, kind, 0, tui_now_ms());
        tui_tl_add(&r->tl, tui_now_ms(), TUI_TL_OUT, n + 1);
    }
    t->dirty = true;
}

static void child_read(struct tui *t, struct run *r, struct child_stream *c)
{
    char buf[65536];
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        if (c->len)
            child_line(t, r, c->kind, c->line, c->len);
        close(c->fd);
        c->fd = -1;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n' || c->len == sizeof c->line) {
            child_line(t, r, c->kind, c->line, c->len);
            c->len = 0;
            if (buf[i] == '\n')
                continue;
        }
        c->line[c->len++] = buf[i];
    }
}

/* Killed if it still runs, reaped, and said. */
static void child_finish(struct tui *t, struct run *r)
{
    struct child *c = r->child;
    int status = 0;
    for (int i = 0; i < 2; i++)
        if (c->cs[i].fd >= 0)
            close(c->cs[i].fd);
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &status, 0);
    free(c);
    r->child = NULL;
    snprintf(r->outcome, sizeof r->outcome, "finished outside the sandbox (exit %d)",
             WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    r->exit_code = 0;
    run_end(t, r);
}

void tui_run_unsandboxed(struct tui *t, const char *title, char *const argv[])
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    if (r->runner || r->child)
        return;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) < 0)
        return;
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]), close(out[1]);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setsid(); /* never the TUI's terminal */
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        dup2(nul, 0), dup2(out[1], 1), dup2(err[1], 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(out[1]), close(err[1]);
    if (pid < 0) {
        close(out[0]), close(err[0]);
        tui_message(t, "cannot start %s: %s", argv[0], strerror(errno));
        return;
    }
    run_begin(t, r, title, -1, 120, true);
    r->live.pid = pid;
    r->child = sg_xcalloc(1, sizeof *r->child);
    *r->child = (struct child){.pid = pid, .deadline_ms = tui_now_ms() + 120000,
                               .cs = {{.fd = out[0], .kind = SG_EV_STDOUT},
                                      {.fd = err[0], .kind = SG_EV_STDERR}}};
}

/* ---- the local run as sources of the TUI's loop ---- */

static size_t child_fds(void *ctx, struct pollfd *p, size_t max)
{
    struct child *c = R(&((struct tui *)ctx)->views[TUI_S_RUN])->child;
    size_t n = 0;
    for (int i = 0; i < 2 && n < max; i++)
        if (c->cs[i].fd >= 0)
            p[n++] = (struct pollfd){.fd = c->cs[i].fd, .events = POLLIN};
    return n;
}

static void child_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct tui *t = ctx;
    struct run *r = R(&t->views[TUI_S_RUN]);
    for (size_t k = 0; k < n; k++)
        for (int i = 0; i < 2 && p[k].revents; i++)
            if (r->child->cs[i].fd == p[k].fd)
                child_read(t, r, &r->child->cs[i]);
}

static int end_timeout(void *ctx)
{
    struct run *r = R(&((struct tui *)ctx)->views[TUI_S_RUN]);
    int cap = -1;
    if (r->runner) {
        sg_runner_running(r->runner, &cap);
    } else if (r->child) {
        int64_t left = r->child->deadline_ms - tui_now_ms();
        cap = left > 0 ? (int)left : 0;
    }
    return cap;
}

/* Last of the turn: a stop asked for, the status bar's figures, the end. */
static void end_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct tui *t = ctx;
    struct run *r = R(&t->views[TUI_S_RUN]);
    (void)p, (void)n;
    int cap;
    if (r->runner) {
        if (r->stop)
            sg_runner_stop(r->runner);
        struct sg_session_live live = r->live;
        sg_runner_live(r->runner, &live);
        if (live.memory_bytes != r->live.memory_bytes || live.exited != r->live.exited ||
            live.paused != r->live.paused)
            t->dirty = true;
        r->live = live;
        if (!sg_runner_running(r->runner, &cap))
            run_finish(t, r);
    } else if (r->child) {
        struct child *c = r->child;
        if ((c->cs[0].fd < 0 && c->cs[1].fd < 0) || r->stop || tui_now_ms() >= c->deadline_ms)
            child_finish(t, r);
    }
}

size_t tui_run_sources(struct tui *t, struct sg_loop_source *out, size_t max)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    size_t n = 0;
    if (max < 2 || (!r->runner && !r->child))
        return 0;
    if (r->runner)
        n = sg_runner_sources(r->runner, true, out, max - 1);
    else
        out[n++] = (struct sg_loop_source){"outside skillgate", child_fds, child_dispatch, NULL, t};
    out[n++] = (struct sg_loop_source){"the run's end", NULL, end_dispatch, end_timeout, t};
    return n;
}

void tui_run_stop_now(struct tui *t)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    if (r->runner && r->stop)
        sg_runner_stop(r->runner);
}

void tui_run_interrupt(struct tui *t, int signo)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    if (r->runner)
        sg_runner_interrupt(r->runner, signo);
}

/* The TUI is closing: a run still going is stopped and its records
 * written (sg_runner_free does both); a process outside skillgate is
 * killed. */
static void run_abandon(struct tui *t, struct run *r)
{
    if (r->child)
        child_finish(t, r);
    if (!r->runner)
        return;
    sg_runner_free(r->runner);
    if (r->record)
        sg_record_policy_restore(r->sk, &r->hold);
    r->record = false;
    sg_skill_free(r->sk);
    r->runner = NULL, r->sk = NULL;
}

/* ---- an agent's run, streamed from the MCP server (attach.c) ---- */

void tui_run_remote_begin(struct tui *t, const char *skill)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    cleanup_free char *title = sg_xasprintf("%s (an agent's run)", skill);
    run_begin(t, r, title, 0, 0, false);
    r->mem_limit_mb = 0;
}

void tui_run_remote_event(struct tui *t, const char *kind, int sev, const char *msg,
                          int64_t wall_ms, json_t *data)
{
    enum sg_event_kind k = SG_EV_COUNT;
    for (int i = 0; i < SG_EV_COUNT; i++)
        if (!strcmp(kind, sg_event_name((enum sg_event_kind)i)))
            k = (enum sg_event_kind)i;
    if (k == SG_EV_COUNT)
        return;
    json_t *fields = sg_attempts_fields(data); /* what the tally reads, no more */
    struct sg_event ev = {.kind = k, .wall_ms = wall_ms, .message = msg,
                          .message_len = strlen(msg), .data = fields};
    (void)sev; /* the severity is ours to know, not the sender's to say */
    sink(t, &ev);
    json_decref(fields);
}

void tui_run_remote_end(struct tui *t, const char *outcome, const char *trace)
{
    struct run *r = R(&t->views[TUI_S_RUN]);
    if (!r->active)
        return;
    snprintf(r->outcome, sizeof r->outcome, "%s", outcome);
    snprintf(r->trace, sizeof r->trace, "%s", trace ? trace : "");
    r->active = false;
    r->done = true;
    r->ended_ms = tui_now_ms();
    t->dirty = true;
}

/* ---- drawing ---- */

static const char *icon(int sev)
{
    static const char *const uni[] = {"·", "•", "✗", "‼"}, *const ascii[] = {".", "+", "x", "!"};
    return MB_CUR_MAX > 1 ? uni[sev & 3] : ascii[sev & 3];
}

/* Indices (into the ring) of the lines this pane shows, oldest first. */
static size_t visible(const struct run *r, int which, size_t *idx, size_t max)
{
    const struct tui_ring *rg = &r->pane[which].ring;
    size_t n = 0;
    for (size_t i = 0; i < rg->n; i++) {
        const struct tui_line *l = tui_ring_at(rg, i);
        if (which == PANE_EV && !ev_visible(r, l))
            continue;
        if (n < max)
            idx[n++] = i;
    }
    return n;
}

/* One line of a pane at y (w NULL: only measured): one row, scrolled by
 * the pane's left; with wrap on, or as the events pane's cursor (sel), as
 * many rows as it takes (at most max_rows). Returns the rows it takes. */
static int draw_line(struct tui *t, struct run *r, int which, const struct tui_line *l, WINDOW *w,
                     int y, int x, int cols, int max_rows, bool sel)
{
    struct pane *p = &r->pane[which];
    attr_t esc = tui_attr(t, TUI_R_ESCAPED), a;
    int cx = 0;
    if (which == PANE_OUT) {
        bool m = p->search[0] && tui_matches(l->text, l->len, p->search);
        a = tui_attr(t, m ? TUI_R_MATCH : l->kind == SG_EV_STDERR ? TUI_R_STDERR : TUI_R_STDOUT);
    } else {
        char clock[16];
        sg_format_clock(l->wall_ms, clock);
        a = sel ? tui_attr(t, TUI_R_SELECTED) : tui_severity_attr(t, l->severity);
        if (w && sel)
            tui_fill(w, y, x, cols, a);
        const char *mark = !sel ? " " : MB_CUR_MAX > 1 ? "\xe2\x96\xb8" : ">";
        cx = tui_put(w, y, x, 1, mark, strlen(mark), a);
        cx += tui_putf(w, y, x + cx, cols - cx, sel ? a : tui_attr(t, TUI_R_DIM), "%.8s ", clock);
        cx += tui_putf(w, y, x + cx, cols - cx, a, "%s %-8s ", icon(l->severity),
                       sg_event_label((enum sg_event_kind)l->kind));
    }
    int width = cols - cx;
    /* an event's paths in your home from ~/ (a message with a NUL in it
     * is drawn as it is) */
    cleanup_free char *home = which == PANE_EV && strlen(l->text) == l->len
                                  ? tui_home_short(l->text) : NULL;
    const char *s = home ? home : l->text;
    size_t len = home ? strlen(home) : l->len;
    if (sel && !t->wrap && width >= 8) { /* the cursor's event whole, at word boundaries */
        int k = tui_put_wrapped(NULL, 0, 0, width, max_rows > 0 ? max_rows : 1, s, len,
                                a);
        for (int i = 1; w && i < k; i++)
            tui_fill(w, y + i, x, cols, a);
        if (w)
            tui_put_wrapped(w, y, x + cx, width, k, s, len, a);
        return k > 0 ? k : 1;
    }
    if (!t->wrap || width < 8) {
        if (w)
            tui_put_scrolled(w, y, x + cx, width, p->left, s, len, a, esc);
        return 1;
    }
    return tui_put_wrapped_words(w, y, x + cx, width, max_rows > 0 ? max_rows : 1, s, len,
                                 a, esc);
}

/* The rows line i takes (sel: it is the cursor's). */
static int line_rows(struct tui *t, struct run *r, int which, const size_t *idx, size_t i,
                     size_t sel, int cols, int rows)
{
    if (!t->wrap && i != sel)
        return 1;
    return draw_line(t, r, which, tui_ring_at(&r->pane[which].ring, idx[i]), NULL, 0, 0, cols,
                     rows, i == sel);
}

/* The cursor's index among the n lines shown (SIZE_MAX: a pane without
 * one, or nothing to point at): the last line when following, else the
 * line it is on, or the next one kept when a filter hid it. */
static size_t cursor_index(const struct pane *p, const size_t *idx, size_t n)
{
    if (!p->has_cursor || !n)
        return SIZE_MAX;
    if (p->follow)
        return n - 1;
    for (size_t i = 0; i < n; i++)
        if (tui_ring_at(&p->ring, idx[i])->seq >= p->cur)
            return i;
    return n - 1;
}

/* The cursor to line i of the n shown; at the last, the pane follows again. */
static void cursor_to(struct pane *p, const size_t *idx, size_t n, size_t i)
{
    p->cur = tui_ring_at(&p->ring, idx[i])->seq;
    p->follow = i + 1 >= n;
}

/* The first line when a pane shows its last ones (following): lines that
 * wrap, and the cursor's (sel), take their rows; a line taller than the
 * pane is shown from its start. */
static size_t bottom_first(struct tui *t, struct run *r, int which, const size_t *idx, size_t n,
                           size_t sel, int cols, int rows)
{
    int used = 0;
    size_t first = n;
    for (; first > 0; first--) {
        used += line_rows(t, r, which, idx, first - 1, sel, cols, rows);
        if (used > rows)
            break;
    }
    return first < n ? first : (n ? n - 1 : 0);
}

/* The first line to show: the last ones when following; else from top,
 * moved as little as it takes to show the cursor's line whole, and never
 * leaving blank rows under the last line. */
static size_t layout(struct tui *t, struct run *r, int which, const size_t *idx, size_t n,
                     size_t sel, int cols, int rows)
{
    const struct pane *p = &r->pane[which];
    size_t first = 0;
    int used = 0;
    if (!n)
        return 0;
    if (p->follow)
        return bottom_first(t, r, which, idx, n, sel, cols, rows);
    while (first < n && tui_ring_at(&p->ring, idx[first])->seq < p->top)
        first++;
    if (sel != SIZE_MAX) {
        if (sel < first)
            first = sel;
        for (size_t i = first; i <= sel; i++)
            used += line_rows(t, r, which, idx, i, sel, cols, rows);
        while (first < sel && used > rows)
            used -= line_rows(t, r, which, idx, first++, sel, cols, rows);
    }
    used = 0; /* the rows from first to the end, counted only as far as the pane */
    for (size_t i = first; i < n && used <= rows; i++)
        used += line_rows(t, r, which, idx, i, sel, cols, rows);
    while (first > 0 && used < rows) {
        int k = line_rows(t, r, which, idx, first - 1, sel, cols, rows);
        if (used + k > rows)
            break;
        used += k, first--;
    }
    return first >= n ? n - 1 : first;
}

static void pane_title(const struct run *r, int which, char *title, size_t n)
{
    const struct tui_ring *rg = &r->pane[which].ring;
    bool f = r->filter[0] || r->filter_sev >= 0;
    if (which == PANE_OUT)
        snprintf(title, n, "Output: %llu line%s", (unsigned long long)rg->total,
                 rg->total == 1 ? "" : "s");
    else
        snprintf(title, n, "Events%s%s%s", f ? " [filter: " : "",
                 r->filter[0] ? r->filter : r->filter_sev >= 0 ? "severity" : "", f ? "]" : "");
}

static void draw_pane(struct tui *t, struct run *r, int which, WINDOW *w, int y, int x, int h,
                      int wd)
{
    struct pane *p = &r->pane[which];
    const struct tui_ring *rg = &p->ring;
    p->y = y, p->x = x, p->h = h, p->w = wd;
    char title[256];
    pane_title(r, which, title, sizeof title);
    tui_box(w, y, x, h, wd, tui_attr(t, r->focus == which ? TUI_R_BORDER_FOCUS : TUI_R_BORDER),
            title);
    int rows = h - 2, cols = wd - 2;
    p->rows = rows;
    static size_t idx[OUT_LINES];
    size_t n = visible(r, which, idx, SG_ARRAY_LEN(idx));
    size_t sel = cursor_index(p, idx, n);
    int row = rg->dropped_lines && rows > 1 ? 1 : 0; /* room for the line that says so */
    size_t first = layout(t, r, which, idx, n, sel, cols, rows - row);
    if (n)
        p->top = tui_ring_at(rg, idx[first])->seq;
    if (row && first == 0)
        tui_putf(w, y + 1, x + 1, cols, tui_attr(t, TUI_R_DIM),
                 "... %llu older lines (%llu bytes) dropped from the scrollback (the trace "
                 "counts every byte)",
                 (unsigned long long)rg->dropped_lines, (unsigned long long)rg->dropped_bytes);
    else
        row = 0;
    for (int k = 0; k < PANE_ROWS_MAX; k++)
        p->at_row[k] = UINT64_MAX;
    size_t i = first;
    for (; row < rows && i < n; i++) {
        const struct tui_line *l = tui_ring_at(rg, idx[i]);
        int k = draw_line(t, r, which, l, w, y + 1 + row, x + 1, cols, rows - row, i == sel);
        for (int j = row; j < row + k && j < PANE_ROWS_MAX; j++)
            p->at_row[j] = l->seq;
        row += k;
    }
    if (i < n) {
        char more[64];
        snprintf(more, sizeof more, r->active ? " %zu more below, End to follow "
                                              : " %zu more below, End for the last ", n - i);
        int mw = (int)strlen(more);
        tui_put(w, y + h - 1, x + wd - mw - 2, mw, more, (size_t)mw, tui_attr(t, TUI_R_MATCH));
    }
}

static void fmt_bytes(long long b, char *out, size_t n)
{
    if (b < 0)
        snprintf(out, n, "n/a");
    else if (b < 10ll << 20)
        snprintf(out, n, "%lld KB", b >> 10);
    else
        snprintf(out, n, "%lld MB", b >> 20);
}

/* T: the run on one time axis: its output rate, then its refusals (x),
 * questions (?) and what was allowed (+). Two rows. */
static int draw_timeline(struct tui *t, struct run *r, WINDOW *w, int y, int cols)
{
    int n = cols - 2 - TUI_TL_LABEL - 8;
    if (n < 10)
        return 0;
    struct tui_tl_cell cells[TUI_TL_MAX_CELLS];
    int64_t end = r->active ? tui_now_ms() : r->ended_ms;
    n = n > TUI_TL_MAX_CELLS ? TUI_TL_MAX_CELLS : n;
    tui_tl_cells(&r->tl, end, cells, n);
    attr_t dim = tui_attr(t, TUI_R_DIM);
    tui_putf(w, y, 1, TUI_TL_LABEL, dim, "output");
    tui_putf(w, y + 1, 1, TUI_TL_LABEL, dim, "events");
    for (int c = 0; c < n; c++) {
        const char *bar = MB_CUR_MAX > 1 ? tui_tl_bar(cells[c].level) : cells[c].level ? "|" : " ";
        tui_put(w, y, 1 + TUI_TL_LABEL + c, 1, bar, strlen(bar), tui_attr(t, TUI_R_STDOUT));
        char m[2] = {cells[c].mark == ' ' ? '.' : cells[c].mark, 0};
        attr_t a = cells[c].mark == 'x'   ? tui_attr(t, TUI_R_SEV_WARNING)
                   : cells[c].mark == '?' ? tui_attr(t, TUI_R_MATCH)
                   : cells[c].mark == '+' ? tui_attr(t, TUI_R_OK)
                                          : dim;
        tui_put(w, y + 1, 1 + TUI_TL_LABEL + c, 1, m, 1, a);
    }
    long long el = (long long)(end - r->started_ms);
    tui_putf(w, y, 2 + TUI_TL_LABEL + n, 7, dim, "%lld.%llds", el / 1000, (el % 1000) / 100);
    tui_putf(w, y + 1, 2 + TUI_TL_LABEL + n, 7, dim, "T hide");
    return 2;
}

/* The header: the state and the counts first, never cut (what a person
 * looks up for: is it waiting for me, what did it try), then the rest as
 * far as it fits: the skill, its time, its pid, its peak memory. */
static int draw_vitals(struct tui *t, struct run *r, WINDOW *w, int cols)
{
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    int64_t end = r->active ? tui_now_ms() : r->ended_ms;
    /* the skill's own time: what a person took to decide is not counted */
    long long el = (long long)(end - r->started_ms - r->live.paused_ms);
    bool waiting = r->active && tui_prompt_active(t);
    const char *state = r->active ? (waiting ? "WAITING FOR YOU" : r->stop ? "stopping" : "running")
                                  : "done";
    int x = tui_putf(w, 0, 1, cols - 2, waiting ? tui_attr(t, TUI_R_MATCH) : hd, "%s", state);
    if (r->mem_limit_mb < 0) { /* outside the sandbox: there is nothing to count but the theft */
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, tui_attr(t, TUI_R_SEV_ERROR),
                      "  NO SANDBOX  stolen %zu", r->stolen);
    } else {
        unsigned long n[SG_ATT_HOW_COUNT];
        for (int h = 0; h < SG_ATT_HOW_COUNT; h++)
            n[h] = sg_attempts_total(&r->att, (enum sg_att_how)h);
        x += tui_putf(w, 0, 1 + x, cols - 2 - x,
                      tui_attr(t, n[SG_ATT_BLOCKED] ? TUI_R_SEV_WARNING : TUI_R_DIM),
                      "  blocked %lu", n[SG_ATT_BLOCKED]);
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, hd, " · asked %lu", n[SG_ATT_ASKED]);
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, tui_attr(t, TUI_R_OK), " · allowed %lu",
                      n[SG_ATT_ALLOWED]);
    }
    char mem[32];
    fmt_bytes(r->live.memory_bytes, mem, sizeof mem);
    x += tui_putf(w, 0, 1 + x, cols - 2 - x, hd, "  %s  %lld.%llds", r->skill, el / 1000,
                  (el % 1000) / 100);
    if (r->mem_limit_mb > 0) /* an agent's run (0): its limits are the server's to show */
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, hd, "/%llds%s", r->timeout_s,
                      r->active && r->live.paused ? " paused" : "");
    if (r->mem_limit_mb != 0 && r->live.pid > 0)
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, hd, "  pid %d", (int)r->live.pid);
    if (r->mem_limit_mb > 0) /* the most the cgroup held, not a reading after the exit */
        x += tui_putf(w, 0, 1 + x, cols - 2 - x, hd, "  peak %s/%lld MB", mem, r->mem_limit_mb);
    return x;
}

/* How the run ended, and where its trace is: the path goes on from the
 * end of the row on rows of its own, never cut (a path a person may
 * type). Returns the rows used. */
static int draw_outcome(struct tui *t, struct run *r, WINDOW *w, int y, int cols)
{
    attr_t a = tui_attr(t, r->exit_code ? TUI_R_SEV_WARNING : TUI_R_OK);
    int x = 1 + tui_put(w, y, 1, cols - 2, r->outcome, strlen(r->outcome), a);
    if (!r->trace[0])
        return 1;
    cleanup_free char *trace = tui_home_short(r->trace);
    x += tui_putf(w, y, x, cols - 1 - x, tui_attr(t, TUI_R_DIM), "  trace ");
    return tui_put_flow(w, y, x, cols - 1, 2, 4, trace, strlen(trace), tui_attr(t, TUI_R_DIM),
                        tui_attr(t, TUI_R_ESCAPED));
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct run *r = R(v);
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    if (!r->active && !r->done && t->demo) {
        tui_demo_intro(t, w, rows, cols);
        return;
    }
    if (!r->active && !r->done) {
        tui_putf(w, 0, 1, cols - 2, hd, "No run yet");
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                 "Pick a skill on the skills screen (1) and press Enter to run it.");
        if (t->attach)
            tui_putf(w, 3, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                     "Attached: agents' runs through skillgate serve show here, and their "
                     "requests ask you.");
        return;
    }
    draw_vitals(t, r, w, cols);
    int top = 1;
    if (r->degraded) {
        tui_fill(w, 1, 0, cols, tui_attr(t, TUI_R_DEGRADED));
        tui_putf(w, 1, 1, cols - 2, tui_attr(t, TUI_R_DEGRADED),
                 "DEGRADED: this run has no Landlock (--allow-degraded)");
        top = 2;
    }
    if (r->done) {
        top += draw_outcome(t, r, w, top, cols);
        if (r->att_known) { /* what it tried, not only how it ended */
            cleanup_free char *tally = sg_attempts_text(&r->att);
            cleanup_free char *att = sg_xasprintf("attempted: %s", tally);
            top += tui_put_wrapped(w, top, 1, cols - 2, 2, att, strlen(att),
                                   tui_attr(t, sg_attempts_total(&r->att, SG_ATT_BLOCKED)
                                                   ? TUI_R_SEV_WARNING
                                                   : TUI_R_DIM));
        }
    }
    bool tl = r->show_tl > 0 || (r->show_tl < 0 && rows >= 28 && !t->demo);
    if (tl && rows - top > 12)
        top += draw_timeline(t, r, w, top, cols);
    int h = rows - top;
    r->pane[0].h = r->pane[1].h = 0; /* a pane not drawn below takes no click */
    int demo_pane = cols < 100 && tui_demo_pane(t) >= 0 ? r->focus : -1; /* one pane, tall */
    if (demo_pane >= 0) {
        draw_pane(t, r, demo_pane, w, top, 0, h, cols);
    } else if (r->maximized) {
        draw_pane(t, r, r->focus, w, top, 0, h, cols);
    } else if (cols >= 100) {
        /* from 120 columns the events (a decision's words) take the wider
         * share; below, the output keeps room for a line of JSON */
        int lw = cols * (cols >= 120 ? 9 : 11) / 20;
        draw_pane(t, r, PANE_OUT, w, top, 0, h, lw);
        draw_pane(t, r, PANE_EV, w, top, lw, h, cols - lw);
    } else {
        int oh = h / 2;
        draw_pane(t, r, PANE_OUT, w, top, 0, oh, cols);
        draw_pane(t, r, PANE_EV, w, top + oh, 0, h - oh, cols);
    }
}

/* ---- keys ---- */

/* From line cur, the line delta rows on (wrapped lines count their rows;
 * at least one line moved when delta is not 0). */
static long rows_on(struct tui *t, struct run *r, int which, const size_t *idx, size_t n,
                    size_t cur, long delta, int cols, int rows)
{
    long i = (long)cur, moved = 0, want = delta < 0 ? -delta : delta;
    int step = delta < 0 ? -1 : 1;
    while (delta && moved < want && i + step >= 0 && i + step < (long)n) {
        moved += line_rows(t, r, which, idx, (size_t)(step < 0 ? i - 1 : i), SIZE_MAX, cols,
                           rows);
        i += step;
    }
    return i;
}

/* The moves: the events pane's cursor goes delta lines (home: the first,
 * end: the last, following again) and the pane scrolls as far as it must
 * to show it; the output pane scrolls by delta rows, from the line it
 * shows first. */
static void scroll_to(struct tui *t, struct run *r, struct pane *p, long delta, bool home,
                      bool end)
{
    static size_t idx[OUT_LINES];
    int which = (int)(p - r->pane);
    size_t n = visible(r, which, idx, SG_ARRAY_LEN(idx));
    int rows = p->rows > 0 ? p->rows : 1, cols = p->w > 2 ? p->w - 2 : 1;
    size_t last = p->has_cursor ? (n ? n - 1 : 0)
                                : bottom_first(t, r, which, idx, n, SIZE_MAX, cols, rows);
    size_t cur = p->has_cursor ? cursor_index(p, idx, n) : last;
    if (!p->has_cursor) /* the line drawn first (draw_pane keeps it, following too) */
        for (cur = 0; cur < n && tui_ring_at(&p->ring, idx[cur])->seq < p->top; cur++)
            ;
    long target = home  ? 0
                  : end ? (long)last
                  : p->has_cursor ? (long)cur + delta
                                  : rows_on(t, r, which, idx, n, cur, delta, cols, rows);
    if (target < 0)
        target = 0;
    if (target >= (long)last) {
        p->follow = true; /* at the bottom: follow new lines again */
        return;
    }
    if (p->has_cursor) {
        cursor_to(p, idx, n, (size_t)target);
        return;
    }
    p->follow = false;
    p->top = tui_ring_at(&p->ring, idx[target])->seq;
}

/* Line i of the n shown (idx) in the middle of the pane, and the cursor
 * on it. */
static void show_at(struct pane *p, const size_t *idx, size_t n, size_t i)
{
    size_t half = p->rows > 2 ? (size_t)p->rows / 2 : 0;
    size_t want = i > half ? i - half : 0;
    p->follow = false;
    p->top = tui_ring_at(&p->ring, idx[want])->seq;
    if (p->has_cursor)
        cursor_to(p, idx, n, i);
    else if (want + (size_t)p->rows >= n)
        p->follow = true;
}

/* The line the pane's search, or ]/[ }/{, starts from: the cursor, else
 * the current match, else (dir says) past the end or before the start. */
static size_t search_from(const struct pane *p, const size_t *idx, size_t n, int dir)
{
    size_t sel = cursor_index(p, idx, n);
    if (sel != SIZE_MAX)
        return sel;
    for (size_t i = 0; i < n; i++)
        if (tui_ring_at(&p->ring, idx[i])->seq == p->match_seq)
            return i;
    return dir > 0 ? n - 1 : 0;
}

/* The next line (dir 1) or the previous (-1) from the one search_from
 * names, round the end, that matches the search (how < 0) or counts as
 * how; shown and made the cursor. false: none. */
static bool find_line(struct run *r, struct pane *p, int dir, int how, bool from_here)
{
    static size_t idx[OUT_LINES];
    size_t n = visible(r, (int)(p - r->pane), idx, SG_ARRAY_LEN(idx));
    if (!n)
        return false;
    size_t cur = search_from(p, idx, n, dir);
    for (size_t k = from_here ? 0 : 1; k <= n; k++) {
        size_t i = (cur + n + (size_t)((long)dir * (long)k)) % n;
        const struct tui_line *l = tui_ring_at(&p->ring, idx[i]);
        if (how >= 0 ? l->how == how : tui_matches(l->text, l->len, p->search)) {
            p->match_seq = l->seq;
            show_at(p, idx, n, i);
            return true;
        }
    }
    return false;
}

static void find(struct run *r, struct pane *p, int dir)
{
    if (p->search[0])
        find_line(r, p, dir, -1, false);
}

/* ]/[ the next/previous refusal, }/{ the next/previous question asked,
 * in the events pane: the cursor goes there. */
static void find_how(struct tui *t, struct run *r, int dir, int how)
{
    r->focus = PANE_EV;
    if (!find_line(r, &r->pane[PANE_EV], dir, how, false))
        tui_message(t, "no %s in the events shown", how == SG_ATT_ASKED ? "question" : "refusal");
}

static void searched(struct tui *t, const char *text, void *ctx)
{
    struct run *r = ctx;
    struct pane *p = &r->pane[r->focus];
    if (!text)
        return;
    snprintf(p->search, sizeof p->search, "%s", text);
    p->match_seq = UINT64_MAX;
    /* from the cursor up (the newest match above it, the cursor's own
     * line first); the output pane from its end */
    if (p->search[0] && !find_line(r, p, -1, -1, p->has_cursor))
        tui_message(t, "not found: %s", p->search);
}

static void filtered(struct tui *t, const char *text, void *ctx)
{
    struct run *r = ctx;
    static const char *const sev[] = {"info", "notice", "warning", "error"};
    if (!text)
        return;
    r->filter_sev = -1;
    r->filter[0] = '\0';
    for (int i = 0; i < 4; i++)
        if (!strcmp(text, sev[i]))
            r->filter_sev = i;
    if (r->filter_sev < 0)
        snprintf(r->filter, sizeof r->filter, "%s", text);
    r->pane[PANE_EV].follow = true;
    static size_t idx[EV_LINES];
    if (text[0] && !visible(r, PANE_EV, idx, SG_ARRAY_LEN(idx)))
        tui_message(t, "no matches: no event is %s \"%s\" yet (f and an empty line: all)",
                    r->filter_sev >= 0 ? "of severity" : "of a kind matching", text);
    else if (text[0])
        tui_message(t, "events: %s", r->filter_sev >= 0 ? "this severity and above" : "kinds matching");
}

/* Every event the pane keeps (its filter applied), each with its JSON
 * data, in the pager, from the cursor's: a live run's events in full,
 * without waiting for the trace. */
static void events_in_full(struct tui *t, struct run *r)
{
    static size_t idx[EV_LINES];
    struct pane *p = &r->pane[PANE_EV];
    size_t n = visible(r, PANE_EV, idx, SG_ARRAY_LEN(idx));
    if (!n) {
        tui_message(t, "no events to show");
        return;
    }
    size_t from = cursor_index(p, idx, n);
    struct sg_buf b;
    sg_buf_init(&b, 64u << 20);
    size_t lines = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tui_line *l = tui_ring_at(&p->ring, idx[i]);
        if (i == from)
            at = lines;
        char clock[16];
        sg_format_clock(l->wall_ms, clock);
        sg_buf_printf(&b, "%s %-26s ", clock, sg_event_name((enum sg_event_kind)l->kind));
        sg_buf_append(&b, l->text, l->len); /* drawn through the sanitizer */
        sg_buf_printf(&b, "\n");
        lines++;
        if (l->data) {
            sg_buf_printf(&b, "         %-26s ", "");
            sg_buf_append(&b, l->data, l->dlen);
            sg_buf_printf(&b, "\n");
            lines++;
        }
    }
    cleanup_free char *text = sg_buf_steal(&b);
    cleanup_free char *title = sg_xasprintf("Events of %s in full%s (w wraps)", r->skill,
                                            r->active ? ", as of now" : "");
    tui_pager_show(t, title, text ? text : "");
    tui_pager_goto(t, at);
}

/* y: what the line names. An event: the request as a rule (Write(/path),
 * Bash(...), Fetch(host)) where it is a decision, else the path, command
 * or host it names, else its text; an output line: itself. The line: the
 * events pane's cursor; in the output pane the search's match, else the
 * last one. */
static void copy_line(struct tui *t, struct run *r)
{
    static size_t idx[OUT_LINES];
    struct pane *p = &r->pane[r->focus];
    size_t n = visible(r, r->focus, idx, SG_ARRAY_LEN(idx));
    size_t at = search_from(p, idx, n, 1);
    const struct tui_line *l = n ? tui_ring_at(&p->ring, idx[at]) : NULL;
    if (!l) {
        tui_message(t, "nothing to copy here");
        return;
    }
    json_t *d = l->data ? json_loadb(l->data, l->dlen, 0, NULL) : NULL;
    static const char *const keys[] = {"request", "path", "command", "host", "subject"};
    const char *pick = NULL, *what = "line";
    for (size_t k = 0; !pick && k < SG_ARRAY_LEN(keys); k++)
        if ((pick = json_string_value(json_object_get(d, keys[k]))))
            what = k ? keys[k] : "request's rule";
    cleanup_free char *text = pick ? sg_xstrdup(pick) : sg_xstrndup(l->text, l->len);
    json_decref(d);
    tui_copy(t, what, text);
}

static void stop_confirmed(struct tui *t, const char *text, void *ctx)
{
    struct run *r = ctx;
    if (text && (text[0] == 'y' || text[0] == 'Y') && r->active) {
        r->stop = true;
        tui_message(t, "stopping: every process of the sandbox is killed");
    }
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct run *r = R(v);
    struct pane *p = &r->pane[r->focus];
    long page = p->rows > 1 ? p->rows - 1 : 1;
    switch (a) {
    case TUI_A_UP: scroll_to(t, r, p, -1, false, false); return true;
    case TUI_A_DOWN: scroll_to(t, r, p, 1, false, false); return true;
    case TUI_A_PAGE_UP: scroll_to(t, r, p, -page, false, false); return true;
    case TUI_A_PAGE_DOWN: scroll_to(t, r, p, page, false, false); return true;
    case TUI_A_HOME: scroll_to(t, r, p, 0, true, false); return true;
    case TUI_A_END: scroll_to(t, r, p, 0, false, true); return true;
    case TUI_A_LEFT: p->left = p->left > 8 ? p->left - 8 : 0; return true;
    case TUI_A_RIGHT: p->left += 8; return true;
    case TUI_A_FOCUS: r->focus = !r->focus; return true;
    case TUI_A_MAXIMIZE: r->maximized = !r->maximized; return true;
    case TUI_A_SEARCH: tui_input(t, "search: ", "", searched, r); return true;
    case TUI_A_SEARCH_NEXT: find(r, p, 1); return true;
    case TUI_A_SEARCH_PREV: find(r, p, -1); return true;
    case TUI_A_COPY: copy_line(t, r); return true;
    case TUI_A_TIMELINE:
        r->show_tl = r->show_tl > 0 || (r->show_tl < 0 && LINES >= 30) ? 0 : 1;
        return true;
    case TUI_A_NEXT_REFUSED: find_how(t, r, 1, SG_ATT_BLOCKED); return true;
    case TUI_A_PREV_REFUSED: find_how(t, r, -1, SG_ATT_BLOCKED); return true;
    case TUI_A_NEXT_ASKED: find_how(t, r, 1, SG_ATT_ASKED); return true;
    case TUI_A_PREV_ASKED: find_how(t, r, -1, SG_ATT_ASKED); return true;
    case TUI_A_FILTER: { /* a new filter replaces the one shown: `f net`, `f warning` */
        char label[160];
        if (r->filter[0] || r->filter_sev >= 0)
            snprintf(label, sizeof label, "replace filter %s (a kind, or info..error; empty: all): ",
                     r->filter[0] ? r->filter : "severity");
        else
            snprintf(label, sizeof label, "filter events (a kind, or info/notice/warning/error): ");
        tui_input(t, label, "", filtered, r);
        return true;
    }
    case TUI_A_DELETE:
        if (r->active)
            tui_confirm(t, "Stop the run (kill every process of the sandbox)? y/N ",
                        stop_confirmed, r);
        return true;
    case TUI_A_ENTER:
        if (r->focus == PANE_EV)
            events_in_full(t, r);
        else if (r->done && r->trace[0])
            tui_trace_open(t, r->trace);
        return true;
    case TUI_A_EXPORT:
    case TUI_A_REPORT:
        if (r->done && r->trace[0] && a == TUI_A_REPORT)
            tui_trace_report_ask(t, r->trace);
        else if (r->done && r->trace[0])
            tui_trace_export_ask(t, r->trace);
        return true;
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct run *r = R(v);
    if (r->active)
        snprintf(out, n, "Tab pane%s  m maximize  / search  f filter  End follow  x stop  ? help",
                 r->focus == PANE_EV ? "  Enter in full" : "");
    else if (r->done)
        snprintf(out, n, "Enter %s  p report  e export  Tab pane  / search  f filter  ? help  q back",
                 r->focus == PANE_EV ? "the events in full" : "open the trace");
    else
        snprintf(out, n, "1: the skills screen  ? help");
}

static void close_view(struct tui *t, struct tui_view *v)
{
    struct run *r = v->data;
    if (!r)
        return;
    run_abandon(t, r);
    tui_ring_free(&r->pane[0].ring);
    tui_ring_free(&r->pane[1].ring);
    free(r);
    v->data = NULL;
}

/* A click (or the wheel) on a pane focuses it; on an event, the cursor
 * goes to it (as a click selects a row on the other screens). */
static void click(struct tui *t, struct tui_view *v, int y, int x)
{
    (void)t;
    struct run *r = R(v);
    for (int i = 0; i < 2; i++) {
        struct pane *p = &r->pane[i];
        if (!p->h || y < p->y || y >= p->y + p->h || x < p->x || x >= p->x + p->w)
            continue;
        r->focus = i;
        int row = y - p->y - 1; /* under the box's top */
        if (!p->has_cursor || row < 0 || row >= p->rows || row >= PANE_ROWS_MAX ||
            p->at_row[row] == UINT64_MAX)
            continue;
        static size_t idx[OUT_LINES];
        size_t n = visible(r, i, idx, SG_ARRAY_LEN(idx));
        for (size_t k = 0; k < n; k++)
            if (tui_ring_at(&p->ring, idx[k])->seq == p->at_row[row]) {
                cursor_to(p, idx, n, k);
                break;
            }
    }
}

const struct tui_view_ops tui_run_ops = {
    .name = "Run", .draw = draw, .request = request, .status = status, .close = close_view,
    .click = click,
};
