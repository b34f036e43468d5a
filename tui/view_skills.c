/* The skills screen: what discovery found (Tier 1: frontmatter only), a
 * details pane with the resolved policy and its problems; Enter runs the
 * selected skill, d shows the dry run's plan, i reads the instructions. A
 * skill whose manifests changed since you last looked (seen.h) is marked
 * and its details start with the diff; c shows all of it, M marks it seen. */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rating.h"
#include "attempts.h"
#include "discover.h"
#include "docinput.h"
#include "runner.h"
#include "sanitize.h"
#include "seen.h"
#include "skill.h"
#include "shellcmd.h"
#include "trace.h"
#include "traceindex.h"
#include "tui.h"
#include "util.h"

struct skills {
    struct sg_discovery d;
    json_t *last_input;    /* skill folder -> the input its last run here was given */
    json_t *observed;      /* skill folder -> its newest run's index line (traceindex.h) */
    bool observed_stale;
    struct sg_seen *seen; /* one per skill found, as of the last look here */
    bool loaded;
    bool recording;        /* the input line asked for is a recording's (r) */
    size_t sel, top;       /* sel: an index into d.v; top: a position in order */
    size_t *order, norder; /* the rows shown: the filter's matches, sorted */
    int list_rows, list_cols;
    char filter[256];      /* / narrows the list as you type */
    int sort;              /* enum sort_key */
    bool sort_rev;
    /* the script picker (a skill of scripts): which script, then its
     * arguments and the working folder on the input line */
    bool picking;
    size_t pick;
    char *pick_root, *pick_script, **pick_args, *pick_work;
    size_t pick_nargs;
};

enum sort_key { SORT_NAME, SORT_RISK, SORT_LAST_RUN, SORT_CHANGED, SORT_COUNT };
static const char *const sort_names[] = {"name", "risk", "last run", "changed"};

static struct skills *S(struct tui_view *v)
{
    if (!v->data)
        v->data = sg_xcalloc(1, sizeof(struct skills));
    return v->data;
}

/* What each skill did when it last ran, from the traces' index (a few
 * milliseconds for 1,000 traces): the risk it showed, not only the one its
 * manifest claims. Traces the index does not know yet (written by an older
 * skillgate) count once the Traces screen has read them. */
static void load_observed(struct skills *s)
{
    json_decref(s->observed);
    s->observed = json_object();
    s->observed_stale = false;
    cleanup_free char *state = sg_state_dir();
    cleanup_free char *dir = sg_xasprintf("%s/traces", state);
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    size_t lines;
    json_t *index = sg_trace_index_load(dfd, &lines);
    const char *file;
    json_t *e;
    json_object_foreach(index, file, e)
    {
        const char *root = json_string_value(json_object_get(e, "skill_root"));
        const char *at = json_string_value(json_object_get(e, "started_at"));
        if (!root || !root[0] || !at || !json_object_get(e, "attempts"))
            continue;
        json_t *had = json_object_get(s->observed, root);
        const char *had_at = json_string_value(json_object_get(had, "started_at"));
        if (!had_at || strcmp(at, had_at) > 0)
            json_object_set(s->observed, root, e);
    }
    json_decref(index);
}

static json_t *observed(const struct skills *s, const struct sg_skill *sk)
{
    return sk->root ? json_object_get(s->observed, sk->root) : NULL;
}

static bool matches(const struct skills *s, size_t i)
{
    const struct sg_found *f = &s->d.v[i];
    const char *desc = f->skill->description;
    return !s->filter[0] || tui_matches(f->name, strlen(f->name), s->filter) ||
           (desc && tui_matches(desc, strlen(desc), s->filter));
}

/* Higher first: a skill that did not load ranks below LOW. */
static int risk_rank(const struct sg_skill *sk)
{
    return sg_skill_has_errors(sk) ? -1 : (int)sg_skill_risk(sk, NULL, 0);
}

static int cmp_rows(const void *x, const void *y, void *ctx)
{
    const struct skills *s = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int c = 0;
    if (s->sort == SORT_RISK) {
        c = risk_rank(s->d.v[b].skill) - risk_rank(s->d.v[a].skill);
    } else if (s->sort == SORT_LAST_RUN) { /* the newest run first, never run last */
        const char *ta = json_string_value(json_object_get(observed(s, s->d.v[a].skill), "started_at"));
        const char *tb = json_string_value(json_object_get(observed(s, s->d.v[b].skill), "started_at"));
        c = strcmp(tb ? tb : "", ta ? ta : "");
    } else if (s->sort == SORT_CHANGED) { /* changed, then never looked at, then the same */
        static const int rank[] = {[SG_SEEN_CHANGED] = 0, [SG_SEEN_NEW] = 1, [SG_SEEN_SAME] = 2};
        c = rank[s->seen[a].state] - rank[s->seen[b].state];
    }
    if (!c)
        c = strcmp(s->d.v[a].name, s->d.v[b].name);
    if (!c)
        c = a < b ? -1 : a > b;
    return s->sort_rev ? -c : c;
}

/* The rows again (a new filter, sort or discovery); the selection stays
 * on its skill while the skill is shown, else goes to the first row. */
static void reorder(struct skills *s)
{
    free(s->order);
    s->order = sg_xcalloc(s->d.n ? s->d.n : 1, sizeof *s->order);
    s->norder = 0;
    for (size_t i = 0; i < s->d.n; i++)
        if (matches(s, i))
            s->order[s->norder++] = i;
    qsort_r(s->order, s->norder, sizeof *s->order, cmp_rows, s);
    for (size_t k = 0; k < s->norder; k++)
        if (s->order[k] == s->sel)
            return;
    s->sel = s->norder ? s->order[0] : 0;
    s->top = 0;
}

/* The selection's position in the rows shown. */
static size_t pos_of(const struct skills *s)
{
    for (size_t k = 0; k < s->norder; k++)
        if (s->order[k] == s->sel)
            return k;
    return 0;
}

static void move_to(struct skills *s, long pos)
{
    if (!s->norder)
        return;
    pos = pos < 0 ? 0 : pos >= (long)s->norder ? (long)s->norder - 1 : pos;
    s->sel = s->order[pos];
}

static void open_view(struct tui *t, struct tui_view *v)
{
    struct skills *s = S(v);
    if (!s->observed || s->observed_stale)
        load_observed(s);
    if (s->loaded)
        return;
    struct sg_discover_opts o = {.dirs = t->o.dirs, .ndirs = t->o.ndirs, .defaults = !t->o.ndirs};
    sg_discover(&o, &s->d);
    s->loaded = true;
    s->seen = sg_xcalloc(s->d.n ? s->d.n : 1, sizeof *s->seen);
    for (size_t i = 0; i < s->d.n; i++)
        sg_seen_compare(s->d.v[i].skill, &s->seen[i]);
    if (s->sel >= s->d.n)
        s->sel = s->d.n ? s->d.n - 1 : 0;
    reorder(s);
}

const struct sg_skill *tui_skills_selected(struct tui *t)
{
    struct skills *s = S(&t->views[TUI_S_SKILLS]);
    return s->sel < s->d.n && s->norder ? s->d.v[s->sel].skill : NULL;
}

static const char *risk_word(enum sg_risk r, enum tui_role *role)
{
    *role = r == SG_RISK_LOW ? TUI_R_RISK_LOW : r == SG_RISK_MEDIUM ? TUI_R_RISK_MEDIUM : TUI_R_RISK_HIGH;
    return r == SG_RISK_LOW ? "LOW " : r == SG_RISK_MEDIUM ? "MED " : "HIGH";
}

/* The severity a run showed, in the list's five cells. */
static const char *seen_word(json_t *obs, enum tui_role *role)
{
    const char *sev = json_string_value(json_object_get(obs, "max_severity"));
    static const struct {
        const char *sev, *word;
        enum tui_role role;
    } m[] = {{"critical", "crit", TUI_R_RISK_HIGH}, {"high", "high", TUI_R_RISK_HIGH},
             {"medium", "med", TUI_R_RISK_MEDIUM}, {"low", "low", TUI_R_RISK_LOW},
             {"none", "none", TUI_R_OK}};
    for (size_t i = 0; sev && i < SG_ARRAY_LEN(m); i++)
        if (!strcmp(sev, m[i].sev)) {
            *role = m[i].role;
            return m[i].word;
        }
    *role = TUI_R_DIM;
    return obs ? "?" : "";
}

static void draw_row(struct tui *t, WINDOW *w, int y, int cols, const struct sg_found *f,
                     const struct sg_seen *seen, json_t *obs, bool sel)
{
    const struct sg_skill *sk = f->skill;
    attr_t base = tui_attr(t, sel ? TUI_R_SELECTED : TUI_R_NORMAL);
    tui_fill(w, y, 0, cols, base);
    tui_put(w, y, 1, 22, f->name, strlen(f->name), base | (sel ? A_BOLD : 0));
    enum tui_role rr = TUI_R_DIM;
    /* a manifest with errors did not load: it has no risk to show */
    const char *rw = sg_skill_has_errors(sk) ? " -- " : risk_word(sg_skill_risk(sk, NULL, 0), &rr);
    tui_putf(w, y, 24, 6, sel ? base : tui_attr(t, rr), "[%s]", rw);
    enum tui_role sr;
    const char *sw = seen_word(obs, &sr);
    tui_put(w, y, 31, 5, sw, strlen(sw), sel ? base : tui_attr(t, sr));
    size_t ne = sg_diags_count(&sk->diags, SG_ERROR), nw = sg_diags_count(&sk->diags, SG_WARNING);
    char prob[48] = "";
    if (ne)
        snprintf(prob, sizeof prob, "%zu err", ne);
    else if (nw)
        snprintf(prob, sizeof prob, "%zu warn", nw);
    tui_put(w, y, 37, 8, prob, strlen(prob),
            sel ? base : tui_attr(t, ne ? TUI_R_SEV_ERROR : TUI_R_SEV_WARNING));
    const char *desc = sk->description ? sk->description : "";
    size_t dl = strcspn(desc, "\n");
    int x = 46;
    if (seen->state == SG_SEEN_CHANGED)
        x += tui_put(w, y, x, cols - x, "(changed) ", 10, sel ? base : tui_attr(t, TUI_R_SEV_WARNING));
    if (f->shadowed_by != SIZE_MAX)
        x += tui_put(w, y, x, cols - x, "(shadowed) ", 11, sel ? base : tui_attr(t, TUI_R_DIM));
    tui_put(w, y, x, cols - x - 1, desc, dl, base);
}

static void line(WINDOW *w, int *y, int maxy, int x, int width, attr_t a, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void line(WINDOW *w, int *y, int maxy, int x, int width, attr_t a, const char *fmt, ...)
{
    if (*y >= maxy)
        return;
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *s = sg_xvasprintf(fmt, ap);
    va_end(ap);
    tui_put(w, (*y)++, x, width, s, strlen(s), a);
}

/* What changed since the last look: a line, then the diff's first lines
 * (the skill wrote them: every byte goes through tui_put's escaping). */
static void draw_changes(struct tui *t, WINDOW *w, int *y, int maxy, int x, int width,
                         const struct sg_skill *sk, const struct sg_seen *seen)
{
    char files[64] = "";
    for (size_t i = 0; i < SG_SEEN_NFILES; i++)
        if (seen->changed[i]) {
            size_t l = strlen(files);
            snprintf(files + l, sizeof files - l, "%s%s", l ? ", " : "", sg_seen_files[i]);
        }
    line(w, y, maxy, x, width, tui_attr(t, TUI_R_SEV_WARNING),
         "CHANGED since you last looked (%s): %s   c diff  M mark seen", seen->when, files);
    int room = (maxy - *y) / 2; /* the policy below keeps the other half */
    for (size_t i = 0; i < SG_SEEN_NFILES && room > 0; i++) {
        if (!seen->changed[i])
            continue;
        cleanup_free char *d = NULL;
        if (sg_seen_diff(sk, i, &d) < 0 || !d)
            continue;
        for (char *l = d, *e; *l && room > 0; l = e + (*e != '\0')) {
            e = l + strcspn(l, "\n");
            if (!strncmp(l, "---", 3) || !strncmp(l, "+++", 3))
                continue; /* the labels: said in the line above */
            enum tui_role r = *l == '+' ? TUI_R_DIFF_ADD : *l == '-' ? TUI_R_DIFF_DEL
                              : *l == '@' ? TUI_R_DIM : TUI_R_NORMAL;
            if (*y < maxy)
                tui_put(w, (*y)++, x, width, l, (size_t)(e - l), tui_attr(t, r));
            room--;
        }
    }
}

/* Its last run: how it ended, the severity it showed, what it attempted. */
static void draw_observed(struct tui *t, WINDOW *w, int *y, int maxy, int x, int width, json_t *obs)
{
    if (!obs || *y >= maxy)
        return;
    const char *at = json_string_value(json_object_get(obs, "started_at"));
    json_t *ec = json_object_get(obs, "exit_code");
    char ended[48] = "";
    if (json_is_integer(ec))
        snprintf(ended, sizeof ended, ", exit %lld", (long long)json_integer_value(ec));
    enum tui_role sr;
    seen_word(obs, &sr);
    const char *sev = json_string_value(json_object_get(obs, "max_severity"));
    line(w, y, maxy, x, width, tui_attr(t, sr), "last run %.10s %.5s: %s%s, observed risk %s",
         at ? at : "", at && strlen(at) > 16 ? at + 11 : "",
         json_string_value(json_object_get(obs, "status")) ?: "?", ended, sev ? sev : "?");
    struct sg_attempts att;
    sg_attempts_from_json(&att, json_object_get(obs, "attempts"));
    cleanup_free char *tally = sg_attempts_text(&att);
    cleanup_free char *text = sg_xasprintf("attempted: %s", tally);
    *y += tui_put_wrapped(w, *y, x, width, maxy - *y < 2 ? maxy - *y : 2, text, strlen(text),
                          tui_attr(t, sg_attempts_total(&att, SG_ATT_BLOCKED) ? TUI_R_SEV_WARNING
                                                                                : TUI_R_DIM));
}

/* A diagnostic in full (its path inside the skill's folder), wrapped. */
static char *diag_text(const struct sg_skill *sk, const struct sg_diag *g)
{
    cleanup_free char *m = sg_diag_format(g);
    size_t dl = strlen(sk->display);
    return sg_xstrdup(!strncmp(m, sk->display, dl) && m[dl] == '/' ? m + dl + 1 : m);
}

/* An error's line and caret, read once per diagnostic (not each frame:
 * the file may be up to SG_DIAG_EXCERPT_FILE_MAX). Keyed by what names it,
 * so a reloaded list never shows another file's line. */
static const char *excerpt_of(const struct sg_diag *g)
{
    static struct {
        char *file, *text;
        int line, col;
        struct timespec mtime;
        off_t size;
    } cache[16];
    static unsigned next;
    struct stat st = {0};
    if (stat(g->file, &st) < 0)
        return NULL;
    for (size_t i = 0; i < SG_ARRAY_LEN(cache); i++)
        if (cache[i].file && !strcmp(cache[i].file, g->file) && cache[i].line == g->line &&
            cache[i].col == g->col && cache[i].size == st.st_size &&
            cache[i].mtime.tv_sec == st.st_mtim.tv_sec &&
            cache[i].mtime.tv_nsec == st.st_mtim.tv_nsec)
            return cache[i].text; /* the same file as it was: an edit reads it again */
    unsigned k = next++ % SG_ARRAY_LEN(cache);
    free(cache[k].file), free(cache[k].text);
    cache[k].file = sg_xstrdup(g->file);
    cache[k].text = sg_diag_excerpt(g);
    cache[k].line = g->line, cache[k].col = g->col;
    cache[k].mtime = st.st_mtim, cache[k].size = st.st_size;
    return cache[k].text;
}

static int lines_of(const char *s)
{
    int n = 0;
    for (; s && *s; n++)
        s += strcspn(s, "\n"), s += *s == '\n';
    return n;
}

/* The problems left out of the pane: how many, and where to read them
 * (the command too where the row holds it whole). */
static void more_problems(struct tui *t, WINDOW *w, int *y, int maxy, int x, int width,
                          const struct sg_skill *sk, size_t left)
{
    cleanup_free char *m = sg_xasprintf("+%zu more: Enter shows them all (skillgate validate %s)",
                                        left, sk->display);
    if (tui_width(m, strlen(m)) > width)
        *strstr(m, " (skillgate validate") = '\0';
    line(w, y, maxy, x, width, tui_attr(t, TUI_R_SEV_WARNING), "%s", m);
}

/* Problems first: they are why you look. Each in full, wrapped; an
 * error's line and a caret under it. Returns whether the skill has errors
 * (it did not load: what it would be allowed is not shown). */
static bool draw_problems(struct tui *t, WINDOW *w, int *y, int maxy, int x, int width,
                          const struct sg_found *f)
{
    const struct sg_skill *sk = f->skill;
    bool broken = sg_skill_has_errors(sk);
    for (size_t i = 0; i < sk->diags.n && *y < maxy; i++) {
        const struct sg_diag *g = &sk->diags.v[i];
        cleanup_free char *m = diag_text(sk, g);
        const char *ex = g->sev == SG_ERROR ? excerpt_of(g) : NULL;
        /* a problem shown whole, or the count of those left: one row kept
         * for it while any is left after this one */
        int need = tui_put_wrapped(NULL, 0, 0, width, 1 << 20, m, strlen(m), 0) + lines_of(ex);
        if (i + 1 < sk->diags.n && *y + need + 1 > maxy) {
            more_problems(t, w, y, maxy, x, width, sk, sk->diags.n - i);
            break;
        }
        attr_t a = tui_attr(t, g->sev == SG_ERROR ? TUI_R_SEV_ERROR : TUI_R_SEV_WARNING);
        *y += tui_put_wrapped(w, *y, x, width, maxy - *y, m, strlen(m), a);
        for (const char *l = ex, *e; l && *l && *y < maxy; l = *e ? e + 1 : e) {
            e = l + strcspn(l, "\n");
            tui_put(w, (*y)++, x, width, l, (size_t)(e - l), tui_attr(t, TUI_R_DIM));
        }
    }
    static const char not_loaded[] = "It did not load, so it has no tools, network or risk to "
                                     "show, and it will not run. Enter shows the problems in full.";
    if (broken && *y < maxy)
        *y += tui_put_wrapped(w, *y, x, width, maxy - *y, not_loaded, sizeof not_loaded - 1,
                              tui_attr(t, TUI_R_DIM));
    return broken;
}

/* Every problem in full, with its line and caret, in the pager. */
static void show_problems(struct tui *t, const struct sg_found *f)
{
    const struct sg_skill *sk = f->skill;
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    sg_buf_printf(&b, "%s (%s): %zu error%s, %zu warning%s\n", f->name, sk->display,
                  sg_diags_count(&sk->diags, SG_ERROR),
                  sg_diags_count(&sk->diags, SG_ERROR) == 1 ? "" : "s",
                  sg_diags_count(&sk->diags, SG_WARNING),
                  sg_diags_count(&sk->diags, SG_WARNING) == 1 ? "" : "s");
    for (size_t i = 0; i < sk->diags.n; i++) { /* where, then what: narrow screens show both */
        const struct sg_diag *g = &sk->diags.v[i];
        struct sg_diag where = *g;
        where.field = NULL, where.msg = "";
        cleanup_free char *at = diag_text(sk, &where);
        cleanup_free char *ex = sg_diag_excerpt(g);
        sg_buf_printf(&b, "\n%.*s\n  %s%s%s\n%s%s", (int)strlen(at) - 2, at,
                      g->field ? g->field : "", g->field ? ": " : "", g->msg, ex ? ex : "",
                      ex ? "\n" : "");
    }
    cleanup_free char *title = sg_xasprintf("Problems: %s", f->name);
    tui_pager_show(t, title, b.data ? b.data : "");
    tui_pager_wrap(t); /* a message is read whole, whatever the width */
    sg_buf_free(&b);
}

#define DESC_ROWS 4

static void draw_details(struct tui *t, WINDOW *w, int y0, int x, int rows, int width,
                         const struct sg_found *f, const struct sg_seen *seen, json_t *obs)
{
    const struct sg_skill *sk = f->skill;
    const struct sg_policy *p = &sk->policy;
    int y = y0, maxy = y0 + rows;
    attr_t n = tui_attr(t, TUI_R_NORMAL), h = tui_attr(t, TUI_R_HEADER),
           dim = tui_attr(t, TUI_R_DIM);
    line(w, &y, maxy, x, width, h, "%s%s%s", f->name, sk->version ? " " : "",
         sk->version ? sk->version : "");
    line(w, &y, maxy, x, width, dim, "%s  (%s, %s)", sk->display, sg_source_name(f->source),
         sg_mode_name(p->mode));
    if (f->plugin)
        line(w, &y, maxy, x, width, dim, "Claude Code plugin %s, %s", f->plugin->id,
             f->plugin->enabled > 0    ? "enabled"
             : f->plugin->enabled == 0 ? "disabled"
                                       : "not named in enabledPlugins");
    if (seen->state == SG_SEEN_CHANGED)
        draw_changes(t, w, &y, maxy, x, width, sk, seen);
    if (sk->description && y < maxy) { /* wrapped at words; at most 4 rows (i reads it all) */
        int room = maxy - y < DESC_ROWS ? maxy - y : DESC_ROWS;
        y += tui_put_wrapped(w, y, x, width, room, sk->description, strlen(sk->description), n);
    }
    draw_observed(t, w, &y, maxy, x, width, obs);
    if (draw_problems(t, w, &y, maxy, x, width, f))
        return; /* it did not load: no tools, network or limits to show */
    struct sg_buf b;
    sg_buf_init(&b, 8192);
    for (size_t i = 0; i < p->ntools; i++) {
        const struct sg_tool *tl = &p->tools[i];
        sg_buf_printf(&b, "%s%s%s%s%s", i ? " " : "", tl->name, tl->scope ? "(" : "",
                      tl->scope ? tl->scope : "", tl->scope ? ")" : "");
    }
    line(w, &y, maxy, x, width, n, "tools:   %s", p->tools_restricted ? b.data : "any (allowed-tools is empty)");
    sg_buf_free(&b);
    sg_buf_init(&b, 8192);
    for (size_t i = 0; i < p->negress; i++) {
        sg_buf_printf(&b, "%s%s:", i ? " " : "", p->egress[i].domain);
        for (size_t k = 0; k < p->egress[i].nports; k++)
            sg_buf_printf(&b, "%s%u", k ? "," : "", p->egress[i].ports[k]);
    }
    line(w, &y, maxy, x, width, n, "network: %s", p->negress ? b.data : "none");
    sg_buf_free(&b);
    if (p->nsockets) { /* a daemon outside the sandbox acts for the skill */
        sg_buf_init(&b, 8192);
        for (size_t i = 0; i < p->nsockets; i++)
            sg_buf_printf(&b, "%s%s", i ? " " : "", p->sockets[i].declared);
        line(w, &y, maxy, x, width, n, "sockets: %s  (HIGH risk: host daemons act for it)",
             b.data);
        sg_buf_free(&b);
    }
    sg_buf_init(&b, 8192);
    for (size_t i = 0; i < p->nwrite; i++)
        sg_buf_printf(&b, "%s%s", i ? " " : "",
                      !strcmp(p->write[i].path, sk->root) ? "the skill's folder"
                                                          : p->write[i].declared);
    line(w, &y, maxy, x, width, n, "writes:  %s", p->nwrite ? b.data : "none declared");
    sg_buf_free(&b);
    sg_buf_init(&b, 8192);
    for (size_t i = 0; i < p->nenv; i++)
        sg_buf_printf(&b, "%s%s", i ? " " : "", p->env[i].name);
    line(w, &y, maxy, x, width, n, "env:     %s", p->nenv ? b.data : "none from your environment");
    sg_buf_free(&b);
    line(w, &y, maxy, x, width, n, "limits:  %lld MB, %lld s, %lld%% CPU, %lld processes, seccomp %s",
         p->limits.memory_mb.value, p->limits.runtime_s.value, p->limits.cpu_percent.value,
         p->limits.pids.value, sg_seccomp_profile_name(p->profile));
    if (p->entry.command)
        line(w, &y, maxy, x, width, n, "runs:    %s%s", p->entry.command,
             p->entry.detected ? " (found by convention)" : "");
}

/* ---- the script picker ---- */

static void pick_reset(struct skills *s)
{
    for (size_t i = 0; i < s->pick_nargs; i++)
        free(s->pick_args[i]);
    free(s->pick_args), free(s->pick_root), free(s->pick_script), free(s->pick_work);
    s->pick_args = NULL, s->pick_root = s->pick_script = s->pick_work = NULL;
    s->pick_nargs = 0;
    s->picking = false;
}

#define PICK_WRITE_MAX 8

/* The last of the run options: folders writable for this run, as `run
 * --write DIR` (shell words; Enter alone: none). The runner refuses /, the
 * home and skillgate's own folders, and says why on the message line. */
static void write_given(struct tui *t, const char *text, void *ctx)
{
    struct skills *s = ctx;
    if (!text) {
        pick_reset(s);
        return;
    }
    struct sg_shell sh = {0};
    const char *why = NULL;
    bool some = text[strspn(text, " \t")] != '\0';
    if (some && (sg_shell_parse(text, &sh, &why) < 0 || sh.n != 1 ||
                 sh.cmds[0].argc > PICK_WRITE_MAX)) {
        if (!why) {
            why = "folders as plain words, at most 8";
            sg_shell_free(&sh);
        }
        char label[256];
        snprintf(label, sizeof label, "not plain words (%s); fix: ", why);
        tui_input(t, label, text, write_given, s);
        return;
    }
    const char *dirs[PICK_WRITE_MAX];
    size_t n = some ? sh.cmds[0].argc : 0;
    for (size_t i = 0; i < n; i++)
        dirs[i] = sh.cmds[0].argv[i];
    struct tui_run_spec sp = {.path = s->pick_root, .input = "{}", .script = s->pick_script,
                              .args = s->pick_args, .nargs = s->pick_nargs,
                              .work_dir = s->pick_work, .write = dirs, .nwrite = n};
    tui_run(t, &sp);
    if (some)
        sg_shell_free(&sh);
    pick_reset(s);
}

static void folder_given(struct tui *t, const char *text, void *ctx)
{
    struct skills *s = ctx;
    if (!text || !text[0]) {
        pick_reset(s);
        return;
    }
    free(s->pick_work);
    s->pick_work = sg_xstrdup(text);
    tui_input(t, "folders writable for this run (--write; Enter: none, writes are asked): ",
              "", write_given, s);
}

/* The arguments as a person types them in a shell, read exactly (quotes
 * and backslashes), never expanded: a usage line is the skill's text, and
 * "$AWS_SECRET_ACCESS_KEY" in it must stay those characters. */
static void args_given(struct tui *t, const char *text, void *ctx)
{
    struct skills *s = ctx;
    if (!text) {
        pick_reset(s);
        return;
    }
    struct sg_shell sh;
    const char *why = NULL;
    if (text[strspn(text, " \t")] && (sg_shell_parse(text, &sh, &why) < 0 || sh.n != 1)) {
        if (!why) {
            why = "one command's words only (no ; | &)";
            sg_shell_free(&sh);
        }
        char label[256];
        snprintf(label, sizeof label, "not plain words (%s); quote or fix: ", why);
        tui_input(t, label, text, args_given, s);
        return;
    }
    if (text[strspn(text, " \t")]) {
        s->pick_nargs = sh.cmds[0].argc;
        s->pick_args = sg_xcalloc(s->pick_nargs + 1, sizeof *s->pick_args);
        for (size_t i = 0; i < s->pick_nargs; i++)
            s->pick_args[i] = sg_xstrdup(sh.cmds[0].argv[i]);
        sg_shell_free(&sh);
    }
    char here[4096];
    tui_input(t, "working folder (shown read-only; writes there are asked for): ",
              getcwd(here, sizeof here) ? here : "", folder_given, s);
}

/* What a usage line gives after the script's path (or its path without
 * the extension, as Markdown often writes it): the arguments to edit. */
static const char *usage_args(const char *usage, const char *script)
{
    const char *dot = strrchr(script, '.'), *slash = strrchr(script, '/');
    size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - script) : strlen(script);
    const char *at = usage ? strstr(usage, script) : NULL;
    if (at)
        n = strlen(script);
    else if (usage && (at = memmem(usage, strlen(usage), script, n)) && at[n] && at[n] != ' ')
        at = NULL;
    return at ? at + n + strspn(at + n, " ") : "";
}

static void pick_chosen(struct tui *t, struct skills *s, const struct sg_skill *sk)
{
    const struct sg_policy *p = &sk->policy;
    free(s->pick_root), free(s->pick_script);
    s->pick_root = sg_xstrdup(sk->root);
    s->pick_script = sg_xstrdup(p->scripts[s->pick]);
    char label[256];
    snprintf(label, sizeof label, "arguments for %s: ", p->scripts[s->pick]);
    tui_input(t, label, usage_args(p->script_usage[s->pick], p->scripts[s->pick]), args_given, s);
}

static bool pick_request(struct tui *t, struct skills *s, const struct sg_skill *sk,
                         enum tui_action a)
{
    size_t n = sk ? sk->policy.nscripts : 0;
    switch (a) {
    case TUI_A_UP: if (s->pick) s->pick--; return true;
    case TUI_A_DOWN: if (s->pick + 1 < n) s->pick++; return true;
    case TUI_A_HOME: s->pick = 0; return true;
    case TUI_A_END: s->pick = n ? n - 1 : 0; return true;
    case TUI_A_ENTER:
        if (s->pick < n)
            pick_chosen(t, s, sk);
        return true;
    case TUI_A_QUIT: pick_reset(s); return true; /* back to the list, not out */
    default: return true; /* the picker is modal */
    }
}

static void draw_picker(struct tui *t, WINDOW *w, int y0, int x, int rows, int width,
                        const struct sg_skill *sk, size_t pick)
{
    const struct sg_policy *p = &sk->policy;
    int y = y0, maxy = y0 + rows;
    line(w, &y, maxy, x, width, tui_attr(t, TUI_R_HEADER), "Run a script of %s (Enter picks, q back)",
         sk->name ? sk->name : sk->dirname);
    size_t per = 2, room = rows > 2 ? (size_t)(rows - 1) / per : 1;
    size_t first = pick >= room ? pick - room + 1 : 0;
    for (size_t i = first; i < p->nscripts && y < maxy; i++) {
        attr_t a = tui_attr(t, i == pick ? TUI_R_SELECTED : TUI_R_NORMAL);
        tui_fill(w, y, x, width, a);
        line(w, &y, maxy, x, width, a, " %s", p->scripts[i]);
        line(w, &y, maxy, x, width, tui_attr(t, TUI_R_DIM), "     %s",
             p->script_usage[i] ? p->script_usage[i] : "(no usage line in the skill's Markdown)");
    }
}

/* The columns' labels, at the columns draw_row puts them; the sort's
 * column carries ↓ (↑ reversed), as the Traces screen's does: last run is
 * SEEN's, changed is where "(changed)" shows. */
static void draw_header(struct tui *t, const struct skills *s, WINDOW *w, int cols)
{
    static const struct {
        int x;
        const char *label;
        int key;
    } head[] = {{1, "SKILL", SORT_NAME},     {24, "RISK", SORT_RISK},
                {31, "SEEN", SORT_LAST_RUN}, {37, "PROBLEMS", -1},
                {46, "DESCRIPTION", SORT_CHANGED}};
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    for (size_t i = 0; i < SG_ARRAY_LEN(head) && head[i].x < cols - 1; i++)
        tui_putf(w, 0, head[i].x, cols - 1 - head[i].x, hd, "%s%s", head[i].label,
                 head[i].key != s->sort ? ""
                 : s->sort_rev          ? "\xe2\x86\x91"
                                        : "\xe2\x86\x93"); /* ↑ ↓ */
}

/* Rows of the list out of sight: said on the rule under the list (at its
 * right), as the Run screen's panes say theirs. */
static void draw_more(struct tui *t, const struct skills *s, WINDOW *w, int y, int cols,
                      int list_rows)
{
    size_t below = s->top + (size_t)list_rows < s->norder ? s->norder - s->top - (size_t)list_rows
                                                          : 0;
    char more[96];
    if (below && s->top)
        snprintf(more, sizeof more, " %zu more above, %zu more below (j, PgDn, End) ", s->top,
                 below);
    else if (below)
        snprintf(more, sizeof more, " %zu more below (j, PgDn, End) ", below);
    else if (s->top)
        snprintf(more, sizeof more, " %zu more above (k, PgUp, Home) ", s->top);
    else
        return;
    int mw = tui_width(more, strlen(more));
    if (mw < cols - 2)
        tui_put(w, y, cols - mw - 2, mw, more, strlen(more), tui_attr(t, TUI_R_MATCH));
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct skills *s = S(v);
    open_view(t, v);
    bool side = cols >= 140;
    int list_rows = side ? rows - 1 : (rows - 1) / 2;
    if (side && (int)s->norder > list_rows)
        list_rows--; /* the last row says what is out of sight */
    if (!side && (int)s->norder < list_rows)
        list_rows = s->norder < 3 ? 3 : (int)s->norder; /* the rest goes to the details */
    int list_cols = side ? cols / 2 : cols;
    s->list_rows = list_rows, s->list_cols = list_cols;
    draw_header(t, s, w, list_cols);
    if (!s->d.n) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                 "No skills found. Start skillgate with folders: skillgate tui DIR...");
        for (size_t i = 0; i < s->d.diags.n && (int)i < rows - 4; i++) {
            cleanup_free char *m = sg_diag_format(&s->d.diags.v[i]);
            tui_put(w, 4 + (int)i, 2, cols - 4, m, strlen(m), tui_attr(t, TUI_R_SEV_WARNING));
        }
        return;
    }
    if (!s->norder) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                 "No skill matches \"%s\" (/ to change it, Esc on it clears it).", s->filter);
        return;
    }
    /* the selected skill's look is read again: a run or an edit since */
    sg_seen_compare(s->d.v[s->sel].skill, &s->seen[s->sel]);
    size_t pos = pos_of(s);
    if (pos < s->top)
        s->top = pos;
    if (pos >= s->top + (size_t)list_rows)
        s->top = pos - (size_t)list_rows + 1;
    if (s->top + (size_t)list_rows > s->norder) /* taller now (a resize): no blank rows below */
        s->top = s->norder > (size_t)list_rows ? s->norder - (size_t)list_rows : 0;
    for (int r = 0; r < list_rows && s->top + (size_t)r < s->norder; r++) {
        size_t i = s->order[s->top + (size_t)r];
        draw_row(t, w, r + 1, list_cols, &s->d.v[i], &s->seen[i], observed(s, s->d.v[i].skill),
                 i == s->sel);
    }
    int dy = side ? 1 : list_rows + 2, dx = side ? list_cols + 2 : 1;
    int drows = side ? rows - 1 : rows - list_rows - 2;
    int dcols = side ? cols - list_cols - 3 : cols - 2;
    if (side)
        tui_vline(w, 1, list_cols, rows - 1, tui_attr(t, TUI_R_BORDER));
    else
        tui_hline(w, list_rows + 1, 0, cols, tui_attr(t, TUI_R_BORDER));
    draw_more(t, s, w, list_rows + 1, list_cols, list_rows);
    if (s->picking)
        draw_picker(t, w, dy, dx, drows, dcols, s->d.v[s->sel].skill, s->pick);
    else
        draw_details(t, w, dy, dx, drows, dcols, &s->d.v[s->sel], &s->seen[s->sel],
                     observed(s, s->d.v[s->sel].skill));
}

static void input_given(struct tui *t, const char *text, void *ctx)
{
    struct skills *s = ctx;
    const struct sg_skill *sk = tui_skills_selected(t);
    if (!text || !sk) {
        if (s)
            s->recording = false;
        return;
    }
    if (!*text)
        text = "{}"; /* nothing typed: no input */
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
    if (!j) {
        char label[256];
        snprintf(label, sizeof label, "not JSON (column %d: %s), fix it: ", je.column, je.text);
        tui_input(t, label, text, input_given, s);
        return;
    }
    json_decref(j);
    if (s && sk->root) {
        if (!s->last_input)
            s->last_input = json_object();
        json_object_set_new(s->last_input, sk->root, json_string(text));
    }
    if (s && s->recording) {
        s->recording = false;
        struct tui_run_spec spec = {.path = sk->root, .input = text, .record = true};
        tui_run(t, &spec);
        return;
    }
    tui_run_start(t, sk->root, text);
}

/* ---- the input line's prefill: the input SKILL.md documents ---- */

static char *input_documented(const struct sg_skill *sk)
{
    cleanup_free char *body = NULL;
    size_t len = 0;
    if (sg_skill_read_body(sk, &body, &len) < 0 || !body)
        return NULL;
    return sg_documented_input(body, len);
}

/* Enter's question: prefilled with the input last used here, else the one
 * SKILL.md documents, else nothing (an empty line runs it with {}); the
 * label says which, how to edit, and what the skill says about its input
 * (argument-hint). */
static void ask_input(struct tui *t, struct skills *s, const struct sg_skill *sk)
{
    const char *last = sk->root ? json_string_value(json_object_get(s->last_input, sk->root)) : NULL;
    cleanup_free char *documented = last ? NULL : input_documented(sk);
    const char *from = last ? " last used; ^U clears" : documented ? " from SKILL.md; ^U clears"
                                                                  : "; Enter alone: {}";
    cleanup_free char *hint = sk->argument_hint ? sg_sanitize_str(sk->argument_hint, 0) : NULL;
    cleanup_free char *label = sg_xasprintf("SKILL_INPUT (JSON%s%s%s): ", from,
                                            hint ? "; it takes " : "", hint ? hint : "");
    tui_input(t, label, last ? last : documented ? documented : "", input_given, s);
}

static void dry_run(struct tui *t, const struct sg_skill *sk)
{
    if (sg_skill_has_errors(sk)) {
        tui_message(t, "this skill has errors: it will not run (Enter shows them)");
        return;
    }
    struct sg_run_request rq = {.front = SG_FRONT_TUI, .input = "{}"};
    struct sg_runner *run = NULL;
    const char *why = NULL;
    if (sg_runner_new(sk, &rq, &run, &why) != 0) {
        tui_message(t, "no plan: %s", why ? why : "?");
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        sg_runner_print_plan(run, f);
        fclose(f);
        tui_pager_show(t, "Dry run: the plan (nothing was executed)", text ? text : "");
    }
    free(text);
    sg_runner_free(run);
}

static void show_diff(struct tui *t, const struct sg_skill *sk, const struct sg_seen *seen)
{
    if (seen->state == SG_SEEN_SAME) {
        tui_message(t, "nothing changed since you last looked (%s)", seen->when);
        return;
    }
    struct sg_buf b;
    sg_buf_init(&b, 2 * 64 * 1024 + 256);
    if (seen->state == SG_SEEN_NEW)
        sg_buf_printf(&b, "You have not looked at this skill before (no run, no M): all of it "
                          "is new to you.\n\n");
    for (size_t i = 0; i < SG_SEEN_NFILES; i++) {
        if (seen->state == SG_SEEN_CHANGED && !seen->changed[i])
            continue;
        cleanup_free char *d = NULL;
        int r = sg_seen_diff(sk, i, &d);
        if (r < 0)
            sg_buf_printf(&b, "%s: no diff (%s)\n", sg_seen_files[i], strerror(-r));
        else
            sg_buf_printf(&b, "%s\n", d);
    }
    cleanup_free char *title = sg_xasprintf("What changed in %s since you last looked",
                                            sk->name ? sk->name : sk->dirname);
    tui_pager_show(t, title, b.data ? b.data : "");
    tui_pager_wrap(t); /* a message is read whole, whatever the width */
    sg_buf_free(&b);
}

static void filter_changed(struct tui *t, const char *text, void *ctx)
{
    (void)t;
    struct skills *s = ctx;
    snprintf(s->filter, sizeof s->filter, "%s", text ? text : "");
    reorder(s);
    /* as you type, the selection is the skill of that exact name, else the first match */
    if (s->norder)
        s->sel = s->order[0];
    for (size_t k = 0; k < s->norder; k++)
        if (!strcmp(s->d.v[s->order[k]].name, s->filter))
            s->sel = s->order[k];
}

/* Enter keeps the filter; Esc (text NULL) clears it, the selection kept. */
static void filter_done(struct tui *t, const char *text, void *ctx)
{
    (void)t;
    struct skills *s = ctx;
    if (!text) {
        s->filter[0] = '\0';
        reorder(s);
    }
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct skills *s = S(v);
    size_t page = s->list_rows > 1 ? (size_t)s->list_rows - 1 : 1;
    const struct sg_skill *sk = tui_skills_selected(t);
    if (s->picking)
        return pick_request(t, s, sk, a);
    switch (a) {
    case TUI_A_UP: move_to(s, (long)pos_of(s) - 1); return true;
    case TUI_A_DOWN: move_to(s, (long)pos_of(s) + 1); return true;
    case TUI_A_PAGE_UP: move_to(s, (long)pos_of(s) - (long)page); return true;
    case TUI_A_PAGE_DOWN: move_to(s, (long)pos_of(s) + (long)page); return true;
    case TUI_A_HOME: move_to(s, 0); return true;
    case TUI_A_END: move_to(s, (long)s->norder - 1); return true;
    case TUI_A_SEARCH:
        tui_input_live(t, "filter skills: ", "", filter_changed, filter_done, s);
        filter_done(t, NULL, s); /* a new filter: all skills until something is typed */
        return true;
    case TUI_A_COPY:
        if (sk)
            tui_copy(t, "skill's folder", sk->root ? sk->root : sk->display);
        return true;
    case TUI_A_SORT:
    case TUI_A_SORT_REVERSE:
        if (a == TUI_A_SORT)
            s->sort = (s->sort + 1) % SORT_COUNT, s->sort_rev = false;
        else
            s->sort_rev = !s->sort_rev;
        reorder(s);
        tui_message(t, "skills by %s%s", sort_names[s->sort], s->sort_rev ? ", reversed" : "");
        return true;
    case TUI_A_RELOAD:
        free(s->seen);
        s->seen = NULL;
        sg_discovery_free(&s->d);
        memset(&s->d, 0, sizeof s->d);
        s->loaded = false;
        open_view(t, v);
        tui_message(t, "%zu skills found", s->d.n);
        return true;
    case TUI_A_ENTER:
        if (!sk)
            return true;
        if (t->running) {
            tui_message(t, "a skill is running already (2 shows it)");
            return true;
        }
        if (sg_skill_has_errors(sk)) { /* it will not run: what is wrong, in full */
            show_problems(t, &s->d.v[s->sel]);
            return true;
        }
        if (sk->policy.mode == SG_MODE_SCRIPTS && !sk->policy.entry.command) {
            s->picking = true; /* a skill of scripts: the person picks one */
            s->pick = 0;
            return true;
        }
        if (!sk->policy.entry.command && sk->policy.mode != SG_MODE_WASM) {
            /* said before anything is asked */
            tui_message(t, "%s cannot run here: %s (i reads its instructions)",
                        s->d.v[s->sel].name,
                        "it is instructions only, with nothing of its own to run");
            return true;
        }
        ask_input(t, s, sk);
        return true;
    case TUI_A_DRY_RUN:
        if (sk)
            dry_run(t, sk);
        return true;
    case TUI_A_RECORD:
        /* the skill run with nothing granted in advance: each use is asked
         * here, and the end shows what it used beside what it declares */
        if (!sk)
            return true;
        if (t->running || sg_skill_has_errors(sk) || !sk->policy.entry.command) {
            tui_message(t, "%s", t->running ? "a skill is running already (2 shows it)"
                               : sg_skill_has_errors(sk)
                                   ? "this skill has errors: it will not run (Enter shows them)"
                                   : "record runs a skill's entrypoint: this one has none");
            return true;
        }
        s->recording = true;
        ask_input(t, s, sk);
        return true;
    case TUI_A_DIFF:
        if (sk)
            show_diff(t, sk, &s->seen[s->sel]);
        return true;
    case TUI_A_SEEN: {
        if (!sk)
            return true;
        int r = sg_seen_mark(sk);
        if (r < 0)
            tui_message(t, "could not remember this look: %s", strerror(-r));
        else
            tui_message(t, "%s marked as seen: a later change will show here",
                        sk->name ? sk->name : sk->dirname);
        sg_seen_compare(sk, &s->seen[s->sel]);
        return true;
    }
    case TUI_A_BODY: {
        if (!sk)
            return true;
        char *body = NULL;
        size_t len = 0;
        int r = sg_skill_read_body(sk, &body, &len);
        if (r < 0) {
            tui_message(t, "cannot read the instructions: %s", strerror(-r));
            return true;
        }
        cleanup_free char *title = sg_xasprintf("Instructions of %s (SKILL.md, Tier 2)",
                                                sk->name ? sk->name : sk->dirname);
        tui_pager_show(t, title, body ? body : "");
        free(body);
        return true;
    }
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct skills *s = S(v);
    const struct sg_skill *sk = s->sel < s->d.n && s->norder ? s->d.v[s->sel].skill : NULL;
    /* Enter offers only what it does for the selected skill */
    const char *enter = !sk                           ? ""
                        : sg_skill_has_errors(sk)     ? "  Enter problems"
                        : sk->policy.entry.command    ? "  Enter run"
                        : sk->policy.mode == SG_MODE_SCRIPTS ? "  Enter pick a script"
                                                             : "";
    if (s->picking)
        snprintf(out, n, "pick a script: Up/Down  Enter its arguments  q back");
    else if (s->filter[0] || s->sort != SORT_NAME || s->sort_rev)
        snprintf(out, n, "%zu of %zu skills [%s%s%s by %s%s]%s  / filter  s sort  d dry run  "
                 "r record  i read  c diff  M seen  R rescan  ? help  q quit",
                 s->norder, s->d.n, s->filter[0] ? "filter: " : "", s->filter,
                 s->filter[0] ? "," : "", sort_names[s->sort], s->sort_rev ? " reversed" : "",
                 enter);
    else
        snprintf(out, n, "%zu skill%s%s  d dry run  / filter  r record  i read  c diff  M seen  "
                 "s sort  R rescan  ? help  q quit",
                 s->d.n, s->d.n == 1 ? "" : "s", enter);
}

static void click(struct tui *t, struct tui_view *v, int y, int x)
{
    (void)t;
    struct skills *s = S(v);
    if (s->picking || y < 1 || y > s->list_rows || x >= s->list_cols)
        return;
    size_t pos = s->top + (size_t)(y - 1);
    if (pos < s->norder)
        s->sel = s->order[pos];
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct skills *s = v->data;
    if (!s)
        return;
    pick_reset(s);
    sg_discovery_free(&s->d);
    json_decref(s->observed);
    json_decref(s->last_input);
    free(s->seen);
    free(s->order);
    free(s);
    v->data = NULL;
}

/* Coming to this screen (after a run, from the traces): what the skills
 * did is read again. */
static void switch_in(struct tui *t, struct tui_view *v)
{
    S(v)->observed_stale = true;
    open_view(t, v);
}

const struct tui_view_ops tui_skills_ops = {
    .name = "Skills", .open = switch_in, .draw = draw, .request = request, .status = status,
    .close = close_view, .click = click,
};
