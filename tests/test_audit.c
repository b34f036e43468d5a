/* The audit log's writer thread (audit.c): what the run's loop posts is on
 * disk, in the order posted, once sg_audit_flush returns; a queue smaller
 * than the burst makes the poster wait, never drops a record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "audit.h"
#include "util.h"

#define BURST 2500 /* over the writer's queue of 1024 */

static void posted_records_are_all_on_disk_in_order(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = sg_xasprintf("%s/skillgate/audit.jsonl", dir);
    for (int i = 0; i < BURST; i++)
        sg_audit_post(path, json_pack("{s:s, s:i}", "type", "test", "n", i));
    assert_int_equal(sg_audit_flush(), 0);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *j = json_loads(line, 0, NULL);
        assert_non_null(j);
        assert_int_equal(json_integer_value(json_object_get(j, "n")), n);
        assert_int_equal(json_integer_value(json_object_get(j, "seq")), n + 1);
        json_decref(j);
        n++;
    }
    fclose(f);
    assert_int_equal(n, BURST);
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), 0);
    assert_int_equal(c.records, BURST);
    th_rmrf(dir);
    free(dir);
}

/* A record that cannot be written is reported by the next flush, once. */
static void a_failed_append_is_reported_by_the_flush(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    th_write(dir, "file", "not a folder");
    cleanup_free char *path = sg_xasprintf("%s/file/skillgate/audit.jsonl", dir);
    sg_audit_post(path, json_pack("{s:s}", "type", "test"));
    assert_true(sg_audit_flush() < 0);
    assert_int_equal(sg_audit_flush(), 0);
    th_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(posted_records_are_all_on_disk_in_order),
        cmocka_unit_test(a_failed_append_is_reported_by_the_flush),
    };
    return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
