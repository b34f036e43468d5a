#include "digest.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
/* OpenSSL's SHA256_* calls, not EVP: EVP's first use in a process reads
 * openssl.cnf and loads the default provider, 1.2-1.9 ms measured on every
 * launch, while SHA256_* runs the same SHA-NI code with nothing to load.
 * They are deprecated in OpenSSL 3 but shipped; this file is the only user.
 * Linked statically they pull in only the SHA-256 code (see meson.build). */
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>
#include <sys/stat.h>

#include "util.h"

struct entry {
    char *path; /* relative to root, through the links it was found through */
    /* 'f' file, 'x' executable file, 'o' other, 'u' a folder we may not
     * read (err), 'c' a folder met again
     * below a link to a folder above it, and for a symlink (its text
     * always hashed): 'L' to a file (its content hashed as the file's),
     * 'D' to a folder (walked: its entries follow under the link's path),
     * 'C' to a folder it is already in (a cycle: not walked again),
     * 'l' to nothing that can be read (err says why, or 0: not a file) */
    char type;
    bool exec; /* an 'L' link's target is executable */
    int err;
};

struct walk {
    struct entry *v;
    size_t n, cap;
    size_t visited; /* entries and folders, against SG_DIGEST_MAX_FILES */
    int err;
    struct {
        dev_t dev;
        ino_t ino;
    } up[SG_DIGEST_MAX_DEPTH + 1]; /* the folders being walked, root first */
    int depth;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static bool counted(struct walk *w)
{
    if (++w->visited > SG_DIGEST_MAX_FILES) {
        w->err = -EFBIG;
        return false;
    }
    return true;
}

static void add_entry(struct walk *w, char *rel, char type, bool exec, int err)
{
    sg_grow(&w->v, &w->cap, w->n + 1, sizeof *w->v);
    w->v[w->n++] = (struct entry){.path = rel, .type = type, .exec = exec, .err = err};
}

/* A folder already on the way down (a link back up, or a bind mount of
 * an ancestor): walking it again would never end. */
static bool on_the_way(const struct walk *w, const struct stat *st)
{
    for (int i = 0; i < w->depth; i++)
        if (w->up[i].dev == st->st_dev && w->up[i].ino == st->st_ino)
            return true;
    return false;
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix);

/* Walk the folder at fd (ours: closed here) under prefix. */
static void descend(struct walk *w, int fd, const struct stat *st, const char *prefix)
{
    if (w->depth >= SG_DIGEST_MAX_DEPTH) {
        close(fd);
        w->err = -ELOOP;
        return;
    }
    w->up[w->depth].dev = st->st_dev;
    w->up[w->depth].ino = st->st_ino;
    w->depth++;
    walk_dir(w, fd, prefix);
    w->depth--;
    close(fd);
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix)
{
    int fd = dup(dirfd);
    if (fd < 0) {
        w->err = -errno;
        return;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        w->err = -errno;
        return;
    }
    struct dirent *e;
    while (!w->err && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
            continue;
        if (!counted(w))
            break;
        struct stat st;
        if (fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue; /* gone since readdir: not there */
            w->err = -errno;
            break;
        }
        char *rel = *prefix ? sg_xasprintf("%s/%s", prefix, nm) : sg_xstrdup(nm);
        if (S_ISDIR(st.st_mode)) {
            /* .git/ too: the sandbox shows the whole folder, and code can
             * be read from there as from anywhere */
            if (on_the_way(w, &st)) { /* a folder met again through a link above */
                add_entry(w, rel, 'c', false, 0);
                continue;
            }
            int sub = openat(dirfd, nm, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (sub < 0 && (errno == EACCES || errno == EPERM)) {
                add_entry(w, rel, 'u', false, errno); /* unreadable to us: said so */
                continue;
            }
            if (sub < 0) {
                w->err = -errno;
                free(rel);
                break;
            }
            descend(w, sub, &st, rel);
            free(rel);
            continue;
        }
        if (!S_ISLNK(st.st_mode)) {
            add_entry(w, rel, S_ISREG(st.st_mode) ? ((st.st_mode & 0111) ? 'x' : 'f') : 'o',
                      false, 0);
            continue;
        }
        /* a symlink: what it resolves to now, as the skill would open it
         * (the kernel bounds chains of links: ELOOP) */
        struct stat to;
        if (fstatat(dirfd, nm, &to, 0) < 0) {
            add_entry(w, rel, 'l', false, errno);
        } else if (S_ISREG(to.st_mode)) {
            add_entry(w, rel, 'L', (to.st_mode & 0111) != 0, 0);
        } else if (!S_ISDIR(to.st_mode)) {
            add_entry(w, rel, 'l', false, 0);
        } else if (on_the_way(w, &to)) {
            add_entry(w, rel, 'C', false, 0);
        } else {
            int sub = openat(dirfd, nm, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (sub < 0) {
                add_entry(w, rel, 'l', false, errno);
                continue;
            }
            struct stat got;
            if (fstat(sub, &got) < 0 || got.st_dev != to.st_dev || got.st_ino != to.st_ino) {
                close(sub);
                w->err = -EAGAIN; /* replaced while we walked */
                free(rel);
                break;
            }
            add_entry(w, sg_xstrdup(rel), 'D', false, 0);
            descend(w, sub, &got, rel);
            free(rel);
        }
    }
    closedir(d);
}

/* A regular file's size and content, opened by its path from the root
 * (following links when the entry is one). */
static int hash_content(struct sg_sha256 *ctx, int rootfd, const struct entry *e, char type,
                        long long *total)
{
    cleanup_fd int fd = openat(rootfd, e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                                                    (e->type == 'L' ? 0 : O_NOFOLLOW));
    struct stat st;
    char hdr[64];
    int h;
    if (fd < 0 && (errno == EACCES || errno == EPERM)) { /* unreadable to us: said so */
        h = snprintf(hdr, sizeof hdr, "u%c%d%c", 0, errno, 0);
        sg_sha256_update(ctx, hdr, (size_t)h);
        return 0;
    }
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EAGAIN; /* replaced while we walked */
    *total += st.st_size;
    if (*total > SG_DIGEST_MAX_BYTES)
        return -EFBIG;
    h = snprintf(hdr, sizeof hdr, "%c%c%lld%c", type, 0, (long long)st.st_size, 0);
    sg_sha256_update(ctx, hdr, (size_t)h);
    char buf[65536];
    long long left = st.st_size;
    while (left > 0) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EAGAIN; /* shrank while we read: the digest would lie */
        if (n > left)
            n = (ssize_t)left; /* grew: hash what fstat promised, size stays honest */
        sg_sha256_update(ctx, buf, (size_t)n);
        left -= n;
    }
    return 0;
}

static int hash_entry(struct sg_sha256 *ctx, int rootfd, const struct entry *e, long long *total)
{
    char hdr[64];
    sg_sha256_update(ctx, e->path, strlen(e->path) + 1);
    if (e->type == 'u') {
        int h = snprintf(hdr, sizeof hdr, "u%c%d%c", 0, e->err, 0);
        sg_sha256_update(ctx, hdr, (size_t)h);
        return 0;
    }
    if (e->type == 'o' || e->type == 'c') {
        sg_sha256_update(ctx, e->type == 'o' ? "o\0" "0\0" : "c\0" "0\0", 4);
        return 0;
    }
    if (e->type == 'f' || e->type == 'x')
        return hash_content(ctx, rootfd, e, e->type, total);
    /* a symlink: its text, then what it resolved to */
    char target[4096];
    ssize_t n = readlinkat(rootfd, e->path, target, sizeof target);
    if (n < 0)
        return errno == EINVAL ? -EAGAIN : -errno; /* no longer a link */
    int h = snprintf(hdr, sizeof hdr, "%c%c%zd%c", e->type, 0, n, 0);
    sg_sha256_update(ctx, hdr, (size_t)h);
    sg_sha256_update(ctx, target, (size_t)n);
    if (e->type == 'l') {
        h = snprintf(hdr, sizeof hdr, "%c%d%c", 0, e->err, 0);
        sg_sha256_update(ctx, hdr, (size_t)h);
    }
    if (e->type == 'L')
        return hash_content(ctx, rootfd, e, e->exec ? 'x' : 'f', total);
    return 0;
}

int sg_skill_digest(const char *root, char out[SG_DIGEST_STRLEN], size_t *nfiles)
{
    cleanup_fd int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return -errno;
    struct walk w = {0};
    struct stat st;
    if (fstat(rootfd, &st) < 0)
        return -errno;
    w.up[0].dev = st.st_dev;
    w.up[0].ino = st.st_ino;
    w.depth = 1;
    walk_dir(&w, rootfd, "");
    int r = w.err;
    if (!r)
        qsort(w.v, w.n, sizeof *w.v, cmp_entry);
    struct sg_sha256 *ctx = sg_sha256_new();
    sg_sha256_update(ctx, "skillgate-digest-v2", 20);
    long long total = 0;
    for (size_t i = 0; !r && i < w.n; i++)
        r = hash_entry(ctx, rootfd, &w.v[i], &total);
    char hex[SG_DIGEST_STRLEN];
    sg_sha256_finish(ctx, hex);
    for (size_t i = 0; i < w.n; i++)
        free(w.v[i].path);
    free(w.v);
    if (r)
        return r;
    memcpy(out, hex, SG_DIGEST_STRLEN);
    if (nfiles)
        *nfiles = w.n;
    return 0;
}

void sg_sha256_format(const unsigned char md[32], char out[SG_DIGEST_STRLEN])
{
    memcpy(out, "sha256:", 7);
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

void sg_sha256_text(const void *p, size_t n, char out[SG_DIGEST_STRLEN])
{
    SHA256_CTX c;
    unsigned char md[32];
    SHA256_Init(&c); /* not SHA256(), which goes through EVP */
    SHA256_Update(&c, p, n);
    SHA256_Final(md, &c);
    sg_sha256_format(md, out);
}

struct sg_sha256 {
    SHA256_CTX c;
};

struct sg_sha256 *sg_sha256_new(void)
{
    struct sg_sha256 *h = malloc(sizeof *h);
    if (!h || !SHA256_Init(&h->c))
        abort();
    return h;
}

void sg_sha256_update(struct sg_sha256 *h, const void *p, size_t n)
{
    SHA256_Update(&h->c, p, n);
}

void sg_sha256_finish(struct sg_sha256 *h, char out[SG_DIGEST_STRLEN])
{
    unsigned char md[32];
    SHA256_Final(md, &h->c);
    free(h);
    sg_sha256_format(md, out);
}
