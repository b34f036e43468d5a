#include "trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "config.h"
#include "digest.h"
#include "sandbox.h"
#include "sanitize.h"
#include "skilljson.h"
#include "traceindex.h"
#include "util.h"
#include "wasm.h"

const char *sg_run_end_name(enum sg_run_end e)
{
    static const char *const names[] = {
#define X(id, name) [SG_END_##id] = name,
        SG_RUN_ENDS(X)
#undef X
    };
    return names[e];
}

void sg_trace_init(struct sg_trace *t)
{
    memset(t, 0, sizeof *t);
    t->events = json_array();
    t->cls = sg_classifier_new();
}

void sg_trace_free(struct sg_trace *t)
{
    json_decref(t->events);
    t->events = NULL;
    sg_classifier_free(t->cls);
    t->cls = NULL;
    free(t->last_raw);
    t->last_raw = NULL;
}

struct evidence_text {
    const struct sg_event *ev;
    char *text;
};

static const char *evidence_text(void *ctx)
{
    struct evidence_text *e = ctx;
    if (!e->text)
        e->text = sg_sanitize(e->ev->message, e->ev->message_len, SG_SAN_KEEP_TAB);
    return e->text;
}

/* Is ev the last event kept, o (kind, message as the skill wrote it, data)? */
static bool same_event(const struct sg_trace *t, json_t *o, const struct sg_event *ev)
{
    if (!t->last_raw || t->last_kind != ev->kind || t->last_len != ev->message_len ||
        memcmp(t->last_raw, ev->message, ev->message_len))
        return false;
    json_t *d = json_object_get(o, "data");
    return ev->data ? json_equal(d, ev->data) : json_is_null(d);
}

void sg_trace_sink(void *ctx, const struct sg_event *ev)
{
    struct sg_trace *t = ctx;
    bool output = ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR;
    if (!output) { /* counted whether or not the list below keeps it */
        struct evidence_text e = {.ev = ev};
        sg_classifier_add(t->cls, sg_event_name(ev->kind), ev->data, evidence_text, &e);
        free(e.text);
    }
    size_t n = json_array_size(t->events);
    /* a flood of the same event (a million refused mount calls) is one
     * event with a count: the last one kept says how many more came */
    json_t *last = n ? json_array_get(t->events, n - 1) : NULL;
    if (!output && last && same_event(t, last, ev)) {
        json_t *rep = json_object_get(last, "repeated");
        json_object_set_new(last, "repeated", json_integer(json_integer_value(rep) + 1));
        return;
    }
    if ((output && (n >= SG_TRACE_MAX_EVENTS || t->bytes >= SG_TRACE_MAX_BYTES)) ||
        (!output && t->kept_other >= SG_TRACE_MAX_OTHER) || n >= 2 * SG_TRACE_MAX_EVENTS) {
        t->dropped_events++;
        return;
    }
    if (!output)
        t->kept_other++;
    free(t->last_raw); /* what the next event is compared with */
    t->last_raw = output ? NULL : sg_xstrndup(ev->message, ev->message_len);
    t->last_len = ev->message_len;
    t->last_kind = ev->kind;
    /* JSON strings must be UTF-8, and a trace is read in terminals later:
     * the same sanitizer as the screen, tabs kept. */
    cleanup_free char *msg = sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
    char iso[32];
    sg_format_iso(ev->wall_ms, iso);
    json_t *o = json_pack("{s:s, s:I, s:s, s:s}", "timestamp", iso, "monotonic_ns",
                          (json_int_t)ev->mono_ns, "kind", sg_event_name(ev->kind), "message",
                          msg);
    json_object_set(o, "data", ev->data ? ev->data : json_null());
    /* SkillSandbox's name for it, where ours differs (events.h) */
    if (strcmp(sg_event_ss_kind(ev->kind), sg_event_name(ev->kind)))
        json_object_set_new(o, "skillsandbox_kind", json_string(sg_event_ss_kind(ev->kind)));
    t->bytes += strlen(msg);
    json_array_append_new(t->events, o);
}

static char *sha256_hex(const void *p, size_t n)
{
    char *out = sg_xmalloc(SG_DIGEST_STRLEN);
    sg_sha256_text(p, n, out);
    return out;
}

char *sg_policy_digest(const struct sg_skill *sk)
{
    json_t *j = sg_skill_to_json(sk, NULL);
    static const char *const volatile_keys[] = {"problems", "location", "digest", "valid"};
    for (size_t i = 0; i < SG_ARRAY_LEN(volatile_keys); i++)
        json_object_del(j, volatile_keys[i]);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    char *d = sha256_hex(s, strlen(s));
    free(s);
    return d;
}

/* What ran: the command, and for a script the script and its arguments as
 * given; the working folder, and whether it is the person's. */
static json_t *invocation(const struct sg_plan *plan)
{
    json_t *argv = json_array(), *args = json_array();
    for (size_t i = 0; i < plan->argc; i++) {
        /* a WASM run's last word is the runner's source: named, not copied */
        bool runner = plan->wasm && i == plan->argc - 1;
        cleanup_free char *a = sg_sanitize_str(runner ? "<skillgate's WASI runner>"
                                                      : plan->argv[i], 0);
        json_array_append_new(argv, json_string(a));
        if (i >= plan->argc - plan->script_args)
            json_array_append_new(args, json_string(a));
    }
    /* JSON strings are UTF-8: a path or argument that is not is shown escaped */
    cleanup_free char *cwd = sg_sanitize_str(plan->cwd, 0);
    json_t *j = json_pack("{s:o, s:s, s:b}", "argv", argv, "cwd", cwd, "working_folder",
                          plan->cwd_is_work);
    if (plan->script) {
        cleanup_free char *sc = sg_sanitize_str(plan->script, 0);
        json_object_set_new(j, "script", json_string(sc));
        json_object_set_new(j, "args", args);
    } else {
        json_decref(args);
    }
    if (plan->wasm) {
        cleanup_free char *mod = sg_sanitize_str(plan->wasm->module, 0);
        json_object_set_new(j, "wasm_module", json_string(mod));
    }
    if (plan->python) {
        cleanup_free char *prog = sg_sanitize_str(plan->python, 0);
        cleanup_free char *env = plan->python_env ? sg_sanitize_str(plan->python_env, 0) : NULL;
        json_object_set_new(j, "python",
                            json_pack("{s:s, s:o, s:s}", "program", prog, "environment",
                                      env ? json_string(env) : json_null(), "from",
                                      plan->python_from));
    }
    return j;
}

json_t *sg_trace_head(const struct sg_skill *sk, const struct sg_plan *plan, const char *digest)
{
    cleanup_free char *pdigest = sg_policy_digest(sk);
    json_t *limits = json_object();
    for (int l = 0; l < SG_PL_COUNT; l++)
        json_object_set_new(limits, plan->limits[l].name,
                            json_pack("{s:I, s:s, s:s, s:s}", "value",
                                      (json_int_t)plan->limits[l].value, "unit",
                                      plan->limits[l].unit, "mechanism",
                                      sg_mechanism_name(plan->limits[l].mech), "how",
                                      plan->limits[l].how));
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:b, s:o, s:o, s:o}", "schema",
                     "skillgate.trace/1", "trace_id", plan->run_id, "skill_name",
                     plan->skill_name, "skill_version",
                     sk->version ? json_string(sk->version) : json_null(), "skill_root", sk->root,
                     "policy_digest", pdigest, "degraded", plan->degraded, "skill_digest",
                     digest && digest[0] ? json_string(digest) : json_null(), "invocation",
                     invocation(plan), "limits", limits);
}

static bool is_violation(const char *k)
{
    static const char *const kinds[] = {"syscall_blocked", "fs_blocked", "network_egress_blocked",
                                        "resource_limit_hit", "dns_blocked", "output_escapes"};
    for (size_t i = 0; k && i < SG_ARRAY_LEN(kinds); i++)
        if (!strcmp(k, kinds[i]))
            return true;
    return false;
}

json_t *sg_trace_doc(json_t *head, struct sg_trace *t, const struct sg_run_result *res)
{
    char started[32], ended[32];
    sg_format_iso(res->started_ms, started);
    sg_format_iso(res->ended_ms, ended);
    bool no_exit = res->end == SG_END_SETUP_FAILED || res->end == SG_END_INCOMPLETE;
    json_t *doc = json_object();
    static const char *const before[] = {"schema",      "trace_id",      "skill_name",
                                         "skill_version", "skill_root", "policy_digest"};
    for (size_t i = 0; i < SG_ARRAY_LEN(before); i++)
        json_object_set(doc, before[i], json_object_get(head, before[i]));
    json_object_set_new(doc, "started_at", json_string(started));
    json_object_set_new(doc, "completed_at", json_string(ended));
    json_object_set_new(doc, "duration_ms", json_integer(res->ended_ms - res->started_ms));
    json_object_set_new(doc, "exit_code", no_exit ? json_null() : json_integer(res->exit_code));
    json_object_set_new(doc, "status", json_string(sg_run_end_name(res->end)));
    json_object_set_new(doc, "end_reason", json_string(res->end_reason));
    if (res->limit_note[0])
        json_object_set_new(doc, "limit_note", json_string(res->limit_note));
    static const char *const after[] = {"degraded", "allow_all", "skill_digest", "invocation",
                                        "limits", "records"};
    for (size_t i = 0; i < SG_ARRAY_LEN(after); i++)
        if (json_object_get(head, after[i]))
            json_object_set(doc, after[i], json_object_get(head, after[i]));
    json_t *violations = json_array(), *decisions = json_array();
    size_t i;
    json_t *ev;
    json_array_foreach(t->events, i, ev)
    {
        const char *k = json_string_value(json_object_get(ev, "kind"));
        /* a write the private views took is one only where it aimed to stay */
        const char *cls = json_string_value(json_object_get(json_object_get(ev, "data"), "class"));
        if (is_violation(k) || (k && !strcmp(k, "write_discarded") && cls &&
                                !strcmp(cls, "persistence")))
            json_array_append(violations, ev);
        if (k && !strcmp(k, "permission_decided"))
            json_array_append(decisions, json_object_get(ev, "data"));
    }
    json_object_set_new(
        doc, "output",
        json_pack("{s:I, s:I, s:I, s:I, s:I}", "stdout_bytes", (json_int_t)res->bytes[0],
                  "stderr_bytes", (json_int_t)res->bytes[1], "stdout_dropped",
                  (json_int_t)res->dropped[0], "stderr_dropped", (json_int_t)res->dropped[1],
                  "trace_events_dropped", (json_int_t)t->dropped_events));
    json_t *usage = json_object(); /* where a cgroup or the broker's watch counted it */
    if (res->memory_peak > 0)
        json_object_set_new(usage, "memory_peak_bytes", json_integer(res->memory_peak));
    if (res->pids_peak > 0)
        json_object_set_new(usage, "pids_peak", json_integer(res->pids_peak));
    if (json_object_size(usage))
        json_object_set(doc, "usage", usage);
    json_decref(usage);
    json_object_set(doc, "events", t->events);
    json_object_set_new(doc, "policy_violations", violations);
    json_object_set_new(doc, "decisions", decisions);
    json_object_set_new(doc, "violation_summary", sg_classifier_summary(t->cls));
    return doc;
}

json_t *sg_trace_build(struct sg_trace *t, const struct sg_skill *sk, const struct sg_plan *plan,
                       const struct sg_run_result *res, const char *digest)
{
    json_t *head = sg_trace_head(sk, plan, digest);
    json_t *doc = sg_trace_doc(head, t, res);
    json_decref(head);
    return doc;
}

/* sg_state_dir() lives in manifest/config.c: the sandbox masks the same folder. */

static bool inside(const char *path, const char *root)
{
    char rp[PATH_MAX], dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (!realpath(slash ? (dir[0] ? dir : "/") : ".", rp))
        return false;
    size_t n = strlen(root);
    return !strncmp(rp, root, n) && (rp[n] == '\0' || rp[n] == '/');
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Retention (config.yaml trace_keep, 1000 by default): the oldest traces
 * past it go. Their names start with the time they were written, so the
 * order of names is the order of runs. The one just written stays.
 *
 * Listing a full folder costs a run about a millisecond, so the folder is
 * listed only when a count kept beside the traces (COUNT_FILE) says it is
 * full, when that count is missing or unreadable, and every RECOUNT runs;
 * a listing that finds it full takes it down to trace_keep less a
 * headroom of 1/32, and writes the count it left. Runs ending together
 * may each add one to the same count (one is lost): the recount every
 * RECOUNT runs bounds what the folder holds past trace_keep meanwhile. */
#define COUNT_FILE ".count"
#define RECOUNT 64

static long long read_count(int dfd)
{
    char buf[32];
    int fd = openat(dfd, COUNT_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long c = strtoll(buf, &end, 10);
    return errno || end == buf || *end != '\n' || c < 0 ? -1 : c;
}

static void write_count(int dfd, long long c)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%lld\n", c);
    int fd = openat(dfd, COUNT_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK |
                                         O_CLOEXEC, 0600);
    if (fd < 0)
        return; /* a cache: the next run lists the folder */
    if (sg_write_all(fd, buf, (size_t)len) < 0)
        ftruncate(fd, 0);
    close(fd);
}

static void prune_traces(int dfd, const char *just_written)
{
    long long rot, keep;
    sg_config_records(&rot, &keep);
    long long c = read_count(dfd);
    if (c >= 0 && c + 1 < keep && (c + 1) % RECOUNT) {
        write_count(dfd, c + 1);
        return;
    }
    int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".json") && e->d_name[0] != '.') {
            names = sg_xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = sg_xstrdup(e->d_name);
        }
    }
    size_t left = n;
    if (n >= (size_t)keep) {
        size_t target = (size_t)(keep - keep / 32);
        qsort(names, n, sizeof *names, by_name);
        for (size_t i = 0; i + target < n; i++)
            if (strcmp(names[i], just_written) && unlinkat(dfd, names[i], 0) == 0)
                left--;
    }
    write_count(dfd, (long long)left);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
}

char *sg_trace_name(json_t *doc)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return sg_xasprintf("%s-%s-%s.json", stamp,
                        json_string_value(json_object_get(doc, "skill_name")),
                        json_string_value(json_object_get(doc, "trace_id")));
}

char *sg_trace_path_of(const char *name)
{
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/traces/%s", state, name);
}

static int write_doc(json_t *doc, const char *path, const char *fixed, const char *skill_root,
                     char **written);

int sg_trace_write(json_t *doc, const char *path, const char *skill_root, char **written)
{
    return write_doc(doc, path, NULL, skill_root, written);
}

int sg_trace_write_named(json_t *doc, const char *name, const char *skill_root, char **written)
{
    *written = NULL;
    /* a name of the traces folder, never a path out of it (it may come
     * from a journal): sg_trace_stage_named checks it too */
    if (name && (!name[0] || name[0] == '.' || strchr(name, '/') ||
                 !sg_str_has_suffix(name, ".json")))
        return -EINVAL;
    return write_doc(doc, NULL, name, skill_root, written);
}

/* The first half: the document in a temporary file beside its name,
 * written and synced. */
static int stage_doc(json_t *doc, const char *path, const char *fixed, const char *skill_root,
                     struct sg_trace_pending *p)
{
    memset(p, 0, sizeof *p);
    p->dfd = AT_FDCWD; /* the traces folder, walked safely (config.h) */
    if (path) {
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            return -ELOOP;
        p->target = sg_xstrdup(path);
        p->name = sg_xstrdup(path);
        p->own = false;
    } else {
        cleanup_free char *state = sg_state_dir();
        cleanup_free char *dir = sg_xasprintf("%s/traces", state);
        int r = sg_open_records_dir(dir);
        if (r < 0)
            return r;
        p->dfd = r;
        p->own = true;
        p->name = fixed ? sg_xstrdup(fixed) : sg_trace_name(doc);
        p->target = sg_xasprintf("%s/%s", dir, p->name);
    }
    if (skill_root && inside(p->target, skill_root)) {
        sg_trace_pending_drop(p);
        return -EPERM; /* a skill could read or rewrite its own record */
    }
    p->tmp = sg_xasprintf("%s.tmp", p->name);
    int fd = openat(p->dfd, p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* a broker killed while it wrote this run's trace left its temporary
         * file; its journal's recovery in the same second comes to the same
         * name (the folder is ours alone: no one else makes these names) */
        unlinkat(p->dfd, p->tmp, 0);
        fd = openat(p->dfd, p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        int e = -errno;
        free(p->tmp), p->tmp = NULL; /* not ours to remove */
        sg_trace_pending_drop(p);
        return e;
    }
    cleanup_free char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    size_t len = text ? strlen(text) : 0, off = 0;
    int r = text ? 0 : -ENOMEM;
    while (!r && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            r = -errno;
        else
            off += (size_t)w;
    }
    if (!r && (write(fd, "\n", 1) != 1 || fsync(fd) < 0))
        r = -errno;
    if (close(fd) < 0 && !r)
        r = -errno;
    if (r)
        sg_trace_pending_drop(p);
    return r;
}

int sg_trace_stage_named(json_t *doc, const char *name, const char *skill_root,
                         struct sg_trace_pending *p)
{
    memset(p, 0, sizeof *p);
    p->dfd = -1;
    if (name && (!name[0] || name[0] == '.' || strchr(name, '/') ||
                 !sg_str_has_suffix(name, ".json")))
        return -EINVAL;
    return stage_doc(doc, NULL, name, skill_root, p);
}

void sg_trace_pending_drop(struct sg_trace_pending *p)
{
    if (p->tmp && p->dfd != -1)
        unlinkat(p->dfd, p->tmp, 0);
    if (p->own && p->dfd >= 0)
        close(p->dfd);
    free(p->tmp), free(p->name), free(p->target);
    memset(p, 0, sizeof *p);
    p->dfd = -1;
}

int sg_trace_publish(struct sg_trace_pending *p, json_t *doc, char **written)
{
    *written = NULL;
    bool folder = p->own;
    /* Only a complete, synced file ever carries the final name; in the
     * traces folder never over another (a second trace of a run is refused) */
    int r = (folder ? renameat2(p->dfd, p->tmp, p->dfd, p->name, RENAME_NOREPLACE)
                    : renameat(p->dfd, p->tmp, p->dfd, p->name)) < 0
                ? -errno
                : 0;
    if (r) {
        sg_trace_pending_drop(p);
        return r;
    }
    free(p->tmp), p->tmp = NULL;
    /* the name on disk before the run is said to be recorded (the journal,
     * which would write it again, goes next) */
    if (folder)
        r = sg_fsync_dir(p->dfd);
    *written = steal_pointer(&p->target);
    if (folder) {
        /* the Traces screen's line for it (a cache: a failure costs a read) */
        json_t *e = sg_trace_index_entry(p->dfd, p->name, doc);
        json_t *a = e ? json_pack("[o]", e) : NULL;
        if (a)
            sg_trace_index_put(p->dfd, a, false);
        json_decref(a);
        prune_traces(p->dfd, p->name);
    }
    sg_trace_pending_drop(p);
    return r;
}

static int write_doc(json_t *doc, const char *path, const char *fixed, const char *skill_root,
                     char **written)
{
    struct sg_trace_pending p;
    *written = NULL;
    int r = stage_doc(doc, path, fixed, skill_root, &p);
    return r ? r : sg_trace_publish(&p, doc, written);
}

int64_t sg_trace_time_ms(const char *iso)
{
    struct tm tm = {0};
    int ms = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                       &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t secs = timegm(&tm);
    if (secs < 0 || secs > ((int64_t)1 << 40) || ms < 0 || ms > 999)
        return -1; /* past year 36,000: no run's */
    return (int64_t)secs * 1000 + ms;
}
