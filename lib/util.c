#include "util.h"

#include <sys/syscall.h>

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdint.h>

static void oom(void)
{
    static const char msg[] = "skillgate: out of memory\n";
    ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)r;
    abort();
}

void *sg_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *sg_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *sg_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *sg_xstrdup(const char *s)
{
    return sg_xstrndup(s, strlen(s));
}

char *sg_xstrndup(const char *s, size_t n)
{
    char *p = sg_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *sg_xvasprintf(const char *fmt, va_list ap)
{
    char *p = NULL;
    if (vasprintf(&p, fmt, ap) < 0)
        oom();
    return p;
}

char *sg_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = sg_xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}

void sg_grow(void *vp, size_t *cap, size_t need, size_t sz)
{
    void **v = vp;
    if (need <= *cap)
        return;
    size_t nc = *cap ? *cap : 4;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / sz)
            oom();
        nc *= 2;
    }
    *v = sg_xrealloc(*v, nc * sz);
    *cap = nc;
}

void sg_buf_init(struct sg_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

int sg_buf_append(struct sg_buf *b, const void *p, size_t n)
{
    if (n > b->max - b->len) {
        b->dropped += n;
        return -ENOBUFS;
    }
    sg_grow(&b->data, &b->cap, b->len + n + 1, 1);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int sg_buf_append_line(struct sg_buf *b, const char *line, size_t n)
{
    if (n >= b->max - b->len) {
        b->dropped += n + 1;
        return -ENOBUFS;
    }
    sg_buf_append(b, line, n);
    return sg_buf_append(b, "\n", 1);
}

int sg_buf_printf(struct sg_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *s = sg_xvasprintf(fmt, ap);
    va_end(ap);
    return sg_buf_append(b, s, strlen(s));
}

void sg_buf_free(struct sg_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *sg_buf_steal(struct sg_buf *b)
{
    char *p = b->data ? b->data : sg_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

bool sg_str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool sg_str_has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

size_t sg_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SG_EDIT_MAX || lb > SG_EDIT_MAX)
        return SIZE_MAX;
    /* three rows of the table: i-2, i-1 and i */
    size_t row[3][SG_EDIT_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        row[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *pp = row[(i + 1) % 3], *p = row[(i - 1) % 3], *r = row[i % 3];
        r[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = p[j - 1] + (a[i - 1] != b[j - 1]);
            if (p[j] + 1 < best)
                best = p[j] + 1;
            if (r[j - 1] + 1 < best)
                best = r[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;
            r[j] = best;
        }
    }
    return row[la % 3][lb];
}

void sg_nearest_init(struct sg_nearest *n, const char *word)
{
    size_t len = strlen(word);
    n->word = word;
    n->best = NULL;
    n->dist = (len / 3 > 1 ? len / 3 : 1) + 1;
}

bool sg_nearest_offer(struct sg_nearest *n, const char *cand)
{
    size_t d = sg_edit_distance(n->word, cand);
    if (d == 0 || d >= n->dist)
        return false;
    n->dist = d;
    n->best = cand;
    return true;
}

int sg_parse_ll(const char *s, long long min, long long max, long long *out)
{
    if (!s || !*s)
        return -EINVAL;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0')
        return -EINVAL;
    if (errno == ERANGE || v < min || v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

size_t sg_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0], min;
    size_t len;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2, min = 0x80, c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, min = 0x800, c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

size_t sg_utf8_chars(const char *s)
{
    size_t n = 0, len = strlen(s);
    for (size_t i = 0; i < len; n++) {
        unsigned cp;
        size_t k = sg_utf8_decode((const unsigned char *)s + i, len - i, &cp);
        i += k ? k : 1;
    }
    return n;
}

bool sg_utf8_valid(const char *s, size_t n, size_t *bad_off)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len = sg_utf8_decode(u + i, n - i, &cp);
        if (!len) {
            if (bad_off)
                *bad_off = i;
            return false;
        }
        i += len;
    }
    return true;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sg_list_dir_fd(int fd, int what, size_t max, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    size_t cap = 0;
    struct dirent *e;
    while (*n < max && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!(what & SG_LIST_HIDDEN) || !strcmp(e->d_name, ".") ||
                                    !strcmp(e->d_name, "..")))
            continue;
        if ((what & SG_LIST_DIRS) && e->d_type != DT_DIR && e->d_type != DT_LNK &&
            e->d_type != DT_UNKNOWN)
            continue;
        sg_grow(names, &cap, *n + 1, sizeof **names);
        (*names)[(*n)++] = sg_xstrdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_name);
    return 0;
}

uid_t sg_invoking_uid(void)
{
    uid_t uid = getuid();
    const char *sudo_uid = secure_getenv("SUDO_UID");
    long long v;
    if (uid == 0 && sudo_uid && sg_parse_ll(sudo_uid, 1, INT32_MAX, &v) == 0)
        uid = (uid_t)v;
    return uid;
}

const char *sg_invoking_home(void)
{
    static char *home;
    static bool done;
    if (done)
        return home;
    done = true;
    uid_t uid = sg_invoking_uid();
    bool via_sudo = uid != getuid();
    /* $HOME is the user's word about their own home: honoured when it is an
     * absolute folder they own (never under sudo, where it may be either). */
    const char *env = via_sudo ? NULL : secure_getenv("HOME");
    struct stat st;
    if (env && env[0] == '/' && stat(env, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid) {
        home = sg_xstrdup(env);
        return home;
    }
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir &&
        res->pw_dir[0] == '/')
        home = sg_xstrdup(res->pw_dir);
    return home;
}

int sg_mkdir_p(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    char *end = buf + strlen(buf);
    /* Most parents exist already: try the whole path first and walk back
     * only as far as something is missing (a sandbox's mounts made a
     * hundred mkdir calls from the root down, a tenth of its setup). */
    char *cut = end;
    for (;;) {
        if (mkdir(buf, mode) == 0) {
            if (uid != (uid_t)-1 && lchown(buf, uid, gid) < 0)
                return -errno;
            break;
        }
        if (errno == EEXIST)
            break;
        if (errno != ENOENT) {
            int e = errno;
            struct stat st;
            if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
                return -e;
            break;
        }
        char *slash = cut;
        while (slash > buf + 1 && *--slash != '/')
            ;
        if (slash <= buf || *slash != '/')
            return -ENOENT;
        *slash = '\0';
        cut = slash;
    }
    /* then forward again, one component at a time */
    while (cut < end) {
        *cut = '/';
        cut += strlen(cut);
        if (mkdir(buf, mode) == 0) {
            if (uid != (uid_t)-1 && lchown(buf, uid, gid) < 0)
                return -errno;
        } else if (errno != EEXIST) {
            return -errno;
        }
    }
    return 0;
}

int sg_read_file_follow_capped(const char *path, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    int r = sg_read_fd_capped(fd, max, buf, len);
    close(fd);
    return r;
}

int sg_read_fd_capped(int fd, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    if ((unsigned long long)st.st_size > max)
        return -EFBIG;
    /* one read of the size the file has (a file that grows meanwhile is
     * read on, to the cap): json_loadfd's byte-at-a-time reads took 3 s
     * for a 5 MB trace */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = sg_xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(b);
                return -EFBIG;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            b = sg_xrealloc(b, cap + 1);
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = -errno;
            free(b);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        free(b);
        return -EFBIG;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

ssize_t sg_read_proc(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 || size < 2 ? -1 : read(fd, buf, size - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

int sg_read_file_capped(const char *path, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    cleanup_fd int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    return sg_read_fd_capped(fd, max, buf, len);
}

int sg_fsync_dir(int dfd)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = fd < 0 || fsync(fd) < 0 ? -errno : 0;
    if (fd >= 0)
        close(fd);
    return e;
}

int sg_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        c += w, n -= (size_t)w;
    }
    return 0;
}

int sg_open_locked_current(int dfd, const char *name, int flags)
{
    for (int tries = 0; tries < 8; tries++) {
        int fd = openat(dfd, name, flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return -errno;
        struct stat a, b;
        if (flock(fd, LOCK_EX) < 0 || fstat(fd, &a) < 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        if (fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino && S_ISREG(a.st_mode))
            return fd;
        close(fd); /* replaced meanwhile: the new file is the one now */
    }
    return -EAGAIN;
}

int sg_write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int r = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return r;
}

int sg_write_file_atomic(const char *path, const char *text, mode_t mode)
{
    cleanup_free char *tmp = sg_xasprintf("%s.skillgate-tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    int r = sg_write_all(fd, text, strlen(text));
    if (!r && fsync(fd) < 0)
        r = -errno;
    close(fd);
    if (!r && rename(tmp, path) < 0)
        r = -errno;
    if (r)
        unlink(tmp);
    return r;
}

int sg_mkdir_parent(const char *path, mode_t mode)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return -ENAMETOOLONG;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    return sg_mkdir_p(dir, mode, (uid_t)-1, (gid_t)-1);
}

void sg_close_all_but(const int *keep, size_t n)
{
    int k[16];
    n = n < SG_ARRAY_LEN(k) ? n : SG_ARRAY_LEN(k);
    for (size_t i = 0; i < n; i++) { /* insertion sort: a handful of fds */
        int v = keep[i];
        size_t j = i;
        for (; j > 0 && k[j - 1] > v; j--)
            k[j] = k[j - 1];
        k[j] = v;
    }
    unsigned lo = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] < 0 || (unsigned)k[i] < lo)
            continue;
        if ((unsigned)k[i] > lo)
            syscall(SYS_close_range, lo, (unsigned)k[i] - 1, 0);
        lo = (unsigned)k[i] + 1;
    }
    syscall(SYS_close_range, lo, ~0U, 0);
}

int sg_path_normalize(char *path)
{
    if (path[0] != '/')
        return -EINVAL;
    /* Every component written is preceded by one '/', and the input had at
     * least one '/' before it: the write position never passes the read. */
    char *p = path;
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
            while (o > 0 && path[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            path[o++] = '/';
            memmove(path + o, p, len);
            o += len;
        }
        p = e;
    }
    if (o == 0)
        path[o++] = '/';
    path[o] = '\0';
    return 0;
}

bool sg_path_roots_alone(const char *path)
{
    struct stat st, dt;
    const char *sl = strrchr(path, '/');
    if (!sl || lstat(path, &st) < 0 || st.st_uid != 0 ||
        (!S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH))))
        return false;
    char *dir = sl == path ? sg_xstrdup("/") : sg_xstrndup(path, (size_t)(sl - path));
    bool ok = stat(dir, &dt) == 0 && dt.st_uid == 0 && !(dt.st_mode & (S_IWGRP | S_IWOTH));
    free(dir);
    return ok;
}

char *sg_run_path_find(const char *name)
{
    static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < SG_ARRAY_LEN(dirs); i++) {
        char *c = sg_xasprintf("%s/%s", dirs[i], name);
        struct stat st;
        if (stat(c, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
            return c;
        free(c);
    }
    return NULL;
}

char **sg_strv_dup(char *const *v)
{
    if (!v)
        return NULL;
    size_t n = 0;
    while (v[n])
        n++;
    char **out = sg_xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = sg_xstrdup(v[i]);
    return out;
}

void sg_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

bool sg_python_module_ok(const char *m)
{
    bool start = true;
    if (!*m || strlen(m) > 256)
        return false;
    for (const char *c = m; *c; c++) {
        if (*c == '.') {
            if (start)
                return false;
            start = true;
        } else if (isalpha((unsigned char)*c) || *c == '_' || (!start && isdigit((unsigned char)*c))) {
            start = false;
        } else {
            return false;
        }
    }
    return !start;
}

static bool path_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-' || c == '/';
}

char *sg_home_short(const char *s, const char *home)
{
    size_t hl = home ? strlen(home) : 0;
    while (hl > 1 && home[hl - 1] == '/')
        hl--;
    struct sg_buf b;
    sg_buf_init(&b, strlen(s) + 1);
    for (const char *p = s; *p;) {
        bool at_home = hl > 1 && home[0] == '/' && !strncmp(p, home, hl) &&
                       (p == s || !path_byte(p[-1])) && (p[hl] == '/' || !path_byte(p[hl]));
        if (at_home) {
            sg_buf_append(&b, "~", 1);
            p += hl;
        } else {
            sg_buf_append(&b, p++, 1);
        }
    }
    return sg_buf_steal(&b);
}
