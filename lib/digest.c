#include "digest.h"

#include <dirent.h>
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
    char *path; /* relative to root */
    char type;  /* 'f' file, 'x' executable file, 'l' symlink, 'o' other */
};

struct walk {
    struct entry *v;
    size_t n, cap;
    int err;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix, int depth)
{
    if (depth > 64) {
        w->err = -ELOOP;
        return;
    }
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
        struct stat st;
        if (fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            w->err = -errno;
            break;
        }
        cleanup_free char *rel = *prefix ? sg_xasprintf("%s/%s", prefix, nm) : sg_xstrdup(nm);
        if (S_ISDIR(st.st_mode)) {
            if (!strcmp(nm, ".git"))
                continue;
            cleanup_fd int sub = openat(dirfd, nm, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (sub < 0) {
                w->err = -errno;
                break;
            }
            walk_dir(w, sub, rel, depth + 1);
            continue;
        }
        if (w->n >= SG_DIGEST_MAX_FILES) {
            w->err = -EFBIG;
            break;
        }
        sg_grow(&w->v, &w->cap, w->n + 1, sizeof *w->v);
        w->v[w->n].path = steal_pointer(&rel);
        w->v[w->n].type = S_ISREG(st.st_mode) ? ((st.st_mode & 0111) ? 'x' : 'f')
                          : S_ISLNK(st.st_mode) ? 'l'
                                                : 'o';
        w->n++;
    }
    closedir(d);
}

static int hash_entry(struct sg_sha256 *ctx, int rootfd, const struct entry *e, long long *total)
{
    char hdr[64];
    sg_sha256_update(ctx, e->path, strlen(e->path) + 1);
    if (e->type == 'l') {
        char target[4096];
        ssize_t n = readlinkat(rootfd, e->path, target, sizeof target);
        if (n < 0)
            return -errno;
        int h = snprintf(hdr, sizeof hdr, "l%c%zd%c", 0, n, 0);
        sg_sha256_update(ctx, hdr, (size_t)h);
        sg_sha256_update(ctx, target, (size_t)n);
        return 0;
    }
    if (e->type == 'o') {
        sg_sha256_update(ctx, "o\0" "0\0", 4);
        return 0;
    }
    cleanup_fd int fd =
        openat(rootfd, e->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EAGAIN; /* replaced while we walked */
    *total += st.st_size;
    if (*total > SG_DIGEST_MAX_BYTES)
        return -EFBIG;
    int h = snprintf(hdr, sizeof hdr, "%c%c%lld%c", e->type, 0, (long long)st.st_size, 0);
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

int sg_skill_digest(const char *root, char out[SG_DIGEST_STRLEN], size_t *nfiles)
{
    cleanup_fd int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return -errno;
    struct walk w = {0};
    walk_dir(&w, rootfd, "", 0);
    int r = w.err;
    if (!r)
        qsort(w.v, w.n, sizeof *w.v, cmp_entry);
    struct sg_sha256 *ctx = sg_sha256_new();
    sg_sha256_update(ctx, "skillgate-digest-v1", 20);
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
