/* The homes no bind may show whole (homes.h). */
#include "homes.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

/* "/" or a folder of the trees every sandbox shows read-only: nothing an
 * account keeps there is hidden from a skill to begin with. */
static bool placeholder(const char *real)
{
    static const char *const shown[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                        "/libx32", "/etc"};
    if (!strcmp(real, "/"))
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(shown); i++)
        if (sg_path_within(real, shown[i]))
            return true;
    return false;
}

static void add_home(struct sg_homes *hs, size_t *cap, const char *path, bool yours)
{
    struct stat st;
    if (!path || path[0] != '/' || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return; /* not a real folder: nothing there to show */
    cleanup_free char *real = sg_path_real(path);
    if (placeholder(real))
        return;
    for (size_t i = 0; i < hs->n; i++)
        if (!strcmp(hs->v[i].real, real)) {
            hs->v[i].yours |= yours;
            return;
        }
    sg_grow(&hs->v, cap, hs->n + 1, sizeof *hs->v);
    hs->v[hs->n++] = (struct sg_home){.path = sg_xstrdup(path), .real = steal_pointer(&real),
                                      .yours = yours};
}

/* The snapshot a plan holds (sg_homes_hold), per thread. */
static _Thread_local struct sg_homes held;
static _Thread_local unsigned held_depth, held_gen;

static void read_homes(struct sg_homes *hs);

void sg_homes_hold(void)
{
    if (held_depth++ == 0) {
        held_gen++; /* first: sg_path_real remembers from the first home read */
        read_homes(&held);
    }
}

static void held_forget(void);

void sg_homes_release(void)
{
    if (held_depth && --held_depth == 0) {
        sg_homes_free(&held);
        held_forget();
        sg_path_real_forget();
    }
}

unsigned sg_homes_held(void)
{
    return held_depth ? held_gen : 0;
}

void sg_homes_get(struct sg_homes *hs)
{
    if (!held_depth) {
        read_homes(hs);
        return;
    }
    hs->n = held.n;
    hs->v = sg_xcalloc(held.n ? held.n : 1, sizeof *hs->v);
    for (size_t i = 0; i < held.n; i++)
        hs->v[i] = (struct sg_home){.path = sg_xstrdup(held.v[i].path),
                                    .real = sg_xstrdup(held.v[i].real), .yours = held.v[i].yours};
}

static void read_homes(struct sg_homes *hs)
{
    memset(hs, 0, sizeof *hs);
    size_t cap = 0;
    add_home(hs, &cap, sg_invoking_home(), true);
    uid_t me = sg_invoking_uid();
    setpwent();
    for (size_t i = 0; i < SG_HOMES_MAX; i++) {
        errno = 0;
        struct passwd *pw = getpwent();
        if (!pw)
            break;
        add_home(hs, &cap, pw->pw_dir, pw->pw_uid == me);
    }
    endpwent();
}

void sg_homes_free(struct sg_homes *hs)
{
    for (size_t i = 0; i < hs->n; i++) {
        free(hs->v[i].path);
        free(hs->v[i].real);
    }
    free(hs->v);
    memset(hs, 0, sizeof *hs);
}

/* While held: what stat said of each folder on the homes' ways up (a
 * plan asks of every path it checks whether it is one of them, ~300 stat
 * calls of the same dozen folders), and the mount table below_mounts
 * reads (twice a plan). Each answer is the first one, as the homes
 * themselves are; bounded, past the cap a folder is stat'ed again. */
#define STAT_MEMO_MAX 512
struct stat_memo {
    char *path;
    int ok; /* stat's result: 0, or -1 */
    dev_t dev;
    ino_t ino;
};
static _Thread_local struct stat_memo *stat_memo;
static _Thread_local size_t stat_memo_n, stat_memo_cap;

/* The mount points of /proc/self/mountinfo, unescaped, in its order;
 * whole: false when the table was longer than MOUNTINFO_MAX (the points
 * are those before it was cut). */
struct mount_table {
    bool read, readable, whole;
    char **mp;
    size_t n, cap;
};
static _Thread_local struct mount_table held_mounts;

static void mount_table_free(struct mount_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->mp[i]);
    free(t->mp);
    memset(t, 0, sizeof *t);
}

static void held_forget(void)
{
    for (size_t i = 0; i < stat_memo_n; i++)
        free(stat_memo[i].path);
    free(stat_memo);
    stat_memo = NULL;
    stat_memo_n = stat_memo_cap = 0;
    mount_table_free(&held_mounts);
}

/* stat(path) for its device and inode: remembered while held. */
static int stat_held(const char *path, dev_t *dev, ino_t *ino)
{
    if (held_depth)
        for (size_t i = 0; i < stat_memo_n; i++)
            if (!strcmp(stat_memo[i].path, path)) {
                *dev = stat_memo[i].dev;
                *ino = stat_memo[i].ino;
                return stat_memo[i].ok;
            }
    struct stat st;
    int ok = stat(path, &st) == 0 ? 0 : -1;
    *dev = ok == 0 ? st.st_dev : 0;
    *ino = ok == 0 ? st.st_ino : 0;
    if (held_depth && stat_memo_n < STAT_MEMO_MAX) {
        sg_grow(&stat_memo, &stat_memo_cap, stat_memo_n + 1, sizeof *stat_memo);
        stat_memo[stat_memo_n++] = (struct stat_memo){.path = sg_xstrdup(path), .ok = ok,
                                                      .dev = *dev, .ino = *ino};
    }
    return ok;
}

/* Is the object at st the home h, or a folder on its way up? Each folder
 * of h's real path, from h to "/", by device and inode. */
static enum sg_home_rel by_object(const struct stat *st, const struct sg_home *h)
{
    char cur[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", h->real) >= (int)sizeof cur)
        return SG_HOME_NONE;
    for (size_t depth = 0; depth < PATH_MAX / 2; depth++) {
        dev_t dev;
        ino_t ino;
        if (stat_held(cur, &dev, &ino) == 0 && dev == st->st_dev && ino == st->st_ino)
            return depth ? SG_HOME_HOLDS : SG_HOME_IS;
        char *slash = strrchr(cur, '/');
        if (!slash || !strcmp(cur, "/"))
            break;
        slash[slash == cur] = '\0'; /* "/a" -> "/", "/a/b" -> "/a" */
    }
    return SG_HOME_NONE;
}

static enum sg_home_rel by_name(const char *path, const char *home)
{
    return !strcmp(path, home)            ? SG_HOME_IS
           : sg_path_within(home, path) ? SG_HOME_HOLDS
                                          : SG_HOME_NONE;
}

/* The mount table as /proc/self/mountinfo gives it: at most this much. */
#define MOUNTINFO_MAX (1024 * 1024)

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
    char *o = s;
    for (char *i = s; *i; i++) {
        if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' && i[2] <= '7' &&
            i[3] >= '0' && i[3] <= '7') {
            *o++ = (char)((i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0'));
            i += 3;
        } else {
            *o++ = *i;
        }
    }
    *o = '\0';
}

/* The mount points of the table, as far as MOUNTINFO_MAX: into t. */
static void mount_table_read(struct mount_table *t)
{
    memset(t, 0, sizeof *t);
    t->read = true;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    t->readable = t->whole = true;
    char *line = NULL;
    size_t cap = 0, total = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        total += (size_t)n;
        if (total > MOUNTINFO_MAX) {
            t->whole = false;
            break;
        }
        char mp[PATH_MAX + 1];
        /* id parent major:minor root mountpoint ... */
        if (sscanf(line, "%*u %*u %*s %*s %4096s", mp) != 1)
            continue;
        unescape(mp);
        sg_grow(&t->mp, &t->cap, t->n + 1, sizeof *t->mp);
        t->mp[t->n++] = sg_xstrdup(mp);
    }
    free(line);
    fclose(f);
}

/* A bind takes what is mounted below its folder with it (MS_REC): a second
 * mount of /home, or of the root filesystem, inside a declared folder shows
 * the homes though the folder itself holds none. Which home does a mount
 * below real show (its root is the home or a folder above it)? Each mount
 * point is stat'ed without triggering an automount. A table that cannot be
 * read whole counts as showing one: never decided on part of it. While the
 * homes are held the table is read once. */
static const struct sg_home *below_mounts(const struct sg_homes *hs, const char *real)
{
    struct mount_table own;
    struct mount_table *t = held_depth ? &held_mounts : &own;
    if (!held_depth || !t->read)
        mount_table_read(t);
    const struct sg_home *hit = NULL;
    for (size_t k = 0; k < t->n && !hit; k++) {
        const char *mp = t->mp[k];
        if (!strcmp(mp, real) || !sg_path_within(mp, real))
            continue;
        struct stat st;
        if (fstatat(AT_FDCWD, mp, &st, AT_NO_AUTOMOUNT) < 0 || !S_ISDIR(st.st_mode))
            continue;
        for (size_t i = 0; i < hs->n && !hit; i++)
            if (by_object(&st, &hs->v[i]) != SG_HOME_NONE)
                hit = &hs->v[i];
    }
    if (!hit && t->readable && !t->whole)
        hit = hs->n ? &hs->v[0] : NULL;
    if (!held_depth)
        mount_table_free(&own);
    return hit;
}

enum sg_home_rel sg_homes_relation(const struct sg_homes *hs, const char *path,
                                   const struct sg_home **which)
{
    if (which)
        *which = NULL;
    if (!path || path[0] != '/')
        return SG_HOME_NONE;
    struct stat st;
    bool have = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    cleanup_free char *real = sg_path_real(path);
    enum sg_home_rel best = SG_HOME_NONE;
    const struct sg_home *hit = NULL;
    for (size_t i = 0; i < hs->n; i++) {
        const struct sg_home *h = &hs->v[i];
        enum sg_home_rel r = by_name(path, h->path);
        if (r == SG_HOME_NONE)
            r = by_name(real, h->real);
        if (r == SG_HOME_NONE && have)
            r = by_object(&st, h);
        if (r == SG_HOME_NONE)
            continue;
        /* the invoking user's home first: it is what the person knows */
        if (!hit || (h->yours && !hit->yours))
            best = r, hit = h;
    }
    if (!hit && have && real && (hit = below_mounts(hs, real)) != NULL)
        best = SG_HOME_HOLDS;
    if (which)
        *which = hit;
    return best;
}

const char *sg_homes_describe(enum sg_home_rel rel, const struct sg_home *h, char *buf,
                              size_t size)
{
    if (rel == SG_HOME_NONE || !h) {
        snprintf(buf, size, "no home");
        return buf;
    }
    snprintf(buf, size, "%s%s %s", rel == SG_HOME_HOLDS ? "a folder that holds " : "",
             h->yours ? "your home" : "another account's home", h->path);
    return buf;
}
