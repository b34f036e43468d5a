/* The audit log's writer thread (audit.c): what the run's loop posts is on
 * disk, in the order posted, once sg_audit_flush returns; a queue smaller
 * than the burst makes the poster wait, never drops a record. And what
 * verify holds the log to (issue 34): every complete line a record that
 * chains, only a last line without its newline is a tear, and the traces
 * beside the log name records it still holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- verify (issue 34) ---- */

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    char *buf = sg_xmalloc(1 << 20);
    *n = fread(buf, 1, (1 << 20) - 1, f);
    buf[*n] = '\0';
    fclose(f);
    return buf;
}

static void spill(const char *path, const char *buf, size_t n)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* A log of n records in dir/skillgate, the last one a "run" record. */
static char *a_log(const char *dir, int n)
{
    char *path = sg_xasprintf("%s/skillgate/audit.jsonl", dir);
    for (int i = 0; i < n; i++) {
        json_t *rec = i + 1 < n ? json_pack("{s:s, s:i}", "type", "test", "n", i)
                                : json_pack("{s:s, s:s}", "type", "run", "run_id", "r1");
        assert_int_equal(sg_audit_append(path, rec), 0);
        json_decref(rec);
    }
    return path;
}

/* The offset of the start of the last line (buf ends in a newline). */
static size_t last_line_at(const char *buf, size_t n)
{
    size_t at = n - 1;
    while (at > 0 && buf[at - 1] != '\n')
        at--;
    return at;
}

static void a_changed_last_record_is_not_a_tear(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = a_log(dir, 4);
    size_t n;
    cleanup_free char *buf = slurp(path, &n);
    buf[last_line_at(buf, n)] = 'X'; /* "{" no more: it does not parse */
    spill(path, buf, n);
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_int_equal(c.bad_line, 4);
    assert_int_equal(c.torn, 0);
    assert_non_null(strstr(c.why, "not a record"));
    /* an empty line is no record either */
    buf[last_line_at(buf, n)] = '{';
    cleanup_free char *with_empty = sg_xasprintf("%s\n", buf);
    spill(path, with_empty, n + 1);
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_int_equal(c.bad_line, 5);
    th_rmrf(dir);
    free(dir);
}

static void a_torn_last_line_is_reported_then_taken_off(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = a_log(dir, 3);
    FILE *f = fopen(path, "ae");
    assert_non_null(f);
    fputs("{\"type\":\"run\",\"ru", f); /* a crash mid-write */
    fclose(f);
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), 0);
    assert_int_equal(c.torn, 1);
    assert_int_equal(c.records, 3);
    json_t *rec = json_pack("{s:s}", "type", "test");
    assert_int_equal(sg_audit_append(path, rec), 0);
    json_decref(rec);
    assert_int_equal(sg_audit_verify(path, &c), 0);
    assert_int_equal(c.torn, 0);
    assert_int_equal(c.torn_taken, 1);
    assert_int_equal(c.records, 5); /* the torn_line record and the new one */
    size_t n;
    cleanup_free char *buf = slurp(path, &n);
    assert_null(strstr(buf, "\"ru\n")); /* taken off, not closed */
    assert_non_null(strstr(buf, "\"type\":\"torn_line\",\"bytes\":17"));
    th_rmrf(dir);
    free(dir);
}

/* An older writer closed a torn line with a newline and put its torn_line
 * record right after it: that pair still verifies; the same line with
 * anything else after it does not. */
static void an_older_writers_closed_tear_still_verifies(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = a_log(dir, 2);
    size_t n;
    cleanup_free char *good = slurp(path, &n);
    cleanup_free char *closed = sg_xasprintf("%s{\"half\n", good);
    spill(path, closed, strlen(closed));
    json_t *prev = json_loads(good + last_line_at(good, n), 0, NULL);
    json_t *torn = json_pack("{s:s, s:i, s:i, s:O}", "type", "torn_line", "bytes", 6, "seq", 3,
                             "prev", json_object_get(prev, "hash"));
    cleanup_free char *h = sg_audit_hash(torn);
    json_object_set_new(torn, "hash", json_string(h));
    cleanup_free char *line = json_dumps(torn, JSON_COMPACT);
    cleanup_free char *legacy = sg_xasprintf("%s%s\n", closed, line);
    spill(path, legacy, strlen(legacy));
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), 0);
    assert_int_equal(c.torn_taken, 1);
    assert_int_equal(c.records, 3);
    /* the closed line alone at the end: changed or put there */
    spill(path, closed, strlen(closed));
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_int_equal(c.bad_line, 3);
    json_decref(prev);
    json_decref(torn);
    th_rmrf(dir);
    free(dir);
}

/* A trace beside the log names its run's record as the head: cutting the
 * last record off (the chain still holds) fails, naming the trace. */
static void a_trace_names_the_records_cut_off_the_end(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = a_log(dir, 5);
    size_t n;
    cleanup_free char *buf = slurp(path, &n);
    json_t *last = json_loads(buf + last_line_at(buf, n), 0, NULL);
    json_t *head = sg_audit_head_of(last);
    assert_non_null(head);
    json_t *trace = json_pack("{s:s, s:s, s:O}", "schema", "skillgate.trace/1", "trace_id", "r1",
                              "audit_head", head);
    cleanup_free char *text = json_dumps(trace, 0);
    cleanup_free char *sk = sg_xasprintf("%s/skillgate", dir);
    th_write(sk, "traces/t1.json", text);
    th_write(sk, "traces/old.json", "{\"schema\": \"skillgate.trace/1\"}");
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), 0);
    assert_int_equal(c.traces, 1);
    assert_int_equal(c.traces_old, 1);
    assert_int_equal(c.head_seq, 5);
    /* the last record cut off */
    spill(path, buf, last_line_at(buf, n));
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_int_equal(c.bad_line, 0);
    assert_int_equal(c.traces_bad, 1);
    assert_non_null(strstr(c.trace, "traces/t1.json"));
    assert_non_null(strstr(c.why, "cut off"));
    /* its newline taken, so it reads as a tear: still not the head */
    spill(path, buf, n - 1);
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_int_equal(c.torn, 1);
    assert_int_equal(c.traces_bad, 1);
    /* the whole log gone */
    unlink(path);
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_non_null(strstr(c.why, "no record"));
    /* a trace naming another run's record */
    spill(path, buf, n);
    json_object_set_new(trace, "trace_id", json_string("r2"));
    free(text);
    text = json_dumps(trace, 0);
    th_write(sk, "traces/t1.json", text);
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_non_null(strstr(c.why, "not its run's record"));
    /* the head moved back onto a record of the same run that is no run
     * record (a decision), the run record cut off after it */
    json_t *dec = json_pack("{s:s, s:s}", "type", "decision", "run_id", "r9");
    assert_int_equal(sg_audit_append(path, dec), 0);
    json_t *dhead = sg_audit_head_of(dec);
    json_t *moved = json_pack("{s:s, s:s, s:O}", "schema", "skillgate.trace/1", "trace_id", "r9",
                              "audit_head", dhead);
    cleanup_free char *mtext = json_dumps(moved, 0);
    th_write(sk, "traces/t1.json", mtext);
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_non_null(strstr(c.why, "not its run's record"));
    json_decref(moved);
    json_decref(dhead);
    json_decref(dec);
    /* a trace that no longer parses */
    th_write(sk, "traces/t1.json", "{\"audit_head\": ");
    assert_int_equal(sg_audit_verify(path, &c), -EBADMSG);
    assert_non_null(strstr(c.why, "does not parse"));
    json_decref(trace);
    json_decref(head);
    json_decref(last);
    th_rmrf(dir);
    free(dir);
}

/* Recovery's look for a run's record (sg_audit_find_run): found under
 * the records of runs that ended after it, across a rotation of the log,
 * with its refusals; not found before the seq its journal kept, nor when
 * it is not there. */
static void a_runs_record_is_found_under_later_ones(void **st)
{
    (void)st;
    char *dir = th_tmpdir();
    cleanup_free char *path = sg_xasprintf("%s/skillgate/audit.jsonl", dir);
    json_t *old = json_pack("{s:s, s:s}", "type", "run", "run_id", "r0");
    assert_int_equal(sg_audit_append(path, old), 0);
    json_decref(old);
    long long at_start = sg_audit_tip_seq(path);
    assert_int_equal(at_start, 1);
    json_t *recs = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "type", "decision", "run_id",
                             "r1", "decided_by", "sandbox: not in a write path", "type", "run",
                             "run_id", "r1", "trace", "/x/t-r1.json");
    assert_int_equal(sg_audit_append_all(path, recs), 0);
    json_decref(recs);
    /* r2's broker died inside its write: its refusals without its record */
    json_t *r2 = json_pack("{s:s, s:s, s:s}", "type", "decision", "run_id", "r2", "decided_by",
                           "sandbox: not in a write path");
    assert_int_equal(sg_audit_append(path, r2), 0);
    json_decref(r2);
    sg_audit_set_rotate(4096); /* the later runs rotate the log */
    for (int i = 0; i < 60; i++) {
        json_t *r = json_pack("{s:s, s:s, s:i}", "type", "run", "run_id", "later", "n", i);
        assert_int_equal(sg_audit_append(path, r), 0);
        json_decref(r);
    }
    sg_audit_set_rotate(0);
    /* r1's record is in a rotated file, not in the log now */
    cleanup_free char *now = NULL;
    size_t nlen;
    assert_int_equal(sg_read_file_capped(path, 1 << 20, &now, &nlen), 0);
    assert_non_null(strstr(now, "\"rotation\""));
    assert_null(strstr(now, "\"r1\""));
    bool refused = false;
    json_t *found = sg_audit_find_run(path, "r1", at_start, &refused);
    assert_non_null(found);
    assert_int_equal(json_integer_value(json_object_get(found, "seq")), 3);
    assert_string_equal(json_string_value(json_object_get(found, "trace")), "/x/t-r1.json");
    json_decref(found);
    /* not after the seq a journal kept: r0 was there before the run */
    assert_null(sg_audit_find_run(path, "r0", at_start, &refused));
    assert_null(sg_audit_find_run(path, "nobody", at_start, &refused));
    assert_false(refused);
    assert_null(sg_audit_find_run(path, "r2", at_start, &refused));
    assert_true(refused); /* recovery appends its record alone */
    struct sg_audit_check c;
    assert_int_equal(sg_audit_verify(path, &c), 0);
    th_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(posted_records_are_all_on_disk_in_order),
        cmocka_unit_test(a_failed_append_is_reported_by_the_flush),
        cmocka_unit_test(a_changed_last_record_is_not_a_tear),
        cmocka_unit_test(a_torn_last_line_is_reported_then_taken_off),
        cmocka_unit_test(an_older_writers_closed_tear_still_verifies),
        cmocka_unit_test(a_trace_names_the_records_cut_off_the_end),
        cmocka_unit_test(a_runs_record_is_found_under_later_ones),
    };
    return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
