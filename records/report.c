/* skillgate traces report: a run as one self-contained HTML or Markdown
 * file (report.h says what it holds and how every string is escaped). */
#include "report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "htmltext.h"
#include "sanitize.h"
#include "trace.h"
#include "tracediff.h"
#include "util.h"

struct rep {
    FILE *f;
    int fmt;
    json_t *trace;
    const char *home; /* said as ~ in every path (the trace keeps them whole) */
    int64_t t0, span; /* the timeline's origin and length, ns */
    struct sg_html html; /* its f is f; no_marks inside SVG or <title> */
};

static bool is_html(const struct rep *r)
{
    return r->fmt == SG_REPORT_HTML;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* ------------------------------------------------------------- escaping */

/* The longest run of c in s. */
static size_t longest_run(const char *s, char c)
{
    size_t best = 0, run = 0;
    for (; *s; s++) {
        run = *s == c ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best;
}

/* Markdown: a code span, its fence longer than any backtick run inside;
 * GitHub shows its content as it is (no link, image, HTML or entity). */
static void md_code(FILE *f, const char *safe)
{
    if (!safe[0]) {
        fputs("(empty)", f);
        return;
    }
    size_t fence = longest_run(safe, '`') + 1;
    size_t n = strlen(safe);
    bool pad = safe[0] == '`' || safe[n - 1] == '`' || safe[0] == ' ' || safe[n - 1] == ' ';
    for (size_t i = 0; i < fence; i++)
        fputc('`', f);
    fputs(pad ? " " : "", f);
    fputs(safe, f);
    fputs(pad ? " " : "", f);
    for (size_t i = 0; i < fence; i++)
        fputc('`', f);
}

/* A hostile string of len bytes, at most max shown, then how much was not. */
static void text_n(struct rep *r, const char *s, size_t len, size_t max)
{
    if (is_html(r)) {
        sg_html_text_n(&r->html, s, len, max);
        return;
    }
    size_t show = sg_utf8_cut(s, len, max);
    cleanup_free char *safe = sg_sanitize(s, show, 0);
    md_code(r->f, safe);
    if (show < len)
        fprintf(r->f, " *… %zu more bytes*", len - show);
}

/* A string of the trace's, the home in it said as ~. */
static void text(struct rep *r, const char *s)
{
    cleanup_free char *t = sg_home_short(s ? s : "", r->home);
    text_n(r, t, strlen(t), SG_REPORT_FIELD_MAX);
}

/* A block of lines already made safe for a terminal (the diff's text):
 * <pre> or a fence longer than any in it. */
static void block(struct rep *r, const char *safe)
{
    if (is_html(r)) {
        fputs("<pre>", r->f);
        sg_html_piece(&r->html, safe, strlen(safe), false);
        fputs("</pre>\n", r->f);
        return;
    }
    size_t fence = longest_run(safe, '`') + 1;
    fence = fence < 3 ? 3 : fence;
    for (size_t i = 0; i < fence; i++)
        fputc('`', r->f);
    fputc('\n', r->f);
    fputs(safe, r->f);
    if (safe[0] && safe[strlen(safe) - 1] != '\n')
        fputc('\n', r->f);
    for (size_t i = 0; i < fence; i++)
        fputc('`', r->f);
    fputs("\n\n", r->f);
}

/* -------------------------------------------------------------- layout */

static void heading(struct rep *r, const char *id, const char *title)
{
    if (is_html(r))
        fprintf(r->f, "<section id=\"%s\">\n<h2>%s</h2>\n", id, title);
    else
        fprintf(r->f, "## %s\n\n", title);
}

static void end_section(struct rep *r)
{
    fputs(is_html(r) ? "</section>\n" : "\n", r->f);
}

/* A row of facts: key (ours) and a hostile value. */
static void kv(struct rep *r, const char *key, const char *val)
{
    if (is_html(r))
        fprintf(r->f, "<tr><th>%s</th><td>", key);
    else
        fprintf(r->f, "- **%s**: ", key);
    text(r, val);
    fputs(is_html(r) ? "</td></tr>\n" : "\n", r->f);
}

static void kv_int(struct rep *r, const char *key, json_t *v)
{
    char num[32] = "-";
    if (json_is_integer(v))
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
    kv(r, key, num);
}

static void table_open(struct rep *r)
{
    if (is_html(r))
        fputs("<table class=\"kv\">\n", r->f);
}

static void table_close(struct rep *r)
{
    fputs(is_html(r) ? "</table>\n" : "\n", r->f);
}

/* Our own words, the same in both formats (no markup, nothing from a trace). */
static void say(struct rep *r, const char *words)
{
    fprintf(r->f, is_html(r) ? "<p>%s</p>\n" : "%s\n\n", words);
}

/* ---------------------------------------------------------------- time */

/* An event's time in ns: its monotonic clock, else its ISO timestamp.
 * Clamped to [0, 2^62] (a forged trace's times must not overflow the
 * differences taken from them). */
#define TIME_MAX ((int64_t)1 << 62)
static int64_t ev_ns(json_t *ev)
{
    json_t *m = json_object_get(ev, "monotonic_ns");
    if (json_is_integer(m)) {
        json_int_t v = json_integer_value(m);
        return v < 0 ? 0 : v > TIME_MAX ? TIME_MAX : v;
    }
    int64_t ms = sg_trace_time_ms(str(ev, "timestamp"));
    if (ms < 0 || ms > TIME_MAX / 1000000)
        return 0;
    return ms * 1000000;
}

static void set_span(struct rep *r)
{
    size_t i;
    json_t *ev;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        int64_t t = ev_ns(ev);
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    r->t0 = lo == INT64_MAX ? 0 : lo;
    r->span = hi > lo ? hi - lo : 1;
}

/* "+1.234 s" from the run's first event. */
static void offset(struct rep *r, json_t *ev, char out[32])
{
    double s = (double)(ev_ns(ev) - r->t0) / 1e9;
    snprintf(out, 32, "+%.3f s", s < 0 ? 0 : s);
}

static bool is_output(const char *kind)
{
    return !strcmp(kind, "stdout") || !strcmp(kind, "stderr");
}

static bool prevented(json_t *ev)
{
    return json_is_true(json_object_get(json_object_get(ev, "data"), "prevented"));
}

/* ---------------------------------------------------------- the sections */

static void summary(struct rep *r)
{
    json_t *t = r->trace;
    heading(r, "summary", "Run");
    table_open(r);
    kv(r, "Skill", str(t, "skill_name"));
    kv(r, "Version", str(t, "skill_version"));
    kv(r, "Run id", str(t, "trace_id"));
    kv(r, "Content digest", str(t, "skill_digest"));
    kv(r, "Policy digest", str(t, "policy_digest"));
    kv(r, "Started", str(t, "started_at"));
    kv(r, "Completed", str(t, "completed_at"));
    kv_int(r, "Duration (ms)", json_object_get(t, "duration_ms"));
    kv(r, "Status", str(t, "status"));
    kv_int(r, "Exit code", json_object_get(t, "exit_code"));
    kv(r, "End", str(t, "end_reason"));
    table_close(r);
    if (json_is_true(json_object_get(t, "degraded")))
        say(r, "DEGRADED SANDBOX: this run was allowed without part of the enforcement (the "
               "trace's policy_applied event says which).");
    end_section(r);
}

static void limits(struct rep *r, json_t *lim)
{
    const char *name;
    json_t *l;
    json_object_foreach (lim, name, l) {
        cleanup_free char *v = sg_xasprintf("%lld %s (%s)",
                                            (long long)json_integer_value(json_object_get(l, "value")),
                                            str(l, "unit"), str(l, "mechanism"));
        cleanup_free char *k = sg_xasprintf("Limit: %s", name);
        /* the key is a trace's too: shown as its value is */
        if (is_html(r))
            fputs("<tr><th>", r->f);
        else
            fputs("- **", r->f);
        text(r, k);
        fputs(is_html(r) ? "</th><td>" : "**: ", r->f);
        text(r, v);
        fputs(is_html(r) ? "</td></tr>\n" : "\n", r->f);
    }
}

static json_t *first_event(json_t *t, const char *kind)
{
    size_t i;
    json_t *ev;
    json_array_foreach (json_object_get(t, "events"), i, ev)
        if (!strcmp(str(ev, "kind"), kind))
            return ev;
    return NULL;
}

static void manifest(struct rep *r)
{
    json_t *t = r->trace, *inv = json_object_get(t, "invocation");
    heading(r, "manifest", "Skill and manifest");
    table_open(r);
    kv(r, "Folder", str(t, "skill_root"));
    struct sg_buf b;
    sg_buf_init(&b, 64 * 1024);
    size_t i;
    json_t *a;
    json_array_foreach (json_object_get(inv, "argv"), i, a)
        sg_buf_printf(&b, "%s%s", i ? " " : "", json_string_value(a) ?: "?");
    kv(r, "Command", b.data ? b.data : "");
    sg_buf_free(&b);
    if (json_object_get(inv, "script"))
        kv(r, "Script", str(inv, "script"));
    kv(r, "Working folder", str(inv, "cwd"));
    json_t *pol = first_event(t, "policy_applied");
    kv(r, "Sandbox", pol ? str(pol, "message") : "(no policy_applied event)");
    json_t *env = first_event(t, "env_filtered");
    kv(r, "Environment", env ? str(env, "message") : "(no env_filtered event)");
    json_t *man = json_object_get(t, "manifests");
    if (man)
        kv(r, "Manifest since its last run", str(man, "state"));
    limits(r, json_object_get(t, "limits"));
    table_close(r);
    end_section(r);
}

/* A severity's colour (its CSS class) and its words: the class names are
 * ours, never the trace's string. */
static const struct {
    const char *sev, *css, *words;
} SEVERITIES[] = {
    {"critical", "sev-critical", "an attack"},
    {"high", "sev-high", "an attack"},
    {"medium", "sev-medium", "suspicious"},
    {"low", "sev-low", "information only"},
};

static size_t severity_of(const char *sev)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(SEVERITIES); i++)
        if (!strcmp(sev, SEVERITIES[i].sev))
            return i;
    return SG_ARRAY_LEN(SEVERITIES);
}

/* The run is an attack's: no refusal of it gets a way to allow it. */
static bool run_is_attack(const struct rep *r)
{
    const char *sev = str(json_object_get(r->trace, "violation_summary"), "max_severity");
    return severity_of(sev) < 2;
}

/* A severity, coloured in HTML, in capitals in Markdown (words either way). */
static void severity(struct rep *r, const char *sev)
{
    size_t k = severity_of(sev);
    if (is_html(r))
        fprintf(r->f, "<span class=\"sev %s\">",
                k < SG_ARRAY_LEN(SEVERITIES) ? SEVERITIES[k].css : "sev-other");
    else
        fputs("**", r->f);
    if (k < SG_ARRAY_LEN(SEVERITIES)) {
        for (const char *c = sev; *c; c++)
            fputc(*c - 'a' + 'A', r->f);
    } else {
        text(r, sev);
    }
    fputs(is_html(r) ? "</span>" : "**", r->f);
}

static void verdict_line(struct rep *r, json_t *vs)
{
    const char *sev = str(vs, "max_severity");
    long long total = (long long)json_integer_value(json_object_get(vs, "total_enforcements"));
    bool all = json_is_true(json_object_get(vs, "all_prevented"));
    size_t k = severity_of(sev);
    fputs(is_html(r) ? "<p class=\"verdict\">Verdict: " : "**Verdict:** ", r->f);
    if (!sev[0] || !strcmp(sev, "none")) {
        fprintf(r->f, "No threat observed (%lld enforcement%s, none classified as a threat).",
                total, total == 1 ? "" : "s");
    } else {
        severity(r, sev);
        fprintf(r->f, " — %s%sthe most severe class of %lld enforcement%s; %s.",
                k < SG_ARRAY_LEN(SEVERITIES) ? SEVERITIES[k].words : "",
                k < SG_ARRAY_LEN(SEVERITIES) ? ": " : "", total, total == 1 ? "" : "s",
                all ? "every one was prevented" : "NOT every one was prevented");
    }
    fputs(is_html(r) ? "</p>\n" : "\n\n", r->f);
    if (k < 2)
        say(r, "This run was an attack: what it attempted is below, and no way to allow any "
               "of it is given.");
}

static void one_class(struct rep *r, json_t *c)
{
    fputs(is_html(r) ? "<tr><td>" : "- ", r->f);
    text(r, str(c, "class"));
    fputs(is_html(r) ? "</td><td>" : " — severity ", r->f);
    severity(r, str(c, "severity"));
    fputs(is_html(r) ? "</td><td>" : ", MITRE ATT&CK tactic ", r->f);
    text(r, str(c, "mitre_tactic"));
    fputs(is_html(r) ? "</td><td>" : ", technique ", r->f);
    text(r, str(c, "mitre_technique"));
    fprintf(r->f, is_html(r) ? "</td><td>%lld</td><td><ul>" : ", %lld events; evidence:\n",
            (long long)json_integer_value(json_object_get(c, "count")));
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get(c, "evidence"), i, e) {
        fputs(is_html(r) ? "<li>" : "  - ", r->f);
        text(r, json_string_value(e));
        fputs(is_html(r) ? "</li>" : "\n", r->f);
    }
    fputs(is_html(r) ? "</ul></td></tr>\n" : "", r->f);
}

static void verdict(struct rep *r)
{
    json_t *vs = json_object_get(r->trace, "violation_summary");
    heading(r, "verdict", "Verdict and classes");
    verdict_line(r, vs);
    json_t *cls = json_object_get(vs, "classifications");
    if (!json_array_size(cls)) {
        say(r, "No class: classes come only from refusals actually observed.");
        end_section(r);
        return;
    }
    say(r, "The attempts that decided it, by class (the most severe first):");
    if (is_html(r))
        fputs("<table class=\"list\" id=\"classes\">\n<tr><th>Class</th><th>Severity</th>"
              "<th>MITRE tactic</th><th>MITRE technique</th><th>Count</th><th>Evidence</th></tr>\n",
              r->f);
    for (size_t k = 0; k <= SG_ARRAY_LEN(SEVERITIES); k++) {
        size_t i;
        json_t *c;
        json_array_foreach (cls, i, c)
            if (severity_of(str(c, "severity")) == k)
                one_class(r, c);
    }
    fputs(is_html(r) ? "</table>\n" : "\n", r->f);
    end_section(r);
}

/* ------------------------------------------------------------ timeline */

#define TL_W 900
#define TL_LEFT 90
#define TL_BUCKETS 90

enum lane { LANE_OUTPUT, LANE_PROMPT, LANE_DECISION, LANE_REFUSAL, LANE_COUNT };

static const char *const lane_names[LANE_COUNT] = {"output", "prompts", "decisions", "refusals"};

static int lane_of(json_t *ev)
{
    const char *k = str(ev, "kind");
    if (is_output(k))
        return LANE_OUTPUT;
    if (!strcmp(k, "permission_asked"))
        return LANE_PROMPT;
    if (!strcmp(k, "permission_decided"))
        return LANE_DECISION;
    if (prevented(ev) && strcmp(k, "env_filtered"))
        return LANE_REFUSAL;
    return -1;
}

static int bucket_of(struct rep *r, json_t *ev)
{
    int64_t d = ev_ns(ev) - r->t0;
    int b = (int)((double)(d < 0 ? 0 : d) / (double)r->span * (TL_BUCKETS - 1));
    return b < 0 ? 0 : b >= TL_BUCKETS ? TL_BUCKETS - 1 : b;
}

/* Output bytes per bucket; *peak the biggest. */
static void output_rate(struct rep *r, double rate[TL_BUCKETS], double *peak)
{
    size_t i;
    json_t *ev;
    memset(rate, 0, sizeof(double) * TL_BUCKETS);
    *peak = 0;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        if (lane_of(ev) != LANE_OUTPUT)
            continue;
        int b = bucket_of(r, ev);
        rate[b] += (double)strlen(str(ev, "message")) + 1;
        *peak = rate[b] > *peak ? rate[b] : *peak;
    }
}

static void svg_mark(struct rep *r, int lane, json_t *ev)
{
    double x = TL_LEFT + (double)bucket_of(r, ev) * (TL_W - TL_LEFT - 10) / (TL_BUCKETS - 1);
    int y = 60 + lane * 24;
    const char *fill = lane == LANE_PROMPT     ? "#2b6cb0"
                       : lane == LANE_REFUSAL  ? "#c53030"
                       : json_is_true(json_object_get(json_object_get(ev, "data"), "prevented"))
                           ? "#c05621"
                           : "#2f855a";
    char at[32];
    offset(r, ev, at);
    fprintf(r->f, "<rect x=\"%.1f\" y=\"%d\" width=\"4\" height=\"14\" fill=\"%s\"><title>%s ",
            x - 2, y - 7, fill, at);
    cleanup_free char *msg = sg_home_short(str(ev, "message"), r->home);
    text_n(r, msg, strlen(msg), 200);
    fputs("</title></rect>\n", r->f);
}

static void svg_axis(struct rep *r)
{
    for (int q = 0; q <= 4; q++) {
        double x = TL_LEFT + (double)q * (TL_W - TL_LEFT - 10) / 4;
        fprintf(r->f,
                "<line x1=\"%.1f\" y1=\"8\" x2=\"%.1f\" y2=\"150\" stroke=\"#ccc\"/>"
                "<text x=\"%.1f\" y=\"166\" font-size=\"11\" text-anchor=\"%s\">+%.3f s</text>\n",
                x, x, x, q == 0 ? "start" : q == 4 ? "end" : "middle",
                (double)r->span * q / 4 / 1e9);
    }
    for (int l = 0; l < LANE_COUNT; l++)
        fprintf(r->f, "<text x=\"4\" y=\"%d\" font-size=\"12\">%s</text>\n",
                l == LANE_OUTPUT ? 34 : 64 + l * 24, lane_names[l]);
}

static void timeline_svg(struct rep *r)
{
    double rate[TL_BUCKETS], peak;
    output_rate(r, rate, &peak);
    fprintf(r->f, "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"%d\" "
                  "height=\"172\" viewBox=\"0 0 %d 172\">\n<title>Timeline</title>\n",
            TL_W, TL_W);
    svg_axis(r);
    r->html.no_marks = true;
    for (int b = 0; b < TL_BUCKETS && peak > 0; b++) {
        double h = rate[b] / peak * 40;
        if (h > 0)
            fprintf(r->f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#718096\">"
                    "<title>%.0f bytes</title></rect>\n",
                    TL_LEFT + (double)b * (TL_W - TL_LEFT - 10) / (TL_BUCKETS - 1) - 3, 46 - h,
                    6.0, h, rate[b]);
    }
    size_t i, drawn[LANE_COUNT] = {0}, more[LANE_COUNT] = {0};
    json_t *ev;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        int l = lane_of(ev);
        if (l <= LANE_OUTPUT)
            continue;
        if (drawn[l] >= SG_REPORT_MARKS_MAX) {
            more[l]++;
            continue;
        }
        drawn[l]++;
        svg_mark(r, l, ev);
    }
    r->html.no_marks = false;
    fputs("</svg>\n", r->f);
    for (int l = 0; l < LANE_COUNT; l++)
        if (more[l])
            fprintf(r->f, "<p class=\"cut\">%zu more %s not drawn (all are listed below).</p>\n",
                    more[l], lane_names[l]);
}

/* Markdown has no SVG: one row of characters per lane. */
static void timeline_text(struct rep *r)
{
    double rate[TL_BUCKETS], peak;
    output_rate(r, rate, &peak);
    static const char *const bars[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    char marks[LANE_COUNT][TL_BUCKETS];
    memset(marks, '.', sizeof marks);
    size_t i;
    json_t *ev;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        int l = lane_of(ev);
        if (l > LANE_OUTPUT)
            marks[l][bucket_of(r, ev)] = l == LANE_PROMPT ? '?' : l == LANE_REFUSAL ? 'x'
                                         : prevented(ev)       ? 'D' : 'A';
    }
    fputs("```\n", r->f);
    fprintf(r->f, "%-10s", lane_names[0]);
    for (int b = 0; b < TL_BUCKETS; b++)
        fputs(peak > 0 ? bars[(int)(rate[b] / peak * 8 + 0.999)] : " ", r->f);
    fputc('\n', r->f);
    for (int l = 1; l < LANE_COUNT; l++)
        fprintf(r->f, "%-10s%.*s\n", lane_names[l], TL_BUCKETS, marks[l]);
    fprintf(r->f, "%-10s+0 s%*s+%.3f s\n```\n\n", "", TL_BUCKETS - 14, "",
            (double)r->span / 1e9);
    fputs("Output bytes per slice; `?` a prompt, `A` allowed, `D` denied, `x` a refusal.\n\n",
          r->f);
}

static void timeline(struct rep *r)
{
    heading(r, "timeline", "Timeline");
    if (is_html(r))
        timeline_svg(r);
    else
        timeline_text(r);
    end_section(r);
}

/* ----------------------------------------------- decisions and refusals */

/* Who decided, in one word, from perm.c's decided_by. */
static const char *who_of(const char *by)
{
    if (!strcmp(by, "person") || sg_str_has_prefix(by, "your answer for"))
        return "person";
    if (sg_str_has_prefix(by, "timeout"))
        return "nobody (timed out)";
    if (sg_str_has_prefix(by, "grant "))
        return "grant (a person's \"always\")";
    if (sg_str_has_prefix(by, "rule ") && strstr(by, "(manifest)"))
        return "manifest";
    if (sg_str_has_prefix(by, "rule "))
        return "rule";
    if (sg_str_has_prefix(by, "policy"))
        return "policy file (no rule: denied)";
    if (strstr(by, "agent"))
        return "agent";
    if (!strcmp(by, "deny-all"))
        return "default (nobody to ask)";
    if (strstr(by, "--allow-all"))
        return "--allow-all";
    return "broker";
}

/* Identical decisions (the same request, answer, scope and decider) are
 * one row with their count: sixty `sleep 0.2` the manifest allowed do not
 * drown a person's own answers. */
struct dgroup {
    json_t *ev; /* the first of them */
    long long n;
};

/* The rules an answer kept, as they were saved (perm.c's "kept": a glob
 * maybe, wider than the request shown beside it). */
static void kept(struct rep *r, json_t *d)
{
    json_t *k = json_object_get(d, "kept");
    if (!json_array_size(k))
        return;
    bool always = !strcmp(str(d, "scope"), "always");
    fputs("; ", r->f);
    fputs(always ? "saved as a grant for later runs: " : "kept for the rest of this run: ", r->f);
    size_t i;
    json_t *x;
    json_array_foreach (k, i, x) {
        fputs(i ? ", " : "", r->f);
        text(r, json_string_value(x));
    }
}

static void decision_row(struct rep *r, json_t *ev, long long times)
{
    json_t *d = json_object_get(ev, "data");
    char at[32];
    offset(r, ev, at);
    const char *by = str(d, "decided_by");
    if (is_html(r))
        fprintf(r->f, "<tr class=\"%s\"><td>%s</td><td>", prevented(ev) ? "deny" : "allow", at);
    else
        fprintf(r->f, "- %s: ", at);
    text(r, str(d, "request"));
    fputs(is_html(r) ? "</td><td>" : " → ", r->f);
    text(r, str(d, "decision"));
    fputs(is_html(r) ? "</td><td>" : " (scope ", r->f);
    text(r, str(d, "scope"));
    fprintf(r->f, is_html(r) ? "</td><td>%s</td><td>" : ") by **%s**: ", who_of(by));
    text(r, by);
    kept(r, d);
    fprintf(r->f, is_html(r) ? "</td><td>%lld</td></tr>\n" : " — %lld×\n", times);
}

/* The decisions grouped (struct dgroup), in the order first made. *n: how
 * many groups. */
static struct dgroup *decision_groups(struct rep *r, size_t *n)
{
    json_t *seen = json_object(); /* key -> its group's index */
    struct dgroup *g = NULL;
    size_t i, ng = 0;
    json_t *ev;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        if (strcmp(str(ev, "kind"), "permission_decided"))
            continue;
        json_t *d = json_object_get(ev, "data"), *rep = json_object_get(ev, "repeated");
        long long times = 1 + (json_is_integer(rep) ? (long long)json_integer_value(rep) : 0);
        /* as JSON: no two different decisions (a forged trace's bytes) share a key */
        json_t *k = json_pack("[s,s,s,s,O?]", str(d, "request"), str(d, "decision"),
                              str(d, "scope"), str(d, "decided_by"), json_object_get(d, "kept"));
        cleanup_free char *key = k ? json_dumps(k, JSON_COMPACT) : NULL;
        json_decref(k);
        if (!key) /* (not JSON: shown alone) */
            key = sg_xasprintf("%zu", i);
        json_t *at = json_object_get(seen, key);
        if (at) {
            g[json_integer_value(at)].n += times;
            continue;
        }
        g = sg_xrealloc(g, (ng + 1) * sizeof *g);
        g[ng] = (struct dgroup){.ev = ev, .n = times};
        json_object_set_new_nocheck(seen, key, json_integer((json_int_t)ng++));
    }
    json_decref(seen);
    *n = ng;
    return g;
}

static void decisions(struct rep *r)
{
    heading(r, "decisions", "Decisions");
    size_t n;
    cleanup_free struct dgroup *g = decision_groups(r, &n);
    if (!n) {
        say(r, "No decision: nothing this run did needed one.");
        end_section(r);
        return;
    }
    say(r, "A person's answers first, then the rest; identical decisions (the same request, "
           "answer, scope and decider) are one row, with how many times.");
    if (is_html(r))
        fputs("<table class=\"list\">\n<tr><th>First at</th><th>Request</th><th>Decision</th>"
              "<th>Scope</th><th>Who</th><th>Decided by</th><th>Times</th></tr>\n",
              r->f);
    for (int person = 1; person >= 0; person--)
        for (size_t i = 0; i < n; i++) {
            const char *by = str(json_object_get(g[i].ev, "data"), "decided_by");
            if ((strcmp(who_of(by), "person") == 0) == person)
                decision_row(r, g[i].ev, g[i].n);
        }
    fputs(is_html(r) ? "</table>\n" : "\n", r->f);
    end_section(r);
}

static void refusal_row(struct rep *r, json_t *ev)
{
    char at[32];
    offset(r, ev, at);
    json_t *rep = json_object_get(ev, "repeated");
    fprintf(r->f, is_html(r) ? "<tr><td>%s</td><td>" : "- %s ", at);
    text(r, str(ev, "kind"));
    fputs(is_html(r) ? "</td><td>" : ": ", r->f);
    text(r, str(ev, "message"));
    if (json_is_integer(rep))
        fprintf(r->f, " (and %lld more times)", (long long)json_integer_value(rep));
    fputs(is_html(r) ? "</td></tr>\n" : "\n", r->f);
}

/* A refusal that is an attack's (refusals.h): its own mark, or, in a trace
 * older than the mark, the run's severity. */
static bool attack_refusal(const struct rep *r, json_t *x)
{
    return json_is_true(json_object_get(x, "attack")) || run_is_attack(r);
}

/* The trace's refusals (refusals.h) of one side: an attack's (what it
 * attempted, never how to allow it) or honest requests' (each with the way
 * to allow it). */
static void refusal_list(struct rep *r, bool attack)
{
    size_t i, n = 0;
    json_t *x;
    json_array_foreach (json_object_get(r->trace, "refusals"), i, x) {
        if (attack_refusal(r, x) != attack)
            continue;
        if (!n++)
            fputs(is_html(r) ? "<ul>\n" : "", r->f);
        fputs(is_html(r) ? "<li>" : "- ", r->f);
        text(r, str(x, str(x, "attempt")[0] ? "attempt" : "tool"));
        fputc(' ', r->f);
        text(r, str(x, "subject"));
        fprintf(r->f, " (%lld×, ", (long long)json_integer_value(json_object_get(x, "count")));
        text(r, str(x, "why"));
        fputs(attack ? ")" : "): ", r->f);
        if (!attack)
            text(r, str(x, "allow"));
        fputs(is_html(r) ? "</li>\n" : "\n", r->f);
    }
    if (n)
        fputs(is_html(r) ? "</ul>\n" : "\n", r->f);
}

/* "How to allow each" is for honest requests only: an attack's refusals are
 * listed as what it attempted, and a reader is never taught to permit them. */
static void how_to_allow(struct rep *r)
{
    size_t i, attack = 0;
    json_t *x, *list = json_object_get(r->trace, "refusals");
    json_array_foreach (list, i, x)
        attack += attack_refusal(r, x);
    if (attack) {
        fputs(is_html(r) ? "<h3>Refused requests of the attack</h3>\n"
                         : "### Refused requests of the attack\n\n", r->f);
        cleanup_free char *s = sg_xasprintf(
            "%zu refused request%s %s part of this run's attack: no way to allow %s is given.",
            attack, attack == 1 ? "" : "s", attack == 1 ? "was" : "were",
            attack == 1 ? "it" : "them");
        say(r, s);
        refusal_list(r, true);
    }
    if (json_array_size(list) > attack) {
        fputs(is_html(r) ? "<h3>How to allow each</h3>\n" : "### How to allow each\n\n", r->f);
        refusal_list(r, false);
    }
}

static void refusals(struct rep *r)
{
    heading(r, "refusals", "Refused attempts");
    size_t i, n = 0;
    json_t *ev;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        const char *k = str(ev, "kind");
        /* decisions are listed above; the environment's filter is no attempt */
        if (!prevented(ev) || !strcmp(k, "permission_decided") || !strcmp(k, "env_filtered"))
            continue;
        if (!n++ && is_html(r))
            fputs("<table class=\"list\">\n<tr><th>Time</th><th>Kind</th><th>What</th></tr>\n",
                  r->f);
        refusal_row(r, ev);
    }
    if (n)
        fputs(is_html(r) ? "</table>\n" : "\n", r->f);
    else
        say(r, "Nothing was refused (denied decisions, if any, are listed above).");
    long long dropped = (long long)json_integer_value(
        json_object_get(json_object_get(r->trace, "output"), "trace_events_dropped"));
    if (dropped) {
        cleanup_free char *s = sg_xasprintf(
            "The broker kept no more events past its cap: %lld were counted, not kept (the "
            "verdict's counts include them).", dropped);
        say(r, s);
    }
    how_to_allow(r);
    end_section(r);
}

/* ---------------------------------------------------------------- output */

static void output_line(struct rep *r, json_t *ev, size_t *shown)
{
    cleanup_free char *msg = sg_home_short(str(ev, "message"), r->home);
    size_t len = strlen(msg), room = SG_REPORT_OUTPUT_MAX - *shown;
    size_t max = room < SG_REPORT_FIELD_MAX ? room : SG_REPORT_FIELD_MAX;
    char at[32];
    offset(r, ev, at);
    bool err = !strcmp(str(ev, "kind"), "stderr");
    if (is_html(r))
        fprintf(r->f, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>", err ? "err" : "out", at,
                err ? "stderr" : "stdout");
    else
        fprintf(r->f, "- %s %s ", at, err ? "stderr" : "stdout");
    text_n(r, msg, len, max);
    fputs(is_html(r) ? "</td></tr>\n" : "\n", r->f);
    size_t show = sg_utf8_cut(msg, len, max);
    /* a line cut for want of room spends it: what follows is counted, not
     * listed a row at a time (a room too small for its first character
     * would show nothing of each line and still give each a row) */
    *shown = show < len && max == room ? SG_REPORT_OUTPUT_MAX : *shown + show;
}

static void output(struct rep *r)
{
    heading(r, "output", "Output");
    json_t *o = json_object_get(r->trace, "output");
    cleanup_free char *counts = sg_xasprintf(
        "stdout %lld bytes, stderr %lld bytes; past the run's cap the broker dropped %lld and "
        "%lld bytes.", (long long)json_integer_value(json_object_get(o, "stdout_bytes")),
        (long long)json_integer_value(json_object_get(o, "stderr_bytes")),
        (long long)json_integer_value(json_object_get(o, "stdout_dropped")),
        (long long)json_integer_value(json_object_get(o, "stderr_dropped")));
    say(r, counts);
    size_t i, shown = 0, n = 0, more_lines = 0, more_bytes = 0;
    json_t *ev;
    json_array_foreach (json_object_get(r->trace, "events"), i, ev) {
        if (!is_output(str(ev, "kind")))
            continue;
        if (shown >= SG_REPORT_OUTPUT_MAX) {
            more_lines++;
            more_bytes += strlen(str(ev, "message")) + 1;
            continue;
        }
        if (!n++ && is_html(r))
            fputs("<table class=\"list\" id=\"output-lines\">\n", r->f);
        output_line(r, ev, &shown);
    }
    if (n)
        fputs(is_html(r) ? "</table>\n" : "\n", r->f);
    if (more_lines)
        fprintf(r->f, is_html(r) ? "<p class=\"cut\">&#8230; %zu more bytes in %zu more lines "
                                   "not shown (the trace holds them).</p>\n"
                                 : "*… %zu more bytes in %zu more lines not shown (the trace "
                                   "holds them).*\n\n",
                more_bytes, more_lines);
    if (!n)
        say(r, "The run wrote nothing.");
    end_section(r);
}

/* ----------------------------------------------------- diff, reproduce */

static void diff(struct rep *r, json_t *prev)
{
    heading(r, "diff", "Against the previous version");
    if (!prev) {
        say(r, "No run of a previous version of this skill (another content digest) in the "
               "traces folder.");
        end_section(r);
        return;
    }
    cleanup_free char *na = sg_xasprintf("run %s", str(prev, "trace_id"));
    cleanup_free char *nb = sg_xasprintf("run %s", str(r->trace, "trace_id"));
    json_t *d = sg_trace_diff(prev, r->trace, na, nb);
    cleanup_free char *txt = sg_trace_diff_text(d); /* sanitized: names are the skill's */
    json_decref(d);
    fputs(is_html(r) ? "<p>Against " : "Against ", r->f);
    text(r, na);
    fputs(", version ", r->f);
    text(r, str(prev, "skill_version"));
    fputs(", started ", r->f);
    text(r, str(prev, "started_at"));
    fputs(is_html(r) ? ":</p>\n" : ":\n\n", r->f);
    block(r, txt);
    end_section(r);
}

/* A word for a POSIX shell: single-quoted unless plainly safe. */
static void shell_word(struct sg_buf *b, const char *s)
{
    if (s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                          "_./:=@%+,-~") == strlen(s) && s[0] != '~') {
        sg_buf_printf(b, " %s", s);
        return;
    }
    sg_buf_append(b, " '", 2);
    for (; *s; s++)
        if (*s == '\'')
            sg_buf_append(b, "'\\''", 4);
        else
            sg_buf_append(b, s, 1);
    sg_buf_append(b, "'", 1);
}

/* A word where the command takes a path or a run id, never an option: a
 * forged trace's "--allow-all" as its folder is written "./--allow-all"
 * (the same relative path; no run id starts with "-"). A path in the home
 * is ~/ and the rest quoted as needed (the shell expands the bare ~/). */
static void shell_operand(struct sg_buf *b, const char *s, const char *home)
{
    cleanup_free char *t = sg_home_short(s, home);
    if (strcmp(t, s) && t[0] == '~' && (t[1] == '/' || !t[1])) { /* it was the home's */
        sg_buf_printf(b, " ~%s", t[1] ? "/" : "");
        if (t[1] && t[2]) {
            struct sg_buf w;
            sg_buf_init(&w, strlen(t) * 4 + 8);
            shell_word(&w, t + 2);
            sg_buf_append(b, w.data + 1, w.len - 1); /* without its leading blank */
            sg_buf_free(&w);
        }
        return;
    }
    if (s[0] != '-') {
        shell_word(b, s);
        return;
    }
    cleanup_free char *rel = sg_xasprintf("./%s", s);
    shell_word(b, rel);
}

static void reproduce(struct rep *r, json_t *prev)
{
    json_t *t = r->trace, *inv = json_object_get(t, "invocation");
    const char *id = str(t, "trace_id");
    struct sg_buf b;
    sg_buf_init(&b, 256 * 1024);
    if (json_is_true(json_object_get(inv, "working_folder"))) {
        sg_buf_printf(&b, "cd");
        shell_operand(&b, str(inv, "cwd"), r->home);
        sg_buf_printf(&b, "\n");
    }
    sg_buf_printf(&b, "skillgate inspect");
    shell_operand(&b, str(t, "skill_root"), r->home);
    sg_buf_printf(&b, "\nskillgate run");
    json_t *input = json_object_get(t, "input");
    if (json_is_string(input)) { /* the person's own: given back as it was */
        sg_buf_printf(&b, " -i");
        shell_word(&b, json_string_value(input));
    }
    shell_operand(&b, str(t, "skill_root"), r->home);
    if (json_object_get(inv, "script")) {
        sg_buf_printf(&b, " --script");
        shell_operand(&b, str(inv, "script"), NULL);
        size_t i;
        json_t *a;
        sg_buf_printf(&b, " --");
        json_array_foreach (json_object_get(inv, "args"), i, a)
            shell_word(&b, json_string_value(a) ?: "");
    }
    json_t *big = json_object_get(t, "input_bytes");
    if (json_is_integer(big))
        sg_buf_printf(&b, "    # its input (%lld bytes) was too long to keep: its SHA-256 is in "
                          "the audit record", (long long)json_integer_value(big));
    else if (!json_is_string(input))
        sg_buf_printf(&b, "    # no input kept: none was given, or the trace is older than the "
                          "input kept (its SHA-256 is in the audit record)");
    sg_buf_printf(&b, "\nskillgate audit show");
    shell_operand(&b, id, NULL);
    if (prev) {
        sg_buf_printf(&b, "\nskillgate traces diff");
        shell_operand(&b, str(prev, "trace_id"), NULL);
        shell_operand(&b, id, NULL);
    }
    sg_buf_printf(&b, "\nskillgate traces report");
    shell_operand(&b, id, NULL);
    sg_buf_printf(&b, " --html -o report.html\n");
    cleanup_free char *cmds = sg_buf_steal(&b);
    cleanup_free char *safe = sg_sanitize_str(cmds, SG_SAN_KEEP_NEWLINE);
    heading(r, "reproduce", "Reproduce");
    say(r, "Under the same policy (the policy digest above says whether it changed):");
    block(r, safe);
    end_section(r);
}

/* ----------------------------------------------------------------- page */

static const char STYLE[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1a202c}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #cbd5e0;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #e2e8f0;"
    "padding:2px 6px;text-align:left;vertical-align:top}td:last-child{overflow-wrap:anywhere}"
    "table.kv th{background:#f7fafc;white-space:nowrap}"
    "tr.deny td{background:#fff5f5}tr.allow td{background:#f0fff4}tr.err td{color:#9b2c2c}"
    "pre{background:#f7fafc;padding:8px;overflow-x:auto;white-space:pre-wrap}"
    ".esc{background:#fefcbf;color:#744210;font-family:monospace}"
    ".cut{color:#718096;font-style:italic}.verdict{font-weight:bold;font-size:1.3em}"
    ".sev{padding:1px 6px;border-radius:3px;font-weight:bold}"
    ".sev-critical{background:#9b2c2c;color:#fff}.sev-high{background:#dd6b20;color:#fff}"
    ".sev-medium{background:#ecc94b;color:#1a202c}.sev-low{background:#bee3f8;color:#1a202c}"
    ".sev-other{background:#e2e8f0;color:#1a202c}"
    "svg{border:1px solid #e2e8f0;max-width:100%}";

static void page_head(struct rep *r)
{
    const char *name = str(r->trace, "skill_name");
    if (!is_html(r)) {
        fputs("# skillgate report: ", r->f);
        text(r, name);
        fputs("\n\n*A run of a skill under skillgate's sandbox, from its trace. Everything the "
              "skill chose is shown as code.*\n\n", r->f);
        return;
    }
    sg_html_head(r->f, STYLE);
    fputs("skillgate report: ", r->f);
    r->html.no_marks = true;
    text(r, name);
    r->html.no_marks = false;
    fprintf(r->f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>skillgate report: ", STYLE);
    text(r, name);
    fputs("</h1>\n<p>A run of a skill under skillgate's sandbox, from its trace. This page "
          "holds no script and loads nothing.</p>\n", r->f);
}

int sg_report_write(json_t *trace, json_t *prev, int fmt, FILE *out)
{
    if (!json_is_object(trace) || (fmt != SG_REPORT_HTML && fmt != SG_REPORT_MD) || !out)
        return -EINVAL;
    struct rep r = {.f = out, .fmt = fmt, .trace = trace, .home = sg_invoking_home(),
                    .html = {.f = out}};
    set_span(&r);
    page_head(&r);
    verdict(&r); /* what a reader needs first: the verdict and what decided it */
    summary(&r);
    manifest(&r);
    timeline(&r);
    decisions(&r);
    refusals(&r);
    output(&r);
    diff(&r, json_is_object(prev) ? prev : NULL);
    reproduce(&r, json_is_object(prev) ? prev : NULL);
    if (is_html(&r))
        fputs("<footer><p class=\"cut\">Made by skillgate traces report.</p></footer>\n"
              "</body>\n</html>\n", out);
    else
        fputs("---\n*Made by `skillgate traces report`.*\n", out);
    return ferror(out) ? -EIO : 0;
}

json_t *sg_report_prev_row(json_t *rows, json_t *trace)
{
    const char *skill = str(trace, "skill_name"), *digest = str(trace, "skill_digest");
    const char *started = str(trace, "started_at");
    json_t *best = NULL;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        if (strcmp(str(row, "skill_name"), skill) || strcmp(str(row, "started_at"), started) >= 0)
            continue;
        if (!strcmp(str(row, "skill_digest"), digest))
            continue;
        best = row; /* rows are oldest first: the last one wins */
    }
    return best;
}
