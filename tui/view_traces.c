/* The traces screen: past runs from the state directory, newest first,
 * sortable and filterable; Enter opens one (timeline, violations with their
 * MITRE ids, decisions, output counts) in the pager; e exports it.
 *
 * The list comes from the folder's index (traceindex.h): a name, a stat and
 * an index line per trace. Traces the index does not know yet are read by a
 * child process, newest first, which hands their lines back through a pipe
 * (a source of the TUI's loop) and adds them to the index: the screen is
 * there at once, with "reading" rows, and no key ever waits on a trace of
 * megabytes (a fork, not a thread: a run's raw clone must not copy a lock a
 * parsing thread holds). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attempts.h"
#include "report.h"
#include "timeline.h"
#include "trace.h"
#include "tracediff.h"
#include "traceindex.h"
#include "tui.h"
#include "util.h"

#define MAX_TRACES 1000                /* the newest; older ones stay on disk */

struct row {
    char *file, *skill, *status, *started, *severity;
    long long duration_ms;
    int exit_code;
    bool has_exit, loaded, unreadable;
    unsigned long blocked, asked; /* attempts.h: the same counts as the run's */
    int sev_rank;
};

enum sort_key { SORT_TIME, SORT_SKILL, SORT_STATUS, SORT_DURATION, SORT_SEVERITY, SORT_COUNT };
static const char *const sort_names[] = {"time", "skill", "status", "duration", "severity"};

struct traces {
    struct row *v;                     /* by file name, newest first */
    size_t n, sel, top;
    size_t *shown, nshown;
    int rows;
    enum sort_key sort;
    bool reverse;
    char filter[128];
    char filter_was[128]; /* the filter before f or /: Esc puts it back */
    char *dir;
    char *mark;                        /* the file of the run marked to compare with (v) */
    size_t unreadable, pending;
    /* the reader: a child process, its pipe, the line it is in the middle of */
    pid_t pid;
    int fd;
    char part[SG_TRACE_INDEX_LINE_MAX + 1];
    size_t plen;
};

static struct traces *T(struct tui_view *v)
{
    if (!v->data) {
        struct traces *s = sg_xcalloc(1, sizeof(struct traces));
        s->fd = -1;
        v->data = s;
    }
    return v->data;
}

static int sev_rank(const char *s)
{
    static const char *const r[] = {"none", "low", "medium", "high", "critical"};
    for (int i = 0; i < 5; i++)
        if (s && !strcmp(s, r[i]))
            return i;
    return -1;
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void set_str(char **p, const char *v)
{
    free(*p);
    *p = sg_xstrdup(v);
}

static void row_fill(struct row *r, json_t *e)
{
    set_str(&r->skill, jstr(e, "skill_name"));
    set_str(&r->status, jstr(e, "status"));
    set_str(&r->started, jstr(e, "started_at"));
    set_str(&r->severity, jstr(e, "max_severity"));
    r->sev_rank = sev_rank(r->severity);
    r->duration_ms = json_integer_value(json_object_get(e, "duration_ms"));
    json_t *ec = json_object_get(e, "exit_code");
    r->has_exit = json_is_integer(ec);
    r->exit_code = (int)json_integer_value(ec);
    struct sg_attempts att;
    sg_attempts_from_json(&att, json_object_get(e, "attempts"));
    r->blocked = sg_attempts_total(&att, SG_ATT_BLOCKED);
    r->asked = sg_attempts_total(&att, SG_ATT_ASKED);
    r->loaded = true;
}

/* Until its line comes: the skill and the time from the file's name
 * (STAMP-SKILL-PID-HEX.json, the stamp of when it was written). */
static void row_placeholder(struct row *r)
{
    const char *f = r->file;
    char started[32] = "";
    if (strlen(f) > 17 && f[8] == 'T' && f[15] == 'Z' && f[16] == '-')
        snprintf(started, sizeof started, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", f, f + 4, f + 6, f + 9,
                 f + 11, f + 13);
    cleanup_free char *skill = sg_xstrdup(strlen(f) > 17 ? f + 17 : f);
    for (int k = 0; k < 2; k++) {
        char *dash = strrchr(skill, '-');
        if (dash)
            *dash = '\0';
    }
    set_str(&r->skill, skill);
    set_str(&r->started, started);
    set_str(&r->status, "");
    set_str(&r->severity, "");
    r->sev_rank = -1;
}

static void free_rows(struct traces *s)
{
    for (size_t i = 0; i < s->n; i++) {
        struct row *r = &s->v[i];
        free(r->file), free(r->skill), free(r->status), free(r->started), free(r->severity);
    }
    free(s->v), free(s->shown);
    s->v = NULL, s->shown = NULL;
    s->n = s->nshown = 0;
}

static int cmp_name_desc(const void *a, const void *b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

static enum sort_key g_sort;
static bool g_rev;
static const struct row *g_rows;

static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = &g_rows[*(const size_t *)a], *y = &g_rows[*(const size_t *)b];
    int c = 0;
    switch (g_sort) {
    case SORT_TIME: c = -strcmp(x->started, y->started); break;
    case SORT_SKILL: c = strcmp(x->skill, y->skill); break;
    case SORT_STATUS: c = strcmp(x->status, y->status); break;
    case SORT_DURATION: c = (x->duration_ms < y->duration_ms) - (x->duration_ms > y->duration_ms); break;
    case SORT_SEVERITY: c = y->sev_rank - x->sev_rank; break;
    case SORT_COUNT: break;
    }
    if (!c)
        c = -strcmp(x->file, y->file);
    return g_rev ? -c : c;
}

/* Filter and sort; the selected trace stays selected wherever it moves. */
static void refilter(struct traces *s)
{
    const char *was = s->sel < s->nshown ? s->v[s->shown[s->sel]].file : NULL;
    cleanup_free char *keep = was ? sg_xstrdup(was) : NULL;
    s->nshown = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct row *r = &s->v[i];
        if (r->unreadable)
            continue;
        if (s->filter[0] && !strcasestr(r->skill, s->filter) && !strcasestr(r->status, s->filter) &&
            !strcasestr(r->severity, s->filter) && !strcasestr(r->file, s->filter))
            continue;
        s->shown[s->nshown++] = i;
    }
    g_sort = s->sort, g_rev = s->reverse, g_rows = s->v;
    if (s->nshown)
        qsort(s->shown, s->nshown, sizeof *s->shown, cmp_rows);
    for (size_t k = 0; keep && k < s->nshown; k++)
        if (!strcmp(s->v[s->shown[k]].file, keep))
            s->sel = k;
    if (s->sel >= s->nshown)
        s->sel = s->nshown ? s->nshown - 1 : 0;
}

static void stop_reader(struct traces *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (s->fd >= 0)
        close(s->fd);
    s->pid = 0, s->fd = -1, s->plen = 0;
}

/* The child: each name's index line to the pipe (one write, under
 * PIPE_BUF), and to the index; with rewrite, the whole index
 * anew at the end (the lines the parent had, and these). */
static _Noreturn void reader(int dfd, int out, char **names, size_t n, json_t *fresh, bool rewrite)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGPIPE};
    for (size_t i = 0; i < SG_ARRAY_LEN(sigs); i++)
        signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setpriority(PRIO_PROCESS, 0, 10); /* after a live run's broker */
    json_t *batch = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *doc = sg_trace_load_at(dfd, names[i]);
        /* one that is not a trace is remembered as such, not read again */
        json_t *e = sg_trace_index_entry(dfd, names[i], doc);
        json_decref(doc);
        if (e && !doc)
            json_object_set_new(e, "unreadable", json_true());
        if (e) {
            json_array_append(batch, e);
            json_array_append(fresh, e);
        } else {
            e = json_pack("{s:s, s:b}", "file", names[i], "unreadable", 1);
        }
        cleanup_free char *line = json_dumps(e, JSON_COMPACT);
        json_decref(e);
        if (line && strlen(line) < SG_TRACE_INDEX_LINE_MAX) {
            struct sg_buf b;
            sg_buf_init(&b, SG_TRACE_INDEX_LINE_MAX + 1);
            sg_buf_printf(&b, "%s\n", line);
            if (write(out, b.data, b.len) != (ssize_t)b.len)
                _exit(1); /* the screen is gone */
            sg_buf_free(&b);
        }
        if (!rewrite && json_array_size(batch)) { /* each at once: a reload kills us */
            sg_trace_index_put(dfd, batch, false);
            json_array_clear(batch);
        }
    }
    if (rewrite)
        sg_trace_index_put(dfd, fresh, true);
    _exit(0);
}

static void start_reader(struct traces *s, int dfd, char **names, size_t n, json_t *fresh,
                         bool rewrite)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        reader(dfd, p[1], names, n, fresh, rewrite);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    s->pid = pid, s->fd = p[0], s->plen = 0;
}

static int cmp_row_file(const void *key, const void *r)
{
    return -strcmp(key, ((const struct row *)r)->file);
}

static void reader_line(struct traces *s, const char *line, size_t len)
{
    json_t *e = json_loadb(line, len, 0, NULL);
    const char *f = json_string_value(json_object_get(e, "file"));
    struct row *r = f ? bsearch(f, s->v, s->n, sizeof *s->v, cmp_row_file) : NULL;
    if (r && !r->loaded && !r->unreadable) {
        if (json_is_true(json_object_get(e, "unreadable")))
            r->unreadable = true, s->unreadable++;
        else
            row_fill(r, e);
        s->pending--;
    }
    json_decref(e);
}

static void open_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct traces *s = T(v);
    stop_reader(s);
    /* the selected trace stays selected over a reload */
    cleanup_free char *was = s->sel < s->nshown ? sg_xstrdup(s->v[s->shown[s->sel]].file) : NULL;
    free_rows(s);
    free(s->dir);
    cleanup_free char *state = sg_state_dir();
    s->dir = sg_xasprintf("%s/traces", state);
    s->unreadable = s->pending = 0;
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
    char **names = NULL;
    size_t nn = 0, cap = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!sg_str_has_suffix(e->d_name, ".json") || e->d_name[0] == '.')
            continue;
        sg_grow(&names, &cap, nn + 1, sizeof *names);
        names[nn++] = sg_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_name_desc);
    size_t lines = 0;
    json_t *index = dfd >= 0 ? sg_trace_index_load(dfd, &lines) : json_object();
    json_t *fresh = json_array();
    char **todo = sg_xcalloc(nn ? nn : 1, sizeof *todo);
    size_t ntodo = 0;
    s->v = sg_xcalloc(nn ? nn : 1, sizeof *s->v);
    for (size_t i = 0; i < nn; i++) {
        if (i >= MAX_TRACES) {
            free(names[i]);
            continue;
        }
        struct row *r = &s->v[s->n++];
        r->file = names[i];
        json_t *e = json_object_get(index, names[i]);
        if (sg_trace_index_fresh(dfd, names[i], e)) {
            row_placeholder(r);
            if (json_is_true(json_object_get(e, "unreadable")))
                r->unreadable = true, s->unreadable++;
            else
                row_fill(r, e);
            json_array_append(fresh, e);
        } else {
            row_placeholder(r);
            todo[ntodo++] = r->file;
        }
    }
    free(names);
    s->pending = ntodo;
    /* stale lines (pruned or rewritten traces) past the live ones: rewrite */
    bool rewrite = lines > 2 * (json_array_size(fresh) + ntodo) + 64;
    if (dfd >= 0 && (ntodo || rewrite))
        start_reader(s, dfd, todo, ntodo, fresh, rewrite);
    if (!s->pid)
        s->pending = 0;
    free(todo);
    json_decref(fresh);
    json_decref(index);
    s->shown = sg_xcalloc(s->n ? s->n : 1, sizeof *s->shown);
    refilter(s);
    for (size_t k = 0; was && k < s->nshown; k++)
        if (!strcmp(s->v[s->shown[k]].file, was))
            s->sel = k;
}

/* ---- the reader as a source of the TUI's loop ---- */

static size_t reader_fds(void *ctx, struct pollfd *out, size_t max)
{
    struct tui *t = ctx;
    struct traces *s = t->views[TUI_S_TRACES].data;
    if (!s || s->fd < 0 || !max)
        return 0;
    out[0] = (struct pollfd){.fd = s->fd, .events = POLLIN};
    return 1;
}

static void reader_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct tui *t = ctx;
    struct traces *s = t->views[TUI_S_TRACES].data;
    if (!s || s->fd < 0 || !n || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    char buf[65536];
    ssize_t r = read(s->fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    for (ssize_t i = 0; i < r; i++) {
        if (buf[i] != '\n') {
            if (s->plen < SG_TRACE_INDEX_LINE_MAX)
                s->part[s->plen++] = buf[i];
            continue;
        }
        reader_line(s, s->part, s->plen);
        s->plen = 0;
    }
    if (r <= 0) { /* done (or gone): rows it never named stay unreadable */
        stop_reader(s);
        for (size_t i = 0; i < s->n; i++)
            if (!s->v[i].loaded && !s->v[i].unreadable)
                s->v[i].unreadable = true, s->unreadable++;
        s->pending = 0;
    }
    refilter(s);
    tui_mark_dirty(t);
}

bool tui_traces_busy(struct tui *t)
{
    struct traces *s = t->views[TUI_S_TRACES].data;
    return s && s->fd >= 0;
}

struct sg_loop_source tui_traces_source(struct tui *t)
{
    return (struct sg_loop_source){"traces", reader_fds, reader_dispatch, NULL, t};
}

/* The arrow points the way the list goes: down from the newest, the
 * longest, the most severe, A; up once reversed. */
static const char *sort_mark(const struct traces *s)
{
    return s->reverse ? "\xe2\x86\x91" : "\xe2\x86\x93"; /* ↑ ↓ */
}

/* A column of width cells and the blank after it: a longer text is cut
 * with ›, as every cut on screen is (setup_failed, a long skill name). */
static int cell(WINDOW *w, int y, int x, int width, attr_t a, const char *text)
{
    tui_put(w, y, x, width, text, strlen(text), a);
    return width + 1;
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct traces *s = T(v);
    if (!s->dir)
        open_view(t, v);
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    /* the columns of a row (below); the sort column carries its arrow */
    static const struct {
        int x;
        const char *label;
        enum sort_key key;
    } head[] = {{1, "STARTED (UTC)", SORT_TIME}, {16, "SKILL", SORT_SKILL},
                {35, "STATUS", SORT_STATUS},     {46, "EXIT", SORT_COUNT},
                {53, "TIME", SORT_DURATION},     {59, "SEVERITY", SORT_SEVERITY},
                {69, "BLOCK", SORT_COUNT},       {75, "ASKS", SORT_COUNT}};
    for (size_t i = 0; i < SG_ARRAY_LEN(head) && head[i].x < cols - 1; i++)
        tui_putf(w, 0, head[i].x, cols - 1 - head[i].x, hd, "%s%s", head[i].label,
                 head[i].key == s->sort ? sort_mark(s) : "");
    s->rows = rows - 1;
    if (!s->nshown) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM), "%s",
                 s->n > s->unreadable ? "No matches: no trace has that text (f to change the filter)."
                 : s->n ? "No readable traces (each one is unreadable or not a trace)."
                        : "No traces yet: every run writes one. Run a skill from the skills screen.");
        return;
    }
    if (s->sel < s->top)
        s->top = s->sel;
    if (s->sel >= s->top + (size_t)s->rows)
        s->top = s->sel - (size_t)s->rows + 1;
    for (int i = 0; i < s->rows && s->top + (size_t)i < s->nshown; i++) {
        size_t k = s->top + (size_t)i;
        const struct row *r = &s->v[s->shown[k]];
        bool sel = k == s->sel;
        attr_t a = tui_attr(t, sel ? TUI_R_SELECTED : TUI_R_NORMAL);
        tui_fill(w, i + 1, 0, cols, a);
        if (s->mark && !strcmp(s->mark, r->file))
            tui_putf(w, i + 1, 0, 1, a, "*");
        char when[20];
        snprintf(when, sizeof when, "%.5s %.8s", strlen(r->started) >= 19 ? r->started + 5 : "",
                 strlen(r->started) >= 19 ? r->started + 11 : "");
        int x = tui_putf(w, i + 1, 1, cols - 2, a, "%-14s ", when);
        x += cell(w, i + 1, 1 + x, 18, a, r->skill);
        if (!r->loaded) {
            tui_putf(w, i + 1, 1 + x, cols - 2 - x, sel ? a : tui_attr(t, TUI_R_DIM), "reading…");
            continue;
        }
        bool ok = !strcmp(r->status, "completed") && r->has_exit && !r->exit_code;
        attr_t sa = sel ? a : tui_attr(t, ok ? TUI_R_OK : TUI_R_SEV_WARNING);
        x += cell(w, i + 1, 1 + x, 10, sa, r->status);
        if (r->has_exit)
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, r->exit_code ? sa : a, "%4d ", r->exit_code);
        else
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%4s ", "-");
        if (r->duration_ms < 100000)
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%5lldms ", r->duration_ms);
        else
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%6llds ", r->duration_ms / 1000);
        attr_t va = sel ? a : tui_severity_attr(t, r->sev_rank >= 3 ? 3 : r->sev_rank >= 1 ? 2 : 0);
        x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, va, "%-9s ", r->severity);
        tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%5lu %4lu", r->blocked, r->asked);
    }
}

/* ---- one trace as text ---- */

/* Where the trace's text marks lines for the pager: its refusals, its
 * questions, its timeline (] [ } { T); a line's number is the count of
 * newlines before it (a message's own newline included: the pager splits
 * there too). */
struct marks {
    struct {
        size_t line;
        enum tui_mark kind;
    } *v;
    size_t n, cap;
    size_t lines, counted; /* newlines in the text up to counted */
};

static void mark_here(struct marks *m, const struct sg_buf *b, enum tui_mark kind)
{
    for (; m->counted < b->len; m->counted++)
        m->lines += b->data[m->counted] == '\n';
    sg_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
    m->v[m->n].line = m->lines;
    m->v[m->n++].kind = kind;
}

/* The timeline: every event in full, its data under it (w wraps it),
 * output aside; a refusal or a question marked where it starts. */
static void timeline_text(struct sg_buf *b, json_t *doc, struct marks *m)
{
    size_t i;
    json_t *c;
    sg_buf_printf(b, "\nTimeline\n");
    json_array_foreach(json_object_get(doc, "events"), i, c)
    {
        struct sg_attempts one = {0};
        sg_attempts_add_json(&one, c);
        if (sg_attempts_total(&one, SG_ATT_BLOCKED) || sg_attempts_total(&one, SG_ATT_ASKED))
            mark_here(m, b, sg_attempts_total(&one, SG_ATT_BLOCKED) ? TUI_MARK_REFUSED
                                                                      : TUI_MARK_ASKED);
        const char *ts = jstr(c, "timestamp");
        const char *kind = jstr(c, "kind");
        sg_buf_printf(b, "  %.12s %-26s %s\n", strlen(ts) > 11 ? ts + 11 : ts, kind,
                      jstr(c, "message"));
        json_t *data = json_object_get(c, "data");
        if (json_object_size(data) && strcmp(kind, "stdout") && strcmp(kind, "stderr")) {
            cleanup_free char *dj = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (dj)
                sg_buf_printf(b, "               %-26s %s\n", "", dj);
        }
        if (json_integer_value(json_object_get(c, "repeated")) > 0)
            sg_buf_printf(b, "               %-26s (and %lld more times)\n", "",
                          (long long)json_integer_value(json_object_get(c, "repeated")));
    }
}

static char *trace_text(json_t *doc, const char *path, struct marks *m)
{
    struct sg_buf b;
    sg_buf_init(&b, 32u << 20);
    json_t *vs = json_object_get(doc, "violation_summary");
    sg_buf_printf(&b, "%s  %s\n", jstr(doc, "skill_name"), jstr(doc, "trace_id"));
    sg_buf_printf(&b, "file:      %s\n", path);
    sg_buf_printf(&b, "started:   %s   duration %lld ms\n", jstr(doc, "started_at"),
                  (long long)json_integer_value(json_object_get(doc, "duration_ms")));
    sg_buf_printf(&b, "status:    %s, exit %lld%s\n", jstr(doc, "status"),
                  (long long)json_integer_value(json_object_get(doc, "exit_code")),
                  json_is_true(json_object_get(doc, "degraded")) ? "   DEGRADED (no Landlock)" : "");
    long long ne = (long long)json_integer_value(json_object_get(vs, "total_enforcements"));
    sg_buf_printf(&b, "severity:  %s, %lld enforcement%s, all prevented: %s\n",
                  jstr(vs, "max_severity"), ne, ne == 1 ? "" : "s",
                  json_is_true(json_object_get(vs, "all_prevented")) ? "yes" : "no");
    json_t *out = json_object_get(doc, "output");
    sg_buf_printf(&b, "output:    %lld bytes stdout, %lld stderr (%lld, %lld dropped)\n",
                  (long long)json_integer_value(json_object_get(out, "stdout_bytes")),
                  (long long)json_integer_value(json_object_get(out, "stderr_bytes")),
                  (long long)json_integer_value(json_object_get(out, "stdout_dropped")),
                  (long long)json_integer_value(json_object_get(out, "stderr_dropped")));
    size_t i;
    json_t *c;
    struct sg_attempts att = {0};
    json_array_foreach(json_object_get(doc, "events"), i, c)
        sg_attempts_add_json(&att, c);
    cleanup_free char *tally = sg_attempts_text(&att);
    sg_buf_printf(&b, "attempted: %s\n", tally);
    /* the run on one time axis: output rate, refusals x, questions ?, allowed + */
    struct tui_timeline *tl = sg_xmalloc(sizeof *tl);
    tui_tl_from_trace(tl, doc);
    cleanup_free char *tlt = tui_tl_text(tl, tl->last_ms, 64);
    free(tl);
    sg_buf_printf(&b, "\n");
    mark_here(m, &b, TUI_MARK_TIMELINE);
    sg_buf_printf(&b, "Timeline (x refused, ? asked, + allowed)\n%s", tlt);
    sg_buf_printf(&b, "\nViolations\n");
    if (!json_array_size(json_object_get(vs, "classifications")))
        sg_buf_printf(&b, "  none\n");
    json_array_foreach(json_object_get(vs, "classifications"), i, c)
    {
        sg_buf_printf(&b, "  %-24s %-8s %s %s  x%lld\n", jstr(c, "class"), jstr(c, "severity"),
                      jstr(c, "mitre_technique"), jstr(c, "mitre_tactic"),
                      (long long)json_integer_value(json_object_get(c, "count")));
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(c, "evidence"), k, e)
        {
            if (k >= 5)
                break;
            sg_buf_printf(&b, "      %s\n", json_string_value(e) ? json_string_value(e) : "");
        }
    }
    sg_buf_printf(&b, "\nDecisions\n");
    if (!json_array_size(json_object_get(doc, "decisions")))
        sg_buf_printf(&b, "  none\n");
    json_array_foreach(json_object_get(doc, "decisions"), i, c)
    {
        sg_buf_printf(&b, "  %s: %s (%s, %s, after %lld ms)\n", jstr(c, "request"),
                      jstr(c, "decision"), jstr(c, "decided_by"), jstr(c, "scope"),
                      (long long)json_integer_value(json_object_get(c, "latency_ms")));
    }
    timeline_text(&b, doc, m);
    return sg_buf_steal(&b);
}

void tui_trace_open(struct tui *t, const char *path)
{
    cleanup_free char *dir = sg_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        tui_message(t, "not a trace path: %s", path);
        return;
    }
    *slash = '\0';
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *doc = dfd >= 0 ? sg_trace_load_at(dfd, slash + 1) : NULL;
    if (!doc) {
        tui_message(t, "cannot read the trace %s", path);
        return;
    }
    struct marks m = {0};
    cleanup_free char *text = trace_text(doc, path, &m);
    cleanup_free char *title = sg_xasprintf("Trace of %s (e exports it)", jstr(doc, "skill_name"));
    json_decref(doc);
    tui_pager_show(t, title, text);
    tui_pager_set_trace(t, path);
    for (size_t i = 0; i < m.n; i++)
        tui_pager_mark(t, m.v[i].line, m.v[i].kind);
    free(m.v);
}

/* A copy of the trace at dest, whole or not at all: written beside it and
 * renamed (over an existing file only with overwrite). */
int tui_trace_export(const char *path, const char *dest, bool overwrite)
{
    cleanup_fd int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0)
        return -errno;
    struct stat st;
    if (!overwrite && lstat(dest, &st) == 0)
        return -EEXIST;
    cleanup_free char *tmp = sg_xasprintf("%s.tmp.%d", dest, (int)getpid());
    cleanup_fd int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0)
        return -errno;
    char buf[65536];
    ssize_t n;
    int r = 0;
    while (!r && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0) {
            r = errno == EINTR ? 0 : -errno;
            continue;
        }
        for (ssize_t o = 0; !r && o < n;) {
            ssize_t w = write(out, buf + o, (size_t)(n - o));
            if (w < 0)
                r = errno == EINTR ? 0 : -errno;
            else
                o += w;
        }
    }
    if (!r && fsync(out) < 0)
        r = -errno;
    if (!r && (overwrite ? rename(tmp, dest) : renameat2(AT_FDCWD, tmp, AT_FDCWD, dest,
                                                         RENAME_NOREPLACE)) < 0)
        r = -errno;
    if (r)
        unlink(tmp);
    return r;
}

/* The HTML report of the trace at path (records/report.h), diffed against
 * the skill's previous version's run where the folder has one, at dest:
 * whole or not at all, as an export. */
int tui_trace_report(const char *path, const char *dest, bool overwrite)
{
    cleanup_free char *dir = sg_xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : path;
    if (slash)
        *slash = '\0';
    cleanup_fd int dfd = open(slash ? (dir[0] ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *doc = dfd >= 0 ? sg_trace_load_at(dfd, name) : NULL;
    if (!doc)
        return dfd < 0 ? -errno : -EINVAL;
    json_t *rows = sg_trace_index_rows(dfd);
    json_t *pr = sg_report_prev_row(rows, doc);
    json_t *prev = pr ? sg_trace_load_at(dfd, json_string_value(json_object_get(pr, "file"))) : NULL;
    struct stat st;
    int r = 0;
    cleanup_free char *tmp = sg_xasprintf("%s.tmp.%d", dest, (int)getpid());
    FILE *f = NULL;
    if (!overwrite && lstat(dest, &st) == 0)
        r = -EEXIST;
    int fd = r ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (!r && (fd < 0 || !(f = fdopen(fd, "w"))))
        r = -errno;
    if (!r)
        r = sg_report_write(doc, prev, SG_REPORT_HTML, f);
    if (!r && (fflush(f) != 0 || fsync(fileno(f)) < 0))
        r = -errno;
    if (f)
        fclose(f);
    else if (fd >= 0)
        close(fd);
    if (!r && (overwrite ? rename(tmp, dest) : renameat2(AT_FDCWD, tmp, AT_FDCWD, dest,
                                                         RENAME_NOREPLACE)) < 0)
        r = -errno;
    if (r && fd >= 0)
        unlink(tmp);
    json_decref(prev);
    json_decref(rows);
    json_decref(doc);
    return r;
}

/* ---- e: export, p: a report, from the list, the run screen or an open trace ---- */

static struct {
    char from[4096], to[4096];
    bool report;
} export_job;

static int export_write(bool overwrite)
{
    return export_job.report ? tui_trace_report(export_job.from, export_job.to, overwrite)
                             : tui_trace_export(export_job.from, export_job.to, overwrite);
}

static void export_done(struct tui *t, int e)
{
    const char *what = export_job.report ? "report" : "export";
    if (e < 0)
        tui_message(t, "%s to %s failed: %s", what, export_job.to, strerror(-e));
    else if (export_job.report)
        tui_message(t, "report written to %s (one file: open it in a browser, or share it)",
                    export_job.to);
    else
        tui_message(t, "trace exported to %s", export_job.to);
}

static void overwrite_confirmed(struct tui *t, const char *text, void *ctx)
{
    (void)ctx;
    if (text && (text[0] == 'y' || text[0] == 'Y'))
        export_done(t, export_write(true));
    else
        tui_message(t, "nothing written: %s is left as it was", export_job.to);
}

static void export_to(struct tui *t, const char *text, void *ctx)
{
    (void)ctx;
    if (!text || !text[0])
        return;
    const char *home = sg_invoking_home();
    if (!strncmp(text, "~/", 2) && home)
        snprintf(export_job.to, sizeof export_job.to, "%s/%s", home, text + 2);
    else
        snprintf(export_job.to, sizeof export_job.to, "%s", text);
    int e = export_write(false);
    if (e == -EEXIST) {
        cleanup_free char *q = sg_xasprintf("%s exists: overwrite it? y/N ", export_job.to);
        tui_confirm(t, q, overwrite_confirmed, NULL);
        return;
    }
    export_done(t, e);
}

static void ask_where(struct tui *t, const char *path, bool report)
{
    snprintf(export_job.from, sizeof export_job.from, "%s", path);
    export_job.report = report;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (report && bl > 5 && !strcmp(base + bl - 5, ".json"))
        bl -= 5;
    /* your home, not wherever skillgate was started from */
    const char *home = sg_invoking_home();
    cleanup_free char *def = sg_xasprintf("%s%s%.*s%s", home ? home : "", home ? "/" : "",
                                          (int)bl, base, report ? ".html" : "");
    tui_input(t, report ? "write the run's report (HTML) to: " : "export the trace to: ", def,
              export_to, NULL);
}

void tui_trace_export_ask(struct tui *t, const char *path)
{
    ask_where(t, path, false);
}

void tui_trace_report_ask(struct tui *t, const char *path)
{
    ask_where(t, path, true);
}

/* ---- c: what changed between two runs ---- */

/* The run of the same skill that started last before r (NULL: none). */
static const struct row *run_before(const struct traces *s, const struct row *r)
{
    const struct row *best = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const struct row *o = &s->v[i];
        if (o == r || o->unreadable || strcmp(o->skill, r->skill) ||
            strcmp(o->started, r->started) > 0 ||
            (!strcmp(o->started, r->started) && strcmp(o->file, r->file) >= 0))
            continue;
        if (!best || strcmp(o->started, best->started) > 0 ||
            (!strcmp(o->started, best->started) && strcmp(o->file, best->file) > 0))
            best = o;
    }
    return best;
}

/* The marked run (or the one before) against the selected one, in the pager. */
static void show_runs_diff(struct tui *t, struct traces *s, const struct row *r)
{
    const char *a_file = s->mark && strcmp(s->mark, r->file) ? s->mark : NULL;
    if (!a_file) {
        const struct row *prev = run_before(s, r);
        if (!prev) {
            tui_message(t, "no earlier run of %s: v marks a run to compare this one with",
                        r->skill);
            return;
        }
        a_file = prev->file;
    }
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *a = dfd >= 0 ? sg_trace_load_at(dfd, a_file) : NULL;
    json_t *b = dfd >= 0 ? sg_trace_load_at(dfd, r->file) : NULL;
    if (!a || !b) {
        tui_message(t, "cannot read the trace %s", a ? r->file : a_file);
    } else {
        json_t *d = sg_trace_diff(a, b, a_file, r->file);
        cleanup_free char *text = sg_trace_diff_text(d);
        cleanup_free char *title = sg_xasprintf("What changed: %s, %s against %s", r->skill,
                                                r->started, jstr(a, "started_at"));
        json_decref(d);
        tui_pager_show(t, title, text);
    }
    json_decref(a);
    json_decref(b);
}

/* ---- keys ---- */

/* As you type, what is typed is the filter; Enter keeps it (empty: every
 * trace), Esc (text NULL) puts back the one before. */
static void filter_changed(struct tui *t, const char *text, void *ctx)
{
    (void)t;
    struct traces *s = ctx;
    snprintf(s->filter, sizeof s->filter, "%s", text ? text : s->filter_was);
    refilter(s);
}

static void filtered(struct tui *t, const char *text, void *ctx)
{
    struct traces *s = ctx;
    filter_changed(t, text, ctx);
    if (s->filter[0] && !s->nshown)
        tui_message(t, "no matches for \"%s\"", s->filter);
}

/* f and /: a new filter, never added to the old one ("net" then "warning"
 * is "warning"); the line says what it replaces. */
static void ask_filter(struct tui *t, struct traces *s)
{
    snprintf(s->filter_was, sizeof s->filter_was, "%s", s->filter);
    cleanup_free char *label =
        s->filter[0] ? sg_xasprintf("filter traces, replacing \"%s\" (Esc keeps it): ", s->filter)
                     : sg_xstrdup("filter traces (skill, status, severity): ");
    tui_input_live(t, label, "", filter_changed, filtered, s);
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct traces *s = T(v);
    size_t page = s->rows > 1 ? (size_t)s->rows - 1 : 1;
    const struct row *r = s->sel < s->nshown ? &s->v[s->shown[s->sel]] : NULL;
    if (!r && (a == TUI_A_MARK || a == TUI_A_DIFF || a == TUI_A_COPY || a == TUI_A_ENTER ||
               a == TUI_A_EXPORT || a == TUI_A_REPORT)) {
        tui_message(t, "no trace to %s: %s",
                    a == TUI_A_ENTER ? "open" : a == TUI_A_DIFF ? "compare" : tui_action_name(a),
                    s->filter[0] ? "none matches the filter (f changes it)" : "no run yet");
        return true;
    }
    switch (a) {
    case TUI_A_UP: if (s->sel) s->sel--; return true;
    case TUI_A_DOWN: if (s->sel + 1 < s->nshown) s->sel++; return true;
    case TUI_A_PAGE_UP: s->sel = s->sel > page ? s->sel - page : 0; return true;
    case TUI_A_PAGE_DOWN:
        s->sel = s->sel + page < s->nshown ? s->sel + page : s->nshown ? s->nshown - 1 : 0;
        return true;
    case TUI_A_HOME: s->sel = 0; return true;
    case TUI_A_END: s->sel = s->nshown ? s->nshown - 1 : 0; return true;
    case TUI_A_RELOAD: open_view(t, v); tui_message(t, "%zu traces", s->n); return true;
    case TUI_A_SORT:
    case TUI_A_SORT_REVERSE:
        if (a == TUI_A_SORT)
            s->sort = (enum sort_key)((s->sort + 1) % SORT_COUNT), s->reverse = false;
        else
            s->reverse = !s->reverse;
        refilter(s);
        tui_message(t, "sorted by %s%s", sort_names[s->sort], s->reverse ? ", reversed" : "");
        return true;
    case TUI_A_FILTER:
    case TUI_A_SEARCH: ask_filter(t, s); return true;
    case TUI_A_MARK:
        if (!r)
            return true;
        if (s->mark && !strcmp(s->mark, r->file)) {
            free(s->mark);
            s->mark = NULL;
            tui_message(t, "mark removed: c compares a run with the one before it");
        } else {
            set_str(&s->mark, r->file);
            tui_message(t, "marked %s %s: c on another run shows what changed since", r->skill,
                        r->started);
        }
        return true;
    case TUI_A_DIFF:
        if (r)
            show_runs_diff(t, s, r);
        return true;
    case TUI_A_COPY:
        if (r) {
            cleanup_free char *p = sg_xasprintf("%s/%s", s->dir, r->file);
            tui_copy(t, "trace's path", p);
        }
        return true;
    case TUI_A_ENTER:
    case TUI_A_EXPORT:
    case TUI_A_REPORT:
        if (r) {
            cleanup_free char *p = sg_xasprintf("%s/%s", s->dir, r->file);
            if (a == TUI_A_ENTER)
                tui_trace_open(t, p);
            else if (a == TUI_A_REPORT)
                tui_trace_report_ask(t, p);
            else
                tui_trace_export_ask(t, p);
        }
        return true;
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct traces *s = T(v);
    char reading[64] = "";
    if (s->pending)
        snprintf(reading, sizeof reading, ", reading %zu…", s->pending);
    char unread[48] = "";
    if (s->unreadable)
        snprintf(unread, sizeof unread, ", %zu unreadable", s->unreadable);
    snprintf(out, n, "%zu of %zu traces%s%s, by %s%s%s%s%s  Enter open  / filter  c changes  "
                     "p report  v mark  e export  s sort  S reverse  R reload  ? help  q back",
             s->nshown, s->n - s->unreadable, reading, unread, sort_names[s->sort],
             s->reverse ? " reversed" : "", s->filter[0] ? ", filter \"" : "", s->filter,
             s->filter[0] ? "\"" : "");
}

static void click(struct tui *t, struct tui_view *v, int y, int x)
{
    (void)t, (void)x;
    struct traces *s = T(v);
    size_t k = s->top + (size_t)(y - 1);
    if (y >= 1 && y <= s->rows && k < s->nshown)
        s->sel = k;
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct traces *s = v->data;
    if (!s)
        return;
    stop_reader(s);
    free_rows(s);
    free(s->dir);
    free(s->mark);
    free(s);
    v->data = NULL;
}

const struct tui_view_ops tui_traces_ops = {
    .name = "Traces", .open = open_view, .draw = draw, .request = request, .status = status,
    .close = close_view, .click = click,
};
