/* A person's program decides a request (execprompt.h). */
#include "execprompt.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/mman.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perm_int.h"
#include "sanitize.h"
#include "shellcmd.h"
#include "util.h"

struct sg_pprog_call {
    pid_t pid;
    int out;     /* its stdout, read non-blocking; -1 at EOF */
    struct sg_buf got;
    bool over;   /* more than SG_PPROG_OUT_MAX bytes */
    int status;  /* waitpid's */
    bool reaped;
};

/* A string member only when it is UTF-8 as it stands: false otherwise. */
static bool put(json_t *o, const char *key, const char *v)
{
    json_t *s = json_string(v ? v : "");
    if (!s)
        return false;
    json_object_set_new(o, key, s);
    return true;
}

/* A name or address as DNS and the proxy carry it: letters, digits, '-',
 * '_', '.'; or an IP literal. Anything else ("*", "domain:x", ':' or a
 * quote in a label a skill made) is not asked of a program: a rule an
 * "allow" keeps would say more than the request. */
static bool plain_host(const char *h, int port)
{
    /* an address: only as the proxy saw it, with its port (a DNS query for
     * "1.2.3.4" or "2606:4700::6810:443" is none a resolver sends, and its
     * rule would read back as another address or every port); never
     * loopback (a port published on this machine is asked so) */
    struct in6_addr a6;
    struct in_addr a4;
    bool v4 = inet_pton(AF_INET, h, &a4) == 1, v6 = inet_pton(AF_INET6, h, &a6) == 1;
    if (v4 || v6)
        return port > 0 && !(v4 && (ntohl(a4.s_addr) >> 24) == 127) &&
               !(v6 && IN6_IS_ADDR_LOOPBACK(&a6));
    if (!*h || !strcasecmp(h, "localhost") || sg_str_has_suffix(h, ".localhost"))
        return false;
    for (const char *p = h; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
            return false;
    return true;
}

json_t *sg_pprog_request_json(const struct sg_preq *q, const char *run_id, const char *skill,
                             const char *digest, const char *why)
{
    /* asked of a program only what it is shown exactly, in one reading:
     * not a field cut short, not a path read two ways, not an agent's run
     * option (a whole folder for the run: a person's), not an agent's tool
     * that is none of Bash, Write, Fetch (its input is no such request) */
    if (q->cut || q->unsure || q->run_option)
        return NULL;
    if (q->agent_tool[0] &&
        sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) != (int)q->tool)
        return NULL;
    if (q->tool == SG_PT_FETCH && !plain_host(q->subject, q->port))
        return NULL;
    char rwhy[256];
    enum sg_risk_level lvl = sg_preq_risk(q, sg_invoking_home(), rwhy, sizeof rwhy);
    static const char *const risk[] = {"low", "medium", "high"};
    json_t *o = json_pack("{s:i, s:s, s:s}", "version", 1, "tool", sg_ptool_name(q->tool),
                          "risk", risk[lvl]);
    cleanup_free char *rule = sg_preq_rule(q);
    bool ok = put(o, "run_id", run_id) && put(o, "skill", skill) && put(o, "digest", digest) &&
              put(o, "request", rule) && put(o, "why", why) && put(o, "risk_why", rwhy) &&
              put(o, "cwd", q->cwd) && put(o, "detail", q->detail);
    if (q->agent_tool[0])
        ok = ok && put(o, "agent_tool", q->agent_tool);
    /* a protected target: a "run" or "always" answer covers that file only */
    if (sg_preq_protected(q))
        ok = ok && put(o, "protected", sg_preq_protected(q));
    switch (q->tool) {
    case SG_PT_BASH: {
        /* argv as the program will get it. A skill's exec: the resolved
         * program, then the words sg_shell_join wrote. An agent's command
         * line: read whole as bash reads it, and asked only when it is one
         * simple command (its first word is no program until bash says so:
         * "curl${IFS}x|sh;ls" is three) */
        bool agent = q->agent_tool[0] != '\0';
        cleanup_free char *line = agent ? sg_agent_line(q) : sg_xasprintf("x %s", q->args);
        struct sg_shell sh;
        const char *pw;
        json_t *argv = json_array();
        if (!agent)
            json_array_append_new(argv, json_string(q->name[0] ? q->name : q->subject));
        if (sg_shell_parse(line, &sh, &pw) == 0) {
            ok = ok && sh.n == 1 && (agent || q->args[0] || sh.cmds[0].argc == 1);
            for (size_t i = agent ? 0 : 1; ok && i < sh.cmds[0].argc; i++) {
                json_t *w = json_string(sh.cmds[0].argv[i]);
                ok = w != NULL;
                if (w)
                    json_array_append_new(argv, w);
            }
            sg_shell_free(&sh);
        } else {
            ok = false; /* it cannot be read back exactly */
        }
        json_object_set_new(o, "argv", argv);
        ok = ok && put(o, "program", agent ? json_string_value(json_array_get(argv, 0))
                                           : q->subject) &&
             put(o, "name", q->name) && put(o, "args", q->args);
        if (agent)
            ok = ok && put(o, "line", line);
        break;
    }
    case SG_PT_WRITE: /* path as the skill sees it; host: the file an allow writes */
        ok = ok && put(o, "path", q->subject) && put(o, "host_path", q->host);
        break;
    case SG_PT_FETCH:
        ok = ok && put(o, "host", q->subject);
        json_object_set_new(o, "port", q->port > 0 ? json_integer(q->port) : json_null());
        break;
    default:
        ok = ok && put(o, "path", q->subject);
        break;
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A bare name, found on PATH's absolute folders only (an empty or "."
 * entry would be the agent's project); NULL when none has it. */
static char *find_program(const char *name)
{
    if (strchr(name, '/'))
        return name[0] == '/' ? sg_xstrdup(name) : NULL;
    const char *path = secure_getenv("PATH");
    cleanup_free char *copy = sg_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char *p = sg_xasprintf("%s/%s", d, name);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

struct sg_pprog_call *sg_pprog_start(char *const *argv, const json_t *req, int *err)
{
    cleanup_free char *text = json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII);
    cleanup_free char *prog = find_program(argv[0]);
    if (!prog) {
        *err = -ENOENT;
        return NULL;
    }
    int out[2];
    /* the request in a sealed memfd at offset 0, its stdin: written whole
     * before the program starts, however long (a pipe of 64 KiB, or 4 KiB
     * past pipe-user-pages-soft, would block the broker on a big one) */
    int in = text ? memfd_create("skillgate-request", MFD_CLOEXEC | MFD_ALLOW_SEALING) : -1;
    if (in < 0) {
        *err = text ? -errno : -ENOMEM;
        return NULL;
    }
    size_t n = strlen(text);
    text[n] = '\n';
    if (sg_write_all(in, text, n + 1) < 0 || lseek(in, 0, SEEK_SET) != 0 ||
        fcntl(in, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0 ||
        pipe2(out, O_CLOEXEC) < 0) {
        *err = -errno;
        close(in);
        return NULL;
    }
    /* above 0, 1, 2 (a caller with one closed): the dup2 below must move them */
    int fds[3] = {in, out[0], out[1]};
    for (int i = 0; i < 3; i++)
        if (fds[i] <= 2) {
            int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            close(fds[i]);
            fds[i] = moved;
        }
    in = fds[0], out[0] = fds[1], out[1] = fds[2];
    if (in < 0 || out[0] < 0 || out[1] < 0) {
        *err = -EMFILE;
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return NULL;
    }
    uid_t uid = sg_invoking_uid();
    gid_t gid = getgid();
    if (geteuid() == 0 && uid != 0) { /* the person's own group, not root's */
        static uid_t known_uid = (uid_t)-1; /* looked up once a process */
        static gid_t known_gid;
        if (known_uid != uid) {
            struct passwd *pw = getpwuid(uid);
            if (!pw) {
                *err = -ESRCH;
                close(in), close(out[0]), close(out[1]);
                return NULL;
            }
            known_uid = uid;
            known_gid = pw->pw_gid;
        }
        gid = known_gid;
    }
    pid_t pid = fork();
    if (pid < 0) {
        *err = -errno;
        close(in), close(out[0]), close(out[1]);
        return NULL;
    }
    if (pid == 0) {
        /* async-signal-safe only: this process has other threads' locks */
        setsid(); /* its own session and group: no terminal (a read of
                   * /dev/tty fails, it does not stop it), and what it
                   * starts is killed with it */
        int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(in, 0) < 0 || dup2(out[1], 1) < 0 || nul < 0 || dup2(nul, 2) < 0)
            _exit(126);
        /* nothing of the broker's (the sandbox's notify fd, its sockets) */
        if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
            for (int fd = 3; fd < 1024; fd++)
                close(fd);
        /* run as the person, not as root (sudo): their program, their rights */
        if (geteuid() == 0 && uid != 0 &&
            (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
             setresuid(uid, uid, uid) < 0))
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execv(prog, argv);
        _exit(127);
    }
    close(in), close(out[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    struct sg_pprog_call *c = sg_xcalloc(1, sizeof *c);
    c->pid = pid;
    c->out = out[0];
    sg_buf_init(&c->got, SG_PPROG_OUT_MAX);
    return c;
}

int sg_pprog_fd(const struct sg_pprog_call *c)
{
    return c ? c->out : -1;
}

bool sg_pprog_read(struct sg_pprog_call *c)
{
    char buf[4096];
    while (c->out >= 0) {
        ssize_t r = read(c->out, buf, sizeof buf);
        if (r > 0) {
            if (sg_buf_append(&c->got, buf, (size_t)r) < 0)
                c->over = true;
            if (c->over) { /* more than any answer: it is not one */
                close(c->out);
                c->out = -1;
            }
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return false;
        close(c->out); /* EOF, or an error: what it said is all it says */
        c->out = -1;
    }
    /* its stdout is closed: it ends now, or is ended (the broker's loop
     * waits 100 ms at most: an answer's exit comes within a few) */
    for (int i = 0; i < 50 && !c->reaped; i++) {
        pid_t w = waitpid(c->pid, &c->status, WNOHANG);
        if (w == c->pid)
            c->reaped = true;
        else
            usleep(2000);
    }
    if (!c->reaped) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        /* reaped now if it died at once; else by sg_pprog_free, unwaited */
        c->reaped = waitpid(c->pid, &c->status, WNOHANG) == c->pid;
        c->status = -1; /* it kept running: not an answer */
    }
    return true;
}

enum sg_pprog_answer sg_pprog_answer(const struct sg_pprog_call *c, enum sg_decision *dec,
                                   char *why, size_t whylen)
{
    *dec = SG_DEC_DENY;
    if (c->over) {
        snprintf(why, whylen, "it printed more than %d bytes", SG_PPROG_OUT_MAX);
        return SG_PPROG_DENY;
    }
    if (c->status == -1) {
        snprintf(why, whylen, "it closed its output and did not end");
        return SG_PPROG_DENY;
    }
    if (WIFSIGNALED(c->status)) {
        snprintf(why, whylen, "it was killed by signal %d", WTERMSIG(c->status));
        return SG_PPROG_DENY;
    }
    if (WEXITSTATUS(c->status) == 127 || WEXITSTATUS(c->status) == 126) {
        snprintf(why, whylen, "it could not be started (exit %d)", WEXITSTATUS(c->status));
        return SG_PPROG_DENY;
    }
    if (WEXITSTATUS(c->status) != 0) {
        snprintf(why, whylen, "it exited with status %d", WEXITSTATUS(c->status));
        return SG_PPROG_DENY;
    }
    json_error_t je;
    /* one key once: a program that builds its answer from request text
     * must not have a second "decision" win */
    json_t *a = c->got.len ? json_loadb(c->got.data, c->got.len, JSON_REJECT_DUPLICATES, &je)
                           : NULL;
    if (!json_is_object(a)) {
        snprintf(why, whylen, "its output is not one JSON object%s%s",
                 c->got.len ? ": " : " (it printed nothing)", c->got.len ? je.text : "");
        json_decref(a);
        return SG_PPROG_DENY;
    }
    const char *d = json_string_value(json_object_get(a, "decision"));
    json_t *sc = json_object_get(a, "scope");
    const char *scope = sc ? json_string_value(sc) : "once";
    const char *reason = json_string_value(json_object_get(a, "reason"));
    cleanup_free char *r = sg_sanitize_str(reason ? reason : "", 0);
    enum sg_pprog_answer ans = SG_PPROG_DENY;
    bool known = d && scope;
    if (known && !strcmp(d, "ask")) {
        ans = SG_PPROG_ASK;
    } else if (known && (!strcmp(d, "allow") || !strcmp(d, "deny"))) {
        bool allow = !strcmp(d, "allow");
        if (!strcmp(scope, "once"))
            *dec = allow ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
        else if (!strcmp(scope, "run"))
            *dec = allow ? SG_DEC_ALLOW_RUN : SG_DEC_DENY;
        else if (!strcmp(scope, "always"))
            *dec = allow ? SG_DEC_ALLOW_ALWAYS : SG_DEC_DENY_ALWAYS;
        else
            known = false;
        ans = known && allow ? SG_PPROG_ALLOW : SG_PPROG_DENY;
    } else {
        known = false;
    }
    if (!known) {
        *dec = SG_DEC_DENY;
        cleanup_free char *dd = sg_sanitize_str(d ? d : "(none)", 0);
        cleanup_free char *ss = sg_sanitize_str(scope ? scope : "(not a string)", 0);
        snprintf(why, whylen, "an answer it does not know (decision %.40s, scope %.40s)", dd,
                 ss);
        json_decref(a);
        return SG_PPROG_DENY;
    }
    snprintf(why, whylen, "%s", r[0] ? r : "no reason given");
    json_decref(a);
    return ans;
}

void sg_pprog_free(struct sg_pprog_call *c)
{
    if (!c)
        return;
    if (c->out >= 0)
        close(c->out);
    if (!c->reaped) {
        kill(-c->pid, SIGKILL); /* it and what it started */
        kill(c->pid, SIGKILL);
        /* dead within moments of SIGKILL; one stuck in the kernel is not
         * waited for (the broker's loop goes on) */
        for (int i = 0; i < 50 && waitpid(c->pid, NULL, WNOHANG) == 0; i++)
            usleep(2000);
    }
    sg_buf_free(&c->got);
    free(c);
}
