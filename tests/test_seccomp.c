/* The seccomp filters compiled at build time must be exactly what
 * libseccomp compiles at run time, and must work as one: installed in a
 * child, an allowed call passes and a denied one reaches the listener. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp_filter.h"
#include "util.h"

static void prebuilt_filters_are_what_libseccomp_compiles(void **st)
{
    (void)st;
    int built = sg_seccomp_prebuilt_level();
    unsigned level = seccomp_api_get();
    if (built < 0)
        fail_msg("no filters were compiled at build time (seccomp-gen failed; see the build log)");
    if ((unsigned)built != level)
        fail_msg("the built-in filters are for libseccomp API level %d, this kernel gives %u: "
                 "they would not be used here (rebuild on this kernel)", built, level);
    enum sg_seccomp_profile all[] = {
#define X(id, name, desc) SG_SECCOMP_##id,
        SG_SECCOMP_PROFILES(X)
#undef X
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(all); i++) {
        struct sock_filter *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        assert_int_equal(sg_seccomp_filter(all[i], 0, &a, &na), 0);
        assert_int_equal(sg_seccomp_export(all[i], 0, &b, &nb), 0);
        assert_true(na > 10);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na * sizeof *a);
        free(a);
        free(b);
    }
}

/* One fd over a unix socket: sent when fd >= 0 (returns 0), else received
 * (returns it); -1 on failure. */
static int pass_fd(int sock, int fd)
{
    char c0 = 0;
    struct iovec iov = {&c0, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    if (fd >= 0) {
        cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
    }
    if (recvmsg(sock, &m, 0) != 1 || !(cm = CMSG_FIRSTHDR(&m)) || cm->cmsg_type != SCM_RIGHTS)
        return -1;
    memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    return fd;
}

/* A child that installs f, hands its listener over (*nfd), and then:
 * getppid, which passes untouched; with do_open a read-only open of "/";
 * unshare, which waits for the listener and must get its EPERM. */
static pid_t child_under(const struct sock_filter *f, size_t n, bool do_open, int *nfd)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        close(sv[0]);
        alarm(10);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            _exit(10);
        int fd = sg_seccomp_install(f, n);
        if (fd < 0)
            _exit(11);
        if (pass_fd(sv[1], fd) < 0)
            _exit(12);
        close(fd);
        if (getppid() <= 0)
            _exit(13);
        if (do_open && (fd = openat(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            _exit(14);
        if (do_open)
            close(fd);
        errno = 0;
        if (unshare(CLONE_NEWUTS) == 0 || errno != EPERM)
            _exit(15);
        _exit(0);
    }
    close(sv[1]);
    *nfd = pass_fd(sv[0], -1);
    assert_true(*nfd >= 0);
    close(sv[0]);
    return c;
}

/* The next notification must be unshare(CLONE_NEWUTS): refused, and the
 * child ends well. */
static void refuse_unshare_and_reap(pid_t c, int nfd)
{
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    assert_int_equal(ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
    assert_int_equal(req.data.nr, __NR_unshare);
    assert_int_equal(req.data.args[0], CLONE_NEWUTS);
    struct seccomp_notif_resp resp = {.id = req.id, .error = -EPERM};
    assert_int_equal(ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0);
    int status;
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    close(nfd);
}

/* The built-in default filter: getppid passes untouched, unshare waits for
 * us and gets our EPERM. */
static void prebuilt_filter_sends_denied_calls_to_the_listener(void **st)
{
    (void)st;
    struct sock_filter *f = NULL;
    size_t n = 0;
    int nfd;
    assert_int_equal(sg_seccomp_filter(SG_SECCOMP_DEFAULT, 0, &f, &n), 0);
    pid_t c = child_under(f, n, false, &nfd);
    refuse_unshare_and_reap(c, nfd);
    free(f);
}

/* A read-only open reaches the listener only with SG_SECCOMP_OBSERVE_READS
 * (skillgate record), and goes on when let continue; without it the first
 * call the listener sees is the unshare after it. */
static void a_read_stays_in_the_kernel_unless_recording(void **st)
{
    (void)st;
    for (unsigned opts = 0; opts <= SG_SECCOMP_OBSERVE_READS; opts += SG_SECCOMP_OBSERVE_READS) {
        struct sock_filter *f = NULL;
        size_t n = 0;
        int nfd;
        assert_int_equal(sg_seccomp_filter(SG_SECCOMP_DEFAULT, opts, &f, &n), 0);
        pid_t c = child_under(f, n, true, &nfd);
        if (opts) {
            struct seccomp_notif req;
            memset(&req, 0, sizeof req);
            assert_int_equal(ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
            assert_int_equal(req.data.nr, __NR_openat);
            assert_int_equal(req.data.args[2] & O_ACCMODE, O_RDONLY);
            struct seccomp_notif_resp go = {.id = req.id,
                                            .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
            assert_int_equal(ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &go), 0);
        }
        refuse_unshare_and_reap(c, nfd);
        free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prebuilt_filters_are_what_libseccomp_compiles),
        cmocka_unit_test(prebuilt_filter_sends_denied_calls_to_the_listener),
        cmocka_unit_test(a_read_stays_in_the_kernel_unless_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
