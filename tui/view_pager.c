/* The pager: any text (help, a dry run's plan, a skill's instructions, a
 * trace) in a scrollable, searchable screen. Text from a skill is drawn
 * through the sanitizer like everything else. */
#include <string.h>

#include "tui.h"
#include "util.h"

struct pager {
    char *title, *text;
    char *trace; /* the trace file shown, if it is one */
    const char **line;
    size_t *len;
    size_t n, top;
    int left, rows, width;
    bool wrap;       /* as last drawn */
    bool force_wrap; /* this text wraps whatever w says */
    char search[256];
    struct mark {          /* a trace's refusals, questions, timeline */
        size_t line;
        enum tui_mark kind;
    } *mark;
    size_t nmark, mark_cap;
    size_t before_timeline; /* where T came from (T again goes back) */
};

static struct pager *P(struct tui_view *v)
{
    if (!v->data)
        v->data = sg_xcalloc(1, sizeof(struct pager));
    return v->data;
}

static void reset(struct pager *p)
{
    free(p->title), free(p->text), free(p->line), free(p->len), free(p->trace), free(p->mark);
    memset(p, 0, sizeof *p);
}

void tui_pager_show(struct tui *t, const char *title, const char *text)
{
    struct pager *p = P(&t->views[TUI_S_PAGER]);
    reset(p);
    p->title = sg_xstrdup(title);
    p->text = sg_xstrdup(text);
    size_t cap = 0, lcap = 0;
    for (const char *s = p->text;; ) {
        const char *nl = strchr(s, '\n');
        sg_grow(&p->line, &cap, p->n + 1, sizeof *p->line);
        sg_grow(&p->len, &lcap, p->n + 1, sizeof *p->len);
        p->line[p->n] = s;
        p->len[p->n++] = nl ? (size_t)(nl - s) : strlen(s);
        if (!nl || !nl[1])
            break;
        s = nl + 1;
    }
    tui_switch(t, TUI_S_PAGER);
}

void tui_pager_wrap(struct tui *t)
{
    P(&t->views[TUI_S_PAGER])->force_wrap = true;
}

void tui_pager_goto(struct tui *t, size_t line)
{
    struct pager *p = P(&t->views[TUI_S_PAGER]);
    p->top = line < p->n ? line : p->n ? p->n - 1 : 0;
}

void tui_pager_set_trace(struct tui *t, const char *path)
{
    struct pager *p = P(&t->views[TUI_S_PAGER]);
    free(p->trace);
    p->trace = sg_xstrdup(path);
}

void tui_pager_mark(struct tui *t, size_t line, enum tui_mark kind)
{
    struct pager *p = P(&t->views[TUI_S_PAGER]);
    if (line >= p->n)
        return;
    sg_grow(&p->mark, &p->mark_cap, p->nmark + 1, sizeof *p->mark);
    p->mark[p->nmark++] = (struct mark){line, kind};
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct pager *p = P(v);
    p->rows = rows - 1;
    tui_fill(w, 0, 0, cols, tui_attr(t, TUI_R_HEADER));
    tui_putf(w, 0, 1, cols - 2, tui_attr(t, TUI_R_HEADER), "%s", p->title ? p->title : "");
    int width = cols - 2;
    p->width = width, p->wrap = t->wrap || p->force_wrap;
    for (int r = 0, i = 0; r < rows - 1 && p->top + (size_t)i < p->n; i++) {
        size_t k = p->top + (size_t)i;
        bool m = p->search[0] && tui_matches(p->line[k], p->len[k], p->search);
        attr_t a = tui_attr(t, m ? TUI_R_MATCH : TUI_R_NORMAL), esc = tui_attr(t, TUI_R_ESCAPED);
        if (p->wrap)
            r += tui_put_wrapped_words(w, r + 1, 1, width, rows - 1 - r, p->line[k], p->len[k], a,
                                       esc);
        else
            tui_put_scrolled(w, ++r, 1, width, p->left, p->line[k], p->len[k], a, esc);
    }
}

static void find(struct pager *p, int dir)
{
    for (size_t k = 1; k <= p->n; k++) {
        size_t i = (p->top + p->n + (size_t)dir * k) % p->n;
        if (tui_matches(p->line[i], p->len[i], p->search)) {
            p->top = i;
            return;
        }
    }
}

static void searched(struct tui *t, const char *text, void *ctx)
{
    struct pager *p = ctx;
    if (!text)
        return;
    snprintf(p->search, sizeof p->search, "%s", text);
    find(p, 1);
    if (p->search[0] && !tui_matches(p->line[p->top], p->len[p->top], p->search))
        tui_message(t, "not found: %s", p->search);
}

/* ] [ } {: the next (dir 1) or previous mark of kind from the top line,
 * round the end; the top line is where it goes (as a search's match). */
static void jump(struct tui *t, struct pager *p, enum tui_action a, enum tui_mark kind, int dir)
{
    const char *what = kind == TUI_MARK_REFUSED ? "refusals" : "questions asked";
    char key[32];
    tui_action_key(&t->keys, a, key, sizeof key);
    if (!p->trace) {
        tui_message(t, "%s jumps between a trace's %s: %s is not a trace", key, what,
                    p->title ? p->title : "this");
        return;
    }
    size_t n = 0, at = 0, first = 0, last = 0, pick = SIZE_MAX;
    for (size_t i = 0; i < p->nmark; i++) {
        if (p->mark[i].kind != kind)
            continue;
        size_t l = p->mark[i].line;
        if (!n++)
            first = l;
        last = l;
        if (dir > 0 && l > p->top && pick == SIZE_MAX)
            pick = l, at = n;
        if (dir < 0 && l < p->top)
            pick = l, at = n;
    }
    if (!n) {
        tui_message(t, "%s jumps between %s: this trace has none", key, what);
        return;
    }
    if (pick == SIZE_MAX) /* round the end */
        pick = dir > 0 ? first : last, at = dir > 0 ? 1 : n;
    p->top = pick;
    tui_message(t, "%s %zu of %zu", kind == TUI_MARK_REFUSED ? "refusal" : "question", at, n);
}

/* T: the trace's timeline, and T again back to where it was read. */
static void timeline(struct tui *t, struct pager *p)
{
    char key[32];
    tui_action_key(&t->keys, TUI_A_TIMELINE, key, sizeof key);
    size_t i = 0;
    while (i < p->nmark && p->mark[i].kind != TUI_MARK_TIMELINE)
        i++;
    if (i == p->nmark) {
        tui_message(t, "%s shows a run's timeline, and %s is not a run's trace", key,
                    p->title ? p->title : "this");
        return;
    }
    if (p->top == p->mark[i].line && p->before_timeline != p->top) {
        p->top = p->before_timeline;
        tui_message(t, "back to line %zu", p->top + 1);
        return;
    }
    p->before_timeline = p->top;
    p->top = p->mark[i].line;
    tui_message(t, "the run's timeline (%s again: back to line %zu)", key,
                p->before_timeline + 1);
}

/* n N: the next match, or why there is none. */
static void search_again(struct tui *t, struct pager *p, int dir)
{
    if (!p->search[0]) {
        tui_message(t, "no search yet: / searches");
        return;
    }
    if (p->n)
        find(p, dir);
    if (!p->n || !tui_matches(p->line[p->top], p->len[p->top], p->search))
        tui_message(t, "not found: %s", p->search);
}

/* The top line that shows the last line at the bottom: with wrap on, a
 * line may take many rows. */
static size_t last_top(const struct pager *p, size_t page)
{
    if (!p->wrap)
        return p->n > page ? p->n - page : 0;
    size_t top = p->n;
    for (int used = 0; top > 0; top--) {
        used += tui_put_wrapped_words(NULL, 0, 0, p->width, p->rows, p->line[top - 1],
                                      p->len[top - 1], 0, 0);
        if (used > p->rows)
            break;
    }
    return top < p->n ? top : p->n ? p->n - 1 : 0;
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct pager *p = P(v);
    size_t page = p->rows > 1 ? (size_t)p->rows - 1 : 1;
    size_t last = last_top(p, page);
    switch (a) {
    case TUI_A_UP: if (p->top) p->top--; return true;
    case TUI_A_DOWN: if (p->top < last) p->top++; return true;
    case TUI_A_PAGE_UP: p->top = p->top > page ? p->top - page : 0; return true;
    case TUI_A_PAGE_DOWN: p->top = p->top + page < last ? p->top + page : last; return true;
    case TUI_A_HOME: p->top = 0; return true;
    case TUI_A_END: p->top = last; return true;
    case TUI_A_LEFT:
    case TUI_A_RIGHT:
        if (p->wrap) /* as last drawn: nothing is cut, nothing to scroll to */
            tui_message(t, p->force_wrap ? "this text wraps: nothing to scroll sideways"
                                         : "long lines wrap: w lets them scroll sideways");
        else if (a == TUI_A_LEFT)
            p->left = p->left > 8 ? p->left - 8 : 0;
        else
            p->left += 8;
        return true;
    case TUI_A_SEARCH: tui_input(t, "search: ", "", searched, p); return true;
    case TUI_A_SEARCH_NEXT:
    case TUI_A_SEARCH_PREV:
        search_again(t, p, a == TUI_A_SEARCH_NEXT ? 1 : -1);
        return true;
    case TUI_A_NEXT_REFUSED: jump(t, p, a, TUI_MARK_REFUSED, 1); return true;
    case TUI_A_PREV_REFUSED: jump(t, p, a, TUI_MARK_REFUSED, -1); return true;
    case TUI_A_NEXT_ASKED: jump(t, p, a, TUI_MARK_ASKED, 1); return true;
    case TUI_A_PREV_ASKED: jump(t, p, a, TUI_MARK_ASKED, -1); return true;
    case TUI_A_TIMELINE: timeline(t, p); return true;
    case TUI_A_COPY:
        if (p->trace)
            tui_copy(t, "trace's path", p->trace);
        return p->trace != NULL;
    case TUI_A_EXPORT:
    case TUI_A_REPORT:
        if (p->trace && a == TUI_A_REPORT)
            tui_trace_report_ask(t, p->trace);
        else if (p->trace)
            tui_trace_export_ask(t, p->trace);
        return p->trace != NULL;
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct pager *p = P(v);
    snprintf(out, n, "line %zu of %zu   / search  n/N next/prev%s  q back", p->n ? p->top + 1 : 0,
             p->n, p->trace ? "  p report  e export" : "");
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    if (v->data)
        reset(v->data);
    free(v->data);
    v->data = NULL;
}

const struct tui_view_ops tui_pager_ops = {
    .name = "Pager", .draw = draw, .request = request, .status = status, .close = close_view,
};
