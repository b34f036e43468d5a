/* The traces folder's index (traceindex.c): a line counts only while its
 * file is unchanged; junk lines, long lines and names that are not plain
 * file names are ignored; an append after a rewrite lands in the new file;
 * and a trace written to the folder is indexed as it is written. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#include "trace.h"
#include "traceindex.h"
#include "util.h"

static const char *const TRACE =
    "{\"schema\":\"skillgate.trace/1\",\"skill_name\":\"w\",\"started_at\":\"2026-01-01T00:00:00Z\","
    "\"status\":\"completed\",\"end_reason\":\"exited\",\"exit_code\":3,\"duration_ms\":42,"
    "\"decisions\":[{},{}],\"violation_summary\":{\"max_severity\":\"high\","
    "\"total_enforcements\":7}}";

static void a_line_counts_while_its_file_is_unchanged(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    th_write(dir, "a.json", TRACE);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *doc = sg_trace_load_at(dfd, "a.json");
    assert_non_null(doc);
    json_t *e = sg_trace_index_entry(dfd, "a.json", doc);
    assert_string_equal(json_string_value(json_object_get(e, "status")), "completed");
    assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), 3);
    assert_int_equal(json_integer_value(json_object_get(e, "decisions")), 2);
    assert_int_equal(json_integer_value(json_object_get(e, "enforcements")), 7);
    assert_string_equal(json_string_value(json_object_get(e, "max_severity")), "high");
    json_t *all = json_pack("[O]", e);
    assert_int_equal(sg_trace_index_put(dfd, all, false), 0);
    /* junk around it: not JSON, a line over the cap, a path, a dot file */
    cleanup_free char *idx = sg_xasprintf("%s/%s", dir, SG_TRACE_INDEX);
    FILE *f = fopen(idx, "ae");
    fprintf(f, "{not json\n{\"file\":\"../x.json\"}\n{\"file\":\".hidden\"}\n{\"file\":\"");
    for (int i = 0; i < SG_TRACE_INDEX_LINE_MAX; i++)
        fputc('b', f);
    fprintf(f, "\"}\n{\"file\":\"half");
    fclose(f);
    size_t lines;
    json_t *map = sg_trace_index_load(dfd, &lines);
    assert_int_equal(lines, 5);
    assert_int_equal(json_object_size(map), 1);
    assert_true(sg_trace_index_fresh(dfd, "a.json", json_object_get(map, "a.json")));
    /* the trace changes: its line no longer counts */
    th_write(dir, "a.json", "{\"skill_name\":\"other\"}");
    assert_false(sg_trace_index_fresh(dfd, "a.json", json_object_get(map, "a.json")));
    assert_false(sg_trace_index_fresh(dfd, "gone.json", json_object_get(map, "a.json")));
    json_decref(map);
    /* a rewrite replaces everything; an append after it lands in the new file */
    json_object_set_new(e, "file", json_string("b.json"));
    assert_int_equal(sg_trace_index_put(dfd, all, true), 0);
    json_object_set_new(e, "file", json_string("c.json"));
    assert_int_equal(sg_trace_index_put(dfd, all, false), 0);
    map = sg_trace_index_load(dfd, &lines);
    assert_int_equal(lines, 2);
    assert_non_null(json_object_get(map, "b.json"));
    assert_non_null(json_object_get(map, "c.json"));
    json_decref(map);
    json_decref(all);
    json_decref(e);
    json_decref(doc);
    /* not a trace: nothing parsed, and no symlink followed */
    th_write(dir, "junk.json", "[1, 2");
    assert_null(sg_trace_load_at(dfd, "junk.json"));
    assert_int_equal(symlinkat("a.json", dfd, "link.json"), 0);
    assert_null(sg_trace_load_at(dfd, "link.json"));
    close(dfd);
    th_rmrf(dir);
    free(dir);
}

static void a_trace_written_to_the_folder_is_indexed(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    setenv("XDG_STATE_HOME", dir, 1);
    json_t *doc = json_loads(TRACE, 0, NULL);
    json_object_set_new(doc, "trace_id", json_string("1-abc"));
    char *written = NULL;
    assert_int_equal(sg_trace_write(doc, NULL, NULL, &written), 0);
    cleanup_free char *tdir = sg_xasprintf("%s/skillgate/traces", dir);
    int dfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t lines;
    json_t *map = sg_trace_index_load(dfd, &lines);
    const char *base = strrchr(written, '/') + 1;
    json_t *e = json_object_get(map, base);
    assert_non_null(e);
    assert_true(sg_trace_index_fresh(dfd, base, e));
    assert_string_equal(json_string_value(json_object_get(e, "skill_name")), "w");
    json_decref(map);
    json_decref(doc);
    free(written);
    close(dfd);
    th_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_line_counts_while_its_file_is_unchanged),
        cmocka_unit_test(a_trace_written_to_the_folder_is_indexed),
    };
    return cmocka_run_group_tests_name("traceindex", tests, NULL, NULL);
}
