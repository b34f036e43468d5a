/* The floor of any proxy on this machine, for bench/bench.py: accept on
 * 127.0.0.1:LISTEN, connect to 127.0.0.1:UPSTREAM, splice both ways; no
 * checks, no records, one thread, edge-triggered epoll. Not part of
 * skillgate: a benchmark's reference, built by the bench with cc.
 *
 *   relay LISTEN UPSTREAM   (prints "ready" once it listens) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define PIPE_SZ (1 << 20)
#define MAXFD 65536

struct half { /* src -> pipe -> dst */
    int src, dst, p[2];
    size_t inpipe;
    int eof, shut;
};

static struct half *by_fd[MAXFD][2]; /* [fd][0]: it reads for, [1]: it writes for */
static int ep;

static void watch(int fd)
{
    struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

static void drop(struct half *a, struct half *b)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, a->src, NULL);
    epoll_ctl(ep, EPOLL_CTL_DEL, b->src, NULL);
    by_fd[a->src][0] = by_fd[a->src][1] = by_fd[b->src][0] = by_fd[b->src][1] = NULL;
    close(a->src), close(b->src);
    close(a->p[0]), close(a->p[1]), close(b->p[0]), close(b->p[1]);
    free(a), free(b);
}

/* Move what can move; -1 when the pair is done. */
static int pump(struct half *h)
{
    for (;;) {
        int moved = 0;
        if (!h->eof && h->inpipe < PIPE_SZ) {
            ssize_t n = splice(h->src, NULL, h->p[1], NULL, PIPE_SZ - h->inpipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0)
                h->inpipe += (size_t)n, moved = 1;
            else if (n == 0)
                h->eof = 1;
            else if (errno != EAGAIN)
                return -1;
        }
        if (h->inpipe) {
            ssize_t n = splice(h->p[0], NULL, h->dst, NULL, h->inpipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0)
                h->inpipe -= (size_t)n, moved = 1;
            else if (n < 0 && errno != EAGAIN)
                return -1;
        }
        if (h->eof && !h->inpipe && !h->shut)
            h->shut = 1, shutdown(h->dst, SHUT_WR);
        if (!moved)
            return 0;
    }
}

static struct half *half_new(int src, int dst)
{
    struct half *h = calloc(1, sizeof *h);
    h->src = src, h->dst = dst;
    if (pipe2(h->p, O_NONBLOCK | O_CLOEXEC) < 0)
        exit(1);
    fcntl(h->p[1], F_SETPIPE_SZ, PIPE_SZ);
    return h;
}

/* A port number, whole and in range; 0 when it is not one. */
static uint16_t port_of(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || end == s || *end || v < 1 || v > 65535 ? 0 : (uint16_t)v;
}

int main(int argc, char **argv)
{
    uint16_t lport = argc == 3 ? port_of(argv[1]) : 0, uport = argc == 3 ? port_of(argv[2]) : 0;
    if (!lport || !uport) {
        fprintf(stderr, "usage: relay LISTEN_PORT UPSTREAM_PORT\n");
        return 2;
    }
    int one = 1, l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(lport),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, SOMAXCONN) < 0)
        return 1;
    struct sockaddr_in up = a;
    up.sin_port = htons(uport);
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event le = {.events = EPOLLIN, .data.fd = l};
    epoll_ctl(ep, EPOLL_CTL_ADD, l, &le);
    printf("ready\n");
    fflush(stdout);
    struct epoll_event ev[64];
    for (;;) {
        int n = epoll_wait(ep, ev, 64, -1);
        for (int i = 0; i < n; i++) {
            int fd = ev[i].data.fd;
            if (fd == l) {
                int c;
                while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    int u = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                    if (u < 0 || c >= MAXFD || u >= MAXFD ||
                        (connect(u, (struct sockaddr *)&up, sizeof up) < 0 &&
                         errno != EINPROGRESS)) {
                        close(c);
                        if (u >= 0)
                            close(u);
                        continue;
                    }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct half *upw = half_new(c, u), *down = half_new(u, c);
                    by_fd[c][0] = upw, by_fd[c][1] = down;
                    by_fd[u][0] = down, by_fd[u][1] = upw;
                    watch(c), watch(u);
                }
                continue;
            }
            struct half *h = by_fd[fd][0], *o = by_fd[fd][1];
            if (!h || !o)
                continue;
            if (pump(h) < 0 || pump(o) < 0 || (h->eof && o->eof && !h->inpipe && !o->inpipe))
                drop(h, o);
        }
    }
}
