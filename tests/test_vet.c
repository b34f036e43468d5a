/* What decides a vetted skill's verdict, and the merge of shards
 * (records/vet.c, issue 53): a critical or high class is malicious, a
 * credential read or an undeclared host needs review, a refused program
 * is a note; a declared host held back says nothing; a skill none of whose
 * runnables ran is never clean; the same records merge to the same bytes
 * in any order, and one path with two digests is refused. */
#include <string.h>

#include "helpers.h"

#include "util.h"
#include "vet.h"

static json_t *record(const char *path, const char *digest, json_t *runs, json_t *not_run,
                      json_t *findings)
{
    return json_pack("{s:s, s:s, s:s, s:{s:i, s:[], s:o}, s:o, s:o}", "schema", "skillgate.vet/1",
                     "path", path, "digest", digest, "static", "errors", 0, "problems",
                     "findings", findings ? findings : json_array(), "runs",
                     runs ? runs : json_array(), "not_run", not_run ? not_run : json_array());
}

static json_t *run_with(const char *cls, const char *sev, json_t *refused)
{
    return json_pack("[{s:s, s:[{s:s, s:s, s:i, s:[s]}], s:o}]", "runnable", "scripts/x.py",
                     "classes", "class", cls, "severity", sev, "count", 1, "evidence",
                     "what happened", "refused", refused ? refused : json_array());
}

static const char *verdict_of(json_t *rec)
{
    sg_vet_decide(rec);
    return json_string_value(json_object_get(rec, "verdict"));
}

static void classes_decide_by_severity(void **st)
{
    (void)st;
    json_t *r = record("a", "sha256:1", run_with("credential_harvesting", "critical", NULL), NULL,
                       NULL);
    assert_string_equal(verdict_of(r), "malicious");
    json_t *why = json_array_get(json_object_get(r, "reasons"), 0);
    assert_string_equal(json_string_value(json_object_get(why, "rule")), "credential_harvesting");
    assert_string_equal(json_string_value(json_array_get(json_object_get(why, "evidence"), 0)),
                        "what happened");
    json_decref(r);
    r = record("a", "sha256:1", run_with("credential_read", "low", NULL), NULL, NULL);
    assert_string_equal(verdict_of(r), "needs_review");
    json_decref(r);
    r = record("a", "sha256:1", run_with("undeclared_program", "low", NULL), NULL, NULL);
    assert_string_equal(verdict_of(r), "clean");
    assert_int_equal(json_array_size(json_object_get(r, "reasons")), 1); /* kept, as a note */
    json_decref(r);
}

static void a_declared_host_held_back_says_nothing(void **st)
{
    (void)st;
    json_t *held = json_pack("[{s:s, s:s, s:b}]", "tool", "Fetch", "subject", "api.weather.test",
                             "declared", 1);
    json_t *r = record("a", "sha256:1", run_with("undeclared_program", "low", held), NULL, NULL);
    assert_string_equal(verdict_of(r), "clean");
    json_decref(r);
    json_t *other = json_pack("[{s:s, s:s, s:b}]", "tool", "Fetch", "subject", "x.evil.test",
                              "declared", 0);
    r = record("a", "sha256:1", run_with("undeclared_program", "low", other), NULL, NULL);
    assert_string_equal(verdict_of(r), "needs_review");
    json_decref(r);
}

static void nothing_ran_is_never_clean(void **st)
{
    (void)st;
    json_t *nr = json_pack("[{s:s, s:s}]", "runnable", "scripts/x.py", "why", "--static");
    json_t *r = record("a", "sha256:1", NULL, nr, NULL);
    assert_string_equal(verdict_of(r), "needs_review");
    json_decref(r);
    /* eight harmless scripts run and the ninth left past --max-runs */
    nr = json_pack("[{s:s, s:s}]", "runnable", "scripts/z.py", "why", "past --max-runs");
    r = record("a", "sha256:1", run_with("undeclared_program", "low", NULL), nr, NULL);
    assert_string_equal(verdict_of(r), "needs_review");
    json_decref(r);
    json_t *f = json_pack("[{s:s, s:s, s:s, s:s, s:i, s:s}]", "kind", "decode_run", "level",
                          "malicious", "what", "decodes text and runs it", "file", "SKILL.md",
                          "line", 7, "excerpt", "echo X | base64 -d | sh");
    r = record("a", "sha256:1", NULL, NULL, f);
    assert_string_equal(verdict_of(r), "malicious");
    json_t *why = json_array_get(json_object_get(r, "reasons"), 0);
    assert_int_equal(json_integer_value(json_object_get(why, "line")), 7);
    json_decref(r);
}

/* A run stopped at its time bound (or a Ctrl-C) was not watched to its
 * end: a script that waits past the bound is never clean for it. */
static void a_run_stopped_early_is_never_clean(void **st)
{
    (void)st;
    json_t *runs = json_pack("[{s:s, s:s, s:s, s:[], s:[]}]", "runnable", "scripts/x.py",
                             "status", "timeout", "end_reason", "killed after the 15s timeout",
                             "classes", "refused");
    json_t *r = record("a", "sha256:1", runs, NULL, NULL);
    assert_string_equal(verdict_of(r), "needs_review");
    json_t *why = json_array_get(json_object_get(r, "reasons"), 0);
    assert_string_equal(json_string_value(json_object_get(why, "rule")), "not_finished");
    json_decref(r);
    runs = json_pack("[{s:s, s:s, s:[], s:[]}]", "runnable", "scripts/x.py", "status",
                     "completed", "classes", "refused");
    r = record("a", "sha256:1", runs, NULL, NULL);
    assert_string_equal(verdict_of(r), "clean");
    json_decref(r);
}

/* A digest that could not be taken says nothing about what changed. */
static void an_unreadable_digest_is_never_the_same(void **st)
{
    (void)st;
    json_t *old = record("a", "unreadable: File too large", NULL, NULL, NULL);
    json_t *r = record("a", "unreadable: File too large", NULL, NULL, NULL);
    sg_vet_decide(old);
    sg_vet_decide(r);
    sg_vet_compare(r, old);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "changes"),
                                                          "status")),
                        "changed");
    json_decref(r);
    r = record("a", "sha256:1", NULL, NULL, NULL);
    json_decref(old);
    old = record("a", "sha256:1", NULL, NULL, NULL);
    sg_vet_compare(r, old);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "changes"),
                                                          "status")),
                        "same");
    json_decref(r);
    json_decref(old);
}

static char *merged(json_t *recs)
{
    json_t *doc = NULL;
    char *why = NULL;
    assert_int_equal(sg_vet_merge(recs, NULL, &doc, &why), 0);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* Two vettings of one skill (same digest) that disagree: the merge keeps
 * the worse verdict, whichever folder came first. */
static void merge_keeps_the_worse_of_two_verdicts(void **st)
{
    (void)st;
    json_t *bad = record("p/a", "sha256:1", run_with("persistence", "high", NULL), NULL, NULL);
    json_t *kind = record("p/a", "sha256:1", NULL, NULL, NULL);
    sg_vet_decide(bad);
    sg_vet_decide(kind);
    for (int order = 0; order < 2; order++) {
        json_t *recs = order ? json_pack("[O, O]", bad, kind) : json_pack("[O, O]", kind, bad);
        json_t *doc = NULL;
        char *why = NULL;
        assert_int_equal(sg_vet_merge(recs, NULL, &doc, &why), 0);
        json_t *skills = json_object_get(doc, "skills");
        assert_int_equal(json_array_size(skills), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(skills, 0),
                                                              "verdict")),
                            "malicious");
        json_decref(doc);
        json_decref(recs);
    }
    json_decref(bad);
    json_decref(kind);
}

static void merge_is_one_order_and_refuses_two_contents(void **st)
{
    (void)st;
    json_t *a = record("p/a", "sha256:1", run_with("persistence", "high", NULL), NULL, NULL);
    json_t *b = record("p/b", "sha256:2", NULL, NULL, NULL);
    sg_vet_decide(a);
    sg_vet_decide(b);
    json_t *ab = json_pack("[O, O]", a, b), *ba = json_pack("[O, O, O]", b, a, b);
    cleanup_free char *s1 = merged(ab), *s2 = merged(ba);
    assert_string_equal(s1, s2); /* order and a repeat change nothing */
    json_t *b2 = record("p/b", "sha256:3", NULL, NULL, NULL);
    sg_vet_decide(b2);
    json_t *bad = json_pack("[O, O]", b, b2), *doc = NULL;
    cleanup_free char *why = NULL;
    assert_int_equal(sg_vet_merge(bad, NULL, &doc, &why), -EEXIST);
    assert_non_null(strstr(why, "p/b: vetted twice with different contents"));
    json_decref(a), json_decref(b), json_decref(b2), json_decref(ab), json_decref(ba);
    json_decref(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classes_decide_by_severity),
        cmocka_unit_test(a_declared_host_held_back_says_nothing),
        cmocka_unit_test(nothing_ran_is_never_clean),
        cmocka_unit_test(a_run_stopped_early_is_never_clean),
        cmocka_unit_test(an_unreadable_digest_is_never_the_same),
        cmocka_unit_test(merge_keeps_the_worse_of_two_verdicts),
        cmocka_unit_test(merge_is_one_order_and_refuses_two_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
