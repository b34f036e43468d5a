#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attempts.h"
#include "config.h"
#include "lineprompt.h"
#include "sanitize.h"
#include "util.h"

char *sg_attach_path(bool mk)
{
    char *dir = sg_runtime_dir(); /* the run directories' folder: one place, never a fixed
                                   * name in a world-writable one */
    if (mk && mkdir(dir, 0700) < 0 && errno != EEXIST &&
        (errno != ENOENT || sg_mkdir_parent(dir, 0700) < 0 ||
         (mkdir(dir, 0700) < 0 && errno != EEXIST))) {
        free(dir);
        return NULL;
    }
    struct stat st;
    if (lstat(dir, &st) == 0 &&
        (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))) {
        free(dir); /* someone else's, or open to others: never ours to use */
        return NULL;
    }
    char *p = sg_xasprintf("%s/attach.sock", dir);
    free(dir);
    return strlen(p) < sizeof(((struct sockaddr_un *)0)->sun_path) ? p : (free(p), NULL);
}

static int peer_ok(int fd)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
        return -errno;
    return cr.uid == getuid() ? 0 : -EPERM;
}

/* A send to a peer that reads nothing waits at most this long: the kernel's
 * send timeout, the socket blocking only for that one send. */
#define SEND_WAIT_S 5

static void set_send_timeout(int fd)
{
    struct timeval tv = {.tv_sec = SEND_WAIT_S};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void fill(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    snprintf(sa->sun_path, sizeof sa->sun_path, "%s", path);
}

int sg_attach_connect(void)
{
    cleanup_free char *path = sg_attach_path(false);
    if (!path)
        return -ENOENT;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un sa;
    fill(&sa, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || peer_ok(fd) < 0) {
        int e = errno ? errno : EPERM;
        close(fd);
        return -e;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK); /* read in a poll loop */
    set_send_timeout(fd);
    return fd;
}

int sg_attach_listen(char **path_out)
{
    char *path = sg_attach_path(true);
    if (!path)
        return -EACCES;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        free(path);
        return -errno;
    }
    struct sockaddr_un sa;
    fill(&sa, path);
    /* a socket left by a TUI that died: remove it, but never a live one */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
        close(probe);
        close(fd);
        free(path);
        return -EADDRINUSE;
    }
    if (probe >= 0)
        close(probe);
    unlink(path);
    mode_t old = umask(077);
    int r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
        int e = errno;
        close(fd);
        free(path);
        return -e;
    }
    *path_out = path;
    return fd;
}

int sg_attach_accept(int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return -errno;
    int r = peer_ok(fd);
    if (r < 0) {
        close(fd);
        return r;
    }
    set_send_timeout(fd);
    return fd;
}

int sg_attach_send(int fd, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(msg);
    if (!s)
        return -ENOMEM;
    size_t n = strlen(s);
    if (n + 1 > SG_ATTACH_LINE_MAX) {
        free(s);
        return -EMSGSIZE;
    }
    s[n++] = '\n'; /* the NUL's place: the string is not used as a C string again */
    int r = 0, fl = -1;
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN && fl < 0 && (fl = fcntl(fd, F_GETFL)) >= 0 &&
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
            continue; /* full: wait for the reader, SEND_WAIT_S at most */
        if (w < 0 && errno == EAGAIN) { /* a peer that reads nothing for 5 s is gone */
            r = -ETIMEDOUT;
            break;
        }
        if (w <= 0) {
            r = -errno;
            break;
        }
        off += (size_t)w;
    }
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl);
    free(s);
    return r;
}

int sg_attach_read(int fd, struct sg_attach_reader *r, void (*fn)(void *ctx, json_t *msg),
                   void *ctx)
{
    for (int rounds = 0; rounds < 16; rounds++) {
        ssize_t n = read(fd, r->buf + r->len, sizeof r->buf - r->len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return 0;
        if (n <= 0)
            return -1;
        r->len += (size_t)n;
        char *start = r->buf, *nl;
        while ((nl = memchr(start, '\n', r->len - (size_t)(start - r->buf)))) {
            if (!r->discarding) {
                json_error_t je;
                json_t *m = json_loadb(start, (size_t)(nl - start), 0, &je);
                if (json_is_object(m))
                    fn(ctx, m);
                json_decref(m);
            }
            r->discarding = false;
            start = nl + 1;
        }
        size_t left = r->len - (size_t)(start - r->buf);
        memmove(r->buf, start, left);
        r->len = left;
        if (r->len == sizeof r->buf) { /* a line over the cap: drop it to its end */
            r->discarding = true;
            r->len = 0;
        }
    }
    return 0;
}

static const char *const wire[] = {[SG_DEC_DENY] = "deny", [SG_DEC_ALLOW_ONCE] = "allow_once",
                                   [SG_DEC_ALLOW_RUN] = "allow_run",
                                   [SG_DEC_ALLOW_ALWAYS] = "allow_always",
                                   [SG_DEC_DENY_ALWAYS] = "deny_always"};

const char *sg_decision_wire(enum sg_decision d)
{
    return wire[d];
}

int sg_decision_from_wire(const char *s, enum sg_decision *d)
{
    for (size_t i = 0; s && i < SG_ARRAY_LEN(wire); i++)
        if (!strcmp(s, wire[i])) {
            *d = (enum sg_decision)i;
            return 0;
        }
    return -EINVAL;
}

/* ---- a run's side: its prompts out, the TUI's answers in ---- */

/* A string cut to at most n bytes at a character's start (JSON takes only
 * whole UTF-8): for a prompt too long to send whole, marked cut. */
static json_t *json_prefix(const char *s, size_t n)
{
    size_t k = strlen(s);
    if (k > n) {
        k = n;
        while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
            k--;
    }
    return json_stringn(s, k);
}

/* The prompt as the TUI shows it: the request's fields (sanitized), the
 * command's rows (lineprompt.h: read from the raw bytes here, since the
 * sanitized text can no longer be read as the shell reads it), the rule(s)
 * one per line, and cut when it is not all there. */
static json_t *prompt_msg(const struct sg_perm_prompt *pr, bool cut, int64_t now)
{
    const struct sg_preq *q = pr->q;
    cleanup_free char *subj = sg_sanitize_str(q->subject, 0);
    cleanup_free char *args = sg_sanitize_str(q->args, 0);
    cleanup_free char *cwd = sg_sanitize_str(q->cwd, 0);
    cleanup_free char *det = sg_sanitize_str(q->detail, 0);
    cleanup_free char *host = sg_sanitize_str(q->host, 0);
    cleanup_free char *rule = sg_sanitize_str(pr->rule, SG_SAN_KEEP_NEWLINE);
    cleanup_free char *skill = sg_sanitize_str(pr->skill, 0);
    cleanup_free char *why = sg_sanitize_str(pr->why, 0);
    size_t cap = cut ? 1024 : SIZE_MAX; /* a cut prompt: enough to see what it was */
    json_t *m = json_pack("{s:s, s:I, s:s, s:s, s:o, s:o, s:o, s:i, s:s, s:o, s:s, s:o, s:I, s:I}",
                          "type", "prompt", "id", (json_int_t)pr->id, "tool",
                          sg_ptool_name(q->tool), "skill", skill, "subject", json_prefix(subj, cap),
                          "args", json_prefix(args, cap), "cwd", json_prefix(cwd, cap), "port",
                          q->port, "detail", det, "host", json_prefix(host, cap), "why", why,
                          "rule", json_prefix(cut ? "" : rule, cap), "queued",
                          (json_int_t)pr->queued, "timeout_ms",
                          (json_int_t)(pr->deadline_ms - now));
    if (q->agent_tool[0]) { /* the agent's own tool (the hook's, check_tool_permission's) */
        cleanup_free char *at = sg_sanitize_str(q->agent_tool, 0);
        json_object_set_new(m, "agent_tool", json_string(at));
    }
    json_object_set_new(m, "session", json_boolean(pr->session));
    json_object_set_new(m, "cut", json_boolean(cut || q->cut));
    if (sg_prompt_is_command(q)) {
        struct sg_prompt_rows rows = {0};
        sg_prompt_command_rows(q, &rows);
        json_t *ra = json_array();
        for (size_t i = 0; i < rows.n && !cut; i++)
            json_array_append_new(ra, json_pack("[s, s]", rows.r[i].label, rows.r[i].text));
        if (cut && rows.n) { /* what it starts with, said to be only that */
            json_t *start = json_prefix(rows.r[0].text, cap);
            cleanup_free char *t = sg_xasprintf("(too long to send whole to this TUI) it "
                                                "starts: %s ...", json_string_value(start));
            json_decref(start);
            json_array_append_new(ra, json_pack("[s, s]", rows.r[0].label, t));
        }
        json_object_set_new(m, "rows", ra);
        json_object_set_new(m, "any_code", json_boolean(rows.any_code));
        sg_prompt_rows_free(&rows);
    }
    return m;
}

void sg_attach_fe_show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct sg_attach_fe *a = ctx;
    if (a->fd < 0)
        return;
    if (!pr) {
        sg_attach_send(a->fd, json_pack("{s:s}", "type", "prompt_closed"));
        return;
    }
    a->perm = pr->perm;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    json_t *m = prompt_msg(pr, false, now);
    /* a request of 16 KiB, escaped, may not fit a message: then the TUI is
     * told it is not all there (it offers no allow), never shown a part
     * as if it were the whole */
    if (!m || json_dumpb(m, NULL, 0, JSON_COMPACT | JSON_ENSURE_ASCII) + 1 > SG_ATTACH_LINE_MAX) {
        json_decref(m);
        m = prompt_msg(pr, true, now);
    }
    a->cut = json_is_true(json_object_get(m, "cut"));
    a->cut_id = pr->id;
    sg_attach_send(a->fd, m);
}

static void fe_msg(void *ctx, json_t *m)
{
    struct sg_attach_fe *a = ctx;
    enum sg_decision d;
    json_t *id = json_object_get(m, "id");
    if (strcmp(json_string_value(json_object_get(m, "type")) ?: "", "answer") ||
        sg_decision_from_wire(json_string_value(json_object_get(m, "decision")), &d) < 0 ||
        !a->perm || !json_is_integer(id))
        return; /* an answer that names no request answers none */
    if (sg_decision_allows(d) && a->cut && (uint64_t)json_integer_value(id) == a->cut_id)
        return; /* what was not shown whole is never allowed, whatever the TUI says */
    sg_perm_answer_id(a->perm, (uint64_t)json_integer_value(id), d);
}

size_t sg_attach_fe_pollfds(void *ctx, struct pollfd *out, size_t max)
{
    struct sg_attach_fe *fe = ctx;
    if (fe->fd < 0 || !max)
        return 0;
    out[0] = (struct pollfd){.fd = fe->fd, .events = POLLIN};
    return 1;
}

void sg_attach_fe_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    if (n && p[0].revents)
        sg_attach_fe_read(ctx);
}

void sg_attach_fe_event(void *ctx, const struct sg_event *ev)
{
    struct sg_attach_fe *fe = ctx;
    if (fe->fd < 0)
        return;
    cleanup_free char *m = sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
    json_t *msg = json_pack("{s:s, s:s, s:s, s:i, s:I}", "type", "event", "kind",
                            sg_event_name(ev->kind), "message", m, "severity",
                            sg_event_severity(ev->kind), "wall_ms", (json_int_t)ev->wall_ms);
    json_t *fields = sg_attempts_fields(ev->data); /* so the TUI counts it as the trace does */
    if (fields)
        json_object_set_new(msg, "data", fields);
    if (sg_attach_send(fe->fd, msg) < 0) {
        close(fe->fd); /* the TUI went away: what it held is denied by the engine's deadline */
        fe->fd = -1;
    }
}

void sg_attach_fe_read(struct sg_attach_fe *fe)
{
    if (fe->fd >= 0 && sg_attach_read(fe->fd, &fe->rd, fe_msg, fe) < 0) {
        close(fe->fd);
        fe->fd = -1;
    }
}
