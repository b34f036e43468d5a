/* The traces screen: past runs from the state directory, newest first,
 * sortable and filterable; Enter opens one (timeline, violations with their
 * MITRE ids, decisions, output counts) in the pager; e exports it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "tui.h"
#include "util.h"

#define MAX_TRACES 1000                /* the newest; older ones stay on disk */
#define TRACE_FILE_MAX (64u << 20)     /* a bigger file is not ours */

struct row {
    char *file, *skill, *status, *started, *severity;
    long long duration_ms;
    int exit_code;
    size_t enforcements, decisions;
    int sev_rank;
};

enum sort_key { SORT_TIME, SORT_SKILL, SORT_STATUS, SORT_DURATION, SORT_SEVERITY, SORT_COUNT };
static const char *const sort_names[] = {"time", "skill", "status", "duration", "severity"};

struct traces {
    struct row *v;
    size_t n, sel, top;
    size_t *shown, nshown;
    int rows;
    enum sort_key sort;
    bool reverse;
    char filter[128];
    char *dir;
    size_t unreadable;
};

static struct traces *T(struct tui_view *v)
{
    if (!v->data)
        v->data = sg_xcalloc(1, sizeof(struct traces));
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

static json_t *load_trace(int dirfd, const char *name)
{
    cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > TRACE_FILE_MAX)
        return NULL;
    json_error_t je;
    return json_loadfd(fd, 0, &je);
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
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

static void refilter(struct traces *s)
{
    s->nshown = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct row *r = &s->v[i];
        if (s->filter[0] && !strcasestr(r->skill, s->filter) && !strcasestr(r->status, s->filter) &&
            !strcasestr(r->severity, s->filter) && !strcasestr(r->file, s->filter))
            continue;
        s->shown[s->nshown++] = i;
    }
    g_sort = s->sort, g_rev = s->reverse, g_rows = s->v;
    if (s->nshown)
        qsort(s->shown, s->nshown, sizeof *s->shown, cmp_rows);
    if (s->sel >= s->nshown)
        s->sel = s->nshown ? s->nshown - 1 : 0;
}

static void open_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct traces *s = T(v);
    free_rows(s);
    free(s->dir);
    cleanup_free char *state = sg_state_dir();
    s->dir = sg_xasprintf("%s/traces", state);
    s->unreadable = 0;
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
    s->v = sg_xcalloc(nn ? nn : 1, sizeof *s->v);
    for (size_t i = 0; i < nn; i++) {
        json_t *doc = i < MAX_TRACES ? load_trace(dfd, names[i]) : NULL;
        if (!doc || !json_is_object(doc)) {
            s->unreadable += i < MAX_TRACES;
            json_decref(doc);
            free(names[i]);
            continue;
        }
        struct row *r = &s->v[s->n++];
        json_t *vs = json_object_get(doc, "violation_summary");
        r->file = names[i];
        r->skill = sg_xstrdup(jstr(doc, "skill_name"));
        r->status = sg_xstrdup(jstr(doc, "status"));
        r->started = sg_xstrdup(jstr(doc, "started_at"));
        r->severity = sg_xstrdup(jstr(vs, "max_severity"));
        r->sev_rank = sev_rank(r->severity);
        r->duration_ms = json_integer_value(json_object_get(doc, "duration_ms"));
        r->exit_code = (int)json_integer_value(json_object_get(doc, "exit_code"));
        r->enforcements = (size_t)json_integer_value(json_object_get(vs, "total_enforcements"));
        r->decisions = json_array_size(json_object_get(doc, "decisions"));
        json_decref(doc);
    }
    free(names);
    s->shown = sg_xcalloc(s->n ? s->n : 1, sizeof *s->shown);
    refilter(s);
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct traces *s = T(v);
    if (!s->dir)
        open_view(t, v);
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    tui_putf(w, 0, 1, cols - 2, hd, "%-14s %-18s %-10s %7s %-8s %5s %4s", "STARTED (UTC)",
             "SKILL", "STATUS", "TIME", "SEVERITY", "BLOCK", "ASKS");
    s->rows = rows - 1;
    if (!s->nshown) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM), "%s",
                 s->n ? "No trace matches the filter (f to change it)."
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
        char when[20];
        snprintf(when, sizeof when, "%.5s %.8s", strlen(r->started) >= 19 ? r->started + 5 : "",
                 strlen(r->started) >= 19 ? r->started + 11 : "");
        int x = tui_putf(w, i + 1, 1, cols - 2, a, "%-14s ", when);
        x += tui_putf(w, i + 1, 1 + x, 19, a, "%-18.18s ", r->skill);
        attr_t sa = sel ? a : tui_attr(t, !strcmp(r->status, "completed") && !r->exit_code
                                              ? TUI_R_OK : TUI_R_SEV_WARNING);
        x += tui_putf(w, i + 1, 1 + x, 11, sa, "%-10.10s ", r->status);
        if (r->duration_ms < 100000)
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%5lldms ", r->duration_ms);
        else
            x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%6llds ", r->duration_ms / 1000);
        attr_t va = sel ? a : tui_severity_attr(t, r->sev_rank >= 3 ? 3 : r->sev_rank >= 1 ? 2 : 0);
        x += tui_putf(w, i + 1, 1 + x, cols - 2 - x, va, "%-8s ", r->severity);
        tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%5zu %4zu", r->enforcements, r->decisions);
    }
}

/* ---- one trace as text ---- */

static char *trace_text(json_t *doc, const char *path)
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
        sg_buf_printf(&b, "  none asked\n");
    json_array_foreach(json_object_get(doc, "decisions"), i, c)
    {
        sg_buf_printf(&b, "  %s: %s (%s, %s, after %lld ms)\n", jstr(c, "request"),
                      jstr(c, "decision"), jstr(c, "decided_by"), jstr(c, "scope"),
                      (long long)json_integer_value(json_object_get(c, "latency_ms")));
    }
    sg_buf_printf(&b, "\nTimeline\n");
    json_array_foreach(json_object_get(doc, "events"), i, c)
    {
        const char *ts = jstr(c, "timestamp");
        sg_buf_printf(&b, "  %.12s %-26s %s\n", strlen(ts) > 11 ? ts + 11 : ts, jstr(c, "kind"),
                      jstr(c, "message"));
    }
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
    json_t *doc = dfd >= 0 ? load_trace(dfd, slash + 1) : NULL;
    if (!doc) {
        tui_message(t, "cannot read the trace %s", path);
        return;
    }
    cleanup_free char *text = trace_text(doc, path);
    cleanup_free char *title = sg_xasprintf("Trace of %s (e exports it from the traces screen)",
                                            jstr(doc, "skill_name"));
    json_decref(doc);
    tui_pager_show(t, title, text);
}

int tui_trace_export(const char *path, const char *dest)
{
    cleanup_fd int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0)
        return -errno;
    cleanup_fd int out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0)
        return -errno;
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t o = 0; o < n;) {
            ssize_t w = write(out, buf + o, (size_t)(n - o));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                int e = errno;
                unlink(dest);
                return -e;
            }
            o += w;
        }
    }
    if (n < 0 || fsync(out) < 0) {
        int e = errno;
        unlink(dest);
        return -e;
    }
    return 0;
}

/* ---- keys ---- */

static void filtered(struct tui *t, const char *text, void *ctx)
{
    (void)t;
    struct traces *s = ctx;
    if (!text)
        return;
    snprintf(s->filter, sizeof s->filter, "%s", text);
    refilter(s);
}

struct export_ctx {
    char path[4096];
};
static struct export_ctx export_from;

static void exported(struct tui *t, const char *text, void *ctx)
{
    (void)ctx;
    if (!text || !text[0])
        return;
    int e = tui_trace_export(export_from.path, text);
    if (e < 0)
        tui_message(t, "export to %s failed: %s", text, strerror(-e));
    else
        tui_message(t, "trace exported to %s", text);
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct traces *s = T(v);
    size_t page = s->rows > 1 ? (size_t)s->rows - 1 : 1;
    const struct row *r = s->sel < s->nshown ? &s->v[s->shown[s->sel]] : NULL;
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
        s->sort = (enum sort_key)((s->sort + 1) % SORT_COUNT);
        refilter(s);
        tui_message(t, "sorted by %s", sort_names[s->sort]);
        return true;
    case TUI_A_FILTER:
    case TUI_A_SEARCH:
        tui_input(t, "filter traces (skill, status, severity): ", s->filter, filtered, s);
        return true;
    case TUI_A_ENTER:
        if (r) {
            cleanup_free char *p = sg_xasprintf("%s/%s", s->dir, r->file);
            tui_trace_open(t, p);
        }
        return true;
    case TUI_A_EXPORT:
        if (r) {
            snprintf(export_from.path, sizeof export_from.path, "%s/%s", s->dir, r->file);
            tui_input(t, "export the trace to: ", r->file, exported, NULL);
        }
        return true;
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct traces *s = T(v);
    snprintf(out, n, "%zu of %zu traces%s, by %s%s%s%s  Enter open  e export  s sort  f filter",
             s->nshown, s->n, s->unreadable ? " (some unreadable)" : "", sort_names[s->sort],
             s->filter[0] ? ", filter \"" : "", s->filter, s->filter[0] ? "\"" : "");
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct traces *s = v->data;
    if (!s)
        return;
    free_rows(s);
    free(s->dir);
    free(s);
    v->data = NULL;
}

const struct tui_view_ops tui_traces_ops = {
    .name = "Traces", .open = open_view, .draw = draw, .request = request, .status = status,
    .close = close_view,
};
