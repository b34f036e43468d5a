#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "landlock.h"
#include "decoy.h"
#include "digest.h"
#include "diskcap.h"
#include "egress.h"
#include "exec.h"
#include "fswatch.h"
#include "hasher.h"
#include "nflog.h"
#include "perm.h"
#include "sanitize.h"
#include "sockconn.h"
#include "util.h"

struct stream {
    struct sg_hasher *hash; /* shared by both streams */
    int fd;
    int which; /* 0 stdout, 1 stderr */
    char line[SG_LINE_MAX];
    size_t len;
    uint64_t bytes, dropped, cap;
    bool announced;
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Cut point for a full line buffer: never inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && i > n - 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
        i--;
    if (i > 0 && i < n && ((unsigned char)s[i - 1] & 0xc0) == 0xc0)
        return i - 1; /* s[i-1] starts a sequence that continues past n */
    return n;
}

static void flush_line(struct stream *st, struct sg_event_bus *bus, size_t n)
{
    sg_bus_emit_raw(bus, st->which ? SG_EV_STDERR : SG_EV_STDOUT, st->line, n, NULL);
    memmove(st->line, st->line + n, st->len - n);
    st->len -= n;
}

static void take_bytes(struct stream *st, struct sg_event_bus *bus, const char *buf, size_t n)
{
    size_t keep = st->bytes >= st->cap ? 0 : n < st->cap - st->bytes ? n : (size_t)(st->cap - st->bytes);
    st->bytes += keep;
    /* a line at a time (memchr), not a byte at a time */
    for (size_t left = keep; left > 0;) {
        const char *nl = memchr(buf, '\n', left);
        size_t k = nl ? (size_t)(nl - buf) : left;
        while (k > 0) {
            size_t room = sizeof st->line - st->len;
            size_t c = k < room ? k : room;
            memcpy(st->line + st->len, buf, c);
            st->len += c, buf += c, left -= c, k -= c;
            if (st->len == sizeof st->line)
                flush_line(st, bus, utf8_cut(st->line, st->len));
        }
        if (nl) {
            flush_line(st, bus, st->len);
            buf++, left--;
        }
    }
    if (keep == n)
        return;
    /* the kept lines' events come first, then the cap's */
    st->dropped += n - keep;
    if (!st->announced) {
        st->announced = true;
        json_t *d = json_pack("{s:s, s:s, s:I, s:b}", "limit", "output", "stream",
                              st->which ? "stderr" : "stdout", "cap", (json_int_t)st->cap,
                              "prevented", 1);
        sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT, d,
                    "%s passed its %llu-byte cap: the rest is dropped and counted",
                    st->which ? "stderr" : "stdout", (unsigned long long)st->cap);
    }
}

/* At most rounds reads of SG_HASHER_SLOT bytes: the loop comes back to the
 * other fds (and a front end's keys) after each batch. */
static bool read_stream(struct stream *st, struct sg_event_bus *bus, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        char *buf = sg_hasher_buf(st->hash);
        ssize_t n = read(st->fd, buf, SG_HASHER_SLOT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return true;
        if (n <= 0) {
            if (st->len)
                flush_line(st, bus, st->len);
            close(st->fd);
            st->fd = -1;
            return false;
        }
        take_bytes(st, bus, buf, (size_t)n);
        sg_hasher_submit(st->hash, st->which, (size_t)n);
    }
    return true;
}

static void describe_clone(char *out, size_t n, unsigned long long flags)
{
    static const struct {
        unsigned long long f;
        const char *name;
    } t[] = {{0x00020000, "CLONE_NEWNS"},     {0x04000000, "CLONE_NEWUTS"},
             {0x08000000, "CLONE_NEWIPC"},    {0x10000000, "CLONE_NEWUSER"},
             {0x20000000, "CLONE_NEWPID"},    {0x40000000, "CLONE_NEWNET"},
             {0x02000000, "CLONE_NEWCGROUP"}};
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < SG_ARRAY_LEN(t); i++)
        if ((flags & t[i].f) && o < n)
            o += (size_t)snprintf(out + o, n - o, "%s%s", o ? "|" : "", t[i].name);
    if (!o)
        snprintf(out, n, "a new process");
}

static void handle_notification(const struct sg_plan *plan, const int *pins,
                                struct sg_perm *perm, struct sg_exec *ex,
                                struct sg_sockconn *conn, struct sg_diskcap *dc, int fd,
                                bool *entry_done,
                                struct sg_event_bus *bus)
{
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    if (seccomp_notify_alloc(&req, &resp) < 0)
        return;
    if (seccomp_notify_receive(fd, req) == 0) {
        char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
        const char *sc = name ? name : "?";
        if (!strcmp(sc, "execve") || !strcmp(sc, "execveat")) {
            if (!*entry_done) {
                /* the entrypoint's own exec: nothing else runs yet, pre-approved */
                *entry_done = true;
                *resp = (struct seccomp_notif_resp){.id = req->id,
                                                    .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
                seccomp_notify_respond(fd, resp);
            } else {
                sg_exec_handle(ex, req, !strcmp(sc, "execveat"));
            }
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        if (!strcmp(sc, "connect")) {
            sg_sockconn_handle(conn, req);
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        int fw = sg_fswatch_handle(plan, pins, perm, dc, fd, req, sc, resp, bus);
        if (fw) {
            if (fw == 1)
                seccomp_notify_respond(fd, resp);
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        resp->id = req->id;
        resp->val = 0;
        /* personality's query (every bit set) changes nothing: the kernel
         * takes the value from the register, so what we read is what runs */
        if (!strcmp(sc, "personality") && (req->data.args[0] & 0xffffffffULL) == 0xffffffffULL) {
            resp->error = 0;
            resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            seccomp_notify_respond(fd, resp);
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        if (!strcmp(sc, "memfd_create") || !strcmp(sc, "shmget")) {
            bool counted = plan->limits[SG_PL_MEMORY].mech != SG_MECH_RLIMIT;
            resp->error = counted ? 0 : -EPERM;
            resp->flags = counted ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
            seccomp_notify_respond(fd, resp);
            if (!counted)
                sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                            json_pack("{s:s, s:s, s:s, s:b}", "limit", "memory", "syscall", sc,
                                      "mechanism", "rlimit", "prevented", 1),
                            "%s refused: without a cgroup its pages would count against no "
                            "memory limit", sc);
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        resp->error = -EPERM;
        resp->flags = 0;
        seccomp_notify_respond(fd, resp);
        char detail[160] = "";
        if (!strcmp(sc, "ioctl"))
            snprintf(detail, sizeof detail, " (request %#llx%s)",
                     (unsigned long long)(req->data.args[1] & 0xffffffff),
                     (req->data.args[1] & 0xffffffff) == 0x5412   ? ": TIOCSTI, typing into a terminal"
                     : (req->data.args[1] & 0xffffffff) == 0x541c ? ": TIOCLINUX"
                                                                  : "");
        else if (!strcmp(sc, "clone")) {
            char f[128];
            describe_clone(f, sizeof f, req->data.args[0]);
            snprintf(detail, sizeof detail, " (%s)", f);
        } else if (!strcmp(sc, "socket") || !strcmp(sc, "socketpair"))
            snprintf(detail, sizeof detail, " (domain %llu, type %llu%s)",
                     (unsigned long long)req->data.args[0],
                     (unsigned long long)(req->data.args[1] & 0xf),
                     req->data.args[0] == 40 ? ": AF_VSOCK, a channel to a VM's host that no "
                                               "network rule sees"
                     : req->data.args[0] == 1
                         ? ": a unix datagram socket, whose messages name their own "
                           "destination past any connect check"
                     : (req->data.args[1] & 0xf) == 3 || req->data.args[0] == 17
                         ? ": a raw socket, around the network sandbox"
                     : req->data.args[0] != 1 && req->data.args[0] != 2 &&
                             req->data.args[0] != 10 && req->data.args[0] != 16
                         ? ": a socket family the sandbox does not offer"
                         : "");
        else if (!strcmp(sc, "personality"))
            snprintf(detail, sizeof detail, " (%#llx)", (unsigned long long)req->data.args[0]);
        json_t *d = json_pack("{s:s, s:i, s:I, s:I, s:s, s:b}", "syscall", sc, "pid",
                              (int)req->pid, "arg0", (json_int_t)req->data.args[0], "arg1",
                              (json_int_t)req->data.args[1], "action", "EPERM", "prevented", 1);
        sg_bus_emit(bus, SG_EV_SYSCALL_BLOCKED, d, "%s denied%s", sc, detail);
        free(name);
    }
    seccomp_notify_free(req, resp);
}

static void on_packet(void *ctx, const struct sg_pkt *p)
{
    struct sg_event_bus *bus = ctx;
    char where[80];
    if (p->dport >= 0)
        snprintf(where, sizeof where, p->family == 6 ? "[%s]:%d" : "%s:%d", p->dst, p->dport);
    else
        snprintf(where, sizeof where, "%s", p->dst);
    json_t *d = json_pack("{s:s, s:s, s:i, s:s, s:b}", "protocol", sg_proto_name(p->proto), "dst",
                          p->dst, "port", p->dport, "reason", "no network in this sandbox",
                          "prevented", 1);
    sg_bus_emit(bus, SG_EV_NETWORK_EGRESS_BLOCKED, d, "%s %s rejected: no network in this sandbox",
                sg_proto_name(p->proto), where);
}

static void read_nflog(int fd, struct sg_event_bus *bus)
{
    static char buf[SG_NFLOG_MAX];
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0)
            return;
        sg_nflog_parse(buf, (size_t)n, on_packet, bus);
    }
}

/* A credential decoy was opened: each event is one open. */
static void read_decoy(const struct sg_plan *plan, int fd, size_t i, struct sg_event_bus *bus)
{
    char buf[4096] __attribute__((aligned(8)));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off + (ssize_t)sizeof(struct fanotify_event_metadata) <= n;) {
            struct fanotify_event_metadata md;
            memcpy(&md, buf + off, sizeof md);
            if (md.event_len < sizeof md || off + (ssize_t)md.event_len > n)
                break;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", plan->home, sg_decoy_path(i));
            sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                        json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "syscall", "open", "path",
                                  path, "access", "read", "class", "credential", "decoy", 1,
                                  "prevented", 1),
                        "read of %s: an empty decoy answered (your real credentials are not in "
                        "the sandbox)",
                        path);
            off += md.event_len;
        }
    }
}

static void emit_plan(const struct sg_plan *p, struct sg_event_bus *bus)
{
    json_t *lim = json_object();
    for (int i = 0; i < SG_PL_COUNT; i++) {
        const struct sg_plan_limit *l = &p->limits[i];
        json_object_set_new(lim, l->name,
                            json_pack("{s:I, s:s, s:s, s:s}", "value", (json_int_t)l->value,
                                      "unit", l->unit, "mechanism", sg_mechanism_name(l->mech),
                                      "how", l->how));
    }
    json_t *d = json_pack("{s:i, s:s, s:s, s:i, s:o, s:b, s:i}", "mounts", (int)p->nmounts,
                          "seccomp_profile", sg_seccomp_profile_name(p->profile), "landlock",
                          sg_landlock_describe(p->degraded ? 0 : p->landlock_abi), "landlock_abi",
                          p->landlock_abi, "limits", lim, "degraded", p->degraded,
                          "cgroup_version", p->cgroup_version);
    sg_bus_emit(bus, SG_EV_POLICY_APPLIED, d,
                "namespaces user+mount+pid+net+ipc+uts+cgroup, %zu mounts, Landlock ABI %d, "
                "seccomp %s, nftables: every egress rejected",
                p->nmounts, p->degraded ? 0 : p->landlock_abi, sg_seccomp_profile_name(p->profile));
    if (p->degraded)
        sg_bus_emit(bus, SG_EV_SANDBOX_DEGRADED, json_pack("{s:s}", "missing", "landlock"),
                    "DEGRADED: running without Landlock (--allow-degraded)");
    json_t *passed = json_array(), *stripped = json_array();
    for (size_t i = 0; i < p->npassed; i++)
        json_array_append_new(passed, json_string(p->passed[i]));
    for (size_t i = 0; i < p->nstripped; i++)
        json_array_append_new(stripped, json_string(p->stripped[i]));
    sg_bus_emit(bus, SG_EV_ENV_FILTERED,
                json_pack("{s:o, s:o, s:b}", "passed", passed, "stripped", stripped, "prevented", 1),
                "Environment filtered: %zu variable%s passed, %zu stripped", p->npassed,
                p->npassed == 1 ? "" : "s", p->nstripped);
}

struct before_start {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    bool done;
};

static void before_start(void *ctx)
{
    struct before_start *b = ctx;
    emit_plan(b->plan, b->bus);
    sg_sandbox_clean_stale();
    b->done = true;
}

int sg_session_run(const struct sg_plan *plan, struct sg_event_bus *bus, struct sg_perm *perm,
                   const struct sg_session_hook *hook, struct sg_run_result *res)
{
    bool entry_done = false;
    memset(res, 0, sizeof *res);
    res->started_ms = now_ms();
    /* A skill that exits before reading its input must not take the broker
     * with it: writes to a closed pipe are EPIPE, not a fatal signal. (The
     * skill gets default signal handlers back before exec.) */
    signal(SIGPIPE, SIG_IGN);
    /* the plan's events and the sweep of what killed brokers left are done
     * while pid 1 mounts (0.2 ms the skill's start no longer waits for) */
    struct before_start bs = {.plan = plan, .bus = bus};
    struct sg_sandbox sb;
    int r = sg_sandbox_launch(plan, &sb, res->failed_step, sizeof res->failed_step, before_start,
                              &bs);
    if (!bs.done)
        before_start(&bs);
    if (r < 0) {
        res->end = SG_END_SETUP_FAILED;
        res->exit_code = SG_RUN_SETUP_FAILED;
        res->failed_errno = -r;
        res->ended_ms = now_ms();
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:s, s:s}", "reason", "setup", "step", res->failed_step,
                              "error", strerror(-r)),
                    "sandbox setup failed at %s: %s", res->failed_step, strerror(-r));
        return r;
    }
    struct stream out = {.fd = sb.stdout_fd, .which = 0,
                         .cap = (uint64_t)plan->limits[SG_PL_OUTPUT].value};
    struct stream err = {.fd = sb.stderr_fd, .which = 1,
                         .cap = (uint64_t)plan->limits[SG_PL_OUTPUT].value};
    sb.stdout_fd = sb.stderr_fd = -1; /* the streams own them now */
    out.hash = err.hash = sg_hasher_new();
    /* a larger pipe: fewer wake-ups of the loop and of a writing skill */
    fcntl(out.fd, F_SETPIPE_SZ, 1 << 20);
    fcntl(out.fd, F_SETFL, O_NONBLOCK);
    fcntl(err.fd, F_SETFL, O_NONBLOCK);
    fcntl(sb.stdin_fd, F_SETFL, O_NONBLOCK);
    size_t in_off = 0, in_len = strlen(plan->input);

    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {.it_value = {.tv_sec = plan->limits[SG_PL_TIMEOUT].value}};
    timerfd_settime(tfd, 0, &its, NULL);

    cleanup_free char *cmdline = NULL;
    {
        struct sg_buf b;
        sg_buf_init(&b, 4096);
        for (size_t i = 0; i < plan->argc; i++)
            sg_buf_printf(&b, "%s%s", i ? " " : "", plan->argv[i]);
        cmdline = sg_buf_steal(&b);
    }
    struct sg_net *net = sg_egress_new(plan, bus, perm, sb.egress_fd);
    struct sg_exec *ex = sg_exec_new(plan, perm, bus, sb.notify_fd);
    struct sg_sockconn *conn = sg_sockconn_new(plan, bus, sb.notify_fd);
    struct sg_diskcap *dc = sg_diskcap_new(plan, bus);
    sg_bus_emit(bus, SG_EV_SKILL_STARTED,
                json_pack("{s:s, s:s, s:s}", "run_id", plan->run_id, "command", cmdline, "cwd",
                          plan->cwd),
                "%s started: %s", plan->skill_name, cmdline);
    struct sg_session_live live = {.pid = sb.pid, .started_ms = res->started_ms,
                                   .memory_bytes = sg_sandbox_memory_usage(&sb)};
    int64_t mem_read_ms = now_ms();
    /* "go" last: the entrypoint's exec comes back at once as a notification
     * the loop below must answer */
    sg_sandbox_go(&sb);
    bool stopped = false, disk_full = false;
    bool exited = false, timed_out = false, have_status = false, exec_failed = false;
    int status = 0, exec_errno = 0;
    int64_t drain_deadline = 0;
    while (out.fd >= 0 || err.fd >= 0 || !exited) {
        struct pollfd p[8 + SG_MAX_DECOYS + SG_EGRESS_FDS + 2 * SG_EGRESS_MAX_CONNS + 1 +
                        SG_HOOK_MAX_FDS + SG_SOCKCONN_MAX_PENDING];
        int n = 0, i_out = -1, i_err = -1, i_in = -1, i_ctl = -1, i_nfy = -1, i_pid = -1, i_tm = -1,
            i_log = -1, i_dec[SG_MAX_DECOYS];
        for (int k = 0; k < SG_MAX_DECOYS; k++) {
            i_dec[k] = -1;
            if (sb.decoy_fd[k] >= 0)
                p[i_dec[k] = n++] = (struct pollfd){.fd = sb.decoy_fd[k], .events = POLLIN};
        }
        if (sb.nflog_fd >= 0)
            p[i_log = n++] = (struct pollfd){.fd = sb.nflog_fd, .events = POLLIN};
        if (out.fd >= 0)
            p[i_out = n++] = (struct pollfd){.fd = out.fd, .events = POLLIN};
        if (err.fd >= 0)
            p[i_err = n++] = (struct pollfd){.fd = err.fd, .events = POLLIN};
        if (sb.stdin_fd >= 0)
            p[i_in = n++] = (struct pollfd){.fd = sb.stdin_fd, .events = POLLOUT};
        if (sb.ctl_fd >= 0)
            p[i_ctl = n++] = (struct pollfd){.fd = sb.ctl_fd, .events = POLLIN};
        if (sb.notify_fd >= 0)
            p[i_nfy = n++] = (struct pollfd){.fd = sb.notify_fd, .events = POLLIN};
        if (!exited)
            p[i_pid = n++] = (struct pollfd){.fd = sb.pidfd, .events = POLLIN};
        if (!timed_out && !exited)
            p[i_tm = n++] = (struct pollfd){.fd = tfd, .events = POLLIN};
        size_t perm_first = (size_t)n;
        size_t perm_n = exited ? 0 : sg_perm_pollfds(perm, p + n, SG_ARRAY_LEN(p) - (size_t)n);
        n += (int)perm_n;
        size_t net_first = (size_t)n;
        size_t net_n = exited ? 0 : sg_egress_pollfds(net, p + n, SG_ARRAY_LEN(p) - (size_t)n);
        n += (int)net_n;
        size_t conn_first = (size_t)n;
        size_t conn_n = sg_sockconn_pollfds(conn, p + n, SG_ARRAY_LEN(p) - (size_t)n);
        n += (int)conn_n;
        size_t hook_first = (size_t)n;
        size_t hook_n = hook ? hook->pollfds(hook->ctx, p + n, SG_HOOK_MAX_FDS) : 0;
        n += (int)hook_n;
        int timeout = exited ? -1 : sg_egress_timeout(net);
        int pt = exited ? -1 : sg_perm_timeout(perm);
        if (pt >= 0 && (timeout < 0 || pt < timeout))
            timeout = pt;
        int xt = sg_exec_timeout(ex); /* pending execs are watched, exited or not */
        if (xt >= 0 && (timeout < 0 || xt < timeout))
            timeout = xt;
        int dt = exited ? -1 : sg_diskcap_timeout(dc);
        if (dt >= 0 && (timeout < 0 || dt < timeout))
            timeout = dt;
        int ht = hook ? hook->timeout(hook->ctx) : -1;
        if (ht >= 0 && (timeout < 0 || ht < timeout))
            timeout = ht;
        if (exited) {
            int64_t left = drain_deadline - now_ms();
            if (left <= 0)
                break; /* every process is dead; a pipe still open would be a bug, not a wait */
            if (timeout < 0 || left < timeout)
                timeout = (int)left;
        }
        int pr = poll(p, (nfds_t)n, timeout);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            break;
        if (hook) {
            live.exited = exited;
            if (now_ms() - mem_read_ms >= 250) { /* a cgroup read is a few syscalls */
                live.memory_bytes = sg_sandbox_memory_usage(&sb);
                mem_read_ms = now_ms();
            }
            if (hook->dispatch(hook->ctx, p + hook_first, hook_n, &live) && !exited &&
                !stopped) {
                stopped = true;
                sg_sandbox_kill(&sb);
            }
        }
        /* output first: what a skill printed before a request it then made
         * is on the screen before that request's prompt. With a front end's
         * fds in the loop, smaller batches keep its keys quick. */
        int rounds = hook_n ? 1 : 8;
        if (i_out >= 0 && p[i_out].revents)
            read_stream(&out, bus, rounds);
        if (i_err >= 0 && p[i_err].revents)
            read_stream(&err, bus, rounds);
        if (i_log >= 0 && p[i_log].revents)
            read_nflog(sb.nflog_fd, bus);
        if (!exited)
            sg_egress_dispatch(net, p + net_first, net_n);
        if (!exited)
            sg_perm_dispatch(perm, p + perm_first, perm_n);
        for (int k = 0; k < SG_MAX_DECOYS; k++)
            if (i_dec[k] >= 0 && p[i_dec[k]].revents)
                read_decoy(plan, sb.decoy_fd[k], (size_t)k, bus);
        if (i_nfy >= 0 && (p[i_nfy].revents & POLLIN)) {
            bool was = entry_done;
            handle_notification(plan, sb.pins, perm, ex, conn, dc, sb.notify_fd, &entry_done,
                                bus);
            if (entry_done && !was) /* the entrypoint's exec was let through */
                sg_sandbox_started(&sb);
        }
        sg_exec_dispatch(ex);
        sg_sockconn_dispatch(conn, p + conn_first, conn_n);
        if (i_nfy >= 0 && (p[i_nfy].revents & (POLLHUP | POLLERR | POLLNVAL)) &&
            !(p[i_nfy].revents & POLLIN)) {
            close(sb.notify_fd);
            sb.notify_fd = -1;
        }
        if (i_in >= 0 && p[i_in].revents) {
            ssize_t w = (p[i_in].revents & POLLOUT) && in_off < in_len
                            ? write(sb.stdin_fd, plan->input + in_off, in_len - in_off)
                            : -1;
            if (w > 0)
                in_off += (size_t)w;
            if (w < 0 ? errno != EAGAIN && errno != EINTR : in_off >= in_len) {
                close(sb.stdin_fd);
                sb.stdin_fd = -1;
            }
        }
        if (i_ctl >= 0 && p[i_ctl].revents) {
            struct sg_ctl_msg m;
            ssize_t k = recv(sb.ctl_fd, &m, sizeof m, MSG_DONTWAIT);
            if (k == (ssize_t)sizeof m && m.type == SG_CTL_EXIT) {
                /* every process but pid 1 is dead and reaped (launch.c):
                 * the run is over, pid 1's teardown need not be waited for */
                status = m.status;
                have_status = true;
                if (!exited) {
                    exited = true;
                    drain_deadline = now_ms() + 2000;
                }
            } else if (k == (ssize_t)sizeof m && m.type == SG_CTL_EXEC_FAILED) {
                exec_failed = true;
                exec_errno = m.err;
            } else if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                close(sb.ctl_fd);
                sb.ctl_fd = -1;
            }
        }
        if (!exited && !stopped && sg_diskcap_over(dc)) {
            stopped = disk_full = true;
            sg_sandbox_kill(&sb);
        }
        if (i_tm >= 0 && (p[i_tm].revents & POLLIN)) {
            timed_out = true;
            sg_sandbox_kill(&sb);
            sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                        json_pack("{s:s, s:I, s:s, s:b}", "limit", "timeout", "value",
                                  (json_int_t)plan->limits[SG_PL_TIMEOUT].value, "mechanism",
                                  "broker", "prevented", 1),
                        "timeout: %llds passed, every process of the sandbox killed",
                        plan->limits[SG_PL_TIMEOUT].value);
        }
        if (i_pid >= 0 && (p[i_pid].revents & POLLIN)) {
            siginfo_t si = {0};
            if (waitid(P_PIDFD, (id_t)sb.pidfd, &si, WEXITED) == 0 || errno == ECHILD) {
                exited = true;
                drain_deadline = now_ms() + 2000;
                if (!have_status) {
                    /* pid 1 itself died: killed by us (timeout) or by the kernel (OOM) */
                    status = si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8
                                                      : si.si_status & 0x7f;
                }
            }
        }
    }
    sg_perm_cancel_all(perm); /* held requests are answered before their sockets go */
    sg_egress_free(net);
    sg_exec_free(ex);
    sg_sockconn_free(conn);
    sg_diskcap_free(dc);
    /* Last packets, notifications and messages that raced with the exit. */
    if (sb.nflog_fd >= 0)
        read_nflog(sb.nflog_fd, bus);
    for (int k = 0; k < SG_MAX_DECOYS; k++)
        if (sb.decoy_fd[k] >= 0)
            read_decoy(plan, sb.decoy_fd[k], (size_t)k, bus);
    if (sb.ctl_fd >= 0) {
        struct sg_ctl_msg m;
        while (recv(sb.ctl_fd, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m) {
            if (m.type == SG_CTL_EXIT)
                status = m.status, have_status = true;
            else if (m.type == SG_CTL_EXEC_FAILED)
                exec_failed = true, exec_errno = m.err;
        }
    }
    if (out.fd >= 0)
        close(out.fd);
    if (err.fd >= 0)
        close(err.fd);
    close(tfd);
    res->bytes[0] = out.bytes, res->bytes[1] = err.bytes;
    char digests[2][SG_DIGEST_STRLEN];
    sg_hasher_finish(out.hash, digests);
    memcpy(res->out_sha256, digests[0], sizeof res->out_sha256);
    memcpy(res->err_sha256, digests[1], sizeof res->err_sha256);
    res->dropped[0] = out.dropped, res->dropped[1] = err.dropped;
    res->skill_status = status;
    res->ended_ms = now_ms();

    struct sg_limit_hits hits;
    sg_sandbox_limit_hits(&sb, &hits);
    if (hits.memory)
        sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:s, s:b}", "limit", "memory", "value",
                              (json_int_t)plan->limits[SG_PL_MEMORY].value, "mechanism",
                              sg_mechanism_name(plan->limits[SG_PL_MEMORY].mech), "prevented", 1),
                    "memory limit (%lld MB) reached", plan->limits[SG_PL_MEMORY].value);
    if (hits.pids)
        sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:s, s:b}", "limit", "pids", "value",
                              (json_int_t)plan->limits[SG_PL_PIDS].value, "mechanism",
                              sg_mechanism_name(plan->limits[SG_PL_PIDS].mech), "prevented", 1),
                    "process limit (%lld) reached: new processes refused",
                    plan->limits[SG_PL_PIDS].value);
    sg_sandbox_cleanup(&sb);
    long long ms = res->ended_ms - res->started_ms;
    if (exec_failed) {
        res->end = SG_END_EXEC_FAILED;
        res->exit_code = SG_RUN_EXEC_FAILED;
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:s}", "reason", "exec", "error", strerror(exec_errno)),
                    "cannot execute %s: %s", plan->argv[0], strerror(exec_errno));
    } else if (timed_out) {
        res->end = SG_END_TIMEOUT;
        res->exit_code = SG_RUN_TIMEOUT;
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "timeout", "duration_ms", (json_int_t)ms),
                    "killed after the %llds timeout (duration=%lldms)",
                    plan->limits[SG_PL_TIMEOUT].value, ms);
    } else if (disk_full && (WIFSIGNALED(status) || !exited)) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + SIGKILL;
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "disk", "duration_ms", (json_int_t)ms),
                    "stopped: past the disk cap of its write paths (%lld MB); every process of "
                    "the sandbox killed (duration=%lldms)", plan->limits[SG_PL_DISK].value, ms);
    } else if (stopped && (WIFSIGNALED(status) || !exited)) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + SIGKILL;
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "stopped", "duration_ms", (json_int_t)ms),
                    "stopped by the user: every process of the sandbox killed (duration=%lldms)",
                    ms);
    } else if (WIFSIGNALED(status)) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + WTERMSIG(status);
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:i, s:I}", "reason", "signal", "signal", WTERMSIG(status),
                              "duration_ms", (json_int_t)ms),
                    "killed by signal %d (%s) duration=%lldms", WTERMSIG(status),
                    strsignal(WTERMSIG(status)), ms);
    } else {
        res->end = SG_END_EXITED;
        res->exit_code = WEXITSTATUS(status);
        sg_bus_emit(bus, SG_EV_SKILL_COMPLETED,
                    json_pack("{s:i, s:I}", "exit_code", res->exit_code, "duration_ms",
                              (json_int_t)ms),
                    "exit_code=%d duration=%lldms", res->exit_code, ms);
    }
    return 0;
}
