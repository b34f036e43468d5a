/* One definition of each count a person reads (attempts.c): blocked,
 * asked and allowed are the same numbers whether they are counted from the
 * live events (the Run screen's header and its "attempted:" line), from a
 * trace (the Traces list's BLOCK and ASKS, the trace view), or from the
 * events an attached TUI is sent (tui --attach: only the fields the tally
 * reads). A decision a rule made is no question asked; a person's denial
 * is blocked, never allowed. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#include "attempts.h"
#include "trace.h"
#include "traceindex.h"
#include "util.h"

/* An agent's run with three person denials, eleven rule decisions (the
 * decisions list: none of them asked), a repeated DNS refusal and the
 * noise that counts for nothing (output, the policy). */
static const char *const TRACE =
    "{\"schema\":\"skillgate.trace/1\",\"skill_name\":\"shell-tool\","
    "\"started_at\":\"2026-01-01T00:00:00Z\",\"status\":\"completed\",\"exit_code\":0,"
    "\"decisions\":[{},{},{},{},{},{},{},{},{},{},{}],"
    "\"violation_summary\":{\"max_severity\":\"high\",\"total_enforcements\":99},"
    "\"events\":["
    "{\"kind\":\"policy_applied\",\"data\":{}},"
    "{\"kind\":\"stdout\",\"data\":{}},"
    "{\"kind\":\"fs_blocked\",\"data\":{\"path\":\"/etc/shadow\"}},"
    "{\"kind\":\"syscall_blocked\",\"data\":{\"syscall\":\"execve\"}},"
    "{\"kind\":\"syscall_blocked\",\"data\":{\"syscall\":\"ptrace\"}},"
    "{\"kind\":\"dns_blocked\",\"repeated\":2,\"data\":{\"name\":\"x.test\"}},"
    "{\"kind\":\"network_egress_allowed\",\"data\":{\"host\":\"api.test\"}},"
    "{\"kind\":\"permission_asked\",\"data\":{\"tool\":\"Bash\"}},"
    "{\"kind\":\"permission_asked\",\"data\":{\"tool\":\"Bash\"}},"
    "{\"kind\":\"permission_asked\",\"data\":{\"tool\":\"Write\"}},"
    "{\"kind\":\"permission_decided\",\"data\":{\"tool\":\"Bash\",\"prevented\":true,"
    "\"decided_by\":\"person\",\"command\":\"curl x.test\"}},"
    "{\"kind\":\"permission_decided\",\"data\":{\"tool\":\"Bash\",\"prevented\":true,"
    "\"decided_by\":\"person\"}},"
    "{\"kind\":\"permission_decided\",\"data\":{\"tool\":\"Write\",\"prevented\":true,"
    "\"decided_by\":\"person\"}},"
    "{\"kind\":\"permission_decided\",\"data\":{\"tool\":\"Fetch\",\"prevented\":false,"
    "\"decided_by\":\"rule\"}},"
    "{\"kind\":\"resource_limit_hit\",\"data\":{\"limit\":\"pids\"}}"
    "]}";

static void expect(const struct sg_attempts *a, unsigned long blocked, unsigned long asked,
                   unsigned long allowed)
{
    assert_int_equal(sg_attempts_total(a, SG_ATT_BLOCKED), blocked);
    assert_int_equal(sg_attempts_total(a, SG_ATT_ASKED), asked);
    assert_int_equal(sg_attempts_total(a, SG_ATT_ALLOWED), allowed);
}

static void each_count_has_one_definition(void **st)
{
    (void)st;
    json_error_t err;
    json_t *doc = json_loads(TRACE, 0, &err);
    assert_non_null(doc);
    /* from the trace: fs 1, execve 1, ptrace 1, dns 1+2, person denials 3, limit 1 */
    struct sg_attempts from_trace = {0};
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "events"), i, ev)
        sg_attempts_add_json(&from_trace, ev);
    expect(&from_trace, 10, 3, 2);
    assert_int_equal(from_trace.n[SG_ATT_BLOCKED][SG_ATT_PROGRAMS], 3); /* execve + 2 Bash */
    cleanup_free char *text = sg_attempts_text(&from_trace);
    assert_string_equal(text, "blocked 10 (files 2, programs 3, network 3, limits 1, other 1) "
                              "· asked 3 (files 1, programs 2) · allowed 2 (network 2)");

    /* live, as the Run screen's sink counts, and as an attached TUI is sent
     * them: only the fields the tally reads */
    struct sg_attempts live = {0}, attached = {0};
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        for (int k = 0; k < SG_EV_COUNT; k++) {
            if (strcmp(kind, sg_event_name((enum sg_event_kind)k)))
                continue;
            json_t *rep = json_object_get(ev, "repeated");
            json_t *fields = sg_attempts_fields(json_object_get(ev, "data"));
            for (json_int_t r = 0; r <= json_integer_value(rep); r++) {
                sg_attempts_add(&live, (enum sg_event_kind)k, json_object_get(ev, "data"));
                sg_attempts_add(&attached, (enum sg_event_kind)k, fields);
            }
            json_decref(fields);
        }
    }
    assert_memory_equal(&live, &from_trace, sizeof live);
    assert_memory_equal(&attached, &from_trace, sizeof live);

    /* the Traces list: the index line's tally, not the decisions or the
     * classifier's enforcements */
    char *dir = th_tmpdir();
    th_write(dir, "a.json", TRACE);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *e = sg_trace_index_entry(dfd, "a.json", doc);
    struct sg_attempts listed;
    sg_attempts_from_json(&listed, json_object_get(e, "attempts"));
    assert_memory_equal(&listed, &from_trace, sizeof listed);
    json_decref(e);
    json_decref(doc);
    close(dfd);
    th_rmrf(dir);
    free(dir);
}

static void nothing_attempted_says_so(void **st)
{
    (void)st;
    struct sg_attempts a = {0};
    sg_attempts_add(&a, SG_EV_STDOUT, NULL);
    sg_attempts_add(&a, SG_EV_POLICY_APPLIED, NULL);
    expect(&a, 0, 0, 0);
    cleanup_free char *text = sg_attempts_text(&a);
    assert_string_equal(text, "blocked 0 · asked 0 · allowed 0");
    assert_null(sg_attempts_fields(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_count_has_one_definition),
        cmocka_unit_test(nothing_attempted_says_so),
    };
    return cmocka_run_group_tests_name("attempts", tests, NULL, NULL);
}
