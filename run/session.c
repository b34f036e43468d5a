#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
#include "fetchask.h"
#include "writes.h"
#include "hasher.h"
#include "loop.h"
#include "nflog.h"
#include "perm.h"
#include "reads.h"
#include "keephome.h"
#include "sanitize.h"
#include "sockconn.h"
#include "util.h"
#include "views.h"
#include "wasireport.h"
#include "memwatch.h"
#include "wasm.h"

struct stream {
    struct sg_hasher *hash; /* shared by both streams */
    int fd;
    int which; /* 0 stdout, 1 stderr */
    int copy_fd; /* skillgate wrap: the broker's own stdout or stderr, else -1 */
    char line[SG_LINE_MAX];
    size_t len;
    uint64_t bytes, dropped, cap;
    bool announced;
    /* terminal sequences in the output (neutralised by the sanitizer): colours
     * (SGR) are counted apart; the rest are injection attempts, with examples */
    uint64_t escapes, colours;
    char examples[3][96];
    size_t nexamples;
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

/* The length of the sequence at p (an ESC), and whether it only sets
 * colours: ESC [ digits and ';' 'm'. OSC, DCS, APC, PM and SOS run to BEL
 * or ST (ESC backslash), or, unterminated, to the next ESC. */
static size_t esc_len(const char *p, size_t left, bool *sgr)
{
    *sgr = false;
    if (left < 2)
        return left;
    size_t i = 2;
    if (p[1] == '[') {
        bool plain = true;
        for (; i < left && p[i] >= 0x30 && p[i] <= 0x3f; i++)
            plain &= (p[i] >= '0' && p[i] <= '9') || p[i] == ';';
        for (; i < left && p[i] >= 0x20 && p[i] <= 0x2f; i++)
            plain = false;
        *sgr = plain && i < left && p[i] == 'm';
        return i < left ? i + 1 : left;
    }
    if (p[1] && strchr("]P_^X", p[1])) {
        while (i < left && p[i] != 0x07 && p[i] != 0x1b)
            i++;
        if (i < left && p[i] == 0x07)
            return i + 1;
        return i + 1 < left && p[i + 1] == '\\' ? i + 2 : i;
    }
    return 2;
}

static void keep_example(struct stream *st, const char *p, size_t n)
{
    if (st->escapes++ >= SG_ARRAY_LEN(st->examples))
        return;
    /* 22 bytes escape to at most 88 characters: the example is never cut */
    cleanup_free char *e = sg_sanitize(p, n < 22 ? n : 22, 0);
    snprintf(st->examples[st->nexamples++], sizeof st->examples[0], "%s", e);
}

/* Terminal sequences in one line: colours (SGR) are counted apart; the rest
 * (OSC titles and links, cursor moves, clearing, DCS, mode switches, and
 * 8-bit C1 controls) could rewrite what a person sees on a terminal. */
static void count_escapes(struct stream *st, const char *s, size_t n)
{
    const char *end = s + n;
    for (const char *p = memchr(s, 0x1b, n); p;) {
        bool sgr;
        size_t len = esc_len(p, (size_t)(end - p), &sgr);
        if (sgr)
            st->colours++;
        else
            keep_example(st, p, len);
        p += len ? len : 1;
        p = p < end ? memchr(p, 0x1b, (size_t)(end - p)) : NULL;
    }
    /* U+0080..U+009F as UTF-8: CSI (U+009B), OSC (U+009D) and the rest */
    for (const char *p = memchr(s, 0xc2, n); p && p + 1 < end;) {
        if ((unsigned char)p[1] >= 0x80 && (unsigned char)p[1] <= 0x9f)
            keep_example(st, p, 2);
        p = memchr(p + 1, 0xc2, (size_t)(end - p - 1));
    }
}

static void flush_line(struct stream *st, struct sg_event_bus *bus, size_t n)
{
    count_escapes(st, st->line, n);
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
static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* skillgate wrap: the bytes as they came, to the broker's own stream,
 * whatever the trace's cap keeps. It waits as the command would wait
 * bare (a full pipe: whoever reads the wrap's output is slow), never on
 * the command's own objects; a reader gone (EPIPE) ends the copying. */
static void copy_out(struct stream *st, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(st->copy_fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = {.fd = st->copy_fd, .events = POLLOUT};
            poll(&pf, 1, 1000);
            continue;
        }
        if (w <= 0) {
            st->copy_fd = -1;
            return;
        }
        buf += w, n -= (size_t)w;
    }
}

/* Up to rounds reads of st, and none past until_ns (0: no bound). */
static bool read_stream(struct stream *st, struct sg_event_bus *bus, int rounds, int64_t until_ns)
{
    for (int r = 0; r < rounds && (!until_ns || !r || mono_ns() < until_ns); r++) {
        size_t room;
        char *buf = sg_hasher_buf(st->hash, st->which, &room);
        ssize_t n = read(st->fd, buf, room);
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
        if (st->copy_fd >= 0)
            copy_out(st, buf, (size_t)n);
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

/* Every answer to a seccomp notification is given from here (or from the
 * brokers it calls). A CONTINUE lets the kernel run the call with its
 * arguments read again from the skill's registers and memory, so it is
 * only given where nothing the broker read from the skill's memory is what
 * the kernel acts on, or where the kernel itself holds the same line on
 * whatever object the call reaches (issue 34, reviewed call by call):
 *
 *   - the entrypoint's own execve: no skill code has run yet;
 *   - execve/execveat (exec.c): bound to the approved file by ptrace, the
 *     new image checked before its first instruction;
 *   - personality's query and memfd_create/shmget under a cgroup: decided
 *     on register values alone; xattr calls (seccomp.c): on the plan alone;
 *   - a recording's reads (reads.c): nothing is decided, the flags are in
 *     registers (open, openat), and mounts and Landlock decide the object;
 *   - writes (writes.c): only unlink, rmdir and rename inside the writable
 *     paths (they make no name and no byte: a name swapped after the check
 *     reaches only what mounts and Landlock let the skill change anyway),
 *     link, symlink and mknod in a declared write path once counted (a
 *     swap changes which name is made, not how many), and the plain open
 *     of a FIFO or device that is there already (no O_CREAT, no O_TRUNC:
 *     its open may block, so the kernel does it). Every open with write
 *     intent, mkdir, truncate and every new name in the private views
 *     (/tmp, the home, /dev/shm, /dev/null and friends) and in declared
 *     write paths is done by the broker on the folder it checked, and so
 *     are writes through /proc and the fd links. Still open: a thread that
 *     swaps a FIFO's name for an existing file of a declared write path
 *     during that plain open gets it opened for writing unheld (its growth
 *     not summed; RLIMIT_FSIZE still holds).
 *
 * Never continued: openat2 (ENOSYS: its flags are in memory), connect
 * (sockconn.c: the broker connects), approved Writes (the broker does
 * them), and everything refused. */
/* connect's number on arch, resolved once per arch; -1 when it has none
 * there (a multiplexed socketcall), so no number matches. */
static int connect_nr(uint32_t arch)
{
    static _Thread_local uint32_t seen_arch;
    static _Thread_local int nr = -1;
    if (arch != seen_arch) {
        int n = seccomp_syscall_resolve_name_arch(arch, "connect");
        nr = n >= 0 ? n : -1;
        seen_arch = arch;
    }
    return nr;
}

static void handle_notification(const struct sg_plan *plan, const int *pins,
                                struct sg_perm *perm, struct sg_exec *ex,
                                struct sg_sockconn *conn, struct sg_diskcap *dc,
                                struct sg_reads *rd, int fd, bool *entry_done,
                                struct sg_event_bus *bus)
{
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    if (seccomp_notify_alloc(&req, &resp) < 0)
        return;
    if (seccomp_notify_receive(fd, req) == 0) {
        /* connect, the one a client makes per request, by number: no name
         * resolved and copied per call (the name is compared below too) */
        if (req->data.nr == connect_nr(req->data.arch)) {
            sg_sockconn_handle(conn, req);
            seccomp_notify_free(req, resp);
            return;
        }
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
        /* openat2 keeps its flags in the skill's memory (struct open_how):
         * whatever the broker read there, another thread can change before
         * a continued call is read again by the kernel (a read becomes
         * O_WRONLY|O_CREAT). It is never continued: ENOSYS, as on a kernel
         * without it, and libc and runtimes fall back to openat, whose
         * flags are in registers. No event: nothing was refused but a form. */
        if (!strcmp(sc, "openat2")) {
            *resp = (struct seccomp_notif_resp){.id = req->id, .error = -ENOSYS};
            seccomp_notify_respond(fd, resp);
            free(name);
            seccomp_notify_free(req, resp);
            return;
        }
        /* recording: a read is noted and goes on; the rest as ever */
        int fw = sg_reads_handle(rd, fd, req, sc, resp);
        if (!fw)
            fw = sg_writes_handle(plan, pins, perm, dc, fd, req, sc, resp, bus);
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
        /* xattrs: kernel memory (seccomp.c); decided by the plan alone, no
         * argument read, so a continued call is the one the kernel runs */
        bool xattr = sg_seccomp_sets_xattr(name, req->data.nr);
        if (xattr && !name)
            sc = "setxattrat";
        /* SysV queues and semaphore sets: kernel memory, like shmget's */
        bool ipc = !strcmp(sc, "msgget") || !strcmp(sc, "semget");
        /* vmsplice: pages a pipe keeps after they are unmapped (seccomp.c) */
        bool pinned = !strcmp(sc, "vmsplice");
        if (!strcmp(sc, "memfd_create") || !strcmp(sc, "shmget") || ipc || xattr || pinned) {
            enum sg_mechanism mech = plan->limits[SG_PL_MEMORY].mech;
            bool counted = mech == SG_MECH_CGROUP1 || mech == SG_MECH_CGROUP2;
            resp->error = counted ? 0 : xattr ? -ENOTSUP : -EPERM;
            resp->flags = counted ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
            seccomp_notify_respond(fd, resp);
            if (!counted)
                sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                            json_pack("{s:s, s:s, s:s, s:b}", "limit", "memory", "syscall", sc,
                                      "mechanism", sg_mechanism_name(mech), "prevented", 1),
                            xattr ? "%s refused (ENOTSUP): without a cgroup an extended "
                                    "attribute is kernel memory no limit counts"
                            : ipc ? "%s refused: without a cgroup its messages or semaphores "
                                    "are kernel memory no limit counts"
                            : pinned ? "%s refused: without a cgroup the pages a pipe keeps "
                                       "count against no memory limit"
                                  : "%s refused: without a cgroup its pages would count against "
                                    "no memory limit", sc);
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

struct decoy_seen {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
};

static void decoy_event(void *ctx, int i)
{
    struct decoy_seen *d = ctx;
    char path[4096];
    if (i < 0) { /* the queue overflowed: which decoys is not known */
        sg_bus_emit(d->bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b}", "syscall", "open", "path",
                              d->plan->home, "access", "read", "class", "credential", "decoy", 1,
                              "lost", 1, "prevented", 1),
                    "credential decoys in %s were opened faster than they could be seen: some "
                    "opens were lost",
                    d->plan->home);
        return;
    }
    snprintf(path, sizeof path, "%s/%s", d->plan->home, sg_decoy_path((size_t)i));
    sg_bus_emit(d->bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "syscall", "open", "path", path,
                          "access", "read", "class", "credential", "decoy", 1, "prevented", 1),
                "read of %s: an empty decoy answered (your real credentials are not in "
                "the sandbox)",
                path);
}

/* A credential decoy was opened: each event is one open, told apart by
 * the decoy's file handle (decoy.h). */
static void read_decoy(const struct sg_plan *plan, const struct sg_sandbox *sb,
                       struct sg_event_bus *bus)
{
    char buf[4096] __attribute__((aligned(8)));
    struct decoy_seen d = {.plan = plan, .bus = bus};
    ssize_t n;
    while ((n = read(sb->decoy_fd, buf, sizeof buf)) > 0)
        sg_decoy_events(buf, (size_t)n, sb->decoy_fh, decoy_event, &d);
}

/* A decoy that was made could not be watched: opens of it go unseen, and
 * the run says so (most often the user's fanotify groups, 128, are used up
 * by other processes). */
static void decoys_unwatched(const struct sg_sandbox *sb, struct sg_event_bus *bus)
{
    if (!sb->decoy_err)
        return;
    sg_bus_emit(bus, SG_EV_SANDBOX_DEGRADED,
                json_pack("{s:s, s:s, s:s}", "missing", "decoys", "step", sb->decoy_fail, "error",
                          strerror(sb->decoy_err)),
                "credential decoys not watched (%s: %s): opens of them go unseen in this run%s",
                sb->decoy_fail, strerror(sb->decoy_err),
                sb->decoy_err == EMFILE ? " (the user's fanotify groups, fs.fanotify.max_user_groups, "
                                          "are used up)"
                                        : "");
}

/* The files named on the command line the run shows, and the paths it
 * cannot (named.h): said before the skill starts, never found missing. */
static void emit_named(const struct sg_plan *p, struct sg_event_bus *bus)
{
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (!m->named)
            continue;
        cleanup_free char *dst = sg_sanitize_str(m->dst, 0), *src = sg_sanitize_str(m->src, 0);
        sg_bus_emit(bus, SG_EV_PATH_NAMED,
                    json_pack("{s:s, s:s, s:s, s:b}", "path", dst, "real", src, "mode",
                              "read-only", "shown", 1),
                    "%s, named on the command line, is shown to the skill read-only for this "
                    "run (this file only)", dst);
    }
    for (size_t i = 0; i < p->nunshown; i++) {
        cleanup_free char *s = sg_sanitize_str(p->unshown[i], 0);
        sg_bus_emit(bus, SG_EV_PATH_NAMED, json_pack("{s:s, s:b}", "message", s, "shown", 0),
                    "%s", s);
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
    if (p->confine_reads) { /* a WASM run: what the kernel layer lets it read */
        json_t *ro = json_array();
        for (size_t i = 0; i < p->nro; i++)
            json_array_append_new(ro, json_string(p->ro_paths[i]));
        json_object_set_new(d, "landlock_readable", ro);
    }
    if (p->wasm) {
        json_t *pre = json_array();
        for (size_t i = 0; i < p->wasm->npre; i++)
            json_array_append_new(pre, json_pack("{s:s, s:s, s:s}", "guest", p->wasm->pre[i].guest,
                                                 "host", p->wasm->pre[i].host, "mode",
                                                 p->wasm->pre[i].write ? "read-write"
                                                                       : "read-only"));
        json_object_set_new(d, "wasm", json_pack("{s:s, s:s, s:o, s:I, s:b}", "module",
                                                 p->wasm->module, "runtime", p->wasm->runtime,
                                                 "preopens", pre, "module_memory_mb",
                                                 (json_int_t)p->wasm->module_mb, "seeded",
                                                 p->wasm->seeded));
    }
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
    emit_named(p, bus);
}

struct before_start {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    bool done;
    bool have_views;
    struct sg_views_base views;
};

/* The private views as pid 1 left them, decoys made, no skill code run:
 * taken while the skill process is set up, off its path to exec. */
/* The skill's kept home put back (keephome.h), then the views' baseline:
 * what was put back is not the run's doing. */
static void home_then_baseline(const struct sg_plan *p, const struct sg_sandbox *sb,
                               struct sg_event_bus *bus, struct sg_views_base *base)
{
    struct sg_keephome_count c = {0};
    if (p->keep_home)
        sg_keephome_restore(p, sb->view_fd[SG_VIEW_HOME], &c);
    /* said when something was put back (or left out): an empty kept home
     * is every first run's, and no news */
    if (p->keep_home && (c.files || c.links || c.left_out || c.err)) {
        cleanup_free char *at = sg_sanitize_str(p->keep_home, 0);
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:{s:s, s:I, s:I, s:I, s:I, s:I}}", "home_kept", "place", at,
                              "files", (json_int_t)c.files, "folders", (json_int_t)c.dirs,
                              "links", (json_int_t)c.links, "bytes", (json_int_t)c.bytes,
                              "left_out", (json_int_t)c.left_out),
                    "the skill's own home: %zu files (%llu bytes) from its last runs put back "
                    "(%s; --fresh-home starts clean)%s", c.files, c.bytes, at,
                    c.left_out || c.err ? "; some did not fit" : "");
    }
    sg_views_baseline(sb, base);
}

/* What the skill left in its own home, kept for its next runs. */
static void home_save(const struct sg_plan *p, const struct sg_sandbox *sb,
                      struct sg_event_bus *bus)
{
    if (!p->keep_home)
        return;
    /* a file shown for this run only must not outlive it in the home */
    const char *named = NULL;
    for (size_t i = 0; i < p->nmounts && !named; i++)
        if (p->mounts[i].named)
            named = p->mounts[i].dst;
    if (named) {
        cleanup_free char *n = sg_sanitize_str(named, 0);
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:{s:b, s:s}}", "home_saved", "kept", 0, "named", named),
                    "the skill's own home was not kept from this run: it was shown %s for this "
                    "run only, and what it wrote could hold it (its home from before stays)",
                    n);
        return;
    }
    struct sg_keephome_count c;
    sg_keephome_save(p, sb->view_fd[SG_VIEW_HOME], &c);
    if (!c.files && !c.links && !c.left_out && !c.err)
        return; /* nothing to keep: no news */
    cleanup_free char *at = sg_sanitize_str(p->keep_home, 0);
    sg_bus_emit(bus, SG_EV_POLICY_APPLIED,
                json_pack("{s:{s:s, s:I, s:I, s:I, s:I, s:I, s:b}}", "home_saved", "place", at,
                          "files", (json_int_t)c.files, "folders", (json_int_t)c.dirs, "links",
                          (json_int_t)c.links, "bytes", (json_int_t)c.bytes, "left_out",
                          (json_int_t)c.left_out, "error", c.err != 0),
                "the skill's own home kept for its next runs: %zu files (%llu bytes) in %s%s",
                c.files, c.bytes, at,
                c.left_out ? " (past the cap some were left out)"
                : c.err    ? " (the copy stopped: no room)"
                           : "");
}

static void views_ready(void *ctx, const struct sg_sandbox *sb)
{
    struct before_start *b = ctx;
    if (b->have_views)
        sg_views_base_free(&b->views);
    home_then_baseline(b->plan, sb, b->bus, &b->views);
    b->have_views = true;
}

static void before_start(void *ctx)
{
    struct before_start *b = ctx;
    emit_plan(b->plan, b->bus);
    sg_sandbox_clean_stale();
    b->done = true;
}

/* ---- the run's poll sources (loop.h), over the state they share ---- */

struct sg_session {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    struct sg_sandbox sbox, *sb;
    struct sg_perm *perm;
    struct sg_fetch_asker asker; /* what egress asks perm through */
    struct sg_net *net;
    struct sg_exec *ex;
    struct sg_sockconn *conn;
    struct sg_diskcap *dc;
    struct sg_reads *reads; /* skillgate record's, else NULL */
    bool shared; /* a front end's fds share the loop: output reads stop 2 ms into a turn */
    struct sg_session_live live;
    int64_t mem_read_ms;
    struct stream sout, serr, *out, *err;
    int tfd;
    size_t in_off, in_len;
    short nfy_revents;
    bool entry_done, stopped, disk_full, exited, timed_out, have_status, exec_failed;
    bool mem_over;            /* stopped by the broker's memory watch */
    long long mem_over_bytes; /* what it saw then */
    int64_t mem_next_ms;      /* its next look */
    int interrupted; /* the signal skillgate got, or 0 */
    bool cancelled;  /* the client took the request back */
    /* time a person takes to decide is not the skill's: the timeout waits */
    int64_t pause_start_ms, paused_ms;
    struct timespec left; /* of the timeout, when it was paused */
    int status, exec_errno;
    int64_t drain_deadline;
    struct sg_views_base views; /* the private views before the skill ran (views.h) */
    struct sg_wasi_report *wasi; /* a WASM run's WASI-layer reports, else NULL */
    bool wasi_eof;
    timer_t watchdog;     /* the timeout's backstop (watchdog_arm) */
    bool have_watchdog;
};

static size_t one_fd(struct pollfd *p, size_t max, int fd, short events)
{
    if (fd < 0 || !max)
        return 0;
    *p = (struct pollfd){.fd = fd, .events = events};
    return 1;
}

static void run_exited(struct sg_session *r)
{
    if (!r->exited) {
        r->exited = true;
        r->drain_deadline = now_ms() + 2000;
    }
}

static size_t output_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    size_t n = one_fd(p, max, r->out->fd, POLLIN);
    return n + one_fd(p + n, max - n, r->err->fd, POLLIN);
}

static void output_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    /* up to the pipe's 1 MiB a turn (one 128 KiB read a turn polled every
     * fd of the loop for each read and took a fifth of the broker's time
     * streaming 1 GiB); with a front end on the loop, no more reads past
     * 2 ms, so its keys stay quick where each line costs more (its sinks,
     * a sanitizer build) */
    int64_t until = r->shared ? mono_ns() + 2000000 : 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].revents)
            read_stream(p[i].fd == r->out->fd ? r->out : r->err, r->bus, 8, until);
}

/* A WASM run's WASI-layer reports (wasireport.h): what is there, up to
 * 64 KiB a turn. */
static void read_wasi(struct sg_session *r)
{
    char buf[16384];
    for (int i = 0; i < 4 && r->wasi && !r->wasi_eof; i++) {
        ssize_t n = read(r->sb->wasi_fd, buf, sizeof buf);
        if (n == 0)
            r->wasi_eof = true;
        if (n <= 0)
            return;
        sg_wasi_report_feed(r->wasi, buf, (size_t)n, r->bus);
    }
}

static size_t wasi_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return r->wasi && !r->wasi_eof ? one_fd(p, max, r->sb->wasi_fd, POLLIN) : 0;
}

static void wasi_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (n && p[0].revents)
        read_wasi(r);
}

static size_t nflog_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return one_fd(p, max, r->sb->nflog_fd, POLLIN);
}

static void nflog_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (n && p[0].revents)
        read_nflog(r->sb->nflog_fd, r->bus);
}

static size_t egress_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return r->exited ? 0 : sg_egress_pollfds(r->net, p, max);
}

static int egress_timeout(void *c)
{
    struct sg_session *r = c;
    return r->exited ? -1 : sg_egress_timeout(r->net);
}

static void egress_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!r->exited)
        sg_egress_dispatch(r->net, p, n);
}

static size_t perm_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return r->exited ? 0 : sg_perm_pollfds(r->perm, p, max);
}

static int perm_timeout(void *c)
{
    struct sg_session *r = c;
    return r->exited ? -1 : sg_perm_timeout(r->perm);
}

static void perm_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!r->exited)
        sg_perm_dispatch(r->perm, p, n);
}

static size_t decoy_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return one_fd(p, max, r->sb->decoy_fd, POLLIN);
}

static void decoy_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    for (size_t i = 0; i < n; i++)
        if (p[i].revents && p[i].fd == r->sb->decoy_fd)
            read_decoy(r->plan, r->sb, r->bus);
}

static size_t notify_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    r->nfy_revents = 0;
    return one_fd(p, max, r->sb->notify_fd, POLLIN);
}

static void notify_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    r->nfy_revents = n ? p[0].revents : 0;
    if (!(r->nfy_revents & POLLIN))
        return;
    bool was = r->entry_done;
    handle_notification(r->plan, r->sb->pins, r->perm, r->ex, r->conn, r->dc, r->reads,
                        r->sb->notify_fd, &r->entry_done, r->bus);
    if (r->entry_done && !was) /* the entrypoint's exec was let through */
        sg_sandbox_started(r->sb);
}

/* After exec and connect answered what waited: a listener that hung up
 * with nothing to read is closed. */
static void notify_hup_dispatch(void *c, const struct pollfd *p, size_t n)
{
    (void)p, (void)n;
    struct sg_session *r = c;
    if (r->sb->notify_fd >= 0 && (r->nfy_revents & (POLLHUP | POLLERR | POLLNVAL)) &&
        !(r->nfy_revents & POLLIN)) {
        close(r->sb->notify_fd);
        r->sb->notify_fd = -1;
    }
}

static int exec_timeout(void *c)
{
    struct sg_session *r = c;
    return sg_exec_timeout(r->ex); /* pending execs are watched, exited or not */
}

static void exec_dispatch(void *c, const struct pollfd *p, size_t n)
{
    (void)p, (void)n;
    struct sg_session *r = c;
    sg_exec_dispatch(r->ex);
}

static size_t conn_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return sg_sockconn_pollfds(r->conn, p, max);
}

static void conn_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    sg_sockconn_dispatch(r->conn, p, n);
}

static size_t stdin_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return one_fd(p, max, r->sb->stdin_fd, POLLOUT);
}

static void stdin_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!n || !p[0].revents)
        return;
    ssize_t w = (p[0].revents & POLLOUT) && r->in_off < r->in_len
                    ? write(r->sb->stdin_fd, r->plan->input + r->in_off, r->in_len - r->in_off)
                    : 0; /* nothing (more) to write, or the reader went: done */
    if (w > 0)
        r->in_off += (size_t)w;
    if (w < 0 ? errno != EAGAIN && errno != EINTR : r->in_off >= r->in_len || w == 0) {
        close(r->sb->stdin_fd);
        r->sb->stdin_fd = -1;
    }
}

static size_t ctl_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return one_fd(p, max, r->sb->ctl_fd, POLLIN);
}

static void ctl_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!n || !p[0].revents)
        return;
    struct sg_ctl_msg m;
    ssize_t k = recv(r->sb->ctl_fd, &m, sizeof m, MSG_DONTWAIT);
    if (k == (ssize_t)sizeof m && m.type == SG_CTL_EXIT) {
        /* every process but pid 1 is dead and reaped (launch.c): the run
         * is over, pid 1's teardown need not be waited for */
        r->status = m.status;
        r->have_status = true;
        run_exited(r);
    } else if (k == (ssize_t)sizeof m && m.type == SG_CTL_EXEC_FAILED) {
        r->exec_failed = true;
        r->exec_errno = m.err;
    } else if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
        close(r->sb->ctl_fd);
        r->sb->ctl_fd = -1;
    }
}

static int disk_timeout(void *c)
{
    struct sg_session *r = c;
    return r->exited ? -1 : sg_diskcap_timeout(r->dc);
}

static void disk_dispatch(void *c, const struct pollfd *p, size_t n)
{
    (void)p, (void)n;
    struct sg_session *r = c;
    if (!r->exited && !r->stopped && sg_diskcap_over(r->dc)) {
        r->stopped = r->disk_full = true;
        sg_sandbox_kill(r->sb);
    }
}

/* Without a cgroup the broker's watch holds memory (memwatch.h): a look
 * every SG_MEMWATCH_MS, and past the limit a proportional look before the
 * run is stopped. */
static int mem_timeout(void *c)
{
    struct sg_session *r = c;
    const struct sg_plan_limit *m = &r->plan->limits[SG_PL_MEMORY];
    if (m->mech != SG_MECH_RESIDENT || m->value <= 0 || r->exited || r->stopped)
        return -1;
    int64_t left = r->mem_next_ms - now_ms();
    return left > 0 ? (int)left : 0;
}

static void mem_dispatch(void *c, const struct pollfd *p, size_t n)
{
    (void)p, (void)n;
    struct sg_session *r = c;
    if (mem_timeout(r) != 0)
        return;
    r->mem_next_ms = now_ms() + SG_MEMWATCH_MS;
    long long mb = r->plan->limits[SG_PL_MEMORY].value, limit = mb << 20;
    long long used = sg_sandbox_resident(r->sb, 0);
    if (used > limit)
        used = sg_sandbox_resident(r->sb, limit);
    if (used > r->live.memory_bytes)
        r->live.memory_bytes = used;
    if (used <= limit)
        return;
    r->stopped = r->mem_over = true;
    r->mem_over_bytes = used;
    sg_sandbox_kill(r->sb);
    sg_bus_emit(r->bus, SG_EV_RESOURCE_LIMIT_HIT,
                json_pack("{s:s, s:I, s:s, s:I, s:b}", "limit", "memory", "value", (json_int_t)mb,
                          "mechanism", sg_mechanism_name(SG_MECH_RESIDENT), "resident_bytes",
                          (json_int_t)used, "prevented", 1),
                "memory limit (%lld MB) reached: the sandbox's processes held %lld MB "
                "resident; every process killed", mb, used >> 20);
}

static size_t timer_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return r->timed_out || r->exited ? 0 : one_fd(p, max, r->tfd, POLLIN);
}

/* Each turn: a request waiting for a person pauses the timeout, the
 * last answer resumes it (said in the trace both times). Bounded: a skill
 * that asks again and again (its other processes running meanwhile) gets
 * at most SG_PAUSE_PROMPTS prompt timeouts of pause in all; the timer is
 * never off, only pushed back by what is left of that. */
#define SG_PAUSE_PROMPTS 10
static void pace_timeout(struct sg_session *r)
{
    bool waiting = sg_perm_waiting(r->perm) > 0;
    /* a pause that ends with the run (the skill exited at the answer) still
     * says so: the trace's resume never goes missing in a race with the exit */
    if (waiting == (r->pause_start_ms != 0) || r->timed_out || (r->exited && waiting))
        return;
    struct itimerspec cur = {0};
    int64_t allowance = (int64_t)sg_perm_prompt_timeout(r->perm) * 1000 * SG_PAUSE_PROMPTS -
                        r->paused_ms;
    if (waiting) {
        timerfd_gettime(r->tfd, &cur);
        r->left = cur.it_value;
        if ((!r->left.tv_sec && !r->left.tv_nsec) || allowance <= 0)
            return; /* expired (the dispatch below ends the run), or no pause left */
        struct itimerspec ext = {.it_value = r->left};
        ext.it_value.tv_sec += allowance / 1000;
        ext.it_value.tv_nsec += (allowance % 1000) * 1000000;
        if (ext.it_value.tv_nsec >= 1000000000)
            ext.it_value.tv_sec++, ext.it_value.tv_nsec -= 1000000000;
        timerfd_settime(r->tfd, 0, &ext, NULL);
        r->pause_start_ms = now_ms();
        sg_bus_emit(r->bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:b, s:I}", "limit", "timeout", "paused", 1, "left_ms",
                              (json_int_t)(r->left.tv_sec * 1000 + r->left.tv_nsec / 1000000)),
                    "the timeout is paused while a person decides (%lld.%llds of the skill's "
                    "%llds left; at most %llds more of pause)", (long long)r->left.tv_sec,
                    (long long)(r->left.tv_nsec / 100000000),
                    r->plan->limits[SG_PL_TIMEOUT].value, (long long)(allowance / 1000));
    } else {
        int64_t waited = now_ms() - r->pause_start_ms;
        r->paused_ms += waited;
        r->pause_start_ms = 0;
        cur.it_value = r->left;
        timerfd_settime(r->tfd, 0, &cur, NULL);
        sg_bus_emit(r->bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:b, s:I, s:I}", "limit", "timeout", "paused", 0,
                              "waited_ms", (json_int_t)waited, "paused_ms",
                              (json_int_t)r->paused_ms),
                    "the timeout resumes after %lld ms waiting for a person", (long long)waited);
    }
}

/* The timeout holds whatever the broker is doing. The timerfd above is
 * read by the loop; a call of the broker's that blocked (an object the
 * skill controls, a peer that never answers) would hold the loop and the
 * timeout with it. So a timer of the loop's thread is set, every turn, to
 * WATCHDOG_SLACK_MS past what is left of the timeout: should a turn take
 * that long, its signal kills pid 1 (pidfd_send_signal, async-signal
 * safe) and, having no SA_RESTART, interrupts the blocked call (EINTR); the
 * loop goes on and ends the run as timed out. */
#define WATCHDOG_SLACK_MS 2000
#define WATCHDOG_SIGNAL (SIGRTMIN + 4)

static void on_watchdog(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    int pidfd = si->si_value.sival_int;
    if (si->si_code == SI_TIMER && pidfd >= 0)
        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

static void watchdog_arm(struct sg_session *r)
{
    if (!r->have_watchdog) {
        struct sigaction sa = {.sa_sigaction = on_watchdog, .sa_flags = SA_SIGINFO};
        sigemptyset(&sa.sa_mask);
        struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = WATCHDOG_SIGNAL,
                              .sigev_value.sival_int = r->sb->pidfd};
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        r->have_watchdog = sigaction(WATCHDOG_SIGNAL, &sa, NULL) == 0 &&
                           timer_create(CLOCK_MONOTONIC, &ev, &r->watchdog) == 0;
        if (!r->have_watchdog)
            return;
    }
    struct itimerspec cur = {0}, at = {0};
    if (!r->exited && !r->timed_out)
        timerfd_gettime(r->tfd, &cur);
    int64_t ms = (int64_t)cur.it_value.tv_sec * 1000 + cur.it_value.tv_nsec / 1000000 +
                 WATCHDOG_SLACK_MS;
    at.it_value = (struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    /* again every second while the turn lasts: a second blocking call in
     * the same turn is interrupted too */
    at.it_interval = (struct timespec){.tv_sec = 1};
    timer_settime(r->watchdog, 0, &at, NULL);
}

static void timer_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!n || !(p[0].revents & POLLIN)) {
        pace_timeout(r);
        watchdog_arm(r);
        return;
    }
    r->timed_out = true;
    sg_sandbox_kill(r->sb);
    sg_bus_emit(r->bus, SG_EV_RESOURCE_LIMIT_HIT,
                json_pack("{s:s, s:I, s:s, s:b}", "limit", "timeout", "value",
                          (json_int_t)r->plan->limits[SG_PL_TIMEOUT].value, "mechanism", "broker",
                          "prevented", 1),
                "timeout: %llds passed, every process of the sandbox killed",
                r->plan->limits[SG_PL_TIMEOUT].value);
}

static size_t pid_fds(void *c, struct pollfd *p, size_t max)
{
    struct sg_session *r = c;
    return r->exited ? 0 : one_fd(p, max, r->sb->pidfd, POLLIN);
}

static void pid_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct sg_session *r = c;
    if (!n || !(p[0].revents & POLLIN))
        return;
    siginfo_t si = {0};
    if (waitid(P_PIDFD, (id_t)r->sb->pidfd, &si, WEXITED) == 0 || errno == ECHILD) {
        run_exited(r);
        if (!r->have_status) /* pid 1 itself died: killed by us (timeout) or the kernel (OOM) */
            r->status = si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8
                                                 : si.si_status & 0x7f;
    }
}

/* Last packets, notifications and messages that raced with the exit. */
static void drain_last(struct sg_session *r)
{
    if (r->sb->nflog_fd >= 0)
        read_nflog(r->sb->nflog_fd, r->bus);
    if (r->sb->decoy_fd >= 0)
        read_decoy(r->plan, r->sb, r->bus);
    if (r->wasi) {
        read_wasi(r);
        sg_wasi_report_end(r->wasi, r->bus);
    }
    struct sg_ctl_msg m;
    while (r->sb->ctl_fd >= 0 &&
           recv(r->sb->ctl_fd, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m) {
        if (m.type == SG_CTL_EXIT)
            r->status = m.status;
        else if (m.type == SG_CTL_EXEC_FAILED)
            r->exec_failed = true, r->exec_errno = m.err;
    }
}

/* The run's end, as a result and its last event. */
static void say_how_it_ended(const struct sg_session *r, struct sg_run_result *res)
{
    long long ms = res->ended_ms - res->started_ms;
    if (r->exec_failed) {
        res->end = SG_END_EXEC_FAILED;
        res->exit_code = SG_RUN_EXEC_FAILED;
        snprintf(res->end_reason, sizeof res->end_reason, "the program could not be executed");
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:s}", "reason", "exec", "error", strerror(r->exec_errno)),
                    "cannot execute %s: %s", r->plan->argv[0], strerror(r->exec_errno));
    } else if (r->timed_out) {
        res->end = SG_END_TIMEOUT;
        res->exit_code = SG_RUN_TIMEOUT;
        snprintf(res->end_reason, sizeof res->end_reason, "killed after the %llds timeout",
                 r->plan->limits[SG_PL_TIMEOUT].value);
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "timeout", "duration_ms", (json_int_t)ms),
                    "killed after the %llds timeout (duration=%lldms)",
                    r->plan->limits[SG_PL_TIMEOUT].value, ms);
    } else if (r->cancelled) {
        res->end = SG_END_CANCELLED;
        res->exit_code = 128 + SIGTERM;
        snprintf(res->end_reason, sizeof res->end_reason,
                 "cancelled by the client that asked for it (notifications/cancelled)");
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "cancelled", "duration_ms", (json_int_t)ms),
                    "%s: every process of the sandbox killed (duration=%lldms)", res->end_reason,
                    ms);
    } else if (r->interrupted) {
        /* whatever the skill made of the same Ctrl-C: the person stopped it */
        res->end = SG_END_INTERRUPTED;
        res->exit_code = 128 + r->interrupted;
        const char *abbrev = sigabbrev_np(r->interrupted);
        snprintf(res->end_reason, sizeof res->end_reason, "interrupted by SIG%s",
                 abbrev ? abbrev : "?");
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:i, s:I}", "reason", "interrupted", "signal", r->interrupted,
                              "duration_ms", (json_int_t)ms),
                    "%s: every process of the sandbox killed (duration=%lldms)", res->end_reason,
                    ms);
    } else if (r->disk_full) {
        /* stopped for the cap, whatever the skill did with its last EDQUOT
         * (it may exit on its own before the kill lands) */
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + SIGKILL;
        snprintf(res->end_reason, sizeof res->end_reason, "stopped past the disk cap");
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "disk", "duration_ms", (json_int_t)ms),
                    "stopped: past the disk cap of its write paths (%lld MB); every process of "
                    "the sandbox killed (duration=%lldms)", r->plan->limits[SG_PL_DISK].value, ms);
    } else if (r->mem_over) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + SIGKILL;
        snprintf(res->end_reason, sizeof res->end_reason, "stopped past the memory limit (%lld MB)",
                 r->plan->limits[SG_PL_MEMORY].value);
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "memory", "duration_ms", (json_int_t)ms),
                    "stopped: its processes held %lld MB resident, past the memory limit (%lld "
                    "MB); every process of the sandbox killed (duration=%lldms)",
                    r->mem_over_bytes >> 20, r->plan->limits[SG_PL_MEMORY].value, ms);
    } else if (r->stopped && (WIFSIGNALED(r->status) || !r->exited)) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + SIGKILL;
        snprintf(res->end_reason, sizeof res->end_reason, "stopped by the user");
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:I}", "reason", "stopped", "duration_ms", (json_int_t)ms),
                    "stopped by the user: every process of the sandbox killed (duration=%lldms)",
                    ms);
    } else if (WIFSIGNALED(r->status)) {
        res->end = SG_END_SIGNALED;
        res->exit_code = 128 + WTERMSIG(r->status);
        snprintf(res->end_reason, sizeof res->end_reason, "killed by signal %d",
                 WTERMSIG(r->status));
        sg_bus_emit(r->bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:i, s:I}", "reason", "signal", "signal", WTERMSIG(r->status),
                              "duration_ms", (json_int_t)ms),
                    "killed by signal %d (%s) duration=%lldms", WTERMSIG(r->status),
                    strsignal(WTERMSIG(r->status)), ms);
    } else {
        res->end = SG_END_EXITED;
        res->exit_code = WEXITSTATUS(r->status);
        snprintf(res->end_reason, sizeof res->end_reason, "exited with status %d",
                 res->exit_code);
        sg_bus_emit(r->bus, SG_EV_SKILL_COMPLETED,
                    json_pack("{s:i, s:I}", "exit_code", res->exit_code, "duration_ms",
                              (json_int_t)ms),
                    "exit_code=%d duration=%lldms", res->exit_code, ms);
    }
}

/* A run a limit stopped, or that died by a signal or failed near one,
 * says which limit and how to raise it (res->limit_note; the CLI prints
 * it, the trace keeps it). Near: 90% of the memory limit at its peak. */
static void say_which_limit(const struct sg_session *r, const struct sg_limit_hits *hits,
                            struct sg_run_result *res)
{
    const struct sg_plan_limit *m = &r->plan->limits[SG_PL_MEMORY];
    bool failed = (res->end == SG_END_SIGNALED && !(r->stopped && !r->mem_over)) ||
                  (res->end == SG_END_EXITED && res->exit_code != 0);
    bool hit = r->mem_over || hits->memory;
    bool near = m->value > 0 && res->memory_peak >= (m->value << 20) / 10 * 9;
    const char *raise = r->plan->wrap ? "raise it with --memory MB"
                        : "raise it with --memory MB (skillgate run or wrap), or memory_mb in "
                          "the skill's skillsandbox.yaml (resources:) or SKILL.md (wasm:)";
    if (failed && (hit || near))
        snprintf(res->limit_note, sizeof res->limit_note, "%s the memory limit (%lld MB, %s; "
                 "peak %lld MB): %s", hit ? "stopped at" : "ended near", m->value,
                 sg_mechanism_name(m->mech), res->memory_peak >> 20, raise);
    else if (failed && hits->pids)
        snprintf(res->limit_note, sizeof res->limit_note, "the process limit (%lld) refused "
                 "new processes: raise it with max_pids in the skill's skillsandbox.yaml",
                 r->plan->limits[SG_PL_PIDS].value);
}

/* The command line, for the start event. */
static char *command_line(const struct sg_plan *plan)
{
    struct sg_buf b;
    sg_buf_init(&b, 4096);
    for (size_t i = 0; i < plan->argc; i++) {
        /* a WASM run's last word is the runner's source: named, not copied */
        if (plan->wasm && i == plan->argc - 1)
            sg_buf_printf(&b, " <skillgate's WASI runner> %s", plan->wasm->module);
        else
            sg_buf_printf(&b, "%s%s", i ? " " : "", plan->argv[i]);
    }
    return sg_buf_steal(&b);
}

static void stream_init(struct stream *st, int fd, int which, const struct sg_plan *plan,
                        struct sg_hasher *h)
{
    *st = (struct stream){.fd = fd, .which = which, .hash = h,
                          .cap = (uint64_t)plan->limits[SG_PL_OUTPUT].value,
                          .copy_fd = plan->copy_output ? 1 + which : -1};
    fcntl(fd, F_SETFL, O_NONBLOCK);
}

int sg_session_start(const struct sg_plan *plan, struct sg_event_bus *bus, struct sg_perm *perm,
                     struct sg_session **out, struct sg_run_result *res)
{
    *out = NULL;
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
    const struct sg_launch_hooks hooks = {before_start, views_ready, &bs};
    int e = sg_sandbox_launch(plan, &sb, res->failed_step, sizeof res->failed_step, &hooks);
    if (!bs.done)
        before_start(&bs);
    if (e < 0 && bs.have_views)
        sg_views_base_free(&bs.views);
    if (e < 0) {
        res->end = SG_END_SETUP_FAILED;
        res->exit_code = SG_RUN_SETUP_FAILED;
        res->failed_errno = -e;
        res->ended_ms = now_ms();
        snprintf(res->end_reason, sizeof res->end_reason, "the sandbox could not be built");
        sg_bus_emit(bus, SG_EV_SKILL_FAILED,
                    json_pack("{s:s, s:s, s:s}", "reason", "setup", "step", res->failed_step,
                              "error", strerror(-e)),
                    "sandbox setup failed at %s: %s", res->failed_step, strerror(-e));
        return e;
    }
    struct sg_session *r = sg_xmalloc(sizeof *r);
    *r = (struct sg_session){.plan = plan, .bus = bus, .sbox = sb, .perm = perm,
                             .in_len = plan->stdin_empty ? 0 : strlen(plan->input)};
    r->sb = &r->sbox;
    if (r->sb->wasi_fd >= 0) {
        r->wasi = sg_xcalloc(1, sizeof *r->wasi);
        bus->layer = "kernel"; /* what the broker sees held in the kernel sandbox */
    }
    decoys_unwatched(r->sb, bus);
    r->out = &r->sout, r->err = &r->serr;
    struct sg_hasher *h = sg_hasher_new(); /* both streams' */
    stream_init(r->out, r->sb->stdout_fd, 0, plan, h);
    stream_init(r->err, r->sb->stderr_fd, 1, plan, h);
    r->sb->stdout_fd = r->sb->stderr_fd = -1; /* the streams own them now */
    /* a larger pipe: fewer wake-ups of the loop and of a writing skill */
    fcntl(r->out->fd, F_SETPIPE_SZ, 1 << 20);
    fcntl(r->sb->stdin_fd, F_SETFL, O_NONBLOCK);
    r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {.it_value = {.tv_sec = plan->limits[SG_PL_TIMEOUT].value}};
    timerfd_settime(r->tfd, 0, &its, NULL);
    r->asker = sg_fetch_asker_of(perm);
    r->net = sg_egress_new(plan, bus, &r->asker, r->sb->egress_fd);
    sg_egress_publish(r->net, r->sb->pidfd); /* a page the skill serves for the person */
    r->ex = sg_exec_new(plan, perm, bus, r->sb->notify_fd);
    r->conn = sg_sockconn_new(plan, bus, perm, r->sb->notify_fd, r->sb->own_dev,
                              r->sb->nown_dev);
    r->dc = sg_diskcap_new(plan, bus);
    /* the writes the broker does in the private views land only on the
     * writable ones (/tmp, HOME, /dev/shm: the roots pid 1 handed over),
     * never on the sandbox's other tmpfs (/run, /var), which Landlock keeps
     * from the skill and would not keep from the broker */
    dev_t views[SG_VIEWS];
    size_t nviews = 0;
    for (int i = 0; i < SG_VIEWS; i++) {
        struct stat vst;
        if (r->sb->view_fd[i] >= 0 && fstat(r->sb->view_fd[i], &vst) == 0)
            views[nviews++] = vst.st_dev;
    }
    sg_diskcap_own_fs(r->dc, views, nviews);
    r->reads = plan->observe_reads ? sg_reads_new(plan) : NULL;
    cleanup_free char *cmdline = command_line(plan);
    sg_bus_emit(bus, SG_EV_SKILL_STARTED,
                json_pack("{s:s, s:s, s:s}", "run_id", plan->run_id, "command", cmdline, "cwd",
                          plan->cwd),
                "%s started: %s", plan->skill_name, cmdline);
    r->live = (struct sg_session_live){.pid = r->sb->pid, .started_ms = res->started_ms,
                                       .memory_bytes = sg_sandbox_memory_usage(r->sb)};
    r->mem_read_ms = r->mem_next_ms = now_ms();
    if (bs.have_views)
        r->views = bs.views; /* the session owns it now */
    else
        home_then_baseline(plan, r->sb, bus, &r->views);
    /* "go" last: the entrypoint's exec comes back at once as a notification
     * the loop must answer */
    sg_sandbox_go(r->sb);
    *out = r;
    return 0;
}

size_t sg_session_sources(struct sg_session *r, bool shared, struct sg_loop_source *out, size_t max)
{
    /* dispatched in this order: output before the requests a skill made
     * after printing it (its prompt comes after the lines); the
     * notifications before what waits on them */
    const struct sg_loop_source src[] = {
        {"output", output_fds, output_dispatch, NULL, r},
        {"nflog", nflog_fds, nflog_dispatch, NULL, r},
        {"wasi", wasi_fds, wasi_dispatch, NULL, r},
        {"egress", egress_fds, egress_dispatch, egress_timeout, r},
        {"permissions", perm_fds, perm_dispatch, perm_timeout, r},
        {"decoys", decoy_fds, decoy_dispatch, NULL, r},
        {"notifications", notify_fds, notify_dispatch, NULL, r},
        {"exec", NULL, exec_dispatch, exec_timeout, r},
        {"connect", conn_fds, conn_dispatch, NULL, r},
        {"notifications closed", NULL, notify_hup_dispatch, NULL, r},
        {"stdin", stdin_fds, stdin_dispatch, NULL, r},
        {"control", ctl_fds, ctl_dispatch, NULL, r},
        {"disk", NULL, disk_dispatch, disk_timeout, r},
        {"memory", NULL, mem_dispatch, mem_timeout, r},
        {"timeout", timer_fds, timer_dispatch, NULL, r},
        {"pid 1", pid_fds, pid_dispatch, NULL, r},
    };
    _Static_assert(SG_ARRAY_LEN(src) == SG_SESSION_SOURCES, "session.h counts the sources");
    r->shared = shared;
    size_t n = SG_ARRAY_LEN(src) < max ? SG_ARRAY_LEN(src) : max;
    memcpy(out, src, n * sizeof *src);
    return n;
}

bool sg_session_running(const struct sg_session *r, int *cap_ms)
{
    *cap_ms = -1;
    if (r->out->fd < 0 && r->err->fd < 0 && r->exited)
        return false;
    if (!r->exited)
        return true;
    int64_t left = r->drain_deadline - now_ms();
    /* every process is dead; a pipe still open would be a bug, not a wait */
    *cap_ms = left > 0 ? (int)left : 0;
    return left > 0;
}

void sg_session_cancel(struct sg_session *r)
{
    r->cancelled = true;
    sg_session_stop(r);
}

void sg_session_interrupt(struct sg_session *r, int signo)
{
    if (!r->interrupted)
        r->interrupted = signo;
    sg_session_stop(r);
}

void sg_session_stop(struct sg_session *r)
{
    if (!r->exited && !r->stopped) {
        r->stopped = true;
        sg_sandbox_kill(r->sb);
    }
}

void sg_session_live(struct sg_session *r, struct sg_session_live *live)
{
    r->live.exited = r->exited;
    r->live.paused = r->pause_start_ms != 0;
    r->live.paused_ms = r->paused_ms + (r->pause_start_ms ? now_ms() - r->pause_start_ms : 0);
    /* the broker's watch keeps live.memory_bytes itself (mem_dispatch) */
    bool watched = r->plan->limits[SG_PL_MEMORY].mech == SG_MECH_RESIDENT;
    if (!watched && now_ms() - r->mem_read_ms >= 250) { /* a cgroup read is a few syscalls */
        /* the peak: it stays once the cgroup is gone, and where the kernel
         * keeps no peak, the largest reading is the best there is */
        long long m = sg_sandbox_memory_usage(r->sb);
        if (m > r->live.memory_bytes)
            r->live.memory_bytes = m;
        r->mem_read_ms = now_ms();
    }
    *live = r->live;
}

static void emit_limit_hits(struct sg_session *r, struct sg_limit_hits *out)
{
    const struct sg_plan *plan = r->plan;
    struct sg_limit_hits hits;
    sg_sandbox_limit_hits(r->sb, &hits);
    *out = hits;
    if (hits.memory)
        sg_bus_emit(r->bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:s, s:b}", "limit", "memory", "value",
                              (json_int_t)plan->limits[SG_PL_MEMORY].value, "mechanism",
                              sg_mechanism_name(plan->limits[SG_PL_MEMORY].mech), "prevented", 1),
                    "memory limit (%lld MB) reached", plan->limits[SG_PL_MEMORY].value);
    if (hits.pids)
        sg_bus_emit(r->bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:s, s:b}", "limit", "pids", "value",
                              (json_int_t)plan->limits[SG_PL_PIDS].value, "mechanism",
                              sg_mechanism_name(plan->limits[SG_PL_PIDS].mech), "prevented", 1),
                    "process limit (%lld) reached: new processes refused",
                    plan->limits[SG_PL_PIDS].value);
}

void sg_session_finish(struct sg_session *r, struct sg_run_result *res)
{
    sg_perm_cancel_all(r->perm); /* held requests are answered before their sockets go */
    pace_timeout(r);             /* and a pause they held ends, said in the trace */
    sg_egress_free(r->net);
    sg_exec_free(r->ex);
    sg_sockconn_free(r->conn);
    sg_diskcap_free(r->dc);
    drain_last(r);
    free(r->wasi);
    r->wasi = NULL;
    sg_views_report(r->plan, r->sb, &r->views, r->bus);
    home_save(r->plan, r->sb, r->bus);
    sg_views_base_free(&r->views);
    sg_reads_report(r->reads, r->sb->view_fd, r->bus);
    sg_reads_free(r->reads);
    for (struct stream *st = r->out; st; st = st == r->out ? r->err : NULL)
        if (st->fd >= 0)
            close(st->fd);
    if (r->have_watchdog)
        timer_delete(r->watchdog); /* before pid 1's pidfd can go */
    close(r->tfd);
    for (struct stream *st = r->out; st; st = st == r->out ? r->err : NULL) {
        /* passed on as they came (skillgate wrap, no terminal): no one's
         * screen was skillgate's to guard */
        if (!st->escapes || r->plan->copy_output)
            continue;
        json_t *ex = json_array();
        for (size_t i = 0; i < st->nexamples; i++)
            json_array_append_new(ex, json_string(st->examples[i]));
        sg_bus_emit(r->bus, SG_EV_OUTPUT_ESCAPES,
                    json_pack("{s:s, s:I, s:I, s:o, s:b}", "stream", st->which ? "stderr" : "stdout",
                              "sequences", (json_int_t)st->escapes, "colours",
                              (json_int_t)st->colours, "examples", ex, "prevented", 1),
                    "%llu terminal control sequence%s in %s (first: %s): skillgate's screens "
                    "show them escaped; on a terminal they could retitle, move or clear what a "
                    "person sees",
                    (unsigned long long)st->escapes, st->escapes == 1 ? "" : "s",
                    st->which ? "stderr" : "stdout", st->examples[0]);
    }
    res->bytes[0] = r->out->bytes, res->bytes[1] = r->err->bytes;
    char digests[2][SG_DIGEST_STRLEN];
    sg_hasher_finish(r->out->hash, digests);
    memcpy(res->out_sha256, digests[0], sizeof res->out_sha256);
    memcpy(res->err_sha256, digests[1], sizeof res->err_sha256);
    res->dropped[0] = r->out->dropped, res->dropped[1] = r->err->dropped;
    res->skill_status = r->status;
    res->ended_ms = now_ms();
    struct sg_limit_hits hits;
    emit_limit_hits(r, &hits);
    long long peak = sg_sandbox_memory_usage(r->sb);
    res->memory_peak = peak > r->live.memory_bytes ? peak : r->live.memory_bytes;
    if (res->memory_peak < 0)
        res->memory_peak = 0;
    res->pids_peak = sg_sandbox_pids_peak(r->sb);
    if (res->pids_peak < 0)
        res->pids_peak = 0;
    sg_sandbox_cleanup(r->sb);
    say_how_it_ended(r, res);
    say_which_limit(r, &hits, res);
    r->bus->layer = NULL;
    free(r);
}
