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
        read_homes(&held);
        held_gen++;
    }
}

void sg_homes_release(void)
{
    if (held_depth && --held_depth == 0)
        sg_homes_free(&held);
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

/* Is the object at st the home h, or a folder on its way up? Each folder
 * of h's real path, from h to "/", by device and inode. */
static enum sg_home_rel by_object(const struct stat *st, const struct sg_home *h)
{
    char cur[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", h->real) >= (int)sizeof cur)
        return SG_HOME_NONE;
    for (size_t depth = 0; depth < PATH_MAX / 2; depth++) {
        struct stat up;
        if (stat(cur, &up) == 0 && up.st_dev == st->st_dev && up.st_ino == st->st_ino)
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

/* A bind takes what is mounted below its folder with it (MS_REC): a second
 * mount of /home, or of the root filesystem, inside a declared folder shows
 * the homes though the folder itself holds none. Which home does a mount
 * below real show (its root is the home or a folder above it)? Each mount
 * point is stat'ed without triggering an automount. A table that cannot be
 * read whole counts as showing one: never decided on part of it. */
static const struct sg_home *below_mounts(const struct sg_homes *hs, const char *real)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return NULL;
    char *line = NULL;
    size_t cap = 0, total = 0;
    const struct sg_home *hit = NULL;
    ssize_t n;
    while (!hit && (n = getline(&line, &cap, f)) > 0) {
        total += (size_t)n;
        if (total > MOUNTINFO_MAX) {
            hit = hs->n ? &hs->v[0] : NULL;
            break;
        }
        char mp[PATH_MAX + 1];
        /* id parent major:minor root mountpoint ... */
        if (sscanf(line, "%*u %*u %*s %*s %4096s", mp) != 1)
            continue;
        unescape(mp);
        if (!strcmp(mp, real) || !sg_path_within(mp, real))
            continue;
        struct stat st;
        if (fstatat(AT_FDCWD, mp, &st, AT_NO_AUTOMOUNT) < 0 || !S_ISDIR(st.st_mode))
            continue;
        for (size_t i = 0; i < hs->n && !hit; i++)
            if (by_object(&st, &hs->v[i]) != SG_HOME_NONE)
                hit = &hs->v[i];
    }
    free(line);
    fclose(f);
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
