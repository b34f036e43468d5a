/* The three profiles as one list. Each entry says in which profiles a call
 * is denied: permissive denies only what escapes a sandbox, default adds what
 * attacks other processes, the kernel or its secrets, strict adds new
 * processes and non-local sockets. The list makes the filter, the dry-run
 * plan and the documentation. */
#include "seccomp_filter.h"

#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

#include "sandbox.h"
#include "util.h"

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
    X(userfaultfd, DS) X(io_uring_setup, DS) X(io_uring_enter, DS)                       \
    X(io_uring_register, DS) X(acct, DS) X(syslog, DS) X(uselib, DS) X(vhangup, DS)      \
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

static const struct {
    const char *name;
    unsigned long long flag;
} ns_flags[] = {
    {"CLONE_NEWNS", CLONE_NEWNS},     {"CLONE_NEWUTS", CLONE_NEWUTS},
    {"CLONE_NEWIPC", CLONE_NEWIPC},   {"CLONE_NEWUSER", CLONE_NEWUSER},
    {"CLONE_NEWPID", CLONE_NEWPID},   {"CLONE_NEWNET", CLONE_NEWNET},
    {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
};

/* personality() bits that weaken the process (checked with bit 31 clear,
 * so the 0xffffffff query stays allowed). */
static const struct {
    const char *name;
    unsigned long long bit;
} persona_bits[] = {
    {"ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE},
    {"READ_IMPLIES_EXEC", READ_IMPLIES_EXEC},
    {"ADDR_COMPAT_LAYOUT", ADDR_COMPAT_LAYOUT},
    {"MMAP_PAGE_ZERO", MMAP_PAGE_ZERO},
};

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
    for (size_t i = 0; i < SG_ARRAY_LEN(ns_flags); i++)
        PUT("clone", deny, ns_flags[i].name);
    PUT("clone3", "ENOSYS (glibc falls back to clone, which is checked)", "");
    PUT("ioctl", deny, "request == TIOCSTI (masked to 32 bits)");
    PUT("ioctl", deny, "request == TIOCLINUX (masked to 32 bits)");
    if (b & DS)
        for (size_t i = 0; i < SG_ARRAY_LEN(persona_bits); i++)
            PUT("personality", deny, persona_bits[i].name);
    if (b & S) {
        PUT("clone", deny, "without CLONE_THREAD (a new process)");
        PUT("socket", deny, "domain != AF_UNIX");
        PUT("socketpair", deny, "domain != AF_UNIX");
    }
    PUT("(other architectures)", "kill the process (no i386 or x32 syscall tables)", "");
#undef PUT
    return n;
}

int sg_seccomp_load(enum sg_seccomp_profile p)
{
    unsigned b = prof_bit(p);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int r = 0, nr;
    if (!ctx)
        return -ENOMEM;
    /* Any architecture but the native one is killed: no int 0x80 tricks. */
    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    for (size_t i = 0; i < SG_ARRAY_LEN(denied) && r == 0; i++) {
        if (!(denied[i].profiles & b))
            continue;
        nr = seccomp_syscall_resolve_name(denied[i].name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue; /* not a call on this architecture */
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(ns_flags) && r == 0; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i].flag, ns_flags[i].flag));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX));
    for (size_t i = 0; (b & DS) && i < SG_ARRAY_LEN(persona_bits) && r == 0; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(personality), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, persona_bits[i].bit | 0x80000000ULL,
                                     persona_bits[i].bit));
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if ((b & S) && r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socketpair), 1,
                             SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (r == 0)
        r = seccomp_load(ctx);
    if (r == 0)
        r = seccomp_notify_fd(ctx);
    seccomp_release(ctx);
    return r;
}
