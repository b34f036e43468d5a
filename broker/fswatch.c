#include "fswatch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* X(syscall, dirfd arg, path arg, second dirfd arg, second path arg) — -1: none */
static const struct {
    const char *name;
    int dfd, path, dfd2, path2;
} calls[] = {
    {"open", -1, 0, -1, -1},     {"creat", -1, 0, -1, -1},     {"openat", 0, 1, -1, -1},
    {"openat2", 0, 1, -1, -1},   {"mkdir", -1, 0, -1, -1},     {"mkdirat", 0, 1, -1, -1},
    {"rmdir", -1, 0, -1, -1},    {"unlink", -1, 0, -1, -1},    {"unlinkat", 0, 1, -1, -1},
    {"rename", -1, 0, -1, 1},    {"renameat", 0, 1, 2, 3},     {"renameat2", 0, 1, 2, 3},
    {"link", -1, -1, -1, 1},     {"linkat", -1, -1, 2, 3},     {"symlink", -1, -1, -1, 1},
    {"symlinkat", -1, -1, 1, 2}, {"truncate", -1, 0, -1, -1},  {"mknod", -1, 0, -1, -1},
    {"mknodat", 0, 1, -1, -1},
};

static const char *const dev_files[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                        "/dev/urandom", "/dev/stdout", "/dev/stderr"};

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

void sg_path_normalize(char *path)
{
    char *out = path, *p = path;
    size_t o = 0;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *e = strchrnul(p, '/');
        size_t len = (size_t)(e - p);
        if (len == 1 && p[0] == '.') {
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            out[o++] = '/';
            memmove(out + o, p, len);
            o += len;
        }
        p = e;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
}

bool sg_fswatch_writable(const struct sg_plan *p, const char *path)
{
    /* /proc and the fd links are the kernel's business: pipes, not files */
    if (within(path, "/proc") || within(path, "/dev/fd"))
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(dev_files); i++)
        if (!strcmp(path, dev_files[i]))
            return true;
    /* The deepest mount over the path decides: a read-only bind inside the
     * private /tmp (a skill kept under /tmp) is still read-only. */
    const struct sg_mount *deepest = NULL;
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (m->kind == SG_MNT_SYMLINK || !within(path, m->dst))
            continue;
        if (!deepest || strlen(m->dst) >= strlen(deepest->dst))
            deepest = m;
    }
    if (!deepest)
        return false;
    switch (deepest->kind) {
    case SG_MNT_BIND_RW:
        return true;
    case SG_MNT_TMPFS:
        for (size_t i = 0; i < p->nrw; i++)
            if (!strcmp(p->rw_paths[i], deepest->dst))
                return true;
        return false;
    case SG_MNT_DEV:
        return within(path, "/dev/shm");
    default:
        return false;
    }
}

const char *sg_fs_class(const char *home, const char *path)
{
    static const char *const persist[] = {
        ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
        ".config/autostart", ".config/systemd", ".ssh/authorized_keys", ".ssh/rc",
        ".config/fish", ".local/share/applications", ".xinitrc", ".xprofile"};
    static const char *const sys_persist[] = {"/etc/cron", "/etc/systemd", "/etc/profile",
                                              "/etc/bash.bashrc", "/etc/ld.so.preload",
                                              "/etc/rc.local", "/var/spool/cron", "/etc/init.d"};
    char buf[PATH_MAX];
    for (size_t i = 0; home && i < SG_ARRAY_LEN(persist); i++) {
        snprintf(buf, sizeof buf, "%s/%s", home, persist[i]);
        if (within(path, buf))
            return "persistence";
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(sys_persist); i++)
        if (!strncmp(path, sys_persist[i], strlen(sys_persist[i])))
            return "persistence";
    for (size_t i = 0; home && sg_sensitive_home_paths[i]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", home, sg_sensitive_home_paths[i]);
        if (within(path, buf))
            return "credential";
    }
    return "file";
}

/* mkdir of a folder that exists, or an O_CREAT open of an existing file for
 * reading only, change nothing: the kernel answers them (EEXIST, or the
 * open), as it would without us, so `mkdir -p` and friends keep working. */
static bool harmless_on_existing(const struct seccomp_notif *req, const char *syscall,
                                 const char *path)
{
    char root[PATH_MAX];
    struct stat st;
    if (snprintf(root, sizeof root, "/proc/%d/root%s", (int)req->pid, path) >= (int)sizeof root ||
        lstat(root, &st) < 0)
        return false;
    if (!strcmp(syscall, "mkdir") || !strcmp(syscall, "mkdirat"))
        return true;
    int fa = !strcmp(syscall, "open") ? 1 : !strcmp(syscall, "openat") ? 2 : -1;
    if (fa < 0)
        return false;
    unsigned long long fl = req->data.args[fa];
    return !(fl & (O_WRONLY | O_RDWR | O_TRUNC));
}

/* Read a NUL-terminated string from the skill's memory. */
static int read_str(int memfd, unsigned long long addr, char *buf, size_t max)
{
    size_t got = 0;
    while (got < max - 1) {
        size_t want = 256 - ((addr + got) % 256); /* never cross into an unmapped page early */
        if (want > max - 1 - got)
            want = max - 1 - got;
        ssize_t n = pread(memfd, buf + got, want, (off_t)(addr + got));
        if (n <= 0)
            return -EFAULT;
        void *nul = memchr(buf + got, '\0', (size_t)n);
        if (nul)
            return 0;
        got += (size_t)n;
    }
    buf[max - 1] = '\0';
    return -ENAMETOOLONG;
}

static int resolve(pid_t pid, int memfd, long long dfd, unsigned long long addr, char *out,
                   size_t max)
{
    char rel[PATH_MAX], base[PATH_MAX], link[64];
    int r = read_str(memfd, addr, rel, sizeof rel);
    if (r < 0)
        return r;
    if (rel[0] == '/') {
        snprintf(out, max, "%s", rel);
    } else {
        if ((int)dfd == AT_FDCWD)
            snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
        else
            snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, (int)dfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n < 0)
            return -errno;
        base[n] = '\0';
        if (snprintf(out, max, "%s/%s", base, rel) >= (int)max)
            return -ENAMETOOLONG;
    }
    sg_path_normalize(out);
    return 0;
}

bool sg_fswatch_handle(const struct sg_plan *p, int notify_fd, const struct seccomp_notif *req,
                       const char *syscall, struct seccomp_notif_resp *resp,
                       struct sg_event_bus *bus)
{
    size_t i;
    for (i = 0; i < SG_ARRAY_LEN(calls); i++)
        if (!strcmp(calls[i].name, syscall))
            break;
    if (i == SG_ARRAY_LEN(calls))
        return false;
    char memp[64];
    snprintf(memp, sizeof memp, "/proc/%d/mem", (int)req->pid);
    cleanup_fd int memfd = open(memp, O_RDONLY | O_CLOEXEC);
    const long long *a = (const long long *)req->data.args;
    char path1[PATH_MAX] = "", path2[PATH_MAX] = "";
    int r = 0;
    if (memfd < 0)
        r = -errno;
    if (!r && calls[i].path >= 0)
        r = resolve(req->pid, memfd, calls[i].dfd >= 0 ? a[calls[i].dfd] : AT_FDCWD,
                    (unsigned long long)a[calls[i].path], path1, sizeof path1);
    if (!r && calls[i].path2 >= 0)
        r = resolve(req->pid, memfd, calls[i].dfd2 >= 0 ? a[calls[i].dfd2] : AT_FDCWD,
                    (unsigned long long)a[calls[i].path2], path2, sizeof path2);
    if (!strcmp(syscall, "openat2") && !r) {
        struct open_how how;
        if (pread(memfd, &how, sizeof how, (off_t)req->data.args[2]) != (ssize_t)sizeof how)
            r = -EFAULT;
        else if (!(how.flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)))
            path1[0] = '\0'; /* a read: nothing to check */
    }
    resp->id = req->id;
    resp->val = 0;
    /* The notification must still be the same call after we read its memory. */
    if (seccomp_notify_id_valid(notify_fd, req->id) != 0)
        return true;
    bool ok1 = !path1[0] || sg_fswatch_writable(p, path1);
    bool ok2 = !path2[0] || sg_fswatch_writable(p, path2);
    if (!r && !ok1 && !path2[0] && harmless_on_existing(req, syscall, path1))
        ok1 = true;
    if (r == 0 && ok1 && ok2) {
        resp->error = 0;
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        return true;
    }
    resp->flags = 0;
    resp->error = r == -EFAULT ? -EFAULT : -EACCES;
    if (r < 0 && r != -EFAULT) {
        /* unreadable path (too long, fd gone): refuse, say so */
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:b}", "syscall", syscall, "path", "?", "class",
                              "file", "prevented", 1),
                    "%s refused: its path could not be read (%s)", syscall, strerror(-r));
        return true;
    }
    if (r == -EFAULT)
        return true; /* a bad pointer: the kernel would say EFAULT too, nothing to show */
    const char *bad = ok1 ? path2 : path1;
    const char *cls = sg_fs_class(p->home, bad);
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:i, s:b}", "syscall", syscall, "path", bad, "class",
                          cls, "pid", (int)req->pid, "prevented", 1),
                "write to %s refused (%s, outside the writable paths)%s", bad, syscall,
                !strcmp(cls, "persistence") ? ": a persistence location"
                : !strcmp(cls, "credential") ? ": a credential location"
                                             : "");
    return true;
}
