/* The agent screen: each tool call of the agent that `skillgate hook`
 * decided while this TUI was attached, as it came (tool, what, who
 * decided), newest last. Its prompts are the same modal as a run's. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "tui.h"
#include "util.h"

#define AGENT_ROWS 2000 /* kept; the oldest go first */

struct call {
    int64_t wall_ms;
    char tool[64], summary[512], session[64], cwd[256], outcome[256];
    bool done;
};

struct agent {
    struct call *c; /* a ring of AGENT_ROWS */
    size_t n, first, total; /* total: ever added (row numbers) */
    size_t sel, top;
    bool follow; /* the selection stays on the newest */
};

static struct agent *A(struct tui *t)
{
    struct tui_view *v = &t->views[TUI_S_AGENT];
    if (!v->data) {
        struct agent *a = sg_xcalloc(1, sizeof *a);
        a->c = sg_xcalloc(AGENT_ROWS, sizeof *a->c);
        a->follow = true;
        v->data = a;
    }
    return v->data;
}

static struct call *at(struct agent *a, size_t i)
{
    return &a->c[(a->first + i) % AGENT_ROWS];
}

size_t tui_agent_add(struct tui *t, const char *tool, const char *summary, const char *session,
                     const char *cwd)
{
    struct agent *a = A(t);
    if (a->n == AGENT_ROWS) {
        a->first = (a->first + 1) % AGENT_ROWS;
        a->n--;
        if (a->sel)
            a->sel--;
    }
    struct call *c = at(a, a->n++);
    memset(c, 0, sizeof *c);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->wall_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    snprintf(c->tool, sizeof c->tool, "%s", tool);
    snprintf(c->summary, sizeof c->summary, "%s", summary);
    snprintf(c->session, sizeof c->session, "%s", session);
    snprintf(c->cwd, sizeof c->cwd, "%s", cwd);
    snprintf(c->outcome, sizeof c->outcome, "deciding…");
    if (a->follow)
        a->sel = a->n - 1;
    t->dirty = true;
    return a->total++;
}

void tui_agent_done(struct tui *t, size_t row, const char *outcome)
{
    struct agent *a = A(t);
    size_t oldest = a->total - a->n;
    if (row < oldest || row >= a->total)
        return; /* gone from the ring */
    struct call *c = at(a, row - oldest);
    snprintf(c->outcome, sizeof c->outcome, "%s", outcome);
    c->done = true;
    t->dirty = true;
}

static void open_view(struct tui *t, struct tui_view *v)
{
    (void)v;
    A(t);
}

static enum tui_role role_of(const struct call *c)
{
    if (!c->done)
        return TUI_R_SEV_WARNING;
    if (sg_str_has_prefix(c->outcome, "allowed"))
        return TUI_R_OK;
    if (sg_str_has_prefix(c->outcome, "denied"))
        return TUI_R_SEV_ERROR;
    return TUI_R_DIM;
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    (void)v;
    struct agent *a = A(t);
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    tui_putf(w, 0, 1, cols - 2, hd, "%-8s %-14s %-34s %s", "TIME", "TOOL", "DECISION", "REQUEST");
    if (!a->n) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                 "No tool calls of the agent yet. `skillgate hook install` makes skillgate "
                 "Claude Code's hook; its calls show here as they come.");
        return;
    }
    int list = rows - 4; /* the selected call's details below */
    if (list < 1)
        list = 1;
    if (a->sel < a->top)
        a->top = a->sel;
    if (a->sel >= a->top + (size_t)list)
        a->top = a->sel - (size_t)list + 1;
    for (int i = 0; i < list && a->top + (size_t)i < a->n; i++) {
        size_t k = a->top + (size_t)i;
        const struct call *c = at(a, k);
        bool sel = k == a->sel;
        attr_t at_ = tui_attr(t, sel ? TUI_R_SELECTED : TUI_R_NORMAL);
        tui_fill(w, i + 1, 0, cols, at_);
        char clock[16];
        sg_format_clock(c->wall_ms, clock);
        int x = tui_putf(w, i + 1, 1, cols - 2, at_, "%-8.8s %-14.14s ", clock, c->tool);
        x += tui_putf(w, i + 1, 1 + x, 35, sel ? at_ : tui_attr(t, role_of(c)), "%-34.34s ",
                      c->outcome);
        tui_put(w, i + 1, 1 + x, cols - 2 - x, c->summary, strlen(c->summary), at_);
    }
    const struct call *c = at(a, a->sel);
    attr_t dim = tui_attr(t, TUI_R_DIM);
    tui_putf(w, rows - 3, 1, cols - 2, dim, "session %s   cwd %s", c->session[0] ? c->session : "?",
             c->cwd[0] ? c->cwd : "?");
    tui_putf(w, rows - 2, 1, cols - 2, tui_attr(t, TUI_R_NORMAL), "%s %s", c->tool, c->summary);
    tui_putf(w, rows - 1, 1, cols - 2, tui_attr(t, role_of(c)), "%s", c->outcome);
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action act)
{
    (void)v;
    struct agent *a = A(t);
    switch (act) {
    case TUI_A_UP: if (a->sel) a->sel--; break;
    case TUI_A_DOWN: if (a->sel + 1 < a->n) a->sel++; break;
    case TUI_A_HOME: a->sel = 0; break;
    case TUI_A_END: if (a->n) a->sel = a->n - 1; break;
    default: return false;
    }
    a->follow = a->n && a->sel == a->n - 1;
    return true;
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)v;
    struct agent *a = A(t);
    size_t waiting = 0;
    for (size_t i = 0; i < a->n; i++)
        waiting += !at(a, i)->done;
    snprintf(out, n, "%zu call%s of the agent, %zu deciding   q back", a->total,
             a->total == 1 ? "" : "s", waiting);
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct agent *a = v->data;
    if (!a)
        return;
    free(a->c);
    free(a);
    v->data = NULL;
}

const struct tui_view_ops tui_agent_ops = {
    .name = "Agent", .open = open_view, .draw = draw, .request = request, .status = status,
    .close = close_view,
};
