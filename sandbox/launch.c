/* Launching a skill. The order, top to bottom:
 *
 *   broker                                  sandbox pid 1 (new user, mount, pid,
 *                                           net, ipc, uts and cgroup namespaces)
 *   clone ────────────────────────────────► parent-death signal, hostname
 *   uid/gid maps                            lo up, netlink sockets    (netns.c)
 *   netlink fds ◄────────────── "netlink" ─┤
 *   nflog fd ◄───────────────── "nflog" ───┤ NFLOG socket
 *   proxy, DNS fds ◄─────────── "egress" ──┤ proxy and DNS listeners
 *   "mapped" ─────────────────────────────► wait "mapped"
 *   cgroups made (v1: "tasks" opened;       mounts + pivot_root       (mounts.c)
 *     v2: pid 1 moved in)                   decoys                    (decoy.c)
 *   nft table, routes through the
 *     netlink fds                (netns.c)
 *   seccomp filter (built at build time)
 *     ─── "placed" + tasks fds + filter ──► enter the cgroups (v1)
 *                                           empty the bounding
 *                                             and ambient sets
 *                                           vfork the skill ┐
 *                                           reaper loop     │ skill process:
 *                                                           │ setsid, stdio, cwd
 *                                                           │ rlimits, identity
 *                                                           │ drop capabilities
 *                                                           │ no_new_privs
 *                                                           │ Landlock  (landlock.c)
 *   notify fd ◄──────────── "ready" + seccomp fd ◄──────────┤ seccomp   (seccomp.c)
 *   "go" ───────────────────────────────────────────────────► execve
 *
 * Both sides work at once, on two cores: pid 1 needs the maps only for its
 * mounts, and the broker, as the namespace's owner, may configure pid 1's
 * network through sockets opened there.
 *
 * The skill never holds a capability of the initial user namespace and never
 * runs as host root; when pid 1 dies every process of the sandbox dies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "memwatch.h"
#include "landlock.h"
#include "decoy.h"
#include "mounts.h"
#include "netns.h"
#include "sandbox.h"
#include "config.h"
#include "pin.h"
#include "seccomp_filter.h"
#include "util.h"
#include "wasm.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

/* ---- control messages ---- */

static int ctl_send_fds(int fd, int type, int err, int status, const char *step,
                        const int *fds, size_t nfds);

static int ctl_send(int fd, int type, int err, int status, const char *step, int pass_fd)
{
    return ctl_send_fds(fd, type, err, status, step, &pass_fd, pass_fd >= 0 ? 1 : 0);
}

static int ctl_send_fds(int fd, int type, int err, int status, const char *step,
                        const int *fds, size_t nfds)
{
    struct sg_ctl_msg m = {.type = type, .err = err, .status = status};
    if (step)
        snprintf(m.step, sizeof m.step, "%s", step);
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union {
        char buf[CMSG_SPACE(sizeof(int) * SG_CTL_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > SG_CTL_MAX_FDS)
        nfds = SG_CTL_MAX_FDS;
    if (nfds > 0) {
        msg.msg_control = u.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    for (;;) {
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

/* Receive one message and up to max fds; *nfds says how many came. */
static int ctl_recv_fds(int fd, struct sg_ctl_msg *m, int *fds, size_t max, size_t *nfds);

/* Receive one message (and an fd, if one came). 0, -EPIPE on EOF, -errno. */
static int ctl_recv(int fd, struct sg_ctl_msg *m, int *got_fd)
{
    int fds[SG_CTL_MAX_FDS];
    size_t n = 0;
    int r = ctl_recv_fds(fd, m, fds, SG_CTL_MAX_FDS, &n);
    if (got_fd)
        *got_fd = n > 0 ? fds[0] : -1;
    for (size_t i = got_fd ? 1 : 0; i < n; i++)
        close(fds[i]);
    return r;
}

static int ctl_recv_fds(int fd, struct sg_ctl_msg *m, int *fds, size_t max, size_t *nfds)
{
    struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
    union {
        char buf[CMSG_SPACE(sizeof(int) * SG_CTL_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    *nfds = 0;
    ssize_t n;
    do
        n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    if ((size_t)n != sizeof *m)
        return -EBADMSG;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (*nfds < max)
                fds[(*nfds)++] = f;
            else
                close(f);
        }
    }
    return 0;
}

/* ---- inside the sandbox ---- */

static __attribute__((noreturn)) void die(int ctl, const char *step, int err)
{
    ctl_send(ctl, SG_CTL_ERROR, err < 0 ? -err : err, 0, step, -1);
    _exit(125);
}

/* The bounding and ambient sets need CAP_SETPCAP to shrink: before any
 * change of identity. */
static int drop_bounding(void)
{
    /* capabilities are numbered from 0 without gaps: the first the kernel
     * does not know (EINVAL) ends them. This probe is the kernel's
     * cap_last_cap, learnt in the one pass (a read of /proc/sys would cost
     * three calls to save one), and it holds on a kernel that knows more
     * capabilities than our headers. */
    for (int c = 0; c <= 63; c++) {
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return -errno;
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    return 0;
}

/* keep: a capability to hold on to (pid 1 keeps CAP_KILL of its own user
 * namespace), or -1 */
static int drop_caps(int keep)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {{0}};
    if (keep >= 0 && keep < 64) {
        d[keep / 32].effective = d[keep / 32].permitted = 1U << (keep % 32);
    }
    if (syscall(SYS_capset, &h, d) < 0)
        return -errno;
    return 0;
}

static int set_rlimits(const struct sg_plan *p)
{
    struct rlimit core = {0, 0};
    struct rlimit fsize = {(rlim_t)p->limits[SG_PL_FSIZE].value,
                           (rlim_t)p->limits[SG_PL_FSIZE].value};
    if (setrlimit(RLIMIT_CORE, &core) < 0 || setrlimit(RLIMIT_FSIZE, &fsize) < 0)
        return -errno;
    if (p->limits[SG_PL_NOFILE].mech == SG_MECH_RLIMIT) {
        rlim_t v = (rlim_t)p->limits[SG_PL_NOFILE].value;
        struct rlimit nf = {v, v};
        if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
            return -errno;
    }
    if (p->limits[SG_PL_PIDS].mech == SG_MECH_RLIMIT) {
        rlim_t v = (rlim_t)p->limits[SG_PL_PIDS].value;
        struct rlimit np = {v, v};
        if (setrlimit(RLIMIT_NPROC, &np) < 0)
            return -errno;
    }
    return 0;
}

/* The entrypoint, resolved before launch: one exec, the pre-approved one. */
static void exec_skill(const struct sg_plan *p)
{
    execve(p->exec_path, p->argv, p->envp);
}

/* A WASM run's two descriptors (wasm.h), set last, since the control
 * socket may hold one of their numbers until then: fd 3 the report socket
 * (write only: the runner's end is shut for reading), fd 4 the sealed
 * configuration, which the runner reads and closes before the module
 * starts. */
static void wasi_fds(int *ctl, int rep, int cfg)
{
    if (rep < 0)
        return;
    int c = *ctl <= 4 ? fcntl(*ctl, F_DUPFD_CLOEXEC, 5) : *ctl;
    if (c < 0)
        _exit(127);
    *ctl = c;
    int r = fcntl(rep, F_DUPFD_CLOEXEC, 5), g = fcntl(cfg, F_DUPFD_CLOEXEC, 5);
    if (r < 0 || g < 0 || shutdown(r, SHUT_RD) < 0 || dup2(r, 3) < 0 || dup2(g, 4) < 0) {
        ctl_send(*ctl, SG_CTL_EXEC_FAILED, errno, 0, "the WASI runner's descriptors", -1);
        _exit(127);
    }
}

static __attribute__((noreturn)) void skill_main(const struct sg_plan *p, int in, int out,
                                                 int err, int ctl, int rep, int cfg,
                                                 const struct sock_filter *bpf, size_t nbpf)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    if (setsid() < 0)
        die(ctl, "setsid", errno);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        die(ctl, "stdio", errno);
    /* Nothing the broker did not mean to give survives exec. */
    syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
    if (chdir(p->cwd) < 0)
        die(ctl, "chdir to the skill folder", errno);
    int r;
    if ((r = set_rlimits(p)) < 0)
        die(ctl, "rlimits", r);
    /* setgroups, setresgid and setresuid as the raw calls: the skill
     * process is one thread, and glibc's wrappers would first signal every
     * thread the broker had when it cloned pid 1 (gone here: a getpid,
     * tgkill and futex each, for nothing) */
    if (p->as_root && syscall(SYS_setgroups, 0, NULL) < 0)
        die(ctl, "setgroups", errno);
    /* the bounding and ambient sets came empty from pid 1 (pid1_main) */
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE |
                                     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
              0, 0, 0) < 0)
        die(ctl, "securebits", errno);
    if (syscall(SYS_setresgid, p->skill_gid, p->skill_gid, p->skill_gid) < 0 ||
        syscall(SYS_setresuid, p->skill_uid, p->skill_uid, p->skill_uid) < 0)
        die(ctl, "identity", errno);
    if ((r = drop_caps(-1)) < 0)
        die(ctl, "drop capabilities", r);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die(ctl, "no_new_privs", errno);
    if (!p->degraded && (r = sg_landlock_apply(p)) < 0)
        die(ctl, "Landlock", r);
    /* the broker's precompiled filter; compiled here only if none came */
    int nfd = nbpf ? sg_seccomp_install(bpf, nbpf)
                   : sg_seccomp_load(p->profile, p->observe_reads ? SG_SECCOMP_OBSERVE_READS : 0);
    if (nfd < 0)
        die(ctl, "seccomp", nfd);
    if (ctl_send(ctl, SG_CTL_READY, 0, 0, NULL, nfd) < 0)
        _exit(125);
    close(nfd);
    struct sg_ctl_msg m;
    if (ctl_recv(ctl, &m, NULL) < 0 || m.type != SG_CTL_GO)
        _exit(125);
    /* No address-space limit: what a program reserves is not what it
     * uses (memwatch.h); without a cgroup the broker watches what it
     * touches. */
    wasi_fds(&ctl, rep, cfg);
    exec_skill(p);
    ctl_send(ctl, SG_CTL_EXEC_FAILED, errno, 0, p->argv[0], -1);
    _exit(127);
}

/* Is path (pid 1's view) a tmpfs of the sandbox's own, no bind over it?
 * Its device, else 0. */
static dev_t own_tmpfs(const struct sg_plan *p, const char *path)
{
    struct stat st;
    struct statfs sf;
    if (!sg_path_private(p, path) || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
        statfs(path, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
        return 0;
    return st.st_dev;
}

/* pid 1, right after its mounts and before any skill code runs: the
 * devices of the tmpfs instances it made (and /dev/shm in its /dev), eight
 * to a message (in step; status: how many). What lies on them is the
 * sandbox's own; everything else is the host's (sockconn.c). */
static void send_own_filesystems(int ctl, const struct sg_plan *p)
{
    uint64_t devs[SG_OWN_FS_MAX];
    size_t n = 0;
    char shm[PATH_MAX];
    for (size_t i = 0; i < p->nmounts && n + 2 <= SG_ARRAY_LEN(devs); i++) {
        const struct sg_mount *m = &p->mounts[i];
        dev_t d;
        if (m->kind != SG_MNT_TMPFS && m->kind != SG_MNT_DEV)
            continue;
        if ((d = own_tmpfs(p, m->dst)) != 0)
            devs[n++] = (uint64_t)d;
        if (m->kind == SG_MNT_DEV && snprintf(shm, sizeof shm, "%s/shm", m->dst) < (int)sizeof shm &&
            (d = own_tmpfs(p, shm)) != 0)
            devs[n++] = (uint64_t)d;
    }
    _Static_assert(sizeof((struct sg_ctl_msg *)0)->step == 8 * sizeof(uint64_t), "8 to a message");
    for (size_t k = 0; k < n; k += 8) {
        struct sg_ctl_msg msg = {.type = SG_CTL_OWNFS, .status = (int)(n - k < 8 ? n - k : 8)};
        memcpy(msg.step, devs + k, (size_t)msg.status * sizeof *devs);
        struct iovec iov = {.iov_base = &msg, .iov_len = sizeof msg};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        while (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
            ;
    }
}

/* Kill and reap every other process of the namespace. A process forked
 * while a kill(-1) went round is caught by the next round: its parent's
 * death wakes the wait. Never blocks on one that will not die: after 10 s
 * pid 1 goes on, and its own exit takes the rest. */
static void kill_all(void)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD); /* blocked in pid 1: it waits for it below */
    const struct timespec slice = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 200; i++) {
        kill(-1, SIGKILL);
        pid_t w;
        while ((w = waitpid(-1, NULL, __WALL | WNOHANG)) > 0)
            ;
        if (w < 0 && errno == ECHILD)
            return;
        sigtimedwait(&chld, NULL, &slice);
    }
}

/* pid 1: forward signals to the skill, reap every orphan, and leave when
 * the skill's own process does, taking every other process with it. They
 * are killed and reaped before "exit" goes out, so "exit" tells the broker
 * that nothing of the skill runs any more: it can write the trace while
 * the kernel tears pid 1's namespaces down (0.4-0.5 ms). */
static __attribute__((noreturn)) void reaper(pid_t skill, int ctl, const sigset_t *set)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            kill(-skill, sig);
            continue;
        }
        int status;
        pid_t w;
        while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
            if (w == skill) {
                kill_all();
                ctl_send(ctl, SG_CTL_EXIT, 0, status, NULL, -1);
                _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            }
        }
    }
}

/* skillgate wrap: stdin as a descriptor open for reading only (a pipe, a
 * FIFO, a file, a character device that is no terminal), or -1. O_CLOEXEC:
 * the clone inherits it and pid 1 puts it at 0. */
static int stdin_for_wrap(void)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) < 0 || isatty(STDIN_FILENO) || S_ISSOCK(st.st_mode) ||
        S_ISDIR(st.st_mode))
        return -1;
    int fl = fcntl(STDIN_FILENO, F_GETFL);
    if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY) /* a pipe's read end: as it is */
        return fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    /* open for writing too: the same object again, for reading only;
     * never blocks (a FIFO with no writer any more opens all the same) */
    int fd = open("/proc/self/fd/0", O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && (fl = fcntl(fd, F_GETFL)) >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

static __attribute__((noreturn)) void pid1_main(const struct sg_plan *p, const char *rundir,
                                                int in, int out, int err, int ctl, int rep,
                                                int cfg)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char step[96] = "";
    int r;
    /* Nothing of the network needs the uid map: it is done while the broker
     * writes the maps. Its first message is the namespace's netlink
     * sockets, through which the broker sends the table and routes. */
    if (sethostname(SG_SANDBOX_HOSTNAME, strlen(SG_SANDBOX_HOSTNAME)) < 0)
        die(ctl, "hostname", errno);
    int nl[SG_NL_FDS];
    if ((r = sg_net_open(nl)) < 0)
        die(ctl, "loopback up and netlink sockets", r);
    if (ctl_send_fds(ctl, SG_CTL_NETLINK, 0, 0, NULL, nl, SG_NL_FDS) < 0)
        _exit(125);
    close(nl[SG_NL_ROUTE]), close(nl[SG_NL_NFT]);
    int nflog = sg_nflog_open();
    if (nflog < 0)
        die(ctl, "NFLOG socket", nflog);
    if (ctl_send(ctl, SG_CTL_NFLOG, 0, 0, NULL, nflog) < 0)
        _exit(125);
    close(nflog);
    int eg[SG_EGRESS_FDS], egv[SG_EGRESS_FDS], egmask = 0;
    size_t negv = 0;
    if ((r = sg_egress_listeners(eg)) < 0)
        die(ctl, "proxy and DNS listeners", r);
    for (int i = 0; i < SG_EGRESS_FDS; i++) {
        if (eg[i] >= 0) {
            egv[negv++] = eg[i];
            egmask |= 1 << i;
        }
    }
    if (ctl_send_fds(ctl, SG_CTL_EGRESS, 0, egmask, NULL, egv, negv) < 0)
        _exit(125);
    for (size_t i = 0; i < negv; i++)
        close(egv[i]);
    struct sg_ctl_msg m;
    if (ctl_recv(ctl, &m, NULL) < 0 || m.type != SG_CTL_MAPPED)
        _exit(125); /* the broker is gone */
    if ((r = sg_mounts_setup(p, rundir, step, sizeof step)) < 0)
        die(ctl, step, r);
    /* the decoys' one group, then the decoys' handles in a packet of their
     * own; err and step: why some decoy made is not watched */
    struct sg_decoy_fh fh[SG_MAX_DECOYS];
    int derr;
    int group = sg_decoys_setup(p, fh, &derr, step, sizeof step);
    ctl_send(ctl, SG_CTL_DECOYS, derr, 0, step, group);
    if (group >= 0) {
        ssize_t k;
        while ((k = send(ctl, fh, sizeof fh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
            ;
        if (k != (ssize_t)sizeof fh)
            _exit(125); /* the broker is gone */
        close(group);
    }
    /* the private views' roots: what the skill leaves there is reported when
     * it ends (only directories of ours: a host folder bound there is not) */
    int views[SG_VIEWS];
    size_t nviews = 0;
    int mask = 0;
    for (int i = 0; i < SG_VIEWS; i++) {
        const char *vp = sg_view_path(p, i);
        int fd = vp ? open(vp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        if (fd >= 0) {
            views[nviews++] = fd;
            mask |= 1 << i;
        }
    }
    ctl_send_fds(ctl, SG_CTL_VIEWS, 0, mask, NULL, views, nviews);
    for (size_t i = 0; i < nviews; i++)
        close(views[i]);
    send_own_filesystems(ctl, p);
    /* the skill must be born inside the run's cgroup: a process moved later
     * would leave the children it already had behind. v1: the fds that come
     * with "placed" are the cgroups' "tasks" files, which pid 1 enters
     * itself (cgroup.h says why) */
    int tasks[SG_CTL_MAX_FDS];
    size_t ntasks = 0;
    if (ctl_recv_fds(ctl, &m, tasks, SG_CTL_MAX_FDS, &ntasks) < 0 || m.type != SG_CTL_PLACED)
        _exit(125);
    if (ntasks) {
        if ((r = sg_cgroup_enter(tasks, ntasks)) < 0)
            die(ctl, "enter the run's cgroups", -r);
        /* the cgroup namespace's root becomes the run's own cgroup */
        if (unshare(CLONE_NEWCGROUP) < 0)
            die(ctl, "cgroup namespace", errno);
    }
    /* status: the bytes of the seccomp filter that follow, compiled by the
     * broker meanwhile (0: the skill process compiles its own) */
    struct sock_filter *bpf = NULL;
    size_t nbpf = 0;
    if (m.status > 0 && (size_t)m.status <= SG_SECCOMP_MAX_INSNS * sizeof *bpf &&
        m.status % (int)sizeof *bpf == 0) {
        bpf = sg_xmalloc((size_t)m.status);
        if (recv(ctl, bpf, (size_t)m.status, 0) != m.status)
            die(ctl, "seccomp filter from the broker", EPROTO);
        nbpf = (size_t)m.status / sizeof *bpf;
    }
    sigset_t set;
    sigemptyset(&set);
    int fwd[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < SG_ARRAY_LEN(fwd); i++)
        sigaddset(&set, fwd[i]);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* The bounding and ambient sets are emptied once, here, for pid 1 and
     * the skill alike: both are inherited through vfork, and emptying them
     * takes no effective capability away (the skill process still changes
     * its identity and securebits, then drops the rest; pid 1 keeps
     * CAP_KILL). Done in each process, it was ~42 prctl calls twice. */
    if ((r = drop_bounding()) < 0)
        die(ctl, "drop the capability bounding set", r);
    /* vfork: pid 1 has nothing to do until the skill has exec'd, and not
     * copying its page tables saves a quarter of a millisecond per run.
     * skill_main never returns and only ends in exec or _exit; every
     * per-process setting it makes (fds, signals, credentials, Landlock,
     * seccomp, rlimits) is its own, only the memory is shared. */
    pid_t skill = vfork();
    if (skill < 0)
        die(ctl, "fork", errno);
    if (skill == 0)
        skill_main(p, in, out, err, ctl, rep, cfg, bpf, nbpf);
    close(in), close(out), close(err);
    if (rep >= 0)
        close(rep), close(cfg);
    drop_caps(CAP_KILL);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    reaper(skill, ctl, &set);
}

/* ---- in the broker ---- */

/* The WASI runner's configuration (wasm.h) in a sealed memfd: never in the
 * runtime's environment or argv, where the dry run, /proc and the 128 KiB
 * limit of one string would meet the module's environment and input. */
static int sealed_config(const char *text)
{
    if (!text)
        return -EINVAL;
    int fd = (int)syscall(SYS_memfd_create, "skillgate-wasi-config",
                          MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            return -e;
        }
        off += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
        lseek(fd, 0, SEEK_SET) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static int write_proc(pid_t pid, const char *file, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
    return sg_write_file(path, text);
}

/* A private directory of ours: refuse one someone else made or a symlink.
 * Its parents are made when missing (the state-folder fallback of
 * sg_runtime_dir); they are the user's own or root's. */
static int own_dir(const char *path)
{
    struct stat st;
    if (mkdir(path, 0700) < 0) {
        if (errno == ENOENT) {
            int r = sg_mkdir_parent(path, 0700);
            if (r < 0)
                return r;
            if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;
        } else if (errno != EEXIST) {
            return -errno;
        }
    }
    if (lstat(path, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return -EPERM;
    return 0;
}

/* Every bound host path, held as a descriptor from here on (pin.h), so
 * that neither the bind nor an approved write can be sent elsewhere by a
 * symlink swapped in later. The owner trusted besides root is the invoking
 * user: the sudo user under sudo, else whoever runs skillgate. */
/* A declared write folder made at launch (create_write_paths), by its
 * object. */
struct made {
    bool have;
    dev_t dev;
    ino_t ino;
};

static int pin_paths(const struct sg_plan *p, struct sg_sandbox *sb, const struct made *made,
                     char *step, size_t steplen)
{
    uid_t owner = p->as_root ? (p->via_sudo ? p->skill_uid : 0) : p->host_uid;
    sb->pins = sg_xmalloc((p->nmounts ? p->nmounts : 1) * sizeof *sb->pins);
    sb->npins = p->nmounts;
    for (size_t i = 0; i < p->nmounts; i++)
        sb->pins[i] = -1;
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (m->kind != SG_MNT_BIND_RO && m->kind != SG_MNT_BIND_RW)
            continue;
        char why[256] = "";
        int fd = sg_pin_path(m->src, owner, p->skill_uid, m->kind == SG_MNT_BIND_RW, why,
                             sizeof why);
        struct stat st;
        bool known = m->planned || made[i].have;
        dev_t dev = m->planned ? m->pdev : made[i].dev;
        ino_t ino = m->planned ? m->pino : made[i].ino;
        if (fd >= 0 && (!known || fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)) {
            /* not the object the plan's checks and questions were about
             * (or, made here, the folder made) */
            close(fd);
            fd = -ESTALE;
            snprintf(why, sizeof why, "it is not the folder it was when the run was planned "
                                      "and asked about: it changed since, and is not shown");
        }
        if (fd < 0) {
            bool work = p->cwd_is_work && !strcmp(m->dst, p->cwd);
            bool py = (p->python_env && !strcmp(m->dst, p->python_env)) ||
                      (p->python_base && !strcmp(m->dst, p->python_base));
            snprintf(step, steplen, "%s %s (%s)",
                     work ? "working folder" : py ? "Python environment" : "declared path", m->src,
                     why);
            return fd;
        }
        sb->pins[i] = fd;
    }
    return 0;
}

/* Declared write paths that do not exist yet are created (mkdir -p) as the
 * invoking user: under sudo that is the sudo user, who is also whom the
 * skill runs as, so every folder made is theirs. Plain root keeps what it
 * makes (a skill never owns a host folder: one made inside skillgate's own
 * config folder once let a skill forge grants there); the skill (nobody)
 * writes the declared folder through its group, root:nogroup 2770, which
 * nobody else may read or write. */
static int create_write_paths(const struct sg_plan *p, struct made *made)
{
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        struct stat st;
        if (m->kind != SG_MNT_BIND_RW || m->planned)
            continue;
        /* not there when the run was planned: made here, and only this
         * folder, as made, is bound (a name that appeared meanwhile, a
         * symlink among them, is refused by pin_paths) */
        if (lstat(m->src, &st) == 0)
            continue;
        uid_t u = p->via_sudo ? p->skill_uid : (uid_t)-1;
        gid_t g = p->via_sudo ? p->skill_gid : (gid_t)-1;
        int r = sg_mkdir_p(m->src, 0755, u, g);
        if (r < 0)
            return r;
        if (p->as_root && !p->via_sudo &&
            (lchown(m->src, 0, p->skill_gid) < 0 || chmod(m->src, 02770) < 0))
            return -errno;
        if (lstat(m->src, &st) == 0 && S_ISDIR(st.st_mode))
            made[i] = (struct made){.have = true, .dev = st.st_dev, .ino = st.st_ino};
    }
    return 0;
}

/* Decoy holders that were let go and may not have exited yet. */
static pid_t holders[16];
static size_t nholders;

static void reap_holders(bool wait)
{
    size_t k = 0;
    for (size_t i = 0; i < nholders; i++) {
        pid_t w;
        while ((w = waitpid(holders[i], NULL, wait ? 0 : WNOHANG)) < 0 && errno == EINTR)
            ;
        if (w == 0)
            holders[k++] = holders[i]; /* still closing */
    }
    nholders = k;
}

static void add_holder(pid_t pid)
{
    reap_holders(false);
    if (nholders == SG_ARRAY_LEN(holders))
        reap_holders(true); /* a long-lived broker never keeps more than this */
    holders[nholders++] = pid;
}

/* Closing the last reference to a fanotify group waits for an SRCU grace
 * period (~10 ms measured), so the last reference to the decoys' group
 * is held by a child that nobody waits for. It keeps only the decoys and
 * a pipe and exits once the broker has closed its own copies and the
 * pipe's other end (close_decoys); it is reaped without waiting, by the
 * next sg_sandbox_reap or, when the broker exits first, by init. (It was a
 * grandchild, whose parent exited at once so that close_decoys could reap
 * it: a second fork for nothing.) It is forked once the entrypoint has
 * exec'd (sg_sandbox_started): forked during setup, it took a core from
 * pid 1 forking the skill, and right after "go" the skill's own wake-up
 * (1-4 ms lost either way, measured). */
static void hold_decoys(struct sg_sandbox *sb)
{
    int hold[2];
    if (sb->decoy_fd < 0)
        return;
    if (pipe2(hold, O_CLOEXEC) < 0)
        return; /* the broker's own close then pays the wait */
    pid_t c = fork();
    if (c == 0) {
        int keep[] = {hold[0], sb->decoy_fd};
        sg_close_all_but(keep, SG_ARRAY_LEN(keep));
        char b;
        while (read(hold[0], &b, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(hold[0]);
    if (c < 0) {
        close(hold[1]);
        return;
    }
    sb->decoy_hold_fd = hold[1];
    sb->decoy_hold_pid = c; /* reaped by sg_sandbox_reap, once it is done */
}

static void close_decoys(struct sg_sandbox *sb)
{
    if (sb->decoy_hold_fd < 0)
        hold_decoys(sb); /* the skill never started */
    if (sb->decoy_fd >= 0)
        close(sb->decoy_fd);
    sb->decoy_fd = -1;
    if (sb->decoy_hold_fd >= 0)
        close(sb->decoy_hold_fd);
    sb->decoy_hold_fd = -1;
    /* the holder now waits out the grace period and exits: it is reaped
     * later (sg_sandbox_reap) or, when the broker leaves first, by init */
    if (sb->decoy_hold_pid > 0)
        add_holder(sb->decoy_hold_pid);
    sb->decoy_hold_pid = 0;
}

int sg_sandbox_clean_stale(void)
{
    sg_sandbox_reap(); /* the last run's pid 1 is gone by now */
    cleanup_free char *base = sg_runtime_dir();
    int n = sg_cgroup_clean_stale();
    DIR *d = opendir(base);
    if (!d)
        return n;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        if (sscanf(e->d_name, "run-%d-", &pid) != 1 || pid <= 0)
            continue;
        if (kill(pid, 0) == 0 || errno == EPERM)
            continue;
        char *dir = sg_xasprintf("%s/%s", base, e->d_name);
        n += rmdir(dir) == 0; /* an empty mount point: nothing else is ever in it */
        free(dir);
    }
    closedir(d);
    return n;
}

/* The next message from pid 1 and the fds that came with it, waiting at
 * most 20 s: 0, -ETIMEDOUT, -EPIPE when it is gone, -errno. */
static int ctl_wait(int fd, struct sg_ctl_msg *m, int *fds, size_t *nfds)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    *nfds = 0;
    int n;
    do
        n = poll(&pfd, 1, 20000);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -ETIMEDOUT;
    return ctl_recv_fds(fd, m, fds, SG_CTL_MAX_FDS, nfds);
}

/* pid 1 works while the broker writes its maps: when a write fails because
 * pid 1 has already died, the error it sent says why. */
static void pid1_error(int ctl, int *r, char *step, size_t steplen)
{
    struct sg_ctl_msg m;
    struct pollfd pfd = {.fd = ctl, .events = POLLIN};
    while (poll(&pfd, 1, 0) > 0 && ctl_recv(ctl, &m, NULL) == 0) {
        if (m.type == SG_CTL_ERROR) {
            *r = -m.err;
            snprintf(step, steplen, "%s", m.step);
            return;
        }
    }
}

/* A helper's failure: step says what, the caller cleans up. */
#define STEP_FAIL(code, ...)                        \
    do {                                            \
        snprintf(step, steplen, __VA_ARGS__);       \
        return (code);                              \
    } while (0)

/* pid 1 has its maps: make the cgroups (pid 1 in them), set up the
 * network namespace's table and routes through the netlink sockets pid 1
 * sends, and send "placed" with the cgroups' fds and the seccomp filter. */
static int place(const struct sg_plan *p, pid_t pid, struct sg_sandbox *sb, char *step,
                 size_t steplen)
{
    /* The cgroups and the seccomp filter are made while pid 1 sets up its
     * network and mounts, and sent with "placed"; pid 1 forks the skill only
     * once it has them. v1: pid 1 enters the cgroups itself through the
     * "tasks" fds. v2: moving pid 1 in from here takes the kernel's
     * threadgroup lock (an RCU grace period), also overlapped. Without a
     * filter the skill process compiles its own. */
    int tasks[SG_CGROUP_V1_MAX];
    int r;
    if ((r = sg_cgroup_prepare(p, sb, tasks)) < 0)
        STEP_FAIL(r, "cgroup");
    if ((r = sg_cgroup_setup(p, pid, sb)) < 0) {
        for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
            if (tasks[i] >= 0)
                close(tasks[i]);
        STEP_FAIL(r, "cgroup");
    }
    int ntasks = 0;
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
        if (tasks[i] >= 0)
            tasks[ntasks++] = tasks[i];
    /* pid 1's first message: the network namespace's netlink sockets, for
     * the table and routes (netns.h) */
    struct sg_ctl_msg m;
    int fds[SG_CTL_MAX_FDS];
    size_t nfds = 0;
    if ((r = ctl_wait(sb->ctl_fd, &m, fds, &nfds)) < 0 || m.type != SG_CTL_NETLINK ||
        nfds != SG_NL_FDS) {
        for (size_t k = 0; k < nfds; k++)
            close(fds[k]);
        for (int i = 0; i < ntasks; i++)
            close(tasks[i]);
        if (r == 0 && m.type == SG_CTL_ERROR)
            STEP_FAIL(-m.err, "%s", m.step);
        STEP_FAIL(r < 0 ? r : -EBADMSG, "handshake");
    }
    char netstep[64] = "";
    r = sg_net_setup(fds, netstep, sizeof netstep);
    close(fds[SG_NL_ROUTE]), close(fds[SG_NL_NFT]);
    if (r < 0) {
        for (int i = 0; i < ntasks; i++)
            close(tasks[i]);
        STEP_FAIL(r, "%s", netstep);
    }
    struct sock_filter *bpf = NULL;
    size_t nbpf = 0;
    if (sg_seccomp_filter(p->profile, p->observe_reads ? SG_SECCOMP_OBSERVE_READS : 0, &bpf,
                          &nbpf) < 0)
        nbpf = 0;
    r = ctl_send_fds(sb->ctl_fd, SG_CTL_PLACED, 0, (int)(nbpf * sizeof *bpf), NULL, tasks,
                     (size_t)ntasks);
    for (int i = 0; i < ntasks; i++)
        close(tasks[i]);
    if (r == 0 && nbpf) {
        ssize_t k = send(sb->ctl_fd, bpf, nbpf * sizeof *bpf, MSG_NOSIGNAL);
        r = k == (ssize_t)(nbpf * sizeof *bpf) ? 0 : k < 0 ? -errno : -EIO;
    }
    free(bpf);
    if (r < 0)
        STEP_FAIL(r, "handshake");
    return 0;
}

/* "decoys": the group (if any) and, in the next packet, the decoys'
 * handles; err and step say why a decoy is not watched (fanotify_init
 * refused: the user's fanotify groups are used up). */
static int take_decoys(struct sg_sandbox *sb, const struct sg_ctl_msg *m, int *fds, size_t nfds)
{
    sb->decoy_err = m->err;
    memcpy(sb->decoy_fail, m->step, sizeof sb->decoy_fail);
    sb->decoy_fail[sizeof sb->decoy_fail - 1] = '\0';
    for (size_t k = 1; k < nfds; k++)
        close(fds[k]);
    if (nfds == 0)
        return 0;
    ssize_t n;
    do
        n = recv(sb->ctl_fd, sb->decoy_fh, sizeof sb->decoy_fh, 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof sb->decoy_fh) {
        close(fds[0]);
        memset(sb->decoy_fh, 0, sizeof sb->decoy_fh);
        return n < 0 ? -errno : -EBADMSG;
    }
    sb->decoy_fd = fds[0];
    return 0;
}

/* pid 1's messages until "ready": the decoys' and egress listeners' fds,
 * the NFLOG socket, then the seccomp notification fd; and every declared
 * path's bind checked against its pin before anything runs. */
static int await_ready(const struct sg_plan *p, struct sg_sandbox *sb, char *step, size_t steplen,
                       const struct sg_launch_hooks *hooks)
{
    struct sg_ctl_msg m;
    int fds[SG_CTL_MAX_FDS];
    size_t nfds = 0;
    int r;
    for (;;) {
        if ((r = ctl_wait(sb->ctl_fd, &m, fds, &nfds)) < 0)
            STEP_FAIL(r, r == -ETIMEDOUT ? "waiting for the sandbox to be ready"
                                    : "sandbox setup (it exited)");
        if (m.type == SG_CTL_DECOYS) {
            if ((r = take_decoys(sb, &m, fds, nfds)) < 0)
                STEP_FAIL(r, "handshake (decoys)");
            continue;
        }
        if (m.type == SG_CTL_EGRESS || m.type == SG_CTL_VIEWS) {
            /* status says which slots the fds that came fill, in order */
            int *slots = m.type == SG_CTL_EGRESS ? sb->egress_fd : sb->view_fd;
            int nslots = m.type == SG_CTL_EGRESS ? SG_EGRESS_FDS : SG_VIEWS;
            size_t k = 0;
            for (int i = 0; i < nslots && k < nfds; i++)
                if (m.status & (1 << i))
                    slots[i] = fds[k++];
            while (k < nfds)
                close(fds[k++]);
            if (m.type == SG_CTL_VIEWS && hooks && hooks->views)
                hooks->views(hooks->ctx, sb);
            continue;
        }
        if (m.type == SG_CTL_OWNFS) {
            uint64_t devs[8];
            memcpy(devs, m.step, sizeof devs);
            for (int k = 0; k < m.status && k < 8 && sb->nown_dev < SG_OWN_FS_MAX; k++)
                sb->own_dev[sb->nown_dev++] = (dev_t)devs[k];
            for (size_t k = 0; k < nfds; k++)
                close(fds[k]);
            continue;
        }
        int nfd = nfds > 0 ? fds[0] : -1;
        for (size_t k = 1; k < nfds; k++)
            close(fds[k]);
        if (m.type == SG_CTL_ERROR) {
            if (nfd >= 0)
                close(nfd);
            STEP_FAIL(-m.err, "%s", m.step);
        }
        if (m.type == SG_CTL_NFLOG && nfd >= 0) {
            sb->nflog_fd = nfd;
            continue;
        }
        if (m.type != SG_CTL_READY || nfd < 0) {
            if (nfd >= 0)
                close(nfd);
            STEP_FAIL(-EBADMSG, "handshake");
        }
        sb->notify_fd = nfd;
        /* pid 1 bound each declared path by name in its own namespace (a
         * descriptor from ours cannot be bound there): before anything
         * runs, each bind must show the very folder pinned here */
        for (size_t i = 0; i < sb->npins; i++)
            if (sb->pins[i] >= 0 && (r = sg_pin_check(sb->pid, p->mounts[i].dst, sb->pins[i])) < 0)
                STEP_FAIL(r, "declared path %s changed while the sandbox was built",
                          p->mounts[i].src);
        return 0;
    }
}
#undef STEP_FAIL

int sg_sandbox_launch(const struct sg_plan *p, struct sg_sandbox *sb, char *step, size_t steplen,
                      const struct sg_launch_hooks *hooks)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, ctl[2] = {-1, -1}, rep[2] = {-1, -1};
    int cfg = -1;
    int r;
    cleanup_free struct made *made = NULL;
    memset(sb, 0, sizeof *sb);
    sb->pidfd = sb->stdin_fd = sb->stdout_fd = sb->stderr_fd = sb->ctl_fd = sb->notify_fd = -1;
    sb->nflog_fd = sb->decoy_hold_fd = sb->wasi_fd = -1;
    sb->decoy_fd = -1;
    for (int i = 0; i < SG_EGRESS_FDS; i++)
        sb->egress_fd[i] = -1;
    for (int i = 0; i < SG_VIEWS; i++)
        sb->view_fd[i] = -1;
#define FAIL(code, ...)                             \
    do {                                            \
        r = (code);                                 \
        snprintf(step, steplen, __VA_ARGS__);       \
        goto fail;                                  \
    } while (0)
    cleanup_free char *base = sg_runtime_dir();
    if ((r = own_dir(base)) < 0)
        FAIL(r, "run directory %s", base);
    sb->rundir = sg_xasprintf("%s/run-%s", base, p->run_id);
    if (mkdir(sb->rundir, 0700) < 0)
        FAIL(-errno, "run directory %s", sb->rundir);
    made = sg_xcalloc(p->nmounts ? p->nmounts : 1, sizeof *made);
    if ((r = create_write_paths(p, made)) < 0)
        FAIL(r, "create a declared write path");
    if ((r = pin_paths(p, sb, made, step, steplen)) < 0)
        goto fail;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
        (p->wasm && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rep) < 0))
        FAIL(-errno, "pipes");
    if (p->wasm && (cfg = sealed_config(p->wasm->config)) < 0)
        FAIL(cfg, "the WASI runner's configuration");
    /* a wrapped command reads the broker's own stdin, as it would bare,
     * opened again for reading only (stdin opened read-write must not
     * become a way to write a file outside); never a terminal (the skill
     * never sees the broker's) nor a socket: then the empty pipe */
    int own_in = p->wrap ? stdin_for_wrap() : -1;
    int pidfd = -1;
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                          CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PIDFD | SIGCHLD;
    pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, &pidfd, NULL, 0);
    if (pid < 0) {
        int e = errno;
        if (own_in >= 0)
            close(own_in);
        FAIL(-e, "clone (are unprivileged user namespaces enabled?)");
    }
    if (pid == 0) {
        close(in[1]), close(out[0]), close(err[0]), close(ctl[0]);
        if (rep[0] >= 0)
            close(rep[0]);
        pid1_main(p, sb->rundir, own_in >= 0 ? own_in : in[0], out[1], err[1], ctl[1], rep[1],
                  cfg);
    }
    if (own_in >= 0) { /* nothing for the broker to write */
        close(own_in);
        close(in[1]);
        in[1] = -1;
    }
    sb->pid = pid;
    sb->pidfd = pidfd;
    close(in[0]), close(out[1]), close(err[1]), close(ctl[1]);
    in[0] = out[1] = err[1] = ctl[1] = -1;
    if (rep[1] >= 0)
        close(rep[1]);
    if (cfg >= 0)
        close(cfg);
    rep[1] = cfg = -1;
    sb->wasi_fd = rep[0];
    if (sb->wasi_fd >= 0) {
        shutdown(sb->wasi_fd, SHUT_WR);
        fcntl(sb->wasi_fd, F_SETFL, O_NONBLOCK);
    }
    sb->stdin_fd = in[1], sb->stdout_fd = out[0], sb->stderr_fd = err[0], sb->ctl_fd = ctl[0];
    /* a step that fails because pid 1 is gone reports what pid 1 said */
#define PID1_FAIL(code, ...)                                                  \
    do {                                                                      \
        r = (code);                                                           \
        snprintf(step, steplen, __VA_ARGS__);                                 \
        pid1_error(sb->ctl_fd, &r, step, steplen);                            \
        goto fail;                                                            \
    } while (0)
    if (!p->as_root && (r = write_proc(pid, "setgroups", "deny")) < 0)
        PID1_FAIL(r, "setgroups deny");
    if ((r = write_proc(pid, "uid_map", p->uid_map)) < 0)
        PID1_FAIL(r, "uid_map");
    if ((r = write_proc(pid, "gid_map", p->gid_map)) < 0)
        PID1_FAIL(r, "gid_map");
    if ((r = ctl_send(sb->ctl_fd, SG_CTL_MAPPED, 0, 0, NULL, -1)) < 0)
        PID1_FAIL(r, "handshake");
    if ((r = place(p, pid, sb, step, steplen)) < 0)
        goto fail;
    if (hooks && hooks->meanwhile)
        hooks->meanwhile(hooks->ctx);
    if ((r = await_ready(p, sb, step, steplen, hooks)) == 0)
        return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0 && !(i == 1 && in[1] == sb->stdin_fd))
            close(in[i]);
        if (out[i] >= 0 && !(i == 0 && out[0] == sb->stdout_fd))
            close(out[i]);
        if (err[i] >= 0 && !(i == 0 && err[0] == sb->stderr_fd))
            close(err[i]);
        if (ctl[i] >= 0 && !(i == 0 && ctl[0] == sb->ctl_fd))
            close(ctl[i]);
        if (rep[i] >= 0 && !(i == 0 && rep[0] == sb->wasi_fd))
            close(rep[i]);
    }
    if (cfg >= 0)
        close(cfg);
    sg_sandbox_kill(sb);
    sg_sandbox_cleanup(sb);
    return r;
#undef FAIL
#undef PID1_FAIL
}

int sg_sandbox_go(struct sg_sandbox *sb)
{
    return ctl_send(sb->ctl_fd, SG_CTL_GO, 0, 0, NULL, -1);
}

void sg_sandbox_started(struct sg_sandbox *sb)
{
    if (sb->decoy_hold_fd < 0)
        hold_decoys(sb);
}

void sg_sandbox_kill(struct sg_sandbox *sb)
{
    if (sb->pidfd >= 0)
        syscall(SYS_pidfd_send_signal, sb->pidfd, SIGKILL, NULL, 0);
}

void sg_sandbox_limit_hits(const struct sg_sandbox *sb, struct sg_limit_hits *h)
{
    memset(h, 0, sizeof *h);
    sg_cgroup_hits(sb, h);
}

/* Is pid 1 still running? Its pidfd says, whatever became of its number. */
static bool pid1_alive(const struct sg_sandbox *sb)
{
    struct pollfd pf = {.fd = sb->pidfd, .events = POLLIN};
    return sb->pidfd >= 0 && poll(&pf, 1, 0) == 0;
}

long long sg_sandbox_memory_usage(const struct sg_sandbox *sb)
{
    return sb->ncgroup ? sg_cgroup_memory(sb) : sg_sandbox_resident(sb, 0);
}

long long sg_sandbox_resident(const struct sg_sandbox *sb, long long past)
{
    int n;
    if (!pid1_alive(sb))
        return -1;
    long long b = sg_memwatch_sample(sb->pid, past, &n);
    /* still alive after the look: the numbers were its processes' */
    return pid1_alive(sb) ? b : -1;
}

long long sg_sandbox_pids_peak(const struct sg_sandbox *sb)
{
    return sg_cgroup_pids_peak(sb);
}

/* Sandboxes whose pid 1 was still tearing its namespaces down at cleanup:
 * their cgroups and run directory go once it is gone (sg_sandbox_reap). */
static struct sg_sandbox pending[4];
static size_t npending;

static void remove_dirs(struct sg_sandbox *sb)
{
    sg_cgroup_remove(sb);
    if (sb->rundir) {
        rmdir(sb->rundir);
        free(sb->rundir);
        sb->rundir = NULL;
    }
}

void sg_sandbox_reap(void)
{
    reap_holders(false);
    for (size_t i = 0; i < npending; i++) {
        struct sg_sandbox *sb = &pending[i];
        /* only the kernel's teardown is left: well under a second */
        struct pollfd pfd = {.fd = sb->pidfd, .events = POLLIN};
        while (poll(&pfd, 1, 5000) < 0 && errno == EINTR)
            ;
        siginfo_t si;
        waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED | WNOHANG);
        close(sb->pidfd);
        sb->pidfd = -1;
        remove_dirs(sb);
    }
    npending = 0;
}

void sg_sandbox_cleanup(struct sg_sandbox *sb)
{
    for (size_t i = 0; i < sb->npins; i++)
        if (sb->pins[i] >= 0)
            close(sb->pins[i]);
    free(sb->pins);
    sb->pins = NULL, sb->npins = 0;
    int *fds[] = {&sb->stdin_fd, &sb->stdout_fd, &sb->stderr_fd, &sb->ctl_fd, &sb->notify_fd,
                  &sb->nflog_fd, &sb->wasi_fd};
    for (size_t i = 0; i < SG_ARRAY_LEN(fds); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
    bool gone = true;
    if (sb->pidfd >= 0) {
        siginfo_t si = {0};
        gone = waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid != 0;
    }
    close_decoys(sb);
    for (int i = 0; i < SG_EGRESS_FDS; i++) {
        if (sb->egress_fd[i] >= 0)
            close(sb->egress_fd[i]);
        sb->egress_fd[i] = -1;
    }
    for (int i = 0; i < SG_VIEWS; i++) {
        if (sb->view_fd[i] >= 0)
            close(sb->view_fd[i]);
        sb->view_fd[i] = -1;
    }
    if (!gone) {
        /* pid 1 said "exit" and is still going: leave it be until the
         * caller has written its trace and audit record */
        static bool registered;
        if (npending == SG_ARRAY_LEN(pending))
            sg_sandbox_reap();
        if (!registered)
            registered = atexit(sg_sandbox_reap) == 0;
        pending[npending++] = *sb;
        sb->pidfd = -1;
        sb->rundir = NULL;
        sb->ncgroup = 0;
        memset(sb->cgroup, 0, sizeof sb->cgroup);
        return;
    }
    if (sb->pidfd >= 0)
        close(sb->pidfd);
    sb->pidfd = -1;
    remove_dirs(sb);
}
