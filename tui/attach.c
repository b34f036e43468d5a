/* skillgate tui --attach: listen on the attach socket (agent/attach.h) for
 * the MCP server's runs; show each run live on the run screen and each of
 * their permission prompts in the same modal as a local run's. Prompts of
 * several runs wait in order; the counter says how many. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "lineprompt.h"
#include "tui.h"
#include "util.h"

#define MAX_CONNS 16

struct conn {
    int fd;
    struct sg_attach_reader *rd;
    char skill[128];
    json_t *prompt;    /* the prompt this run waits on, if any */
    bool agent;        /* the hook's: one tool call of the agent (the agent screen) */
    size_t agent_row;
    int64_t prompt_at; /* CLOCK_MONOTONIC ms when it arrived */
};

struct tui_attach {
    int lfd;
    char *path;
    struct conn c[MAX_CONNS];
    struct conn *showing; /* whose prompt is on screen */
    uint64_t showing_id;  /* and which request of theirs it is */
    struct tui *t;
    struct sg_preq q;     /* the request on screen */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tui_attach_open(struct tui *t)
{
    struct tui_attach *a = sg_xcalloc(1, sizeof *a);
    a->t = t;
    a->lfd = sg_attach_listen(&a->path);
    if (a->lfd < 0) {
        int r = a->lfd;
        fprintf(stderr, "skillgate: cannot listen for agents' runs: %s\n",
                r == -EADDRINUSE ? "another skillgate TUI is attached already" : strerror(-r));
        free(a);
        return r;
    }
    for (int i = 0; i < MAX_CONNS; i++)
        a->c[i].fd = -1;
    t->attach = a;
    return 0;
}

static void drop(struct tui_attach *a, struct conn *c)
{
    if (a->showing == c) {
        a->showing = NULL;
        tui_prompt_show(a->t, NULL);
    }
    if (c->agent)
        tui_agent_done(a->t, c->agent_row, "no answer: the hook went away");
    c->agent = false;
    close(c->fd);
    c->fd = -1;
    free(c->rd);
    c->rd = NULL;
    json_decref(c->prompt);
    c->prompt = NULL;
}

void tui_attach_close(struct tui *t)
{
    struct tui_attach *a = t->attach;
    if (!a)
        return;
    for (int i = 0; i < MAX_CONNS; i++)
        if (a->c[i].fd >= 0)
            drop(a, &a->c[i]);
    close(a->lfd);
    unlink(a->path);
    free(a->path);
    free(a);
    t->attach = NULL;
}

static void answered(void *ctx, enum sg_decision d)
{
    struct tui_attach *a = ctx;
    struct conn *c = a->showing;
    a->showing = NULL;
    if (!c)
        return;
    json_decref(c->prompt);
    c->prompt = NULL;
    /* the answer names the request it answers: one that came meanwhile is
     * never decided by a key meant for this one */
    if (sg_attach_send(c->fd, json_pack("{s:s, s:I, s:s}", "type", "answer", "id",
                                        (json_int_t)a->showing_id, "decision",
                                        sg_decision_wire(d))) < 0)
        drop(a, c);
}

static const char *js(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void put(struct sg_preq *q, char *dst, size_t n, const char *v)
{
    size_t k = strlen(v);
    if (k >= n) {
        q->cut = true;
        k = n - 1;
    }
    memcpy(dst, v, k);
    dst[k] = '\0';
}

/* Show the oldest waiting prompt when none is on screen. */
static void show_next(struct tui_attach *a)
{
    if (a->showing || tui_prompt_active(a->t))
        return;
    struct conn *next = NULL;
    size_t waiting = 0;
    for (int i = 0; i < MAX_CONNS; i++)
        if (a->c[i].fd >= 0 && a->c[i].prompt) {
            waiting++;
            if (!next || a->c[i].prompt_at < next->prompt_at)
                next = &a->c[i];
        }
    if (!next)
        return;
    json_t *p = next->prompt;
    struct sg_preq *q = &a->q;
    memset(q, 0, sizeof *q);
    const char *tool = js(p, "tool");
    q->tool = !strcmp(tool, "Bash")      ? SG_PT_BASH
              : !strcmp(tool, "Fetch")   ? SG_PT_FETCH
              : !strcmp(tool, "Connect") ? SG_PT_CONNECT
                                         : SG_PT_WRITE;
    /* a field longer than ours is never cut to a prefix and shown as the whole */
    put(q, q->subject, sizeof q->subject, js(p, "subject"));
    put(q, q->args, sizeof q->args, js(p, "args"));
    put(q, q->cwd, sizeof q->cwd, js(p, "cwd"));
    put(q, q->detail, sizeof q->detail, js(p, "detail"));
    put(q, q->host, sizeof q->host, js(p, "host"));
    put(q, q->agent_tool, sizeof q->agent_tool, js(p, "agent_tool"));
    q->cut |= json_is_true(json_object_get(p, "cut"));
    /* a command's rows, as the run read them from the raw bytes */
    struct sg_prompt_rows rows = {0};
    json_t *ra = json_object_get(p, "rows"), *r;
    size_t i;
    json_array_foreach(ra, i, r)
        sg_prompt_rows_add(&rows, json_string_value(json_array_get(r, 0)) ?: "",
                           json_string_value(json_array_get(r, 1)) ?: "");
    rows.any_code = json_is_true(json_object_get(p, "any_code"));
    if (sg_prompt_is_command(q) && !rows.n) { /* a run that sent none: not shown whole */
        sg_prompt_rows_add(&rows, "argv", q->args);
        q->cut = true;
    }
    q->port = (int)json_integer_value(json_object_get(p, "port"));
    json_int_t left = json_integer_value(json_object_get(p, "timeout_ms"));
    json_int_t queued = json_integer_value(json_object_get(p, "queued"));
    struct sg_perm_prompt pr = {.q = q, .skill = next->skill, .why = js(p, "why"),
                                .rule = js(p, "rule"),
                                .queued = waiting + (size_t)(queued > 1 ? queued - 1 : 0),
                                .shown_ms = next->prompt_at,
                                .session = json_is_true(json_object_get(p, "session")),
                                .deadline_ms = next->prompt_at + left};
    a->showing = next;
    a->showing_id = (uint64_t)json_integer_value(json_object_get(p, "id"));
    pr.id = a->showing_id;
    tui_prompt_show_remote(a->t, &pr, &rows, answered, a);
}

struct msg_ctx {
    struct tui_attach *a;
    struct conn *c;
};

static void handle(void *ctx, json_t *m)
{
    struct msg_ctx *mc = ctx;
    struct tui_attach *a = mc->a;
    struct conn *c = mc->c;
    const char *type = js(m, "type");
    struct tui *t = a->t;
    json_t *ag = json_object_get(m, "agent");
    if (!strcmp(type, "hello") && json_is_object(ag)) { /* the hook: not a run */
        snprintf(c->skill, sizeof c->skill, "%s", js(m, "skill"));
        c->agent = true;
        c->agent_row = tui_agent_add(t, js(ag, "tool"), js(ag, "summary"), js(ag, "session_id"),
                                     js(ag, "cwd"));
    } else if (!strcmp(type, "hello")) {
        snprintf(c->skill, sizeof c->skill, "%s", js(m, "skill"));
        if (!t->running)
            tui_run_remote_begin(t, c->skill);
    } else if (!strcmp(type, "event")) {
        if (!t->running && !c->agent)
            tui_run_remote_event(t, js(m, "kind"),
                                 (int)json_integer_value(json_object_get(m, "severity")),
                                 js(m, "message"), json_integer_value(json_object_get(m, "wall_ms")),
                                 json_object_get(m, "data"));
    } else if (!strcmp(type, "prompt")) {
        json_decref(c->prompt);
        c->prompt = json_incref(m);
        c->prompt_at = mono_ms();
        if (a->showing == c) { /* the same run's next request */
            a->showing = NULL;
            tui_prompt_show(t, NULL);
        }
        show_next(a);
    } else if (!strcmp(type, "prompt_closed")) {
        json_decref(c->prompt);
        c->prompt = NULL;
        if (a->showing == c) { /* decided elsewhere (a rule, the deadline) */
            a->showing = NULL;
            tui_prompt_show(t, NULL);
        }
        show_next(a);
    } else if (!strcmp(type, "end") && c->agent) {
        tui_agent_done(t, c->agent_row, js(m, "outcome"));
        c->agent = false;
    } else if (!strcmp(type, "end")) {
        if (!t->running)
            tui_run_remote_end(t, js(m, "outcome"), json_string_value(json_object_get(m, "trace")));
    }
    t->dirty = true;
}

static size_t attach_fds(void *ctx, struct pollfd *out, size_t max)
{
    struct tui *t = ctx;
    struct tui_attach *a = t->attach;
    size_t n = 0;
    if (!a || !max)
        return 0;
    out[n++] = (struct pollfd){.fd = a->lfd, .events = POLLIN};
    for (int i = 0; i < MAX_CONNS && n < max; i++)
        if (a->c[i].fd >= 0)
            out[n++] = (struct pollfd){.fd = a->c[i].fd, .events = POLLIN};
    return n;
}

static void attach_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct tui *t = ctx;
    struct tui_attach *a = t->attach;
    if (!a)
        return;
    for (size_t k = 1; k < n; k++) {
        if (!p[k].revents)
            continue;
        for (int i = 0; i < MAX_CONNS; i++) {
            struct conn *c = &a->c[i];
            if (c->fd != p[k].fd)
                continue;
            struct msg_ctx mc = {a, c};
            if (sg_attach_read(c->fd, c->rd, handle, &mc) < 0) {
                drop(a, c);
                show_next(a);
                t->dirty = true;
            }
        }
    }
    if (n && (p[0].revents & POLLIN)) {
        int fd = sg_attach_accept(a->lfd);
        for (int i = 0; fd >= 0 && i < MAX_CONNS; i++)
            if (a->c[i].fd < 0) {
                a->c[i].fd = fd;
                a->c[i].rd = sg_xcalloc(1, sizeof *a->c[i].rd);
                a->c[i].skill[0] = '\0';
                fd = -1;
            }
        if (fd >= 0)
            close(fd); /* more runs than we show at once: they fall back to deny */
    }
}

struct sg_loop_source tui_attach_source(struct tui *t)
{
    return (struct sg_loop_source){"attached agents", attach_fds, attach_dispatch, NULL, t};
}
