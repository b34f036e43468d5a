#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "sanitize.h"
#include "runend.h"
#include "trace.h"
#include "util.h"

struct sg_journal {
    int dfd, fd;
    char *name, *path;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake, synced;
    struct sg_buf pend, spare; /* the loop fills pend; the thread writes spare */
    bool want_sync, stop, running;
    unsigned long long sync_gen;
    unsigned long long taken, written; /* lines taken; of them, written to the file */
    size_t total, output; /* bytes taken, of them output */
    size_t dropped;
    int err;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- a crash of the broker leaves a note ---- */

static atomic_int crash_fd = -1;

static void on_crash(int sig)
{
    int fd = atomic_load(&crash_fd);
    if (fd >= 0) {
        /* a line of its own even after a torn one; async-signal-safe */
        static const char pre[] = "\n{\"type\":\"crash\",\"signal\":";
        char line[64];
        size_t n = sizeof pre - 1;
        memcpy(line, pre, n);
        if (sig >= 10)
            line[n++] = (char)('0' + sig / 10 % 10);
        line[n++] = (char)('0' + sig % 10);
        line[n++] = '}';
        line[n++] = '\n';
        ssize_t w = write(fd, line, n);
        (void)w;
        fdatasync(fd);
    }
    raise(sig); /* SA_RESETHAND: the default action now */
}

static void crash_notes_on(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < SG_ARRAY_LEN(sigs); i++) {
        struct sigaction old, sa = {.sa_handler = on_crash, .sa_flags = SA_RESETHAND | SA_NODEFER};
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- writing ---- */

static void *writer(void *arg)
{
    struct sg_journal *j = arg;
    int64_t last_sync = mono_ms();
    bool unsynced = false;
    pthread_mutex_lock(&j->mu);
    j->running = true; /* glibc lets setxid count this thread from now on */
    pthread_cond_broadcast(&j->synced);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (!j->stop && !j->want_sync && !j->pend.len)
            pthread_cond_timedwait(&j->wake, &j->mu, &until);
        struct sg_buf tmp = j->pend; /* swap: no allocation in this thread */
        j->pend = j->spare;
        j->spare = tmp;
        bool sync = j->want_sync, stop = j->stop;
        unsigned long long gen = j->sync_gen, taken = j->taken;
        j->want_sync = false;
        pthread_mutex_unlock(&j->mu);
        int e = 0;
        if (j->spare.len) {
            e = sg_write_all(j->fd, j->spare.data, j->spare.len);
            j->spare.len = 0;
            unsynced = true;
        }
        if (taken != j->written) { /* in the file: a SIGKILL of the broker keeps it */
            pthread_mutex_lock(&j->mu);
            j->written = taken;
            pthread_cond_broadcast(&j->synced);
            pthread_mutex_unlock(&j->mu);
        }
        if (!e && unsynced && (sync || stop || mono_ms() - last_sync >= 1000)) {
            e = fdatasync(j->fd) < 0 ? -errno : 0;
            last_sync = mono_ms();
            unsynced = false;
        }
        pthread_mutex_lock(&j->mu);
        if (e && !j->err)
            j->err = e;
        if (sync || stop) {
            j->sync_gen = gen + 1;
            pthread_cond_broadcast(&j->synced);
        }
        if (stop && !j->pend.len)
            break;
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Take a line (NUL-terminated, without its newline) for the thread. A
 * step of the end (note) is taken past the caps: it is what recovery
 * needs most, and one line. */
static void take_line(struct sg_journal *j, const char *line, bool output, bool sync,
                      bool note)
{
    size_t n = strlen(line) + 1;
    pthread_mutex_lock(&j->mu);
    if (!note &&
        (j->total + n > SG_JOURNAL_MAX || (output && j->output + n > SG_JOURNAL_OUTPUT))) {
        j->dropped++;
        /* spent: the sink stops formatting what would be dropped anyway (a
         * flood of output once cost every line a JSON encoding here) */
        if (output)
            j->output = SG_JOURNAL_OUTPUT;
        else
            j->total = SG_JOURNAL_MAX;
    } else if (sg_buf_append(&j->pend, line, n - 1) == 0 && sg_buf_append(&j->pend, "\n", 1) == 0) {
        j->total += n;
        j->output += output ? n : 0;
        j->taken++;
        if (j->pend.len == n) /* the first since the thread's last write: wake it */
            pthread_cond_signal(&j->wake);
    }
    if (sync) {
        j->want_sync = true;
        pthread_cond_signal(&j->wake);
    }
    pthread_mutex_unlock(&j->mu);
}

void sg_journal_sink(void *ctx, const struct sg_event *ev)
{
    struct sg_journal *j = ctx;
    bool output = ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR;
    pthread_mutex_lock(&j->mu); /* past the budget, not even formatted */
    bool over = j->total >= SG_JOURNAL_MAX || (output && j->output >= SG_JOURNAL_OUTPUT);
    j->dropped += over;
    pthread_mutex_unlock(&j->mu);
    if (over)
        return;
    if (output && !ev->data) { /* json_dumps's line, without packing it (cli's print_json) */
        cleanup_free char *m = sg_sanitize_json(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
        cleanup_free char *line = sg_xasprintf(
            "{\"type\":\"event\",\"kind\":\"%s\",\"wall_ms\":%lld,\"mono_ns\":%lld,"
            "\"message\":%s,\"n\":%lld}",
            sg_event_name(ev->kind), (long long)ev->wall_ms, (long long)ev->mono_ns, m,
            (long long)ev->message_len);
        take_line(j, line, true, false, false);
        return;
    }
    cleanup_free char *msg = sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:s}", "type", "event", "kind",
                          sg_event_name(ev->kind), "wall_ms", (json_int_t)ev->wall_ms, "mono_ns",
                          (json_int_t)ev->mono_ns, "message", msg);
    if (output)
        json_object_set_new(o, "n", json_integer((json_int_t)ev->message_len));
    if (ev->data)
        json_object_set(o, "data", ev->data);
    cleanup_free char *line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    if (line)
        take_line(j, line, output, ev->kind == SG_EV_PERMISSION_DECIDED, false);
}

/* Wait until everything taken so far is on disk. */
static int flush_wait(struct sg_journal *j)
{
    pthread_mutex_lock(&j->mu);
    unsigned long long gen = j->sync_gen;
    j->want_sync = true;
    pthread_cond_signal(&j->wake);
    while (j->sync_gen == gen)
        pthread_cond_wait(&j->synced, &j->mu);
    int e = j->err;
    pthread_mutex_unlock(&j->mu);
    return e;
}

int sg_journal_note(struct sg_journal *j, json_t *line)
{
    cleanup_free char *s = json_dumps(line, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(line);
    if (!s)
        return -ENOMEM;
    take_line(j, s, false, true, true);
    /* in the file, not yet on the disk: the thread's fdatasync goes on
     * beside whatever the caller writes next (sg_journal_sync waits) */
    pthread_mutex_lock(&j->mu);
    unsigned long long want = j->taken;
    while (j->written < want && !j->err)
        pthread_cond_wait(&j->synced, &j->mu);
    int e = j->err;
    pthread_mutex_unlock(&j->mu);
    return e;
}

int sg_journal_sync(struct sg_journal *j)
{
    return flush_wait(j);
}

static char *runs_dir(void)
{
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/runs", state);
}

int sg_journal_open(const char *run_id, json_t *head, struct sg_journal **out)
{
    *out = NULL;
    cleanup_free char *dir = runs_dir();
    int dfd = sg_open_records_dir(dir);
    if (dfd < 0) {
        json_decref(head);
        return dfd;
    }
    struct sg_journal *j = sg_xcalloc(1, sizeof *j);
    j->dfd = dfd;
    j->name = sg_xasprintf("%s.journal", run_id);
    j->path = sg_xasprintf("%s/%s", dir, j->name);
    json_object_set_new(head, "type", json_string("head"));
    json_object_set_new(head, "version", json_integer(1));
    json_object_set_new(head, "broker_pid", json_integer(getpid()));
    {
        /* where the run's records can first be in the log: recovery looks
         * for them from there (sg_audit_find_run), not for a note */
        cleanup_free char *log = sg_audit_path();
        json_object_set_new(head, "audit_seq", json_integer(sg_audit_tip_seq(log)));
    }
    cleanup_free char *line = json_dumps(head, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(head);
    int e = 0;
    j->fd = openat(dfd, j->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (j->fd < 0)
        e = -errno;
    else if (flock(j->fd, LOCK_EX) < 0)
        e = -errno;
    else if (!line)
        e = -ENOMEM;
    else if (fallocate(j->fd, FALLOC_FL_KEEP_SIZE, 0, SG_JOURNAL_MAX) < 0 && errno == ENOSPC)
        e = -ENOSPC; /* reserved up front: a disk that fills during the run cannot stop it */
    else if (!(e = sg_write_all(j->fd, line, strlen(line))) && !(e = sg_write_all(j->fd, "\n", 1)))
        e = fsync(j->fd) < 0 ? -errno : sg_fsync_dir(dfd); /* the entry too: a power cut must
                                                          not take the file away */
    if (e) {
        if (j->fd >= 0) {
            unlinkat(dfd, j->name, 0);
            close(j->fd);
        }
        close(dfd);
        free(j->name), free(j->path), free(j);
        return e;
    }
    sg_buf_init(&j->pend, SG_JOURNAL_MAX);
    sg_buf_init(&j->spare, SG_JOURNAL_MAX);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->wake, NULL);
    pthread_cond_init(&j->synced, NULL);
    if ((e = pthread_create(&j->thread, NULL, writer, j)) != 0) {
        j->stop = true; /* close() below joins nothing */
        unlinkat(dfd, j->name, 0);
        close(j->fd), close(dfd);
        sg_buf_free(&j->pend), sg_buf_free(&j->spare);
        free(j->name), free(j->path), free(j);
        return -e;
    }
    /* The sandbox's pid 1 is a raw clone of this process, and its setuid
     * waits on every thread glibc knows of that has not started running:
     * one being created at that moment would hang it. */
    pthread_mutex_lock(&j->mu);
    while (!j->running)
        pthread_cond_wait(&j->synced, &j->mu);
    pthread_mutex_unlock(&j->mu);
    atomic_store(&crash_fd, j->fd);
    crash_notes_on();
    *out = j;
    return 0;
}

const char *sg_journal_path(const struct sg_journal *j)
{
    return j->path;
}

int sg_journal_close(struct sg_journal *j, bool done)
{
    if (!j)
        return 0;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_signal(&j->wake);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    atomic_store(&crash_fd, -1);
    int e = j->err;
    if (done)
        unlinkat(j->dfd, j->name, 0); /* while it is still locked: no one recovers it now */
    close(j->fd);
    close(j->dfd);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->synced);
    sg_buf_free(&j->pend);
    sg_buf_free(&j->spare);
    free(j->name), free(j->path), free(j);
    return e;
}

/* ---- before a run ---- */

int sg_records_check(const char **why)
{
    static char buf[512];
    cleanup_free char *state = sg_state_dir();
    cleanup_free char *traces = sg_xasprintf("%s/traces", state);
    int e = sg_open_records_dir(traces);
    if (e < 0) {
        snprintf(buf, sizeof buf, "the traces folder %s cannot be made or opened: %s", traces,
                 strerror(-e));
        return *why = buf, e;
    }
    struct statvfs vs;
    int fe = fstatvfs(e, &vs) < 0 ? -errno : 0;
    if (!fe && faccessat(e, ".", W_OK, AT_EACCESS) < 0)
        fe = -errno;
    close(e);
    if (fe) {
        snprintf(buf, sizeof buf, "the traces folder %s is not writable: %s", traces,
                 strerror(-fe));
        return *why = buf, fe;
    }
    unsigned long long avail = (unsigned long long)vs.f_bavail * vs.f_frsize;
    if (avail < (unsigned long long)SG_RECORDS_RESERVE) {
        snprintf(buf, sizeof buf,
                 "only %llu KiB free where the records go (%s); a run's journal, trace and audit "
                 "record need up to %lld MiB",
                 avail >> 10, state, SG_RECORDS_RESERVE >> 20);
        return *why = buf, -ENOSPC;
    }
    cleanup_free char *log = sg_audit_path();
    /* not made here: the first append makes it (its folder was walked
     * safely above, with the traces folder) */
    int fd = open(log, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0) {
        e = -errno;
        snprintf(buf, sizeof buf, "the audit log %s cannot be appended to: %s", log,
                 strerror(errno));
        return *why = buf, e;
    }
    close(fd);
    return 0;
}

/* ---- reading ---- */

static int kind_of(const char *name)
{
    for (int k = 0; name && k < SG_EV_COUNT; k++)
        if (!strcmp(sg_event_name(k), name))
            return k;
    return -1;
}

static void parse_line(json_t *o, sg_event_sink_fn sink, void *ctx, struct sg_journal_read *r)
{
    const char *type = json_string_value(json_object_get(o, "type"));
    if (!type) {
        r->bad_lines++;
    } else if (!strcmp(type, "head")) {
        if (!r->head && json_is_object(json_object_get(o, "trace")) &&
            json_is_object(json_object_get(o, "audit")))
            r->head = json_incref(o);
        else
            r->bad_lines++;
    } else if (!strcmp(type, "trace")) {
        const char *p = json_string_value(json_object_get(o, "path"));
        if (p && !r->trace_path)
            r->trace_path = sg_xstrdup(p);
    } else if (!strcmp(type, "audit")) {
        json_t *h = json_object_get(o, "head");
        if (!r->audit && json_is_integer(json_object_get(h, "seq")) &&
            json_is_string(json_object_get(h, "hash")))
            r->audit = json_incref(o);
    } else if (!strcmp(type, "end")) {
        if (!r->end)
            r->end = json_incref(o);
    } else if (!strcmp(type, "crash")) {
        r->crash_signal = (int)json_integer_value(json_object_get(o, "signal"));
    } else if (!strcmp(type, "event") && r->head) {
        int k = kind_of(json_string_value(json_object_get(o, "kind")));
        const char *msg = json_string_value(json_object_get(o, "message"));
        if (k < 0 || !msg) {
            r->bad_lines++;
            return;
        }
        json_t *data = json_object_get(o, "data");
        struct sg_event ev = {.kind = (enum sg_event_kind)k,
                              .mono_ns = (uint64_t)json_integer_value(json_object_get(o, "mono_ns")),
                              .wall_ms = json_integer_value(json_object_get(o, "wall_ms")),
                              .message = msg,
                              .message_len = strlen(msg),
                              .data = data};
        if (ev.wall_ms > r->last_wall_ms)
            r->last_wall_ms = ev.wall_ms;
        if (k == SG_EV_STDOUT || k == SG_EV_STDERR)
            r->bytes[k == SG_EV_STDERR] +=
                (unsigned long long)json_integer_value(json_object_get(o, "n"));
        r->events++;
        if (sink)
            sink(ctx, &ev);
    } else {
        r->bad_lines++;
    }
}

void sg_journal_parse(const char *buf, size_t len, sg_event_sink_fn sink, void *ctx,
                      struct sg_journal_read *r)
{
    memset(r, 0, sizeof *r);
    if (len > SG_JOURNAL_MAX + (1 << 16))
        len = SG_JOURNAL_MAX + (1 << 16);
    for (size_t off = 0; off < len;) {
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
        if (n > 0) {
            json_t *o = nl ? json_loadb(buf + off, n, JSON_REJECT_DUPLICATES, NULL) : NULL;
            if (json_is_object(o))
                parse_line(o, sink, ctx, r);
            else
                r->bad_lines++; /* a torn last line (no newline), or garbage */
            json_decref(o);
        }
        off += n + 1;
    }
}

void sg_journal_read_free(struct sg_journal_read *r)
{
    json_decref(r->head);
    json_decref(r->end);
    json_decref(r->audit);
    free(r->trace_path);
    memset(r, 0, sizeof *r);
}

/* ---- recovery ---- */

struct replay {
    struct sg_trace trace;
    struct sg_audit_capture cap;
};

static void replay_sink(void *ctx, const struct sg_event *ev)
{
    struct replay *rp = ctx;
    sg_trace_sink(&rp->trace, ev);
    sg_audit_capture_sink(&rp->cap, ev);
}

/* The trace of run_id, when the broker got as far as its final name (a
 * rename: the file is whole; the broker says so nowhere else). A trace it
 * only staged (its temporary file, whole or not) is removed: recovery
 * writes the trace again. */
static char *written_trace(const char *run_id)
{
    cleanup_free char *state = sg_state_dir();
    cleanup_free char *dir = sg_xasprintf("%s/traces", state);
    cleanup_free char *tail = sg_xasprintf("-%s.json", run_id);
    cleanup_free char *staged = sg_xasprintf("-%s.json.tmp", run_id);
    DIR *d = opendir(dir);
    struct dirent *e;
    char *found = NULL;
    while (d && (e = readdir(d)))
        if (!found && sg_str_has_suffix(e->d_name, tail))
            found = sg_xasprintf("%s/%s", dir, e->d_name);
        else if (sg_str_has_suffix(e->d_name, staged) && e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    return found;
}

/* The chain's head a written trace names (NULL: none, or no such trace).
 * The path is the journal's word: only a regular file is read, and a FIFO
 * put there cannot hold up every start. */
static json_t *trace_head(const char *path)
{
    cleanup_fd int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    json_t *doc = json_loadfd(fd, 0, NULL);
    json_t *head = json_incref(json_object_get(doc, "audit_head"));
    json_decref(doc);
    return head;
}

/* The result an "end" step kept. */
static int end_from(json_t *e, struct sg_run_result *res)
{
    const char *name = json_string_value(json_object_get(e, "end"));
    for (int k = 0; name && k <= SG_END_INCOMPLETE; k++) {
        if (strcmp(sg_run_end_name((enum sg_run_end)k), name))
            continue;
        res->end = (enum sg_run_end)k;
        res->exit_code = (int)json_integer_value(json_object_get(e, "exit_code"));
        res->ended_ms = json_integer_value(json_object_get(e, "ended_ms"));
        res->bytes[0] = (uint64_t)json_integer_value(json_object_get(e, "stdout_bytes"));
        res->bytes[1] = (uint64_t)json_integer_value(json_object_get(e, "stderr_bytes"));
        snprintf(res->end_reason, sizeof res->end_reason,
                 "%s; its records were written from the journal at the next start",
                 json_string_value(json_object_get(e, "end_reason")) ?: "");
        snprintf(res->out_sha256, sizeof res->out_sha256, "%s",
                 json_string_value(json_object_get(e, "output_sha256")) ?: "");
        return 0;
    }
    return -EINVAL;
}

/* One orphan's records, from its bytes. */
static int recover_one(const char *buf, size_t len, struct sg_recovered *out)
{
    struct replay rp;
    sg_trace_init(&rp.trace);
    sg_audit_capture_init(&rp.cap);
    struct sg_journal_read jr;
    sg_journal_parse(buf, len, replay_sink, &rp, &jr);
    cleanup_free char *log = sg_audit_path();
    cleanup_free char *tname = NULL; /* the trace's name in its folder */
    int e = 0;
    if (!jr.head) {
        e = -ENODATA; /* no head: nothing was launched */
        goto out;
    }
    json_t *th = json_object_get(jr.head, "trace"), *ah = json_object_get(jr.head, "audit");
    out->run_id = sg_xstrdup(json_string_value(json_object_get(th, "trace_id")) ?: "?");
    out->skill = sg_xstrdup(json_string_value(json_object_get(th, "skill_name")) ?: "?");
    struct sg_run_result res = {.end = SG_END_INCOMPLETE};
    res.started_ms = json_integer_value(json_object_get(jr.head, "started_ms"));
    res.ended_ms = jr.last_wall_ms > res.started_ms ? jr.last_wall_ms : res.started_ms;
    res.bytes[0] = jr.bytes[0], res.bytes[1] = jr.bytes[1];
    const char *abbrev = jr.crash_signal ? sigabbrev_np(jr.crash_signal) : NULL;
    if (jr.end && end_from(jr.end, &res) == 0)
        ; /* the broker saw the end; only its records were not written */
    else if (jr.crash_signal)
        snprintf(res.end_reason, sizeof res.end_reason,
                 "broker crashed (SIG%s): recovered from the journal at the next start",
                 abbrev ? abbrev : "?");
    else
        snprintf(res.end_reason, sizeof res.end_reason,
                 "broker killed: recovered from the journal at the next start");
    out->end_reason = sg_xstrdup(res.end_reason);
    json_t *doc = sg_trace_doc(th, &rp.trace, &res);
    char now[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sg_format_iso((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, now);
    json_object_set_new(doc, "recovered_at", json_string(now));
    json_object_set_new(doc, "journal_lines_skipped", json_integer((json_int_t)jr.bad_lines));
    /* as the broker does: the audit records, then the trace naming the
     * chain's head after them (unless the broker got that far) */
    bool traced = jr.trace_path || (jr.trace_path = written_trace(out->run_id));
    json_t *last = NULL, *head = NULL;
    json_t *aseq = json_object_get(jr.head, "audit_seq"); /* older journals: none */
    long long after = json_is_integer(aseq) ? (long long)json_integer_value(aseq) : -1;
    bool refused = false;
    if (jr.audit) { /* the records are in; the journal says so */
        head = json_incref(json_object_get(jr.audit, "head"));
        tname = sg_xstrdup(json_string_value(json_object_get(jr.audit, "trace")) ?: "");
    } else if (traced && (head = trace_head(jr.trace_path))) {
        /* the trace comes after the records and names them */
    } else if ((last = sg_audit_find_run(log, out->run_id, after, &refused))) {
        /* the broker died after its records were written (synced or not:
         * a killed broker's writes are in the file), before its trace */
        head = sg_audit_head_of(last);
        const char *t = json_string_value(json_object_get(last, "trace"));
        const char *slash = t ? strrchr(t, '/') : NULL;
        tname = sg_xstrdup(slash ? slash + 1 : "");
        json_decref(last);
    } else {
        if (!traced)
            tname = sg_trace_name(doc);
        cleanup_free char *tpath = traced ? sg_xstrdup(jr.trace_path) : sg_trace_path_of(tname);
        json_t *rec = sg_audit_run_record(doc, ah, res.out_sha256, rp.cap.out.data, rp.cap.out.len,
                                          rp.cap.err.data, rp.cap.err.len, tpath);
        /* the refusals and the record in one write, as the broker writes
         * them (its refusals without its record: a write cut short) */
        json_t *recs = refused ? json_array() : sg_audit_refusal_records(doc, ah);
        if (rec)
            json_array_append(recs, rec);
        e = rec ? sg_audit_append_all(log, recs) : -EINVAL;
        json_decref(recs);
        head = e ? NULL : sg_audit_head_of(rec);
        json_decref(rec);
    }
    if (traced) {
        out->trace_path = sg_xstrdup(jr.trace_path);
    } else {
        if (head)
            json_object_set(doc, "audit_head", head);
        const char *skill_root = json_string_value(json_object_get(th, "skill_root"));
        /* under the name its record gives, when that is a name of the folder */
        int te = sg_trace_write_named(doc, tname && tname[0] ? tname : NULL, skill_root,
                                      &out->trace_path);
        if (te == -EINVAL || te == -EEXIST)
            te = sg_trace_write_named(doc, NULL, skill_root, &out->trace_path);
        if (!e)
            e = te;
    }
    json_decref(head);
    json_decref(doc);
out:
    sg_journal_read_free(&jr);
    sg_trace_free(&rp.trace);
    sg_audit_capture_free(&rp.cap);
    return e;
}

/* The bytes of a journal file no broker holds, or NULL (held, gone, not
 * ours to read). */
static char *claim(int dfd, const char *name, int *fd_out, size_t *len)
{
    *fd_out = -1;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_nlink == 0) { /* a live run's, or recovered meanwhile */
        close(fd);
        return NULL;
    }
    size_t cap = SG_JOURNAL_MAX + (1 << 16);
    size_t want = (size_t)st.st_size < cap ? (size_t)st.st_size : cap;
    char *buf = sg_xmalloc(want + 1);
    ssize_t n = pread(fd, buf, want, 0);
    if (n < 0) {
        free(buf);
        close(fd);
        return NULL;
    }
    buf[n] = '\0';
    *len = (size_t)n;
    *fd_out = fd;
    return buf;
}

size_t sg_journal_recover(struct sg_recovered **out)
{
    *out = NULL;
    cleanup_free char *dir = runs_dir();
    struct stat st;
    if (stat(dir, &st) < 0)
        return 0; /* no run ever kept a journal here */
    int dfd = sg_open_records_dir(dir);
    if (dfd < 0)
        return 0;
    int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!sg_str_has_suffix(e->d_name, ".journal") || e->d_name[0] == '.')
            continue;
        int fd;
        size_t len = 0;
        cleanup_free char *buf = claim(dfd, e->d_name, &fd, &len);
        if (!buf)
            continue;
        struct sg_recovered r = {0};
        r.err = recover_one(buf, len, &r);
        if (r.err == 0 || r.err == -ENODATA)
            unlinkat(dfd, e->d_name, 0);
        close(fd);
        if (r.err == -ENODATA) {
            free(r.run_id), free(r.skill), free(r.trace_path), free(r.end_reason);
            continue;
        }
        sg_grow(out, &cap, n + 1, sizeof **out);
        (*out)[n++] = r;
    }
    if (d)
        closedir(d);
    else if (lfd >= 0)
        close(lfd);
    close(dfd);
    return n;
}

void sg_recovered_free(struct sg_recovered *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].run_id), free(v[i].skill), free(v[i].trace_path), free(v[i].end_reason);
    free(v);
}
