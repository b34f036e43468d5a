/* Helpers whose mistakes would be silent: sg_close_all_but leaves a forked
 * holder process with exactly the descriptors it was told to keep. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "events.h"
#include "homes.h"
#include "util.h"

static bool is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* In a child: open eight pipes' worth of fds, keep three of them (given out
 * of order, one twice and one that is not open), report what is left as
 * the exit code's bits. */
static void close_all_but_keeps_exactly_the_kept(void **st)
{
    (void)st;
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        int fds[16];
        for (int i = 0; i < 8; i++)
            if (pipe(fds + 2 * i) < 0)
                _exit(255);
        int keep[] = {fds[11], fds[2], fds[11], fds[15] + 40, fds[5]};
        sg_close_all_but(keep, SG_ARRAY_LEN(keep));
        int bits = 0;
        if (is_open(fds[2]))
            bits |= 1;
        if (is_open(fds[5]))
            bits |= 2;
        if (is_open(fds[11]))
            bits |= 4;
        for (int i = 0; i < 16; i++)
            if (i != 2 && i != 5 && i != 11 && is_open(fds[i]))
                bits |= 8;
        for (int fd = 0; fd < 3; fd++)
            if (is_open(fd))
                bits |= 16; /* stdio is not kept either */
        _exit(bits);
    }
    int status;
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1 | 2 | 4);
}

static bool is_dir(const char *base, const char *rel, uid_t *uid)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    struct stat st;
    if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
        return false;
    if (uid)
        *uid = st.st_uid;
    return true;
}

/* sg_mkdir_p tries the whole path first and walks back only as far as
 * something is missing: every missing folder is made (and only those are
 * given to the owner), what exists is left, a file in the way is an error. */
static void mkdir_p_makes_the_missing_folders_only(void **st)
{
    (void)st;
    char *base = th_tmpdir();
    char p[512];
    snprintf(p, sizeof p, "%s/a", base);
    assert_int_equal(mkdir(p, 0700), 0);
    /* a exists, b/c/d do not */
    snprintf(p, sizeof p, "%s/a/b/c/d", base);
    bool root = geteuid() == 0;
    uid_t owner = root ? 65534 : (uid_t)-1;
    assert_int_equal(sg_mkdir_p(p, 0755, owner, root ? 65534 : (gid_t)-1), 0);
    uid_t u;
    assert_true(is_dir(base, "a", &u));
    assert_int_equal(u, geteuid()); /* it existed: not given away */
    const char *made[] = {"a/b", "a/b/c", "a/b/c/d"};
    for (size_t i = 0; i < SG_ARRAY_LEN(made); i++) {
        assert_true(is_dir(base, made[i], &u));
        if (root)
            assert_int_equal(u, 65534);
    }
    /* all there: nothing to do */
    assert_int_equal(sg_mkdir_p(p, 0755, (uid_t)-1, (gid_t)-1), 0);
    /* a trailing slash and a doubled one */
    snprintf(p, sizeof p, "%s/a//e/f/", base);
    assert_int_equal(sg_mkdir_p(p, 0755, (uid_t)-1, (gid_t)-1), 0);
    assert_true(is_dir(base, "a/e/f", NULL));
    /* a file where a folder should be */
    snprintf(p, sizeof p, "%s/a/file", base);
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    snprintf(p, sizeof p, "%s/a/file/g/h", base);
    assert_int_equal(sg_mkdir_p(p, 0755, (uid_t)-1, (gid_t)-1), -ENOTDIR);
    assert_false(is_dir(base, "a/file/g", NULL));
    th_rmrf(base);
    free(base);
}

/* sg_path_real remembers realpath's answers while the homes are held (a
 * plan asks the same folders over and over) and works a name out from its
 * parent's answer: what it gives must be what realpath gives, for links
 * absolute, relative, chained, dangling, looping, to a file, with "." and
 * ".." and doubled slashes, whatever order the names come in; and the
 * memory ends with the hold (a link changed after it is followed anew). */
static void path_real_is_the_same_held_or_not(void **st)
{
    (void)st;
    char *base = th_tmpdir();
    char p[512], q[512];
    const char *dirs[] = {"r", "r/d", "r/d/sub", "r/e"};
    for (size_t i = 0; i < SG_ARRAY_LEN(dirs); i++) {
        snprintf(p, sizeof p, "%s/%s", base, dirs[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    snprintf(p, sizeof p, "%s/r/d/file", base);
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    const char *links[][2] = {{"rel", "r/d"},          {"chain", "rel/sub"},
                              {"r/e/up", "../d"},      {"dangling", "nothere/x"},
                              {"loop1", "loop2"},      {"loop2", "loop1"},
                              {"tofile", "r/d/file"},  {"r/d/sub/abs", NULL}};
    for (size_t i = 0; i < SG_ARRAY_LEN(links); i++) {
        snprintf(p, sizeof p, "%s/%s", base, links[i][0]);
        if (links[i][1])
            snprintf(q, sizeof q, "%s", links[i][1]);
        else
            snprintf(q, sizeof q, "%s/r/e", base);
        assert_int_equal(symlink(q, p), 0);
    }
    const char *names[] = {
        "chain/abs/up/file/x", "chain/abs/up/file", "rel/sub/../file", "r//d/./sub",
        "r/e/up/sub/abs/up", "dangling/y/z", "loop1/a", "loop2", "tofile", "tofile/x",
        "r/d/file/x/y", "nothere", "nothere/a/b", "rel", "rel/", "r/e/up/..", "r/d/sub/abs",
        "chain", "r", "", "/",
    };
    size_t n = SG_ARRAY_LEN(names);
    char **want = calloc(n, sizeof *want);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", base, names[i]);
        want[i] = sg_path_real(names[i][0] == '/' ? names[i] : p);
    }
    /* held: twice over, deepest first, then the other way round */
    sg_homes_hold();
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < n; k++) {
            size_t i = round ? n - 1 - k : k;
            snprintf(p, sizeof p, "%s/%s", base, names[i]);
            char *got = sg_path_real(names[i][0] == '/' ? names[i] : p);
            assert_string_equal(got, want[i]);
            free(got);
        }
    /* still held: the answer a hold gave stays, as the homes do */
    snprintf(p, sizeof p, "%s/rel", base);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(symlink("r/e", p), 0);
    snprintf(q, sizeof q, "%s/rel/sub", base);
    char *got = sg_path_real(q);
    snprintf(p, sizeof p, "%s/r/d/sub", base);
    char *real_d_sub = sg_path_real(p);
    assert_string_equal(got, real_d_sub);
    free(got);
    sg_homes_release();
    /* released: the link is followed where it points now */
    got = sg_path_real(q);
    snprintf(p, sizeof p, "%s/r/e/sub", base);
    char *real_e_sub = sg_path_real(p);
    assert_string_equal(got, real_e_sub);
    assert_string_not_equal(got, real_d_sub);
    free(got);
    free(real_d_sub);
    free(real_e_sub);
    for (size_t i = 0; i < n; i++)
        free(want[i]);
    free(want);
    th_rmrf(base);
    free(base);
}

/* sg_format_iso formats the date once per second and the milliseconds
 * itself: going forward, back and across a day, it matches gmtime_r. */
static void format_iso_matches_gmtime_across_seconds(void **st)
{
    (void)st;
    const int64_t at[] = {1795000000123, 1795000000999, 1795000001000, 1795000000500,
                          1795046399999, 1795046400000, 0, 4102444800007, 1795046400000};
    for (size_t i = 0; i < SG_ARRAY_LEN(at); i++) {
        char got[32], want[96];
        sg_format_iso(at[i], got);
        time_t t = (time_t)(at[i] / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(at[i] % 1000));
        assert_string_equal(got, want);
    }
}

/* A captured line is kept whole with its newline, or dropped whole and
 * counted: the audit record never ends in half a line. */
static void a_capped_line_is_whole_or_counted(void **st)
{
    (void)st;
    struct sg_buf b;
    sg_buf_init(&b, 10);
    assert_int_equal(sg_buf_append_line(&b, "12345", 5), 0);
    assert_string_equal(b.data, "12345\n");
    assert_int_equal(sg_buf_append_line(&b, "abcd", 4), -ENOBUFS); /* 6 + 5 > 10 */
    assert_int_equal(b.dropped, 5);
    assert_int_equal(sg_buf_append_line(&b, "xyz", 3), 0);          /* 6 + 4 = 10 */
    assert_string_equal(b.data, "12345\nxyz\n");
    assert_int_equal(sg_buf_append_line(&b, "", 0), -ENOBUFS);
    assert_int_equal(b.dropped, 6);
    sg_buf_free(&b);
}

static void edit_distance_counts_a_swap_as_one(void **st)
{
    (void)st;
    assert_int_equal(sg_edit_distance("", ""), 0);
    assert_int_equal(sg_edit_distance("", "abc"), 3);
    assert_int_equal(sg_edit_distance("abc", ""), 3);
    assert_int_equal(sg_edit_distance("weather", "weather"), 0);
    assert_int_equal(sg_edit_distance("wether", "weather"), 1);    /* insert */
    assert_int_equal(sg_edit_distance("weatherr", "weather"), 1);  /* delete */
    assert_int_equal(sg_edit_distance("jsno", "json"), 1);         /* swap */
    assert_int_equal(sg_edit_distance("allowed_tools", "allowed-tools"), 1);
    assert_int_equal(sg_edit_distance("max_runtime_secs", "max_runtime_seconds"), 3);
    assert_int_equal(sg_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(sg_edit_distance("ca", "abc"), 3); /* OSA: no edit of a swapped pair */
    assert_int_equal(sg_edit_distance("tools", "hooks"), 2);
    char big[SG_EDIT_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_true(sg_edit_distance(big, "a") == SIZE_MAX);
    big[SG_EDIT_MAX] = '\0'; /* exactly the cap: still measured */
    assert_int_equal(sg_edit_distance(big, big + 1), 1);
}

static const char *nearest(const char *word, const char *const *cands)
{
    struct sg_nearest n;
    sg_nearest_init(&n, word);
    for (size_t i = 0; cands[i]; i++)
        sg_nearest_offer(&n, cands[i]);
    return n.best;
}

static void nearest_suggests_only_a_close_name(void **st)
{
    (void)st;
    static const char *const skills[] = {"code-review", "malicious-weather", "notes-writer",
                                         "pdf-forms", "pdf-text", "shell-tool", "weather",
                                         NULL};
    assert_string_equal(nearest("wether", skills), "weather");
    assert_string_equal(nearest("pdf-txt", skills), "pdf-text");
    assert_null(nearest("zzz", skills));
    assert_null(nearest("weather", skills)); /* itself is no suggestion */
    static const char *const opts[] = {"help", "json", "input", "dry-run", "watch", NULL};
    assert_string_equal(nearest("jsno", opts), "json");
    assert_string_equal(nearest("dryrun", opts), "dry-run");
    assert_null(nearest("x", opts));
    static const char *const keys[] = {"memory_mb", "max_runtime_seconds", "max_cpu_percent",
                                       "max_pids", "max_output_bytes", NULL};
    assert_string_equal(nearest("max_runtime_secs", keys), "max_runtime_seconds");
    assert_string_equal(nearest("max_pid", keys), "max_pids");
    assert_null(nearest("gpu", keys));
    static const char *const fm[] = {"name", "hooks", "model", "wasm", NULL};
    assert_null(nearest("tools", fm)); /* two edits from hooks: too far for five letters */
    /* ties: the first offered */
    static const char *const tie[] = {"cat", "bat", NULL};
    assert_string_equal(nearest("at", tie), "cat");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_all_but_keeps_exactly_the_kept),
        cmocka_unit_test(mkdir_p_makes_the_missing_folders_only),
        cmocka_unit_test(path_real_is_the_same_held_or_not),
        cmocka_unit_test(format_iso_matches_gmtime_across_seconds),
        cmocka_unit_test(a_capped_line_is_whole_or_counted),
        cmocka_unit_test(edit_distance_counts_a_swap_as_one),
        cmocka_unit_test(nearest_suggests_only_a_close_name),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
