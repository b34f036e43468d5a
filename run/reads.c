/* What a recorded skill opened to read (reads.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "notifpath.h"
#include "reads.h"
#include "sanitize.h"
#include "util.h"
#include "writes.h"

#define NBUCKETS 1024

struct entry {
    struct entry *next;
    bool found;  /* there in the sandbox when first seen */
    bool opened; /* opened, not only looked up */
    char path[];
};

struct sg_reads {
    const struct sg_plan *p;
    unsigned long long opens, looks, unnamed, dropped;
    unsigned long long *place; /* per mount of the plan: opens in a given place */
    struct entry *bucket[NBUCKETS];
    size_t npaths, bytes;
};

struct sg_reads *sg_reads_new(const struct sg_plan *p)
{
    struct sg_reads *rd = sg_xcalloc(1, sizeof *rd);
    rd->p = p;
    rd->place = sg_xcalloc(p->nmounts + 1, sizeof *rd->place);
    return rd;
}

void sg_reads_free(struct sg_reads *rd)
{
    if (!rd)
        return;
    for (size_t i = 0; i < NBUCKETS; i++)
        for (struct entry *e = rd->bucket[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(rd->place);
    free(rd);
}

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && *dir == '/')
        return *path == '/';
    return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* The mount over path that every run is given (its index), or -1 when the
 * path itself is kept: a declared folder, /run and /var (empty here, not on
 * the host), a mask, or no mount at all. The private /tmp and HOME count
 * too, for what the skill finds there (note() looks). */
static int given_place(const struct sg_plan *p, const char *path)
{
    int best = -1;
    for (size_t i = 0; i < p->nmounts; i++)
        if (within(path, p->mounts[i].dst) &&
            (best < 0 || strlen(p->mounts[i].dst) >= strlen(p->mounts[best].dst)))
            best = (int)i;
    if (best < 0)
        return -1;
    const struct sg_mount *m = &p->mounts[best];
    /* a declared folder that also covers it (the working folder inside a
     * declared one, or the same): kept, so the declared one shows used */
    for (size_t i = 0; i < p->nmounts && !m->declared; i++)
        if (p->mounts[i].declared && within(path, p->mounts[i].dst))
            return -1;
    switch (m->kind) {
    case SG_MNT_BIND_RO:
    case SG_MNT_BIND_RW:
        return m->declared ? -1 : best;
    case SG_MNT_PROC:
    case SG_MNT_DEV:
    case SG_MNT_SYMLINK:
        return best;
    case SG_MNT_TMPFS:
        return !strcmp(m->dst, "/tmp") || m->owned ? best : -1;
    default:
        return -1;
    }
}

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % NBUCKETS;
}

static void note(struct sg_reads *rd, pid_t pid, const char *path, bool opened)
{
    int place = given_place(rd->p, path);
    bool view = place >= 0 && rd->p->mounts[place].kind == SG_MNT_TMPFS;
    if (place >= 0 && !view) {
        rd->place[place]++;
        return;
    }
    struct stat st;
    /* in a private view, what the skill finds is its own (a credential
     * there is a decoy: kept); what it does not find may be on the host */
    if (view && strcmp(sg_fs_class(rd->p->home, path), "credential") &&
        sg_notif_lstat(pid, path, &st) == 0) {
        rd->place[place]++;
        return;
    }
    unsigned h = hash(path);
    for (struct entry *e = rd->bucket[h]; e; e = e->next)
        if (!strcmp(e->path, path)) {
            e->opened |= opened;
            return;
        }
    size_t n = strlen(path);
    if (rd->npaths >= SG_READS_MAX_PATHS || rd->bytes + n > SG_READS_MAX_BYTES) {
        rd->dropped++;
        return;
    }
    rd->bytes += n;
    struct entry *e = sg_xmalloc(sizeof *e + n + 1);
    memcpy(e->path, path, n + 1);
    e->found = sg_notif_lstat(pid, path, &st) == 0;
    e->opened = opened;
    e->next = rd->bucket[h];
    rd->bucket[h] = e;
    rd->npaths++;
}

/* The calls a recording stops (seccomp.c): where the dirfd and the path
 * are (-1: none, AT_FDCWD), where the AT_ flags of a lookup are, and for an
 * open where its O_ flags are. openat2 never comes here: session.c refuses
 * it (ENOSYS) before anything reads its flags from the skill's memory. */
static const struct {
    const char *name;
    int dfd, path, at_flags, oflags;
} calls[] = {
    {"open", -1, 0, -1, 1},       {"openat", 0, 1, -1, 2},
    {"stat", -1, 0, -1, -1},      {"lstat", -1, 0, -1, -1},     {"access", -1, 0, -1, -1},
    {"readlink", -1, 0, -1, -1},  {"readlinkat", 0, 1, -1, -1}, {"faccessat", 0, 1, -1, -1},
    {"faccessat2", 0, 1, 3, -1},  {"newfstatat", 0, 1, 3, -1},  {"statx", 0, 1, 2, -1},
};

int sg_reads_handle(struct sg_reads *rd, int notify_fd, const struct seccomp_notif *req,
                    const char *syscall, struct seccomp_notif_resp *resp)
{
    size_t k = 0;
    while (k < SG_ARRAY_LEN(calls) && strcmp(syscall, calls[k].name))
        k++;
    if (!rd || k == SG_ARRAY_LEN(calls))
        return 0;
    char memp[64];
    snprintf(memp, sizeof memp, "/proc/%d/mem", (int)req->pid);
    cleanup_fd int memfd = open(memp, O_RDONLY | O_CLOEXEC);
    bool opens = calls[k].oflags != -1;
    unsigned long long flags = calls[k].oflags >= 0 ? req->data.args[calls[k].oflags] : 0;
    if (opens && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)))
        return 0; /* the write broker's */
    int at_empty = calls[k].at_flags >= 0 && (req->data.args[calls[k].at_flags] & AT_EMPTY_PATH);
    char path[PATH_MAX];
    int r = memfd < 0 ? -errno
                      : sg_notif_path(req->pid, memfd,
                                      calls[k].dfd >= 0 ? (int)req->data.args[calls[k].dfd]
                                                        : AT_FDCWD,
                                      req->data.args[calls[k].path], at_empty, path, sizeof path);
    if (opens)
        rd->opens++;
    else
        rd->looks++;
    /* still the same call after its memory was read: else its name is not
     * this call's (the process died, or the call was interrupted) */
    if (r == 0 && seccomp_notify_id_valid(notify_fd, req->id) == 0)
        note(rd, req->pid, path, opens);
    else
        rd->unnamed++;
    *resp = (struct seccomp_notif_resp){.id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
    return 1;
}

/* ---- at the end: was it made in a view, is it on this machine? ---- */

/* Made by the skill in a private view since it looked (a cache it checked
 * for, then created): reached beneath the view's root, no link followed. */
static bool made_in_view(const struct sg_plan *p, const int *view_fd, const char *path)
{
    for (int v = 0; view_fd && v < SG_VIEWS; v++) {
        const char *dst = sg_view_path(p, v);
        if (!dst || view_fd[v] < 0 || !within(path, dst) || !strcmp(path, dst))
            continue;
        const char *rel = path + strlen(dst) + 1;
        int fd = sg_beneath_open(view_fd[v], rel, O_PATH | O_NOFOLLOW, 0);
        if (fd >= 0)
            close(fd);
        return fd >= 0 || fd == -ELOOP; /* a link there is the skill's too */
    }
    return false;
}

/* Mounts where a lookup could reach out or hang: automounts (the host would
 * mount what a skill named), network filesystems, user filesystems (a dead
 * FUSE daemon). By mount id, from mountinfo. */
struct far {
    unsigned long long id[256];
    size_t n;
    bool all; /* mountinfo unread or past the list: every mount counts as far */
};

static void far_read(struct far *f)
{
    static const char *const types[] = {"autofs", "nfs", "fuse", "cifs", "smb", "9p", "ceph",
                                        "gluster", "afs", "lustre", "davfs", "sshfs", "ncp",
                                        "gfs2", "ocfs2", "virtiofs", "orangefs", "beegfs"};
    f->n = 0;
    FILE *fp = fopen("/proc/self/mountinfo", "re");
    f->all = !fp;
    char *line = NULL;
    size_t cap = 0;
    while (fp && getline(&line, &cap, fp) > 0) {
        unsigned long long id = strtoull(line, NULL, 10);
        const char *dash = strstr(line, " - ");
        char *mp = strchr(line, ' ');
        for (int k = 0; mp && k < 3; k++) /* parent, major:minor, root, then the mount point */
            mp = strchr(mp + 1, ' ');
        if (!dash || !mp)
            continue;
        bool root = !strncmp(mp + 1, "/ ", 2); /* the host's own root: checked anyway */
        for (size_t i = 0; i < SG_ARRAY_LEN(types) && !root; i++)
            if (!strncmp(dash + 3, types[i], strlen(types[i]))) {
                if (f->n == SG_ARRAY_LEN(f->id))
                    f->all = true;
                else
                    f->id[f->n++] = id;
                break;
            }
    }
    free(line);
    if (fp)
        fclose(fp);
}

/* Is the file at fd on a far mount (or cannot that be told)? */
static bool on_far(const struct far *f, int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID,
              &sx) < 0 ||
        !(sx.stx_mask & STATX_MNT_ID) || f->all)
        return true;
    for (size_t i = 0; i < f->n; i++)
        if (f->id[i] == sx.stx_mnt_id)
            return true;
    return false;
}

/* Does this machine have path? 1 yes (*regular: a regular file), 0 no, -1
 * not checked: a symbolic link on the way or at its end (where it leads is
 * not where the skill looked, and a bind would follow it), a far mount, a
 * name that is not a plain absolute path. As the broker, which is
 * who binds a declared path (its folders above need not be the skill's to
 * walk). One component at a time, O_PATH (which triggers no automount),
 * never a link followed, never a name looked up inside a far mount. */
static int host_has(const struct far *f, const char *path, bool *regular)
{
    *regular = false;
    if (*path != '/')
        return -1;
    int r = -1;
    int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *c = path;
    while (dfd >= 0) {
        while (*c == '/')
            c++;
        if (!*c) { /* the whole path was walked */
            r = 1;
            break;
        }
        size_t len = strcspn(c, "/");
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX || (len <= 2 && !strncmp(c, "..", len)))
            break;
        memcpy(comp, c, len), comp[len] = '\0';
        c += len;
        int fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            r = errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -1;
            break;
        }
        close(dfd);
        dfd = fd;
        if (on_far(f, fd))
            break; /* not asked: -1 */
        struct statx sx;
        bool last = !c[strspn(c, "/")];
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE,
                  &sx) < 0 ||
            (!last && !S_ISDIR(sx.stx_mode) && !S_ISLNK(sx.stx_mode))) {
            r = 0;
            break;
        }
        if (S_ISLNK(sx.stx_mode))
            break; /* not followed: -1 */
        *regular = last && S_ISREG(sx.stx_mode);
    }
    if (dfd >= 0)
        close(dfd);
    return r;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp((*(struct entry *const *)a)->path, (*(struct entry *const *)b)->path);
}

void sg_reads_report(struct sg_reads *rd, const int *view_fd, struct sg_event_bus *bus)
{
    if (!rd)
        return;
    const struct sg_plan *p = rd->p;
    struct far far;
    far_read(&far);
    struct entry **all = sg_xcalloc(rd->npaths + 1, sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < NBUCKETS; i++)
        for (struct entry *e = rd->bucket[i]; e; e = e->next)
            all[n++] = e;
    qsort(all, n, sizeof *all, cmp_entry);
    json_t *paths = json_array(), *places = json_object();
    size_t absent = 0, on_host = 0, declared = 0;
    unsigned long long given = 0;
    for (size_t i = 0; i < n; i++) {
        /* reading a shell's rc file is no persistence; a credential is what
         * a read can aim at */
        bool cred = !strcmp(sg_fs_class(p->home, all[i]->path), "credential");
        /* a name that is not printable UTF-8 is kept escaped, as every
         * path a skill names (and never declared from) */
        cleanup_free char *esc = sg_sanitize_str(all[i]->path, 0);
        json_t *o = json_pack("{s:s, s:b, s:b}", "path", esc, "found", all[i]->found, "opened",
                              all[i]->opened);
        if (strcmp(esc, all[i]->path))
            json_object_set_new(o, "escaped", json_true());
        if (cred)
            json_object_set_new(o, "class", json_string("credential"));
        if (!all[i]->found && made_in_view(p, view_fd, all[i]->path)) {
            /* looked for, then made: the skill's own */
            json_object_set_new(o, "made", json_true());
        } else if (!all[i]->found) {
            /* what the sandbox did not show: is it on this machine? */
            bool regular;
            int here = host_has(&far, all[i]->path, &regular);
            json_object_set_new(o, "on_host", json_boolean(here > 0));
            if (here > 0)
                json_object_set_new(o, "file", json_boolean(regular));
            if (here < 0)
                json_object_set_new(o, "unchecked", json_true());
            absent++, on_host += here > 0;
        } else {
            for (size_t k = 0; k < p->nmounts; k++)
                if (p->mounts[k].declared && within(all[i]->path, p->mounts[k].dst)) {
                    declared++;
                    break;
                }
        }
        json_array_append_new(paths, o);
    }
    for (size_t k = 0; k < p->nmounts; k++) {
        if (!rd->place[k])
            continue;
        json_t *cur = json_object_get(places, p->mounts[k].dst);
        json_object_set_new(places, p->mounts[k].dst,
                            json_integer((json_int_t)rd->place[k] + json_integer_value(cur)));
        given += rd->place[k];
    }
    free(all);
    sg_bus_emit(bus, SG_EV_FILES_READ,
                json_pack("{s:I, s:I, s:I, s:o, s:o, s:I, s:I}", "opens", (json_int_t)rd->opens,
                          "lookups", (json_int_t)rd->looks, "given", (json_int_t)given, "places",
                          places, "paths", paths, "unnamed", (json_int_t)rd->unnamed, "dropped",
                          (json_int_t)rd->dropped),
                "%llu open%s to read and %llu lookup%s: %llu in what every run gets; %zu path%s "
                "beyond it (%zu in declared folders, %zu not in the sandbox, %zu of them on this "
                "machine)%s",
                rd->opens, rd->opens == 1 ? "" : "s", rd->looks, rd->looks == 1 ? "" : "s", given,
                n, n == 1 ? "" : "s", declared, absent, on_host,
                rd->dropped ? "; more paths past the cap only counted" : "");
}
