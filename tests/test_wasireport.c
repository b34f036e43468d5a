/* A WASM run's WASI-layer reports (run/wasireport.c): the lines come from
 * inside the sandbox, so a report is an event only when every field checks,
 * a line split across reads is one line, and an overlong line, a malformed
 * one and any past the cap are counted, never shown. */
#include "helpers.h"

#include <stdio.h>
#include <string.h>

#include "wasireport.h"

struct got {
    int kinds[SG_EV_COUNT];
    char last[512];
    json_t *data;
};

static void sink(void *ctx, const struct sg_event *ev)
{
    struct got *g = ctx;
    g->kinds[ev->kind]++;
    snprintf(g->last, sizeof g->last, "%.*s", (int)ev->message_len, ev->message);
    json_decref(g->data);
    g->data = json_incref(ev->data);
}

static void feed(struct sg_wasi_report *w, struct sg_event_bus *b, const char *s)
{
    sg_wasi_report_feed(w, s, strlen(s), b);
}

static const char DENIED[] =
    "{\"t\":\"denied\",\"call\":\"path_open\",\"path\":\"/skill/escape/hostname\",\"access\":"
    "\"read\",\"errno\":2,\"layer\":\"kernel\",\"why\":\"refused\"}\n";

static void a_report_split_across_reads_is_one_event(void **st)
{
    (void)st;
    struct sg_wasi_report w = {0};
    struct sg_event_bus b = {0};
    struct got g = {0};
    sg_bus_subscribe(&b, sink, &g);
    size_t half = sizeof DENIED / 2;
    sg_wasi_report_feed(&w, DENIED, half, &b);
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], 0);
    sg_wasi_report_feed(&w, DENIED + half, strlen(DENIED) - half, &b);
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], 1);
    assert_string_equal(json_string_value(json_object_get(g.data, "layer")), "kernel");
    assert_string_equal(json_string_value(json_object_get(g.data, "path")),
                        "/skill/escape/hostname");
    assert_non_null(json_object_get(g.data, "reported_by"));
    assert_non_null(strstr(g.last, "refused by the kernel sandbox"));
    sg_wasi_report_end(&w, &b);
    assert_int_equal(g.kinds[SG_EV_OUTPUT_DROPPED], 0);
    json_decref(g.data);
}

static void what_does_not_check_is_counted_not_shown(void **st)
{
    (void)st;
    struct sg_wasi_report w = {0};
    struct sg_event_bus b = {0};
    struct got g = {0};
    sg_bus_subscribe(&b, sink, &g);
    feed(&w, &b, "not json\n");
    feed(&w, &b, "{\"t\":\"denied\",\"call\":\"x\",\"path\":\"/p\",\"access\":\"read\",\"errno\":1,"
                 "\"layer\":\"person\"}\n");                          /* no such layer */
    feed(&w, &b, "{\"t\":\"denied\",\"call\":\"PATH OPEN\",\"path\":\"/p\",\"access\":\"read\","
                 "\"errno\":1,\"layer\":\"wasi\"}\n");                /* not a call's name */
    feed(&w, &b, "{\"t\":\"limit\",\"what\":\"cpu\",\"pages\":1}\n"); /* only memory */
    feed(&w, &b, "{\"t\":\"start\",\"t\":\"start\"}\n");              /* a duplicate key */
    char big[SG_WASI_LINE_MAX + 100];
    memset(big, 'x', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    feed(&w, &b, big);
    feed(&w, &b, DENIED); /* the line after an overlong one still counts */
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], 1);
    assert_int_equal(g.kinds[SG_EV_RESOURCE_LIMIT_HIT], 0);
    assert_int_equal(g.kinds[SG_EV_POLICY_APPLIED], 0);
    sg_wasi_report_end(&w, &b);
    assert_int_equal(g.kinds[SG_EV_OUTPUT_DROPPED], 1);
    assert_int_equal(json_integer_value(json_object_get(g.data, "dropped")), 6);
    json_decref(g.data);
}

static void wasi_denied(char *buf, size_t len, int i)
{
    snprintf(buf, len,
             "{\"t\":\"denied\",\"call\":\"path_open\",\"path\":\"/skill/../x%d\","
             "\"access\":\"read\",\"errno\":76,\"layer\":\"wasi\",\"why\":\"out\"}\n", i);
}

/* a flood of the WASI layer's cheap refusals does not hide the kernel's */
static void reports_past_the_cap_are_counted_per_layer(void **st)
{
    (void)st;
    struct sg_wasi_report w = {0};
    struct sg_event_bus b = {0};
    struct got g = {0};
    sg_bus_subscribe(&b, sink, &g);
    char line[256];
    for (int i = 0; i < SG_WASI_EVENTS_MAX + 50; i++) {
        wasi_denied(line, sizeof line, i);
        feed(&w, &b, line);
    }
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], SG_WASI_EVENTS_MAX);
    feed(&w, &b, DENIED);
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], SG_WASI_EVENTS_MAX + 1);
    assert_string_equal(json_string_value(json_object_get(g.data, "layer")), "kernel");
    sg_wasi_report_end(&w, &b);
    assert_int_equal(json_integer_value(json_object_get(g.data, "past_cap_wasi")), 50);
    assert_int_equal(json_integer_value(json_object_get(g.data, "past_cap_kernel")), 0);
    assert_int_equal(json_integer_value(json_object_get(g.data, "dropped")), 50);
    json_decref(g.data);
}

/* the same refusal again is counted, takes no budget and is not shown */
static void repeats_are_counted_not_budgeted(void **st)
{
    (void)st;
    struct sg_wasi_report w = {0};
    struct sg_event_bus b = {0};
    struct got g = {0};
    sg_bus_subscribe(&b, sink, &g);
    for (int i = 0; i < 3 * SG_WASI_EVENTS_MAX; i++)
        feed(&w, &b, DENIED);
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], 1);
    char line[256];
    wasi_denied(line, sizeof line, 7);
    feed(&w, &b, line);
    assert_int_equal(g.kinds[SG_EV_FS_BLOCKED], 2);
    sg_wasi_report_end(&w, &b);
    assert_int_equal(json_integer_value(json_object_get(g.data, "repeats")),
                     3 * SG_WASI_EVENTS_MAX - 1);
    assert_int_equal(json_integer_value(json_object_get(g.data, "dropped")), 0);
    json_decref(g.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_report_split_across_reads_is_one_event),
        cmocka_unit_test(what_does_not_check_is_counted_not_shown),
        cmocka_unit_test(reports_past_the_cap_are_counted_per_layer),
        cmocka_unit_test(repeats_are_counted_not_budgeted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
