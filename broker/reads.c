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
 * open where its O_ flags are (-2: in openat2's struct open_how). */
static const struct {
    const char *name;
    int dfd, path, at_flags, oflags;
} calls[] = {
    {"open", -1, 0, -1, 1},       {"openat", 0, 1, -1, 2},      {"openat2", 0, 1, -1, -2},
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
    if (calls[k].oflags == -2) {
        struct open_how how;
        if (memfd < 0 ||
            pread(memfd, &how, sizeof how, (off_t)req->data.args[2]) != (ssize_t)sizeof how)
            return 0; /* the write broker answers what it cannot read */
        flags = how.flags;
    }
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

static int cmp_entry(const void *a, const void *b)
{
    return strcmp((*(struct entry *const *)a)->path, (*(struct entry *const *)b)->path);
}

void sg_reads_report(struct sg_reads *rd, struct sg_event_bus *bus)
{
    if (!rd)
        return;
    const struct sg_plan *p = rd->p;
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
        if (!all[i]->found) {
            /* what the sandbox did not show: is it on this machine? Never
             * followed at the end, never an automount triggered */
            struct stat st;
            bool here = fstatat(AT_FDCWD, all[i]->path, &st,
                                AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0;
            json_object_set_new(o, "on_host", json_boolean(here));
            absent++, on_host += here;
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
