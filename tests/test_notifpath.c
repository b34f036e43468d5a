/* The paths a skill names in a stopped call (run/notifpath.c), resolved
 * here against this test process itself: a dirfd that is a pipe, a socket
 * or an anonymous inode is ENOTDIR (the broker crashed on these before), a
 * deleted folder is ENOENT, and nothing overruns at PATH_MAX. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "notifpath.h"
#include "util.h"

static void normalize_cases(void **st)
{
    (void)st;
    static const char *const cases[][2] = {
        {"/", "/"},           {"//", "/"},         {"/a/./b/../c", "/a/c"},
        {"/..", "/"},         {"/../../x", "/x"},  {"/a//b///", "/a/b"},
        {"/a/b/..", "/a"},    {"/.", "/"},         {"/...", "/..."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[64];
        snprintf(p, sizeof p, "%s", cases[i][0]);
        assert_int_equal(sg_path_normalize(p), 0);
        assert_string_equal(p, cases[i][1]);
    }
    char rel[] = "pipe:[123]/a/b";
    assert_int_equal(sg_path_normalize(rel), -EINVAL);
    assert_string_equal(rel, "pipe:[123]/a/b");
}

static void join_refuses_what_is_not_a_folder(void **st)
{
    (void)st;
    char out[PATH_MAX];
    int p[2], s[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    int e = eventfd(0, 0);
    assert_true(e >= 0);
    int f = open("/etc/passwd", O_RDONLY);
    assert_true(f >= 0);
    int fds[] = {p[0], s[0], e, f};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(sg_notif_join(getpid(), fds[i], "a/b", 0, out, sizeof out), -ENOTDIR);
        assert_int_equal(sg_notif_join(getpid(), fds[i], "", 0, out, sizeof out), -ENOENT);
    }
    /* AT_EMPTY_PATH names the descriptor itself: a file with a name is fine,
     * a pipe has none */
    assert_int_equal(sg_notif_join(getpid(), f, "", 1, out, sizeof out), 0);
    assert_string_equal(out, "/etc/passwd");
    assert_int_equal(sg_notif_join(getpid(), p[0], "", 1, out, sizeof out), -ENOENT);
    assert_int_equal(sg_notif_join(getpid(), 999, "a", 0, out, sizeof out), -EBADF);
    close(p[0]), close(p[1]), close(s[0]), close(s[1]), close(e), close(f);
}

static void join_resolves_folders_and_sees_deleted_ones(void **st)
{
    (void)st;
    char out[PATH_MAX], dir[] = "/tmp/sgnotifXXXXXX";
    assert_non_null(mkdtemp(dir));
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(d >= 0);
    assert_int_equal(sg_notif_join(getpid(), d, "x/../y", 0, out, sizeof out), 0);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/y", dir);
    assert_string_equal(out, want);
    assert_int_equal(sg_notif_join(getpid(), AT_FDCWD, "/abs/./p", 0, out, sizeof out), 0);
    assert_string_equal(out, "/abs/p");
    /* removed: its link says "… (deleted)", which names nothing */
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(sg_notif_join(getpid(), d, "y", 0, out, sizeof out), -ENOENT);
    close(d);
}

static void join_never_overruns(void **st)
{
    (void)st;
    char small[16], big[PATH_MAX + 8];
    int d = open("/usr", O_RDONLY | O_DIRECTORY);
    assert_true(d >= 0);
    assert_int_equal(sg_notif_join(getpid(), d, "share/doc/x", 0, small, sizeof small),
                     -ENAMETOOLONG);
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (size_t i = 100; i < sizeof big - 1; i += 101)
        big[i] = '/';
    char out[PATH_MAX];
    assert_int_equal(sg_notif_join(getpid(), d, big, 0, out, sizeof out), -ENAMETOOLONG);
    close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalize_cases),
        cmocka_unit_test(join_refuses_what_is_not_a_folder),
        cmocka_unit_test(join_resolves_folders_and_sees_deleted_ones),
        cmocka_unit_test(join_never_overruns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
