#include "writes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <utime.h>
#include <unistd.h>

#include "config.h"
#include "beneath.h"
#include "declared.h"
#include "diskcap.h"
#include "notifpath.h"
#include "perm.h"
#include "gitnamed.h"
#include "protected.h"
#include "runopts.h"
#include "util.h"

#define beneath sg_beneath_open
#define parent_of sg_beneath_parent

/* X(syscall, dirfd arg, path arg, second dirfd arg, second path arg) — -1: none */
static const struct {
    const char *name;
    int dfd, path, dfd2, path2;
} calls[] = {
    {"open", -1, 0, -1, -1},     {"creat", -1, 0, -1, -1},     {"openat", 0, 1, -1, -1},
    {"mkdir", -1, 0, -1, -1},     {"mkdirat", 0, 1, -1, -1},
    {"rmdir", -1, 0, -1, -1},    {"unlink", -1, 0, -1, -1},    {"unlinkat", 0, 1, -1, -1},
    {"rename", -1, 0, -1, 1},    {"renameat", 0, 1, 2, 3},     {"renameat2", 0, 1, 2, 3},
    {"link", -1, -1, -1, 1},     {"linkat", -1, -1, 2, 3},     {"symlink", -1, -1, -1, 1},
    {"symlinkat", -1, -1, 1, 2}, {"truncate", -1, 0, -1, -1},  {"mknod", -1, 0, -1, -1},
    {"mknodat", 0, 1, -1, -1},
    /* they change what a file is, not what it holds (meta_call) */
    {"chmod", -1, 0, -1, -1},    {"fchmodat", 0, 1, -1, -1},   {"fchmodat2", 0, 1, -1, -1},
    {"utime", -1, 0, -1, -1},    {"utimes", -1, 0, -1, -1},    {"futimesat", 0, 1, -1, -1},
    {"utimensat", 0, 1, -1, -1}, {"chown", -1, 0, -1, -1},     {"lchown", -1, 0, -1, -1},
    {"fchownat", 0, 1, -1, -1},  {"fchmod", -1, -1, -1, -1},
};

/* chmod, utime and chown: a file's mode, times and owner. Where the skill
 * may write they go on; on a file a person let it write they are done by
 * the broker on that file (the mode within the user's own bits, never an
 * owner); anywhere else they are a Write request or refused, and said. */
static bool meta_call(const char *sc)
{
    return strstr(sc, "chmod") || strstr(sc, "utime") || !strcmp(sc, "futimesat") ||
           strstr(sc, "chown");
}

static bool owner_call(const char *sc)
{
    return strstr(sc, "chown") != NULL;
}

static const char *const dev_files[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                        "/dev/urandom"};

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* A path through /proc or the fd links (/dev/fd, /dev/stdout): the kernel
 * follows a magic link there to an object that its name does not tell
 * (/proc/self/root/<write path>/f, /proc/self/fd/N). Never writable by
 * its name: through_proc() decides on the object. */
static bool magic_path(const char *path)
{
    return within(path, "/proc") || within(path, "/dev/fd") || !strcmp(path, "/dev/stdin") ||
           !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr");
}

bool sg_writes_writable(const struct sg_plan *p, const char *path)
{
    if (magic_path(path))
        return false;
    for (size_t i = 0; i < SG_ARRAY_LEN(dev_files); i++)
        if (!strcmp(path, dev_files[i]))
            return true;
    /* The deepest mount over the path decides: a read-only bind inside the
     * private /tmp (a skill kept under /tmp) is still read-only. */
    const struct sg_mount *deepest = sg_deepest_mount(p, path);
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

const char *const sg_persistence_home_paths[] = {
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".config/autostart", ".config/systemd", ".ssh/authorized_keys", ".ssh/rc",
    ".config/fish", ".local/share/applications", ".xinitrc", ".xprofile", NULL};

const char *sg_fs_class(const char *home, const char *path)
{
    const char *const *persist = sg_persistence_home_paths;
    static const char *const sys_persist[] = {"/etc/cron", "/etc/systemd", "/etc/profile",
                                              "/etc/bash.bashrc", "/etc/ld.so.preload",
                                              "/etc/rc.local", "/var/spool/cron", "/etc/init.d"};
    char buf[PATH_MAX];
    for (size_t i = 0; home && persist[i]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", home, persist[i]);
        if (within(path, buf))
            return "persistence";
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(sys_persist); i++)
        if (!strncmp(path, sys_persist[i], strlen(sys_persist[i])))
            return "persistence";
    /* a repository's hooks (and its config, which can name other hooks and
     * an fsmonitor program) run at the next git command of whoever uses it */
    if (strstr(path, "/.git/hooks/") || sg_str_has_suffix(path, "/.git/hooks") ||
        sg_str_has_suffix(path, "/.git/config"))
        return "persistence";
    for (size_t i = 0; home && sg_sensitive_home_paths[i]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", home, sg_sensitive_home_paths[i]);
        if (within(path, buf))
            return "credential";
    }
    /* what git, shells, editors and agents run by themselves (protected.h),
     * the credential places among them said as such above */
    return sg_protected_path(path, NULL) ? "persistence" : "file";
}

/* For the prompt: does the path exist in the skill's view, and as what?
 * (Information only: the decision never rests on it.) */
/* A new file's folder that is not there either: the first missing one
 * from the top (the one the skill must make), into dir; false when the
 * file's own folder exists. */
static bool missing_folder(pid_t pid, const char *path, char *dir, size_t n)
{
    struct stat st;
    if (snprintf(dir, n, "%s", path) >= (int)n)
        return false;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return false;
    *slash = '\0';
    if (sg_notif_lstat(pid, dir, &st) == 0)
        return false;
    /* up while the folder above is missing too */
    for (char *up; (up = strrchr(dir, '/')) && up != dir;) {
        *up = '\0';
        bool there = sg_notif_lstat(pid, dir, &st) == 0;
        *up = '/';
        if (there)
            break;
        *up = '\0';
    }
    return true;
}

static void describe_target(pid_t pid, const char *path, char *out, size_t n)
{
    struct stat st;
    char dir[PATH_MAX];
    if (sg_notif_lstat(pid, path, &st) < 0 && missing_folder(pid, path, dir, sizeof dir)) {
        if (snprintf(out, n, "does not exist, nor its folder %s: allowed, the write still fails "
                             "until the skill makes that folder", dir) >= (int)n)
            snprintf(out, n, "does not exist, nor its folder: allowed, the write still fails "
                             "until the skill makes the folder");
        return;
    }
    if (sg_notif_lstat(pid, path, &st) < 0) {
        snprintf(out, n, "does not exist yet (a new file)");
        return;
    }
    snprintf(out, n, "exists: %s, %lld bytes",
             S_ISREG(st.st_mode)   ? "a file"
             : S_ISDIR(st.st_mode) ? "a folder"
             : S_ISLNK(st.st_mode) ? "a symbolic link (never followed)"
                                   : "a special file",
             (long long)st.st_size);
}

/* mkdir of a folder that exists, or an O_CREAT open of an existing file for
 * reading only, change nothing: the kernel answers them (EEXIST, or the
 * open), as it would without us, so `mkdir -p` and friends keep working. */
static bool harmless_on_existing(const struct seccomp_notif *req, const char *syscall,
                                 const char *path)
{
    struct stat st;
    if (sg_notif_lstat(req->pid, path, &st) < 0)
        return false;
    if (!strcmp(syscall, "mkdir") || !strcmp(syscall, "mkdirat"))
        return true;
    int fa = !strcmp(syscall, "open") ? 1 : !strcmp(syscall, "openat") ? 2 : -1;
    if (fa < 0)
        return false;
    unsigned long long fl = req->data.args[fa];
    return !(fl & (O_WRONLY | O_RDWR | O_TRUNC));
}

/* ---- writes through /proc and the descriptor links ---- */

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* N of a descriptor link the skill names for itself (/dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /dev/stdin, stdout, stderr);
 * -1 for any other path. */
static int fd_link_number(const char *path)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    static const char *const pre[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(path, std[i]))
            return i;
    for (size_t i = 0; i < SG_ARRAY_LEN(pre); i++) {
        size_t n = strlen(pre[i]);
        if (strncmp(path, pre[i], n))
            continue;
        const char *d = path + n;
        long v = 0;
        size_t k = 0;
        for (; d[k] >= '0' && d[k] <= '9' && k < 9; k++)
            v = v * 10 + (d[k] - '0');
        return k > 0 && d[k] == '\0' ? (int)v : -1;
    }
    return -1;
}

/* The object behind the skill's descriptor n, opened again for the call
 * (flags) and handed over as its result: only a pipe, or one of the
 * harmless devices (null, zero, full, random, urandom), which hold no file
 * of a write path. 2: answered; -errno otherwise (-EACCES: *why says). */
/* The skill thread's descriptor n, as the broker's own: an fd, or -ENOENT
 * (no such link in /proc/self/fd), -ESRCH. */
static int take_fd(pid_t tid, int n)
{
    int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (pidfd < 0)
        pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
    if (pidfd < 0)
        return -ESRCH;
    int obj = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
    int e = errno;
    close(pidfd);
    return obj >= 0 ? obj : e == EBADF ? -ENOENT : -e;
}

static int reopen_descriptor(int notify_fd, const struct seccomp_notif *req, int n,
                             unsigned long long flags, const char **why)
{
    int obj = take_fd((pid_t)req->pid, n);
    if (obj < 0)
        return obj;
    struct stat st;
    int r = fstat(obj, &st) < 0 ? -errno : 0;
    unsigned mi = (unsigned)(st.st_rdev & 0xff);
    bool dev = !r && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
               (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9);
    struct statfs sf;
    bool anon_pipe = !r && S_ISFIFO(st.st_mode) && fstatfs(obj, &sf) == 0 &&
                     sf.f_type == PIPEFS_MAGIC;
    int have = fcntl(obj, F_GETFL);
    int want = (int)(flags & O_ACCMODE);
    /* never more than the descriptor itself gives: a read end is not
     * reopened for writing, nor a pipe's write end for reading */
    bool within_own = have >= 0 && ((have & O_ACCMODE) == O_RDWR || (have & O_ACCMODE) == want);
    if (!r && S_ISSOCK(st.st_mode))
        r = -ENXIO; /* the kernel's answer: a socket is not opened by a path */
    else if (!r && anon_pipe && !within_own) {
        r = -EACCES;
        *why = "it asks more of a pipe than the descriptor it names gives";
    } else if (!r && !anon_pipe && !dev) {
        r = -EACCES;
        *why = S_ISREG(st.st_mode) ? "it reaches a file through a descriptor link; write the "
                                     "file by its name, where it is decided and counted"
                                   : "it reaches no pipe of its own or harmless device (a named "
                                     "FIFO is opened by its name)";
    }
    int f = -1;
    if (!r) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", obj);
        int keep = (int)(flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC));
        /* never blocks: a pipe nobody reads is ENXIO here, not a hung loop */
        f = open(self, keep | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        r = f < 0 ? -errno : 0;
        if (f >= 0 && !(flags & O_NONBLOCK))
            fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    }
    close(obj);
    if (r < 0)
        return r;
    struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)f,
                                      .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    r = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 2;
    close(f);
    return r;
}

/* A write-intent call whose path goes through /proc or a descriptor link:
 * decided on the object it reaches, never let continue (the kernel would
 * follow the magic link to a file the name does not tell, unseen and
 * uncounted). An open of the skill's own descriptor link that reaches a
 * pipe or a harmless device is done by the broker; everything else is
 * refused and said, with the place it names (/proc/self/root/X is X). */
static int through_proc(const struct sg_plan *p, int notify_fd, const struct seccomp_notif *req,
                        const char *syscall, const char *path, unsigned long long flags,
                        struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    bool opens = !strcmp(syscall, "open") || !strcmp(syscall, "openat") ||
                 !strcmp(syscall, "creat");
    int n = opens ? fd_link_number(path) : -1;
    const char *why = "a write through /proc or a descriptor link reaches a file that its name "
                      "does not tell";
    resp->flags = 0;
    if (n >= 0) {
        int r = reopen_descriptor(notify_fd, req, n, flags, &why);
        if (r == 2)
            return 2;
        if (r != -EACCES) {
            resp->error = r; /* the kernel's own answer: ENOENT, ENXIO */
            return 1;
        }
    }
    resp->error = -EACCES;
    const char *named = path;
    static const char *const roots[] = {"/proc/self/root", "/proc/thread-self/root"};
    for (size_t i = 0; i < SG_ARRAY_LEN(roots); i++)
        if (within(path, roots[i]))
            named = path[strlen(roots[i])] ? path + strlen(roots[i]) : "/";
    const char *cls = sg_fs_class(p->home, named);
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:b}", "syscall", syscall, "path", path,
                          "names", named, "class", cls, "pid", (int)req->pid, "reason", why,
                          "prevented", 1),
                "write to %s refused (%s): %s%s", path, syscall, why,
                !strcmp(cls, "persistence") ? "; it names a persistence location"
                : !strcmp(cls, "credential") ? "; it names a credential location"
                                             : "");
    return 1;
}

/* ---- writes in the private views, done by the broker ---- */

/* The folder that path (a private view's: /tmp, the home, /dev/shm) lands
 * in, opened in the skill's view with every link on the way followed, as
 * the kernel would: the call is then done on that folder, never on the
 * name again. It must lie on one of the writable views (their devices:
 * sg_diskcap_own_fs): a symlink the skill made there (to a declared write
 * path, to /proc/self/root/..., to the sandbox's /run) leads elsewhere,
 * where nothing would count or hold the file, or Landlock keeps the skill
 * out and would not keep out the broker. An fd, -EACCES (elsewhere), or the kernel's own answer (ENOENT,
 * ENOTDIR, ELOOP). *last: the name in it. */
static int private_parent(const struct sg_diskcap *dc, pid_t pid, const char *path, char *buf,
                          size_t max, const char **last)
{
    if (snprintf(buf, max, "%s", path) >= (int)max)
        return -ENAMETOOLONG;
    char *slash = strrchr(buf, '/');
    if (!slash || !slash[1])
        return -EACCES;
    *last = slash + 1;
    const char *dir = buf;
    if (slash == buf)
        dir = "/";
    else
        *slash = '\0';
    int o = sg_notif_open(pid, dir, O_PATH | O_DIRECTORY, true);
    if (o < 0)
        return o;
    struct stat st;
    if (fstat(o, &st) < 0 || !sg_diskcap_is_own_fs(dc, st.st_dev)) {
        close(o);
        return -EACCES;
    }
    return o;
}

/* Hand f over as the call's result (and close it): 2, or -errno. */
static int hand_over(int notify_fd, const struct seccomp_notif *req, int f,
                     unsigned long long flags)
{
    struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)f,
                                      .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    int r = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 2;
    close(f);
    return r;
}

/* Open path1 for the call, as the skill, in its private view: the name
 * beneath its folder (links followed while they stay on that mount), or a
 * last link that leaves it followed to a file that is there already on the
 * sandbox's own tmpfs. An fd or -errno; *fifo when the object is a FIFO or
 * device (its open may block: the kernel's). */
static int private_open(const struct sg_plan *p, const struct sg_diskcap *dc, pid_t pid,
                        const char *path, unsigned long long flags, mode_t mode, bool *fifo,
                        int links)
{
    char buf[PATH_MAX], next[PATH_MAX] = "";
    const char *last;
    bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
    struct stat was;
    if (!tmpfile && sg_notif_lstat(pid, path, &was) == 0 && S_ISDIR(was.st_mode))
        return -EISDIR; /* the kernel's answer to a write-intent open of a folder (a view's
                         * root too, whose own folder is no view) */
    int pfd = tmpfile ? sg_notif_open(pid, path, O_PATH | O_DIRECTORY, true)
                      : private_parent(dc, pid, path, buf, sizeof buf, &last);
    struct stat st;
    if (tmpfile && pfd >= 0 && (fstat(pfd, &st) < 0 || !sg_diskcap_is_own_fs(dc, st.st_dev))) {
        close(pfd);
        pfd = -EACCES;
    }
    if (pfd < 0)
        return pfd;
    struct sg_skill_creds sv;
    unsigned long long fl = (flags & 037777777) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    struct open_how how = {.flags = fl, .mode = (flags & O_CREAT) || tmpfile ? mode : 0,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS};
    sg_become_skill(p, &sv);
    long f = syscall(SYS_openat2, pfd, tmpfile ? "." : last, &how, sizeof how);
    int e = f < 0 ? -errno : 0;
    if ((e == -EXDEV || e == -ELOOP) && !tmpfile && !(flags & O_NOFOLLOW)) {
        /* a last link out of the folder: only to what is there already */
        int o = sg_notif_open(pid, path, O_PATH, true);
        e = o;
        if (o >= 0) {
            if (fstat(o, &st) < 0 || !sg_diskcap_is_own_fs(dc, st.st_dev) ||
                (flags & O_EXCL)) {
                e = (flags & O_EXCL) ? -EEXIST : -EACCES;
            } else {
                char self[64];
                snprintf(self, sizeof self, "/proc/self/fd/%d", o);
                f = open(self, (int)(fl & ~(unsigned long long)(O_CREAT | O_EXCL | O_NOFOLLOW)));
                e = f < 0 ? -errno : 0;
            }
            close(o);
        } else if (o == -ENOENT && (flags & O_CREAT)) {
            /* a dangling link makes its target: that name, decided the same
             * way (its folder must be the sandbox's own too) */
            char lt[PATH_MAX];
            ssize_t n = readlinkat(pfd, last, lt, sizeof lt - 1);
            e = -ELOOP;
            if (n > 0 && links < 8) {
                lt[n] = '\0';
                int k = lt[0] == '/' ? snprintf(next, sizeof next, "%s", lt)
                                     : snprintf(next, sizeof next, "%.*s/%s",
                                                (int)(last - buf - 1), buf, lt);
                e = k > 0 && k < (int)sizeof next && sg_path_normalize(next) == 0
                        ? -EAGAIN
                        : -ENAMETOOLONG;
            }
        }
    }
    sg_become_broker(&sv);
    close(pfd);
    if (e == -EAGAIN)
        return private_open(p, dc, pid, next, flags, mode, fifo, links + 1);
    if (e == -ENXIO)
        *fifo = true; /* a FIFO nobody reads yet */
    if (e < 0)
        return e;
    if (fstat((int)f, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        *fifo = true;
    if (!(flags & O_NONBLOCK))
        fcntl((int)f, F_SETFL, fcntl((int)f, F_GETFL) & ~O_NONBLOCK);
    return (int)f;
}

/* unlink, rmdir and rename in the private views: done by the broker as the
 * skill, on the folders it opened and checked (they must lie on the
 * sandbox's own writable views), never let continue: the kernel would read
 * the names again from the skill's memory, where another thread can turn
 * them into a declared write path's `.git/config`, or follow a symlink of
 * the skill's (/tmp/l -> a declared folder) there. 1: resp set. */
static int private_unlink_rename(const struct sg_plan *p, const struct sg_diskcap *dc,
                                 const struct seccomp_notif *req, const char *sc,
                                 const char *path1, const char *path2,
                                 struct seccomp_notif_resp *resp, const char **stray)
{
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    bool renames = !strncmp(sc, "rename", 6);
    const char *below;
    if (renames && path2[0] && sg_host_bind(p, path2, &below)) {
        resp->error = -EXDEV; /* another mount: the kernel's answer */
        return 1;
    }
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *l1, *l2 = NULL;
    int p1 = private_parent(dc, pid, path1, b1, sizeof b1, &l1);
    int p2 = renames && p1 >= 0 ? private_parent(dc, pid, path2, b2, sizeof b2, &l2) : -1;
    int r = p1 < 0 ? p1 : renames && p2 < 0 ? p2 : 0;
    if (r == -EACCES)
        *stray = renames && p1 >= 0 ? path2 : path1;
    if (!r) {
        struct stat s1, s2;
        if (renames && (fstat(p1, &s1) < 0 || fstat(p2, &s2) < 0 || s1.st_dev != s2.st_dev))
            r = -EXDEV; /* two views are two mounts */
    }
    if (!r) {
        struct sg_skill_creds sv;
        sg_become_skill(p, &sv);
        if (renames)
            r = syscall(SYS_renameat2, p1, l1, p2, l2,
                        !strcmp(sc, "renameat2") ? (unsigned)a[4] : 0u) < 0 ? -errno : 0;
        else
            r = unlinkat(p1, l1, !strcmp(sc, "rmdir")      ? AT_REMOVEDIR
                                 : !strcmp(sc, "unlinkat") ? (int)(a[2] & AT_REMOVEDIR)
                                                                : 0) < 0
                    ? -errno
                    : 0;
        sg_become_broker(&sv);
    }
    if (p1 >= 0)
        close(p1);
    if (p2 >= 0)
        close(p2);
    resp->error = r;
    return 1;
}

/* A write-intent call in a private view (/tmp, the home, /dev/shm, and
 * /dev/null and friends), done by the broker as the skill would do it, on
 * the folder it checked: the kernel never reads the name again, so no
 * thread can point it into a declared write path in between. 2: answered
 * with a descriptor; 1: resp set; 0: continue (unlink, rmdir and rename,
 * which make no name and no byte: whatever a re-read name reaches, the
 * mounts and Landlock hold; and the open of a FIFO or device that is there
 * already, without O_CREAT or O_TRUNC, whose open may block). */
static int private_write_do(const struct sg_plan *p, struct sg_diskcap *dc, int notify_fd,
                            const struct seccomp_notif *req, int memfd, const char *syscall,
                            const char *path1, const char *path2, unsigned long long flags,
                            unsigned long long mode, struct seccomp_notif_resp *resp,
                            const char **stray)
{
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    bool opens = !strcmp(syscall, "open") || !strcmp(syscall, "openat") ||
                 !strcmp(syscall, "creat");
    /* the skill's umask (a read of /proc/PID/status) only for what makes a
     * file or folder with a mode */
    bool makes = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ||
                 !strncmp(syscall, "mkdir", 5);
    mode_t m = makes ? (mode_t)(mode & 01777) & ~sg_skill_umask(pid) : 0;
    resp->flags = 0;
    if (!strcmp(syscall, "unlink") || !strcmp(syscall, "unlinkat") || !strcmp(syscall, "rmdir") ||
        !strncmp(syscall, "rename", 6))
        return private_unlink_rename(p, dc, req, syscall, path1, path2, resp, stray);
    if (opens) {
        for (size_t i = 0; i < SG_ARRAY_LEN(dev_files); i++)
            if (!strcmp(path1, dev_files[i])) {
                int keep = (int)(flags & (O_ACCMODE | O_APPEND | O_NONBLOCK));
                int f = open(dev_files[i], keep | O_CLOEXEC | O_NOCTTY);
                resp->error = f < 0 ? -errno : 0;
                return f < 0 ? 1 : (resp->error = hand_over(notify_fd, req, f, flags)) == 2 ? 2 : 1;
            }
        bool fifo = false;
        int f = private_open(p, dc, pid, path1, flags, m, &fifo, 0);
        if (fifo && f < 0 && !(flags & O_EXCL) && (flags & O_TMPFILE) != O_TMPFILE) {
            /* a FIFO or device there already: the broker opens that very
             * object (found in the skill's view, on its own views), never
             * blocking; a blocking open waits for a reader in diskcap */
            struct stat st;
            int obj = sg_notif_open(pid, path1, O_PATH, !(flags & O_NOFOLLOW));
            if (obj >= 0 && (fstat(obj, &st) < 0 || !sg_diskcap_is_own_fs(dc, st.st_dev))) {
                close(obj);
                obj = -EACCES;
                *stray = path1;
            }
            if (obj < 0) {
                resp->error = obj;
                return 1;
            }
            return sg_diskcap_special(dc, notify_fd, req, obj, flags, resp);
        }
        if (f == -EACCES)
            *stray = path1;
        if (f < 0) {
            resp->error = f;
            return 1;
        }
        int r = hand_over(notify_fd, req, f, flags);
        resp->error = r;
        return r == 2 ? 2 : 1;
    }
    if (!strcmp(syscall, "truncate")) {
        bool fifo = false;
        int f = private_open(p, dc, pid, path1, O_WRONLY, 0, &fifo, 0);
        if (f == -EACCES)
            *stray = path1;
        resp->error = f < 0 ? f : ftruncate(f, (off_t)a[1]) < 0 ? -errno : 0;
        if (f >= 0)
            close(f);
        return 1;
    }
    /* the rest make a name: mkdir, mknod (path1), symlink, link (path2: the
     * new name) */
    const char *made = path2[0] ? path2 : path1;
    char buf[PATH_MAX], target[PATH_MAX];
    const char *last;
    struct stat was;
    if (sg_notif_lstat(pid, made, &was) == 0) {
        resp->error = -EEXIST; /* nothing made: the kernel's answer (mkdir -p of /tmp) */
        return 1;
    }
    int pfd = private_parent(dc, pid, made, buf, sizeof buf, &last);
    if (pfd == -EACCES)
        *stray = made;
    if (pfd < 0) {
        resp->error = pfd;
        return 1;
    }
    int r = 0, old = -1;
    if (!strncmp(syscall, "symlink", 7))
        r = sg_notif_read_str(memfd, a[0], target, sizeof target);
    else if (!strncmp(syscall, "link", 4)) {
        bool at = !strcmp(syscall, "linkat");
        int lflags = at ? (int)a[4] : 0;
        char first = '\0';
        if (at && (lflags & AT_EMPTY_PATH) && sg_notif_read_str(memfd, a[1], &first, 1) == 0)
            old = take_fd(pid, (int)a[0]); /* linkat(fd, "", ...): that file */
        else if (!(r = sg_notif_path(pid, memfd, at ? (int)a[0] : AT_FDCWD, at ? a[1] : a[0], 0,
                                     target, sizeof target)))
            /* an O_TMPFILE's /proc/self/fd/N is the skill's descriptor N */
            old = fd_link_number(target) < 0 ? sg_notif_open(pid, target, O_PATH,
                                                             (lflags & AT_SYMLINK_FOLLOW) != 0)
                  : (lflags & AT_SYMLINK_FOLLOW) ? take_fd(pid, fd_link_number(target))
                                                 : -EXDEV; /* the link itself is procfs' */
        if (!r && old < 0)
            r = old;
        struct stat st;
        if (!r && (fstat(old, &st) < 0 || !sg_diskcap_is_own_fs(dc, st.st_dev)))
            r = -EXDEV; /* the kernel's answer across filesystems */
    }
    if (!r) {
        struct sg_skill_creds sv;
        sg_become_skill(p, &sv);
        if (!strncmp(syscall, "mkdir", 5))
            r = mkdirat(pfd, last, m) < 0 ? -errno : 0;
        else if (!strncmp(syscall, "symlink", 7))
            r = symlinkat(target, pfd, last) < 0 ? -errno : 0;
        else if (!strncmp(syscall, "mknod", 5)) {
            unsigned long long md = !strcmp(syscall, "mknodat") ? a[2] : a[1];
            mode_t type = (mode_t)md & S_IFMT;
            r = type && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK
                    ? -EPERM
                    : mknodat(pfd, last, (type ? type : S_IFREG) |
                                             ((mode_t)(md & 07777) & ~sg_skill_umask(pid)),
                              0) < 0 ? -errno : 0;
        } else {
            char self[64];
            snprintf(self, sizeof self, "/proc/self/fd/%d", old);
            r = linkat(AT_FDCWD, self, pfd, last, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
        }
        sg_become_broker(&sv);
    }
    if (old >= 0)
        close(old);
    close(pfd);
    resp->error = r;
    return 1;
}

/* A call in a private view that a symbolic link led out of it, said. */
static void stray_event(const struct seccomp_notif *req, const char *sc, const char *path,
                        struct sg_event_bus *bus)
{
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:i, s:s, s:b}", "syscall", sc, "path", path, "class",
                          "file", "pid", (int)req->pid, "reason",
                          "a symbolic link out of the private view", "prevented", 1),
                "%s of %s refused: a symbolic link there leads out of the sandbox's private "
                "folders (write a declared path by its own name, where it is counted)",
                sc, path);
}

/* chmod and utime in the private views: done by the broker as the skill on
 * the object found in the skill's view (its links followed there, or the
 * last one not, as the call asks), which must lie on one of the sandbox's
 * own writable views; never let continue (the name read again could be a
 * declared path's hook). 0 or -errno; *stray when it leads elsewhere. */
static int private_meta(const struct sg_plan *p, const struct sg_diskcap *dc,
                        const struct seccomp_notif *req, const char *sc, const char *path,
                        unsigned long long mode, const struct timespec ts[2], bool ts_now,
                        const char **stray)
{
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    bool chm = strstr(sc, "chmod") != NULL;
    bool nofollow = (!strcmp(sc, "fchmodat2") || !strcmp(sc, "utimensat")) &&
                    (a[3] & AT_SYMLINK_NOFOLLOW);
    for (size_t i = 0; i < SG_ARRAY_LEN(dev_files); i++)
        if (!strcmp(path, dev_files[i]))
            return chm ? -EPERM : 0; /* root's device: its mode is not the skill's to change;
                                      * its times (touch /dev/null) change nothing worth it */
    int o = sg_notif_open(pid, path, O_PATH, !nofollow);
    if (o < 0)
        return o;
    struct stat st;
    int r = fstat(o, &st) < 0 ? -errno : 0;
    if (!r && !sg_diskcap_is_own_fs(dc, st.st_dev)) {
        *stray = path;
        r = -EACCES;
    }
    if (!r && S_ISLNK(st.st_mode) && chm)
        r = -EOPNOTSUPP; /* the kernel's answer: a link's mode is no mode */
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", o);
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    if (!r && chm) {
        r = fchmodat(AT_FDCWD, self, (mode_t)mode & 07777, 0) < 0 ? -errno : 0;
    } else if (!r && S_ISLNK(st.st_mode)) {
        /* a link's own times: by its folder, checked to be the view's too */
        char b[PATH_MAX];
        const char *last;
        int pfd = private_parent(dc, pid, path, b, sizeof b, &last);
        r = pfd < 0 ? pfd
            : utimensat(pfd, last, ts_now ? NULL : ts, AT_SYMLINK_NOFOLLOW) < 0 ? -errno
                                                                                : 0;
        if (pfd >= 0)
            close(pfd);
    } else if (!r) {
        r = utimensat(AT_FDCWD, self, ts_now ? NULL : ts, 0) < 0 ? -errno : 0;
    }
    sg_become_broker(&sv);
    close(o);
    return r;
}

/* The same, and a refusal there is said (fs_blocked). */
static int private_write(const struct sg_plan *p, struct sg_diskcap *dc, int notify_fd,
                         const struct seccomp_notif *req, int memfd, const char *syscall,
                         const char *path1, const char *path2, unsigned long long flags,
                         unsigned long long mode, struct seccomp_notif_resp *resp,
                         struct sg_event_bus *bus)
{
    const char *stray = NULL;
    int k = private_write_do(p, dc, notify_fd, req, memfd, syscall, path1, path2, flags, mode,
                             resp, &stray);
    if (stray)
        stray_event(req, syscall, stray, bus);
    return k;
}

/* ---- approved writes, done by the broker ---- */

struct write_wait {
    const struct sg_plan *p;
    const int *pins;
    struct sg_event_bus *bus;
    int fd;
    uint64_t id;
    struct sg_perm *perm;
    pid_t pid;
    char syscall[32];
    char path1[PATH_MAX], path2[PATH_MAX];
    unsigned long long flags, mode, arg;
    bool ask2; /* a rename whose destination is outside the writable paths too */
    struct sg_diskcap *dc;     /* the files approved in this run */
    struct timespec ts[2];     /* utime's times, read once from the skill */
    bool ts_now;               /* utime's times: now */
    bool for_group;            /* only on a file root made for the skill's group (meta_do) */
    bool src_dir;              /* a rename's source was a folder (or link) when asked */
    bool dst_dir;              /* and its destination (what an exchange brings back) */
    char target[PATH_MAX];     /* a symlink's text (a protected name in a declared path) */
    const char *protect;       /* why it is protected, found on the objects (declared_call) */
    bool said;                 /* its refusal was an event already */
};

#define host_bind sg_host_bind

/* The host folder behind the deepest bind over path, and path below it:
 * the folder pinned before launch (pin.h), never opened by name again. */
static int host_parent(const struct sg_plan *p, const int *pins, const char *path, char *rel,
                       size_t relmax)
{
    const char *r;
    const struct sg_mount *best = host_bind(p, path, &r);
    if (!best)
        return -EROFS;
    if (!*r || snprintf(rel, relmax, "%s", r) >= (int)relmax)
        return -EINVAL;
    int pin = pins ? pins[best - p->mounts] : -1;
    if (pin < 0)
        return -EBADF;
    int dfd = fcntl(pin, F_DUPFD_CLOEXEC, 3);
    return dfd < 0 ? -errno : dfd;
}

/* The host path behind a sandbox path (the deepest bind's), or NULL when
 * no host folder backs it. Caller frees. */
static char *host_path(const struct sg_plan *p, const char *path)
{
    const char *below;
    const struct sg_mount *b = path[0] ? host_bind(p, path, &below) : NULL;
    return b ? sg_xasprintf("%s%s%s", b->src, *below ? "/" : "", below) : NULL;
}

/* The host object at path (beneath its bind's pinned folder, no link
 * followed): 0 with *st, or -errno. */
static int host_lstat(const struct sg_plan *p, const int *pins, const char *path,
                      struct stat *st)
{
    char rel[PATH_MAX];
    const char *last;
    int dfd = host_parent(p, pins, path, rel, sizeof rel);
    int pfd = dfd < 0 ? dfd : parent_of(dfd, rel, &last);
    int r = pfd < 0 ? pfd : fstatat(pfd, last, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    if (pfd >= 0)
        close(pfd);
    if (dfd >= 0)
        close(dfd);
    return r;
}

/* Is spath (below bind) a mount point of the sandbox's, or a folder above
 * one? */
static bool holds_mount(const struct sg_plan *p, const struct sg_mount *bind, const char *spath)
{
    size_t n = strlen(spath);
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if (m != bind && m->kind != SG_MNT_SYMLINK && !strncmp(m->dst, spath, n) &&
            (m->dst[n] == '\0' || m->dst[n] == '/'))
            return true;
    }
    return false;
}

/* Why a call on path (or, for a rename or link, onto path2 from path1)
 * touches a protected target (protected.h), decided on the host paths the
 * broker acts on (no link followed there); NULL when it does not. */
static const char *protected_end(const struct sg_plan *p, const char *path1, const char *path2,
                                 bool moves, bool dir)
{
    cleanup_free char *h1 = host_path(p, path1);
    cleanup_free char *h2 = path2 && path2[0] ? host_path(p, path2) : NULL;
    if (!path2 || !path2[0])
        return h1 ? sg_protected_path(h1, NULL) : NULL;
    if (moves && h2)
        return sg_protected_move(h1 ? h1 : path1, h2, dir);
    return h2 ? sg_protected_path(h2, NULL) : NULL;
}

/* Would doing this to path touch skillgate's own folders on the host (be
 * one, be in one, or hold one that a rename or rmdir would move)? Then no
 * rule or person may approve it: that is how a grant gets forged. */
static const char *own_folder_hit(const struct sg_plan *p, const char *path)
{
    const char *r;
    const struct sg_mount *b = host_bind(p, path, &r);
    if (!b)
        return NULL;
    cleanup_free char *host = *r ? sg_xasprintf("%s/%s", b->src, r) : sg_xstrdup(b->src);
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    size_t which = 0;
    const char *what = sg_own_dirs_relation(&own, host, &which) != SG_OWN_NONE
                           ? own.v[which].what
                           : NULL;
    sg_own_dirs_free(&own);
    return what; /* a static string: "config", "state", "runtime" */
}

/* An approved write is a write: the broker (root) opened the file with the
 * skill's O_RDWR, and hands it on readable only when the skill could read
 * the file itself (owner, group or other bits for its uid and gid; as root
 * the skill has no other groups). Otherwise the same file again, write-only
 * (O_APPEND kept). Without root the broker is the skill's own user: the
 * kernel checked that already. */
static int write_only_unless_readable(const struct sg_plan *p, int f, unsigned long long flags)
{
    struct stat st;
    if (!p->as_root || (flags & O_ACCMODE) != O_RDWR || fstat(f, &st) < 0)
        return f;
    mode_t bit = st.st_uid == p->skill_uid   ? S_IRUSR
                 : st.st_gid == p->skill_gid ? S_IRGRP
                                             : S_IROTH;
    if (st.st_mode & bit)
        return f;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", f);
    int w = open(self, O_WRONLY | O_CLOEXEC | O_NOCTTY | (int)(flags & (O_APPEND | O_NONBLOCK)));
    close(f);
    return w < 0 ? -errno : w;
}

/* What the broker makes for an approved write is the invoking user's: under
 * sudo the sudo user (whom the skill runs as), not root; otherwise the
 * broker already is that user. Existing files are never touched. */
static int give_to_invoker(const struct sg_plan *p, int dfd, const char *name)
{
    if (p->via_sudo)
        return fchownat(dfd, name, p->skill_uid, p->skill_gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno
                                                                                        : 0;
    /* as root without sudo: root's, in the skill's group (the folder just
     * made, opened without following a link) */
    int o = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int r = o < 0 ? -errno : sg_give_skills_group(p, o);
    if (o >= 0)
        close(o);
    return r;
}

static int open_as_invoker(const struct sg_plan *p, int dfd, const char *rel,
                           unsigned long long flags, unsigned long long mode)
{
    if (!p->as_root || !(flags & O_CREAT))
        return sg_beneath_file(dfd, rel, flags, mode);
    /* made here (O_EXCL) and so ours to give, or there already: opened as it is;
     * as root without sudo it stays root's, in the skill's group */
    int f = sg_beneath_file(dfd, rel, flags | O_EXCL, mode);
    if (f >= 0) {
        int e = p->via_sudo ? (fchown(f, p->skill_uid, p->skill_gid) < 0 ? -errno : 0)
                            : sg_give_skills_group(p, f);
        if (e < 0) {
            close(f);
            return e;
        }
        return f;
    }
    if (f != -EEXIST || (flags & O_EXCL))
        return f;
    return sg_beneath_file(dfd, rel, flags & ~(unsigned long long)O_CREAT, mode);
}

static void write_decided(void *ctx, enum sg_decision d);

/* As root without sudo: a file or folder root made for the skill in a
 * declared folder nobody may write (diskcap.c to_skills_group): root's,
 * in the skill's group, writable by it. */
static bool made_for_group(const struct sg_plan *p, const struct stat *st)
{
    return p->as_root && !p->via_sudo && st->st_uid == 0 && st->st_gid == p->skill_gid &&
           (st->st_mode & S_IWGRP) && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode));
}

/* A Write there would be high risk (a persistence place, a system
 * folder): never a name the broker makes for the skill unasked. */
static bool high_risk(const char *path)
{
    struct sg_preq *q = sg_xcalloc(1, sizeof *q);
    q->tool = SG_PT_WRITE;
    SG_PREQ_SET(q, subject, path);
    char why[256];
    bool high = q->cut || sg_preq_risk(q, sg_invoking_home(), why, sizeof why) >= SG_RL_HIGH;
    free(q);
    return high;
}

/* for_group: is pfd a folder the skill may change names in by the rules
 * it meets there: the declared folder itself (its pinned host folder), or
 * one root made for its group? Never a root 0700 one below it. */
static bool group_parent(const struct write_wait *w, int pfd, const char *path)
{
    const char *below;
    const struct sg_mount *b = host_bind(w->p, path, &below);
    int pin = b && w->pins ? w->pins[b - w->p->mounts] : -1;
    struct stat st, ps;
    if (!w->for_group)
        return true;
    if (fstat(pfd, &st) < 0)
        return false;
    if (pin >= 0 && fstat(pin, &ps) == 0 && ps.st_dev == st.st_dev && ps.st_ino == st.st_ino)
        return true;
    return made_for_group(w->p, &st);
}

/* for_group: may the skill (nobody) rename or remove the name last in
 * pfd (a folder group_parent lets it change names in)? What is there is
 * its own, made for its group, or a regular file: root declared the
 * folder writable, and replacing or removing a file there (the atomic
 * save of every office library: mkstemp, then rename onto doc.xml) is
 * what root, the person, may do; a folder or anything else of root's is
 * not (no name there: nothing to check). */
static bool group_may(const struct write_wait *w, int pfd, const char *last)
{
    struct stat st;
    if (!w->for_group || fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return true;
    return st.st_uid == w->p->skill_uid || made_for_group(w->p, &st) ||
           (S_ISREG(st.st_mode) && st.st_uid == 0); /* root's, as documented */
}

/* The person's own file: under sudo the broker (root) changes a mode or
 * times only of what the invoking user owns, as the kernel would let that
 * user; as root or as the user itself the kernel decides. */
static int meta_do(const struct write_wait *w, int f)
{
    struct stat st;
    if (fstat(f, &st) < 0)
        return -errno;
    if (w->p->via_sudo && st.st_uid != w->p->skill_uid)
        return -EPERM;
    if (w->for_group && st.st_uid != w->p->skill_uid && !made_for_group(w->p, &st))
        return -EPERM; /* the kernel's answer to nobody on root's file */
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", f);
    mode_t m = (mode_t)(w->mode & 07777);
    /* the skill is that file's owner through its group: the group keeps
     * the owner's bits (chmod 644 leaves it writable, as for an owner) */
    if (made_for_group(w->p, &st))
        m = (m & (mode_t)~070) | ((m & 0700) >> 3) | (S_ISDIR(st.st_mode) ? S_ISGID : 0);
    if (!S_ISDIR(st.st_mode))
        m &= (mode_t)~(S_ISUID | S_ISGID); /* never on a host file the broker changes */
    if (strstr(w->syscall, "chmod"))
        return fchmodat(AT_FDCWD, self, m, 0) < 0 ? -errno : 0;
    return utimensat(AT_FDCWD, self, w->ts_now ? NULL : w->ts, 0) < 0 ? -errno : 0;
}

/* Remember the object now at path (beneath pfd, name last) as approved. */
static void note_approved(struct write_wait *w, const char *path, int pfd, const char *last)
{
    struct stat st;
    if (w->dc && fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0)
        sg_diskcap_approve(w->dc, path, &st);
}

static int approved_open(struct write_wait *w, int dfd, const char *rel, bool *answered)
{
    int f = open_as_invoker(w->p, dfd, rel, w->flags & ~(unsigned long long)O_CLOEXEC, w->mode);
    f = f >= 0 ? write_only_unless_readable(w->p, f, w->flags) : f;
    if (f < 0)
        return f;
    struct stat st;
    if (w->dc && fstat(f, &st) == 0)
        sg_diskcap_approve(w->dc, w->path1, &st);
    /* never a chown or chmod of a host file: the descriptor is the grant,
     * and it lasts as long as the skill holds it */
    struct seccomp_notif_addfd add = {.id = w->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)f,
                                      .newfd_flags = (w->flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    /* the descriptor arrives as the call's own result */
    *answered = ioctl(w->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0;
    int r = *answered ? 0 : -errno;
    close(f);
    return r;
}

/* A brokered rename moves only a regular file or a folder (an approval
 * belongs to what was approved: a FIFO renamed over an approved name, then
 * opened by the broker, once held its loop; a symlink there would lead the
 * person's next program elsewhere), and only what it was asked about: a
 * source that is a folder now but was not then (or the other way) is a
 * new question. 0 or -EACCES (and said). */
static int movable(struct write_wait *w, int pfd, const char *last, int p2, const char *last2)
{
    struct stat st, st2;
    if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    bool exch = (w->arg & RENAME_EXCHANGE) != 0;
    bool kind = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
    if (kind && exch && fstatat(p2, last2, &st2, AT_SYMLINK_NOFOLLOW) == 0)
        kind = S_ISREG(st2.st_mode) || S_ISDIR(st2.st_mode);
    const char *why = !kind ? "only regular files and folders are moved for a skill"
                      : S_ISDIR(st.st_mode) != w->src_dir
                          ? "what is there changed since it was asked (a file became a folder "
                            "or the other way)"
                          : NULL;
    if (!why)
        return 0;
    w->said = true;
    sg_bus_emit(w->bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "syscall", w->syscall, "path",
                          w->path1, "to", w->path2, "class", "file", "reason", why, "prevented",
                          1),
                "%s of %s onto %s refused: %s", w->syscall, w->path1, w->path2, why);
    return -EACCES;
}

static int approved_rename(struct write_wait *w, int pfd, const char *last)
{
    char rel2[PATH_MAX];
    const char *last2;
    int d2 = host_parent(w->p, w->pins, w->path2, rel2, sizeof rel2);
    int p2 = d2 < 0 ? d2 : parent_of(d2, rel2, &last2);
    int r = p2 < 0                                                     ? p2
            : movable(w, pfd, last, p2, last2) < 0                      ? -EACCES
            : !group_may(w, pfd, last) || !group_may(w, p2, last2) ||
                    !group_parent(w, pfd, w->path1) || !group_parent(w, p2, w->path2) ||
                    (w->for_group && high_risk(w->path2))
                ? -EACCES
            : syscall(SYS_renameat2, pfd, last, p2, last2, (unsigned)w->arg) < 0 ? -errno
                                                                                   : 0;
    if (!r && w->dc) {
        sg_diskcap_forget(w->dc, w->path1);
        note_approved(w, w->path2, p2, last2);
    }
    if (p2 >= 0)
        close(p2);
    if (d2 >= 0)
        close(d2);
    return r;
}

/* A hard link a rule or person allowed at both ends (link_ask), or of or
 * onto a protected target in a declared write path: path1's object (a
 * regular file, no link followed) as path2, both beneath their pinned
 * folders. 0 or -errno. */
static int approved_link(struct write_wait *w, int pfd, const char *last)
{
    char rel2[PATH_MAX];
    const char *last2;
    const char *b1, *b2;
    if (host_bind(w->p, w->path1, &b1) != host_bind(w->p, w->path2, &b2))
        return -EXDEV;
    struct stat st;
    if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EPERM; /* only a regular file gets another name for a skill */
    int d2 = host_parent(w->p, w->pins, w->path2, rel2, sizeof rel2);
    int p2 = d2 < 0 ? d2 : parent_of(d2, rel2, &last2);
    int r = p2 < 0 ? p2 : linkat(pfd, last, p2, last2, 0) < 0 ? -errno : 0;
    if (p2 >= 0)
        close(p2);
    if (d2 >= 0)
        close(d2);
    return r;
}

/* Do w's approved call on the host folder dfd (the bind's pinned folder),
 * rel below it. 0 or -errno; *answered when a descriptor was the result. */
static int approved_do(struct write_wait *w, int dfd, char *rel, bool *answered)
{
    const char *sc = w->syscall, *below;
    /* a mount of the sandbox's (a mask) moves with its folder on the host:
     * never renamed or removed, nor a folder above one, by the broker */
    bool moves = !strncmp(sc, "rename", 6) || !strcmp(sc, "rmdir") || !strncmp(sc, "unlink", 6);
    if (moves && (holds_mount(w->p, host_bind(w->p, w->path1, &below), w->path1) ||
                  (w->path2[0] && !strncmp(sc, "rename", 6) &&
                   holds_mount(w->p, host_bind(w->p, w->path2, &below), w->path2))))
        return -EBUSY;
    if (!strcmp(sc, "open") || !strcmp(sc, "openat") || !strcmp(sc, "openat2") ||
        !strcmp(sc, "creat"))
        return approved_open(w, dfd, rel, answered);
    if (!strcmp(sc, "truncate") || meta_call(sc)) {
        /* never blocks, never anything but a regular file: the skill may
         * have put a FIFO at an approved name (sg_beneath_file) */
        int f = !strcmp(sc, "truncate") ? sg_beneath_file(dfd, rel, O_WRONLY, 0)
                                         : beneath(dfd, rel, O_PATH, 0);
        if (f == -EOPNOTSUPP || f == -ENXIO)
            f = -EINVAL; /* the kernel's answer to truncate of no regular file */
        int r = f < 0                        ? f
                : strcmp(sc, "truncate")     ? meta_do(w, f)
                : ftruncate(f, (off_t)w->arg) < 0 ? -errno
                                                  : 0;
        struct stat st;
        if (!r && w->dc && fstat(f, &st) == 0)
            sg_diskcap_approve(w->dc, w->path1, &st);
        if (f >= 0)
            close(f);
        return r;
    }
    const char *last;
    int pfd = parent_of(dfd, rel, &last);
    if (pfd < 0)
        return pfd;
    int r = -EACCES; /* mknod: not brokered */
    if (!strncmp(sc, "symlink", 7) && w->target[0]) {
        /* only a protected name in a declared write path comes here */
        r = symlinkat(w->target, pfd, last) < 0 ? -errno : 0;
    } else if (!strncmp(sc, "link", 4)) {
        r = approved_link(w, pfd, last);
    } else if (!strcmp(sc, "mkdir") || !strcmp(sc, "mkdirat")) {
        r = mkdirat(pfd, last, (mode_t)(w->mode & 01777)) < 0 ? -errno
            : w->p->as_root ? give_to_invoker(w->p, pfd, last)
                            : 0;
        if (!r)
            note_approved(w, w->path1, pfd, last);
    } else if (!strcmp(sc, "rmdir") || !strcmp(sc, "unlink") || !strcmp(sc, "unlinkat")) {
        int fl = !strcmp(sc, "rmdir") ? AT_REMOVEDIR : (int)(w->arg & AT_REMOVEDIR);
        r = !group_may(w, pfd, last) || !group_parent(w, pfd, w->path1) ? -EACCES
            : unlinkat(pfd, last, fl) < 0                                 ? -errno
                                                                          : 0;
        if (!r && w->dc)
            sg_diskcap_forget(w->dc, w->path1);
    } else if (!strncmp(sc, "rename", 6)) {
        r = approved_rename(w, pfd, last);
    }
    close(pfd);
    return r;
}


/* Whether the skill's call w waits for is gone (its process killed, its
 * thread exited): the prompt for it closes (sg_perm_request_watched). */
static const char *write_gone(void *ctx)
{
    const struct write_wait *w = ctx;
    return seccomp_notify_id_valid(w->fd, w->id) != 0 ? sg_notif_gone_why() : NULL;
}

/* Ask for one path of w's call; write_decided settles it. */
static void write_ask(struct write_wait *w, const char *subject, const char *detail)
{
    struct sg_preq q = {.tool = SG_PT_WRITE};
    SG_PREQ_SET(&q, subject, subject);
    SG_PREQ_SET(&q, args, w->syscall);
    if (detail)
        snprintf(q.detail, sizeof q.detail, "%s", detail);
    else
        describe_target(w->pid, q.subject, q.detail, sizeof q.detail);
    /* the host file an approval writes: the person decides on the real one */
    const char *below;
    const struct sg_mount *b = host_bind(w->p, subject, &below);
    if (b) {
        cleanup_free char *host = sg_xasprintf("%s%s%s", b->src, *below ? "/" : "", below);
        SG_PREQ_SET(&q, host, host);
    }
    /* a rename's destination: what lands there is the source's object (a
     * folder that brings a `config` into .git/modules is asked as one) */
    bool dest = subject == w->path2 || (w->path2[0] && !strcmp(subject, w->path2) &&
                                        strcmp(subject, w->path1));
    bool renames = !strncmp(w->syscall, "rename", 6);
    bool exch = renames && (w->arg & RENAME_EXCHANGE) && !dest;
    q.protect = w->protect ? w->protect /* what the broker found on the objects themselves */
                : dest ? protected_end(w->p, w->path1, w->path2, renames, w->src_dir)
                /* an exchange brings the destination's object here too */
                : exch ? protected_end(w->p, w->path2, w->path1, true, w->dst_dir)
                       : protected_end(w->p, subject, NULL, false, false);
    enum sg_decision dec;
    if (sg_perm_request_watched(w->perm, &q, write_decided, w, write_gone, &dec) == 1)
        write_decided(w, dec);
}

/* An approved call the host refused, said with its real reason (the
 * refusals list shows it, never "outside the writable paths"). */
static void undone_event(const struct write_wait *w, int r)
{
    cleanup_free char *why =
        r == -EROFS ? sg_xstrdup("could not be done: it maps to no host folder (a private tmpfs)")
        : w->for_group && r == -EACCES
            ? sg_xstrdup("could not be done: as root the skill runs as nobody, and in root's "
                         "declared folder it may replace and remove files, not root's folders "
                         "or other objects")
            : sg_xasprintf("could not be done: %s", strerror(-r));
    sg_bus_emit(w->bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:b}", "syscall", w->syscall, "path", w->path1,
                          "class", "file", "reason", why, "prevented", 1),
                "approved %s of %s %s", w->syscall, w->path1, why);
}

static void write_decided(void *ctx, enum sg_decision d)
{
    struct write_wait *w = ctx;
    /* Every path a call writes is a subject of its own: a rename out of an
     * allowed folder into another one asks (and is recorded) for both. */
    if (sg_decision_allows(d) && w->ask2 && seccomp_notify_id_valid(w->fd, w->id) == 0) {
        w->ask2 = false;
        char detail[256];
        int n = snprintf(detail, sizeof detail, "the destination of a %s from ", w->syscall);
        if (n > 0 && (size_t)n < sizeof detail) { /* as much of the source as fits */
            size_t len = strnlen(w->path1, sizeof detail - (size_t)n - 1);
            memcpy(detail + n, w->path1, len);
            detail[(size_t)n + len] = '\0';
        }
        write_ask(w, w->path2, detail);
        return;
    }
    struct seccomp_notif_resp resp = {.id = w->id};
    int r = -EACCES;
    bool answered = false;
    if (sg_decision_allows(d) && seccomp_notify_id_valid(w->fd, w->id) == 0) {
        char rel[PATH_MAX];
        int dfd = host_parent(w->p, w->pins, w->path1, rel, sizeof rel);
        r = dfd;
        if (dfd >= 0) {
            /* as the person it is done for, never as root under sudo */
            struct sg_skill_creds sv;
            sg_become_person(w->p, &sv);
            r = approved_do(w, dfd, rel, &answered);
            sg_become_broker(&sv);
            close(dfd);
        }
        /* the kernel's own answers to the call (it exists, it is not
         * there, a folder) are no refusal: the skill gets them as it
         * would without us, and nothing is said */
        bool kernels = r == -EEXIST || r == -ENOENT || r == -ENOTDIR || r == -EISDIR ||
                       r == -ENOTEMPTY;
        if (r < 0 && !answered && !kernels && !w->said)
            undone_event(w, r);
    }
    if (!answered) {
        resp.error = r < 0 ? r : 0;
        resp.val = 0;
        if (seccomp_notify_id_valid(w->fd, w->id) == 0)
            seccomp_notify_respond(w->fd, &resp);
    }
    free(w);
}

static bool write_may_ask(const struct sg_perm *perm)
{
    const struct sg_tools *t = sg_perm_tools(perm);
    return !t->restricted || t->write_listed;
}

/* An allowed call in a declared write path: creations are the broker's,
 * and counted (diskcap.h). 0: let it continue. */
static int declared_write(const struct sg_plan *p, const int *pins, struct sg_diskcap *dc,
                          int notify_fd, const struct seccomp_notif *req, const char *syscall,
                          const char *path1, const char *path2, unsigned long long flags,
                          unsigned long long mode, struct seccomp_notif_resp *resp)
{
    bool opens = !strcmp(syscall, "open") || !strcmp(syscall, "openat") ||
                 !strcmp(syscall, "openat2") || !strcmp(syscall, "creat");
    bool mkdirs = !strcmp(syscall, "mkdir") || !strcmp(syscall, "mkdirat");
    bool names = !strncmp(syscall, "link", 4) || !strncmp(syscall, "symlink", 7) ||
                 !strncmp(syscall, "mknod", 5);
    const char *made = names && path2[0] ? path2 : path1;
    const char *below;
    const struct sg_mount *b;
    if ((!opens && !mkdirs && !names) || !made[0] || !(b = host_bind(p, made, &below)))
        return 0;
    if (names) {
        if (sg_diskcap_may_create(dc, syscall, made))
            return 0;
        resp->flags = 0;
        resp->error = -EDQUOT;
        return 1;
    }
    char rel[PATH_MAX] = ".";
    /* the bind's own folder (an O_TMPFILE there) is "." beneath its pin */
    int pin = pins ? pins[b - p->mounts] : -1;
    int dfd = !*below ? (pin < 0 ? -EBADF : fcntl(pin, F_DUPFD_CLOEXEC, 3))
                      : host_parent(p, pins, made, rel, sizeof rel);
    if (dfd < 0)
        return 0; /* no pin: as before */
    int k = sg_diskcap_perform(dc, notify_fd, req, syscall, dfd, rel, flags, mode, made, resp);
    close(dfd);
    return k;
}

/* The sandbox's own system folders: empty tmpfs (/var, /run) and the
 * minimal /dev, which no host folder backs. */
static bool private_system(const char *path)
{
    return within(path, "/var") || within(path, "/run") ||
           (within(path, "/dev") && !within(path, "/dev/shm"));
}

/* A mode with setuid asked of chmod, fchmod, fchmodat or fchmodat2,
 * anywhere: refused (EPERM) and said. Decided on the register,
 * which the kernel uses as it is: nothing to race. 1: answered. */
static bool setid_mode(const struct seccomp_notif *req, const char *sc,
                       struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    if (!strstr(sc, "chmod"))
        return false;
    unsigned long long mode = !strcmp(sc, "chmod") || !strcmp(sc, "fchmod") ? req->data.args[1]
                                                                            : req->data.args[2];
    if (!(mode & S_ISUID))
        return false; /* setgid: a folder's group for what is made in it; on a file
                       * the broker sets (meta_do) it is dropped */
    *resp = (struct seccomp_notif_resp){.id = req->id, .error = -EPERM};
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:i, s:s, s:b}", "syscall", sc, "class", "file", "mode",
                          (int)(mode & 07777), "reason", "a setuid bit", "prevented", 1),
                "%s to mode %04llo refused: a skill never sets a setuid bit", sc,
                mode & 07777);
    return true;
}

/* A path argument that names no path: NULL, or "" (with AT_EMPTY_PATH the
 * call acts on the descriptor; without it the kernel says ENOENT). */
static bool fd_form(int memfd, uint64_t addr)
{
    char first = '\0';
    return addr == 0 || sg_notif_read_str(memfd, addr, &first, 1) == 0;
}

/* utime's times from the skill's memory, read once: the broker sets what
 * it read (NULL: now). 0 or -EFAULT. */
static int read_times(int memfd, const char *sc, const unsigned long long *a,
                      struct timespec ts[2], bool *now)
{
    bool at = !strcmp(sc, "utimensat") || !strcmp(sc, "futimesat");
    uint64_t addr = at ? a[2] : a[1];
    *now = addr == 0;
    if (*now)
        return 0;
    if (!strcmp(sc, "utimensat"))
        return pread(memfd, ts, 2 * sizeof *ts, (off_t)addr) == 2 * sizeof *ts ? 0 : -EFAULT;
    if (!strcmp(sc, "utime")) {
        struct utimbuf u;
        if (pread(memfd, &u, sizeof u, (off_t)addr) != sizeof u)
            return -EFAULT;
        ts[0] = (struct timespec){.tv_sec = u.actime};
        ts[1] = (struct timespec){.tv_sec = u.modtime};
        return 0;
    }
    struct timeval tv[2]; /* utimes, futimesat */
    if (pread(memfd, tv, sizeof tv, (off_t)addr) != sizeof tv)
        return -EFAULT;
    for (int k = 0; k < 2; k++) {
        if (tv[k].tv_usec < 0 || tv[k].tv_usec >= 1000000)
            return -EINVAL;
        ts[k] = (struct timespec){.tv_sec = tv[k].tv_sec, .tv_nsec = tv[k].tv_usec * 1000};
    }
    return 0;
}

/* Is path, outside the writable paths, a file this run was let write, and
 * still the same object (found beneath its pinned host folder, no link on
 * the way)? */
static bool remembered(const struct sg_plan *p, const int *pins, const struct sg_diskcap *dc,
                       const char *path)
{
    char rel[PATH_MAX];
    if (!dc || !path[0])
        return false;
    int dfd = host_parent(p, pins, path, rel, sizeof rel);
    if (dfd < 0)
        return false;
    int f = beneath(dfd, rel, O_PATH, 0);
    close(dfd);
    struct stat st;
    bool yes = f >= 0 && fstat(f, &st) == 0 && sg_diskcap_approved(dc, path, &st);
    if (f >= 0)
        close(f);
    return yes;
}

/* One write call, as read from the skill once: its paths made absolute in
 * its view, open's flags and a mode, utime's times. */
struct wcall {
    const char *syscall;
    char path1[PATH_MAX], path2[PATH_MAX];
    unsigned long long oflags, omode;
    struct timespec ts[2];
    bool ts_now, meta;
    const char *protect; /* found on the objects (declared_call): asked as protected */
};

/* 0, or the kernel's own answer for a path that cannot be named exactly. */
static int read_call(const struct seccomp_notif *req, size_t i, int memfd, struct wcall *c)
{
    const long long *a = (const long long *)req->data.args;
    const char *sc = c->syscall;
    int r = 0;
    /* dirfd is an int to the kernel: its low 32 bits are what it uses */
    if (calls[i].path >= 0)
        r = sg_notif_path(req->pid, memfd, calls[i].dfd >= 0 ? (int)a[calls[i].dfd] : AT_FDCWD,
                          (uint64_t)a[calls[i].path], 0, c->path1, sizeof c->path1);
    if (!r && calls[i].path2 >= 0)
        r = sg_notif_path(req->pid, memfd, calls[i].dfd2 >= 0 ? (int)a[calls[i].dfd2] : AT_FDCWD,
                          (uint64_t)a[calls[i].path2], 0, c->path2, sizeof c->path2);
    const unsigned long long *v = req->data.args;
    /* openat2 never comes here (session.c: ENOSYS, its flags are in memory) */
    if (!strcmp(sc, "open"))
        c->oflags = v[1], c->omode = v[2];
    else if (!strcmp(sc, "openat"))
        c->oflags = v[2], c->omode = v[3];
    else if (!strcmp(sc, "creat"))
        c->oflags = O_CREAT | O_WRONLY | O_TRUNC, c->omode = v[1];
    else if (!strcmp(sc, "mkdir") || !strcmp(sc, "chmod"))
        c->omode = v[1];
    else if (!strcmp(sc, "mkdirat") || !strcmp(sc, "fchmodat") || !strcmp(sc, "fchmodat2"))
        c->omode = v[2];
    if (!r && c->meta && !owner_call(sc) && !strstr(sc, "chmod"))
        r = read_times(memfd, sc, v, c->ts, &c->ts_now);
    return r;
}

/* Ask for c (outside the writable paths, the skill may ask for Write), or
 * do it at once when every path it writes is a file this run was let
 * write. 2: the call waits for the answer (or was answered). */
static int start_ask(const struct sg_plan *p, const int *pins, struct sg_perm *perm,
                     struct sg_diskcap *dc, int notify_fd, const struct seccomp_notif *req,
                     const struct wcall *c, bool ok1, bool ok2, struct sg_event_bus *bus,
                     bool for_group, const char *target)
{
    const char *sc = c->syscall;
    struct write_wait *w = sg_xcalloc(1, sizeof *w);
    w->p = p;
    w->pins = pins;
    w->bus = bus;
    w->fd = notify_fd;
    w->id = req->id;
    snprintf(w->syscall, sizeof w->syscall, "%s", sc);
    bool renames = !strncmp(sc, "rename", 6);
    /* a hard link in a declared write path (declared_call): the old name
     * and the new, each asked like a rename's */
    bool links = !strncmp(sc, "link", 4) && c->path1[0];
    snprintf(w->path1, sizeof w->path1, "%s",
             ok1 && !renames && !links && c->path2[0] ? c->path2 : c->path1);
    snprintf(w->path2, sizeof w->path2, "%s", c->path2);
    w->flags = c->oflags;
    w->mode = c->omode;
    w->arg = !strcmp(sc, "unlinkat")    ? req->data.args[2]
             : !strcmp(sc, "renameat2") ? req->data.args[4]
             : !strcmp(sc, "truncate")  ? req->data.args[1]
                                        : 0;
    w->perm = perm;
    w->pid = req->pid;
    w->dc = dc;
    memcpy(w->ts, c->ts, sizeof c->ts);
    w->ts_now = c->ts_now;
    w->for_group = for_group;
    if (target)
        snprintf(w->target, sizeof w->target, "%s", target);
    w->protect = c->protect;
    struct stat st;
    /* a folder or a link (which leads to one) moves what lies below it */
    w->src_dir = renames && host_lstat(p, pins, c->path1, &st) == 0 &&
                 (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
    w->dst_dir = renames && host_lstat(p, pins, c->path2, &st) == 0 &&
                 (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
    /* a file this run was let write is the same file for its next change:
     * not asked again (sg_diskcap_approve); a protected target in a
     * writable path is asked all the same (protected.h). A rename onto a
     * remembered name is a new request unless what moves there was let
     * write too: an approval belongs to the object approved, and a FIFO or
     * a stranger's file renamed in inherits nothing */
    bool prot1 = ok1 && (c->protect || protected_end(p, c->path1, NULL, false, false));
    bool mem1 = remembered(p, pins, dc, c->path1);
    /* what the broker found on the objects (an exchange's other way, a
     * link's source) is never let through by the memory of one end: the
     * other end is asked */
    bool prot2 = c->path2[0] && ok2 &&
                 ((c->protect && mem1) ||
                  protected_end(p, c->path1, c->path2, renames, w->src_dir));
    bool need1 = (!ok1 || prot1) && !mem1;
    bool need2 = c->path2[0] && (!ok2 || prot2) &&
                 !(remembered(p, pins, dc, c->path2) && (!renames || (!ok1 && mem1)));
    w->ask2 = (renames || links) && need1 && need2;
    if (!need1 && !need2)
        write_decided(w, SG_DEC_ALLOW_ONCE);
    else
        write_ask(w, need1 || !(renames || links) ? w->path1 : c->path2, NULL);
    return 2;
}

/* Refused, and said: outside the writable paths with no one to ask, or a
 * path that could not be named (r). */
static int refuse_outside(const struct sg_plan *p, const struct seccomp_notif *req,
                          const struct wcall *c, int r, bool ok1, bool ok2,
                          struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    const char *sc = c->syscall;
    resp->flags = 0;
    /* a path that cannot be named exactly gets the kernel's own answer
     * (ENOTDIR for a pipe as dirfd, ENAMETOOLONG, EBADF); nothing is done */
    resp->error = r < 0 ? r : -EACCES;
    if (r < 0 && r != -EFAULT) {
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:b}", "syscall", sc, "path", "?", "class",
                              "file", "prevented", 1),
                    "%s refused: its path could not be resolved (%s)", sc, strerror(-r));
        return 1;
    }
    if (r == -EFAULT)
        return 1; /* a bad pointer: the kernel would say EFAULT too, nothing to show */
    const char *bad = ok1 ? c->path2 : c->path1;
    const char *cls = sg_fs_class(p->home, bad);
    /* a rename refused at both ends is shown by the end it aimed at most:
     * /etc/hostname into /etc/cron.d is a persistence attempt */
    if (!ok1 && !ok2 && c->path2[0] && strcmp(c->path1, c->path2) && !strcmp(cls, "file") &&
        strcmp(sg_fs_class(p->home, c->path2), "file"))
        bad = c->path2, cls = sg_fs_class(p->home, c->path2);
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:i, s:b}", "syscall", sc, "path", bad, "class", cls,
                          "pid", (int)req->pid, "prevented", 1),
                "write to %s refused (%s, outside the writable paths)%s", bad, sc,
                !strcmp(cls, "persistence") ? ": a persistence location"
                : !strcmp(cls, "credential") ? ": a credential location"
                                             : "");
    return 1;
}

/* Is last (in the folder pfd) a folder that holds anything? An rmdir of
 * it can only fail (ENOTEMPTY): answered so, never asked (git's stash
 * tries to remove .git). */
static bool full_folder(int pfd, const char *last)
{
    int fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool full = false;
    struct dirent *e;
    while (!full && (e = readdir(d)))
        full = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return full;
}

static bool removes_folder(const struct seccomp_notif *req, const char *sc)
{
    return !strcmp(sc, "rmdir") || (!strcmp(sc, "unlinkat") && (req->data.args[2] & AT_REMOVEDIR));
}

/* An rmdir outside the writable paths of a host folder that holds
 * anything: the kernel's ENOTEMPTY, with no question. */
static bool rmdir_of_full(const struct sg_plan *p, const int *pins,
                          const struct seccomp_notif *req, const char *sc, const char *path)
{
    char rel[PATH_MAX];
    const char *last;
    if (!removes_folder(req, sc))
        return false;
    int dfd = host_parent(p, pins, path, rel, sizeof rel);
    int pfd = dfd < 0 ? dfd : parent_of(dfd, rel, &last);
    bool full = pfd >= 0 && full_folder(pfd, last);
    if (pfd >= 0)
        close(pfd);
    if (dfd >= 0)
        close(dfd);
    return full;
}

/* ---- the declared write paths: every name change is the broker's ---- */

static bool on_declared(const struct sg_plan *p, const char *path)
{
    const char *below;
    const struct sg_mount *b = path[0] ? host_bind(p, path, &below) : NULL;
    return b && b->kind == SG_MNT_BIND_RW;
}

/* What kind of call in a declared write path declared_call does (opens
 * and mkdir are only checked: the disk cap makes them). */
enum dkind { DK_NONE, DK_OPEN, DK_UNLINK, DK_RENAME, DK_LINK, DK_SYMLINK, DK_MKNOD, DK_TRUNC,
             DK_CHMOD };

static enum dkind declared_kind(const char *sc)
{
    static const struct {
        const char *name;
        enum dkind k;
    } m[] = {{"open", DK_OPEN},        {"openat", DK_OPEN},        {"creat", DK_OPEN},
             {"mkdir", DK_OPEN},       {"mkdirat", DK_OPEN},       {"unlink", DK_UNLINK},
             {"unlinkat", DK_UNLINK},  {"rmdir", DK_UNLINK},       {"rename", DK_RENAME},
             {"renameat", DK_RENAME},  {"renameat2", DK_RENAME},   {"link", DK_LINK},
             {"linkat", DK_LINK},      {"symlink", DK_SYMLINK},    {"symlinkat", DK_SYMLINK},
             {"mknod", DK_MKNOD},      {"mknodat", DK_MKNOD},      {"truncate", DK_TRUNC},
             {"chmod", DK_CHMOD},      {"fchmodat", DK_CHMOD},     {"fchmodat2", DK_CHMOD}};
    for (size_t i = 0; i < SG_ARRAY_LEN(m); i++)
        if (!strcmp(sc, m[i].name))
            return m[i].k;
    return DK_NONE;
}

/* A protected target in a declared write path that nobody may be asked
 * about (or that no answer could make: a FIFO, a device): refused, said. */
static int refuse_protected(const struct seccomp_notif *req, const char *sc, const char *path,
                            const char *why, const char *because,
                            struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    resp->flags = 0;
    resp->error = -EACCES;
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b}", "syscall", sc, "path", path,
                          "class", "persistence", "protected", why, "reason", because, "pid",
                          req ? (int)req->pid : 0, "prevented", 1),
                "%s of %s refused: a protected target (%s), which no folder grant covers; %s",
                sc, path, why, because);
    return 1;
}

/* The old name of a link(at) call (the write table reads only the new). */
static int link_source(const struct seccomp_notif *req, int memfd, const char *sc, char *out,
                       size_t n, bool *follow)
{
    bool at = !strcmp(sc, "linkat");
    const unsigned long long *a = req->data.args;
    *follow = at && (a[4] & AT_SYMLINK_FOLLOW);
    if (at && (a[4] & AT_EMPTY_PATH))
        return -EXDEV; /* a descriptor (an O_TMPFILE): made by the broker on the host's mount */
    return sg_notif_path(req->pid, memfd, at ? (int)a[0] : AT_FDCWD, at ? a[1] : a[0], 0, out,
                         n);
}

/* Do the call on the ends found (done as the skill). 0 or -errno. */
static int declared_do(const struct sg_plan *p, struct sg_diskcap *dc, enum dkind k,
                       const struct seccomp_notif *req, const struct wcall *c,
                       const char *target, struct sg_where *w1, struct sg_where *w2)
{
    const unsigned long long *a = req->data.args;
    const char *sc = c->syscall;
    bool makes = k == DK_LINK || k == DK_SYMLINK || k == DK_MKNOD;
    if (makes && !sg_diskcap_may_create(dc, sc, c->path2[0] ? c->path2 : c->path1))
        return -EDQUOT;
    switch (k) {
    case DK_UNLINK:
        return sg_declared_unlink(p, w1, !strcmp(sc, "rmdir")      ? AT_REMOVEDIR
                                         : !strcmp(sc, "unlinkat") ? (int)a[2]
                                                                   : 0);
    case DK_RENAME:
        return sg_declared_rename(p, w1, w2, !strcmp(sc, "renameat2") ? (unsigned)a[4] : 0);
    case DK_LINK:
        return sg_declared_link(p, w1, w2);
    case DK_SYMLINK:
        return sg_declared_symlink(p, target, w1);
    case DK_MKNOD: {
        unsigned long long md = !strcmp(sc, "mknodat") ? a[2] : a[1];
        return sg_declared_mknod(p, w1, ((mode_t)md & S_IFMT) |
                                            ((mode_t)(md & 07777) & ~sg_skill_umask(req->pid)));
    }
    case DK_TRUNC:
        return sg_declared_truncate(p, w1, (long long)a[1]);
    case DK_CHMOD:
        return sg_declared_chmod(p, w1, (mode_t)c->omode,
                                 !strcmp(sc, "fchmodat2") && (a[3] & AT_SYMLINK_NOFOLLOW));
    default:
        return -ENOSYS;
    }
}

/* Find the ends of c as the kernel would (declared.h): w1 the path the
 * call acts on (a link's old name), w2 a second new name (rename, link).
 * *target: a symlink's text. 0 or the kernel's answer. */
static int declared_ends(const struct sg_plan *p, const int *pins, enum dkind k,
                         const struct seccomp_notif *req, int memfd, const struct wcall *c,
                         char *target, size_t tmax, struct sg_where *w1, struct sg_where *w2)
{
    const unsigned long long *a = req->data.args;
    const char *sc = c->syscall;
    bool follow = k == DK_TRUNC || (k == DK_CHMOD && !(!strcmp(sc, "fchmodat2") &&
                                                       (a[3] & AT_SYMLINK_NOFOLLOW)));
    if (k == DK_SYMLINK) {
        int r = sg_notif_read_str(memfd, a[0], target, tmax);
        return r < 0 ? r : sg_declared_where(p, pins, c->path2, false, w1);
    }
    if (k == DK_LINK) {
        char old[PATH_MAX];
        int r = link_source(req, memfd, sc, old, sizeof old, &follow);
        if (!r && (magic_path(old) || !on_declared(p, old)))
            r = -EXDEV; /* another mount to the kernel */
        if (!r)
            r = sg_declared_where(p, pins, old, follow, w1);
        return r < 0 ? r : sg_declared_where(p, pins, c->path2, false, w2);
    }
    int r = sg_declared_where(p, pins, c->path1, follow, w1);
    if (!r && k == DK_RENAME)
        r = sg_declared_where(p, pins, c->path2, false, w2);
    return r;
}

/* Why the call on w1 (and w2) touches a protected target, or NULL. */
static const char *declared_protected(enum dkind k, const char *sc,
                                      const struct seccomp_notif *req,
                                      const struct sg_where *w1, const struct sg_where *w2)
{
    /* a symlink leads whoever follows it where the skill chose: one made
     * where a target would lie below it (.cargo, .git/modules/m) is one */
    if (k == DK_SYMLINK)
        return sg_protected_place(w1->real);
    if (w1->via)
        return w1->via;
    if (k != DK_RENAME && k != DK_LINK)
        return sg_protected_path(w1->real, NULL);
    struct stat st, st2;
    /* a folder or a link (which leads to one) moves what lies below it */
    bool dir = fstatat(w1->pfd, w1->last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
    const char *why = sg_protected_move(w1->real, w2->real, k == DK_RENAME && dir);
    /* RENAME_EXCHANGE moves the destination's object the other way too */
    bool exch = k == DK_RENAME && !strcmp(sc, "renameat2") &&
                (req->data.args[4] & RENAME_EXCHANGE);
    if (!why && exch && fstatat(w2->pfd, w2->last, &st2, AT_SYMLINK_NOFOLLOW) == 0)
        why = sg_protected_move(w2->real, w1->real,
                                S_ISDIR(st2.st_mode) || S_ISLNK(st2.st_mode));
    return why;
}

/* A declared path's call refused for where its name leads, said. */
static void link_refused(struct sg_event_bus *bus, const struct wcall *c, const char *cls,
                         const char *reason, const char *said)
{
    /* link and symlink: only the new name is read (path2) */
    const char *path = c->path1[0] ? c->path1 : c->path2;
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:b}", "syscall", c->syscall, "path", path,
                          "class", cls, "reason", reason, "prevented", 1),
                "%s of %s refused: %s", c->syscall, path, said);
}

/* chmod of a declared folder itself: done on the folder pinned before
 * launch (what the bind shows), as the skill. 1: resp set. */
static int bind_root_chmod(const struct sg_plan *p, const int *pins, const struct wcall *c,
                           struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    const char *below;
    const struct sg_mount *b = host_bind(p, c->path1, &below);
    int pin = b && pins ? pins[b - p->mounts] : -1;
    const char *why = b ? sg_protected_path(b->src, NULL) : NULL;
    if (pin < 0) {
        resp->error = -EACCES;
        return 1;
    }
    if (why)
        return refuse_protected(NULL, c->syscall, c->path1, why,
                                "a declared folder that is one keeps its mode", resp, bus);
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", pin);
    struct sg_skill_creds sv;
    sg_become_skill(p, &sv);
    resp->error = fchmodat(AT_FDCWD, self, (mode_t)c->omode & 07777, 0) < 0 ? -errno : 0;
    sg_become_broker(&sv);
    return 1;
}

/* A call whose paths all lie in declared write paths (ok1 && ok2): the
 * objects found as the kernel would; a protected target is asked (or
 * refused when nobody can be asked), anything else is done as the skill.
 * 0: the caller goes on (an open or mkdir that touches no protected
 * target: the disk cap makes it); 1: resp set; 2: it waits for an answer. */
static int declared_call(const struct sg_plan *p, const int *pins, struct sg_perm *perm,
                         struct sg_diskcap *dc, int notify_fd, const struct seccomp_notif *req,
                         int memfd, const struct wcall *c, struct seccomp_notif_resp *resp,
                         struct sg_event_bus *bus)
{
    enum dkind k = declared_kind(c->syscall);
    unsigned long long fl = c->oflags;
    bool tmpfile = (fl & O_TMPFILE) == O_TMPFILE;
    /* link and symlink: the write table reads only the new name (path2) */
    bool named = k == DK_LINK || k == DK_SYMLINK;
    if (k == DK_NONE || !dc || (k == DK_OPEN && tmpfile) ||
        !on_declared(p, named ? c->path2 : c->path1) ||
        (!named && c->path2[0] && !on_declared(p, c->path2)))
        return 0;
    bool mkdirs = !strncmp(c->syscall, "mkdir", 5);
    bool follow = !mkdirs && !(fl & O_NOFOLLOW) && !((fl & O_CREAT) && (fl & O_EXCL));
    char target[PATH_MAX] = "";
    struct sg_where *w = sg_xcalloc(2, sizeof *w);
    w[0].pfd = w[1].pfd = -1;
    int r = k == DK_OPEN ? sg_declared_where(p, pins, c->path1, follow, &w[0])
                         : declared_ends(p, pins, k, req, memfd, c, target, sizeof target, &w[0],
                                         &w[1]);
    const char *why = NULL;
    int ret = 1;
    resp->flags = 0;
    /* what the broker reached beneath the pinned folder must be what the
     * skill's view shows there: a link of the skill's into a masked
     * credential folder (or a folder bound read-only) leads the broker,
     * which sees the host, where the skill sees nothing */
    bool hidden = false, moves_mount = false;
    for (int i = 0; r == 0 && i < 2; i++) {
        if (w[i].pfd >= 0 && sg_deepest_mount(p, w[i].spath) != w[i].bind)
            hidden = true;
        /* a mount of the sandbox's (a mask, a read-only folder) moves with
         * its folder: a rename or removal of one, or of a folder above it,
         * would leave the masks where the plan no longer finds them */
        if (w[i].pfd >= 0 && (k == DK_RENAME || k == DK_UNLINK) &&
            holds_mount(p, w[i].bind, w[i].spath))
            moves_mount = true;
    }
    if (moves_mount) {
        resp->error = -EBUSY; /* the kernel's answer for a mount point */
    } else if (hidden) {
        resp->error = -EACCES;
        link_refused(bus, c, "credential", "it leads where the sandbox shows nothing (masked)",
                     "a symbolic link on the way leads where the sandbox masks what is there "
                     "(a credential folder, skillgate's own)");
    } else if (r < 0 && k == DK_OPEN &&
               (r == -ENOENT || r == -ENOTDIR || r == -EBUSY || r == -EINVAL)) {
        /* nothing there, the declared folder itself (mkdir . of tar's "./")
         * or a folder by ".." (x/..): the disk cap finds the same, makes
         * no file of it, and answers as the kernel (EEXIST, EISDIR) */
        ret = 0;
    } else if (r == -EBUSY && k == DK_CHMOD) {
        ret = bind_root_chmod(p, pins, c, resp, bus);
    } else if (r == -ENAMETOOLONG) {
        /* never cut to fit and then matched: refused, and said as what it is */
        resp->error = -EACCES;
        link_refused(bus, c, "file", "a path too long to be checked whole",
                     "the path, or where a symbolic link on the way leads, is too long to be "
                     "checked whole (PATH_MAX)");
    } else if (r == -EXDEV || r == -ELOOP || r == -EINVAL) {
        resp->error = -EACCES;
        link_refused(bus, c, "file", "a symbolic link that leaves the declared write path",
                     "a symbolic link on the way leads out of the declared write path "
                     "(skillgate does it there on what the link reaches, never through a link "
                     "that leaves it)");
    } else if (r < 0) {
        resp->error = k == DK_TRUNC && r == -EBUSY ? -EISDIR : r; /* the kernel's answer */
    } else if ((why = declared_protected(k, c->syscall, req, &w[0], &w[1])) && k == DK_UNLINK &&
               removes_folder(req, c->syscall) && full_folder(w[0].pfd, w[0].last)) {
        resp->error = -ENOTEMPTY; /* it could only fail: never a question */
    } else if (why && k == DK_MKNOD) {
        ret = refuse_protected(req, c->syscall, w[0].spath, why,
                               "only regular files and folders are made there", resp, bus);
    } else if (why && (!perm || !write_may_ask(perm))) {
        ret = refuse_protected(req, c->syscall, w[0].spath, why,
                               "this run cannot ask for Write (allowed-tools)", resp, bus);
    } else if (why) {
        /* asked on the objects found, by their real names */
        struct wcall *q = sg_xcalloc(1, sizeof *q);
        *q = *c;
        bool two = k == DK_RENAME || k == DK_LINK;
        snprintf(q->path1, sizeof q->path1, "%s", w[0].spath);
        snprintf(q->path2, sizeof q->path2, "%s", two ? w[1].spath : "");
        q->protect = why;
        ret = start_ask(p, pins, perm, dc, notify_fd, req, q, true, true, bus, false, target);
        free(q);
    } else if (k == DK_OPEN) {
        ret = 0;
    } else {
        resp->error = declared_do(p, dc, k, req, c, target, &w[0], &w[1]);
        if (!resp->error && (k == DK_UNLINK || k == DK_RENAME))
            sg_diskcap_forget(dc, c->path1);
    }
    for (int i = 0; i < 2; i++)
        if (w[i].pfd >= 0)
            close(w[i].pfd);
    free(w);
    return ret;
}

/* As root without sudo: a rename, unlink or rmdir in a declared write
 * folder whose host folder nobody (the skill) may not write by its mode,
 * where the kernel would refuse it. The objects are checked when it is
 * done (group_may). */
static bool moves_for_group(const struct sg_plan *p, const int *pins, const struct wcall *c)
{
    const char *sc = c->syscall, *below;
    if (!p->as_root || p->via_sudo ||
        (strncmp(sc, "rename", 6) && strcmp(sc, "unlink") && strcmp(sc, "unlinkat") &&
         strcmp(sc, "rmdir")))
        return false;
    const char *paths[] = {c->path1, c->path2};
    for (size_t i = 0; i < 2; i++) {
        const struct sg_mount *b = paths[i][0] ? host_bind(p, paths[i], &below) : NULL;
        if (paths[i][0] && (!b || b->kind != SG_MNT_BIND_RW))
            return false;
    }
    for (size_t i = 0; i < 2; i++) {
        char rel[PATH_MAX];
        const char *last;
        if (!paths[i][0])
            continue;
        int dfd = host_parent(p, pins, paths[i], rel, sizeof rel);
        int pfd = dfd < 0 ? dfd : parent_of(dfd, rel, &last);
        struct stat st;
        bool nobody_may = pfd < 0 || fstat(pfd, &st) < 0 ||
                          (st.st_uid == p->skill_uid   ? (st.st_mode & S_IWUSR)
                           : st.st_gid == p->skill_gid ? (st.st_mode & S_IWGRP)
                                                       : (st.st_mode & S_IWOTH));
        if (pfd >= 0)
            close(pfd);
        if (dfd >= 0)
            close(dfd);
        if (!nobody_may)
            return true;
    }
    return false;
}

static int chmod_object(const struct sg_plan *p, const struct sg_diskcap *dc,
                        const struct seccomp_notif *req, const char *sc, int obj, mode_t mode,
                        bool as_fd, struct sg_event_bus *bus);

/* chmod("/proc/self/fd/N"), utimensat on it: the skill's own descriptor N,
 * as fchmod(N) is (LibreOffice saves so). A chmod is done by the broker on
 * the object N holds, taken once (chmod_object: a protected target is never
 * made executable so); times go to the kernel, whose mount decides (a
 * setuid bit was refused on the register already). As root without sudo,
 * on a file root made for the skill's group, the broker does either on
 * that very object, as for the name (meta_do). 1: answered. */
static int fd_link_meta(const struct sg_plan *p, const struct sg_diskcap *dc,
                        const struct seccomp_notif *req, const struct wcall *c, int n,
                        struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    bool chm = strstr(c->syscall, "chmod") != NULL;
    bool group = p->as_root && !p->via_sudo && !owner_call(c->syscall);
    resp->error = 0;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (!chm && !group)
        return 1; /* times and owners: the kernel, on what the descriptor holds */
    int o = take_fd((pid_t)req->pid, n);
    struct stat st;
    if (o >= 0 && group && fstat(o, &st) == 0 && made_for_group(p, &st)) {
        struct write_wait *w = sg_xcalloc(1, sizeof *w);
        w->p = p;
        w->mode = c->omode;
        memcpy(w->ts, c->ts, sizeof c->ts);
        w->ts_now = c->ts_now;
        w->for_group = true;
        snprintf(w->syscall, sizeof w->syscall, "%s", c->syscall);
        resp->flags = 0;
        resp->error = meta_do(w, o);
        free(w);
    } else if (chm) {
        /* the mode: on the object the descriptor holds, never continued
         * (the name read again could be a hook's) */
        resp->flags = 0;
        resp->error = o < 0 ? o
                            : chmod_object(p, dc, req, c->syscall, o,
                                           (mode_t)c->omode & 07777, false, bus);
        return 1; /* chmod_object closed o */
    }
    if (o >= 0)
        close(o);
    return 1;
}

/* A chown of a remembered file (sg_diskcap_approve) that asks for the
 * owner and group it has already (or -1): nothing to do. Decided on the
 * registers and the object found beneath the pinned folder. */
static bool same_owner(const struct sg_plan *p, const int *pins, const struct sg_diskcap *dc,
                       const struct seccomp_notif *req, const struct wcall *c)
{
    bool at = !strcmp(c->syscall, "fchownat");
    uid_t u = (uid_t)req->data.args[at ? 2 : 1];
    gid_t g = (gid_t)req->data.args[at ? 3 : 2];
    char rel[PATH_MAX];
    if (!remembered(p, pins, dc, c->path1))
        return false;
    int dfd = host_parent(p, pins, c->path1, rel, sizeof rel);
    int f = dfd < 0 ? dfd : beneath(dfd, rel, O_PATH, 0);
    struct stat st;
    bool same = f >= 0 && fstat(f, &st) == 0 && (u == (uid_t)-1 || u == st.st_uid) &&
                (g == (gid_t)-1 || g == st.st_gid);
    if (f >= 0)
        close(f);
    if (dfd >= 0)
        close(dfd);
    return same;
}

/* Does a folder on the way to path, beneath its bind's host folder, turn
 * out to be a symbolic link (ELOOP without following links)? */
static bool linked_away(const struct sg_plan *p, const int *pins, const char *path)
{
    char rel[PATH_MAX];
    const char *last;
    int dfd = host_parent(p, pins, path, rel, sizeof rel);
    if (dfd < 0)
        return false;
    int pfd = parent_of(dfd, rel, &last);
    close(dfd);
    if (pfd >= 0)
        close(pfd);
    return pfd == -ELOOP;
}

/* A path in no folder of the sandbox's view: its new root holds only the
 * folders the plan shows (/srv, /mnt are none of them), so an approval
 * could make nothing there (no host folder is behind it). Never asked, by
 * a person, a rule or the exec: program; refused at once with how to
 * show the folder. 1: answered. */
static int unshown(const struct sg_plan *p, const char *sc, const char *aim,
                   struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    if (aim[0] != '/' || sg_deepest_mount(p, aim) || private_system(aim))
        return 0;
    for (size_t i = 0; i < p->nmounts; i++)
        if (p->mounts[i].kind == SG_MNT_SYMLINK && sg_path_within(aim, p->mounts[i].dst))
            return 0; /* /bin/x: shown, through the host's link to usr/bin */
    cleanup_free char *dir = sg_xstrdup(aim);
    char *sl = strrchr(dir, '/');
    *(sl == dir ? sl + 1 : sl) = '\0';
    /* only the words: would --write show it (/, a home, skillgate's or an
     * agent's own folder never; one that does not exist yet, once made)? */
    cleanup_free char *real = NULL;
    const char *no = NULL;
    bool shows = sg_runopts_check_write("--write", dir, &real, &no) != -EPERM;
    resp->flags = 0;
    resp->error = -EACCES;
    sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "syscall", sc, "path", aim, "class",
                          sg_fs_class(p->home, aim), "reason",
                          shows ? "its folder is not shown in the sandbox"
                                : "its folder is not shown in the sandbox, and no --write may "
                                  "show it",
                          "folder", dir, "prevented", 1),
                "%s of %s refused without a question: %s is not shown in the sandbox (no host "
                "folder is behind it there), so no approval could write it; %s%s%s", sc, aim, dir,
                shows ? "to let the skill write there, show the folder: run --write " : "",
                shows ? dir : no, shows ? ", or declare it (permissions.filesystem.write)" : "");
    return 1;
}

/* A place no approval could write is never asked (a yes would do nothing):
 * the sandbox's own /dev, /var and /run hold no host folder. /dev/tty
 * fails as it does for a process without a terminal (a skill has none);
 * the rest is refused and counted (fontconfig's cache). 1: answered. */
static int nowhere(const struct sg_plan *p, const int *pins, struct sg_diskcap *dc,
                   const char *sc, const char *aim, struct seccomp_notif_resp *resp,
                   struct sg_event_bus *bus)
{
    const char *below;
    if (host_bind(p, aim, &below) && linked_away(p, pins, aim)) {
        /* an approval is done beneath the host folder without following a
         * link: a folder on the way that is a link (LibreOffice's
         * /usr/lib/.../uno_packages/cache -> /var/lib/...) could never be
         * written, so it is not asked */
        resp->flags = 0;
        resp->error = -EACCES;
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:b}", "syscall", sc, "path", aim, "class",
                              "file", "reason", "a symbolic link on the way", "prevented", 1),
                    "%s of %s refused without a question: a folder on its way is a symbolic "
                    "link, which no approved write follows", sc, aim);
        return 1;
    }
    if (unshown(p, sc, aim, resp, bus))
        return 1;
    if (strcmp(aim, "/dev/tty") && (host_bind(p, aim, &below) || !private_system(aim)))
        return 0;
    resp->flags = 0;
    resp->error = strcmp(aim, "/dev/tty") ? -EACCES : -ENXIO;
    if (resp->error == -EACCES)
        sg_diskcap_private_refused(dc, sc, aim);
    return 1;
}

/* A hard link outside the writable paths: the new name is another name
 * for the old name's object, so a write there writes that object. Both
 * ends are asked (or allowed by a rule covering both, as git's object
 * files under a folder answer) and the broker makes it on the host;
 * across binds it is the kernel's EXDEV. 2: waits or answered; 1: resp. */
static int link_ask(const struct sg_plan *p, const int *pins, struct sg_perm *perm,
                    struct sg_diskcap *dc, int notify_fd, const struct seccomp_notif *req,
                    int memfd, const struct wcall *c, struct seccomp_notif_resp *resp,
                    struct sg_event_bus *bus)
{
    struct wcall *q = sg_xcalloc(1, sizeof *q);
    *q = *c;
    bool follow;
    const char *b1, *b2;
    int r = link_source(req, memfd, c->syscall, q->path1, sizeof q->path1, &follow);
    if (!r && (follow || magic_path(q->path1)))
        r = -EXDEV; /* a link followed, a descriptor: not made by the broker */
    const struct sg_mount *m1 = r ? NULL : host_bind(p, q->path1, &b1);
    if (!r && (!m1 || m1 != host_bind(p, q->path2, &b2)))
        r = -EXDEV; /* two mounts to the kernel */
    int k = 1;
    resp->flags = 0;
    const char *own = r ? NULL : own_folder_hit(p, q->path1);
    if (!r && !own)
        own = own_folder_hit(p, q->path2);
    if (own)
        r = -EACCES; /* skillgate's own folders: no rule or person may (sg_writes_handle) */
    if (r < 0)
        resp->error = r;
    else
        k = start_ask(p, pins, perm, dc, notify_fd, req, q, sg_writes_writable(p, q->path1),
                      false, bus, false, NULL);
    free(q);
    return k;
}

/* The repositories below the run's write folders and its working folder,
 * learnt once (gitnamed.h): what their configs name (a hooks folder
 * elsewhere, an included file) is protected wherever it lies. */
static void learn_repositories(const struct sg_plan *p)
{
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        bool work = p->cwd_is_work && p->cwd && !strcmp(m->dst, p->cwd);
        if (m->kind == SG_MNT_BIND_RW || (m->kind == SG_MNT_BIND_RO && work))
            sg_git_learn(m->src, SG_PROTECTED_SCAN_ENTRIES, SG_PROTECTED_SCAN_DEPTH);
    }
}

/* fchmod(fd, mode) with an exec bit (the filter lets the rest through),
 * fchmodat2(fd, "", mode, AT_EMPTY_PATH): done on the skill's own
 * descriptor taken once (pidfd_getfd), as the skill, so no thread can put
 * another file at that number between a look and the kernel's call. A
 * protected target (protected.h: a hook made executable is a hook git
 * runs) is refused. 0 or -errno. */
static int fd_chmod(const struct sg_plan *p, const struct sg_diskcap *dc,
                    const struct seccomp_notif *req, const char *sc, struct sg_event_bus *bus)
{
    const unsigned long long *a = req->data.args;
    bool two = !strcmp(sc, "fchmodat2");
    if (strcmp(sc, "fchmod") && !(two && a[1] && (a[3] & AT_EMPTY_PATH)))
        return strcmp(sc, "fchmod") && !a[strcmp(sc, "chmod") ? 1 : 0] ? -EFAULT : -ENOENT;
    int obj = take_fd((pid_t)req->pid, (int)a[0]);
    if (obj < 0)
        return obj == -ENOENT ? -EBADF : obj;
    return chmod_object(p, dc, req, sc, obj, (mode_t)(two ? a[2] : a[1]) & 07777, !two, bus);
}

/* chmod of the object obj (the skill's descriptor, taken; closed here):
 * as the skill, on that very object (as root without sudo, root's file
 * made for the skill's group by root, as by its name); a protected target
 * never. as_fd: fchmod's (an O_PATH descriptor gets EBADF). */
static int chmod_object(const struct sg_plan *p, const struct sg_diskcap *dc,
                        const struct seccomp_notif *req, const char *sc, int obj, mode_t mode,
                        bool as_fd, struct sg_event_bus *bus)
{
    char real[PATH_MAX], self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", obj);
    ssize_t n = readlink(self, real, sizeof real - 1);
    real[n > 0 ? n : 0] = '\0';
    struct stat st;
    /* the host's files only: the sandbox's own views go with the run */
    bool host = fstat(obj, &st) == 0 && !sg_diskcap_is_own_fs(dc, st.st_dev);
    /* a name that may have been cut, or none the kernel can give (a path
     * past a page), is never matched: refused. No path (a pipe's, a
     * memfd's) is no file in a folder. */
    bool unnamed = host && (n <= 0 || n >= (ssize_t)sizeof real - 1);
    const char *why = !host || unnamed || real[0] != '/' ? NULL : sg_protected_path(real, NULL);
    int r;
    if (unnamed) {
        r = -EPERM;
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:i, s:b}", "syscall", sc, "path", real,
                              "class", "file", "reason", "a path too long to be checked whole",
                              "pid", (int)req->pid, "prevented", 1),
                    "%s to mode %04o refused: its path is too long to be checked whole", sc,
                    (unsigned)mode);
    } else if (why) {
        /* by its name a protected target's mode is asked; through a
         * descriptor nothing names it to ask about: refused */
        r = -EPERM;
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:i, s:b}", "syscall", sc, "path", real,
                              "class", "persistence", "protected", why, "pid", (int)req->pid,
                              "prevented", 1),
                    "%s of %s to mode %04o refused: a protected target (%s) changes its mode "
                    "only by its name, asked", sc, real, (unsigned)mode, why);
    } else if (p->as_root && !p->via_sudo && fstat(obj, &st) == 0 && made_for_group(p, &st)) {
        /* root's file made for the skill's group: root does it (meta_do) */
        struct write_wait *w = sg_xcalloc(1, sizeof *w);
        w->p = p;
        w->mode = mode;
        w->for_group = true;
        snprintf(w->syscall, sizeof w->syscall, "%s", sc);
        r = meta_do(w, obj);
        free(w);
    } else {
        struct sg_skill_creds sv;
        sg_become_skill(p, &sv);
        r = (as_fd ? fchmod(obj, mode) : fchmodat(AT_FDCWD, self, mode, 0)) < 0 ? -errno : 0;
        sg_become_broker(&sv);
    }
    close(obj);
    return r;
}

/* A mode or times change of the skill's own descriptor (fchmod,
 * fchmodat2(fd, "", AT_EMPTY_PATH), utimensat(fd, NULL, ...)): a mode is
 * done by the broker on that very object (fd_chmod); times go to the
 * kernel, whose mount decides (a file the broker opened for an approved
 * write is the host's, writable); nothing is granted. resp set. */
static void fd_meta(const struct sg_plan *p, const struct sg_diskcap *dc,
                    const struct seccomp_notif *req, const char *sc,
                    struct seccomp_notif_resp *resp, struct sg_event_bus *bus)
{
    resp->id = req->id, resp->val = 0, resp->error = 0, resp->flags = 0;
    if (strstr(sc, "chmod"))
        resp->error = fd_chmod(p, dc, req, sc, bus);
    else
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
}

int sg_writes_handle(const struct sg_plan *p, const int *pins, struct sg_perm *perm,
                      struct sg_diskcap *dc, int notify_fd, const struct seccomp_notif *req,
                      const char *syscall, struct seccomp_notif_resp *resp,
                      struct sg_event_bus *bus)
{
    size_t i;
    for (i = 0; i < SG_ARRAY_LEN(calls); i++)
        if (!strcmp(calls[i].name, syscall))
            break;
    if (i == SG_ARRAY_LEN(calls))
        return 0;
    if (setid_mode(req, syscall, resp, bus))
        return 1;
    char memp[64];
    snprintf(memp, sizeof memp, "/proc/%d/mem", (int)req->pid);
    cleanup_fd int memfd = open(memp, O_RDONLY | O_CLOEXEC);
    struct wcall *c = sg_xcalloc(1, sizeof *c);
    c->syscall = syscall;
    c->meta = meta_call(syscall);
    int r = memfd < 0 ? -errno : 0;
    int k = 0;
    if (!r && c->meta && (calls[i].path < 0 || fd_form(memfd, req->data.args[calls[i].path]))) {
        fd_meta(p, dc, req, syscall, resp, bus);
        free(c);
        return 1;
    }
    if (!r)
        r = read_call(req, i, memfd, c);
    if (sg_diskcap_learn_once(dc))
        learn_repositories(p);
    const char *path1 = c->path1, *path2 = c->path2;
    resp->id = req->id;
    resp->val = 0;
    bool ok1 = !path1[0] || sg_writes_writable(p, path1);
    bool ok2 = !path2[0] || sg_writes_writable(p, path2);
    if (!r && !ok1 && !path2[0] && harmless_on_existing(req, syscall, path1))
        ok1 = true;
    const char *below, *own = NULL;
    /* Outside the grants, and the manifest lets the skill ask for Write:
     * a person (or a rule) decides; the call waits, nothing else does. */
    bool brokerable = strcmp(syscall, "link") && strcmp(syscall, "linkat") &&
                      strcmp(syscall, "symlink") && strcmp(syscall, "symlinkat") &&
                      strcmp(syscall, "mknod") && strcmp(syscall, "mknodat") &&
                      !owner_call(syscall) &&
                      !(strstr(syscall, "chmod") && (c->omode & S_ISUID));
    bool asks = r == 0 && perm && write_may_ask(perm) && brokerable;
    if (asks && (own = own_folder_hit(p, ok1 ? path2 : path1)) == NULL && path2[0] && !ok2)
        own = own_folder_hit(p, path2);
    /* The notification must still be the same call after we read its memory. */
    if (seccomp_notify_id_valid(notify_fd, req->id) != 0) {
        resp->error = -ENOENT;
        k = 1;
    } else if (!r && c->meta && fd_link_number(path1) >= 0) {
        k = fd_link_meta(p, dc, req, c, fd_link_number(path1), resp, bus);
    } else if (!r && (magic_path(path1) || (path2[0] && magic_path(path2)))) {
        k = through_proc(p, notify_fd, req, syscall, magic_path(path1) ? path1 : path2,
                         c->oflags, resp, bus);
    } else if (r == 0 && ok1 && ok2 && c->meta && p->as_root && !p->via_sudo &&
               strstr(syscall, "chown") == NULL && host_bind(p, path1, &below) &&
               host_bind(p, path1, &below)->kind == SG_MNT_BIND_RW) {
        /* a declared folder as root without sudo: on what root made for
         * the skill's group the broker does it (checked on the object,
         * meta_do); anything else gets the kernel's own EPERM */
        k = start_ask(p, pins, perm, dc, notify_fd, req, c, true, true, bus, true, NULL);
    } else if (r == 0 && ok1 && ok2 && moves_for_group(p, pins, c)) {
        /* a rename or removal in root's declared folder, which nobody may
         * not write: on what root made for it, the broker does it */
        k = start_ask(p, pins, perm, dc, notify_fd, req, c, true, true, bus, true, NULL);
    } else if (r == 0 && ok1 && ok2 &&
               (k = declared_call(p, pins, perm, dc, notify_fd, req, memfd, c, resp, bus))) {
        /* a declared write path: the object decides, the broker does it */
    } else if (r == 0 && ok1 && ok2 && c->meta && !owner_call(syscall) &&
               !host_bind(p, path1, &below) && dc) {
        /* a private view: the broker does it there, on the object */
        const char *stray = NULL;
        resp->flags = 0;
        resp->error = private_meta(p, dc, req, syscall, path1, c->omode, c->ts, c->ts_now,
                                   &stray);
        if (stray)
            stray_event(req, syscall, stray, bus);
        k = 1;
    } else if (r == 0 && ok1 && ok2 && c->meta) {
        /* a declared path's times and owner (its chmod is declared_call's):
         * the kernel decides, as without us; a name read again changes the
         * times or owner of what the skill may write, never its content */
        resp->error = 0;
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        k = 1;
    } else if (r == 0 && ok1 && ok2) {
        k = dc ? declared_write(p, pins, dc, notify_fd, req, syscall, path1, path2, c->oflags,
                                c->omode, resp)
               : 0;
        if (!k && dc && !host_bind(p, path1[0] ? path1 : path2, &below))
            k = private_write(p, dc, notify_fd, req, memfd, syscall, path1, path2, c->oflags,
                              c->omode, resp, bus);
        if (!k && dc) {
            /* never let continue: the kernel would read the names again,
             * and another thread can put a declared path's protected
             * target there. What is left here has its two names on two
             * mounts (a declared path and a private view): the kernel's
             * EXDEV; else refused. */
            resp->flags = 0;
            resp->error = path2[0] ? -EXDEV : -EACCES;
            k = 1;
        } else if (!k) {
            resp->error = 0;
            resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            k = 1;
        }
    } else if (r == 0 && nowhere(p, pins, dc, syscall, ok1 ? path2 : path1, resp, bus)) {
        k = 1;
    } else if (r == 0 && !ok1 && !ok2 && path2[0] && unshown(p, syscall, path2, resp, bus)) {
        k = 1; /* a rename's destination no approval could reach either */
    } else if (r == 0 && owner_call(syscall) && !ok1 && same_owner(p, pins, dc, req, c)) {
        /* chown of a file this run was let write to the owner and group it
         * has (LibreOffice keeps them so): changes nothing, so succeeds */
        resp->flags = 0;
        resp->error = 0;
        k = 1;
    } else if (own) {
        const char *bad = ok1 ? path2 : path1;
        resp->flags = 0;
        resp->error = -EACCES;
        sg_bus_emit(bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:b}", "syscall", syscall, "path", bad,
                              "class", "persistence", "reason", "skillgate's own folder",
                              "prevented", 1),
                    "%s of %s refused: it touches skillgate's own %s folder, which no rule or "
                    "person may let a skill change", syscall, bad, own);
        k = 1;
    } else if (r == 0 && !ok1 && rmdir_of_full(p, pins, req, syscall, path1)) {
        resp->flags = 0;
        resp->error = -ENOTEMPTY; /* it could only fail: never a question */
        k = 1;
    } else if (r == 0 && !ok2 && perm && write_may_ask(perm) && !strncmp(syscall, "link", 4)) {
        k = link_ask(p, pins, perm, dc, notify_fd, req, memfd, c, resp, bus);
    } else if (asks) {
        k = start_ask(p, pins, perm, dc, notify_fd, req, c, ok1, ok2, bus, false, NULL);
    } else {
        k = refuse_outside(p, req, c, r, ok1, ok2, resp, bus);
    }
    free(c);
    return k;
}
