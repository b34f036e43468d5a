#include "audit.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "sanitize.h"
#include "trace.h"
#include "config.h"
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

/* The last complete line of the file (NULL when none), and the bytes of a
 * torn partial line after it (0: none). */
static char *last_line(int fd, size_t *torn)
{
    struct stat st;
    *torn = 0;
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
        while (n > 0 && buf[n - 1] != '\n')
            n--;
        *torn = want - n;
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

static long long rotate_bytes; /* 0: not read from the config yet */

void sg_audit_set_rotate(long long bytes)
{
    rotate_bytes = bytes > 0 ? bytes : SG_AUDIT_ROTATE_DEFAULT;
}

static long long rotate_at(void)
{
    if (!rotate_bytes) {
        long long keep;
        sg_config_records(&rotate_bytes, &keep);
    }
    return rotate_bytes;
}

/* path's folder and file name parts (dir is "." when there is none). */
static void split(const char *path, char *dir, size_t dlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, dlen, ".");
    else if (slash == path)
        snprintf(dir, dlen, "/");
    else
        snprintf(dir, dlen, "%.*s", (int)(slash - path), path);
}

/* The file a full log goes to: audit.<last seq, 12 digits>.jsonl beside it,
 * so the rotated files sort in the chain's order. */
/* The log's folder, its name, and the length of its name without ".jsonl". */
static size_t log_stem(const char *path, char *dir, size_t dlen, const char **base)
{
    split(path, dir, dlen, base);
    size_t bl = strlen(*base);
    return bl > 6 && !strcmp(*base + bl - 6, ".jsonl") ? bl - 6 : bl;
}

static char *rotated_name(const char *path, json_int_t last_seq)
{
    char dir[PATH_MAX];
    const char *base;
    size_t bl = log_stem(path, dir, sizeof dir, &base);
    return sg_xasprintf("%s/%.*s.%012lld.jsonl", dir, (int)bl, base, (long long)last_seq);
}

static int write_records(int fd, json_t *recs, const char *prev, json_int_t seq);
static int write_own_record(int fd, json_t *rec, char **prev, json_int_t *seq);
static int take_torn(int fd, size_t torn, bool whole_before, char **prev, json_int_t *seq);

/* Group commit: the lines are chained and written whole under the log's
 * lock, and the lock is let go before the fsync. A run that waited for the
 * lock writes its lines at once, and the fsyncs of runs ending together
 * overlap (the filesystem commits them as one): none waits for another's
 * flush. An fsync covers every dirty page of the file, so a writer whose
 * fsync returned has the lines of those before it on disk too. What the
 * lock still guards: the tip read, the chain, a full disk's truncate-back,
 * the taking off of a torn line and the rotation (which syncs the old file
 * first: the new file's first record chains to its last). */
int sg_audit_append_nosync(const char *path, json_t *recs, int *fd_out)
{
    *fd_out = -1;
    char dir[PATH_MAX];
    const char *base;
    split(path, dir, sizeof dir, &base);
    /* the folder walked safely: under sudo it is in the user's home (config.h) */
    cleanup_fd int dfd = sg_open_records_dir(dir);
    if (dfd < 0)
        return dfd;
    /* as the file that is there now: a writer that waited for the lock while
     * another rotated the log must not append to the old one */
    cleanup_fd int fd = sg_open_locked_current(dfd, base, O_RDWR | O_APPEND);
    if (fd < 0)
        return fd;
    size_t torn;
    cleanup_free char *tip = last_line(fd, &torn);
    json_t *prev_rec = tip ? json_loads(tip, 0, NULL) : NULL;
    cleanup_free char *prev = sg_xstrdup(
        prev_rec && json_string_value(json_object_get(prev_rec, "hash"))
            ? json_string_value(json_object_get(prev_rec, "hash"))
            : GENESIS);
    json_int_t seq = prev_rec ? json_integer_value(json_object_get(prev_rec, "seq")) + 1 : 1;
    json_decref(prev_rec);
    if (torn) {
        /* never silently: the chain says a line was lost here */
        int r = take_torn(fd, torn, tip != NULL, &prev, &seq);
        if (r < 0)
            return r;
    }
    struct stat st;
    if (prev_rec && fstat(fd, &st) == 0 && st.st_size >= rotate_at()) {
        /* full: the log goes on in a new file, whose first record names the
         * old one and chains to its last (verify follows the chain). The
         * old file synced first: lines written by writers still in their
         * fsync must not be lost while the new file's chain to them stays */
        if (fsync(fd) < 0)
            return -errno;
        cleanup_free char *old = rotated_name(path, seq - 1);
        const char *ob = strrchr(old, '/');
        ob = ob ? ob + 1 : old;
        /* The log's name is never missing, not for a moment: a writer
         * opening it then would create an empty log and chain from
         * genesis (sg_open_locked_current creates it). So the new file is
         * made under a name of its own, its first record written and
         * synced, and renamed over the log's name; the old file keeps
         * its rotated name (linked first: a crash leaves it under both,
         * and the next rotation finds the rotated name already its own). */
        struct stat os, rs;
        if (linkat(dfd, base, dfd, ob, 0) < 0 &&
            !(errno == EEXIST && fstat(fd, &os) == 0 &&
              fstatat(dfd, ob, &rs, AT_SYMLINK_NOFOLLOW) == 0 && os.st_dev == rs.st_dev &&
              os.st_ino == rs.st_ino))
            return -errno;
        cleanup_free char *nb = sg_xasprintf("%s.rotating", base);
        unlinkat(dfd, nb, 0); /* a crash's leftover: only the lock's holder makes it */
        int nfd = openat(dfd, nb, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                         0600);
        if (nfd < 0) {
            int e = -errno;
            unlinkat(dfd, ob, 0);
            return e;
        }
        int r = flock(nfd, LOCK_EX) < 0 ? -errno : 0;
        if (!r)
            r = write_own_record(nfd, json_pack("{s:s, s:s}", "type", "rotation",
                                                "previous_file", ob), &prev, &seq);
        if (!r && renameat(dfd, nb, dfd, base) < 0)
            r = -errno;
        if (r < 0) {
            close(nfd);
            unlinkat(dfd, nb, 0);
            unlinkat(dfd, ob, 0);
            return r;
        }
        /* both names on the disk before any record chains across them */
        int syncfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = syncfd < 0 || fsync(syncfd) < 0 ? -errno : 0;
        if (syncfd >= 0)
            close(syncfd);
        close(fd); /* its lock goes with it; waiters see the new file (sg_open_locked_current) */
        fd = nfd;
        if (r < 0)
            return r;
    }
    int r = write_records(fd, recs, prev, seq);
    if (r < 0)
        return r;
    flock(fd, LOCK_UN); /* written whole: the next writer may go on (group commit) */
    *fd_out = steal_fd(&fd);
    return 0;
}

int sg_audit_sync(int fd)
{
    if (fd < 0)
        return -EBADF;
    int e = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return e;
}

int sg_audit_append_all(const char *path, json_t *recs)
{
    int fd;
    int r = sg_audit_append_nosync(path, recs, &fd);
    return r < 0 ? r : sg_audit_sync(fd);
}

int sg_audit_append(const char *path, json_t *rec)
{
    json_t *one = json_pack("[O]", rec);
    int r = one ? sg_audit_append_all(path, one) : -ENOMEM;
    json_decref(one);
    return r;
}

/* The log ends in torn bytes without a newline: a writer that crashed
 * mid-write (a full disk's short write is taken back by the writer
 * itself). They were never a record and no fsync ever vouched for them.
 * They are taken off, and a torn_line record in their place keeps their
 * length, their SHA-256 and how they began; so every complete line of the
 * log is a record of the chain (verify holds it to that), and a crash
 * leaves at most a last line without its newline. A crash between the
 * truncate and the record loses only bytes nobody was told were written. */
#define TORN_KEPT 512 /* bytes of a torn line shown in its record */

static int take_torn(int fd, size_t torn, bool whole_before, char **prev, json_int_t *seq)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    /* no writer wrote a line this long, or one longer than the tail read:
     * not a tear; left for verify to name, and nothing is appended after it */
    if (torn > SG_AUDIT_LINE_MAX || (size_t)st.st_size < torn ||
        (!whole_before && (size_t)st.st_size != torn))
        return -EBADMSG;
    off_t at = st.st_size - (off_t)torn;
    cleanup_free char *bytes = sg_xmalloc(torn);
    if (pread(fd, bytes, torn, at) != (ssize_t)torn)
        return -EIO;
    char sum[SG_DIGEST_STRLEN];
    sg_sha256_text(bytes, torn, sum);
    cleanup_free char *shown = sg_sanitize(bytes, torn < TORN_KEPT ? torn : TORN_KEPT, 0);
    if (ftruncate(fd, at) < 0)
        return -errno;
    int r = write_own_record(
        fd,
        json_pack("{s:s, s:I, s:s, s:s, s:s}", "type", "torn_line", "bytes", (json_int_t)torn,
                  "sha256", sum, "start", shown, "note",
                  "half a line (a crash mid-write) ended the log; it was taken off and this "
                  "record written in its place; the chain continues from the last whole record"),
        prev, seq);
    if (r < 0 && write(fd, bytes, torn) != (ssize_t)torn) /* put back for the next try */
        return -EIO;
    return r;
}

/* A record of the log's own (taken), chained in and synced (under the
 * lock: these are rare, and what comes after them chains to them); the
 * chain's tip moves on. */
static int write_own_record(int fd, json_t *rec, char **prev, json_int_t *seq)
{
    json_t *one = json_pack("[O]", rec);
    int r = one ? write_records(fd, one, *prev, *seq) : -ENOMEM;
    json_decref(one);
    if (r == 0 && fsync(fd) < 0)
        r = -errno;
    if (r == 0) {
        free(*prev);
        *prev = sg_xstrdup(json_string_value(json_object_get(rec, "hash")));
        (*seq)++;
    }
    json_decref(rec);
    return r;
}

/* recs (an array) chained from prev/seq and written in one write: a run's
 * refusals and its record go in together or (a crash inside the write)
 * end in a torn line the next append takes off. Not synced here. */
static int write_records(int fd, json_t *recs, const char *prev, json_int_t seq)
{
    struct sg_buf all;
    sg_buf_init(&all, SIZE_MAX);
    cleanup_free char *last = sg_xstrdup(prev);
    size_t i;
    json_t *rec;
    int e = 0;
    json_array_foreach(recs, i, rec)
    {
        json_object_set_new(rec, "seq", json_integer(seq + (json_int_t)i));
        json_object_set_new(rec, "prev", json_string(last));
        char *h = sg_audit_hash(rec);
        json_object_set_new(rec, "hash", json_string(h));
        free(last);
        last = h;
        cleanup_free char *line =
            json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
        if (!line) {
            e = -ENOMEM;
            break;
        }
        size_t len = strlen(line);
        if (len + 1 > SG_AUDIT_LINE_MAX) {
            e = -E2BIG;
            break;
        }
        if (sg_buf_append(&all, line, len) < 0 || sg_buf_append(&all, "\n", 1) < 0) {
            e = -ENOMEM;
            break;
        }
    }
    if (e || !all.len) {
        sg_buf_free(&all);
        return e;
    }
    struct stat st;
    off_t before = fstat(fd, &st) == 0 ? st.st_size : -1;
    ssize_t w = write(fd, all.data, all.len);
    e = w < 0 ? -errno : w != (ssize_t)all.len ? -ENOSPC : 0;
    sg_buf_free(&all);
    if (e) {
        /* a full disk took part of the lines: take them back (the lock is
         * ours), so the log never ends in half a record we wrote */
        if (w > 0 && before >= 0 && ftruncate(fd, before) == 0)
            fsync(fd);
        return e;
    }
    return 0;
}

/* ---- verify ---- */

/* A trace's word on the chain: the head it names, and what the walk found
 * there. */
struct want {
    char *name;   /* the trace's file name */
    char *run_id; /* its trace_id: the head is that run's record */
    json_int_t seq;
    char *hash;
    enum { NOT_SEEN, FOUND, OTHER, NOT_ITS_RUN } state;
};

/* The walk through the chain's files, carried from one to the next. */
struct walk {
    char *prev;
    json_int_t seq;
    struct want *want; /* sorted by seq */
    size_t nwant;
    /* a complete line that is not a record: only an older writer's closed
     * torn line may be one, and then its torn_line record comes next
     * (after a rotation, when the log rotated in between) */
    size_t garbage_line;
    size_t garbage_len;
    char garbage_sum[SG_DIGEST_STRLEN];
    char garbage_file[512];
};

static int fail(struct sg_audit_check *c, const char *file, size_t line, const char *why)
{
    snprintf(c->file, sizeof c->file, "%s", file);
    c->bad_line = line;
    snprintf(c->why, sizeof c->why, "%s", why);
    return -EBADMSG;
}

/* A record that holds: the traces that name its seq learn what it is. */
static void match_heads(struct walk *w, json_t *rec, json_int_t seq, const char *hash)
{
    size_t lo = 0, hi = w->nwant;
    while (lo < hi) { /* the first with this seq */
        size_t mid = lo + (hi - lo) / 2;
        if (w->want[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* its run's own "run" record: a decision of the same run (records
     * cut off after it and the trace's head moved back) is not the head */
    const char *run = json_string_value(json_object_get(rec, "run_id"));
    const char *type = json_string_value(json_object_get(rec, "type"));
    bool its = run && type && !strcmp(type, "run");
    for (size_t i = lo; i < w->nwant && w->want[i].seq == seq; i++)
        w->want[i].state = strcmp(w->want[i].hash, hash) ? OTHER
                           : !its || strcmp(run, w->want[i].run_id) ? NOT_ITS_RUN
                                                                    : FOUND;
}

/* One file of the chain, carrying the hash and sequence number over. */
static int verify_file(FILE *f, const char *file, bool last, struct walk *w,
                       struct sg_audit_check *c)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int r = 0;
    snprintf(c->file, sizeof c->file, "%s", file);
    while (r == 0 && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n') {
            /* the only thing a crash mid-write leaves: the log's last line
             * without its newline. Not a record; the next append takes it
             * off and says so in the chain. A rotated file was closed by an
             * append that saw it whole. */
            if (!last)
                r = fail(c, file, lineno,
                         "a rotated file ends in half a line: it was changed after it was closed");
            else
                c->torn = 1;
            break;
        }
        line[--n] = '\0';
        json_t *rec = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(rec)) {
            json_decref(rec);
            if (w->garbage_line) {
                r = fail(c, w->garbage_file, w->garbage_line,
                         "this line is not a record (it does not parse), and no torn_line "
                         "record follows it: it was changed or put there");
                break;
            }
            w->garbage_line = lineno;
            w->garbage_len = (size_t)n;
            sg_sha256_text(line, (size_t)n, w->garbage_sum);
            snprintf(w->garbage_file, sizeof w->garbage_file, "%s", file);
            continue;
        }
        const char *type = json_string_value(json_object_get(rec, "type"));
        if (w->garbage_line) {
            /* an older writer closed a torn line with a newline and wrote its
             * torn_line record next: that pair, and only that, is a tear */
            const char *sum = json_string_value(json_object_get(rec, "sha256"));
            bool rotation = type && !strcmp(type, "rotation") && lineno == 1;
            bool closes = type && !strcmp(type, "torn_line") &&
                          json_integer_value(json_object_get(rec, "bytes")) ==
                              (json_int_t)w->garbage_len &&
                          (!sum || !strcmp(sum, w->garbage_sum));
            if (!rotation && !closes) {
                json_decref(rec);
                r = fail(c, w->garbage_file, w->garbage_line,
                         "this line is not a record (it does not parse), and no torn_line "
                         "record follows it: it was changed or put there");
                break;
            }
            if (closes)
                w->garbage_line = 0;
        }
        const char *h = json_string_value(json_object_get(rec, "hash"));
        const char *p = json_string_value(json_object_get(rec, "prev"));
        json_t *sj = json_object_get(rec, "seq");
        cleanup_free char *calc = sg_audit_hash(rec);
        const char *why = !h || strcmp(h, calc) ? "its hash does not match its content"
                          : !p || strcmp(p, w->prev)
                              ? (c->records && lineno == 1
                                     ? "it does not follow the last record of the file before "
                                       "it (a file of the chain is missing or was changed)"
                                     : "it does not follow the record before it")
                          : !json_is_integer(sj) || json_integer_value(sj) != w->seq + 1
                              ? "its sequence number is wrong"
                              : NULL;
        if (why) {
            json_decref(rec);
            r = fail(c, file, lineno, why);
            break;
        }
        if (type && !strcmp(type, "torn_line"))
            c->torn_taken++;
        free(w->prev);
        w->prev = sg_xstrdup(h);
        w->seq++;
        c->records++;
        match_heads(w, rec, w->seq, h);
        json_decref(rec);
    }
    free(line);
    return r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_seq(const void *a, const void *b)
{
    const struct want *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : strcmp(x->name, y->name);
}

/* The heads the traces beside the log name (traces/ in the log's folder).
 * Read before the log: a run writes its records, then its trace, so a
 * trace read first names a record already on disk. A trace that does not
 * parse was changed (traces are renamed into place whole): it counts as
 * one whose head is not found. */
static void read_heads(const char *dir, struct walk *w, struct sg_audit_check *c)
{
    cleanup_free char *tdir = sg_xasprintf("%s/traces", dir);
    int dfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        if (nm[0] == '.' || !sg_str_has_suffix(nm, ".json"))
            continue;
        int fd = openat(dfd, nm, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        json_t *doc = json_loadfd(fd, 0, NULL);
        close(fd);
        json_t *head = json_object_get(doc, "audit_head");
        const char *hash = json_string_value(json_object_get(head, "hash"));
        json_t *sj = json_object_get(head, "seq");
        const char *id = json_string_value(json_object_get(doc, "trace_id"));
        if (doc && !head) {
            c->traces_old++; /* written before traces named a head, or its record failed */
        } else {
            w->want = sg_xrealloc(w->want, (w->nwant + 1) * sizeof *w->want);
            w->want[w->nwant++] = (struct want){
                .name = sg_xstrdup(nm),
                .run_id = sg_xstrdup(id ? id : ""),
                .seq = doc && hash && json_is_integer(sj) ? json_integer_value(sj) : -1,
                .hash = sg_xstrdup(hash ? hash : ""),
            };
        }
        json_decref(doc);
    }
    closedir(d);
    if (w->nwant)
        qsort(w->want, w->nwant, sizeof *w->want, by_seq);
}

/* After the walk: every trace's head found, or the first one not named. */
static int check_heads(const char *dir, struct walk *w, struct sg_audit_check *c)
{
    const struct want *bad = NULL;
    for (size_t i = 0; i < w->nwant; i++) {
        if (w->want[i].state == FOUND) {
            c->traces++;
            continue;
        }
        c->traces_bad++;
        if (!bad)
            bad = &w->want[i];
    }
    if (!bad)
        return 0;
    snprintf(c->trace, sizeof c->trace, "%s/traces/%s", dir, bad->name);
    long long n = (long long)bad->seq;
    if (n < 0)
        snprintf(c->why, sizeof c->why,
                 "it does not parse, or names no head: it was changed after it was written");
    else if (bad->state == OTHER)
        snprintf(c->why, sizeof c->why,
                 "it names record #%lld as the chain's head after its run, but record #%lld of "
                 "the log is another record: the log was rewritten or replaced from there",
                 n, n);
    else if (bad->state == NOT_ITS_RUN)
        snprintf(c->why, sizeof c->why,
                 "record #%lld of the log is not its run's record: the trace or the log was "
                 "changed", n);
    else if (c->head_seq == 0)
        snprintf(c->why, sizeof c->why,
                 "it names record #%lld as the chain's head after its run, but the log holds "
                 "no record: it was removed or replaced", n);
    else
        snprintf(c->why, sizeof c->why,
                 "it names record #%lld as the chain's head after its run, but the log ends at "
                 "record #%lld: records were cut off its end, or the log was replaced",
                 n, c->head_seq);
    return -EBADMSG;
}

json_t *sg_audit_head_of(json_t *rec)
{
    json_t *seq = json_object_get(rec, "seq"), *hash = json_object_get(rec, "hash");
    if (!json_is_integer(seq) || !json_is_string(hash))
        return NULL;
    return json_pack("{s:O, s:O}", "seq", seq, "hash", hash);
}

int sg_audit_verify(const char *path, struct sg_audit_check *c)
{
    memset(c, 0, sizeof *c);
    /* the rotated files first, oldest first (their names carry their last
     * sequence number), then the log itself */
    char dir[PATH_MAX];
    const char *base;
    size_t bl = log_stem(path, dir, sizeof dir, &base);
    struct walk w = {.prev = sg_xstrdup(GENESIS)};
    read_heads(dir, &w, c);
    char **files = NULL;
    size_t nfiles = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *nm = e->d_name;
        size_t l = strlen(nm);
        if (l == bl + 1 + 12 + 6 && !strncmp(nm, base, bl) && nm[bl] == '.' &&
            strspn(nm + bl + 1, "0123456789") == 12 && !strcmp(nm + l - 6, ".jsonl")) {
            files = sg_xrealloc(files, (nfiles + 1) * sizeof *files);
            files[nfiles++] = sg_xasprintf("%s/%s", dir, nm);
        }
    }
    if (d)
        closedir(d);
    if (nfiles)
        qsort(files, nfiles, sizeof *files, by_name);
    files = sg_xrealloc(files, (nfiles + 1) * sizeof *files);
    files[nfiles++] = sg_xstrdup(path);
    int r = 0;
    c->files = nfiles;
    for (size_t i = 0; i < nfiles && r == 0; i++) {
        FILE *f = fopen(files[i], "re");
        if (!f) {
            r = errno == ENOENT && i + 1 == nfiles && nfiles > 1 ? 0 : -errno;
            break;
        }
        r = verify_file(f, files[i], i + 1 == nfiles, &w, c);
        fclose(f);
    }
    if (r == 0 && w.garbage_line)
        r = fail(c, w.garbage_file, w.garbage_line,
                 "this line is not a record (it does not parse), and no torn_line record "
                 "follows it: it was changed or put there");
    c->head_seq = (long long)w.seq;
    snprintf(c->head, sizeof c->head, "%s", w.prev);
    /* the traces only speak when the log itself was read through */
    if (r == 0 || (r == -ENOENT && w.nwant))
        r = check_heads(dir, &w, c);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    for (size_t i = 0; i < w.nwant; i++)
        free(w.want[i].name), free(w.want[i].run_id), free(w.want[i].hash);
    free(w.want);
    free(w.prev);
    return r;
}

/* ---- the writer: decisions leave the loop (STYLE: it never waits on disk) ----
 *
 * One thread per process, started by the first post: it takes records off
 * a bounded queue, oldest first, and appends each (lock, chain, fsync).
 * The queue holds the records themselves, so nothing is lost when a post
 * comes faster than the disk; a full queue makes the poster wait (the
 * disk is then the bottleneck whoever writes). */

#define QUEUE_MAX 1024

static struct {
    pthread_mutex_t mu;
    pthread_cond_t more, empty;
    bool started, busy;
    json_t *q[QUEUE_MAX];
    char *path[QUEUE_MAX];
    size_t head, n;
    int err; /* the first failure since the last flush */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER,
       .empty = PTHREAD_COND_INITIALIZER};

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.mu);
    for (;;) {
        while (!W.n)
            pthread_cond_wait(&W.more, &W.mu);
        json_t *rec = W.q[W.head];
        char *path = W.path[W.head];
        W.head = (W.head + 1) % QUEUE_MAX;
        W.n--;
        W.busy = true; /* taken off the queue, not yet on disk */
        pthread_mutex_unlock(&W.mu);
        int r = sg_audit_append(path, rec);
        json_decref(rec);
        free(path);
        pthread_mutex_lock(&W.mu);
        if (r < 0 && !W.err)
            W.err = r;
        W.busy = false;
        pthread_cond_broadcast(&W.empty);
    }
    return NULL;
}

void sg_audit_post(const char *path, json_t *rec)
{
    pthread_mutex_lock(&W.mu);
    if (!W.started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        W.started = pthread_create(&t, &a, writer, NULL) == 0;
        pthread_attr_destroy(&a);
        if (!W.started) { /* no thread: written here, as before */
            pthread_mutex_unlock(&W.mu);
            int r = sg_audit_append(path, rec);
            json_decref(rec);
            pthread_mutex_lock(&W.mu);
            if (r < 0 && !W.err)
                W.err = r;
            pthread_mutex_unlock(&W.mu);
            return;
        }
    }
    while (W.n == QUEUE_MAX)
        pthread_cond_wait(&W.empty, &W.mu);
    size_t at = (W.head + W.n) % QUEUE_MAX;
    W.q[at] = rec;
    W.path[at] = sg_xstrdup(path);
    W.n++;
    pthread_cond_signal(&W.more);
    pthread_mutex_unlock(&W.mu);
}

int sg_audit_flush(void)
{
    pthread_mutex_lock(&W.mu);
    while (W.n || W.busy)
        pthread_cond_wait(&W.empty, &W.mu);
    int r = W.err;
    W.err = 0;
    pthread_mutex_unlock(&W.mu);
    return r;
}

json_t *sg_audit_run_head(const char *run_id, const char *skill, const char *input,
                          json_t *permissions_granted)
{
    char in[SG_DIGEST_STRLEN];
    input = input ? input : "{}";
    sg_sha256_text(input, strlen(input), in);
    return json_pack("{s:s, s:s, s:s, s:o}", "run_id", run_id, "skill", skill, "input_sha256",
                     in, "permissions_granted", permissions_granted);
}

#define USED_MAX 64 /* per kind; past it, counted */

static void add_used(json_t *used, const char *kind, const char *what)
{
    json_t *list = json_object_get(used, kind);
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
        if (!strcmp(json_string_value(x), what))
            return;
    if (json_array_size(list) < USED_MAX) {
        json_array_append_new(list, json_string(what));
    } else {
        cleanup_free char *k = sg_xasprintf("%s_more", kind);
        json_object_set_new(used, k, json_integer(json_integer_value(json_object_get(used, k)) + 1));
    }
}

/* What the run was seen to use, from its trace: the programs it ran, the
 * hosts it reached, the files a person or a rule let it write. (Writes in
 * a declared write path are counted by the disk cap, not listed here; what
 * a skill reads is not observed.) */
static json_t *permissions_used(json_t *doc)
{
    json_t *used = json_pack("{s:[], s:[], s:[]}", "programs", "hosts", "writes");
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        json_t *data = json_object_get(ev, "data");
        if (!kind)
            continue;
        if (!strcmp(kind, "skill_started") && json_string_value(json_object_get(data, "command")))
            add_used(used, "programs", json_string_value(json_object_get(data, "command")));
        if (!strcmp(kind, "network_egress_allowed")) {
            const char *name = json_string_value(json_object_get(data, "name"));
            const char *dst = json_string_value(json_object_get(data, "dst"));
            cleanup_free char *h = sg_xasprintf("%s:%lld", name && name[0] ? name : dst ? dst : "?",
                                                (long long)json_integer_value(json_object_get(data, "port")));
            add_used(used, "hosts", h);
        }
        if (!strcmp(kind, "permission_decided") && !json_is_true(json_object_get(data, "prevented"))) {
            const char *tool = json_string_value(json_object_get(data, "tool"));
            const char *req = json_string_value(json_object_get(data, "request"));
            if (tool && req)
                add_used(used, !strcmp(tool, "Write") ? "writes"
                               : !strcmp(tool, "Fetch") ? "hosts"
                                                        : "programs",
                         req);
        }
    }
    return used;
}

/* The refusals no person saw (a write, a connection, a lookup, a call the
 * sandbox refused): each distinct one a decision record with its count,
 * taken from the trace (execs are recorded as they happen); as for the
 * engine's decisions, the first REFUSALS_MAX of each tool are records,
 * the rest one count per tool. */
#define REFUSALS_MAX 20

static const char *refusal_tool(const char *kind, json_t *data)
{
    if (!strcmp(kind, "fs_blocked"))
        return "Write";
    if (!strcmp(kind, "network_egress_blocked") || !strcmp(kind, "dns_blocked"))
        return "Fetch";
    if (!strcmp(kind, "resource_limit_hit"))
        return "limit";
    const char *sc = json_string_value(json_object_get(data, "syscall"));
    return sc && (!strcmp(sc, "execve") || !strcmp(sc, "execveat")) ? NULL : "syscall";
}

json_t *sg_audit_refusal_records(json_t *doc, json_t *head)
{
    json_t *recs = json_array(), *by_key = json_object(), *per_tool = json_object();
    json_t *over = json_object();
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "events"), i, ev)
    {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        json_t *data = json_object_get(ev, "data");
        if (!kind || (strcmp(kind, "fs_blocked") && strcmp(kind, "network_egress_blocked") &&
                      strcmp(kind, "dns_blocked") && strcmp(kind, "syscall_blocked") &&
                      strcmp(kind, "resource_limit_hit")))
            continue;
        const char *tool = refusal_tool(kind, data);
        if (!tool)
            continue; /* an exec: its decision is recorded already */
        const char *msg = json_string_value(json_object_get(ev, "message"));
        cleanup_free char *key = sg_xasprintf("%s\x1f%s", kind, msg ? msg : "");
        json_int_t times = 1 + json_integer_value(json_object_get(ev, "repeated"));
        json_t *rec = json_object_get(by_key, key);
        if (rec) {
            json_object_set_new(rec, "count",
                                json_integer(json_integer_value(json_object_get(rec, "count")) + times));
            continue;
        }
        json_int_t had = json_integer_value(json_object_get(per_tool, tool));
        if (had >= REFUSALS_MAX) {
            json_object_set_new(over, tool,
                                json_integer(json_integer_value(json_object_get(over, tool)) + times));
            continue;
        }
        json_object_set_new(per_tool, tool, json_integer(had + 1));
        const char *reason = json_string_value(json_object_get(data, "reason"));
        cleanup_free char *by = sg_xasprintf("sandbox: %s", reason && reason[0] ? reason : kind);
        cleanup_free char *req = sg_sanitize_str(msg ? msg : "", 0);
        rec = json_pack("{s:s, s:O, s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:s, s:I}", "type",
                        "decision", "time", json_object_get(ev, "timestamp"), "run_id",
                        json_object_get(head, "run_id"), "skill", json_object_get(head, "skill"),
                        "digest", json_object_get(doc, "skill_digest"), "tool", tool, "request",
                        req, "decision", "deny", "decided_by", by, "scope", "once", "count",
                        (json_int_t)times);
        if (!rec)
            continue;
        json_object_set(by_key, key, rec);
        json_array_append_new(recs, rec);
    }
    const char *tool;
    json_t *n;
    json_object_foreach(over, tool, n)
    {
        json_t *u = json_pack("{s:s, s:O, s:s, s:s, s:s, s:O}", "type", "refusals", "run_id",
                              json_object_get(head, "run_id"), "tool", tool, "decision", "deny",
                              "why", "past the first 20 of this tool in this run: counted",
                              "count", n);
        if (u)
            json_array_append_new(recs, u);
    }
    json_decref(by_key);
    json_decref(per_tool);
    json_decref(over);
    return recs;
}

/* What the record's status says: a run that failed after a request of its
 * was refused failed for that. */
static const char *record_status(json_t *doc)
{
    const char *status = json_string_value(json_object_get(doc, "status"));
    bool denied = false;
    size_t di;
    json_t *dj;
    json_array_foreach(json_object_get(doc, "decisions"), di, dj)
    {
        const char *dn = json_string_value(json_object_get(dj, "decision"));
        denied |= dn && strstr(dn, "deny");
    }
    if (!status)
        return "failed";
    if (!strcmp(status, "timeout") || !strcmp(status, "interrupted") ||
        !strcmp(status, "incomplete") || !strcmp(status, "cancelled"))
        return status;
    if (!strcmp(status, "completed") &&
        json_integer_value(json_object_get(doc, "exit_code")) == 0)
        return "success";
    return denied ? "permission_denied" : "failed";
}

json_t *sg_audit_run_record(json_t *doc, json_t *head, const char *out_sha256,
                            const char *out, size_t outn, const char *err, size_t errn,
                            const char *trace_path)
{
    unsigned keep = SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB;
    cleanup_free char *outs = sg_sanitize(out ? out : "", out ? outn : 0, keep);
    cleanup_free char *errs = sg_sanitize(err ? err : "", err ? errn : 0, keep);
    json_t *rec = json_pack(
        "{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:O, s:s, s:O, s:O, s:O, s:O, s:o, s:s, s:s, "
        "s:o}",
        "type", "run", "run_id", json_object_get(head, "run_id"), "skill",
        json_object_get(head, "skill"), "version", json_object_get(doc, "skill_version"),
        "digest", json_object_get(doc, "skill_digest"), "policy_digest",
        json_object_get(doc, "policy_digest"), "input_sha256",
        json_object_get(head, "input_sha256"), "output_sha256", out_sha256 ? out_sha256 : "",
        "exit_code", json_object_get(doc, "exit_code"), "status", record_status(doc),
        "end_reason", json_object_get(doc, "end_reason"), "started_at",
        json_object_get(doc, "started_at"), "duration_ms", json_object_get(doc, "duration_ms"),
        "max_severity",
        json_object_get(json_object_get(doc, "violation_summary"), "max_severity"),
        "permissions_used", permissions_used(doc), "stdout", outs, "stderr",
        errs, "trace", trace_path ? json_string(trace_path) : json_null());
    if (rec) {
        /* what it was given (a journal of an older run calls it used) */
        json_t *granted = json_object_get(head, "permissions_granted");
        json_object_set(rec, "permissions_granted",
                        granted ? granted : json_object_get(head, "permissions_used"));
        json_object_set(rec, "invocation", json_object_get(doc, "invocation"));
        if (json_object_get(doc, "records")) /* --no-records, and why */
            json_object_set(rec, "records", json_object_get(doc, "records"));
    }
    return rec;
}

void sg_audit_capture_init(struct sg_audit_capture *c)
{
    sg_buf_init(&c->out, SG_AUDIT_OUTPUT_CAP);
    sg_buf_init(&c->err, SG_AUDIT_OUTPUT_CAP);
}

void sg_audit_capture_sink(void *ctx, const struct sg_event *ev)
{
    struct sg_audit_capture *c = ctx;
    if (ev->kind != SG_EV_STDOUT && ev->kind != SG_EV_STDERR)
        return;
    sg_buf_append_line(ev->kind == SG_EV_STDOUT ? &c->out : &c->err, ev->message,
                       ev->message_len);
}

void sg_audit_capture_free(struct sg_audit_capture *c)
{
    sg_buf_free(&c->out);
    sg_buf_free(&c->err);
}

long long sg_audit_tip_seq(const char *path)
{
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    size_t torn;
    cleanup_free char *tip = fd >= 0 ? last_line(fd, &torn) : NULL;
    json_t *rec = tip ? json_loads(tip, 0, NULL) : NULL;
    long long seq = (long long)json_integer_value(json_object_get(rec, "seq"));
    json_decref(rec);
    return seq;
}

/* What the backward walk found. */
struct find {
    const char *run_id;
    long long after;
    json_t *run;   /* the run record */
    bool refusals; /* the run's refusals (written with it, in one write) */
    bool done;     /* reached a record at or before "after" */
    char prev_file[256]; /* a rotation record's previous file, at the file's start */
};

static void find_line(struct find *f, const char *line, size_t n)
{
    json_t *rec = json_loadb(line, n, 0, NULL);
    json_t *sj = json_object_get(rec, "seq");
    const char *type = json_string_value(json_object_get(rec, "type"));
    const char *id = json_string_value(json_object_get(rec, "run_id"));
    const char *by = json_string_value(json_object_get(rec, "decided_by"));
    if (json_is_integer(sj) && json_integer_value(sj) <= f->after)
        f->done = true;
    else if (type && id && !strcmp(id, f->run_id) && !strcmp(type, "run") && !f->run)
        f->run = json_incref(rec);
    else if (type && id && !strcmp(id, f->run_id) &&
             (!strcmp(type, "refusals") ||
              (!strcmp(type, "decision") && by && !strncmp(by, "sandbox: ", 9))))
        f->refusals = true;
    if (type && !strcmp(type, "rotation"))
        snprintf(f->prev_file, sizeof f->prev_file, "%s",
                 json_string_value(json_object_get(rec, "previous_file")) ?: "");
    json_decref(rec);
}

/* One file walked from its end towards its start, a block at a time,
 * until the walk is done or *budget bytes were read. */
#define FIND_BLOCK (SG_AUDIT_LINE_MAX * 2) /* always holds a whole line's end */

static void find_in(int fd, struct find *f, off_t *budget)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return;
    f->prev_file[0] = '\0';
    off_t pos = st.st_size;
    struct sg_buf b; /* the bytes [pos, pos + b.len) not yet walked */
    sg_buf_init(&b, SIZE_MAX);
    bool first = true;
    while (!f->done && !f->run && *budget > 0) {
        size_t want = pos < FIND_BLOCK ? (size_t)pos : FIND_BLOCK;
        char *nb = sg_xmalloc(want + b.len + 1);
        if (want && pread(fd, nb, want, pos - (off_t)want) != (ssize_t)want) {
            free(nb);
            break;
        }
        if (b.len) /* b.data is NULL until the first carry */
            memcpy(nb + want, b.data, b.len);
        size_t len = want + b.len;
        pos -= (off_t)want;
        *budget -= (off_t)want;
        size_t end = len;
        if (first) { /* a torn tail is no record */
            while (end > 0 && nb[end - 1] != '\n')
                end--;
            first = false;
        }
        /* whole lines from the right: a line is whole when a newline comes
         * before it, or the file starts there */
        for (;;) {
            size_t e = end > 0 && nb[end - 1] == '\n' ? end - 1 : end;
            size_t s = e;
            while (s > 0 && nb[s - 1] != '\n')
                s--;
            if (s == 0 && pos > 0)
                break; /* its start is in the next block */
            if (e > s)
                find_line(f, nb + s, e - s);
            end = s;
            if (f->done || f->run || end == 0)
                break;
        }
        b.len = 0;
        if (end && sg_buf_append(&b, nb, end) < 0)
            end = 0;
        free(nb);
        if (pos == 0)
            break;
        if (end > SG_AUDIT_LINE_MAX * 2)
            break; /* no line is that long: not a log we wrote */
    }
    sg_buf_free(&b);
    if (pos > 0 || b.len)
        f->prev_file[0] = '\0'; /* not walked to its start */
}

json_t *sg_audit_find_run(const char *path, const char *run_id, long long after_seq,
                          bool *refusals)
{
    struct find f = {.run_id = run_id, .after = after_seq};
    /* With a seq to stop at, the walk reads only what was appended since
     * the run began, however many files and bytes that is: a walk cut
     * short would take "not found" for "not there" and append the record
     * a second time (runs of an MCP server or the TUI, or runs already
     * going, end after a killed one without recovering it). Without one
     * (an older journal) it is bounded. */
    off_t budget = after_seq >= 0 ? (off_t)INT64_MAX : SG_AUDIT_FIND_MAX;
    int max_files = after_seq >= 0 ? SG_AUDIT_FIND_FILES : 4;
    char dir[PATH_MAX];
    const char *base;
    split(path, dir, sizeof dir, &base);
    cleanup_fd int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    cleanup_free char *name = sg_xstrdup(base);
    /* the log, then (when the walk reached a rotation record at its start)
     * the file before it */
    for (int files = 0; dfd >= 0 && files < max_files && !f.done && !f.run && budget > 0; files++) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            break;
        find_in(fd, &f, &budget);
        close(fd);
        if (!f.prev_file[0] || strchr(f.prev_file, '/') || f.prev_file[0] == '.')
            break;
        free(name);
        name = sg_xstrdup(f.prev_file);
    }
    if (refusals)
        *refusals = f.refusals;
    return f.run;
}
