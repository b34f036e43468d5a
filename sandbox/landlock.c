#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

/* The kernel ABI, defined here: Debian's headers stop at ABI 2. */
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_REMOVE_DIR (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR (1ULL << 6)
#define LL_MAKE_DIR (1ULL << 7)
#define LL_MAKE_REG (1ULL << 8)
#define LL_MAKE_SOCK (1ULL << 9)
#define LL_MAKE_FIFO (1ULL << 10)
#define LL_MAKE_BLOCK (1ULL << 11)
#define LL_MAKE_SYM (1ULL << 12)
#define LL_REFER (1ULL << 13)    /* ABI 2 */
#define LL_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define SYS_ll_create 444
#define SYS_ll_add_rule 445
#define SYS_ll_restrict 446

const char *sg_landlock_describe(int abi)
{
    if (abi <= 0)
        return "unavailable: writes are limited by read-only mounts only";
    if (abi < 6)
        return "writes restricted to the writable paths";
    return "writes restricted to the writable paths; abstract unix sockets and signals scoped "
           "to the sandbox";
}

static uint64_t write_rights(int abi)
{
    uint64_t r = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR | LL_MAKE_DIR |
                 LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM;
    if (abi >= 2)
        r |= LL_REFER;
    if (abi >= 3)
        r |= LL_TRUNCATE;
    if (abi >= 5)
        r |= LL_IOCTL_DEV;
    return r;
}

static int add_path(int ruleset, const char *path, uint64_t handled)
{
    cleanup_fd int fd = open(path, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    if (fstat(fd, &st) < 0)
        return -errno;
    uint64_t allowed = handled;
    if (!S_ISDIR(st.st_mode))
        allowed &= LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV | LL_READ_FILE | LL_EXECUTE;
    struct ll_path_beneath pb = {.allowed_access = allowed, .parent_fd = fd};
    if (syscall(SYS_ll_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
        return -errno;
    return 0;
}

int sg_landlock_apply(const struct sg_plan *p)
{
    int abi = p->landlock_abi;
    if (abi <= 0)
        return -ENOTSUP;
    struct ll_ruleset_attr attr = {.handled_access_fs = write_rights(abi)};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    /* a WASM run: reads and executes are handled too, so only the
     * runtime's files and the preopens can be read (wasm.h) */
    if (p->confine_reads)
        attr.handled_access_fs |= LL_READ_FILE | LL_READ_DIR | LL_EXECUTE;
    cleanup_fd int rs = (int)syscall(SYS_ll_create, &attr, size, 0);
    if (rs < 0)
        return -errno;
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                       "/dev/urandom"};
    for (size_t i = 0; i < SG_ARRAY_LEN(devs); i++) {
        int r = add_path(rs, devs[i], attr.handled_access_fs);
        if (r < 0)
            return r;
    }
    for (size_t i = 0; i < p->nrw; i++) {
        int r = add_path(rs, p->rw_paths[i], attr.handled_access_fs & ~LL_EXECUTE);
        if (r < 0)
            return r;
    }
    for (size_t i = 0; p->confine_reads && i < p->nro; i++) {
        /* only the runtime's folders hold programs and libraries to map */
        static const char *const progs[] = {"/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32"};
        bool runtime = false;
        for (size_t k = 0; k < SG_ARRAY_LEN(progs); k++)
            runtime |= sg_path_within(p->ro_paths[i], progs[k]);
        int r = add_path(rs, p->ro_paths[i],
                         LL_READ_FILE | LL_READ_DIR | (runtime ? LL_EXECUTE : 0));
        if (r < 0)
            return r;
    }
    if (syscall(SYS_ll_restrict, rs, 0) < 0)
        return -errno;
    return 0;
}
