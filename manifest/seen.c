#include "seen.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "digest.h"
#include "util.h"

#define DIFF_MAX (64 * 1024)

const char *const sg_seen_files[SG_SEEN_NFILES] = {"SKILL.md", "skillsandbox.yaml"};
/* The content digest as of the last look, beside the manifests. */
static const char DIGEST_FILE[] = "digest";

/* The store's folder for sk: <state>/seen/<hex of sha256(real root)>. */
static char *store_dir(const struct sg_skill *sk)
{
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text(sk->root, strlen(sk->root), d);
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/seen/%s", state, d + strlen("sha256:"));
}

/* At most SG_SEEN_MAX bytes of name beneath dfd (no symlink followed, a
 * regular file only). 0 with *buf NULL when there is none. */
static int read_capped(int dfd, const char *name, char **buf, size_t *len)
{
    *buf = NULL, *len = 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    char *b = sg_xmalloc(SG_SEEN_MAX + 1);
    size_t n = 0;
    while (n < SG_SEEN_MAX) {
        ssize_t k = read(fd, b + n, SG_SEEN_MAX - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    b[n] = '\0';
    *buf = b, *len = n;
    return 0;
}

static int open_dir(const char *path)
{
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int sg_seen_compare(const struct sg_skill *sk, struct sg_seen *out)
{
    memset(out, 0, sizeof *out);
    out->state = SG_SEEN_NEW;
    cleanup_free char *dir = store_dir(sk);
    cleanup_fd int sd = open_dir(dir);
    if (sd < 0)
        return sd == -ENOENT ? 0 : sd;
    cleanup_fd int kd = open_dir(sk->root);
    if (kd < 0)
        return kd;
    char *when = NULL;
    size_t wl = 0;
    if (read_capped(sd, "when", &when, &wl) < 0 || !when)
        return 0; /* half a store: as new */
    snprintf(out->when, sizeof out->when, "%.*s", (int)strcspn(when, "\n"), when);
    free(when);
    out->state = SG_SEEN_SAME;
    for (size_t i = 0; i < SG_SEEN_NFILES; i++) {
        char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        int r = read_capped(sd, sg_seen_files[i], &a, &al);
        int q = read_capped(kd, sg_seen_files[i], &b, &bl);
        out->changed[i] = r < 0 || q < 0 || !a != !b || al != bl || (a && memcmp(a, b, al));
        if (out->changed[i])
            out->state = SG_SEEN_CHANGED;
        free(a);
        free(b);
    }
    return 0;
}

/* A well-formed digest: "sha256:" and 64 lowercase hex digits. */
static bool digest_ok(const char *d, size_t len)
{
    static const char pre[] = "sha256:";
    if (len != SG_DIGEST_STRLEN - 1 || strncmp(d, pre, strlen(pre)))
        return false;
    for (size_t i = strlen(pre); i < len; i++)
        if (!d[i] || !strchr("0123456789abcdef", d[i]))
            return false;
    return true;
}

int sg_seen_compare_code(const struct sg_skill *sk, struct sg_seen *out)
{
    int r = sg_seen_compare(sk, out);
    if (r < 0 || out->state == SG_SEEN_NEW)
        return r;
    cleanup_free char *dir = store_dir(sk);
    cleanup_fd int sd = open_dir(dir);
    if (sd < 0)
        return 0; /* gone since: not the same code */
    cleanup_free char *was = NULL;
    size_t wl = 0;
    if (read_capped(sd, DIGEST_FILE, &was, &wl) < 0 || !was)
        return 0; /* none remembered (a store from before): not the same */
    wl = strcspn(was, "\n");
    char now[SG_DIGEST_STRLEN];
    if (!digest_ok(was, wl) || sg_skill_digest(sk->root, now, NULL) < 0)
        return 0;
    out->code_same = strlen(now) == wl && !memcmp(now, was, wl);
    return 0;
}

static int write_at(int dfd, const char *name, const char *text, size_t len)
{
    cleanup_free char *tmp = sg_xasprintf("%s.tmp", name);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    int r = 0;
    while (off < len && r == 0) {
        ssize_t k = write(fd, text + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            r = -errno;
        else
            off += (size_t)k;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
        r = -errno;
    if (r < 0)
        unlinkat(dfd, tmp, 0);
    return r;
}

int sg_seen_mark_digest(const struct sg_skill *sk, const char *digest)
{
    /* the digest before the manifests: a change between the two is then
     * never remembered as the same code */
    char taken[SG_DIGEST_STRLEN];
    int dr = 0;
    if (!digest) {
        dr = sg_skill_digest(sk->root, taken, NULL);
        digest = dr < 0 ? "" : taken;
    }
    if (digest[0] && !digest_ok(digest, strlen(digest)))
        return -EINVAL;
    cleanup_free char *dir = store_dir(sk);
    cleanup_fd int sd = sg_open_records_dir(dir);
    if (sd < 0)
        return sd;
    cleanup_fd int kd = open_dir(sk->root);
    if (kd < 0)
        return kd;
    int r = 0;
    if (digest[0]) {
        cleanup_free char *line = sg_xasprintf("%s\n", digest);
        r = write_at(sd, DIGEST_FILE, line, strlen(line));
    } else if (unlinkat(sd, DIGEST_FILE, 0) < 0 && errno != ENOENT) {
        r = -errno;
    }
    for (size_t i = 0; i < SG_SEEN_NFILES && r == 0; i++) {
        char *b = NULL;
        size_t bl = 0;
        r = read_capped(kd, sg_seen_files[i], &b, &bl);
        if (r == 0 && b)
            r = write_at(sd, sg_seen_files[i], b, bl);
        else if (r == 0 && unlinkat(sd, sg_seen_files[i], 0) < 0 && errno != ENOENT)
            r = -errno;
        free(b);
    }
    if (r < 0)
        return r;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ\n", gmtime_r(&now, &tm));
    r = write_at(sd, "when", when, strlen(when));
    return r < 0 ? r : dr;
}

int sg_seen_mark(const struct sg_skill *sk)
{
    return sg_seen_mark_digest(sk, NULL);
}

/* A descriptor of name beneath dfd for diff to read, or of /dev/null. */
static int for_diff(int dfd, const char *name)
{
    int fd = dfd < 0 ? -1 : openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SG_SEEN_MAX)) {
        close(fd);
        return -EFBIG;
    }
    if (fd < 0)
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* above 4, so that moving them to 3 and 4 in diff never crosses */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return high < 0 ? -errno : high;
}

int sg_seen_diff(const struct sg_skill *sk, size_t i, char **out)
{
    *out = NULL;
    if (i >= SG_SEEN_NFILES)
        return -EINVAL;
    struct sg_seen s;
    sg_seen_compare(sk, &s);
    cleanup_free char *dir = store_dir(sk);
    int sd = open_dir(dir), kd = open_dir(sk->root);
    int a = for_diff(sd, sg_seen_files[i]), b = for_diff(kd, sg_seen_files[i]);
    if (sd >= 0)
        close(sd);
    if (kd >= 0)
        close(kd);
    int pfd[2] = {-1, -1}, r = 0;
    if (a < 0 || b < 0)
        r = a < 0 ? a : b;
    else if (pipe2(pfd, O_CLOEXEC) < 0)
        r = -errno;
    pid_t pid = -1;
    if (r == 0) {
        /* diff reads the two files through descriptors we opened: it never
         * follows a name the skill could swap */
        cleanup_free char *la = sg_xasprintf("%s as last seen%s%s", sg_seen_files[i],
                                             s.when[0] ? " " : " (never)", s.when);
        cleanup_free char *lb = sg_xasprintf("%s now", sg_seen_files[i]);
        char *argv[] = {"diff", "-u", "--label", la, "--label", lb, "/dev/fd/3", "/dev/fd/4", NULL};
        char *envp[] = {"LC_ALL=C", NULL};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        /* stdout first: the pipe may be 3 or 4 itself */
        posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
        posix_spawn_file_actions_adddup2(&fa, a, 3);
        posix_spawn_file_actions_adddup2(&fa, b, 4);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

        r = -posix_spawn(&pid, "/usr/bin/diff", &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        close(pfd[1]);
    }
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    if (r < 0) {
        if (pfd[0] >= 0)
            close(pfd[0]);
        return r;
    }
    char *buf = sg_xmalloc(DIFF_MAX + 1);
    size_t n = 0;
    while (n < DIFF_MAX) {
        ssize_t k = read(pfd[0], buf + n, DIFF_MAX - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(pfd[0]); /* a longer diff ends with SIGPIPE */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    buf[n] = '\0';
    *out = buf;
    /* diff: 0 same, 1 different, 2 trouble */
    return WIFEXITED(st) && WEXITSTATUS(st) <= 1 ? 0 : n ? 0 : -EIO;
}
