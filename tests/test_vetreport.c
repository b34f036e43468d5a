/* The vetting's report writer (vetreport.c) on documents built here: what
 * is not a vetreport is refused; the same document gives the same bytes;
 * a record's hostile strings reach the page as escaped text, cut for
 * display; and each SARIF result names a rule that is there, a relative,
 * percent-encoded location and a fingerprint. The whole path through
 * `skillgate vet merge`, chromium and the SARIF schema is
 * tests/vetreport_test.py's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "report.h"
#include "util.h"
#include "vetreport.h"

#define EVIL "<script>window.__pwned=1</script></style>\xe2\x80\xae\x1b[31m\"'&"

static json_t *skill(const char *path, const char *verdict, json_t *reasons)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:[], s:[], s:{}}", "schema",
                     "skillgate.vet/1", "path", path, "name", path, "digest",
                     "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
                     "verdict", verdict, "reasons", reasons, "runs", "not_run", "static");
}

static json_t *reason(const char *level, const char *rule, const char *file, int line)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:[s, s], s:s?, s:o, s:n}", "level", level, "source",
                     "static", "rule", rule, "summary", "summary " EVIL, "evidence", EVIL,
                     "line two", "file", file, "line", line ? json_integer(line) : json_null(),
                     "run");
}

static json_t *doc(void)
{
    json_t *skills = json_pack(
        "[o, o, o]",
        skill("evil/" EVIL, "malicious",
              json_pack("[o, o]", reason("malicious", "decode_run", "scripts/x.sh", 3),
                        reason("review", "credential_harvesting", NULL, 0))),
        skill("bob/notes", "needs_review", json_pack("[o]", reason("note", "odd_kind", "a", 1))),
        skill("acme/weather", "clean", json_array()));
    return json_pack("{s:s, s:{s:i, s:i, s:i, s:i, s:i}, s:o}", "schema", "skillgate.vetreport/1",
                     "totals", "skills", 3, "malicious", 1, "needs_review", 1, "clean", 1, "runs",
                     0, "skills", skills);
}

static char *written(json_t *d, int fmt, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = sg_vetreport_write(d, fmt, f);
    fclose(f);
    return buf;
}

static void what_is_no_vetreport_is_refused(void **st)
{
    (void)st;
    int rc;
    json_t *bad[] = {json_array(), json_pack("{s:s, s:[]}", "schema", "skillgate.vet/1", "skills"),
                     json_pack("{s:s}", "schema", "skillgate.vetreport/1")};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        free(written(bad[i], SG_VETREPORT_HTML, &rc));
        assert_int_equal(rc, -EINVAL);
        json_decref(bad[i]);
    }
    json_t *d = doc();
    free(written(d, 7, &rc));
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(sg_vetreport_write(NULL, SG_VETREPORT_SARIF, stdout), -EINVAL);
    json_decref(d);
}

static void the_same_document_gives_the_same_bytes(void **st)
{
    (void)st;
    int rc;
    json_t *d = doc();
    for (int fmt = SG_VETREPORT_HTML; fmt <= SG_VETREPORT_SARIF; fmt++) {
        cleanup_free char *a = written(d, fmt, &rc);
        assert_int_equal(rc, 0);
        json_t *copy = json_deep_copy(d);
        cleanup_free char *b = written(copy, fmt, &rc);
        assert_string_equal(a, b);
        json_decref(copy);
    }
    json_decref(d);
}

static void hostile_strings_are_escaped_text_on_the_page(void **st)
{
    (void)st;
    int rc;
    json_t *d = doc();
    json_t *big = json_array_get(json_object_get(d, "skills"), 0);
    char *huge = calloc(100 * 1024 + 1, 1);
    memset(huge, 'B', 100 * 1024);
    json_object_set_new(big, "description", json_string(huge));
    free(huge);
    cleanup_free char *page = written(d, SG_VETREPORT_HTML, &rc);
    assert_int_equal(rc, 0);
    assert_null(strstr(page, "<script"));
    assert_null(strstr(page, "\xe2\x80\xae"));
    assert_null(strchr(page, '\x1b'));
    assert_non_null(strstr(page, "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;/style&gt;"
                                  "<span class=\"esc\">\\u{202e}</span>"));
    assert_non_null(strstr(page, "&quot;&#39;&amp;"));
    cleanup_free char *cut =
        sg_xasprintf("&#8230; %d more bytes", 100 * 1024 - SG_REPORT_FIELD_MAX);
    assert_non_null(strstr(page, cut));
    /* totals first; malicious open; clean ones in a closed <details> */
    assert_true(strstr(page, "<section id=\"totals\">") <
                strstr(page, "<section id=\"malicious\">"));
    assert_non_null(strstr(page, "<details open class=\"skill\">\n<summary><span class=\"b mal\">"
                                  "MALICIOUS</span>"));
    assert_non_null(strstr(page, "<details>\n<summary>1 clean skill, one line each</summary>"));
    json_decref(d);
}

static json_t *rule_named(json_t *rules, const char *id, size_t *at)
{
    for (*at = 0; *at < json_array_size(rules); (*at)++) {
        json_t *r = json_array_get(rules, *at);
        if (!strcmp(json_string_value(json_object_get(r, "id")), id))
            return r;
    }
    return NULL;
}

static void each_result_names_its_rule_a_relative_place_and_a_fingerprint(void **st)
{
    (void)st;
    int rc;
    json_t *d = doc();
    char *out = written(d, SG_VETREPORT_SARIF, &rc);
    assert_int_equal(rc, 0);
    json_t *log = json_loads(out, 0, NULL), *run = json_array_get(json_object_get(log, "runs"), 0);
    json_t *driver = json_object_get(json_object_get(run, "tool"), "driver");
    json_t *rules = json_object_get(driver, "rules");
    json_t *results = json_object_get(run, "results"), *res;
    size_t i, at;
    assert_int_equal(json_array_size(results), 2 + 3); /* two verdicts, three reasons */
    json_array_foreach (results, i, res) {
        const char *id = json_string_value(json_object_get(res, "ruleId"));
        assert_non_null(rule_named(rules, id, &at));
        assert_int_equal(json_integer_value(json_object_get(res, "ruleIndex")), (json_int_t)at);
        const char *fp = json_string_value(json_object_get(
            json_object_get(res, "partialFingerprints"), "skillgateFingerprint/v1"));
        assert_int_equal(strspn(fp, "0123456789abcdef"), 64);
    }
    json_t *first = json_array_get(json_object_get(json_array_get(results, 1), "locations"), 0);
    json_t *phys = json_object_get(first, "physicalLocation");
    assert_string_equal(json_string_value(json_object_get(json_object_get(phys, "artifactLocation"),
                                                          "uri")),
                        "evil/%3Cscript%3Ewindow.__pwned%3D1%3C/script%3E%3C/style%3E%E2%80%AE%1B"
                        "%5B31m%22%27%26/scripts/x.sh");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(phys, "region"),
                                                        "startLine")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(results, 1), "level")),
                        "error");
    const char *msg = json_string_value(json_object_get(
        json_object_get(json_array_get(results, 1), "message"), "text"));
    assert_non_null(
        strstr(msg, "summary <script>window.__pwned=1</script></style>\\u{202e}\\e[31m"));
    assert_null(strstr(msg, "\xe2\x80\xae"));
    json_decref(log);
    free(out);
    /* a summary of controls, each shown as 4 bytes: the evidence still follows */
    json_t *r0 = json_array_get(json_object_get(json_array_get(json_object_get(d, "skills"), 0),
                                                "reasons"), 0);
    char bells[SG_REPORT_FIELD_MAX + 1];
    memset(bells, '\a', SG_REPORT_FIELD_MAX);
    bells[SG_REPORT_FIELD_MAX] = 0;
    json_object_set_new(r0, "summary", json_string(bells));
    out = written(d, SG_VETREPORT_SARIF, &rc);
    log = json_loads(out, 0, NULL);
    run = json_array_get(json_object_get(log, "runs"), 0);
    rules = json_object_get(json_object_get(json_object_get(run, "tool"), "driver"), "rules");
    msg = json_string_value(json_object_get(
        json_object_get(json_array_get(json_object_get(run, "results"), 1), "message"), "text"));
    assert_true(strlen(msg) > 4 * SG_REPORT_FIELD_MAX && !strncmp(msg, "\\x07\\x07", 8));
    assert_true(sg_str_has_suffix(msg, "\\x07\\x07\n<script>window.__pwned=1</script></style>"
                                       "\\u{202e}\\e[31m\"'&\nline two"));
    /* the odd rule: one of its own, at the note level */
    json_t *odd = rule_named(rules, "odd_kind", &at);
    assert_non_null(odd);
    assert_string_equal(json_string_value(json_object_get(json_object_get(odd, "properties"),
                                                          "security-severity")), "3.0");
    assert_non_null(rule_named(rules, "skillgate/verdict", &at));
    assert_non_null(rule_named(rules, "persistence", &at));
    free(out);
    json_decref(log);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(what_is_no_vetreport_is_refused),
        cmocka_unit_test(the_same_document_gives_the_same_bytes),
        cmocka_unit_test(hostile_strings_are_escaped_text_on_the_page),
        cmocka_unit_test(each_result_names_its_rule_a_relative_place_and_a_fingerprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
