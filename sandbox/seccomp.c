/* The three profiles as one list. Each entry says in which profiles a call
 * is denied: permissive denies only what escapes a sandbox, default adds what
 * attacks other processes, the kernel or its secrets, strict adds new
 * processes and non-local sockets. The list makes the filter, the dry-run
 * plan and the documentation. */
#include "seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>

#include "sandbox.h"
#include "util.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

enum { P = 1, D = 2, S = 4, ALL = P | D | S, DS = D | S };

/* X(syscall, profiles) */
#define SG_DENIED_SYSCALLS(X)                                                            \
    X(mount, ALL) X(umount2, ALL) X(pivot_root, ALL) X(chroot, ALL) X(setns, ALL)        \
    X(unshare, ALL) X(fsopen, ALL) X(fsconfig, ALL) X(fsmount, ALL) X(fspick, ALL)       \
    X(move_mount, ALL) X(open_tree, ALL) X(mount_setattr, ALL)                           \
    X(open_by_handle_at, ALL) X(name_to_handle_at, ALL) X(kexec_load, ALL)               \
    X(kexec_file_load, ALL) X(init_module, ALL) X(finit_module, ALL)                     \
    X(delete_module, ALL) X(bpf, ALL) X(reboot, ALL) X(swapon, ALL) X(swapoff, ALL)      \
    X(iopl, ALL) X(ioperm, ALL) X(settimeofday, ALL) X(clock_settime, ALL)              \
    X(clock_adjtime, ALL) X(adjtimex, ALL) X(quotactl, ALL) X(lookup_dcookie, ALL)       \
    X(ptrace, DS) X(process_vm_readv, DS) X(process_vm_writev, DS) X(pidfd_getfd, DS)    \
    X(kcmp, DS) X(keyctl, DS) X(add_key, DS) X(request_key, DS) X(perf_event_open, DS)   \
    X(userfaultfd, DS) X(io_uring_setup, ALL) X(io_uring_enter, ALL)                     \
    X(io_uring_register, ALL) X(acct, DS) X(syslog, DS) X(uselib, DS) X(vhangup, DS)      \
    X(fanotify_init, DS) X(mbind, DS) X(set_mempolicy, DS) X(migrate_pages, DS)          \
    X(move_pages, DS) X(fork, S) X(vfork, S)

static const struct {
    const char *name;
    unsigned profiles;
} denied[] = {
#define X(sc, prof) {#sc, prof},
    SG_DENIED_SYSCALLS(X)
#undef X
};

/* Calls that create, change or remove files. Opens only with write intent
 * (the flags argument is checked in the filter); the rest always. The broker
 * lets those under the writable paths continue and refuses the others, so
 * each refusal is seen (the mounts and Landlock enforce either way). */
static const struct {
    const char *name;
    int flags_arg; /* -1: every call; -2: when its path (argument 1) is not NULL;
                    * -3: fchmod, every call (the broker does it on the object) */
} write_calls[] = {
    {"open", 1},     {"openat", 2},    {"creat", -1},     {"openat2", -1},  {"mkdir", -1},
    {"mkdirat", -1}, {"rmdir", -1},    {"unlink", -1},    {"unlinkat", -1}, {"rename", -1},
    {"renameat", -1}, {"renameat2", -1}, {"link", -1},    {"linkat", -1},   {"symlink", -1},
    {"symlinkat", -1}, {"truncate", -1}, {"mknod", -1},   {"mknodat", -1},
    /* a file's mode, times and owner: a read-only view would refuse them
     * silently (EROFS); the broker does them on a file a person let the
     * skill write, and says every refusal (writes.c) */
    {"chmod", -1},     {"fchmodat", -1},  {"fchmodat2", -1}, {"utime", -1},  {"utimes", -1},
    {"futimesat", -1}, {"utimensat", -2}, {"chown", -1},     {"lchown", -1}, {"fchownat", -1},
    {"fchmod", -3},
};

static const struct {
    const char *name;
    unsigned long long flag;
} ns_flags[] = {
    {"CLONE_NEWNS", CLONE_NEWNS},     {"CLONE_NEWUTS", CLONE_NEWUTS},
    {"CLONE_NEWIPC", CLONE_NEWIPC},   {"CLONE_NEWUSER", CLONE_NEWUSER},
    {"CLONE_NEWPID", CLONE_NEWPID},   {"CLONE_NEWNET", CLONE_NEWNET},
    {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
};

/* personality() bits that weaken the process. Any value carrying one is
 * shown to the broker, which lets only the query (0xffffffff, all bits)
 * through: a bit-31 test once let 0x80000000|ADDR_NO_RANDOMIZE pass. */
static const struct {
    const char *name;
    unsigned long long bit;
} persona_bits[] = {
    {"ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE},
    {"READ_IMPLIES_EXEC", READ_IMPLIES_EXEC},
    {"ADDR_COMPAT_LAYOUT", ADDR_COMPAT_LAYOUT},
    {"MMAP_PAGE_ZERO", MMAP_PAGE_ZERO},
};

/* Families below AF_NETLINK that are none of unix, inet, inet6 (those from
 * AF_NETLINK + 1 up are refused with one comparison). */
static const unsigned long long odd_families[] = {AF_UNSPEC, 3, 4, 5, 6, 7, 8, 9,
                                                  11, 12, 13, 14, 15};

/* Calls that set an extended attribute. On a private tmpfs a user xattr is
 * kernel memory (slab, up to 64 KiB a value) that no rlimit counts; tmpfs
 * bounds them only by nr_inodes (plan.c). The broker refuses them where no
 * cgroup counts memory (ENOTSUP, what a filesystem without xattrs says:
 * cp -a and Python's shutil.copy2 skip the attribute, tar --xattrs -x warns
 * and exits 0; GNU tar 1.35 uses setxattrat) and lets them continue where
 * one does. Which to refuse cannot be read
 * from the name (it is in the skill's memory, and a thread can change it
 * after the broker looks): all of them, on any filesystem. setxattrat
 * (Linux 6.13) is unknown to libseccomp 2.5 and to older headers: added by
 * its number (463 on x86_64, arm64, riscv). */
#ifdef __NR_setxattrat
#define SG_NR_SETXATTRAT __NR_setxattrat
#elif defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
#define SG_NR_SETXATTRAT 463 /* headers older than the kernel */
#else
#define SG_NR_SETXATTRAT -1 /* unknown here: nothing to add */
#endif
static const char *const xattr_calls[] = {"setxattr", "lsetxattr", "fsetxattr", "setxattrat"};

bool sg_seccomp_sets_xattr(const char *name, long nr)
{
    for (size_t i = 0; name && i < SG_ARRAY_LEN(xattr_calls); i++)
        if (!strcmp(name, xattr_calls[i]))
            return true;
    return !name && SG_NR_SETXATTRAT >= 0 && nr == SG_NR_SETXATTRAT;
}

static unsigned prof_bit(enum sg_seccomp_profile p)
{
    return p == SG_SECCOMP_PERMISSIVE ? P : p == SG_SECCOMP_STRICT ? S : D;
}

size_t sg_seccomp_rules(enum sg_seccomp_profile p, struct sg_seccomp_rule *out, size_t max)
{
    static const char *const deny = "deny: EPERM, syscall_blocked event";
    unsigned b = prof_bit(p);
    size_t n = 0;
#define PUT(sc, act, cond)                                                    \
    do {                                                                      \
        if (n < max)                                                          \
            out[n] = (struct sg_seccomp_rule){.syscall = sc, .action = act, .when = cond}; \
        n++;                                                                  \
    } while (0)
    for (size_t i = 0; i < SG_ARRAY_LEN(denied); i++)
        if (denied[i].profiles & b)
            PUT(denied[i].name, deny, "");
    for (size_t i = 0; i < SG_ARRAY_LEN(write_calls); i++)
        PUT(write_calls[i].name,
            !strcmp(write_calls[i].name, "openat2")
                ? "ENOSYS from the broker (its flags are in the skill's memory): libc uses openat"
                : "checked by the broker: under a writable path done by the broker on the "
                  "object it checked (a declared path's utime and chown continue), a protected "
                  "target asked, else EACCES and a fs_blocked event",
            write_calls[i].flags_arg >= 0 ? "flags has O_WRONLY, O_RDWR, O_CREAT or O_TRUNC" : "");
    for (size_t i = 0; i < SG_ARRAY_LEN(ns_flags); i++)
        PUT("clone", deny, ns_flags[i].name);
    PUT("clone3", "ENOSYS (glibc falls back to clone, which is checked)", "");
    PUT("clone", "EPERM", "CLONE_PARENT (a child given to another process: a program allowed "
                          "with what it runs would get the skill's)");
    PUT("prctl", "EPERM", "PR_SET_CHILD_SUBREAPER (the same, through orphans)");
    PUT("memfd_create", "shown to the broker: continues where a cgroup holds memory, else "
                        "EPERM and a resource_limit_hit event (pages no process maps escape the "
                        "broker's watch of resident memory)",
        "");
    PUT("shmget", "the same as memfd_create (SysV shared memory)", "");
    PUT("msgget", "the same as memfd_create (SysV message queues: kernel memory)", "");
    PUT("semget", "the same as memfd_create (SysV semaphore sets: kernel memory)", "");
    PUT("vmsplice", "the same as memfd_create (a pipe keeps the pages it was given, and one "
                    "byte keeps a whole 2 MiB huge page, once unmapped in no process's count)",
        "");
    for (size_t i = 0; i < SG_ARRAY_LEN(xattr_calls); i++)
        PUT(xattr_calls[i],
            i ? "the same as setxattr"
              : "shown to the broker: continues where a cgroup holds memory, else ENOTSUP and "
                "a resource_limit_hit event (an xattr is kernel memory no rlimit counts)",
            "");
    PUT("execve", "asks the broker (Bash): declared programs continue, others ask or are denied",
        "after the entrypoint's own");
    PUT("execveat", "the same as execve", "");
    PUT("socket", deny, "AF_INET or AF_INET6 with SOCK_RAW (raw network access)");
    PUT("socket", deny, "a family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK "
                        "(AF_VSOCK, AF_PACKET, AF_ALG, bluetooth, ...)");
    PUT("socketpair", deny, "a family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK");
    PUT("socket", deny, "AF_UNIX with SOCK_DGRAM or SOCK_RAW (a datagram names its "
                        "destination per message, past any connect check)");
    PUT("socketpair", deny, "AF_UNIX with SOCK_DGRAM or SOCK_RAW");
    PUT("connect", "made by the broker on the skill's socket: a unix socket only on a tmpfs "
                   "the sandbox made, a declared one (its inode) or one a Connect request "
                   "allows, as the skill; else EACCES and a syscall_blocked event",
        "");
    PUT("ioctl", deny, "request == TIOCSTI (masked to 32 bits)");
    PUT("ioctl", deny, "request == TIOCLINUX (masked to 32 bits)");
    if (b & DS)
        for (size_t i = 0; i < SG_ARRAY_LEN(persona_bits); i++)
            PUT("personality", "deny unless the value is the 0xffffffff query: EPERM, "
                               "syscall_blocked event", persona_bits[i].name);
    if (b & S) {
        PUT("clone", deny, "without CLONE_THREAD (a new process)");
        PUT("socket", deny, "domain != AF_UNIX");
        PUT("socketpair", deny, "domain != AF_UNIX");
    }
    PUT("(other architectures)", "kill the process (no i386 or x32 syscall tables)", "");
#undef PUT
    return n;
}

/* The calls that write (or, recording, look up) a path: each to the
 * broker when it may write (writes.c, reads.c). */
static int add_file_rules(scmp_filter_ctx ctx, unsigned opts)
{
    int r = 0, nr;
    static const unsigned long long intents[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC};
    for (size_t i = 0; i < SG_ARRAY_LEN(write_calls) && r == 0; i++) {
        nr = seccomp_syscall_resolve_name(write_calls[i].name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        int fa = write_calls[i].flags_arg;
        if (fa == -3) { /* fchmod(fd, mode): done by the broker on the object (a
                         * setuid bit refused, a protected target's mode kept: writes.c) */
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
            continue;
        }
        if (fa == -2) { /* utimensat(fd, NULL, ...) is futimens: the descriptor's own */
            struct scmp_arg_cmp c = {.arg = 1, .op = SCMP_CMP_NE, .datum_a = 0};
            r = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &c);
            continue;
        }
        /* recording: reads too (the broker notes them and lets them go on) */
        if (fa < 0 || (opts & SG_SECCOMP_OBSERVE_READS)) {
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
            continue;
        }
        for (size_t k = 0; k < SG_ARRAY_LEN(intents) && r == 0; k++) {
            struct scmp_arg_cmp c = {.arg = (unsigned)fa, .op = SCMP_CMP_MASKED_EQ,
                                     .datum_a = intents[k], .datum_b = intents[k]};
            r = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &c);
        }
    }
    /* recording: the calls that look a path up without opening it too
     * (`exists()` before a read); not an fstat (an empty path with
     * AT_EMPTY_PATH, which glibc's fstat is) */
    static const struct {
        const char *name;
        int flags_arg; /* AT_EMPTY_PATH there: not a lookup; -1: none */
    } looks[] = {{"stat", -1},      {"lstat", -1},     {"access", -1},     {"readlink", -1},
                 {"readlinkat", -1}, {"faccessat", -1}, {"faccessat2", -1}, {"newfstatat", 3},
                 {"statx", 2}};
    for (size_t i = 0; (opts & SG_SECCOMP_OBSERVE_READS) && i < SG_ARRAY_LEN(looks) && r == 0;
         i++) {
        nr = seccomp_syscall_resolve_name(looks[i].name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        if (looks[i].flags_arg < 0)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
        else
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1,
                                 SCMP_CMP((unsigned)looks[i].flags_arg, SCMP_CMP_MASKED_EQ,
                                          AT_EMPTY_PATH, 0));
    }
    return r;
}

/* Sockets: the families and types no connect check or nftables sees,
 * every connect, and the strict profile's own. */
static int add_socket_rules(scmp_filter_ctx ctx, unsigned b)
{
    int r = 0;
    /* Socket families: unix, inet, inet6 and netlink are what a skill's
     * network needs; the rest (vsock to a VM's host, bluetooth, AF_ALG,
     * AF_PACKET, ...) never reach nftables' view, so each is refused and
     * seen. The kernel reads the family as an int; a value with high bits
     * set is refused too (>= 17 covers it). */
    for (int call = 0; call < 2 && r == 0; call++) {
        int sc = call ? SCMP_SYS(socketpair) : SCMP_SYS(socket);
        for (size_t i = 0; i < SG_ARRAY_LEN(odd_families) && r == 0; i++)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, sc, 1,
                                 SCMP_A0(SCMP_CMP_EQ, odd_families[i]));
        if (r == 0)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, sc, 1,
                                 SCMP_A0(SCMP_CMP_GE, AF_NETLINK + 1));
    }
    /* unix datagrams name a destination per message (sendto, sendmsg), which
     * no connect check sees; SOCK_RAW is a datagram socket to AF_UNIX */
    static const int dgram_types[] = {SOCK_DGRAM, SOCK_RAW};
    for (int call = 0; call < 2 && r == 0; call++)
        for (size_t i = 0; i < SG_ARRAY_LEN(dgram_types) && r == 0; i++)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, call ? SCMP_SYS(socketpair) : SCMP_SYS(socket),
                                 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
                                 SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (unsigned)dgram_types[i]));
    /* every connect: the broker makes it (sockconn.h) */
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socketpair), 1,
                             SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    return r;
}

/* The profile's rules in a libseccomp context; NULL with *err set. */
static scmp_filter_ctx build(enum sg_seccomp_profile p, unsigned opts, int *err)
{
    unsigned b = prof_bit(p);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int r = 0, nr;
    if (!ctx) {
        *err = -ENOMEM;
        return NULL;
    }
    /* Any architecture but the native one is killed: no int 0x80 tricks. */
    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* a binary tree over syscall numbers: every call of the skill walks the
     * filter, so its depth is the overhead (measured in bench/: dd bs=1) */
    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; i < SG_ARRAY_LEN(denied) && r == 0; i++) {
        if (!(denied[i].profiles & b))
            continue;
        nr = seccomp_syscall_resolve_name(denied[i].name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue; /* not a call on this architecture */
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    /* memory no cgroup would count: the broker decides by the plan. A
     * SysV message queue holds 16 KiB and a semaphore set up to 32,000
     * semaphores of kernel memory, and the sandbox's IPC namespace allows
     * 32,000 of each: as an ordinary user with memory_mb: 64, 3,000 queues
     * pinned 48 MB and 200 sets 410 MB of unreclaimable slab in a second.
     * vmsplice: a pipe holds references to the pages it was given, which
     * stay after the mapping is gone, and a byte of a huge page holds the
     * whole 2 MiB: 256 bytes in 16 pipes held 511 MB under memory_mb: 64
     * (review 7) */
    static const char *const unaccounted[] = {"memfd_create", "shmget", "msgget", "semget",
                                              "vmsplice"};
    for (size_t i = 0; i < SG_ARRAY_LEN(unaccounted) && r == 0; i++) {
        nr = seccomp_syscall_resolve_name(unaccounted[i]);
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(xattr_calls) && r == 0; i++) {
        nr = seccomp_syscall_resolve_name(xattr_calls[i]);
        if ((nr == __NR_SCMP_ERROR || nr < 0) && !strcmp(xattr_calls[i], "setxattrat"))
            nr = SG_NR_SETXATTRAT;
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    /* every exec goes to the broker: Bash requests (the entrypoint's own is
     * let through as pre-approved) */
    for (int k = 0; k < 2 && r == 0; k++)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, k ? SCMP_SYS(execveat) : SCMP_SYS(execve), 0);
    if (r == 0)
        r = add_file_rules(ctx, opts);
    for (size_t i = 0; i < SG_ARRAY_LEN(ns_flags) && r == 0; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i].flag, ns_flags[i].flag));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* a child made another process's (CLONE_PARENT), or a process that
     * adopts its descendants' orphans, would give a program the person
     * allowed with what it runs (run/exectree.h) children of the skill's */
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 2,
                             SCMP_A0(SCMP_CMP_EQ, PR_SET_CHILD_SUBREAPER),
                             SCMP_A1(SCMP_CMP_NE, 0));
    /* raw sockets would bypass the proxy's view (the kernel refuses them
     * without CAP_NET_RAW anyway): seen and refused */
    for (int fam = 0; fam < 2 && r == 0; fam++) /* netlink raw sockets are fine */
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 2,
                             SCMP_A0(SCMP_CMP_EQ, fam ? AF_INET6 : AF_INET),
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX));
    for (size_t i = 0; (b & DS) && i < SG_ARRAY_LEN(persona_bits) && r == 0; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(personality), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, persona_bits[i].bit,
                                     persona_bits[i].bit));
    if (r == 0)
        r = add_socket_rules(ctx, b);
    if (r < 0) {
        seccomp_release(ctx);
        *err = r;
        return NULL;
    }
    return ctx;
}

int sg_seccomp_load(enum sg_seccomp_profile p, unsigned opts)
{
    /* through our own install, for its flags (libseccomp 2.5 has no
     * attribute for the killable wait) */
    struct sock_filter *insns;
    size_t n;
    int r = sg_seccomp_export(p, opts, &insns, &n);
    if (r < 0)
        return r;
    r = sg_seccomp_install(insns, n);
    free(insns);
    return r;
}

int sg_seccomp_export(enum sg_seccomp_profile p, unsigned opts, struct sock_filter **insns,
                      size_t *n)
{
    int r = 0;
    *insns = NULL, *n = 0;
    scmp_filter_ctx ctx = build(p, opts, &r);
    if (!ctx)
        return r;
    cleanup_fd int fd = memfd_create("skillgate-bpf", MFD_CLOEXEC);
    if (fd < 0)
        r = -errno;
    if (r == 0)
        r = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t len = r == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (r == 0 && (len <= 0 || len % (off_t)sizeof **insns ||
                   len > (off_t)(SG_SECCOMP_MAX_INSNS * sizeof **insns)))
        r = -EINVAL;
    if (r < 0)
        return r;
    struct sock_filter *v = sg_xmalloc((size_t)len);
    if (pread(fd, v, (size_t)len, 0) != len) {
        free(v);
        return -EIO;
    }
    *insns = v;
    *n = (size_t)len / sizeof *v;
    return 0;
}

int sg_seccomp_install(const struct sock_filter *insns, size_t n)
{
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = (struct sock_filter *)insns};
    if (n == 0 || n > SG_SECCOMP_MAX_INSNS)
        return -EINVAL;
    /* A received notification waits killable only: no other signal can
     * interrupt the call while the broker decides (the exec broker's
     * PTRACE_INTERRUPT then lands when the call returns, exec.h). Kernels
     * before 5.19 lack the flag: the broker then refuses what it would
     * have to bind. */
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                      SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
                      &prog);
    if (fd < 0 && errno == EINVAL)
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    return fd < 0 ? -errno : (int)fd;
}
