/* What a run refused, once each (refusals.c): the same program by two
 * paths is one entry with a count, a decision and its event are one
 * refusal, who refused it picks the way to allow it (a --policy rule, the
 * manifest's allowed-tools, a deny rule to remove, nothing), an agent's
 * run is pointed at tui --attach, a skill's escape bytes never reach the
 * text, and the list is capped with what was left out counted. */
#include <stdio.h>
#include <string.h>

#include "helpers.h"

#include "refusals.h"
#include "util.h"

static json_t *doc_of(const char *decisions, const char *violations)
{
    cleanup_free char *t = sg_xasprintf("{\"decisions\": %s, \"policy_violations\": %s}",
                                        decisions, violations);
    json_error_t e;
    json_t *d = json_loads(t, 0, &e);
    assert_non_null(d);
    return d;
}

static json_t *entry(json_t *list, const char *tool)
{
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r)
    {
        if (!strcmp(json_string_value(json_object_get(r, "tool")), tool))
            return r;
    }
    return NULL;
}

static void one_program_by_two_paths_is_one_line(void **st)
{
    (void)st;
    /* /bin/sh and /usr/bin/sh are one file on a merged /usr, else /bin/sh
     * alone: the test holds either way, as the host decides */
    char *real = realpath("/bin/sh", NULL);
    assert_non_null(real);
    cleanup_free char *dec = sg_xasprintf(
        "[{\"tool\": \"Bash\", \"subject\": \"/bin/sh\", \"decision\": \"deny\", "
        "\"decided_by\": \"deny-all\"}, {\"tool\": \"Bash\", \"subject\": \"%s\", "
        "\"decision\": \"deny\", \"decided_by\": \"deny-all\"}, {\"tool\": \"Bash\", "
        "\"subject\": \"/bin/sh\", \"decision\": \"allow\", \"decided_by\": \"person\"}]",
        real);
    json_t *d = doc_of(dec, "[]");
    json_t *l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), 1);
    json_t *r = json_array_get(l, 0);
    assert_string_equal(json_string_value(json_object_get(r, "subject")), real);
    assert_int_equal(json_integer_value(json_object_get(r, "count")), 2);
    const char *base = strrchr(real, '/') + 1;
    cleanup_free char *rule = sg_xasprintf("Bash(%s:*)", base);
    assert_string_equal(json_string_value(json_object_get(r, "rule")), rule);
    assert_non_null(strstr(json_string_value(json_object_get(r, "allow")), "--policy FILE"));
    cleanup_free char *text = sg_refusals_text(l, NULL);
    assert_non_null(strstr(text, ", 2 times (undeclared, and nobody to ask"));
    assert_non_null(strstr(text, " — allow with: --policy FILE with "));
    json_decref(l);
    json_decref(d);
    free(real);
}

static void a_decision_and_its_event_are_one_refusal(void **st)
{
    (void)st;
    json_t *d = doc_of(
        "[{\"tool\": \"Write\", \"subject\": \"/w/out.pdf\", \"decision\": \"deny\", "
        "\"decided_by\": \"person\"}]",
        "[{\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/w/out.pdf\", \"prevented\": true}},"
        " {\"kind\": \"dns_blocked\", \"data\": {\"name\": \"api.example.test\", \"reason\": "
        "\"not declared\", \"prevented\": true}},"
        " {\"kind\": \"syscall_blocked\", \"data\": {\"syscall\": \"mount\", \"prevented\": true}},"
        " {\"kind\": \"syscall_blocked\", \"data\": {\"syscall\": \"execve\", \"program\": "
        "\"/usr/bin/curl\", \"reason\": \"Bash is not in allowed-tools\", \"prevented\": true}}]");
    json_t *l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), 3); /* the mount names nothing to allow */
    json_t *w = entry(l, "Write");
    assert_int_equal(json_integer_value(json_object_get(w, "count")), 1);
    assert_string_equal(json_string_value(json_object_get(w, "why")), "denied when asked");
    assert_string_equal(json_string_value(json_object_get(w, "rule")), "Write(/w/out.pdf)");
    assert_non_null(strstr(json_string_value(json_object_get(w, "allow")), "--write /w,"));
    json_t *f = entry(l, "Fetch");
    assert_string_equal(json_string_value(json_object_get(f, "rule")), "Fetch(api.example.test)");
    json_t *b = entry(l, "Bash");
    assert_string_equal(json_string_value(json_object_get(b, "allow")),
                        "Bash(curl:*) in SKILL.md's allowed-tools");
    json_decref(l);
    json_decref(d);
}

/* Issue 54, item 7: the end's lines say the home as ~; the way to allow
 * (what a person types) stays as it is. */
static void the_home_is_said_as_a_tilde_but_not_in_what_is_typed(void **st)
{
    (void)st;
    json_t *d = doc_of("[{\"tool\": \"Write\", \"subject\": \"/home/me/out/a.pdf\", "
                       "\"decision\": \"deny\", \"decided_by\": \"person\"}]",
                       "[]");
    json_t *l = sg_refusals_of(d, false);
    cleanup_free char *text = sg_refusals_text(l, "/home/me");
    assert_non_null(strstr(text, "refused: write ~/out/a.pdf (denied when asked) — allow with: "));
    assert_non_null(strstr(text, "--write /home/me/out"));
    assert_null(strstr(text, "write /home/me/out/a.pdf"));
    cleanup_free char *asis = sg_refusals_text(l, NULL);
    assert_non_null(strstr(asis, "refused: write /home/me/out/a.pdf ("));
    json_decref(l);
    json_decref(d);
}

static void deny_rules_and_agents_get_their_own_way(void **st)
{
    (void)st;
    json_t *d = doc_of("[{\"tool\": \"Fetch\", \"subject\": \"x.test\", \"port\": 443, "
                       "\"decision\": \"deny\", \"decided_by\": \"rule policy.yaml:3\"},"
                       " {\"tool\": \"Env\", \"subject\": \"API_KEY\", \"decision\": \"deny\", "
                       "\"decided_by\": \"no terminal to ask on\"},"
                       " {\"tool\": \"Connect\", \"subject\": \"/run/x.sock\", \"decision\": "
                       "\"deny_always\", \"decided_by\": \"grant Connect(/run/x.sock)\"}]",
                       "[{\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/home/u/.config/x\", "
                       "\"reason\": \"skillgate's own folder\", \"prevented\": true}}]");
    json_t *l = sg_refusals_of(d, true);
    json_t *f = entry(l, "Fetch");
    assert_string_equal(json_string_value(json_object_get(f, "rule")), "Fetch(x.test:443)");
    assert_non_null(strstr(json_string_value(json_object_get(f, "allow")),
                           "a deny rule refused it (rule policy.yaml:3)"));
    json_t *c = entry(l, "Connect");
    assert_non_null(strstr(json_string_value(json_object_get(c, "allow")),
                           "skillgate grants revoke"));
    json_t *e = entry(l, "Env");
    assert_string_equal(json_string_value(json_object_get(e, "rule")), "Env");
    assert_non_null(strstr(json_string_value(json_object_get(e, "allow")), "--env API_KEY"));
    json_t *w = entry(l, "Write");
    assert_true(json_is_null(json_object_get(w, "rule")));
    cleanup_free char *text = sg_refusals_text(l, NULL);
    assert_non_null(strstr(text, "(skillgate's own folder); nothing may allow it\n"));
    json_decref(l);
    json_decref(d);
    /* an agent's undeclared request: tui --attach, not --prompt */
    d = doc_of("[{\"tool\": \"Bash\", \"subject\": \"/nonexistent/tool\", \"decision\": "
               "\"deny\", \"decided_by\": \"no terminal to ask on\"}]", "[]");
    l = sg_refusals_of(d, true);
    const char *allow = json_string_value(json_object_get(json_array_get(l, 0), "allow"));
    assert_non_null(strstr(allow, "skillgate tui --attach"));
    assert_null(strstr(allow, "--prompt"));
    json_decref(l);
    json_decref(d);
}

/* The proxy refused the address itself (loopback, private, this machine's
 * own): no Fetch rule, grant or answer reaches it, only --allow-upstream. */
static void an_upstream_refusal_names_allow_upstream(void **st)
{
    (void)st;
    const char *ev =
        "[{\"kind\": \"network_egress_blocked\", \"data\": {\"dst\": \"192.0.2.2\", "
        "\"port\": 8080, \"name\": \"local.test\", \"prevented\": true, \"reason\": "
        "\"local.test resolves to 192.0.2.2, an address of this machine (its route is local: it "
        "never leaves the host) (only --allow-upstream 192.0.2.2 lets a run reach it)\"}}]";
    for (int agent = 0; agent < 2; agent++) {
        json_t *d = doc_of("[]", ev);
        json_t *l = sg_refusals_of(d, agent);
        json_t *f = entry(l, "Fetch");
        assert_true(json_is_null(json_object_get(f, "rule")));
        const char *allow = json_string_value(json_object_get(f, "allow"));
        assert_non_null(strstr(allow, "skillgate run --allow-upstream 192.0.2.2 (no rule"));
        assert_true(!agent == !strstr(allow, "only the person's own"));
        assert_null(strstr(allow, "--policy"));
        json_decref(l);
        json_decref(d);
    }
}

/* issue 52: a write no rule or answer could make says why and the real
 * way (a folder the sandbox does not show: --write; an approved call the
 * host refused: nothing), never "outside the writable paths" */
static void a_write_no_answer_could_make_says_why(void **st)
{
    (void)st;
    const char *ev =
        "[{\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/srv/x/out.txt\", \"prevented\": "
        "true, \"reason\": \"its folder is not shown in the sandbox\"}},"
        " {\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/w/out/kept\", \"prevented\": "
        "true, \"reason\": \"could not be done: as root the skill runs as nobody\"}},"
        " {\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/top.txt\", \"prevented\": "
        "true, \"reason\": \"its folder is not shown in the sandbox, and no --write may show "
        "it\"}}]";
    json_t *d = doc_of("[]", ev);
    json_t *l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), 3);
    json_t *a = json_array_get(l, 0), *b = json_array_get(l, 1), *c = json_array_get(l, 2);
    assert_string_equal(json_string_value(json_object_get(a, "why")),
                        "its folder is not shown in the sandbox");
    assert_true(json_is_null(json_object_get(a, "rule")));
    assert_non_null(strstr(json_string_value(json_object_get(a, "allow")), "run --write /srv/x,"));
    assert_null(strstr(json_string_value(json_object_get(a, "allow")), "--policy"));
    assert_string_equal(json_string_value(json_object_get(b, "allow")), "nothing may allow it");
    assert_non_null(strstr(json_string_value(json_object_get(c, "allow")), "nothing may allow"));
    assert_null(strstr(json_string_value(json_object_get(c, "allow")), "--write"));
    cleanup_free char *text = sg_refusals_text(l, NULL);
    assert_null(strstr(text, "outside the writable paths"));
    json_decref(l);
    json_decref(d);
}

static void escapes_never_reach_the_text_and_the_list_is_capped(void **st)
{
    (void)st;
    struct sg_buf b;
    sg_buf_init(&b, 1 << 20);
    sg_buf_append(&b, "[", 1);
    for (int i = 0; i < SG_REFUSALS_MAX + 10; i++)
        sg_buf_printf(&b, "%s{\"tool\": \"Write\", \"subject\": \"/w/\\u001b]0;x\\u0007%d\", "
                      "\"decision\": \"deny\", \"decided_by\": \"deny-all\"}", i ? "," : "", i);
    sg_buf_append(&b, "]", 1);
    json_t *d = doc_of(b.data, "[]");
    sg_buf_free(&b);
    json_t *l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), SG_REFUSALS_MAX + 1);
    json_t *last = json_array_get(l, SG_REFUSALS_MAX);
    assert_int_equal(json_integer_value(json_object_get(last, "count")), 10);
    cleanup_free char *text = sg_refusals_text(l, NULL);
    assert_null(strchr(text, '\033'));
    assert_null(strchr(text, '\a'));
    assert_non_null(strstr(text, "refused: 10 more requests"));
    json_decref(l);
    json_decref(d);
    /* nothing refused: an empty list, no text */
    d = doc_of("[]", "[]");
    l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), 0);
    cleanup_free char *none = sg_refusals_text(l, NULL);
    assert_string_equal(none, "");
    json_decref(l);
    json_decref(d);
}

/* Each names what was attempted (issue 54, item 1): a decoy's read is a
 * read, never a write with a --write to allow it; a name alone a lookup, an
 * address with its port a connect, a program an exec. */
static void each_names_what_was_attempted(void **st)
{
    (void)st;
    json_t *d = doc_of(
        "[{\"tool\": \"Fetch\", \"subject\": \"x.test\", \"decision\": \"deny\", "
        "\"decided_by\": \"deny-all\"}, {\"tool\": \"Fetch\", \"subject\": \"192.0.2.1\", "
        "\"port\": 443, \"decision\": \"deny\", \"decided_by\": \"deny-all\"}]",
        "[{\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/h/.npmrc\", \"access\": \"read\", "
        "\"class\": \"credential\", \"decoy\": true, \"prevented\": true}},"
        " {\"kind\": \"fs_blocked\", \"data\": {\"path\": \"/w/out.pdf\", \"prevented\": true}},"
        " {\"kind\": \"syscall_blocked\", \"data\": {\"syscall\": \"execve\", \"program\": "
        "\"/nonexistent/curl\", \"reason\": \"Bash is not in allowed-tools\", \"prevented\": true}}]");
    json_t *l = sg_refusals_of(d, false);
    assert_int_equal(json_array_size(l), 5);
    static const char *const want[] = {"lookup", "connect", "read", "write", "exec"};
    for (size_t i = 0; i < 5; i++) {
        json_t *r = json_array_get(l, i);
        assert_string_equal(json_string_value(json_object_get(r, "attempt")), want[i]);
        assert_false(json_is_true(json_object_get(r, "attack")));
    }
    json_t *rd = entry(l, "Read");
    assert_true(json_is_null(json_object_get(rd, "rule")));
    cleanup_free char *text = sg_refusals_text(l, NULL);
    assert_non_null(strstr(text, "refused: read /h/.npmrc (an empty decoy answered"));
    assert_null(strstr(text, "Write(/h/"));
    assert_null(strstr(text, "--write /h"));
    assert_non_null(strstr(text, "refused: write /w/out.pdf (outside the writable paths) — "
                                 "allow with: --policy FILE with Write(/w/out.pdf)"));
    assert_non_null(strstr(text, "refused: lookup x.test (undeclared"));
    assert_non_null(strstr(text, "refused: connect 192.0.2.1 (undeclared"));
    assert_non_null(strstr(text, "refused: exec /nonexistent/curl (Bash is not"));
    json_decref(l);
    json_decref(d);
}

/* An attack is never followed by how to allow it: every refusal of a run
 * whose severity is high or critical, and a name smuggling data in any run. */
static void an_attack_is_never_followed_by_a_way_to_allow_it(void **st)
{
    (void)st;
    const char *dec = "[{\"tool\": \"Write\", \"subject\": \"/w/out.pdf\", \"decision\": "
                      "\"deny\", \"decided_by\": \"person\"}]";
    const char *ev = "[{\"kind\": \"dns_blocked\", \"data\": {\"name\": \"aGk.x.test\", "
                     "\"reason\": \"not declared\", \"exfil_suspect\": true, \"prevented\": true}}]";
    json_t *d = doc_of(dec, ev);
    json_t *l = sg_refusals_of(d, false);
    assert_false(json_is_true(json_object_get(entry(l, "Write"), "attack")));
    json_t *x = entry(l, "Fetch");
    assert_true(json_is_true(json_object_get(x, "attack")));
    assert_true(json_is_null(json_object_get(x, "rule")));
    cleanup_free char *t1 = sg_refusals_text(l, NULL);
    assert_non_null(strstr(t1, "refused: lookup aGk.x.test (not declared); not to be allowed: "
                               "it carries data out"));
    assert_null(strstr(t1, "Fetch(aGk"));
    json_decref(l);
    const char *levels[] = {"high", "critical"};
    for (size_t i = 0; i < 2; i++) {
        json_object_set_new(d, "violation_summary", json_pack("{s:s}", "max_severity", levels[i]));
        l = sg_refusals_of(d, false);
        cleanup_free char *t = sg_refusals_text(l, NULL);
        assert_null(strstr(t, "allow with"));
        assert_null(strstr(t, "--policy"));
        cleanup_free char *says = sg_xasprintf("refused: write /w/out.pdf (denied when asked); "
                                               "not to be allowed: part of this run's attack "
                                               "(max severity %s)\n", levels[i]);
        assert_non_null(strstr(t, says));
        json_decref(l);
    }
    json_object_set_new(d, "violation_summary", json_pack("{s:s}", "max_severity", "medium"));
    l = sg_refusals_of(d, false);
    cleanup_free char *t3 = sg_refusals_text(l, NULL);
    assert_non_null(strstr(t3, "refused: write /w/out.pdf (denied when asked) — allow with: "));
    json_decref(l);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_program_by_two_paths_is_one_line),
        cmocka_unit_test(a_decision_and_its_event_are_one_refusal),
        cmocka_unit_test(the_home_is_said_as_a_tilde_but_not_in_what_is_typed),
        cmocka_unit_test(deny_rules_and_agents_get_their_own_way),
        cmocka_unit_test(an_upstream_refusal_names_allow_upstream),
        cmocka_unit_test(a_write_no_answer_could_make_says_why),
        cmocka_unit_test(escapes_never_reach_the_text_and_the_list_is_capped),
        cmocka_unit_test(each_names_what_was_attempted),
        cmocka_unit_test(an_attack_is_never_followed_by_a_way_to_allow_it),
    };
    return cmocka_run_group_tests_name("refusals", tests, NULL, NULL);
}
