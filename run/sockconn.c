#include "sockconn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "hostsock.h"
#include "notifpath.h"
#include "perm.h"
#include "util.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct pending {
    uint64_t id;
    int sock; /* the broker's descriptor of the skill's socket */
};

struct sg_sockconn {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    struct sg_perm *perm; /* Connect requests; NULL: a host socket is refused */
    int fd;
    struct pending pend[SG_SOCKCONN_MAX_PENDING];
    size_t npend;
    dev_t own[SG_OWN_FS_MAX]; /* the sandbox's own tmpfs instances (sandbox.h) */
    size_t nown;
    /* the pidfd of the thread that connected last: a thread that connects
     * again (a client's loop) costs no pidfd_open and close. It names that
     * very thread (a struct pid, not a number): once the thread is gone,
     * pidfd_getfd says ESRCH whoever has its tid now, and a fresh one is
     * opened. The ptrace access check is pidfd_getfd's own, made per call. */
    int pidfd;
    pid_t pidfd_tid;
};

struct sg_sockconn *sg_sockconn_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                                    struct sg_perm *perm, int notify_fd, const dev_t *own,
                                    size_t nown)
{
    struct sg_sockconn *s = sg_xcalloc(1, sizeof *s);
    s->plan = plan;
    s->perm = perm;
    s->nown = nown < SG_OWN_FS_MAX ? nown : SG_OWN_FS_MAX;
    memcpy(s->own, own, s->nown * sizeof *own);
    s->bus = bus;
    s->fd = notify_fd;
    s->pidfd = -1;
    return s;
}

/* An answer to a call that is gone (its thread killed) is refused by the
 * kernel (ENOENT), harmlessly: no need to ask first. */
static void respond(int fd, uint64_t id, int err)
{
    struct seccomp_notif_resp r = {.id = id, .error = err < 0 ? err : 0};
    seccomp_notify_respond(fd, &r);
}

void sg_sockconn_free(struct sg_sockconn *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->npend; i++) {
        respond(s->fd, s->pend[i].id, -EINTR);
        close(s->pend[i].sock);
    }
    if (s->pidfd >= 0)
        close(s->pidfd);
    free(s);
}

bool sg_sockconn_own_fs(const struct sg_sockconn *s, dev_t dev)
{
    for (size_t i = 0; i < s->nown; i++)
        if (s->own[i] == dev)
            return true;
    return false;
}

/* Refused: a unix socket that is not the sandbox's own, and that neither
 * the manifest nor a decision allows. */
static void refuse_path(struct sg_sockconn *s, uint64_t id, pid_t pid, const char *path,
                        const char *where)
{
    respond(s->fd, id, -EACCES);
    sg_bus_emit(s->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "syscall", "connect", "pid",
                          (int)pid, "path", path, "family", "unix", "reason", where,
                          "prevented", 1),
                "connect to the unix socket %s refused: %s", path, where);
}

/* A netlink connect to another socket or to a multicast group: the kernel
 * asks the caller for CAP_NET_ADMIN over the socket's network namespace
 * (NETLINK_USERSOCK excepted), and the broker holds it there (root, or the
 * owner of the sandbox's user namespace) where the skill, which has no
 * capabilities, does not. Refused as the skill's own call would be. */
static bool netlink_needs_privilege(int sock, const struct sockaddr_storage *ss, socklen_t len)
{
    const struct sockaddr_nl *nl = (const struct sockaddr_nl *)ss;
    int proto = -1;
    socklen_t pl = sizeof proto;
    if (len < sizeof *nl || nl->nl_family != AF_NETLINK || (!nl->nl_pid && !nl->nl_groups))
        return false;
    return getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &proto, &pl) < 0 ||
           proto != NETLINK_USERSOCK;
}

static void refuse_netlink(struct sg_sockconn *s, const struct seccomp_notif *req,
                           const struct sockaddr_storage *ss)
{
    const struct sockaddr_nl *nl = (const struct sockaddr_nl *)ss;
    respond(s->fd, req->id, -EPERM);
    sg_bus_emit(s->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:i, s:s, s:I, s:I, s:s, s:b}", "syscall", "connect", "pid",
                          (int)req->pid, "family", "netlink", "nl_pid", (json_int_t)nl->nl_pid,
                          "nl_groups", (json_int_t)nl->nl_groups, "reason",
                          "sending to another netlink socket or group needs CAP_NET_ADMIN",
                          "prevented", 1),
                "netlink connect to port %u, groups 0x%x refused: it needs CAP_NET_ADMIN, "
                "which the skill does not have",
                (unsigned)nl->nl_pid, (unsigned)nl->nl_groups);
}

/* O_NONBLOCK is a flag of the socket's open file, which the skill shares:
 * another of its threads can clear it between the broker's F_SETFL and its
 * connect, and a connect to a full listener (or a TCP handshake that gets
 * no answer) would then hold the broker's loop, and with it every check
 * and cap. So the connect is also bounded by a timer of this thread's own,
 * whose signal interrupts it (EINTR, no restart): at most CONNECT_MS. */
#define CONNECT_MS 100
#define CONNECT_SIGNAL (SIGRTMIN + 3)

static void on_connect_timer(int sig)
{
    (void)sig;
}

/* This thread's connect timer: true when there is one (a timer's id may
 * be 0). */
static bool connect_timer(timer_t *out)
{
    static timer_t t;
    static int made; /* 1 made, -1 failed */
    if (!made) {
        struct sigaction sa = {.sa_handler = on_connect_timer}; /* no SA_RESTART */
        sigemptyset(&sa.sa_mask);
        struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID,
                              .sigev_signo = CONNECT_SIGNAL};
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        made = sigaction(CONNECT_SIGNAL, &sa, NULL) == 0 &&
                       timer_create(CLOCK_MONOTONIC, &ev, &t) == 0
                   ? 1
                   : -1;
    }
    *out = t;
    return made == 1;
}

static int bounded_connect(int sock, const struct sockaddr *addr, socklen_t len)
{
    timer_t t;
    bool timed = connect_timer(&t);
    struct itimerspec on = {.it_value = {0, CONNECT_MS * 1000000L}}, off = {0};
    if (timed)
        timer_settime(t, 0, &on, NULL);
    int r = connect(sock, addr, len) < 0 ? -errno : 0;
    if (timed)
        timer_settime(t, 0, &off, NULL);
    return r;
}

/* Connect sock to addr now, without blocking the broker. 0, or -errno;
 * -EINPROGRESS with *wait when a blocking caller has to wait for it (a
 * TCP connect interrupted by the timer goes on in the kernel: waited for
 * the same way). */
static int connect_now(int sock, const struct sockaddr *addr, socklen_t len, bool *wait)
{
    int fl = fcntl(sock, F_GETFL);
    if (fl < 0)
        return -errno;
    if (!(fl & O_NONBLOCK) && fcntl(sock, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    int r = bounded_connect(sock, addr, len);
    if (r == -EINTR && addr->sa_family != AF_UNIX)
        r = -EINPROGRESS;
    if (!(fl & O_NONBLOCK))
        fcntl(sock, F_SETFL, fl);
    *wait = r == -EINPROGRESS && !(fl & O_NONBLOCK);
    return r;
}

/* A connect in progress that has settled already: true, with its error
 * (0: connected). On loopback, where the handshake completes as the
 * connect returns, the call is answered at once rather than a poll round
 * later. */
static bool settled(int sock, int *err)
{
    struct pollfd p = {.fd = sock, .events = POLLOUT};
    socklen_t el = sizeof *err;
    *err = 0;
    if (poll(&p, 1, 0) != 1)
        return false;
    if (getsockopt(sock, SOL_SOCKET, SO_ERROR, err, &el) < 0)
        *err = errno;
    return true;
}

/* Where pathname socket path lies: 0 with *opath (opened) and *st, *host
 * telling a host socket from the sandbox's own; else the errno the kernel
 * would give (ENOENT, ELOOP, ECONNREFUSED for a file that is no socket). */
static int check_path(const struct sg_sockconn *s, pid_t tid, const char *path, int *opath,
                      struct stat *st, bool *host)
{
    int o = sg_notif_open(tid, path, O_PATH, true);
    if (o < 0)
        return o;
    int r = 0;
    /* the object: the device of the filesystem it lies on, whatever path
     * or mount point name reached it */
    if (fstat(o, st) < 0)
        r = -errno;
    else if (!S_ISSOCK(st->st_mode))
        r = -ECONNREFUSED; /* the kernel's answer for a file that is no socket */
    if (r < 0) {
        close(o);
        return r;
    }
    *host = !sg_sockconn_own_fs(s, st->st_dev);
    *opath = o;
    return 0;
}

/* A host socket is reached as the skill, never as the broker: as root the
 * broker would pass the socket file's permission check that the skill
 * fails, and the daemon would see uid 0 as its peer (SO_PEERCRED), so a
 * declared or approved socket would lend the skill root's standing there
 * (the system bus, a root-only control socket). A short-lived child takes
 * the skill's uid, gid and no groups, and connects. 0 or -errno. */
static int connect_as_skill(const struct sg_plan *p, int sock, int opath,
                            const struct sockaddr *addr, socklen_t alen, bool *wait)
{
    pid_t c = fork();
    if (c < 0)
        return -errno;
    if (c == 0) {
        /* nothing of the broker's but the socket and the file it reaches:
         * a process of the skill's uid could take what this child holds */
        int keep[2] = {sock < opath ? sock : opath, sock < opath ? opath : sock};
        if ((keep[0] > 0 && syscall(SYS_close_range, 0, keep[0] - 1, 0) < 0) ||
            (keep[1] > keep[0] + 1 && syscall(SYS_close_range, keep[0] + 1, keep[1] - 1, 0) < 0) ||
            syscall(SYS_close_range, keep[1] + 1, ~0U, 0) < 0)
            _exit(EBADF);
        if (syscall(SYS_setgroups, 0, NULL) < 0 ||
            setresgid(p->skill_gid, p->skill_gid, p->skill_gid) < 0 ||
            setresuid(p->skill_uid, p->skill_uid, p->skill_uid) < 0)
            _exit(EPERM);
        /* never attachable by that uid; its own /proc/self/fd it reaches
         * anyway (the kernel lets a process see its own descriptors) */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* a connect the skill made blocking (another of its threads may
         * clear O_NONBLOCK on the shared file meanwhile) ends here, as
         * the broker's own does (CONNECT_MS): SIGALRM's default kills it */
        struct itimerval it = {.it_value = {0, CONNECT_MS * 1000L}};
        setitimer(ITIMER_REAL, &it, NULL);
        bool w = false;
        int r = connect_now(sock, addr, alen, &w);
        _exit(r < 0 ? -r : 0);
    }
    /* and the broker never waits on it longer than that and a margin:
     * past it, the child is killed (its own timer should have ended it) */
    int st = 0, pfd = (int)syscall(SYS_pidfd_open, c, 0);
    struct pollfd pw = {.fd = pfd, .events = POLLIN};
    if (pfd >= 0 && poll(&pw, 1, CONNECT_MS * 5) == 0)
        kill(c, SIGKILL);
    if (pfd >= 0)
        close(pfd);
    while (waitpid(c, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    int r = WIFEXITED(st) ? -WEXITSTATUS(st) : -ETIMEDOUT;
    int fl = fcntl(sock, F_GETFL);
    *wait = r == -EINPROGRESS && fl >= 0 && !(fl & O_NONBLOCK);
    return r;
}

/* Connect sock to the object opath holds (never the skill's string again),
 * or to addr when there is none, and answer the call now or when the
 * connection settles; a host socket (host) as the skill. Takes sock and
 * opath. */
static void finish(struct sg_sockconn *s, uint64_t id, int sock, const struct sockaddr *addr,
                   socklen_t alen, int opath, int r, bool host)
{
    struct sockaddr_un via = {.sun_family = AF_UNIX};
    if (!r && opath >= 0) {
        snprintf(via.sun_path, sizeof via.sun_path, "/proc/self/fd/%d", opath);
        addr = (const struct sockaddr *)&via;
        alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(via.sun_path) + 1);
    }
    bool wait = false;
    if (!r && host && s->plan->as_root)
        r = connect_as_skill(s->plan, sock, opath, addr, alen, &wait);
    else if (!r)
        r = connect_now(sock, addr, alen, &wait);
    if (opath >= 0)
        close(opath);
    int err = 0;
    if (wait && settled(sock, &err)) {
        wait = false;
        r = -err;
    }
    if (wait && s->npend < SG_SOCKCONN_MAX_PENDING) {
        s->pend[s->npend++] = (struct pending){.id = id, .sock = sock};
        return;
    }
    respond(s->fd, id, wait ? -EAGAIN : r);
    close(sock);
}

/* ---- host sockets: declared, or asked as Connect ---- */

/* A connect to a host socket waiting for its decision. */
struct host_wait {
    struct sg_sockconn *s;
    uint64_t id;
    pid_t pid;
    int sock, opath;
    struct stat st;
    char path[PATH_MAX];    /* as the skill named it (joined with its cwd) */
    char subject[PATH_MAX]; /* the object's own path in the sandbox, symlinks resolved */
};

static void host_connected(struct host_wait *w, const struct sg_plan_socket *decl,
                           const char *by)
{
    sg_bus_emit(w->s->bus, SG_EV_HOST_SOCKET_CONNECTED,
                json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:b, s:s}", "path", w->subject,
                          "requested", w->path, "pid", (int)w->pid, "owner_uid",
                          (json_int_t)w->st.st_uid, "dev", (json_int_t)w->st.st_dev, "ino",
                          (json_int_t)w->st.st_ino, "declared", decl != NULL, "decided_by", by),
                "connected to the host socket %s (%s)", w->subject, by);
}

/* Whether the connect w waits for is gone (sg_perm_request_watched). */
static const char *host_gone(void *ctx)
{
    const struct host_wait *w = ctx;
    return seccomp_notify_id_valid(w->s->fd, w->id) != 0 ? sg_notif_gone_why() : NULL;
}

static void host_decided(void *ctx, enum sg_decision d)
{
    struct host_wait *w = ctx;
    struct sg_sockconn *s = w->s;
    if (seccomp_notify_id_valid(s->fd, w->id) != 0) {
        close(w->sock), close(w->opath); /* the thread is gone */
    } else if (sg_decision_allows(d)) {
        const char *by = s->perm ? sg_perm_last_decided_by(s->perm) : "";
        cleanup_free char *said = sg_xasprintf("allowed: %s", by && *by ? by : "Connect");
        host_connected(w, NULL, said);
        finish(s, w->id, w->sock, NULL, 0, w->opath, 0, true);
    } else {
        const char *by = s->perm ? sg_perm_last_decided_by(s->perm) : NULL;
        cleanup_free char *why = sg_xasprintf("it is a host socket the manifest does not declare "
                                              "(permissions.unix_sockets), and Connect was "
                                              "denied%s%s",
                                              by && *by ? ": " : "", by && *by ? by : "");
        refuse_path(s, w->id, w->pid, w->path, why);
        close(w->sock), close(w->opath);
    }
    free(w);
}

/* Who owns the socket, for the person who decides. */
static void describe_owner(const struct stat *st, char *out, size_t n)
{
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(st->st_uid, &pw, buf, sizeof buf, &res) == 0 && res)
        snprintf(out, n, "a host socket of %.64s (uid %u), mode %04o, not declared", res->pw_name,
                 (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
    else
        snprintf(out, n, "a host socket of uid %u, mode %04o, not declared",
                 (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
}

/* A connect whose socket is the host's: the manifest's own, by inode; else
 * a Connect request (rules, grants, a person), decided on the object's own
 * path. Takes sock and opath. */
static void host_socket(struct sg_sockconn *s, const struct seccomp_notif *req, int sock,
                        int opath, const struct stat *st, const char *path)
{
    struct host_wait *w = sg_xcalloc(1, sizeof *w);
    *w = (struct host_wait){.s = s, .id = req->id, .pid = (pid_t)req->pid, .sock = sock,
                            .opath = opath, .st = *st};
    snprintf(w->path, sizeof w->path, "%s", path); /* path came from a PATH_MAX buffer */
    char fdp[64];
    snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", opath);
    ssize_t n = readlink(fdp, w->subject, sizeof w->subject);
    const struct sg_plan_socket *decl = sg_plan_socket_find(s->plan, st->st_dev, st->st_ino);
    struct sg_preq q = {.tool = SG_PT_CONNECT};
    if (n <= 0 || (size_t)n >= sizeof w->subject || (size_t)n >= sizeof q.subject) {
        /* a name that does not fit is never cut and matched */
        refuse_path(s, w->id, w->pid, path, "its path could not be read whole");
        close(sock), close(opath), free(w);
        return;
    }
    w->subject[n] = '\0';
    memcpy(q.subject, w->subject, (size_t)n + 1);
    snprintf(q.args, sizeof q.args, "connect");
    describe_owner(st, q.detail, sizeof q.detail);
    if (decl) {
        /* the very socket the plan pinned: the inode decides, not the path */
        cleanup_free char *by = sg_xasprintf("declared in the manifest: %s (%s)", decl->path,
                                             decl->origin);
        sg_perm_record(s->perm, &q, SG_DEC_ALLOW_ONCE, by);
        host_connected(w, decl, by);
        finish(s, w->id, sock, NULL, 0, opath, 0, true);
        free(w);
        return;
    }
    const struct sg_tools *tools = sg_perm_tools(s->perm);
    if (!s->perm || (tools->restricted && !tools->connect_listed)) {
        const char *by = s->perm ? "allowed-tools: Connect is not in it" : "no one to ask";
        sg_perm_record(s->perm, &q, SG_DEC_DENY, by);
        cleanup_free char *why = sg_xasprintf("it is a host socket the manifest does not declare "
                                              "(permissions.unix_sockets); %s", by);
        refuse_path(s, w->id, w->pid, path, why);
        close(sock), close(opath), free(w);
        return;
    }
    enum sg_decision d = SG_DEC_DENY;
    if (sg_perm_request_watched(s->perm, &q, host_decided, w, host_gone, &d) == 1)
        host_decided(w, d);
}

/* The broker's descriptor of the skill's socket fdnum, or -errno (ESRCH:
 * the thread is gone). */
static int skill_fd(struct sg_sockconn *s, pid_t tid, int fdnum)
{
    if (s->pidfd >= 0 && s->pidfd_tid == tid) {
        int sock = (int)syscall(SYS_pidfd_getfd, s->pidfd, fdnum, 0);
        if (sock >= 0 || errno != ESRCH)
            return sock >= 0 ? sock : -errno;
        /* that thread is gone: tid may be another's now */
    }
    if (s->pidfd >= 0)
        close(s->pidfd);
    s->pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (s->pidfd < 0)
        s->pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
    s->pidfd_tid = tid;
    if (s->pidfd < 0)
        return -ESRCH;
    int sock = (int)syscall(SYS_pidfd_getfd, s->pidfd, fdnum, 0);
    return sock >= 0 ? sock : -errno;
}

/* len bytes at addr in tid's memory, whole: 0 or -1 with errno. One call,
 * under the same ptrace access check as opening /proc/TID/mem. */
static int read_skill(pid_t tid, void *buf, size_t len, uint64_t addr)
{
    struct iovec local = {.iov_base = buf, .iov_len = len};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
    ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len)
        return 0;
    if (n >= 0)
        errno = EFAULT;
    return -1;
}

void sg_sockconn_handle(struct sg_sockconn *s, const struct seccomp_notif *req)
{
    pid_t tid = (pid_t)req->pid;
    int fdnum = (int)req->data.args[0];
    uint32_t len = (uint32_t)req->data.args[2];
    struct sockaddr_storage ss;
    if (len > sizeof ss) {
        respond(s->fd, req->id, -EINVAL); /* the kernel's answer too */
        return;
    }
    int sock = skill_fd(s, tid, fdnum);
    if (sock < 0) {
        respond(s->fd, req->id, sock);
        return;
    }
    memset(&ss, 0, sizeof ss);
    int r = 0, family = 0;
    socklen_t fl = sizeof family;
    struct stat st;
    /* the family of the object held (ENOTSOCK for a file that is no
     * socket, as the kernel's connect says) */
    if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &family, &fl) < 0)
        r = -errno;
    else if (len && read_skill(tid, &ss, len, req->data.args[1]) < 0)
        r = errno == ESRCH ? -ESRCH : -EFAULT;
    /* what was read must still be that call's */
    if (!r && seccomp_notify_id_valid(s->fd, req->id) != 0)
        r = -ESRCH;
    const struct sockaddr *addr = (const struct sockaddr *)&ss;
    int opath = -1;
    const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
    if (!r && family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
        un->sun_family == AF_UNIX && un->sun_path[0]) {
        /* a pathname: the kernel reads at most len - 2 bytes of it */
        char rel[sizeof un->sun_path + 1], path[PATH_MAX];
        size_t n = strnlen(un->sun_path, len - offsetof(struct sockaddr_un, sun_path));
        memcpy(rel, un->sun_path, n);
        rel[n] = '\0';
        bool host = false;
        r = sg_notif_join(tid, AT_FDCWD, rel, 0, path, sizeof path);
        if (!r)
            r = check_path(s, tid, path, &opath, &st, &host);
        if (!r && host) {
            host_socket(s, req, sock, opath, &st, path);
            return;
        }
    }
    if (!r && family == AF_NETLINK && netlink_needs_privilege(sock, &ss, len)) {
        refuse_netlink(s, req, &ss);
        close(sock);
        return;
    }
    finish(s, req->id, sock, addr, len, opath, r, false);
}

size_t sg_sockconn_pollfds(struct sg_sockconn *s, struct pollfd *p, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->npend && n < max; i++)
        p[n++] = (struct pollfd){.fd = s->pend[i].sock, .events = POLLOUT};
    return n;
}

void sg_sockconn_dispatch(struct sg_sockconn *s, const struct pollfd *p, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (i >= s->npend || p[i].fd != s->pend[i].sock)
            continue;
        bool gone = seccomp_notify_id_valid(s->fd, s->pend[i].id) != 0;
        if (!gone && !p[i].revents)
            continue;
        int err = 0;
        socklen_t el = sizeof err;
        if (!gone && getsockopt(s->pend[i].sock, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
            err = errno;
        if (!gone)
            respond(s->fd, s->pend[i].id, -err);
        close(s->pend[i].sock);
        s->pend[i] = s->pend[--s->npend];
    }
}
