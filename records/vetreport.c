/* skillgate vet merge --html / --sarif: a marketplace's vetting as one
 * page or one SARIF log (vetreport.h says what each holds). */
#include "vetreport.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "classify.h"
#include "digest.h"
#include "htmltext.h"
#include "report.h"
#include "sanitize.h"
#include "util.h"

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* ------------------------------------------------------------- verdicts */

/* A record's verdict as ours: the section it is listed in, its word and the
 * class that colours it (the word is always there: never colour alone). */
enum cat { CAT_MALICIOUS, CAT_REVIEW, CAT_CLEAN, CAT_COUNT };

static const struct {
    const char *key, *word, *cls, *section, *title;
} CATS[CAT_COUNT] = {
    [CAT_MALICIOUS] = {"malicious", "MALICIOUS", "mal", "malicious", "Malicious"},
    [CAT_REVIEW] = {"needs_review", "NEEDS REVIEW", "rev", "review", "Needs review"},
    [CAT_CLEAN] = {"clean", "CLEAN", "ok", "clean", "Clean"},
};

/* An unknown verdict (a forged record) is listed with those to review. */
static enum cat cat_of(json_t *skill)
{
    const char *v = str(skill, "verdict");
    for (int c = 0; c < CAT_COUNT; c++)
        if (!strcmp(v, CATS[c].key))
            return (enum cat)c;
    return CAT_REVIEW;
}

static bool known_verdict(json_t *skill)
{
    const char *v = str(skill, "verdict");
    return !strcmp(v, "malicious") || !strcmp(v, "needs_review") || !strcmp(v, "clean");
}

/* ----------------------------------------------------------------- HTML */

struct vr {
    FILE *f;
    struct sg_html html;
};

static void text(struct vr *v, const char *s)
{
    sg_html_text_n(&v->html, s ? s : "", s ? strlen(s) : 0, SG_REPORT_FIELD_MAX);
}

/* An integer of the record, or "-". */
static void num(struct vr *v, json_t *n)
{
    if (json_is_integer(n))
        fprintf(v->f, "%lld", (long long)json_integer_value(n));
    else
        fputs("-", v->f);
}

/* "sha256:0123456789ab…": enough to tell skills apart; the JSON has it all. */
static void short_digest(struct vr *v, const char *d)
{
    size_t keep = sizeof "sha256:" - 1 + 12;
    if (sg_str_has_prefix(d, "sha256:") && strlen(d) > keep &&
        strspn(d + 7, "0123456789abcdef") == strlen(d + 7)) {
        fprintf(v->f, "<code>%.*s&#8230;</code>", (int)keep, d);
        return;
    }
    fputs("<code>", v->f);
    text(v, d);
    fputs("</code>", v->f);
}

static void badge(struct vr *v, json_t *skill)
{
    enum cat c = cat_of(skill);
    fprintf(v->f, "<span class=\"b %s\">%s</span>", CATS[c].cls,
            known_verdict(skill) ? CATS[c].word : "UNKNOWN VERDICT");
}

/* "file:line" of a reason or a finding (either may be missing). */
static void where(struct vr *v, json_t *o)
{
    json_t *file = json_object_get(o, "file"), *line = json_object_get(o, "line");
    if (!json_is_string(file) && !json_is_integer(line)) {
        fputs("-", v->f);
        return;
    }
    text(v, json_is_string(file) ? json_string_value(file) : "SKILL.md");
    if (json_is_integer(line))
        fprintf(v->f, ":%lld", (long long)json_integer_value(line));
}

/* The strings of an array, one <li> each (or words, sep between). */
static void str_list(struct vr *v, json_t *a, bool words)
{
    size_t i;
    json_t *s;
    fputs(words ? "" : "<ul>", v->f);
    json_array_foreach (a, i, s) {
        fputs(words ? (i ? " " : "") : "<li>", v->f);
        text(v, json_is_string(s) ? json_string_value(s) : "?");
        fputs(words ? "" : "</li>", v->f);
    }
    fputs(words ? "" : "</ul>", v->f);
}

static void reason_row(struct vr *v, json_t *r)
{
    const char *lvl = str(r, "level");
    const char *cls = !strcmp(lvl, "malicious") ? "mal" : !strcmp(lvl, "review") ? "rev" : "note";
    fprintf(v->f, "<tr><td><span class=\"b %s\">", cls);
    text(v, lvl);
    fputs("</span></td><td>", v->f);
    text(v, str(r, "rule"));
    if (json_is_string(json_object_get(r, "severity"))) {
        fputs(" (", v->f);
        text(v, str(r, "severity"));
        fputs(")", v->f);
    }
    fputs("</td><td>", v->f);
    text(v, str(r, "source"));
    fputs("</td><td>", v->f);
    where(v, r);
    if (json_is_integer(json_object_get(r, "run"))) {
        fputs(", run ", v->f);
        num(v, json_object_get(r, "run"));
    }
    fputs("</td><td>", v->f);
    text(v, str(r, "summary"));
    str_list(v, json_object_get(r, "evidence"), false);
    fputs("</td></tr>\n", v->f);
}

static void reasons(struct vr *v, json_t *skill)
{
    json_t *rs = json_object_get(skill, "reasons");
    if (!json_array_size(rs)) {
        fputs("<p>No reason: nothing static or dynamic decided against it.</p>\n", v->f);
        return;
    }
    fputs("<h4>Why</h4>\n<table class=\"list reasons\">\n<tr><th>Level</th><th>Rule</th>"
          "<th>Source</th><th>Where</th><th>Summary and evidence</th></tr>\n", v->f);
    size_t i;
    json_t *r;
    json_array_foreach (rs, i, r)
        reason_row(v, r);
    fputs("</table>\n", v->f);
}

static void run_classes(struct vr *v, json_t *classes)
{
    size_t i;
    json_t *c;
    if (!json_array_size(classes))
        fputs("none", v->f);
    json_array_foreach (classes, i, c) {
        fputs(i ? ", " : "", v->f);
        text(v, str(c, "class"));
        fputs(" (", v->f);
        text(v, str(c, "severity"));
        fputs(") &#215;", v->f);
        num(v, json_object_get(c, "count"));
    }
}

static void run_row(struct vr *v, size_t n, json_t *run)
{
    fprintf(v->f, "<tr><td>%zu</td><td>", n);
    text(v, str(run, "runnable"));
    fputs("</td><td><code>", v->f);
    str_list(v, json_object_get(run, "args"), true);
    fputs("</code> (from ", v->f);
    text(v, str(run, "args_from"));
    fputs(")</td><td>", v->f);
    text(v, str(run, "status"));
    fputs("</td><td>", v->f);
    num(v, json_object_get(run, "exit"));
    fputs("</td><td>", v->f);
    run_classes(v, json_object_get(run, "classes"));
    fputs("</td><td>", v->f);
    text(v, json_is_string(json_object_get(run, "trace")) ? str(run, "trace") : "-");
    fputs("</td></tr>\n", v->f);
}

static void runs(struct vr *v, json_t *skill)
{
    json_t *rs = json_object_get(skill, "runs"), *nr = json_object_get(skill, "not_run");
    size_t i;
    json_t *x;
    if (json_array_size(rs))
        fputs("<h4>Runs (sandboxed, --prompt deny, decoy credentials)</h4>\n"
              "<table class=\"list runs\">\n<tr><th>#</th><th>Runnable</th><th>Arguments</th>"
              "<th>Status</th><th>Exit</th><th>Classes</th><th>Trace</th></tr>\n", v->f);
    json_array_foreach (rs, i, x)
        run_row(v, i, x);
    if (json_array_size(rs))
        fputs("</table>\n", v->f);
    if (json_array_size(nr))
        fputs("<h4>Not run</h4>\n<ul>\n", v->f);
    json_array_foreach (nr, i, x) {
        fputs("<li>", v->f);
        text(v, str(x, "runnable"));
        fputs(": ", v->f);
        text(v, str(x, "why"));
        fputs("</li>\n", v->f);
    }
    if (json_array_size(nr))
        fputs("</ul>\n", v->f);
}

static void finding_row(struct vr *v, json_t *fd)
{
    fputs("<tr><td>", v->f);
    text(v, str(fd, "kind"));
    fputs("</td><td>", v->f);
    text(v, str(fd, "level"));
    fputs("</td><td>", v->f);
    where(v, fd);
    fputs("</td><td><code>", v->f);
    text(v, str(fd, "excerpt"));
    fputs("</code>", v->f);
    if (json_is_string(json_object_get(fd, "decoded"))) {
        fputs("<br>decoded: <code>", v->f);
        text(v, str(fd, "decoded"));
        fputs("</code>", v->f);
    }
    fputs("</td></tr>\n", v->f);
}

static void static_pass(struct vr *v, json_t *skill)
{
    json_t *st = json_object_get(skill, "static");
    if (!json_is_object(st))
        return;
    fputs("<h4>Static check</h4>\n<p>", v->f);
    num(v, json_object_get(st, "errors"));
    fputs(" errors, ", v->f);
    num(v, json_object_get(st, "warnings"));
    fputs(" warnings; risk ", v->f);
    text(v, str(st, "risk"));
    fputs(": ", v->f);
    text(v, str(st, "risk_why"));
    fputs("</p>\n", v->f);
    str_list(v, json_object_get(st, "problems"), false);
    json_t *fs = json_object_get(st, "findings");
    size_t i;
    json_t *fd;
    if (json_array_size(fs))
        fputs("<table class=\"list findings\">\n<tr><th>Kind</th><th>Level</th><th>Where</th>"
              "<th>Excerpt</th></tr>\n", v->f);
    json_array_foreach (fs, i, fd)
        finding_row(v, fd);
    if (json_array_size(fs))
        fputs("</table>\n", v->f);
    if (json_integer_value(json_object_get(st, "findings_dropped")) > 0) {
        fputs("<p class=\"cut\">", v->f);
        num(v, json_object_get(st, "findings_dropped"));
        fputs(" more findings counted, not kept.</p>\n", v->f);
    }
}

/* The reasons a change brought or took: each {level, rule, summary} (or
 * a summary alone). */
static void reason_list(struct vr *v, json_t *list, const char *title)
{
    if (!json_array_size(list))
        return;
    fprintf(v->f, "<p>%s:</p>\n<ul>\n", title);
    size_t i;
    json_t *x;
    json_array_foreach (list, i, x) {
        fputs("<li>", v->f);
        if (json_is_object(x)) {
            text(v, str(x, "level"));
            fputs(" ", v->f);
            text(v, str(x, "rule"));
            fputs(": ", v->f);
            text(v, str(x, "summary"));
        } else {
            text(v, json_is_string(x) ? json_string_value(x) : "?");
        }
        fputs("</li>\n", v->f);
    }
    fputs("</ul>\n", v->f);
}

static void changes(struct vr *v, json_t *skill)
{
    json_t *ch = json_object_get(skill, "changes");
    if (!json_is_object(ch))
        return;
    fputs("<h4>Against the previous vetting</h4>\n<p>", v->f);
    text(v, str(ch, "status"));
    if (json_is_string(json_object_get(ch, "old_verdict"))) {
        fputs("; was ", v->f);
        text(v, str(ch, "old_verdict"));
        fputs(" at ", v->f);
        short_digest(v, str(ch, "old_digest"));
    }
    fputs("</p>\n", v->f);
    reason_list(v, json_object_get(ch, "new_reasons"), "New reasons");
    reason_list(v, json_object_get(ch, "gone_reasons"), "Reasons gone");
}

/* The skill's identity on one line: verdict, path, name, version, digest. */
static void skill_line(struct vr *v, json_t *skill)
{
    badge(v, skill);
    fputs(" <code>", v->f);
    text(v, str(skill, "path"));
    fputs("</code> ", v->f);
    text(v, str(skill, "name"));
    if (json_is_string(json_object_get(skill, "version"))) {
        fputs(" ", v->f);
        text(v, str(skill, "version"));
    }
    fputs(" ", v->f);
    short_digest(v, str(skill, "digest"));
    json_t *ch = json_object_get(skill, "changes");
    if (json_is_object(ch)) {
        fputs(" <em>", v->f);
        text(v, str(ch, "status"));
        fputs("</em>", v->f);
    }
}

static void skill_full(struct vr *v, json_t *skill)
{
    fputs("<details open class=\"skill\">\n<summary>", v->f);
    skill_line(v, skill);
    fputs("</summary>\n<p class=\"desc\">", v->f);
    text(v, str(skill, "description"));
    fputs("</p>\n", v->f);
    reasons(v, skill);
    runs(v, skill);
    static_pass(v, skill);
    changes(v, skill);
    fputs("</details>\n", v->f);
}

static void skill_compact(struct vr *v, json_t *skill)
{
    fputs("<li>", v->f);
    skill_line(v, skill);
    size_t notes = json_array_size(json_object_get(skill, "reasons"));
    size_t runs = json_array_size(json_object_get(skill, "runs"));
    size_t not_run = json_array_size(json_object_get(skill, "not_run"));
    fprintf(v->f, " &#8212; %zu run%s", runs, runs == 1 ? "" : "s");
    if (not_run) /* a clean skill with something not run was not all seen */
        fprintf(v->f, ", %zu not run", not_run);
    if (notes)
        fprintf(v->f, ", %zu note%s", notes, notes == 1 ? "" : "s");
    fputs("</li>\n", v->f);
}

/* One section per verdict, the records in their ranked order. */
static void section(struct vr *v, json_t *skills, enum cat c)
{
    size_t i, n = 0;
    json_t *s;
    json_array_foreach (skills, i, s)
        n += json_is_object(s) && cat_of(s) == c;
    fprintf(v->f, "<section id=\"%s\">\n<h2>%s (%zu)</h2>\n", CATS[c].section, CATS[c].title, n);
    if (!n)
        fputs("<p>None.</p>\n", v->f);
    else if (c == CAT_CLEAN)
        fprintf(v->f, "<details>\n<summary>%zu clean skill%s, one line each</summary>\n<ul "
                      "class=\"clean\">\n", n, n == 1 ? "" : "s");
    json_array_foreach (skills, i, s) {
        if (!json_is_object(s) || cat_of(s) != c)
            continue;
        if (c == CAT_CLEAN)
            skill_compact(v, s);
        else
            skill_full(v, s);
    }
    if (n && c == CAT_CLEAN)
        fputs("</ul>\n</details>\n", v->f);
    fputs("</section>\n", v->f);
}

static void total(struct vr *v, json_t *totals, const char *key, const char *cls,
                  const char *words)
{
    fprintf(v->f, "<span class=\"b %s\">", cls);
    num(v, json_object_get(totals, key));
    fprintf(v->f, " %s</span> ", words);
}

static void totals(struct vr *v, json_t *doc)
{
    json_t *t = json_object_get(doc, "totals");
    fputs("<section id=\"totals\">\n<h2>Verdicts</h2>\n<p class=\"totals\">", v->f);
    total(v, t, "malicious", "mal", "malicious");
    total(v, t, "needs_review", "rev", "need review");
    total(v, t, "clean", "ok", "clean");
    fputs("of ", v->f);
    num(v, json_object_get(t, "skills"));
    fputs(" skills; ", v->f);
    num(v, json_object_get(t, "runs"));
    fputs(" runs.</p>\n", v->f);
    if (json_object_get(t, "new") || json_object_get(t, "changed") ||
        json_object_get(t, "removed")) {
        fputs("<p>Against the previous vetting: ", v->f);
        num(v, json_object_get(t, "new"));
        fputs(" new, ", v->f);
        num(v, json_object_get(t, "changed"));
        fputs(" changed, ", v->f);
        num(v, json_object_get(t, "removed"));
        fputs(" removed.</p>\n", v->f);
    }
    fputs("</section>\n", v->f);
}

static void removed(struct vr *v, json_t *doc)
{
    json_t *rm = json_object_get(doc, "removed");
    if (!json_is_array(rm))
        return;
    fprintf(v->f, "<section id=\"removed\">\n<h2>Removed (%zu)</h2>\n", json_array_size(rm));
    fputs(json_array_size(rm) ? "<ul>\n" : "<p>None.</p>\n", v->f);
    size_t i;
    json_t *x;
    json_array_foreach (rm, i, x) {
        fputs("<li><code>", v->f);
        text(v, str(x, "path"));
        fputs("</code> was ", v->f);
        text(v, str(x, "verdict"));
        fputs(" at ", v->f);
        short_digest(v, str(x, "digest"));
        fputs("</li>\n", v->f);
    }
    fputs(json_array_size(rm) ? "</ul>\n</section>\n" : "</section>\n", v->f);
}

static const char STYLE[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#1a202c;"
    "overflow-wrap:anywhere}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #cbd5e0;margin-top:1.6em}h4{margin:.8em 0 .2em}"
    "table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #e2e8f0;"
    "padding:2px 6px;text-align:left;vertical-align:top;min-width:5.5em}"
    "details.skill{border:1px solid #cbd5e0;border-radius:4px;margin:.6em 0;padding:.3em .6em}"
    "summary{cursor:pointer}ul.clean{list-style:none;padding-left:.5em}"
    ".b{font-weight:bold;padding:0 .35em;border-radius:3px;white-space:nowrap}"
    ".mal{background:#c53030;color:#fff}.rev{background:#dd6b20;color:#fff}"
    ".ok{background:#2f855a;color:#fff}.note{background:#e2e8f0;color:#1a202c}"
    ".totals{font-size:1.2em}.desc{color:#4a5568}"
    ".esc{background:#fefcbf;color:#744210;font-family:monospace}"
    ".cut{color:#718096;font-style:italic}";

static int write_html(json_t *doc, FILE *out)
{
    struct vr v = {.f = out, .html = {.f = out}};
    json_t *skills = json_object_get(doc, "skills");
    sg_html_head(out, STYLE);
    fprintf(out, "skillgate vet report</title>\n<style>%s</style>\n</head>\n<body>\n"
                 "<h1>skillgate vet report</h1>\n", STYLE);
    totals(&v, doc);
    fputs("<p>Each skill was checked statically and its scripts were run in skillgate's "
          "sandbox under --prompt deny with decoy credentials. Everything a skill chose "
          "(names, paths, output) is shown as text. This page holds no script and loads "
          "nothing.</p>\n", out);
    for (int c = 0; c < CAT_COUNT; c++)
        section(&v, skills, (enum cat)c);
    removed(&v, doc);
    fprintf(out, "<footer><p class=\"cut\">Made by skillgate %s vet merge.</p></footer>\n"
                 "</body>\n</html>\n", SG_VERSION);
    return ferror(out) ? -EIO : 0;
}

/* ---------------------------------------------------------------- SARIF */

#define VERDICT_RULE "skillgate/verdict"

/* A hostile string as a JSON string: sanitized, at most max bytes shown,
 * then how many were not. */
static json_t *safe(const char *s, size_t max)
{
    s = s ? s : "";
    size_t len = strlen(s), show = sg_utf8_cut(s, len, max);
    cleanup_free char *t = sg_sanitize(s, show, 0);
    if (show == len)
        return json_string(t);
    cleanup_free char *cut = sg_xasprintf("%s … %zu more bytes", t, len - show);
    return json_string(cut);
}

static json_t *safe_field(json_t *o, const char *key)
{
    return safe(str(o, key), SG_REPORT_FIELD_MAX);
}

static json_t *text_obj(json_t *s)
{
    return json_pack("{s:o}", "text", s);
}

/* GitHub's security-severity of a class's severity. */
static const char *sec_severity(const char *sev)
{
    return !strcmp(sev, "critical") ? "9.5"
           : !strcmp(sev, "high")   ? "8.0"
           : !strcmp(sev, "medium") ? "5.5"
                                    : "3.0";
}

static const char *sev_level(const char *sev)
{
    return !strcmp(sev, "critical") || !strcmp(sev, "high") ? "error"
           : !strcmp(sev, "medium")                          ? "warning"
                                                             : "note";
}

/* A reason's level as SARIF's; a static rule's severity from it. */
static const char *level_of(const char *lvl)
{
    return !strcmp(lvl, "malicious") ? "error" : !strcmp(lvl, "review") ? "warning" : "note";
}

static const char *level_severity(const char *lvl)
{
    return !strcmp(lvl, "malicious") ? "high" : !strcmp(lvl, "review") ? "medium" : "low";
}

/* A rule id from a record, as the rules and results name it. */
#define RULE_ID_MAX 200
static char *rule_id(const char *raw)
{
    size_t len = strlen(raw);
    if (!len)
        return sg_xstrdup("unknown");
    return sg_sanitize(raw, sg_utf8_cut(raw, len, RULE_ID_MAX), 0);
}

static json_t *rule(const char *id, const char *desc, const char *sev, json_t *tags)
{
    json_array_insert_new(tags, 0, json_string("security"));
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s, s:o}}", "id", id,
                     "name", id, "shortDescription", "text", id, "fullDescription", "text", desc,
                     "defaultConfiguration", "level", sev_level(sev), "help", "text", desc,
                     "properties", "security-severity", sec_severity(sev), "tags", tags);
}

struct sarif {
    json_t *rules;  /* the driver's rules[] */
    json_t *index;  /* a rule's sanitized id: its index in rules */
    json_t *results;
};

static void add_rule(struct sarif *s, json_t *r)
{
    const char *id = str(r, "id");
    if (!r || json_object_get(s->index, id)) {
        json_decref(r);
        return;
    }
    json_object_set_new(s->index, id, json_integer((json_int_t)json_array_size(s->rules)));
    json_array_append_new(s->rules, r);
}

#define CLASS_RULE(ID, NAME, SEV, TACTIC, TECH, DESC, BY)                                     \
    add_rule(s, rule(NAME, "A threat class of skillgate's run classification: " DESC ".", SEV, \
                     json_pack("[s, s, s]", "dynamic", "mitre-attack/" TACTIC,               \
                               "mitre-attack/" TECH)));

static void class_rules(struct sarif *s)
{
    SG_THREAT_CLASSES(CLASS_RULE)
    add_rule(s, rule(VERDICT_RULE, "skillgate vet's verdict on a skill that is not clean "
                                   "(malicious or to review), from the reasons listed with it.",
                     "high", json_pack("[s]", "verdict")));
}

/* A rule for each rule id the records name that is no class: the static
 * findings' kinds (skillgate inspect) and whatever else decided, in the
 * order first met (the records are ranked: the same input, the same rules). */
static void record_rules(struct sarif *s, json_t *skills)
{
    size_t i, j;
    json_t *sk, *r;
    json_array_foreach (skills, i, sk)
        json_array_foreach (json_object_get(sk, "reasons"), j, r) {
            cleanup_free char *id = rule_id(str(r, "rule"));
            if (json_object_get(s->index, id))
                continue;
            bool dyn = !strcmp(str(r, "source"), "dynamic");
            cleanup_free char *desc = sg_xasprintf(
                "A %s finding of skillgate vet, of kind %s (docs/manual/vetting.md says what "
                "each kind means).", dyn ? "dynamic" : "static", id);
            add_rule(s, rule(id, desc, level_severity(str(r, "level")),
                             json_pack("[s]", dyn ? "dynamic" : "static")));
        }
}

/* The uri of a file of a skill, relative to %SRCROOT% (the vetted root):
 * its path and file percent-encoded but for unreserved bytes and '/'; no
 * leading '/', no scheme (':' is encoded), "." as the path left out. */
static char *location_uri(const char *path, const char *file)
{
    cleanup_free char *rel = !path[0] || !strcmp(path, ".") ? sg_xstrdup(file)
                                                             : sg_xasprintf("%s/%s", path, file);
    const char *p = rel;
    while (*p == '/')
        p++;
    struct sg_buf b;
    sg_buf_init(&b, 3 * strlen(p) + 16);
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/", c))
            sg_buf_append(&b, p, 1);
        else
            sg_buf_printf(&b, "%%%02X", c);
    }
    if (!b.data || !b.data[0])
        sg_buf_printf(&b, "SKILL.md");
    return sg_buf_steal(&b);
}

static json_t *location(json_t *skill, json_t *file, json_t *line)
{
    const char *f = json_is_string(file) ? json_string_value(file) : "SKILL.md";
    cleanup_free char *uri = location_uri(str(skill, "path"), f);
    json_t *phys = json_pack("{s:{s:s, s:s}}", "artifactLocation", "uri", uri, "uriBaseId",
                             "%SRCROOT%");
    if (json_is_integer(line) && json_integer_value(line) >= 1)
        json_object_set_new(phys, "region",
                            json_pack("{s:I}", "startLine", json_integer_value(line)));
    return json_pack("[{s:o}]", "physicalLocation", phys);
}

/* hex SHA-256 of rule, path, file and summary, each ended by a NUL: the
 * same finding of the same skill keeps it across runs and versions. */
static json_t *fingerprint(const char *rule, json_t *skill, json_t *file, const char *summary)
{
    const char *parts[] = {rule, str(skill, "path"),
                           json_is_string(file) ? json_string_value(file) : "", summary};
    struct sg_sha256 *h = sg_sha256_new();
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        sg_sha256_update(h, parts[i], strlen(parts[i]) + 1);
    char hex[SG_DIGEST_STRLEN];
    sg_sha256_finish(h, hex);
    return json_pack("{s:s}", "skillgateFingerprint/v1", hex + 7);
}

/* The summary, then the first evidence lines, each sanitized and cut. */
#define MESSAGE_EVIDENCE 3
static json_t *message(const char *summary, json_t *evidence)
{
    json_t *s = safe(summary[0] ? summary : "(no summary)", SG_REPORT_FIELD_MAX);
    struct sg_buf b;
    /* a byte sanitized is at most 4 shown (BEL is \x07; U+202E's 3 are \u{202e}) */
    sg_buf_init(&b, 4 * (SG_REPORT_FIELD_MAX + MESSAGE_EVIDENCE * SG_VETREPORT_EVIDENCE_MAX) +
                        1024);
    sg_buf_printf(&b, "%s", json_string_value(s));
    json_decref(s);
    size_t i;
    json_t *e;
    json_array_foreach (evidence, i, e) {
        if (i == MESSAGE_EVIDENCE) {
            sg_buf_printf(&b, "\n(%zu more lines of evidence)", json_array_size(evidence) - i);
            break;
        }
        json_t *line = safe(json_string_value(e), SG_VETREPORT_EVIDENCE_MAX);
        sg_buf_printf(&b, "\n%s", json_string_value(line));
        json_decref(line);
    }
    cleanup_free char *t = sg_buf_steal(&b);
    return text_obj(json_string(t ? t : ""));
}

static json_t *result_props(json_t *skill, json_t *run)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:O}", "verdict", safe_field(skill, "verdict"),
                     "digest", safe_field(skill, "digest"), "skill", safe_field(skill, "name"),
                     "skillPath", safe_field(skill, "path"),
                     "run", json_is_integer(run) ? run : json_null());
}

static void add_result(struct sarif *s, const char *id, const char *level, json_t *msg,
                       json_t *loc, json_t *fp, json_t *props)
{
    json_t *idx = json_object_get(s->index, id);
    json_array_append_new(s->results,
                          json_pack("{s:s, s:O, s:s, s:o, s:o, s:o, s:o}", "ruleId", id,
                                    "ruleIndex", idx, "level", level, "message", msg,
                                    "locations", loc, "partialFingerprints", fp,
                                    "properties", props));
}

static void reason_result(struct sarif *s, json_t *skill, json_t *r)
{
    cleanup_free char *id = rule_id(str(r, "rule"));
    json_t *file = json_object_get(r, "file");
    add_result(s, id, level_of(str(r, "level")),
               message(str(r, "summary"), json_object_get(r, "evidence")),
               location(skill, file, json_object_get(r, "line")),
               fingerprint(str(r, "rule"), skill, file, str(r, "summary")),
               result_props(skill, json_object_get(r, "run")));
}

/* One result per skill that is not clean: its verdict, on its SKILL.md. */
static void verdict_result(struct sarif *s, json_t *skill)
{
    enum cat c = cat_of(skill);
    json_t *rs = json_object_get(skill, "reasons");
    cleanup_free char *name = sg_sanitize_str(str(skill, "name"), 0);
    cleanup_free char *sum = sg_xasprintf(
        "%s: skill %s, %zu reason%s; the strongest: %s",
        known_verdict(skill) ? CATS[c].word : "UNKNOWN VERDICT", name, json_array_size(rs),
        json_array_size(rs) == 1 ? "" : "s",
        json_array_size(rs) ? str(json_array_get(rs, 0), "summary") : "(none)");
    add_result(s, VERDICT_RULE, c == CAT_MALICIOUS ? "error" : "warning", message(sum, NULL),
               location(skill, NULL, NULL),
               fingerprint(VERDICT_RULE, skill, NULL, str(skill, "verdict")),
               result_props(skill, NULL));
}

static json_t *sarif_log(struct sarif *s)
{
    /* no informationUri: the project names no public home yet (optional in SARIF) */
    return json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:O}}, s:O, s:s}]}", "$schema",
                     "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0", "runs",
                     "tool", "driver", "name", "skillgate", "version", SG_VERSION, "rules",
                     s->rules, "results", s->results, "columnKind", "unicodeCodePoints");
}

static int write_sarif(json_t *doc, FILE *out)
{
    struct sarif s = {json_array(), json_object(), json_array()};
    json_t *skills = json_object_get(doc, "skills");
    class_rules(&s);
    record_rules(&s, skills);
    size_t i, j;
    json_t *sk, *r;
    json_array_foreach (skills, i, sk) {
        if (!json_is_object(sk))
            continue;
        if (cat_of(sk) != CAT_CLEAN || !known_verdict(sk))
            verdict_result(&s, sk);
        json_array_foreach (json_object_get(sk, "reasons"), j, r)
            if (json_is_object(r))
                reason_result(&s, sk, r);
    }
    json_t *log = sarif_log(&s);
    int rc = log && !json_dumpf(log, out, JSON_INDENT(2)) && fputc('\n', out) != EOF ? 0 : -EIO;
    json_decref(log);
    json_decref(s.rules);
    json_decref(s.index);
    json_decref(s.results);
    return rc || ferror(out) ? -EIO : 0;
}

int sg_vetreport_write(json_t *merged, int fmt, FILE *out)
{
    if (!json_is_object(merged) || strcmp(str(merged, "schema"), SG_VETREPORT_SCHEMA) ||
        !json_is_array(json_object_get(merged, "skills")) || !out)
        return -EINVAL;
    if (fmt == SG_VETREPORT_HTML)
        return write_html(merged, out);
    if (fmt == SG_VETREPORT_SARIF)
        return write_sarif(merged, out);
    return -EINVAL;
}
