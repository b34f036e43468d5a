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

static int write_record(int fd, json_t *rec, const char *prev, json_int_t seq);
static int write_own_record(int fd, json_t *rec, char **prev, json_int_t *seq);

int sg_audit_append(const char *path, json_t *rec)
{
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
    if (torn) {
        /* a crash left half a line: close it so the next record starts clean;
         * verify reports it, and the chain continues from the last whole one */
        if (write(fd, "\n", 1) != 1)
            return -errno;
    }
    json_t *prev_rec = tip ? json_loads(tip, 0, NULL) : NULL;
    cleanup_free char *prev = sg_xstrdup(
        prev_rec && json_string_value(json_object_get(prev_rec, "hash"))
            ? json_string_value(json_object_get(prev_rec, "hash"))
            : GENESIS);
    json_int_t seq = prev_rec ? json_integer_value(json_object_get(prev_rec, "seq")) + 1 : 1;
    json_decref(prev_rec);
    struct stat st;
    if (prev_rec && fstat(fd, &st) == 0 && st.st_size >= rotate_at()) {
        /* full: the log goes on in a new file, whose first record names the
         * old one and chains to its last (verify follows the chain) */
        cleanup_free char *old = rotated_name(path, seq - 1);
        const char *ob = strrchr(old, '/');
        ob = ob ? ob + 1 : old;
        if (linkat(dfd, base, dfd, ob, 0) < 0 || unlinkat(dfd, base, 0) < 0)
            return -errno;
        int nfd = openat(dfd, base, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                         0600);
        if (nfd < 0)
            return -errno;
        if (flock(nfd, LOCK_EX) < 0) {
            close(nfd);
            return -errno;
        }
        close(fd); /* its lock goes with it; waiters see the new file (sg_open_locked_current) */
        fd = nfd;
        int r = write_own_record(fd, json_pack("{s:s, s:s}", "type", "rotation",
                                               "previous_file", ob), &prev, &seq);
        if (r < 0)
            return r;
    }
    if (torn) {
        /* never silently: the chain says a line was lost here */
        int r = write_own_record(
            fd,
            json_pack("{s:s, s:I, s:s}", "type", "torn_line", "bytes", (json_int_t)torn, "note",
                      "half a line (a crash or a full disk mid-write) was closed before this "
                      "record; the chain continues from the last whole record"),
            &prev, &seq);
        if (r < 0)
            return r;
    }
    return write_record(fd, rec, prev, seq);
}

/* A record of the log's own (taken), chained in; the chain's tip moves on. */
static int write_own_record(int fd, json_t *rec, char **prev, json_int_t *seq)
{
    int r = write_record(fd, rec, *prev, *seq);
    if (r == 0) {
        free(*prev);
        *prev = sg_xstrdup(json_string_value(json_object_get(rec, "hash")));
        (*seq)++;
    }
    json_decref(rec);
    return r;
}

static int write_record(int fd, json_t *rec, const char *prev, json_int_t seq)
{
    json_object_set_new(rec, "seq", json_integer(seq));
    json_object_set_new(rec, "prev", json_string(prev));
    cleanup_free char *h = sg_audit_hash(rec);
    json_object_set_new(rec, "hash", json_string(h));
    cleanup_free char *line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (!line)
        return -ENOMEM;
    size_t len = strlen(line);
    if (len + 1 > SG_AUDIT_LINE_MAX)
        return -E2BIG;
    line[len] = '\n'; /* the NUL goes; one write holds the whole line */
    struct stat st;
    off_t before = fstat(fd, &st) == 0 ? st.st_size : -1;
    ssize_t w = write(fd, line, len + 1);
    int e = w < 0 ? -errno : w != (ssize_t)(len + 1) ? -ENOSPC : 0;
    line[len] = '\0';
    if (e) {
        /* a full disk took part of the line: take it back (the lock is
         * ours), so the log never ends in half a record we wrote */
        if (w > 0 && before >= 0 && ftruncate(fd, before) == 0)
            fsync(fd);
        return e;
    }
    if (fsync(fd) < 0)
        return -errno;
    return 0;
}

/* One file of the chain, carrying the hash and sequence number over. */
static int verify_file(FILE *f, char **prev, json_int_t *seq, struct sg_audit_check *c)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int r = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool complete = line[n - 1] == '\n';
        if (!complete) {
            c->torn++; /* a crash mid-write: not a record */
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
        const char *h = json_string_value(json_object_get(rec, "hash"));
        const char *p = json_string_value(json_object_get(rec, "prev"));
        cleanup_free char *calc = sg_audit_hash(rec);
        const char *why = !h || strcmp(h, calc) ? "its hash does not match its content"
                          : !p || strcmp(p, *prev)
                              ? (c->records && lineno == 1
                                     ? "it does not follow the last record of the file before "
                                       "it (a file of the chain is missing or was changed)"
                                     : "it does not follow the record before it")
                          : json_integer_value(json_object_get(rec, "seq")) != *seq + 1
                              ? "its sequence number is wrong"
                              : NULL;
        if (why) {
            c->bad_line = lineno;
            snprintf(c->why, sizeof c->why, "%s", why);
            json_decref(rec);
            r = -EBADMSG;
            break;
        }
        free(*prev);
        *prev = sg_xstrdup(h);
        (*seq)++;
        c->records++;
        json_decref(rec);
    }
    free(line);
    return r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sg_audit_verify(const char *path, struct sg_audit_check *c)
{
    memset(c, 0, sizeof *c);
    /* the rotated files first, oldest first (their names carry their last
     * sequence number), then the log itself */
    char dir[PATH_MAX];
    const char *base;
    size_t bl = log_stem(path, dir, sizeof dir, &base);
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
    cleanup_free char *prev = sg_xstrdup(GENESIS);
    json_int_t seq = 0;
    int r = 0;
    c->files = nfiles;
    for (size_t i = 0; i < nfiles && r == 0; i++) {
        FILE *f = fopen(files[i], "re");
        if (!f) {
            r = errno == ENOENT && i + 1 == nfiles && nfiles > 1 ? 0 : -errno;
            break;
        }
        snprintf(c->file, sizeof c->file, "%s", files[i]);
        r = verify_file(f, &prev, &seq, c);
        fclose(f);
    }
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
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

int sg_audit_append_refusals(const char *path, json_t *doc, json_t *head)
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
    int r = 0;
    json_array_foreach(recs, i, ev)
        if (!r)
            r = sg_audit_append(path, ev);
    const char *tool;
    json_t *n;
    json_object_foreach(over, tool, n)
    {
        json_t *u = json_pack("{s:s, s:O, s:s, s:s, s:s, s:O}", "type", "refusals", "run_id",
                              json_object_get(head, "run_id"), "tool", tool, "decision", "deny",
                              "why", "past the first 20 of this tool in this run: counted",
                              "count", n);
        if (!r)
            r = u ? sg_audit_append(path, u) : -ENOMEM;
        json_decref(u);
    }
    json_decref(recs);
    json_decref(by_key);
    json_decref(per_tool);
    json_decref(over);
    return r;
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

bool sg_audit_ends_with_run(const char *path, const char *run_id)
{
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t torn;
    cleanup_free char *tip = fd >= 0 ? last_line(fd, &torn) : NULL;
    json_t *rec = tip ? json_loads(tip, 0, NULL) : NULL;
    const char *type = json_string_value(json_object_get(rec, "type"));
    const char *id = json_string_value(json_object_get(rec, "run_id"));
    bool yes = type && id && !strcmp(type, "run") && !strcmp(id, run_id);
    json_decref(rec);
    return yes;
}
