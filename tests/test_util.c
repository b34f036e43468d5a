/* Helpers whose mistakes would be silent: sg_close_all_but leaves a forked
 * holder process with exactly the descriptors it was told to keep. */
#include "helpers.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_all_but_keeps_exactly_the_kept),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
