/* A skill's own home, kept between its runs (keephome.h). */
#include "keephome.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "digest.h"
#include "sandbox.h"
#include "util.h"
#include "views.h"
#include "writes.h"

#define DIGEST_FILE "digest"
#define HOME_DIR "home"

char *sg_keephome_dir(const char *name, const char *root)
{
    cleanup_free char *real = realpath(root, NULL);
    if (!real)
        return NULL;
    char sha[SG_DIGEST_STRLEN];
    sg_sha256_text(real, strlen(real), sha);
    char label[65];
    size_t n = 0;
    for (; name && name[n] && n < sizeof label - 1; n++) /* a label: the hash decides */
        label[n] = (name[n] >= 'a' && name[n] <= 'z') || (name[n] >= '0' && name[n] <= '9') ||
                           name[n] == '-'
                       ? name[n]
                       : '_';
    label[n] = '\0';
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/homes/%s-%.16s", state, label, sha + 7);
}

/* Remove name under dirfd and everything beneath it, never following a
 * link. */
static void remove_tree(int at, const char *name, int depth)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        unlinkat(at, name, 0);
        return;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            depth < SG_VIEWS_MAX_DEPTH + 8)
            remove_tree(dirfd(d), e->d_name, depth + 1);
        else
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    unlinkat(at, name, AT_REMOVEDIR);
}

static void read_digest(int dfd, char *out, size_t max)
{
    out[0] = '\0';
    int fd = openat(dfd, DIGEST_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    ssize_t n = fd >= 0 ? read(fd, out, max - 1) : -1;
    out[n > 0 ? n : 0] = '\0';
    if (fd >= 0)
        close(fd);
}

/* dir (or its name beneath it) as a folder to read and write, opened as
 * the records are (config.h: as root, never through a link of another
 * user's tree), made when missing; create false: -ENOENT then. */
static int open_at(const char *dir, const char *name, bool create)
{
    struct stat st;
    if (!create && lstat(dir, &st) < 0)
        return -errno;
    int pfd = sg_open_records_dir(dir);
    if (pfd < 0)
        return pfd;
    int fd = openat(pfd, name ? name : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = fd < 0 ? -errno : 0;
    close(pfd);
    return fd < 0 ? e : fd;
}

/* Whose the kept homes are: the state folder's owner (the person under
 * sudo), whom what root makes there is given to. */
static void store_owner(int dfd, uid_t *uid, gid_t *gid)
{
    struct stat st;
    *uid = (uid_t)-1, *gid = (gid_t)-1;
    if (geteuid() == 0 && fstat(dfd, &st) == 0 && st.st_uid != 0)
        *uid = st.st_uid, *gid = st.st_gid;
}

int sg_keephome_prepare(const char *dir, const char *digest, bool fresh)
{
    int dfd = open_at(dir, NULL, true);
    if (dfd < 0)
        return dfd;
    uid_t uid;
    gid_t gid;
    store_owner(dfd, &uid, &gid);
    char had[SG_DIGEST_STRLEN + 1];
    read_digest(dfd, had, sizeof had);
    int r = 0;
    if (fresh || !digest[0] || strcmp(had, digest)) {
        remove_tree(dfd, HOME_DIR, 0); /* another skill's content, or a clean start */
        unlinkat(dfd, DIGEST_FILE, 0);
        int fd = openat(dfd, DIGEST_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (fd < 0 || write(fd, digest, strlen(digest)) != (ssize_t)strlen(digest))
            r = -EIO;
        if (fd >= 0 && uid != (uid_t)-1)
            fchown(fd, uid, gid);
        if (fd >= 0)
            close(fd);
    }
    if (mkdirat(dfd, HOME_DIR, 0700) == 0) {
        if (uid != (uid_t)-1)
            fchownat(dfd, HOME_DIR, uid, gid, AT_SYMLINK_NOFOLLOW);
    } else if (errno != EEXIST && !r) {
        r = -errno;
    }
    close(dfd);
    return r;
}

/* One copy between two folders' fds. */
struct copy {
    const struct sg_plan *p; /* save: only plain files of the home are kept */
    dev_t from_dev, to_dev;
    uid_t uid;               /* owner of what is made, or -1 */
    gid_t gid;
    uid_t from_uid;          /* restore: every entry copied is the store's owner's, one link */
    bool check_from;
    char rel[PATH_MAX];
    struct sg_keephome_count *c;
};

/* Is the home's rel a folder above a mount point of the plan? After the
 * run the mounts are gone and their points are left in the home
 * (sg_plan_mount_at): the way to one is the sandbox's, not the skill's. */
static bool above_mount(const struct copy *k)
{
    cleanup_free char *abs = sg_xasprintf("%s/%s", k->p->home, k->rel);
    for (size_t i = 0; i < k->p->nmounts; i++) {
        const char *dst = k->p->mounts[i].dst;
        if (sg_path_within(dst, abs) && strcmp(dst, abs))
            return true;
    }
    return false;
}

static bool kept(const struct copy *k)
{
    if (!k->p)
        return true;
    cleanup_free char *abs = sg_xasprintf("%s/%s", k->p->home, k->rel);
    return !strcmp(sg_fs_class(k->p->home, abs), "file") && !sg_plan_mount_at(k->p, abs);
}

static void own(const struct copy *k, int fd, const char *name)
{
    if (k->uid != (uid_t)-1)
        fchownat(fd, name, k->uid, k->gid, AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH));
}

static int copy_bytes(int in, int out, unsigned long long *bytes)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : 0;
        for (ssize_t o = 0; o < n;) {
            ssize_t w = write(out, buf + o, (size_t)(n - o));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return w < 0 ? -errno : -EIO;
            o += w;
        }
        *bytes += (unsigned long long)n;
    }
}

static void copy_file(struct copy *k, int from, int to, const char *name, const struct stat *st)
{
    int in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int out = to < 0 ? -1
                     : openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat ist;
    int e = in < 0 || fstat(in, &ist) < 0 || ist.st_ino != st->st_ino ? -EAGAIN : 0;
    if (!e && to >= 0 && out < 0)
        e = errno == EEXIST ? -EEXIST : -errno; /* a decoy, a mount point: theirs */
    unsigned long long bytes = 0;
    if (!e && out >= 0 && (e = copy_bytes(in, out, &bytes)) < 0)
        unlinkat(to, name, 0);
    if (!e && out >= 0) {
        fchmod(out, st->st_mode & 0777);
        own(k, out, "");
    }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (e == -ENOSPC || e == -EDQUOT)
        k->c->err = -e;
    if (e)
        k->c->left_out++;
    else
        k->c->files++, k->c->bytes += to < 0 ? (unsigned long long)st->st_size : bytes;
}

static void copy_link(struct copy *k, int from, int to, const char *name)
{
    char target[PATH_MAX];
    ssize_t n = readlinkat(from, name, target, sizeof target - 1);
    if (n <= 0 || (to >= 0 && (target[n] = '\0', symlinkat(target, to, name) < 0))) {
        k->c->left_out++;
        return;
    }
    if (to >= 0)
        own(k, to, name);
    k->c->links++;
}

static void copy_dir(struct copy *k, int from, int to, int depth);

static void copy_sub(struct copy *k, int from, int to, const char *name, const struct stat *st,
                     int depth)
{
    if (depth + 1 >= SG_VIEWS_MAX_DEPTH) {
        k->c->left_out++;
        return;
    }
    if (to >= 0 && mkdirat(to, name, 0700) < 0 && errno != EEXIST) {
        k->c->left_out++;
        return;
    }
    int sfd = openat(from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dfd = to < 0 ? -1 : openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat dst;
    bool ok = sfd >= 0 && (to < 0 || (dfd >= 0 && fstat(dfd, &dst) == 0 &&
                                      dst.st_dev == k->to_dev));
    if (ok) {
        size_t before = k->c->files + k->c->dirs + k->c->links;
        k->c->dirs++;
        copy_dir(k, sfd, dfd, depth + 1);
        if (dfd >= 0) {
            fchmod(dfd, (st->st_mode & 0777) | 0700);
            own(k, dfd, "");
        }
        if (k->p && before + 1 == k->c->files + k->c->dirs + k->c->links &&
            above_mount(k) && unlinkat(to, name, AT_REMOVEDIR) == 0)
            k->c->dirs--; /* only the way to a mount point */
    } else {
        k->c->left_out++; /* a mount on top of the home: not the home's */
    }
    if (sfd >= 0)
        close(sfd);
    if (dfd >= 0)
        close(dfd);
}

/* Every entry of from into to (to < 0: counted only), on from's own
 * filesystem, regular files, folders and links. */
static void copy_dir(struct copy *k, int from, int to, int depth)
{
    int fd = openat(from, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t len = strlen(k->rel);
    struct dirent *e;
    while (!k->c->err && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        int n = snprintf(k->rel + len, sizeof k->rel - len, "%s%s", len ? "/" : "", e->d_name);
        bool ours = n >= 0 && (size_t)n < sizeof k->rel - len &&
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    st.st_dev == k->from_dev && /* else a mount on top: not the home's */
                    (!k->check_from || (st.st_uid == k->from_uid &&
                                        (S_ISDIR(st.st_mode) || st.st_nlink == 1)));
        if (!ours || !kept(k) || k->c->files + k->c->dirs + k->c->links >= SG_VIEWS_MAX_ENTRIES) {
            k->c->left_out += ours && kept(k); /* past the cap */
            k->rel[len] = '\0';
            continue;
        }
        if (S_ISDIR(st.st_mode))
            copy_sub(k, dirfd(d), to, e->d_name, &st, depth);
        else if (S_ISREG(st.st_mode))
            copy_file(k, dirfd(d), to, e->d_name, &st);
        else if (S_ISLNK(st.st_mode))
            copy_link(k, dirfd(d), to, e->d_name);
        else
            k->c->left_out++;
        k->rel[len] = '\0';
    }
    closedir(d);
}

static void copy_tree(struct copy *k, int from, int to)
{
    struct stat fst, tst;
    if (fstat(from, &fst) < 0 || (to >= 0 && fstat(to, &tst) < 0))
        return;
    k->from_dev = fst.st_dev;
    k->to_dev = to >= 0 ? tst.st_dev : 0;
    copy_dir(k, from, to, 0);
}

void sg_keephome_restore(const struct sg_plan *p, int view_fd, struct sg_keephome_count *c)
{
    memset(c, 0, sizeof *c);
    int from = p->keep_home && view_fd >= 0 ? open_at(p->keep_home, HOME_DIR, false) : -1;
    struct stat st;
    if (from < 0 || fstat(from, &st) < 0) {
        if (from >= 0)
            close(from);
        return;
    }
    /* only what a run kept there (never another file linked in), owned by
     * the skill's user inside */
    struct copy k = {.uid = geteuid() == 0 ? p->skill_uid : (uid_t)-1,
                     .gid = geteuid() == 0 ? p->skill_gid : (gid_t)-1,
                     .from_uid = st.st_uid, .check_from = true, .c = c};
    copy_tree(&k, from, view_fd);
    close(from);
}

void sg_keephome_save(const struct sg_plan *p, int view_fd, struct sg_keephome_count *c)
{
    memset(c, 0, sizeof *c);
    int dir = p->keep_home && view_fd >= 0 ? open_at(p->keep_home, NULL, false) : -1;
    if (dir < 0)
        return;
    char name[96];
    snprintf(name, sizeof name, "new-%s", p->run_id);
    struct copy k = {.p = p, .c = c};
    store_owner(dir, &k.uid, &k.gid);
    int to = mkdirat(dir, name, 0700) == 0
                 ? openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                 : -1;
    if (to >= 0) {
        own(&k, to, "");
        copy_tree(&k, view_fd, to);
        close(to);
        /* in one step: a run reading it meanwhile sees the old or the new */
        if (renameat2(dir, name, dir, HOME_DIR, RENAME_EXCHANGE) < 0 && errno == ENOENT)
            renameat(dir, name, dir, HOME_DIR);
    }
    remove_tree(dir, name, 0); /* the old one, after the exchange */
    close(dir);
}

int sg_keephome_info(const char *dir, struct sg_keephome_count *c, char **digest)
{
    memset(c, 0, sizeof *c);
    *digest = NULL;
    int dfd = open_at(dir, NULL, false), from = dfd < 0 ? -1 : open_at(dir, HOME_DIR, false);
    if (from < 0) {
        if (dfd >= 0)
            close(dfd);
        return -ENOENT;
    }
    char had[SG_DIGEST_STRLEN + 1];
    read_digest(dfd, had, sizeof had);
    *digest = sg_xstrdup(had);
    struct copy k = {.uid = (uid_t)-1, .gid = (gid_t)-1, .c = c};
    copy_tree(&k, from, -1);
    close(from);
    close(dfd);
    return 0;
}
