/* Ports a skill serves for the person (publish.h says what and why).
 *
 *   broker (host's network)                 helper (forked at the first
 *                                           connection; joins the sandbox's
 *                                           user + net namespaces)
 *   127.0.0.1:P listen (declared ports)
 *   every SG_PUB_SCAN_MS: sock_diag dump of
 *     the sandbox's listening sockets (pid 1
 *     made the netlink socket there); an
 *     undeclared one is asked
 *   accept a browser's connection
 *   socketpair, fork ─────────────────────► setns(pid 1's pidfd)
 *   ◄──────────────────────────── hello ───┤ close every other fd
 *   "port P" ─────────────────────────────► connect 127.0.0.1:P (else ::1:P)
 *   inner fd ◄──────────────── fd or errno ┤
 *   relay both ways in the run's loop
 *   end of run: close listeners, kill ───► (dies)
 */
#include "publish.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netns.h"
#include "util.h"

#define SCAN_BUF 32768 /* one recv of a sock_diag dump */
#define SCAN_RECVS 64    /* recvs per dump: 64 x 32 KiB, ~9,000 listeners */
#define CONNECT_TIMEOUT_S 2
/* connections taken per poll round: another user can open them as fast as
 * it likes, and while the backlog is full the kernel drops every new one,
 * the person's too (tried again only after 1 s, then 3 s) */
#define ACCEPT_BURST 64
/* out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM), the waiting
 * connection stays in the backlog and the listener readable: it is polled
 * again only after this long, not at once in a loop that spins a core */
#define ACCEPT_PAUSE_MS 100
/* other users' connections said one by one; past these, counted and said
 * with a backoff (another user must not push the skill's own events out
 * of the run's trace, which keeps a bounded number) */
#define FOREIGN_EVENTS 200

enum pstate { PP_WATCHED, PP_ASKING, PP_PUBLISHED, PP_REFUSED };

struct pport {
    uint16_t port;  /* the skill's, inside the sandbox */
    uint16_t host;  /* this machine's it is published at (0: not published) */
    uint16_t want;  /* the one --publish names (0: the kernel picks one) */
    bool declared;  /* permissions.network.listen */
    bool named;     /* --publish (the person's) */
    enum pstate st;
    int lfd;
    int v6fd; /* ::1 at the same port, bound and held: no service there is shadowed */
};

struct pdir {
    uint8_t buf[SG_PUB_BUF];
    size_t len, off;
    bool eof, shut;
    uint64_t bytes;
};

struct pconn {
    uint64_t serial;
    uint16_t port, host; /* the skill's, and this machine's it came in on */
    int hfd, ifd; /* the host's side (a browser), the sandbox's (the skill) */
    char peer[INET6_ADDRSTRLEN + 8];
    struct pdir in, out; /* in: host -> skill; out: skill -> host */
    int64_t started_ms;
    int64_t active_ms; /* when a byte last moved either way */
    long long uid;     /* the client socket's owner on this machine; -1 unknown */
    bool foreign;      /* not the person's (nor root's): at most SG_PUB_MAX_FOREIGN */
    bool quiet;        /* another user's past FOREIGN_EVENTS: counted, not said */
};

struct sg_pub {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    const struct sg_fetch_asker *asker;
    bool may_ask;
    int pidfd;       /* the sandbox's pid 1 (borrowed) */
    pid_t helper;    /* forked at the first connection that needs it */
    bool helper_failed;
    int sp;          /* to the helper; -1 once it is gone */
    int diag;        /* sock_diag netlink socket of the sandbox's network */
    int host_diag;   /* and of this machine's: who owns a client socket */
    uid_t person;    /* the invoking user (sudo's), whose connections come first */
    int nforeign;    /* forwarded connections of other users */
    int64_t foreign_next_ms; /* when the next of theirs may be forwarded */
    bool listening;  /* the last sg_pub_pollfds asked for the listeners */
    int64_t accept_after_ms; /* accept4 found no descriptor: wait till then */
    uint64_t turned; /* connections turned away and not yet said */
    int64_t turned_said_ms;
    unsigned turned_says;   /* counts said so far: each waits twice as long */
    unsigned foreign_said;  /* other users' connections said one by one */
    uint64_t quiet_n;       /* and those counted since, not yet said */
    int64_t quiet_said_ms;
    unsigned quiet_says;
    uint32_t seq;
    bool hello;
    struct pport ports[SG_PUB_MAX_PORTS];
    size_t nports;
    bool ports_full_said;
    struct pconn *conns[SG_PUB_MAX_CONNS];
    uint64_t next_serial;
    uint64_t fifo[SG_PUB_MAX_CONNS]; /* connections waiting for an inner socket, in order */
    size_t fifo_head, fifo_n;
    int64_t next_scan_ms;
    char *scan; /* SCAN_BUF bytes */
    struct {
        int kind; /* 0 listener, 1 helper, 2 host side, 3 skill side */
        int idx;
    } tags[SG_PUB_MAX_PORTS + 1 + 2 * SG_PUB_MAX_CONNS];
    size_t ntags;
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the helper, inside the sandbox's network ---- */

struct hello {
    int32_t err;
};

struct reply {
    int32_t err;
};

static int send_fds(int sp, const void *msg, size_t len, const int *fds, size_t nfds)
{
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        mh.msg_control = u.buf;
        mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    }
    return sendmsg(sp, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Receive one message and up to max fds (the rest closed); bytes read or -errno. */
static ssize_t recv_fds(int sp, void *msg, size_t len, int *fds, size_t max, size_t *nfds)
{
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = msg, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf};
    *nfds = 0;
    ssize_t n = recvmsg(sp, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0)
        return -errno;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int got[4];
        memcpy(got, CMSG_DATA(cm), (k > 4 ? 4 : k) * sizeof(int));
        for (size_t i = 0; i < k && i < 4; i++) {
            if (*nfds < max)
                fds[(*nfds)++] = got[i];
            else
                close(got[i]);
        }
    }
    return n;
}

/* A connected socket to the skill's port P: 127.0.0.1 first, then ::1 (a
 * server bound to ::1 alone). Returns the fd or -errno. */
static int inner_connect(uint16_t port)
{
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
                              .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int err = ECONNREFUSED;
    for (int k = 0; k < 2; k++) {
        int fd = socket(k ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        /* a full backlog must not hold the helper for ever */
        struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_S};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int r = k ? connect(fd, (struct sockaddr *)&a6, sizeof a6)
                  : connect(fd, (struct sockaddr *)&a4, sizeof a4);
        if (r == 0)
            return fd;
        err = errno;
        close(fd);
        if (err != ECONNREFUSED && err != EADDRNOTAVAIL && err != ENETUNREACH &&
            err != EAFNOSUPPORT)
            break;
    }
    return -err;
}

/* The helper's whole life. Only system calls: the broker has threads, and
 * a forked child of a threaded process may not take a lock. */
__attribute__((noreturn)) static void helper_main(int pidfd, int sp, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    struct hello h = {0};
    /* the user namespace first: in it the broker's uid holds the
     * capability that joining its network namespace needs */
    if (setns(pidfd, CLONE_NEWUSER | CLONE_NEWNET) < 0 && setns(pidfd, CLONE_NEWNET) < 0)
        h.err = errno;
    if (send_fds(sp, &h, sizeof h, NULL, 0) < 0 || h.err)
        _exit(0);
    /* nothing of the broker's stays open here but the socket to it */
    if (sp > 3)
        syscall(SYS_close_range, 3u, (unsigned)sp - 1, 0u);
    syscall(SYS_close_range, (unsigned)sp + 1, ~0u, 0u);
    for (;;) {
        uint16_t port;
        ssize_t n = recv(sp, &port, sizeof port, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof port)
            _exit(0); /* the broker is done (or broken) */
        int fd = inner_connect(port);
        struct reply r = {.err = fd < 0 ? -fd : 0};
        int rc = send_fds(sp, &r, sizeof r, &fd, fd >= 0 ? 1 : 0);
        if (fd >= 0)
            close(fd);
        if (rc < 0)
            _exit(0);
    }
}

static int start_helper(struct sg_pub *p)
{
    int pidfd = p->pidfd;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = -errno;
        close(sv[0]);
        close(sv[1]);
        return e;
    }
    if (pid == 0) {
        close(sv[0]);
        helper_main(pidfd, sv[1], parent);
    }
    close(sv[1]);
    p->helper = pid;
    p->sp = sv[0];
    return 0;
}

static void stop_helper(struct sg_pub *p)
{
    if (p->sp >= 0)
        close(p->sp);
    p->sp = -1;
    if (p->helper > 0) {
        kill(p->helper, SIGKILL);
        while (waitpid(p->helper, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    p->helper = 0;
}

/* ---- the sandbox's listening sockets ---- */

int sg_pub_parse_diag(const void *buf, size_t len, uint32_t seq, uint16_t *ports, size_t max,
                      size_t *n)
{
    const struct nlmsghdr *h = buf;
    int done = 0;
    for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
        if (h->nlmsg_seq != seq)
            continue; /* the rest of an older dump */
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
            done = 1;
            break;
        }
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
            continue;
        const struct inet_diag_msg *m = NLMSG_DATA(h);
        uint16_t port = ntohs(m->id.idiag_sport);
        if (m->idiag_state != 10 /* TCP_LISTEN */ || !port)
            continue;
        bool seen = false;
        for (size_t k = 0; k < *n; k++)
            seen |= ports[k] == port;
        if (!seen && *n < max)
            ports[(*n)++] = port;
    }
    return done;
}

int sg_pub_parse_owner(const void *buf, size_t len, uint32_t seq,
                       const struct inet_diag_sockid *want, uint32_t *uid)
{
    const struct nlmsghdr *h = buf;
    for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
        if (h->nlmsg_seq != seq)
            continue;
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
            h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
            return 0; /* NLMSG_ERROR (gone already), or nonsense */
        const struct inet_diag_msg *m = NLMSG_DATA(h);
        /* a socket no process holds any more (closed before the accept:
         * TIME_WAIT, FIN_WAIT2, an orphan) is said to be uid 0 with no
         * inode: its owner cannot be told */
        if (!m->idiag_inode || m->idiag_state == 6 /* TIME_WAIT */ ||
            m->idiag_state == 12 /* NEW_SYN_RECV */)
            return 0;
        /* with no socket of that 4-tuple the kernel answers with a listener
         * on the client's address and port (state LISTEN, no peer): that is
         * someone else's socket, not the client's */
        if (m->idiag_state == 10 /* TCP_LISTEN */ || m->id.idiag_sport != want->idiag_sport ||
            m->id.idiag_dport != want->idiag_dport)
            return 0;
        /* a dual-stack client (an IPv6 socket to ::ffff:127.0.0.1, Java's
         * default) is found too, with its addresses v4-mapped */
        const uint32_t *src = m->id.idiag_src, *dst = m->id.idiag_dst;
        int k = 0;
        if (m->idiag_family == AF_INET6) {
            if (src[0] || src[1] || src[2] != htonl(0xffff) || dst[0] || dst[1] ||
                dst[2] != htonl(0xffff))
                return 0;
            k = 3;
        }
        if (src[k] != want->idiag_src[0] || dst[k] != want->idiag_dst[0])
            return 0;
        *uid = m->idiag_uid;
        return 1;
    }
    return 0;
}

static struct pport *port_find(struct sg_pub *p, uint16_t port)
{
    for (size_t i = 0; i < p->nports; i++)
        if (p->ports[i].port == port)
            return &p->ports[i];
    return NULL;
}

static struct pport *port_add(struct sg_pub *p, uint16_t port, bool declared)
{
    if (p->nports >= SG_PUB_MAX_PORTS) {
        if (!p->ports_full_said)
            sg_bus_emit(p->bus, SG_EV_PORT_NOT_PUBLISHED,
                        json_pack("{s:i, s:s, s:b}", "port", port, "reason", "too many ports",
                                  "prevented", 1),
                        "port %u not published: the sandbox listens on more than %d ports "
                        "(the rest are not published either)",
                        port, SG_PUB_MAX_PORTS);
        p->ports_full_said = true;
        return NULL;
    }
    struct pport *pp = &p->ports[p->nports++];
    *pp = (struct pport){.port = port, .declared = declared, .lfd = -1, .v6fd = -1};
    return pp;
}

static void refuse(struct sg_pub *p, struct pport *pp, const char *reason)
{
    pp->st = PP_REFUSED;
    if (pp->lfd >= 0)
        close(pp->lfd);
    if (pp->v6fd >= 0)
        close(pp->v6fd);
    pp->lfd = pp->v6fd = -1;
    pp->host = 0;
    char how[224] = "";
    if (!pp->declared && !pp->named)
        snprintf(how, sizeof how,
                 "; to publish it, declare it (skillsandbox.yaml permissions.network.listen: "
                 "[%u]), run with --publish %u, or allow Fetch(127.0.0.1:%u)",
                 pp->port, pp->port, pp->port);
    sg_bus_emit(p->bus, SG_EV_PORT_NOT_PUBLISHED,
                json_pack("{s:i, s:i, s:s, s:b, s:b, s:b}", "port", pp->port, "host_port",
                          pp->want, "reason", reason, "declared", pp->declared, "named",
                          pp->want != 0, "prevented", 1),
                "the skill's port %u not published on this machine: %s (inside the sandbox it "
                "still listens, for the skill's own use)%s",
                pp->port, reason, how);
}

/* A listening socket on this machine's 127.0.0.1:port (0: one the kernel
 * picks, never a port skillgate's own settings point at), its port in
 * *got. The fd, or -errno. */
/* This machine's [::1]:port, bound (v6 only, never listened on) and held
 * while the port is published: `localhost` reaches ::1 first in many
 * clients, and a service of the host's that listens on ::1 alone at that
 * port must not have 127.0.0.1's twin answered by the skill. The fd;
 * -EADDRINUSE when another process holds it; -ENOENT when this machine has
 * no ::1 (nothing to shadow). */
static int hold_v6(uint16_t port)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port),
                             .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    /* never SO_REUSEADDR: with it, a later service that sets it too could
     * bind and listen beside a hold that does not listen */
    int r = fd < 0 ? -errno
            : setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0 ||
                      bind(fd, (struct sockaddr *)&a, sizeof a) < 0
                  ? -errno
                  : fd;
    if (r < 0 && fd >= 0)
        close(fd);
    return r == -EAFNOSUPPORT || r == -EADDRNOTAVAIL ? -ENOENT : r;
}

static int listen_host(const struct sg_pub *p, uint16_t port, uint16_t *got, int *v6)
{
    int held[8], nheld = 0, fd = -1, err = 0;
    *v6 = -1;
    for (;;) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int one = 1;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        /* a port the person named may still hold the TIME_WAIT of a past
         * run's connections; a picked one needs no such help */
        if (fd < 0 || (port && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) ||
            bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
            err = -errno;
            break;
        }
        *got = ntohs(a.sin_port);
        int h6 = hold_v6(*got);
        if (h6 == -EADDRINUSE && port) {
            err = -EADDRINUSE; /* another process listens on [::1] there */
            break;
        }
        if (h6 != -EADDRINUSE && (port || sg_own_ports_which(p->plan->own_ports, *got) < 0)) {
            if (listen(fd, SOMAXCONN) < 0)
                err = -errno;
            *v6 = h6 >= 0 ? h6 : -1;
            if (err && h6 >= 0)
                close(h6), *v6 = -1;
            break;
        }
        if (h6 >= 0)
            close(h6);
        /* picked, and one of skillgate's own or another's on ::1: held
         * while another is picked, so that the kernel does not pick it again */
        if (nheld == (int)SG_ARRAY_LEN(held)) {
            err = -EADDRINUSE;
            break;
        }
        held[nheld++] = fd;
    }
    while (nheld)
        close(held[--nheld]);
    if (err && fd >= 0)
        close(fd);
    return err ? err : fd;
}

/* Listen on this machine's 127.0.0.1, and only there: on the port the
 * person named, else on one the kernel picks. */
static void publish(struct sg_pub *p, struct pport *pp, const char *why)
{
    if (pp->port == SG_PROXY_PORT || pp->port == SG_DNS_PORT) {
        refuse(p, pp, "the sandbox's own proxy and DNS stub use it");
        return;
    }
    if (pp->port < 1024) {
        /* a privileged port is a system service's (a stopped one's too):
         * a root broker would let the skill answer in its place */
        refuse(p, pp, "a privileged port (below 1024) is a system service's, never a skill's");
        return;
    }
    int own = pp->want ? sg_own_ports_which(p->plan->own_ports, pp->want) : -1;
    if (own >= 0) {
        /* the service may be down now: the skill would answer in its place */
        char reason[256];
        snprintf(reason, sizeof reason,
                 "this machine's 127.0.0.1:%u, which --publish names, %s: never a skill's; "
                 "it is not published elsewhere (name another port)",
                 pp->want, own == SG_OWN_OTEL
                               ? "is where skillgate's OpenTelemetry export sends its spans "
                                 "(an endpoint setting)"
                           : own == SG_OWN_RESOLVE
                               ? "is where --resolve or config.yaml's resolve: sends a name"
                               : "is named in a permission program's command line (--prompt "
                                 "exec:, config.yaml's prompt_exec or hook.prompt_exec)");
        refuse(p, pp, reason);
        return;
    }
    uint16_t host = 0;
    int v6 = -1;
    int fd = listen_host(p, pp->want, &host, &v6);
    if (fd < 0) {
        char reason[256];
        if (pp->want)
            snprintf(reason, sizeof reason,
                     "this machine's 127.0.0.1:%u, which --publish names, cannot be opened: %s%s; "
                     "it is not published elsewhere (name another port)", pp->want,
                     strerror(-fd),
                     fd == -EADDRINUSE ? " (another process holds it, on 127.0.0.1 or ::1)" : "");
        else
            snprintf(reason, sizeof reason, "no port of this machine's 127.0.0.1 can be opened: %s",
                     strerror(-fd));
        refuse(p, pp, reason);
        return;
    }
    pp->lfd = fd;
    pp->v6fd = v6;
    pp->host = host;
    pp->st = PP_PUBLISHED;
    cleanup_free char *url = sg_xasprintf("http://127.0.0.1:%u/", host);
    sg_bus_emit(p->bus, SG_EV_PORT_PUBLISHED,
                json_pack("{s:i, s:i, s:s, s:s, s:b, s:b, s:s}", "port", pp->port, "host_port",
                          host, "address", "127.0.0.1", "url", url, "declared", pp->declared,
                          "named", pp->want != 0, "why", why),
                "the skill's :%u is at %s (this machine's 127.0.0.1 only, on %s; %s)", pp->port,
                url, pp->want ? "the port --publish names" : "a port the kernel picked", why);
}

struct ask {
    struct sg_pub *p;
    uint16_t port;
};

static void ask_decided(void *ctx, bool allowed, const char *by)
{
    struct ask *a = ctx;
    struct pport *pp = port_find(a->p, a->port);
    if (pp && pp->st == PP_ASKING) {
        /* a person, or a rule or grant naming this very port: an outbound
         * rule (Fetch, WebFetch, Fetch(domain:127.0.0.1)) publishes nothing */
        char exact[40];
        snprintf(exact, sizeof exact, "Fetch(127.0.0.1:%u)", (unsigned)a->port);
        bool named = by && (!strcmp(by, "person") || strstr(by, exact));
        if (allowed && !named)
            refuse(a->p, pp, "undeclared; only a person, or a rule naming "
                             "Fetch(127.0.0.1:PORT) for this port, publishes it");
        else if (allowed)
            publish(a->p, pp, "undeclared; allowed");
        else
            refuse(a->p, pp, "undeclared, and refused");
    }
    free(a);
}

static void ask(struct sg_pub *p, struct pport *pp)
{
    if (!p->asker || !p->may_ask) {
        refuse(p, pp, "undeclared, and the manifest's allowed-tools does not let the "
                      "skill ask for Fetch");
        return;
    }
    pp->st = PP_ASKING;
    struct ask *a = sg_xmalloc(sizeof *a);
    *a = (struct ask){.p = p, .port = pp->port};
    char detail[200];
    snprintf(detail, sizeof detail,
             "inbound: the skill listens on port %u; an approval publishes it on this "
             "machine's 127.0.0.1, at a port the kernel picks (the run's events say which), "
             "for a browser here",
             pp->port);
    p->asker->ask(p->asker->ctx, "127.0.0.1", pp->port, detail, ask_decided, NULL, a);
}

/* Drain what an unfinished dump left, then ask for the listening TCP
 * sockets of one family: only the listening hash is walked (reading
 * /proc/net/tcp walks every socket of the machine: 13-25 ms here, each
 * time, in the broker's loop). */
static size_t dump_listeners(struct sg_pub *p, int family, uint16_t *ports, size_t max)
{
    while (recv(p->diag, p->scan, SCAN_BUF, MSG_DONTWAIT) > 0)
        ;
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req = {
        .nlh = {.nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = ++p->seq},
        .r = {.sdiag_family = (uint8_t)family, .sdiag_protocol = IPPROTO_TCP,
              .idiag_states = 1u << 10 /* TCP_LISTEN */},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    size_t n = 0;
    if (sendto(p->diag, &req, sizeof req, MSG_DONTWAIT, (struct sockaddr *)&kernel,
               sizeof kernel) < 0)
        return 0;
    /* the kernel fills the dump as it is read: bounded in recvs */
    for (int k = 0; k < SCAN_RECVS; k++) {
        ssize_t got = recv(p->diag, p->scan, SCAN_BUF, MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || sg_pub_parse_diag(p->scan, (size_t)got, p->seq, ports, max, &n))
            break;
    }
    return n;
}

static void scan(struct sg_pub *p)
{
    uint16_t seen[2 * SG_PUB_MAX_PORTS + 4];
    size_t nseen = dump_listeners(p, AF_INET, seen, SG_ARRAY_LEN(seen));
    nseen += dump_listeners(p, AF_INET6, seen + nseen, SG_ARRAY_LEN(seen) - nseen);
    for (size_t i = 0; i < nseen; i++) {
        uint16_t port = seen[i];
        if (port == SG_PROXY_PORT || port == SG_DNS_PORT || port_find(p, port))
            continue;
        struct pport *pp = port_add(p, port, false);
        if (pp)
            ask(p, pp);
    }
}

/* ---- connections ---- */

static void conn_close(struct sg_pub *p, int i, const char *why)
{
    struct pconn *c = p->conns[i];
    if (!c)
        return;
    if (c->quiet) {
        p->quiet_n++; /* forwarded or not: counted once */
        if (c->ifd >= 0)
            close(c->ifd);
    } else if (c->ifd >= 0) {
        sg_bus_emit(p->bus, SG_EV_NETWORK_CONNECTION_CLOSED,
                    json_pack("{s:s, s:s, s:i, s:i, s:s, s:I, s:I, s:I, s:s}", "direction",
                              "inbound", "name", c->peer, "port", c->port, "host_port", c->host,
                              "upstream", "",
                              "bytes_up", (json_int_t)c->out.bytes, "bytes_down",
                              (json_int_t)c->in.bytes, "duration_ms",
                              (json_int_t)(now_ms() - c->started_ms), "reason", why),
                    "inbound %s to the skill's :%u closed%s%s: %llu bytes in, %llu out", c->peer,
                    c->port, *why ? " " : "", why, (unsigned long long)c->in.bytes,
                    (unsigned long long)c->out.bytes);
        close(c->ifd);
    }
    if (c->hfd >= 0)
        close(c->hfd);
    p->nforeign -= c->foreign;
    free(c);
    p->conns[i] = NULL;
}

/* How long a forwarded connection may move no byte before it gives its
 * place at the cap: SG_PUB_IDLE_MS when its client never sent a byte (a
 * preconnect, or a connection held only to take a place), else
 * SG_PUB_IDLE_SENT_MS (a request waiting for a slow answer). */
static int64_t idle_after(const struct pconn *c)
{
    return c->in.bytes == 0 && !c->in.eof ? SG_PUB_IDLE_MS : SG_PUB_IDLE_SENT_MS;
}

/* At the cap, the forwarded connection to close for a waiting one: the
 * longest past its idle_after; -1 when none is. */
static int idlest(const struct sg_pub *p, int64_t now)
{
    int best = -1;
    int64_t best_over = 0;
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++) {
        const struct pconn *c = p->conns[i];
        if (!c)
            return -1; /* not at the cap */
        int64_t over = now - c->active_ms - idle_after(c);
        if (c->ifd >= 0 && over >= 0 && (best < 0 || over > best_over)) {
            best = i;
            best_over = over;
        }
    }
    return best;
}

/* The owner of the client socket of a connection the broker accepted on
 * 127.0.0.1:port from peer: one exact sock_diag lookup on this machine
 * (the kernel answers within the send). -1 when it cannot say. */
static long long owner_of(struct sg_pub *p, const struct sockaddr_in *peer, uint16_t port)
{
    if (p->host_diag < 0)
        return -1;
    while (recv(p->host_diag, p->scan, SCAN_BUF, MSG_DONTWAIT) > 0)
        ;
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req = {
        .nlh = {.nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = ++p->seq},
        .r = {.sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
              .id = {.idiag_sport = peer->sin_port, .idiag_dport = htons(port),
                     .idiag_src = {peer->sin_addr.s_addr},
                     .idiag_dst = {htonl(INADDR_LOOPBACK)},
                     .idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}}},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(p->host_diag, &req, sizeof req, MSG_DONTWAIT, (struct sockaddr *)&kernel,
               sizeof kernel) < 0)
        return -1;
    ssize_t got;
    do
        got = recv(p->host_diag, p->scan, SCAN_BUF, MSG_DONTWAIT);
    while (got < 0 && errno == EINTR);
    uint32_t uid;
    return got > 0 && sg_pub_parse_owner(p->scan, (size_t)got, p->seq, &req.r.id, &uid)
               ? (long long)uid
               : -1;
}

/* Of the forwarded connections of other users, the one that moved no byte
 * for longest (past its idle limit, when idle is true); -1 when none is. */
static int idlest_foreign(const struct sg_pub *p, int64_t now, bool idle)
{
    int best = -1;
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++) {
        const struct pconn *c = p->conns[i];
        if (!c || !c->foreign || c->ifd < 0 || (idle && now - c->active_ms < idle_after(c)))
            continue;
        if (best < 0 || c->active_ms < p->conns[best]->active_ms)
            best = i;
    }
    return best;
}

/* Whether a waiting connection could get a place: a free one, or at the
 * cap an idle one, or another user's (to the person's). */
static bool has_room(const struct sg_pub *p, int64_t now)
{
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++)
        if (!p->conns[i])
            return true;
    return idlest_foreign(p, 0, false) >= 0 || idlest(p, now) >= 0;
}

/* How long after the n-th count of other users' connections the next may
 * be said: 1 s, then twice as long each time, at most a minute, so that
 * another user cannot fill the run's bounded trace even in a long run. */
static int64_t backoff_ms(unsigned n)
{
    return n >= 6 ? 60000 : 1000LL << n;
}

/* A connection the broker will not forward: reset at once (the client
 * sees "refused"), and said: at most one event per backoff_ms, with how many
 * were turned away since the last (another user could otherwise fill the
 * run's trace with them). */
static void turn_away(struct sg_pub *p, int fd, const char *peer, const struct pport *pp,
                      long long uid, const char *why)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
    p->turned++;
    int64_t now = now_ms();
    if (p->turned_said_ms && now - p->turned_said_ms < backoff_ms(p->turned_says))
        return;
    p->turned_said_ms = now;
    p->turned_says++;
    sg_bus_emit(p->bus, SG_EV_INBOUND,
                json_pack("{s:s, s:i, s:i, s:b, s:s, s:I, s:I}", "peer", peer, "port", pp->port,
                          "host_port", pp->host, "forwarded", 0, "error", why, "uid",
                          (json_int_t)uid, "turned_away", (json_int_t)p->turned),
                "inbound %s to the skill's :%u (127.0.0.1:%u): not forwarded (%s); %llu turned "
                "away since the last such event", peer, pp->port, pp->host, why,
                (unsigned long long)p->turned);
    p->turned = 0;
}

/* The slot a new connection gets, closing one for it at the cap: a
 * connection of the person (or root) takes the place of another user's at
 * once, else of one of its own past its idle limit; another user's, only
 * of another user's past its limit. -1: none. */
static int place_for(struct sg_pub *p, bool foreign)
{
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++)
        if (!p->conns[i])
            return i;
    int64_t now = now_ms();
    int v = idlest_foreign(p, now, foreign);
    if (v >= 0) {
        conn_close(p, v, foreign ? "idle: a waiting connection took its place"
                                 : "another user's: the person's connection took its place");
        return v;
    }
    if (foreign || (v = idlest(p, now)) < 0)
        return -1;
    conn_close(p, v, "idle: a waiting connection took its place");
    return v;
}

static void helper_broken(struct sg_pub *p, const char *why);

/* Whether another user's connection may be forwarded now, and if so take
 * its start: SG_PUB_MAX_FOREIGN at once, and at most SG_PUB_FOREIGN_PER_S
 * started a second (a burst of that many). Their places alone do not bound
 * how fast they come: a client that resets each connection at once frees
 * its place as fast as it opens one, and every one of them reaches the
 * skill's server (and the helper's connect into the sandbox), whose own
 * backlog full would hold the person's connections behind them. */
static bool foreign_may_start(struct sg_pub *p)
{
    const int64_t step = 1000 / SG_PUB_FOREIGN_PER_S;
    int64_t now = now_ms();
    if (p->nforeign >= SG_PUB_MAX_FOREIGN || p->foreign_next_ms > now + 1000 - step)
        return false;
    p->foreign_next_ms = (p->foreign_next_ms > now ? p->foreign_next_ms : now) + step;
    return true;
}

/* Take one waiting connection: false when none was waiting. */
static bool accept_one(struct sg_pub *p, struct pport *pp)
{
    struct sockaddr_in peer;
    socklen_t pl = sizeof peer;
    int fd = accept4(pp->lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            p->accept_after_ms = now_ms() + ACCEPT_PAUSE_MS;
        return false;
    }
    uint16_t port = pp->port;
    char who[INET_ADDRSTRLEN + 8], a[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &peer.sin_addr, a, sizeof a);
    snprintf(who, sizeof who, "%s:%u", a, ntohs(peer.sin_port));
    /* any user of this machine reaches 127.0.0.1: other users' connections
     * (or ones whose owner cannot be told) get a share, never the person's */
    long long uid = owner_of(p, &peer, pp->host);
    bool foreign = uid < 0 || ((uid_t)uid != p->person && uid != 0);
    if (foreign && !foreign_may_start(p)) {
        turn_away(p, fd, who, pp, uid, "other users hold their share of connections");
        return true;
    }
    if (p->sp < 0 && !p->helper_failed) {
        int r = start_helper(p);
        if (r < 0) {
            close(fd);
            helper_broken(p, strerror(-r));
            return true;
        }
    }
    if (p->sp < 0 || p->fifo_n >= SG_PUB_MAX_CONNS) {
        close(fd);
        return true;
    }
    int slot = place_for(p, foreign); /* may close one for it: only now */
    if (slot < 0) {
        turn_away(p, fd, who, pp, uid, "every connection is busy");
        return true;
    }
    if (send(p->sp, &port, sizeof port, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof port) {
        close(fd);
        return true;
    }
    struct pconn *c = sg_xcalloc(1, sizeof *c);
    c->serial = ++p->next_serial;
    c->port = port;
    c->host = pp->host;
    c->hfd = fd;
    c->ifd = -1;
    c->started_ms = c->active_ms = now_ms();
    c->uid = uid;
    c->foreign = foreign;
    c->quiet = foreign && p->foreign_said >= FOREIGN_EVENTS;
    p->foreign_said += foreign && !c->quiet;
    p->nforeign += foreign;
    snprintf(c->peer, sizeof c->peer, "%s", who);
    p->conns[slot] = c;
    p->fifo[(p->fifo_head + p->fifo_n++) % SG_PUB_MAX_CONNS] = c->serial;
    return true;
}

/* Take the waiting connections, ACCEPT_BURST at most, while one could get
 * a place (else they wait in the backlog). */
static void accept_burst(struct sg_pub *p, struct pport *pp)
{
    for (int k = 0; k < ACCEPT_BURST && pp->lfd >= 0 && has_room(p, now_ms()); k++)
        if (!accept_one(p, pp))
            break;
}

/* No way into the sandbox's network: every published port says why, and
 * is closed (no second helper is forked). */
static void helper_broken(struct sg_pub *p, const char *why)
{
    stop_helper(p);
    p->helper_failed = true;
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++)
        if (p->conns[i] && p->conns[i]->ifd < 0) {
            struct linger l = {1, 0}; /* never to be forwarded: "refused" at once */
            setsockopt(p->conns[i]->hfd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            conn_close(p, i, "");
        }
    p->fifo_n = 0;
    for (size_t i = 0; i < p->nports; i++)
        if (p->ports[i].st == PP_PUBLISHED) {
            char reason[200];
            snprintf(reason, sizeof reason, "the sandbox's network cannot be joined (%s)", why);
            refuse(p, &p->ports[i], reason);
        }
}

static void on_hello(struct sg_pub *p)
{
    struct hello h;
    int fds[1];
    size_t nf;
    ssize_t n = recv_fds(p->sp, &h, sizeof h, fds, 1, &nf);
    if (n == -EAGAIN)
        return;
    p->hello = true;
    if (n != (ssize_t)sizeof h || h.err) {
        for (size_t i = 0; i < nf; i++)
            close(fds[i]);
        helper_broken(p, n != (ssize_t)sizeof h ? "the helper did not start"
                                                : strerror((int)h.err));
        return;
    }
    for (size_t i = 0; i < nf; i++)
        close(fds[i]);
}

static void on_reply(struct sg_pub *p)
{
    struct reply r;
    int fd = -1;
    size_t nf;
    ssize_t n = recv_fds(p->sp, &r, sizeof r, &fd, 1, &nf);
    if (n == -EAGAIN || n == -EINTR)
        return;
    if (n != (ssize_t)sizeof r || !p->fifo_n) {
        if (nf)
            close(fd);
        helper_broken(p, "the helper is gone"); /* or talking nonsense */
        return;
    }
    uint64_t serial = p->fifo[p->fifo_head];
    p->fifo_head = (p->fifo_head + 1) % SG_PUB_MAX_CONNS;
    p->fifo_n--;
    int i;
    for (i = 0; i < SG_PUB_MAX_CONNS; i++)
        if (p->conns[i] && p->conns[i]->serial == serial)
            break;
    struct pconn *c = i < SG_PUB_MAX_CONNS ? p->conns[i] : NULL;
    if (!c) {
        if (nf)
            close(fd);
        return;
    }
    bool ok = !r.err && nf;
    const char *err = strerror(r.err ? (int)r.err : EPROTO);
    if (!c->quiet)
        sg_bus_emit(p->bus, SG_EV_INBOUND,
                    json_pack("{s:s, s:i, s:i, s:b, s:s, s:I}", "peer", c->peer, "port", c->port,
                              "host_port", c->host, "forwarded", ok, "error", ok ? "" : err,
                              "uid", (json_int_t)c->uid),
                    ok ? "inbound %s to 127.0.0.1:%u: forwarded to the skill's :%u"
                       : "inbound %s to 127.0.0.1:%u: nothing answers on the skill's :%u in the "
                         "sandbox (%s)",
                    c->peer, c->host, c->port, err);
    if (!ok) {
        if (nf)
            close(fd); /* an error and a descriptor both: nonsense, not kept */
        struct linger l = {1, 0}; /* a reset: the browser says "refused" at once */
        setsockopt(c->hfd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        conn_close(p, i, "");
        return;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    c->ifd = fd;
    c->active_ms = now_ms();
}

/* Move what one side has to the other; false when the connection broke. */
static bool pump(struct pdir *d, int from, int to)
{
    for (int rounds = 0; rounds < 8; rounds++) {
        if (d->off == d->len && !d->eof) {
            ssize_t n = recv(from, d->buf, sizeof d->buf, MSG_DONTWAIT);
            if (n == 0)
                d->eof = true;
            else if (n < 0)
                return errno == EAGAIN || errno == EINTR;
            else
                d->len = (size_t)n, d->off = 0;
        }
        if (d->off < d->len) {
            ssize_t n = send(to, d->buf + d->off, d->len - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n < 0)
                return errno == EAGAIN || errno == EINTR;
            d->off += (size_t)n;
            d->bytes += (uint64_t)n;
            if (d->off < d->len)
                return true;
            d->off = d->len = 0;
        }
        if (d->eof) {
            if (!d->shut)
                shutdown(to, SHUT_WR);
            d->shut = true;
            return true;
        }
    }
    return true;
}

static void relay(struct sg_pub *p, int i)
{
    struct pconn *c = p->conns[i];
    if (!c || c->ifd < 0)
        return;
    uint64_t moved = c->in.bytes + c->out.bytes;
    bool eof = c->in.eof || c->out.eof;
    if (!pump(&c->in, c->hfd, c->ifd) || !pump(&c->out, c->ifd, c->hfd) ||
        (c->in.shut && c->out.shut)) {
        conn_close(p, i, "");
        return;
    }
    if (c->in.bytes + c->out.bytes != moved || (c->in.eof || c->out.eof) != eof)
        c->active_ms = now_ms();
}

/* ---- the source ---- */

struct sg_pub *sg_pub_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                          const struct sg_fetch_asker *asker, bool may_ask, int pidfd,
                          int diag)
{
    if (pidfd < 0) {
        if (diag >= 0)
            close(diag);
        return NULL;
    }
    struct sg_pub *p = sg_xcalloc(1, sizeof *p);
    *p = (struct sg_pub){.plan = plan, .bus = bus, .asker = asker, .may_ask = may_ask, .sp = -1,
                         .diag = diag, .next_scan_ms = diag >= 0 ? now_ms() : -1};
    p->scan = sg_xmalloc(SCAN_BUF);
    p->pidfd = pidfd;
    p->host_diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    p->person = sg_invoking_uid();
    /* the helper is forked when a connection first needs it */
    for (size_t i = 0; i < plan->nlisten; i++) {
        struct pport *pp = port_add(p, plan->listen[i], true);
        for (size_t k = 0; pp && k < plan->npublish; k++)
            if (plan->publish[k].port == pp->port)
                pp->named = true, pp->want = plan->publish[k].host;
        if (pp)
            publish(p, pp, pp->named ? "declared in permissions.network.listen; --publish"
                                     : "declared in permissions.network.listen");
    }
    for (size_t k = 0; k < plan->npublish; k++) { /* the person's, declared or not */
        if (port_find(p, plan->publish[k].port))
            continue;
        struct pport *pp = port_add(p, plan->publish[k].port, false);
        if (!pp)
            continue;
        pp->named = true;
        pp->want = plan->publish[k].host;
        publish(p, pp, "--publish");
    }
    return p;
}

size_t sg_pub_pollfds(struct sg_pub *p, struct pollfd *out, size_t max)
{
    size_t n = 0;
#define PUT(fd_, ev_, kind_, idx_)                                         \
    do {                                                                   \
        if (n < max && n < SG_ARRAY_LEN(p->tags)) {                        \
            out[n] = (struct pollfd){.fd = (fd_), .events = (short)(ev_)}; \
            p->tags[n].kind = (kind_);                                     \
            p->tags[n].idx = (idx_);                                       \
            n++;                                                           \
        }                                                                  \
    } while (0)
    if (p->sp >= 0)
        PUT(p->sp, POLLIN, 1, 0);
    /* at the cap, a waiting connection is accepted when one could give way:
     * an idle one, or another user's (to the person's) */
    bool room = now_ms() >= p->accept_after_ms && has_room(p, now_ms());
    p->listening = room;
    for (size_t i = 0; i < p->nports && room; i++)
        if (p->ports[i].lfd >= 0)
            PUT(p->ports[i].lfd, POLLIN, 0, (int)i);
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++) {
        struct pconn *c = p->conns[i];
        if (!c || c->ifd < 0)
            continue;
        short hev = (short)((!c->in.eof && c->in.len == 0 ? POLLIN : 0) |
                            (c->out.off < c->out.len ? POLLOUT : 0));
        short iev = (short)((!c->out.eof && c->out.len == 0 ? POLLIN : 0) |
                            (c->in.off < c->in.len ? POLLOUT : 0));
        if (hev)
            PUT(c->hfd, hev, 2, i);
        if (iev)
            PUT(c->ifd, iev, 3, i);
    }
#undef PUT
    p->ntags = n;
    return n;
}

/* Say how many of other users' connections were counted, not said. */
static void say_quiet(struct sg_pub *p)
{
    if (!p->quiet_n)
        return;
    sg_bus_emit(p->bus, SG_EV_INBOUND,
                json_pack("{s:s, s:i, s:b, s:s, s:I, s:I}", "peer", "", "port", 0, "forwarded", 0,
                          "error", "", "uid", (json_int_t)-1, "not_listed", (json_int_t)p->quiet_n),
                "%llu more inbound connections of other users came and went (not listed one by "
                "one past %d)", (unsigned long long)p->quiet_n, FOREIGN_EVENTS);
    p->quiet_n = 0;
    p->quiet_said_ms = now_ms();
    p->quiet_says++;
}

void sg_pub_dispatch(struct sg_pub *p, const struct pollfd *pfds, size_t n)
{
    /* connections first: bytes that arrived in this round count before a
     * waiting connection looks for an idle one to take the place of */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n && k < p->ntags; k++) {
            int kind = p->tags[k].kind, idx = p->tags[k].idx;
            if (!pfds[k].revents || (pass == 0) != (kind >= 2))
                continue;
            if (kind == 0 && (size_t)idx < p->nports && p->ports[idx].lfd >= 0)
                accept_burst(p, &p->ports[idx]);
            else if (kind == 1 && p->sp >= 0 && p->hello)
                on_reply(p);
            else if (kind == 1 && p->sp >= 0)
                on_hello(p);
            else if (kind >= 2)
                relay(p, idx);
        }
    if (p->quiet_n && now_ms() - p->quiet_said_ms >= backoff_ms(p->quiet_says))
        say_quiet(p);
    if (p->next_scan_ms >= 0 && now_ms() >= p->next_scan_ms) {
        scan(p);
        p->next_scan_ms = now_ms() + SG_PUB_SCAN_MS;
    }
}

int sg_pub_timeout(const struct sg_pub *p)
{
    int64_t now = now_ms(), at = p->next_scan_ms;
    /* the listeners left out by the last sg_pub_pollfds (its clock read a
     * moment ago: the pause not over yet, or no room) that could be polled
     * now: turn at once, else nothing may ever put them back */
    if (!p->listening && now >= p->accept_after_ms && has_room(p, now))
        return 0;
    /* at the cap with none idle yet: wake when the first one is, so that a
     * connection waiting in the backlog gets its place; out of descriptors,
     * when the listeners are polled again */
    int64_t first = now < p->accept_after_ms ? p->accept_after_ms : INT64_MAX;
    for (int i = 0; i < SG_PUB_MAX_CONNS && now >= p->accept_after_ms; i++) {
        const struct pconn *c = p->conns[i];
        if (!c || (p->listening && c->ifd >= 0 && c->active_ms + idle_after(c) <= now)) {
            first = INT64_MAX; /* room, or one is idle: the listener is polled */
            break;
        }
        if (c->ifd >= 0 && c->active_ms + idle_after(c) < first)
            first = c->active_ms + idle_after(c);
    }
    if (first != INT64_MAX && (at < 0 || first < at))
        at = first;
    if (at < 0)
        return -1;
    return at <= now ? 0 : (int)(at - now > 60000 ? 60000 : at - now);
}

void sg_pub_free(struct sg_pub *p)
{
    if (!p)
        return;
    for (int i = 0; i < SG_PUB_MAX_CONNS; i++)
        conn_close(p, i, "the run ended");
    say_quiet(p);
    if (p->turned)
        sg_bus_emit(p->bus, SG_EV_INBOUND,
                    json_pack("{s:s, s:i, s:b, s:s, s:I, s:I}", "peer", "", "port", 0,
                              "forwarded", 0, "error", "turned away", "uid", (json_int_t)-1,
                              "turned_away", (json_int_t)p->turned),
                    "%llu more inbound connections turned away before the run ended",
                    (unsigned long long)p->turned);
    for (size_t i = 0; i < p->nports; i++) {
        if (p->ports[i].lfd >= 0)
            close(p->ports[i].lfd);
        if (p->ports[i].v6fd >= 0)
            close(p->ports[i].v6fd);
    }
    if (p->diag >= 0)
        close(p->diag);
    if (p->host_diag >= 0)
        close(p->host_diag);
    stop_helper(p);
    free(p->scan);
    free(p);
}
