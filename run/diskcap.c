#include "diskcap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "util.h"

#define CHECK_MS 100
/* files looked at again on every open the broker does: a writer that fills
 * file after file is seen at its next open, not at the next tick */
#define RECENT 8

struct held {
    dev_t dev;
    ino_t ino;
    int fd;          /* O_PATH */
    long long base;  /* bytes allocated when first seen */
    long long grown; /* at the last look */
};

struct approved {
    dev_t dev;
    ino_t ino;
    char *path; /* where the skill sees it */
};

struct fifo_wait {
    uint64_t id;
    int notify_fd, obj;
    unsigned long long flags;
};

struct sg_diskcap {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    long long max_files, max_bytes;
    long long made;          /* names made in the declared write paths */
    unsigned long refused;   /* creations refused past the cap */
    struct held *held;
    size_t nheld, cap_held;  /* cap_held: files watched at most (then EDQUOT) */
    int64_t next_ms;
    long long grown;         /* the sum of the held files' growth at their last looks */
    bool over, said;         /* past the byte cap; the event emitted */
    dev_t own[SG_OWN_FS_MAX]; /* the sandbox's own tmpfs instances (sandbox.h) */
    size_t nown;
    unsigned long private_refused; /* writes into the sandbox's own /var, /run, /dev */
    bool as_person;          /* this creation is done as root, the person (perform_open) */
    struct approved *appr;   /* the files a person let this run write (writes.c) */
    size_t nappr, cap_appr;
    bool learnt;             /* the run's repositories were looked for (gitnamed.h) */
    struct fifo_wait fifo[SG_DISKCAP_FIFO_WAITS]; /* blocking opens of FIFOs, waiting */
    size_t nfifo;
    int64_t fifo_next_ms;
};

void sg_diskcap_own_fs(struct sg_diskcap *d, const dev_t *own, size_t n)
{
    d->nown = n < SG_OWN_FS_MAX ? n : SG_OWN_FS_MAX;
    memcpy(d->own, own, d->nown * sizeof *own);
}

bool sg_diskcap_is_own_fs(const struct sg_diskcap *d, dev_t dev)
{
    for (size_t i = 0; d && i < d->nown; i++)
        if (d->own[i] == dev)
            return true;
    return false;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct sg_diskcap *sg_diskcap_new(const struct sg_plan *p, struct sg_event_bus *bus)
{
    struct sg_diskcap *d = sg_xcalloc(1, sizeof *d);
    d->plan = p;
    d->bus = bus;
    d->max_files = p->limits[SG_PL_FILES].value;
    d->max_bytes = p->limits[SG_PL_DISK].value << 20;
    /* files made count once; files that were there and get written are
     * watched too, up to as many again */
    d->cap_held = (size_t)d->max_files * 2 + 64;
    return d;
}

void sg_diskcap_free(struct sg_diskcap *d)
{
    if (!d)
        return;
    if (d->refused > 1)
        sg_bus_emit(d->bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:I, s:b}", "limit", "files", "value",
                              (json_int_t)d->max_files, "refused", (json_int_t)d->refused,
                              "prevented", 1),
                    "%lu new files or folders refused in all past the cap of %lld", d->refused,
                    d->max_files);
    if (d->private_refused > 1)
        sg_bus_emit(d->bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:I, s:b, s:b}", "class", "file", "refused",
                              (json_int_t)d->private_refused, "private", 1, "prevented", 1),
                    "%lu writes into the sandbox's own system folders refused in all (nothing "
                    "there is kept; programs fall back to their own folders)",
                    d->private_refused);
    for (size_t i = 0; i < d->nfifo; i++) {
        struct seccomp_notif_resp r = {.id = d->fifo[i].id, .error = -EINTR};
        if (seccomp_notify_id_valid(d->fifo[i].notify_fd, d->fifo[i].id) == 0)
            seccomp_notify_respond(d->fifo[i].notify_fd, &r);
        close(d->fifo[i].obj);
    }
    for (size_t i = 0; i < d->nheld; i++)
        close(d->held[i].fd);
    free(d->held);
    for (size_t i = 0; i < d->nappr; i++)
        free(d->appr[i].path);
    free(d->appr);
    free(d);
}

/* At most this many approved files are remembered in a run; past it a
 * change to one more is asked again (the safe side). */
#define SG_APPROVED_MAX 4096

static ssize_t approved_at(const struct sg_diskcap *d, const char *path)
{
    for (size_t i = 0; d && i < d->nappr; i++)
        if (!strcmp(d->appr[i].path, path))
            return (ssize_t)i;
    return -1;
}

void sg_diskcap_approve(struct sg_diskcap *d, const char *path, const struct stat *st)
{
    /* only a regular file or a folder is ever remembered: a FIFO, a
     * device or a link at an approved name is asked about again */
    if (!d || (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)))
        return;
    ssize_t i = approved_at(d, path);
    if (i < 0 && d->nappr >= SG_APPROVED_MAX)
        return;
    if (i < 0) {
        if (d->nappr == d->cap_appr) {
            d->cap_appr = d->cap_appr ? d->cap_appr * 2 : 16;
            d->appr = sg_xrealloc(d->appr, d->cap_appr * sizeof *d->appr);
        }
        i = (ssize_t)d->nappr++;
        d->appr[i].path = sg_xstrdup(path);
    }
    d->appr[i].dev = st->st_dev;
    d->appr[i].ino = st->st_ino;
}

bool sg_diskcap_approved(const struct sg_diskcap *d, const char *path, const struct stat *st)
{
    ssize_t i = approved_at(d, path);
    return i >= 0 && d->appr[i].dev == st->st_dev && d->appr[i].ino == st->st_ino;
}

void sg_diskcap_forget(struct sg_diskcap *d, const char *path)
{
    ssize_t i = approved_at(d, path);
    if (i < 0)
        return;
    free(d->appr[i].path);
    d->appr[i] = d->appr[--d->nappr];
}

void sg_diskcap_private_refused(struct sg_diskcap *d, const char *syscall, const char *path)
{
    if (!d || d->private_refused++ > 0)
        return;
    sg_bus_emit(d->bus, SG_EV_FS_BLOCKED,
                json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "syscall", syscall, "path", path,
                          "class", "file", "reason", "the sandbox's own system folder",
                          "private", 1, "prevented", 1),
                "%s of %s refused without a question: the sandbox's own system folders keep "
                "nothing, and no answer could write a host folder there (the rest are counted)",
                syscall, path);
}

/* Past the file cap: the first refusal is shown, the rest counted. */
static void refuse_new(struct sg_diskcap *d, const char *syscall, const char *path)
{
    if (d->refused++ == 0)
        sg_bus_emit(d->bus, SG_EV_RESOURCE_LIMIT_HIT,
                    json_pack("{s:s, s:I, s:s, s:s, s:b}", "limit", "files", "value",
                              (json_int_t)d->max_files, "syscall", syscall, "path", path,
                              "prevented", 1),
                    "%s of %s refused: the run made %lld files and folders in its write paths, "
                    "the cap (max_files)", syscall, path, d->made);
}

bool sg_diskcap_learn_once(struct sg_diskcap *d)
{
    if (!d || d->learnt)
        return false;
    d->learnt = true;
    return true;
}

bool sg_diskcap_may_create(struct sg_diskcap *d, const char *syscall, const char *path)
{
    if (d->made >= d->max_files) {
        refuse_new(d, syscall, path);
        return false;
    }
    d->made++;
    return true;
}

/* ---- as the skill would do it ---- */

mode_t sg_skill_umask(pid_t tid)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    unsigned um = 022;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &um) == 1)
            break;
    if (f)
        fclose(f);
    return (mode_t)(um & 0777);
}

/* As root, the kernel checks the skill's identity for the broker's thread:
 * fsuid and fsgid (which drop the file capabilities) and no groups; the
 * raw calls change this thread only. The umask is the process's: 0 while
 * the skill's is applied by hand. */
void sg_become_skill(const struct sg_plan *p, struct sg_skill_creds *s)
{
    s->umask = umask(0);
    s->switched = false;
    if (!p->as_root)
        return;
    s->ngroups = getgroups((int)SG_ARRAY_LEN(s->groups), s->groups);
    syscall(SYS_setgroups, 0, NULL);
    syscall(SYS_setfsgid, p->skill_gid);
    syscall(SYS_setfsuid, p->skill_uid);
    s->switched = true;
}

void sg_become_person(const struct sg_plan *p, struct sg_skill_creds *s)
{
    s->umask = umask(0);
    umask(s->umask); /* the broker's own: what it makes is masked as before */
    s->switched = false;
    if (!p->as_root || !p->via_sudo)
        return;
    s->ngroups = getgroups((int)SG_ARRAY_LEN(s->groups), s->groups);
    syscall(SYS_setgroups, (size_t)p->nperson_groups, p->person_groups);
    syscall(SYS_setfsgid, p->skill_gid);
    syscall(SYS_setfsuid, p->skill_uid);
    s->switched = true;
}

void sg_become_broker(struct sg_skill_creds *s)
{
    if (s->switched) {
        syscall(SYS_setfsuid, geteuid());
        syscall(SYS_setfsgid, getegid());
        if (s->ngroups >= 0)
            syscall(SYS_setgroups, s->ngroups, s->groups);
    }
    umask(s->umask);
}

static void look(struct sg_diskcap *d, size_t i)
{
    struct stat st;
    struct held *h = &d->held[i];
    long long g = fstat(h->fd, &st) == 0 && (long long)st.st_blocks * 512 > h->base
                      ? (long long)st.st_blocks * 512 - h->base
                      : 0;
    d->grown += g - h->grown;
    h->grown = g;
    if (d->grown > d->max_bytes)
        d->over = true;
}

/* Watch a file opened for writing (f), with what it held before (pre). */
static int watch(struct sg_diskcap *d, int f, const struct stat *pre)
{
    struct stat st;
    if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    for (size_t i = 0; i < d->nheld; i++)
        if (d->held[i].dev == st.st_dev && d->held[i].ino == st.st_ino)
            return 0;
    if (d->nheld == d->cap_held)
        return -EDQUOT;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", f);
    int o = open(self, O_PATH | O_CLOEXEC);
    if (o < 0 && errno == EMFILE) {
        /* the broker's own soft limit: up to its hard one */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        o = open(self, O_PATH | O_CLOEXEC);
    }
    if (o < 0)
        return -errno;
    if (d->nheld % 256 == 0)
        d->held = sg_xrealloc(d->held, (d->nheld + 256) * sizeof *d->held);
    bool same = pre && pre->st_dev == st.st_dev && pre->st_ino == st.st_ino;
    d->held[d->nheld++] = (struct held){.dev = st.st_dev, .ino = st.st_ino, .fd = o,
                                        .base = same ? (long long)pre->st_blocks * 512 : 0};
    if (!d->next_ms)
        d->next_ms = now_ms() + CHECK_MS;
    return 0;
}

int sg_give_skills_group(const struct sg_plan *p, int o)
{
    struct stat st;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", o);
    if (fstat(o, &st) < 0)
        return -errno;
    mode_t g = (st.st_mode & 0700) >> 3;
    return fchownat(o, "", (uid_t)-1, p->skill_gid, AT_EMPTY_PATH) < 0 ||
                   chmod(self, (st.st_mode & 07777) | g | (S_ISDIR(st.st_mode) ? S_ISGID : 0)) < 0
               ? -errno
               : 0;
}

/* What root made for the skill in root's folder is root's, in the
 * skill's group with the owner's bits for the group (a folder setgid), as
 * the folders skillgate makes for it (root:nogroup 2770, launch.c): its
 * next run opens it again, and the broker does its chmod and utime
 * (writes.c). Decided on the object made (a folder opened without
 * following a link), never on its name again. f or -errno. */
static int to_skills_group(struct sg_diskcap *d, int dfd, const char *rel, int f, bool is_mkdir,
                           bool links)
{
    int o = f;
    if (is_mkdir) {
        char buf[PATH_MAX];
        const char *last;
        snprintf(buf, sizeof buf, "%s", rel);
        int pfd = sg_beneath_parent_links(dfd, buf, &last, links);
        o = pfd < 0 ? pfd : openat(pfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pfd >= 0 && o < 0)
            o = -errno;
        if (pfd >= 0)
            close(pfd);
        if (o < 0)
            return o;
    }
    int r = sg_give_skills_group(d->plan, o);
    if (is_mkdir)
        close(o);
    if (r < 0 && !is_mkdir)
        close(f);
    return r < 0 ? r : f;
}

/* As root without sudo: is rel's folder (beneath dfd, the declared
 * folder) that folder itself or one root made for the skill's group
 * (root's, its group, group-writable)? Never a folder of root's own below
 * it: a 0700 one is no door to nobody (writes.c group_parent). */
static bool group_folder(const struct sg_diskcap *d, int dfd, const char *rel)
{
    char buf[PATH_MAX];
    const char *last;
    struct stat st, top;
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
        return false;
    int pfd = sg_beneath_parent(dfd, buf, &last);
    bool ok = pfd >= 0 && fstat(pfd, &st) == 0 && fstat(dfd, &top) == 0 &&
              ((st.st_dev == top.st_dev && st.st_ino == top.st_ino) ||
               (st.st_uid == 0 && st.st_gid == d->plan->skill_gid && (st.st_mode & S_IWGRP)));
    if (pfd >= 0)
        close(pfd);
    return ok;
}

/* a regular file of root's with one name and no setuid or
 * setgid bit: what nobody may be handed open for writing as root. */
static bool root_plain(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == 0 && st->st_nlink == 1 &&
           !(st->st_mode & (S_ISUID | S_ISGID));
}

/* could the skill (nobody, its group, no others) read st itself? */
static bool skill_reads(const struct sg_plan *p, const struct stat *st)
{
    return st->st_uid == p->skill_uid   ? (st->st_mode & S_IRUSR)
           : st->st_gid == p->skill_gid ? (st->st_mode & S_IRGRP)
                                        : (st->st_mode & S_IROTH);
}

/* The open or mkdir itself, as the skill would do it; -errno or the fd (0
 * for a mkdir). links: follow symlinks that stay beneath dfd. */
static int perform_open(struct sg_diskcap *d, int dfd, const char *rel, unsigned long long flags,
                        mode_t m, bool is_mkdir, bool tmpfile, bool full, bool had, bool *made,
                        bool links)
{
    struct sg_skill_creds sv = {0};
    int f = -EINVAL;
    if (d->as_person)
        sv.umask = umask(0); /* root's own call: the skill's umask by hand */
    else
        sg_become_skill(d->plan, &sv);
    if (is_mkdir) {
        char buf[PATH_MAX];
        const char *last;
        snprintf(buf, sizeof buf, "%s", rel);
        int pfd = sg_beneath_parent_links(dfd, buf, &last, links);
        f = pfd;
        if (pfd >= 0) {
            f = full && !had ? -EDQUOT : mkdirat(pfd, last, m) < 0 ? -errno : 0;
            *made = f == 0;
            close(pfd);
        }
    } else if (tmpfile || !(flags & O_CREAT)) {
        f = full && tmpfile ? -EDQUOT : sg_beneath_file_links(dfd, rel, flags, m, links);
        *made = tmpfile && f >= 0;
    } else if (full) {
        /* as the person only a new name: past the cap none is */
        f = d->as_person ? -EDQUOT
                         : sg_beneath_file_links(
                               dfd, rel, flags & ~(unsigned long long)(O_CREAT | O_EXCL), 0, links);
        if (f == -ENOENT)
            f = -EDQUOT;
    } else {
        f = sg_beneath_file_links(dfd, rel, flags | O_EXCL, m, links);
        *made = f >= 0;
        if (f == -EEXIST && !(flags & O_EXCL) && !d->as_person)
            f = sg_beneath_file_links(dfd, rel, flags & ~(unsigned long long)O_CREAT, 0,
                                          links);
    }
    sg_become_broker(&sv);
    if (d->as_person && *made)
        f = to_skills_group(d, dfd, rel, f, is_mkdir, links);
    return f;
}

int sg_diskcap_perform(struct sg_diskcap *d, int notify_fd, const struct seccomp_notif *req,
                       const char *syscall, int dfd, const char *rel, unsigned long long flags,
                       unsigned long long mode, const char *path, struct seccomp_notif_resp *resp)
{
    /* open and openat ignore bits they do not know; openat2 refuses them */
    flags &= 037777777;
    bool is_mkdir = !strncmp(syscall, "mkdir", 5);
    bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
    bool creates = is_mkdir || tmpfile || (flags & O_CREAT);
    for (size_t i = d->nheld > RECENT ? d->nheld - RECENT : 0; i < d->nheld; i++)
        look(d, i);
    if (d->over) { /* stopped at the loop's next turn: nothing more meanwhile */
        resp->id = req->id, resp->val = 0, resp->flags = 0, resp->error = -EDQUOT;
        return 1;
    }
    bool full = d->made >= d->max_files;
    /* never a setuid or setgid file made by the broker (as root, root's) */
    mode_t m = creates ? (mode_t)(mode & 01777) & ~sg_skill_umask((pid_t)req->pid) : 0;
    struct stat pre;
    bool had = fstatat(dfd, rel, &pre, AT_SYMLINK_NOFOLLOW) == 0;
    resp->id = req->id;
    resp->val = 0;
    resp->flags = 0;
    bool made = false;
    /* the exact path first, never through a link; a symlink on the way is
     * then followed as long as it stays beneath the pinned folder, so the
     * file it reaches is made, held and measured all the same */
    int f = perform_open(d, dfd, rel, flags, m, is_mkdir, tmpfile, full, had, &made, false);
    if (f == -ELOOP)
        f = perform_open(d, dfd, rel, flags, m, is_mkdir, tmpfile, full, had, &made, true);
    /* As root without sudo the skill is nobody, and a folder root owns
     * refuses it; the person who declared the folder is root, so a new
     * name there is made as root, root's as its other files are, and a
     * regular file of root's there is opened as root could open it (the
     * person's own doc.xml saved over). Never another existing object. */
    bool own_file = f == -EACCES && had && root_plain(&pre) && !is_mkdir && !tmpfile &&
                    (flags & O_ACCMODE) != O_RDONLY && d->plan->as_root &&
                    !d->plan->via_sudo && group_folder(d, dfd, rel);
    if (f == -EACCES && ((creates && !had) || own_file) && d->plan->as_root &&
        !d->plan->via_sudo) {
        unsigned long long fl = own_file ? flags & ~(unsigned long long)O_CREAT : flags;
        /* root's file is written, never read, for nobody: O_RDWR
         * is handed on write-only unless nobody could read it itself */
        if (own_file && (fl & O_ACCMODE) == O_RDWR && !skill_reads(d->plan, &pre))
            fl = (fl & ~(unsigned long long)O_ACCMODE) | O_WRONLY;
        d->as_person = true;
        f = perform_open(d, dfd, rel, fl, m, is_mkdir, tmpfile, full, had, &made, false);
        if (f == -ELOOP)
            f = perform_open(d, dfd, rel, fl, m, is_mkdir, tmpfile, full, had, &made, true);
        d->as_person = false;
        struct stat now;
        /* the very object checked (one name only, root's, no setid) */
        if (own_file && f >= 0 &&
            (fstat(f, &now) < 0 || now.st_dev != pre.st_dev || now.st_ino != pre.st_ino ||
             !root_plain(&now))) {
            close(f);
            f = -EACCES;
        }
    }
    if (f == -ELOOP && (flags & O_NOFOLLOW)) {
        resp->error = -ELOOP; /* the kernel's own answer: the last name is a link */
        return 1;
    }
    /* A FIFO (or a device) that is there already, opened without O_CREAT
     * or O_TRUNC: its open may block until a reader comes, which the skill
     * must wait for, never the broker, so the kernel does it. Whatever
     * name it reads again can make no file; it can reach only what is
     * already in the write paths (session.c lists that race). */
    /* an existing FIFO or device (O_CREAT makes nothing there, O_TRUNC
     * truncates nothing): the very object, opened by the broker never
     * blocking, and a blocking open waits for its reader in the loop */
    if ((f == -EOPNOTSUPP || f == -ENXIO) && had && !S_ISREG(pre.st_mode) &&
        !S_ISDIR(pre.st_mode) && !(flags & O_EXCL) && !is_mkdir && !tmpfile) {
        int obj = sg_beneath_open_links(dfd, rel, O_PATH, 0, true);
        if (obj < 0) {
            resp->error = obj;
            return 1;
        }
        return sg_diskcap_special(d, notify_fd, req, obj, flags, resp);
    }
    if (f == -ELOOP || f == -EXDEV || f == -EOPNOTSUPP || f == -ENXIO) {
        /* Never let the kernel do it instead: it would read the path again
         * from the skill's memory, and a file it made would be neither
         * counted nor held. A link out of the write path, or no regular
         * file (a FIFO, a device): refused, and said. */
        int why = f;
        resp->error = f == -ENXIO ? -ENXIO : -EACCES;
        sg_bus_emit(d->bus, SG_EV_FS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:s, s:b}", "syscall", syscall, "path", path,
                              "class", "file", "reason",
                              why == -EXDEV || why == -ELOOP
                                  ? "a symbolic link that leaves the declared write path"
                                  : "not a regular file",
                              "prevented", 1),
                    "%s of %s refused: %s", syscall, path,
                    why == -EXDEV || why == -ELOOP
                        ? "a symbolic link on the way leads out of the declared write path "
                          "(files there are made by skillgate and counted, never through a link "
                          "that leaves it)"
                        : "in a declared write path only regular files and folders are made or "
                          "truncated (an existing FIFO may be opened without O_CREAT)");
        return 1;
    }
    if (f == -EDQUOT)
        refuse_new(d, syscall, path);
    if (made)
        d->made++;
    if (f < 0 || is_mkdir) {
        resp->error = f < 0 ? f : 0;
        return 1;
    }
    /* a read-only open (O_CREAT of a file that is there: mkdir -p's
     * friends) cannot make it grow: not held, so it takes no slot */
    int w = (flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC) ? 0
                                                                 : watch(d, f, had ? &pre : NULL);
    if (w < 0) {
        close(f);
        resp->error = w;
        if (w == -EDQUOT)
            refuse_new(d, syscall, path);
        return 1;
    }
    struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)f,
                                      .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    int r = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
    close(f);
    if (r < 0) {
        resp->error = r;
        return 1;
    }
    return 2;
}

#define FIFO_RETRY_MS 20

int sg_diskcap_timeout(const struct sg_diskcap *d)
{
    int fifo = !d || !d->nfifo                     ? -1
               : d->fifo_next_ms - now_ms() > 0 ? (int)(d->fifo_next_ms - now_ms())
                                                : 0;
    if (!d || !d->nheld || d->said)
        return fifo;
    if (d->over)
        return 0;
    int64_t left = d->next_ms - now_ms();
    int held = left < 0 ? 0 : (int)left;
    return fifo >= 0 && fifo < held ? fifo : held;
}

/* Open obj as the call asks, as the skill, never blocking: an fd, or
 * -errno (-ENXIO: a FIFO with no reader yet). */
static int special_open(struct sg_diskcap *d, int obj, unsigned long long flags)
{
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", obj);
    int keep = (int)(flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC));
    struct sg_skill_creds sv;
    sg_become_skill(d->plan, &sv);
    int f = open(self, keep | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    int r = f < 0 ? -errno : f;
    sg_become_broker(&sv);
    if (f >= 0 && !(flags & O_NONBLOCK))
        fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    return r;
}

/* Hand f over as call id's result: 0, or -errno (f is closed). */
static int hand(int notify_fd, uint64_t id, int f, unsigned long long flags)
{
    struct seccomp_notif_addfd add = {.id = id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = (uint32_t)f,
                                      .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    int r = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
    close(f);
    return r;
}

int sg_diskcap_special(struct sg_diskcap *d, int notify_fd, const struct seccomp_notif *req,
                       int obj, unsigned long long flags, struct seccomp_notif_resp *resp)
{
    struct stat st;
    resp->id = req->id, resp->val = 0, resp->flags = 0;
    /* a FIFO only: a device node in a declared folder is refused as the
     * sandbox's nodev mounts refuse it (the broker's host mount has no
     * nodev, and would open the host's device) */
    int f = fstat(obj, &st) < 0        ? -errno
            : !S_ISFIFO(st.st_mode) ? -EACCES
                                    : special_open(d, obj, flags);
    bool waits = f == -ENXIO && S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK) &&
                 d->nfifo < SG_DISKCAP_FIFO_WAITS;
    if (waits) {
        d->fifo[d->nfifo++] = (struct fifo_wait){.id = req->id, .notify_fd = notify_fd,
                                                 .obj = obj, .flags = flags};
        if (d->nfifo == 1)
            d->fifo_next_ms = now_ms() + FIFO_RETRY_MS;
        return 2;
    }
    close(obj);
    if (f < 0) {
        resp->error = f;
        return 1;
    }
    int r = hand(notify_fd, req->id, f, flags);
    if (r < 0) {
        resp->error = r;
        return 1;
    }
    return 2;
}

/* The FIFOs waited for: each tried again; a reader there, it is handed
 * over; a thread gone, dropped. */
static void fifo_tick(struct sg_diskcap *d)
{
    if (!d->nfifo || now_ms() < d->fifo_next_ms)
        return;
    for (size_t i = 0; i < d->nfifo;) {
        struct fifo_wait *w = &d->fifo[i];
        int f = seccomp_notify_id_valid(w->notify_fd, w->id) == 0
                    ? special_open(d, w->obj, w->flags)
                    : -ESRCH;
        if (f == -ENXIO) {
            i++;
            continue;
        }
        if (f >= 0)
            f = hand(w->notify_fd, w->id, f, w->flags);
        if (f < 0 && f != -ESRCH) {
            struct seccomp_notif_resp r = {.id = w->id, .error = f};
            if (seccomp_notify_id_valid(w->notify_fd, w->id) == 0)
                seccomp_notify_respond(w->notify_fd, &r);
        }
        close(w->obj);
        *w = d->fifo[--d->nfifo];
    }
    d->fifo_next_ms = now_ms() + FIFO_RETRY_MS;
}

bool sg_diskcap_over(struct sg_diskcap *d)
{
    if (d)
        fifo_tick(d);
    if (!d || !d->nheld || d->said)
        return false;
    if (!d->over && now_ms() >= d->next_ms) {
        for (size_t i = 0; i < d->nheld; i++)
            look(d, i);
        d->next_ms = now_ms() + CHECK_MS;
    }
    if (!d->over)
        return false;
    d->said = true;
    sg_bus_emit(d->bus, SG_EV_RESOURCE_LIMIT_HIT,
                json_pack("{s:s, s:I, s:I, s:I, s:b}", "limit", "disk", "value",
                          (json_int_t)d->max_bytes, "bytes", (json_int_t)d->grown, "files",
                          (json_int_t)d->nheld, "prevented", 1),
                "disk: the run wrote %lld MB into its write paths, past the cap of %lld MB "
                "(max_disk_mb); every process of the sandbox killed",
                d->grown >> 20, d->max_bytes >> 20);
    return true;
}
