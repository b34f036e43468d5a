#include "stopsig.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static int pipe_fd[2] = {-1, -1};
static atomic_int first, count;

static void on_alarm(int sig)
{
    (void)sig;
    _exit(128 + atomic_load(&first));
}

static void on_stop(int sig)
{
    int saved = errno;
    int expected = 0;
    atomic_compare_exchange_strong(&first, &expected, sig);
    if (atomic_fetch_add(&count, 1) == 1)
        alarm(SG_STOPSIG_GRACE_S); /* the second: the write gets that much more */
    unsigned char b = (unsigned char)sig;
    ssize_t w = write(pipe_fd[1], &b, 1);
    (void)w;
    errno = saved;
}

int sg_stopsig_install(void)
{
    if (pipe_fd[0] >= 0)
        return 0;
    if (pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    struct sigaction sa = {.sa_handler = on_stop, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    struct sigaction al = {.sa_handler = on_alarm};
    sigemptyset(&al.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction was;
        /* ignored when we start (nohup's SIGHUP, a background job's
         * SIGINT): the caller meant the run to outlive them; kept so */
        if (sigs[i] != SIGTERM && sigaction(sigs[i], NULL, &was) == 0 &&
            was.sa_handler == SIG_IGN)
            continue;
        if (sigaction(sigs[i], &sa, NULL) < 0)
            return -errno;
    }
    return sigaction(SIGALRM, &al, NULL) < 0 ? -errno : 0;
}

int sg_stopsig_first(void)
{
    return atomic_load(&first);
}

struct source_ctx {
    void (*on)(void *, int);
    void *ctx;
};
static struct source_ctx sctx;

static size_t stop_fds(void *ctx, struct pollfd *out, size_t max)
{
    (void)ctx;
    if (!max || pipe_fd[0] < 0)
        return 0;
    out[0] = (struct pollfd){.fd = pipe_fd[0], .events = POLLIN};
    return 1;
}

static void stop_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct source_ctx *s = ctx;
    if (!n || !(p[0].revents & POLLIN))
        return;
    unsigned char b[16];
    ssize_t r;
    while ((r = read(pipe_fd[0], b, sizeof b)) > 0)
        for (ssize_t i = 0; i < r; i++)
            s->on(s->ctx, b[i]);
}

struct sg_loop_source sg_stopsig_source(void (*on_signal)(void *ctx, int signo), void *ctx)
{
    sctx = (struct source_ctx){on_signal, ctx};
    return (struct sg_loop_source){"stop signals", stop_fds, stop_dispatch, NULL, &sctx};
}
