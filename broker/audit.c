#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "trace.h"
#include "util.h"

#define GENESIS "sha256:0000000000000000000000000000000000000000000000000000000000000000"

char *sg_audit_path(void)
{
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/audit.jsonl", state);
}

char *sg_audit_hash(json_t *rec)
{
    json_t *copy = json_deep_copy(rec);
    json_object_del(copy, "hash");
    char *s = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    json_decref(copy);
    char *out = sg_xmalloc(SG_DIGEST_STRLEN);
    sg_sha256_text(s, strlen(s), out);
    free(s);
    return out;
}

/* The last complete line of the file (NULL when none), and whether a torn
 * partial line follows it. */
static char *last_line(int fd, bool *torn)
{
    struct stat st;
    *torn = false;
    if (fstat(fd, &st) < 0 || st.st_size == 0)
        return NULL;
    off_t end = st.st_size;
    size_t cap = end < SG_AUDIT_LINE_MAX * 2 ? (size_t)end : SG_AUDIT_LINE_MAX * 2;
    /* read the tail, 8 KiB first and more only when the last line is
     * longer: the log grows with every run, this read does not */
    size_t want = cap < 8192 ? cap : 8192;
    char *buf = NULL;
    for (;;) {
        free(buf);
        buf = sg_xmalloc(want + 1);
        if (pread(fd, buf, want, end - (off_t)want) != (ssize_t)want) {
            free(buf);
            return NULL;
        }
        size_t k = want;
        while (k > 0 && buf[k - 1] != '\n') /* a torn tail */
            k--;
        if (k > 0)
            k--; /* the newline that ends the last whole line */
        if (want == cap || memchr(buf, '\n', k))
            break; /* the whole last line is in buf, or there is no more file */
        want = want * 4 < cap ? want * 4 : cap;
    }
    buf[want] = '\0';
    size_t n = want;
    if (buf[n - 1] != '\n') {
        *torn = true;
        while (n > 0 && buf[n - 1] != '\n')
            n--;
    }
    if (n == 0) {
        free(buf);
        return NULL;
    }
    buf[n - 1] = '\0';
    char *start = strrchr(buf, '\n');
    char *line = sg_xstrdup(start ? start + 1 : buf);
    free(buf);
    return line;
}

int sg_audit_append(const char *path, json_t *rec)
{
    int mr = sg_mkdir_parent(path, 0700);
    if (mr < 0)
        return mr;
    cleanup_fd int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX) < 0)
        return -errno;
    bool torn;
    cleanup_free char *tip = last_line(fd, &torn);
    if (torn) {
        /* a crash left half a line: close it so the next record starts clean;
         * verify reports it, and the chain continues from the last whole one */
        if (write(fd, "\n", 1) != 1)
            return -errno;
    }
    json_t *prev_rec = tip ? json_loads(tip, 0, NULL) : NULL;
    const char *prev = prev_rec ? json_string_value(json_object_get(prev_rec, "hash")) : NULL;
    json_int_t seq = prev_rec ? json_integer_value(json_object_get(prev_rec, "seq")) + 1 : 1;
    json_object_set_new(rec, "seq", json_integer(seq));
    json_object_set_new(rec, "prev", json_string(prev ? prev : GENESIS));
    json_decref(prev_rec);
    cleanup_free char *h = sg_audit_hash(rec);
    json_object_set_new(rec, "hash", json_string(h));
    cleanup_free char *line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (!line)
        return -ENOMEM;
    size_t len = strlen(line);
    if (len + 1 > SG_AUDIT_LINE_MAX)
        return -E2BIG;
    line[len] = '\n'; /* the NUL goes; one write holds the whole line */
    ssize_t w = write(fd, line, len + 1);
    line[len] = '\0';
    if (w != (ssize_t)(len + 1))
        return w < 0 ? -errno : -EIO;
    if (fsync(fd) < 0)
        return -errno;
    return 0;
}

int sg_audit_verify(const char *path, struct sg_audit_check *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    cleanup_free char *prev = sg_xstrdup(GENESIS);
    json_int_t seq = 0;
    int r = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool complete = line[n - 1] == '\n';
        if (!complete) {
            c->torn = 1; /* a crash mid-write: not a record */
            break;
        }
        line[n - 1] = '\0';
        if (!line[0])
            continue; /* the newline that closed a torn line */
        json_t *rec = json_loads(line, 0, NULL);
        if (!rec) {
            /* half a line from a crash, closed by the next append: counted,
             * skipped; the record after it must still chain to the last good */
            c->torn++;
            continue;
        }
        const char *h = rec ? json_string_value(json_object_get(rec, "hash")) : NULL;
        const char *p = rec ? json_string_value(json_object_get(rec, "prev")) : NULL;
        cleanup_free char *calc = rec ? sg_audit_hash(rec) : NULL;
        const char *why = !h || strcmp(h, calc) ? "its hash does not match its content"
                          : !p || strcmp(p, prev) ? "it does not follow the record before it"
                          : json_integer_value(json_object_get(rec, "seq")) != seq + 1
                              ? "its sequence number is wrong"
                              : NULL;
        if (why) {
            c->bad_line = lineno;
            snprintf(c->why, sizeof c->why, "%s", why);
            json_decref(rec);
            r = -EBADMSG;
            break;
        }
        free(prev);
        prev = sg_xstrdup(h);
        seq++;
        c->records++;
        json_decref(rec);
    }
    free(line);
    fclose(f);
    return r;
}
