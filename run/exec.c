#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "exectree.h"
#include "notifpath.h"
#include "perm.h"
#include "shellcmd.h"
#include "sanitize.h"
#include "util.h"
#include "writes.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* Execs waiting for their new image (or their failure) to show: bounded by
 * the sandbox's pids limit in practice, by this in any case. */
#define SG_SHEBANG_ARG_MAX 256
#define MAX_PENDING 1024
/* An exec that has neither run nor failed by then is not an exec any more. */
#define PENDING_MS 30000

struct ident {
    dev_t dev;
    ino_t ino;
};

struct pending {
    pid_t tid, tgid;
    struct ident file, interp; /* interp.ino 0: not a script */
    bool script;
    bool killed; /* a swap: killed, still to be reaped by us, its tracer */
    char *args;     /* the arguments decided on, as the request joined them */
    char argv0[256];/* argv[0] decided on, when not the program's own name ("": its name) */
    char sharg[SG_SHEBANG_ARG_MAX]; /* a script's #! argument, as the kernel passes it */
    int argstart;   /* where they start in the new image's cmdline: 1, or for a script
                     * 2 (interpreter, script) or 3 (and the #! line's argument) */
    char tree[512]; /* the "this program" answer it runs under: a root once it runs */
    bool member;    /* allowed as a program of a tree's */
    bool bar;       /* a process of a tree running what no answer of it covers */
    int64_t deadline_ms;
    char program[PATH_MAX];
};

struct sg_exec {
    const struct sg_plan *plan;
    struct sg_perm *perm;
    struct sg_event_bus *bus;
    int fd;
    int waitkill; /* the kernel has SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: 1, 0, -1 unknown */
    struct pending *pend;
    size_t npend;
    unsigned long swaps; /* approved execs that were about to run another file */
    struct sg_config cfg; /* quiet_programs (owns the names quiet points to) */
    const char **quiet;   /* the programs the skill runs without a question */
    size_t nquiet;
    struct sg_exectree tree; /* programs allowed with what they run (this run) */
};

struct exec_wait {
    struct sg_exec *x;
    uint64_t id;
    pid_t pid;
    bool via_dirfd;
    bool limited;     /* a deny or ask rule named it: allowing it makes no tree */
    char program[PATH_MAX];
    struct sg_preq q;    /* what was asked: a "this program" answer covers it */
    struct sg_preq bind; /* what the kernel was given: the exec stop checks it (q may be
                          * the request about another name of the file, or its #!) */
};

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct sg_exec *sg_exec_new(const struct sg_plan *plan, struct sg_perm *perm,
                            struct sg_event_bus *bus, int notify_fd)
{
    struct sg_exec *x = sg_xcalloc(1, sizeof *x);
    x->plan = plan, x->perm = perm, x->bus = bus, x->fd = notify_fd;
    x->waitkill = -1;
    x->pend = sg_xcalloc(MAX_PENDING, sizeof *x->pend);
    /* the ordinary programs: the person's config decides; a config with
     * errors (one that may have meant "ask for everything") quiets none */
    cleanup_free char *path = sg_config_default_path();
    struct sg_diags d = {0};
    if (sg_config_load(path, &x->cfg, &d) < 0) {
        sg_config_free(&x->cfg);
        x->cfg.quiet_off = true;
        sg_bus_emit(bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:s}", "quiet_programs", "off", "reason", "config errors"),
                    "%s has errors: every program the skill runs is asked (quiet_programs off)",
                    path);
    }
    sg_diags_free(&d);
    x->quiet = sg_config_quiet_programs(&x->cfg, &x->nquiet);
    return x;
}

void sg_exec_free(struct sg_exec *x)
{
    if (!x)
        return;
    /* the sandbox is gone by now; a thread still traced dies with it, and
     * one that is not (a detach that failed) is let go */
    for (size_t i = 0; i < x->npend; i++) {
        ptrace(PTRACE_DETACH, x->pend[i].tid, 0, 0);
        ptrace(PTRACE_DETACH, x->pend[i].tgid, 0, 0);
        free(x->pend[i].args);
    }
    free(x->pend);
    free(x->quiet);
    sg_config_free(&x->cfg);
    free(x);
}

static void respond(struct sg_exec *x, uint64_t id, int error, bool cont)
{
    struct seccomp_notif_resp resp = {.id = id, .error = cont ? 0 : error,
                                      .flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0};
    /* the skill may be gone already: then there is nobody to answer */
    if (seccomp_notify_id_valid(x->fd, id) == 0)
        seccomp_notify_respond(x->fd, &resp);
}

static void refuse(struct sg_exec *x, uint64_t id, pid_t pid, const char *program, int err,
                   const char *reason, const char *fmt_why)
{
    cleanup_free char *s = sg_sanitize_str(program, 0);
    sg_bus_emit(x->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:s, s:i, s:s, s:b}", "syscall", "execve", "program", program,
                          "pid", (int)pid, "reason", reason, "prevented", 1),
                "exec of %s refused: %s", s, fmt_why);
    respond(x, id, err, false);
}

/* ---- what is asked ---- */

static const char *base_of(const char *p);

/* argv[0], when its last name is not the program's (buf: a scratch of
 * SG_PREQ_ARGS_MAX + 1): kept in q, which becomes unsure (a program may
 * act on the name it is run by: git-init, zcat, ex), or cut when it
 * does not fit. */
static void argv0_of(int memfd, unsigned long long argvp, struct sg_preq *q, char *buf)
{
    unsigned long long ap = 0;
    if (!argvp || pread(memfd, &ap, sizeof ap, (off_t)argvp) != (ssize_t)sizeof ap || !ap)
        return; /* no argv[0]: the kernel runs it with none, as named */
    if (sg_notif_read_str(memfd, ap, buf, SG_PREQ_ARGS_MAX + 1) < 0) {
        q->cut = true;
        return;
    }
    if (!strcmp(base_of(buf), base_of(q->subject)))
        return;
    if (!SG_PREQ_SET(q, argv0, buf))
        return; /* cut */
    cleanup_free char *note = sg_sanitize_str(buf, 0);
    snprintf(q->detail, sizeof q->detail, "run by the name \"%.150s\" (argv[0]): a program may "
             "act on the name it is run by", note);
}

static int resolve_links(pid_t pid, const char *path, bool last, char *out, size_t max);

/* argv[0]'s last name is the name of the file the program is, its links
 * followed (python3.11 for /usr/bin/python3). */
static bool argv0_is_the_files(pid_t pid, const struct sg_preq *q)
{
    char real[PATH_MAX];
    return resolve_links(pid, q->subject, true, real, sizeof real) == 0 &&
           !strcmp(base_of(q->argv0), base_of(real));
}

/* The program and argv an exec asks for, from the skill's memory. */
static int exec_request(const struct seccomp_notif *req, bool at, struct sg_preq *q)
{
    memset(q, 0, sizeof *q);
    q->tool = SG_PT_BASH;
    char memp[64], link[64];
    snprintf(memp, sizeof memp, "/proc/%d/mem", (int)req->pid);
    cleanup_fd int memfd = open(memp, O_RDONLY | O_CLOEXEC);
    if (memfd < 0)
        return -errno;
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)req->pid);
    ssize_t n = readlink(link, q->cwd, sizeof q->cwd - 1);
    q->cwd[n > 0 ? n : 0] = '\0';
    /* execveat(dirfd, path, argv, envp, flags): dirfd is an int to the kernel */
    int r = sg_notif_path(req->pid, memfd, at ? (int)req->data.args[0] : AT_FDCWD,
                          req->data.args[at ? 1 : 0],
                          at ? (int)(req->data.args[4] & AT_EMPTY_PATH) : 0, q->subject,
                          sizeof q->subject);
    if (r < 0)
        return r;
    /* every argument, whole, as quoted words that read back exactly; what
     * does not fit (or cannot be read) marks the request cut: asked, never
     * matched on the part that fit */
    unsigned long long argvp = req->data.args[at ? 2 : 1];
    struct sg_buf b;
    sg_buf_init(&b, SG_PREQ_ARGS_MAX);
    char *arg = sg_xmalloc(SG_PREQ_ARGS_MAX + 1);
    argv0_of(memfd, argvp, q, arg);
    for (unsigned i = 1; argvp; i++) { /* argv[0] is the program's own name */
        unsigned long long ap = 0;
        if (pread(memfd, &ap, sizeof ap, (off_t)(argvp + i * 8ull)) != (ssize_t)sizeof ap) {
            q->cut = true; /* an argv the kernel would refuse too: not read past */
            break;
        }
        if (!ap)
            break;
        if (sg_notif_read_str(memfd, ap, arg, SG_PREQ_ARGS_MAX + 1) < 0 || b.dropped) {
            q->cut = true;
            break;
        }
        if (i > 1)
            sg_buf_append(&b, " ", 1);
        sg_shell_quote(&b, arg, false);
    }
    free(arg);
    sg_buf_append(&b, "", 1);
    if (b.dropped || !b.data)
        q->cut = true;
    if (!q->cut)
        SG_PREQ_SET(q, args, b.data);
    sg_buf_free(&b);
    return 0;
}

/* The program as scopes name it (Bash(ls:*) means the ls a shell finds):
 * its base name when that name on the sandbox's PATH leads to this very
 * file, else its whole path. A symlink named ls to python3, a copied shell
 * named ls, or ./ls are not ls. */
static void scope_name(pid_t pid, const struct sg_plan *plan, const char *program, char *out,
                       size_t max)
{
    snprintf(out, max, "%s", program);
    const char *base = strrchr(program, '/');
    base = base ? base + 1 : program;
    const char *path = NULL;
    for (size_t i = 0; i < plan->nenv && !path; i++)
        if (sg_str_has_prefix(plan->envp[i], "PATH="))
            path = plan->envp[i] + 5;
    struct stat want, got;
    int fd = sg_notif_open(pid, program, O_PATH, true);
    if (!path || !*base || fd < 0)
        goto out;
    if (fstat(fd, &want) < 0)
        goto out;
    for (const char *d = path; *d;) {
        const char *e = strchrnul(d, ':');
        char cand[PATH_MAX];
        if (e > d && snprintf(cand, sizeof cand, "%.*s/%s", (int)(e - d), d, base) <
                         (int)sizeof cand) {
            int c = sg_notif_open(pid, cand, O_PATH, true);
            if (c >= 0) {
                bool hit = fstat(c, &got) == 0 && S_ISREG(got.st_mode) && (got.st_mode & 0111);
                bool same_file = hit && got.st_dev == want.st_dev && got.st_ino == want.st_ino;
                close(c);
                if (hit) { /* the first executable hit is what a shell runs */
                    if (same_file)
                        snprintf(out, max, "%s", base);
                    break;
                }
            }
        }
        d = *e ? e + 1 : e;
    }
out:
    if (fd >= 0)
        close(fd);
}

/* The manifest's Bash(scope) this exec matches, or NULL. */
static const char *exec_declared(const struct sg_tools *tools, const struct sg_preq *q)
{
    for (size_t i = 0; i < tools->nbash_scopes; i++) {
        cleanup_free char *text = sg_xasprintf("Bash(%s)", tools->bash_scopes[i]);
        struct sg_prule r;
        const char *why;
        if (sg_prule_parse(text, SG_EFF_ALLOW, "manifest", &r, &why) < 0)
            continue;
        bool m = sg_prule_matches(&r, q);
        sg_prule_free(&r);
        if (m)
            return tools->bash_scopes[i];
    }
    return NULL;
}

/* ---- one program, one request ---- */

/* Why a program file (by its base name) runs another that no exec shows,
 * or NULL: the dynamic loader maps the program it is given; a multi-call
 * program runs the applet its argv[0] names (exec -a touch busybox),
 * which the kernel takes from the caller's memory. */
static const char *runs_another(const char *base)
{
    if (sg_str_has_prefix(base, "ld-linux") || sg_str_has_prefix(base, "ld.so") ||
        (sg_str_has_prefix(base, "ld-") && strstr(base, ".so")))
        return "the dynamic loader runs the program it is given, which no rule then sees";
    if (!strcmp(base, "busybox"))
        return "busybox runs the program its argv[0] names, which no rule can read safely";
    if (!strcmp(base, "toybox"))
        return "toybox runs the program its argv[0] names, which no rule can read safely";
    return NULL;
}

/* path with its symlinks resolved in pid's view, a component at a time
 * (at most 40 links, as the kernel): only the folders' (/bin/lsof is
 * /usr/bin/lsof where /bin links to usr/bin) unless last, when the final
 * name's too. Rules and scopes name a program by its last name as written
 * (awk, not the mawk it links to), so the request keeps it. 0, or -errno
 * with out untouched. */
static int resolve_links(pid_t pid, const char *path, bool last, char *out, size_t max)
{
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || !slash)
        return -EINVAL;
    size_t dl = last ? strlen(path) : (size_t)(slash - path);
    char todo[PATH_MAX], cur[PATH_MAX] = "", next[PATH_MAX];
    if (dl >= sizeof todo)
        return -ENAMETOOLONG;
    memcpy(todo, path, dl);
    todo[dl] = '\0';
    int links = 0;
    for (const char *t = todo; *t;) {
        while (*t == '/')
            t++;
        size_t k = strcspn(t, "/"), cl = strlen(cur);
        if (!k)
            break;
        char name[NAME_MAX + 1];
        if (k > NAME_MAX || cl + 1 + k >= sizeof cur)
            return -ENAMETOOLONG;
        memcpy(name, t, k);
        name[k] = '\0';
        t += k;
        if (!strcmp(name, "."))
            continue;
        if (!strcmp(name, "..")) {
            char *up = strrchr(cur, '/');
            if (up)
                *up = '\0'; /* "" stays "": /.. is / */
            continue;
        }
        snprintf(cur + cl, sizeof cur - cl, "/%s", name);
        struct stat st;
        int r = sg_notif_lstat(pid, cur, &st);
        if (r < 0)
            return r;
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > 40)
            return -ELOOP;
        cur[cl] = '\0';
        int dfd = sg_notif_open(pid, cl ? cur : "/", O_PATH | O_DIRECTORY, true);
        if (dfd < 0)
            return dfd;
        char target[PATH_MAX];
        ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
        int e = errno;
        close(dfd);
        if (n <= 0)
            return n < 0 ? -e : -ENOENT;
        target[n] = '\0';
        int w = snprintf(next, sizeof next, "%s/%s", target, t);
        if (w < 0 || (size_t)w >= sizeof next)
            return -ENAMETOOLONG;
        memcpy(todo, next, (size_t)w + 1);
        t = todo;
        if (target[0] == '/')
            cur[0] = '\0';
    }
    int w = snprintf(out, max, "%s%s", last && cur[0] ? cur : last ? "/" : cur,
                     last ? "" : slash);
    return w < 0 || (size_t)w >= max ? -ENAMETOOLONG : 0;
}

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Two paths in pid's view that lead to one file. */
static bool same_in_view(pid_t pid, const char *a, const char *b)
{
    struct stat sa, sb;
    int fa = sg_notif_open(pid, a, O_PATH, true);
    int fb = fa < 0 ? -1 : sg_notif_open(pid, b, O_PATH, true);
    bool same = fb >= 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 &&
                sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return same;
}

/* An interpreter or shell is quiet only running a file: its first argument
 * a regular file in pid's view, no option before it (-c CODE, -e CODE, a
 * script on stdin, "-" are code the command line or a pipe feeds it). */
static bool file_it_runs(pid_t pid, const struct sg_preq *q, char *path, size_t max);

static bool runs_a_file(pid_t pid, const struct sg_preq *q)
{
    char path[PATH_MAX];
    return file_it_runs(pid, q, path, sizeof path);
}

/* The same, with that file's path in pid's view (path, max). */
static bool file_it_runs(pid_t pid, const struct sg_preq *q, char *path, size_t max)
{
    struct sg_shell sh;
    const char *why;
    if (!q->args[0] || sg_shell_parse(q->args, &sh, &why) < 0)
        return false;
    bool ok = false;
    if (sh.n == 1 && sh.cmds[0].argc && sh.cmds[0].argv[0][0] != '-') {
        struct stat st;
        int fd = sg_notif_join(pid, AT_FDCWD, sh.cmds[0].argv[0], 0, path, max) < 0
                     ? -1
                     : sg_notif_open(pid, path, O_PATH, true);
        ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (fd >= 0)
            close(fd);
    }
    sg_shell_free(&sh);
    return ok;
}

/* The file the kernel runs is the system's: root's, writable by no one
 * else, and where the skill may write nothing (not a venv in a declared
 * write path, nor its private /tmp): a copy of id named sort is id. */
static bool system_file(const struct sg_plan *p, pid_t pid, const char *real)
{
    struct stat st;
    int fd = sg_notif_open(pid, real, O_PATH, true);
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 &&
              !(st.st_mode & (S_IWGRP | S_IWOTH)) && !sg_writes_writable(p, real);
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Why the skill may run q's program without a question (config.h,
 * quiet_programs), or NULL. On the file the kernel runs, never argv[0]:
 * q->name is a bare name only when that name on the sandbox's PATH is this
 * very file (scope_name), and the approval is bound to it (allow_bound);
 * the file's own name, every link followed, must not be one that reaches
 * out (a sort that links to curl is curl). */
static const char *quiet_program(const struct sg_exec *x, pid_t pid, const struct sg_preq *q)
{
    char real[PATH_MAX];
    if (!x->nquiet || q->cut || q->unsure || resolve_links(pid, q->subject, true, real,
                                                           sizeof real) < 0)
        return NULL;
    if (sg_quiet_never(base_of(real)) || sg_quiet_never(base_of(q->subject)))
        return NULL;
    /* a copy the skill could have put there is not the program it names;
     * nor is a name in a folder it writes (a link it may flip between the
     * check and the exec: /tmp/b/sort -> sort, then curl) */
    if (!system_file(x->plan, pid, real) || sg_writes_writable(x->plan, q->subject))
        return NULL;
    bool code = sg_program_runs_any_code(real) || sg_program_runs_any_code(q->subject);
    const char *n = q->name;
    bool listed = false;
    for (size_t i = 0; i < x->nquiet && !listed && !strchr(n, '/'); i++)
        listed = !strcmp(x->quiet[i], n);
    /* awk and xargs are of the built-in set: what they run is an exec
     * of its own, asked on its own */
    if (listed && (!code || sg_quiet_builtin(n) || runs_a_file(pid, q)))
        return "an ordinary program (config: quiet_programs)";
    /* the interpreter the run itself was started with, running a file */
    const struct sg_plan *p = x->plan;
    if (code && runs_a_file(pid, q) &&
        ((p->exec_path && p->exec_path[0] == '/' && same_in_view(pid, p->exec_path, q->subject)) ||
         (p->python && same_in_view(pid, p->python, q->subject))))
        return "the run's own interpreter, running a file (config: quiet_programs)";
    return NULL;
}

/* Why q runs without a question under a person's "this program and what
 * it runs" answer, or NULL: pid is (or descends from) the process of such
 * a program, and q's file is the system's (root's, where the skill writes
 * nothing: not a file it put there), by every name the exec takes; a
 * shell or interpreter only running such a file (sh -c CODE, python -c
 * are code its arguments carry: asked on their own). Caller frees. */
static pid_t tgid_of(pid_t tid);

/* path is beneath dir (or is dir) */
static bool beneath(const char *path, const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n && !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* A file a program of the tree may run (name, and real its links
 * followed): the system's (root's, writable by no one else), where the
 * skill writes nothing, and none of the person's or the skill's (its
 * folder, the home, the working folder: a skill installed by root is
 * root's too), nor a loader or a multi-call program. */
static bool tree_file(const struct sg_exec *x, pid_t pid, const char *name, const char *real)
{
    const struct sg_plan *p = x->plan;
    const char *home = sg_invoking_home();
    const char *mine[] = {p->skill_root, p->cwd, home};
    for (size_t i = 0; i < SG_ARRAY_LEN(mine); i++)
        if (mine[i] && mine[i][0] == '/' && (beneath(name, mine[i]) || beneath(real, mine[i])))
            return false;
    return !runs_another(base_of(name)) && !runs_another(base_of(real)) &&
           system_file(p, pid, real) && !sg_writes_writable(p, name) &&
           !sg_writes_writable(p, real);
}

/* A program that runs what its arguments, input or settings tell it to:
 * a shell or interpreter (by any variant of its name: vim.basic,
 * gdb-multiarch, python3-dbg), a launcher whose command is its argument
 * (ionice, flock, taskset, chrt, script, watch ...), or one of a list
 * that runs a command or loads code an option names (sqlite3's .shell,
 * openssl -engine, gcc -fplugin, git -c alias, tar --to-command, sed's
 * e, ssh's ProxyCommand ...). "Any arguments" of it is any program. */
static bool runs_what_it_is_told(const char *path)
{
    static const char *const told[] = {
        "sqlite3", "ed", "red", "m4", "dc", "bc", "openssl", "gcc", "cc", "c++", "g++",
        "clang", "clang++", "cpp", "ld", "git", "tar", "sed", "rsync", "cmake", "make", "find",
        "ssh", "scp", "sftp", "prlimit", "eatmydata", "fakeroot", "parallel", "expect",
        "less", "more", "man", "nano", "pico", "mutt", "ftp", "lftp", "zip", "unzip",
        "dpkg", "apt", "apt-get", "pip", "pip3", "npm", "npx", "node", "systemd-run",
        "run-parts", "start-stop-daemon", "su", "sudo", "sg", "newgrp", "runuser", "valgrind",
        "ltrace", "strace", "perf", "time", "xdg-open", "sensible-browser", "x-www-browser"};
    const char *b = base_of(path);
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)strcspn(b, ".-"), b);
    if (sg_program_runs_any_code(b) || (stem[0] && sg_program_runs_any_code(stem)))
        return true;
    char *argv[] = {(char *)b, (char *)"x", NULL}, *argv2[] = {stem, (char *)"x", NULL};
    size_t at;
    if (sg_shell_launches(argv, 2, &at) != SG_LAUNCH_NONE ||
        (stem[0] && sg_shell_launches(argv2, 2, &at) != SG_LAUNCH_NONE))
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(told); i++)
        if (!strcmp(b, told[i]) || !strcmp(stem, told[i]))
            return true;
    return false;
}

/* Whether "this program" may be offered for q: a file the tree may run
 * that runs nothing its arguments name, in a profile that lets no
 * process reach into another (not permissive, which allows ptrace). */
static bool offer_program(const struct sg_exec *x, pid_t pid, const struct sg_preq *q)
{
    char real[PATH_MAX];
    return !q->cut && !q->unsure && x->plan->profile != SG_SECCOMP_PERMISSIVE &&
           resolve_links(pid, q->subject, true, real, sizeof real) == 0 &&
           tree_file(x, pid, q->subject, real) && !runs_what_it_is_told(real) &&
           !runs_what_it_is_told(q->subject);
}

/* A POSIX shell given -c and a line the reader reads whole (popen's "sh
 * -c 'paperconf 2>/dev/null'"): every program of it is an exec of its own,
 * checked again; a line with expansions, builtins that change lookup or a
 * grammar the reader does not model is not. */
/* line without its redirections to /dev/null and between descriptors
 * (popen's "paperconf 2>/dev/null", "2>&1"), outside quotes, into out;
 * false when it holds another redirection (a file: a write of its own,
 * but a grammar the reader does not take) or does not fit. */
static bool without_null_redirections(const char *line, char *out, size_t max)
{
    size_t n = strlen(line);
    if (n >= max)
        return false;
    memcpy(out, line, n + 1);
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = out[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < n)
                i++;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            continue;
        }
        if (c == '\\') {
            i++;
            continue;
        }
        if (c != '<' && c != '>')
            continue;
        size_t start = i;
        if (start > 0 && out[start - 1] >= '0' && out[start - 1] <= '9')
            start--;
        if (start > 0 && out[start - 1] != ' ' && out[start - 1] != '\t')
            return false; /* part of a word: not a plain redirection */
        size_t j = i + 1;
        if (c == '>' && out[j] == '>')
            j++;
        static const char *const to[] = {"/dev/null", "&1", "&2", "&0"};
        size_t k = 0, len = 0;
        for (; k < SG_ARRAY_LEN(to); k++)
            if (!strncmp(out + j, to[k], len = strlen(to[k])))
                break;
        if (k == SG_ARRAY_LEN(to) || (out[j + len] && out[j + len] != ' ' &&
                                      out[j + len] != '\t'))
            return false;
        memset(out + start, ' ', j + len - start);
        i = j + len - 1;
    }
    return !quote;
}

static bool shell_line_read_whole(const char *real, const struct sg_preq *q)
{
    /* dash, or bash run as sh (a posix shell that reads no rc file:
     * bash -c may source the home's .bashrc, which the skill writes) */
    const char *b = base_of(real);
    if (strcmp(b, "dash") &&
        !(!strcmp(b, "bash") && !strcmp(base_of(q->subject), "sh") && !q->argv0[0]))
        return false;
    struct sg_shell args, line;
    const char *why;
    if (sg_shell_parse(q->args, &args, &why) < 0)
        return false;
    static char plain[SG_PREQ_ARGS_MAX + 1];
    /* -c, then the line itself: a word starting with - or + there is
     * another option (sh -c -- LINE, bash -c -i), and the line is later */
    bool ok = args.n == 1 && args.cmds[0].argc >= 2 && !strcmp(args.cmds[0].argv[0], "-c") &&
              args.cmds[0].argv[1][0] != '-' && args.cmds[0].argv[1][0] != '+' &&
              without_null_redirections(args.cmds[0].argv[1], plain, sizeof plain) &&
              sg_shell_parse(plain, &line, &why) == 0;
    sg_shell_free(&args);
    if (!ok)
        return false;
    bool moved = false;
    for (size_t i = 0; ok && i < line.n; i++)
        ok = sg_shell_read_whole_in(line.cmds[i].argv, line.cmds[i].argc, &moved, &why);
    sg_shell_free(&line);
    return ok;
}

static char *under_allowed(const struct sg_exec *x, pid_t pid, const struct sg_preq *q)
{
    char real[PATH_MAX];
    pid_t tgid = x->tree.n ? tgid_of(pid) : -1;
    const struct sg_exectree_root *root = tgid > 0 ? sg_exectree_of(&x->tree, tgid) : NULL;
    if (!root || q->cut || q->unsure || resolve_links(pid, q->subject, true, real,
                                                      sizeof real) < 0)
        return NULL;
    if (!tree_file(x, pid, q->subject, real))
        return NULL;
    /* an interpreter in the tree only through a system script's #! line
     * (the exec names the script) or a shell's -c line read whole: a
     * system module takes code in its arguments too (timeit, pdb) */
    if ((runs_what_it_is_told(real) || runs_what_it_is_told(q->subject)) &&
        !shell_line_read_whole(real, q))
        return NULL;
    return sg_xasprintf("your answer for this run: %s, with the programs of root's it runs "
                        "(pid %d started it)", root->rule, (int)root->pid);
}

/* ---- binding an approval to the file ---- */

static int ident_of(int fd, struct ident *id)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    id->dev = st.st_dev, id->ino = st.st_ino;
    return S_ISREG(st.st_mode) ? 0 : -EACCES;
}

static bool same(const struct ident *a, const struct stat *st)
{
    return a->ino && a->dev == st->st_dev && a->ino == st->st_ino;
}

/* The approved program as a file in pid's view; for a script, its
 * interpreter too (one level, as the kernel reads the first line). */
/* The program's #! interpreter as the kernel takes it (interp, its first
 * word): 1 for a script, 0 for a binary, or -errno. With file, the
 * program's identity too. */
static int shebang_of(pid_t pid, const char *program, char *interp, size_t max, char *arg,
                      size_t argmax, struct ident *file)
{
    /* O_PATH first: a FIFO or a device named as the program must not block
     * or wake anything; only a regular file is read, through its inode */
    int fd = sg_notif_open(pid, program, O_PATH, true);
    if (fd < 0)
        return fd;
    int r = file ? ident_of(fd, file) : 0;
    char self[64], head[256];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    int rd = r == 0 ? open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -1;
    /* unreadable to the broker (execute-only): the kernel cannot run it as
     * a script either, so it is checked as a binary */
    ssize_t n = rd >= 0 ? pread(rd, head, sizeof head - 1, 0) : -1;
    if (rd >= 0)
        close(rd);
    close(fd);
    if (r < 0)
        return r;
    if (n < 2 || head[0] != '#' || head[1] != '!')
        return 0;
    head[n] = '\0';
    head[strcspn(head, "\n")] = '\0';
    char *i = head + 2;
    while (*i == ' ' || *i == '\t')
        i++;
    char *a = i + strcspn(i, " \t");
    if (*a)
        *a++ = '\0';
    while (*a == ' ' || *a == '\t')
        a++;
    /* the rest of the line, blanks at its end dropped, is one argument */
    size_t al = strlen(a);
    while (al && (a[al - 1] == ' ' || a[al - 1] == '\t'))
        a[--al] = '\0';
    snprintf(interp, max, "%s", i);
    if (arg)
        snprintf(arg, argmax, "%s", a);
    return 1;
}

static int approved_file(pid_t pid, const char *program, struct pending *pe)
{
    char i[PATH_MAX], a[SG_SHEBANG_ARG_MAX];
    pe->argstart = 1;
    int r = shebang_of(pid, program, i, sizeof i, a, sizeof a, &pe->file);
    if (r <= 0)
        return r;
    if (i[0] != '/')
        return -ENOEXEC; /* the kernel runs only absolute interpreters */
    pe->script = true;
    pe->argstart = a[0] ? 3 : 2;
    snprintf(pe->sharg, sizeof pe->sharg, "%s", a);
    int fd = sg_notif_open(pid, i, O_PATH, true);
    if (fd < 0)
        return fd;
    r = ident_of(fd, &pe->interp);
    close(fd);
    return r;
}

static pid_t tgid_of(pid_t tid)
{
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%d/status", (int)tid);
    if (sg_read_proc(p, buf, sizeof buf) < 0)
        return -1;
    const char *t = strstr(buf, "\nTgid:");
    return t ? (pid_t)strtol(t + 6, NULL, 10) : -1;
}

/* Allowed: bind it to the file, then let the call go on. */
static void allow_bound_tree(struct sg_exec *x, uint64_t id, pid_t pid, const struct sg_preq *q,
                             bool via_dirfd, const char *tree, bool member);

static void allow_bound(struct sg_exec *x, uint64_t id, pid_t pid, const struct sg_preq *q,
                        bool via_dirfd)
{
    allow_bound_tree(x, id, pid, q, via_dirfd, NULL, false);
}

/* The same; tree: the answer whose program this is (its process becomes a
 * root once the new image is the approved file), or NULL; member: allowed
 * as a program of a tree's. Any other exec of a tree's process takes it
 * out of the tree (a barrier), with its children. */
static void allow_bound_tree(struct sg_exec *x, uint64_t id, pid_t pid, const struct sg_preq *q,
                             bool via_dirfd, const char *tree, bool member)
{
    const char *program = q->subject;
    if (x->waitkill < 0)
        x->waitkill = sg_notif_waits_killable();
    if (!x->waitkill) {
        refuse(x, id, pid, program, -EACCES, "cannot bind the approval to the program",
               "this kernel (before 5.19) cannot hold an exec while the broker checks what "
               "runs, so an approved program could be swapped; unscoped Bash is needed here");
        return;
    }
    if (x->npend == MAX_PENDING) {
        refuse(x, id, pid, program, -EAGAIN, "too many execs at once",
               "too many execs are being checked at once");
        return;
    }
    struct pending *pe = &x->pend[x->npend];
    memset(pe, 0, sizeof *pe);
    snprintf(pe->program, sizeof pe->program, "%s", program);
    snprintf(pe->tree, sizeof pe->tree, "%s", tree ? tree : "");
    int r = approved_file(pid, program, pe);
    if (r < 0) { /* the exec would fail too; a flipped path must not make it succeed */
        respond(x, id, r, false);
        return;
    }
    if (pe->script && via_dirfd) {
        refuse(x, id, pid, program, -EACCES, "cannot bind the approval to the program",
               "a script run through a folder descriptor reaches its interpreter by a name "
               "the broker cannot check; run it by its path");
        return;
    }
    pe->tid = pid;
    pe->tgid = tgid_of(pid);
    if (pe->tgid <= 0) {
        respond(x, id, -ESRCH, false);
        return;
    }
    pe->member = member;
    pe->bar = !member && !pe->tree[0] && x->tree.n && sg_exectree_of(&x->tree, pe->tgid);
    if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0) {
        char why[160];
        snprintf(why, sizeof why, "the broker cannot watch it start (ptrace: %s)",
                 strerror(errno));
        refuse(x, id, pid, program, -EACCES, "cannot bind the approval to the program", why);
        return;
    }
    /* the trap comes when the call returns: after the new image is in
     * place (EXEC stop first) or after the exec failed */
    if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) {
        ptrace(PTRACE_DETACH, pid, 0, 0);
        respond(x, id, -EACCES, false);
        return;
    }
    pe->deadline_ms = mono_ms() + PENDING_MS;
    pe->args = sg_xstrdup(q->args);
    snprintf(pe->argv0, sizeof pe->argv0, "%s", q->argv0);
    x->npend++;
    respond(x, id, 0, true);
}

/* Whether the execve w waits for is gone (sg_perm_request_watched). */
static const char *exec_gone(void *ctx)
{
    const struct exec_wait *w = ctx;
    return seccomp_notify_id_valid(w->x->fd, w->id) != 0 ? sg_notif_gone_why() : NULL;
}

static void exec_decided(void *ctx, enum sg_decision d)
{
    struct exec_wait *w = ctx;
    if (sg_decision_allows(d))
        allow_bound_tree(w->x, w->id, w->pid, &w->bind, w->via_dirfd,
                         w->limited || w->x->plan->profile == SG_SECCOMP_PERMISSIVE
                             ? NULL
                             : sg_perm_tree_rule(w->x->perm, &w->q),
                         false);
    else
        respond(w->x, w->id, -EACCES, false);
    free(w);
}

/* The file pid's view names by path, as (device, inode); false when
 * there is none. */
static bool file_ident(pid_t pid, const char *path, struct stat *st)
{
    int fd = sg_notif_open(pid, path, O_PATH, true);
    if (fd < 0)
        return false;
    bool ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode);
    close(fd);
    return ok;
}

/* The same request about another program file (subject, named by name). */
static void about(const struct sg_preq *q, const char *subject, const char *name,
                  const char *args, struct sg_preq *out)
{
    *out = *q;
    SG_PREQ_SET(out, subject, subject);
    SG_PREQ_SET(out, name, name);
    if (args)
        SG_PREQ_SET(out, args, args);
}

/* Whether a rule limits the program file q names by another name: the
 * dynamic loader (which maps the program it is given with no execve the
 * broker sees) is asked; the file its links lead to; a name a rule's
 * program has on PATH (or its own path) that is this very file. v is then
 * the request about that name. */
static bool limited_file(struct sg_exec *x, pid_t pid, const struct sg_plan *plan,
                         const struct sg_preq *q, const char *const *progs, size_t np,
                         struct sg_preq *v, char *by, size_t bylen)
{
    char full[PATH_MAX], name[256];
    int fr = resolve_links(pid, q->subject, true, full, sizeof full);
    const char *bases[] = {base_of(q->subject), fr == 0 ? base_of(full) : ""};
    for (size_t i = 0; i < 2; i++) {
        const char *why = runs_another(bases[i]);
        if (why) {
            snprintf(by, bylen, "%s", why);
            *v = *q;
            return true;
        }
    }
    if (fr == 0 && strcmp(full, q->subject)) {
        scope_name(pid, plan, full, name, sizeof name);
        about(q, full, name, NULL, v);
        if (!v->cut && sg_perm_limits(x->perm, v, by, bylen) != SG_EFF_ALLOW)
            return true;
    }
    struct stat want, got;
    const char *path = NULL;
    for (size_t i = 0; i < plan->nenv && !path; i++)
        if (sg_str_has_prefix(plan->envp[i], "PATH="))
            path = plan->envp[i] + 5;
    if (!file_ident(pid, q->subject, &want))
        return false;
    for (size_t k = 0; k < np; k++) {
        bool own = progs[k][0] == '/';
        const char *d = own ? "" : path ? path : "";
        do { /* the rule's own path, or each PATH folder holding its name */
            const char *e = own ? d : strchrnul(d, ':');
            char cand[PATH_MAX] = "";
            if (own)
                snprintf(cand, sizeof cand, "%s", progs[k]);
            else if (e == d || snprintf(cand, sizeof cand, "%.*s/%s", (int)(e - d), d,
                                        progs[k]) >= (int)sizeof cand)
                cand[0] = '\0';
            if (cand[0] == '/' && file_ident(pid, cand, &got) && got.st_dev == want.st_dev &&
                got.st_ino == want.st_ino) {
                about(q, cand, progs[k], NULL, v);
                if (!v->cut && sg_perm_limits(x->perm, v, by, bylen) != SG_EFF_ALLOW)
                    return true;
            }
            d = *e ? e + 1 : e;
        } while (*d && !own);
    }
    return false;
}

/* A deny or ask rule names a program by its file, however the exec
 * reaches it (issue 51): by any name of the file (limited_file), and for
 * a script, its #! interpreter, which the kernel runs with the line's
 * argument, the script and its words, checked the same way. q becomes
 * the request about the name that is limited; false when none is. A copy
 * of a file under another name is another file: no rule names it (said in
 * the manual). */
static bool limited_by_another_name(struct sg_exec *x, pid_t pid, const struct sg_plan *plan,
                                    struct sg_preq *q, char *by, size_t bylen)
{
    const char *progs[64];
    size_t np = sg_perm_limit_programs(x->perm, progs, SG_ARRAY_LEN(progs));
    if (!np)
        return false;
    struct sg_preq *v = sg_xmalloc(sizeof *v), *iq = sg_xmalloc(sizeof *iq);
    bool hit = limited_file(x, pid, plan, q, progs, np, v, by, bylen);
    char interp[PATH_MAX], arg[SG_SHEBANG_ARG_MAX], name[256];
    if (!hit && shebang_of(pid, q->subject, interp, sizeof interp, arg, sizeof arg, NULL) == 1 &&
        interp[0] == '/') {
        struct sg_buf b;
        sg_buf_init(&b, SG_PREQ_ARGS_MAX + 1);
        if (arg[0]) {
            sg_shell_quote(&b, arg, false);
            sg_buf_append(&b, " ", 1);
        }
        sg_shell_quote(&b, q->subject, false);
        if (q->args[0]) {
            sg_buf_append(&b, " ", 1);
            sg_buf_append(&b, q->args, strlen(q->args));
        }
        sg_buf_append(&b, "", 1);
        scope_name(pid, plan, interp, name, sizeof name);
        about(q, interp, name, b.dropped || !b.data ? "" : b.data, iq);
        iq->cut |= b.dropped || q->cut;
        sg_buf_free(&b);
        hit = iq->cut || sg_perm_limits(x->perm, iq, by, bylen) != SG_EFF_ALLOW;
        if (hit)
            *v = *iq; /* not shown whole, or limited by its own name: asked */
        else
            hit = limited_file(x, pid, plan, iq, progs, np, v, by, bylen);
    }
    if (hit)
        *q = *v;
    free(v);
    free(iq);
    return hit;
}

void sg_exec_handle(struct sg_exec *x, const struct seccomp_notif *req, bool at)
{
    struct sg_preq q;
    int r = exec_request(req, at, &q);
    if (seccomp_notify_id_valid(x->fd, req->id) != 0)
        return; /* the thread is gone, or the call was interrupted */
    if (r < 0) {
        /* a path that cannot be named exactly is not run: the kernel's own
         * answer where it has one (ENOTDIR, ENOENT, ENAMETOOLONG) */
        if (r == -EFAULT)
            respond(x, req->id, r, false);
        else
            refuse(x, req->id, req->pid, "?", r, "unresolvable program path", strerror(-r));
        return;
    }
    const struct sg_plan *plan = x->plan;
    bool via_dirfd = at && (int)req->data.args[0] != AT_FDCWD;
    /* nothing there (a shell trying each folder of PATH): the kernel's own
     * answer, no decision and no record; the call is refused, never
     * continued, so a path flipped meanwhile runs nothing either */
    int probe = sg_notif_open(req->pid, q.subject, O_PATH, true);
    if (probe < 0) {
        respond(x, req->id, probe, false);
        return;
    }
    close(probe);
    /* one program is one request however a path reaches it: /bin/lsof and
     * /usr/bin/lsof are shown, matched and remembered as /usr/bin/lsof */
    char canon[sizeof q.subject];
    if (resolve_links(req->pid, q.subject, false, canon, sizeof canon) == 0)
        memcpy(q.subject, canon, sizeof canon);
    scope_name(req->pid, plan, q.subject, q.name, sizeof q.name);
    /* every exec decision is recorded, the manifest's own included */
    const struct sg_tools *tools = sg_perm_tools(x->perm);
    /* the person's deny and ask rules come before what the manifest
     * declares: a declared program they deny is asked for, and denied */
    char lby[512];
    cleanup_free struct sg_preq *orig = sg_xmalloc(sizeof *orig); /* what the kernel got */
    *orig = q;
    const char *lp[1];
    bool rules_name_programs = x->perm && sg_perm_limit_programs(x->perm, lp, 1) > 0;
    /* a name not its own matters where a rule or a scope tells programs
     * apart: there it is asked, matched by none */
    if (q.argv0[0] && (rules_name_programs || !tools->bash_unscoped) &&
        !argv0_is_the_files(req->pid, &q))
        q.unsure = true;
    bool limited = x->perm && sg_perm_limits(x->perm, &q, lby, sizeof lby) != SG_EFF_ALLOW;
    limited = limited || (x->perm && limited_by_another_name(x, req->pid, plan, &q, lby,
                                                             sizeof lby));
    if (limited)
        ; /* to the engine below */
    else if (tools->bash_unscoped) { /* every program may run */
        sg_perm_record(x->perm, &q, SG_DEC_ALLOW_ONCE,
                       plan->wrap ? "skillgate wrap: every program runs that no deny or ask "
                                    "rule names"
                                  : "declared in the manifest: Bash");
        /* where rules name programs, what was checked is what runs:
         * bound to the file; else nothing to bind */
        if (rules_name_programs)
            allow_bound(x, req->id, req->pid, &q, via_dirfd);
        else
            respond(x, req->id, 0, true);
        return;
    }
    const char *scope = limited ? NULL : exec_declared(tools, &q);
    if (scope) {
        cleanup_free char *by = sg_xasprintf("declared in the manifest: Bash(%s)", scope);
        sg_perm_record(x->perm, &q, SG_DEC_ALLOW_ONCE, by);
        allow_bound(x, req->id, req->pid, &q, via_dirfd);
        return;
    }
    if (tools->restricted && !tools->bash_listed) {
        sg_perm_record(x->perm, &q, SG_DEC_DENY, "allowed-tools: Bash is not in it");
        refuse(x, req->id, req->pid, q.subject, -EACCES, "Bash is not in allowed-tools",
               "Bash is not in the skill's allowed-tools");
        return;
    }
    /* a program of root's run by one the person allowed with what it runs */
    cleanup_free char *under = limited ? NULL : under_allowed(x, req->pid, &q);
    if (under) {
        sg_perm_record(x->perm, &q, SG_DEC_ALLOW_ONCE, under);
        allow_bound_tree(x, req->id, req->pid, &q, via_dirfd, NULL, true);
        return;
    }
    /* after the person's deny and ask rules and the manifest, before a
     * question: an ordinary program (find, wc, sort), still recorded */
    const char *quiet = limited ? NULL : quiet_program(x, req->pid, &q);
    if (quiet) {
        sg_perm_record(x->perm, &q, SG_DEC_ALLOW_ONCE, quiet);
        allow_bound(x, req->id, req->pid, &q, via_dirfd);
        return;
    }
    if (!x->perm) {
        respond(x, req->id, -EACCES, false);
        return;
    }
    struct exec_wait *w = sg_xmalloc(sizeof *w);
    w->x = x, w->id = req->id, w->pid = req->pid, w->via_dirfd = via_dirfd;
    w->limited = limited;
    snprintf(w->program, sizeof w->program, "%s", orig->subject);
    q.system_program = offer_program(x, req->pid, &q);
    w->q = q;
    w->bind = *orig;
    enum sg_decision d = SG_DEC_DENY;
    if (sg_perm_request_watched(x->perm, &q, exec_decided, w, exec_gone, &d) == 1)
        exec_decided(w, d);
}

/* ---- the new image, stopped before its first instruction ---- */

/* A script: the kernel named the script to its interpreter in argv[1] or
 * argv[2] (after an interpreter argument); that name must lead to the
 * approved file. */
static bool script_is_approved(pid_t pid, const struct pending *pe)
{
    char p[64], buf[8192];
    snprintf(p, sizeof p, "/proc/%d/cmdline", (int)pid);
    ssize_t n = sg_read_proc(p, buf, sizeof buf);
    if (n < 0)
        return false;
    /* exactly where the kernel put them: argv[1] the #! line's argument
     * (when it has one), then the script's name; never a word the skill
     * chose (its own first argument could name the approved script) */
    const char *a = buf;
    for (int i = 0; i < pe->argstart - 1; i++, a += strlen(a) + 1) {
        if (a >= buf + n)
            return false;
        if (i == 1 && pe->argstart == 3 && strcmp(a, pe->sharg))
            return false;
    }
    char path[PATH_MAX];
    struct stat st;
    if (a >= buf + n || sg_notif_join(pid, AT_FDCWD, a, 0, path, sizeof path) < 0)
        return false;
    int f = sg_notif_open(pid, path, O_PATH, true);
    if (f < 0)
        return false;
    bool ok = fstat(f, &st) == 0 && same(&pe->file, &st);
    close(f);
    return ok;
}

static bool runs_approved(pid_t pid, const struct pending *pe, char *ran, size_t max)
{
    char p[64];
    struct stat st;
    snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(p, ran, max - 1);
    ran[n > 0 ? n : 0] = '\0';
    if (stat(p, &st) < 0)
        return false;
    if (same(&pe->file, &st))
        return true;
    return pe->script && same(&pe->interp, &st) && script_is_approved(pid, pe);
}

/* The arguments the new image got (/proc/PID/cmdline from word from on),
 * joined as the request joined them, equal the decided ones. The request
 * read them from the skill's memory, which another thread may change
 * before the kernel copies them: what runs must be what was decided. */
static bool args_from(const char *buf, size_t n, int from, const char *want)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_PREQ_ARGS_MAX + 1);
    int i = 0;
    for (const char *a = buf; a < buf + n; a += strlen(a) + 1, i++) {
        if (i < from)
            continue;
        if (i > from)
            sg_buf_append(&b, " ", 1);
        sg_shell_quote(&b, a, false);
    }
    sg_buf_append(&b, "", 1);
    bool same = i >= from && !b.dropped && b.data && !strcmp(b.data, want);
    sg_buf_free(&b);
    return same;
}

#define CMDLINE_MAX (4 * SG_PREQ_ARGS_MAX + 2 * PATH_MAX)

static bool args_as_decided(pid_t pid, const struct pending *pe)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/cmdline", (int)pid);
    cleanup_fd int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !pe->args)
        return false;
    cleanup_free char *buf = sg_xmalloc(CMDLINE_MAX + 1);
    size_t n = 0;
    ssize_t r;
    while (n < CMDLINE_MAX && (r = read(fd, buf + n, CMDLINE_MAX - n)) > 0)
        n += (size_t)r;
    if (n == CMDLINE_MAX || !n)
        return false; /* more than was decided on could ever be */
    if (buf[n - 1] != '\0')
        buf[n++] = '\0';
    /* a program's own argv[0] is the name decided on (its last name the
     * program's, or the one the request showed); a script's is its
     * interpreter, put there by the kernel with the #! line's argument and
     * the script's name before the arguments */
    if (!pe->script && strcmp(base_of(buf), pe->argv0[0] ? base_of(pe->argv0)
                                                         : base_of(pe->program)))
        return false;
    return args_from(buf, n, pe->argstart, pe->args);
}

static void argv_swapped(struct sg_exec *x, pid_t pid, struct pending *pe)
{
    pe->killed = true;
    kill(pid, SIGKILL);
    x->swaps++;
    cleanup_free char *a = sg_sanitize_str(pe->program, 0);
    sg_bus_emit(x->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "syscall", "execve", "pid", (int)pid,
                          "reason", "arguments swapped", "approved", pe->program, "args",
                          pe->args ? pe->args : "", "prevented", 1),
                "exec of %s was decided on other arguments than the kernel was given (they "
                "changed after the check): the process was killed before it ran",
                a);
}

/* The process dies where it stands: not one instruction of the new image
 * has run. The rest of the sandbox goes on (every retry ends the same way),
 * so a person vetting the skill sees the attempt and all it does besides. */
static void swapped(struct sg_exec *x, pid_t pid, struct pending *pe, const char *ran)
{
    pe->killed = true;
    kill(pid, SIGKILL);
    x->swaps++;
    cleanup_free char *a = sg_sanitize_str(pe->program, 0);
    cleanup_free char *b = sg_sanitize_str(ran[0] ? ran : "?", 0);
    sg_bus_emit(x->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "syscall", "execve", "pid", (int)pid,
                          "reason", "program swapped", "approved", pe->program, "ran",
                          ran[0] ? ran : "?", "prevented", 1),
                "exec of %s was approved, but the kernel was given %s (the path changed "
                "after the check): the process was killed before that program ran",
                a, b);
}

/* The tree's part of an exec stop (pid stopped before its first
 * instruction): the allowed program's process becomes a root (or it is
 * said why its children will be asked); a process leaving the tree is
 * marked, or killed there when it cannot be (no room). false when pid
 * was killed. */
static bool tree_at_exec(struct sg_exec *x, pid_t pid, struct pending *pe)
{
    char name[128] = "";
    const char *why = NULL;
    char *const *env = x->plan->envp;
    size_t nenv = x->plan->nenv;
    if (pe->tree[0] && (why = sg_exectree_add(&x->tree, pe->tgid, pe->tree, env, nenv))) {
        sg_exectree_env_unsafe(pe->tgid, env, nenv, name, sizeof name);
        cleanup_free char *a = sg_sanitize_str(pe->program, 0);
        sg_bus_emit(x->bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:s, s:i, s:s, s:s}", "program", pe->program, "answer",
                              pe->tree, "pid", (int)pid, "not_covered", why, "name", name),
                    "%s runs as allowed, but the programs it runs will be asked: %s%s%s%s", a,
                    why, name[0] ? " (" : "", name, name[0] ? ")" : "");
        return true;
    }
    /* a program of the tree runs with the environment the tree's own
     * programs gave it (LibreOffice sets URE_BOOTSTRAP); only the root's
     * came from the skill, and it was checked above */
    if (!pe->bar || (why = sg_exectree_bar(&x->tree, pe->tgid)) == NULL)
        return true;
    pe->killed = true;
    kill(pid, SIGKILL);
    cleanup_free char *a = sg_sanitize_str(pe->program, 0);
    sg_bus_emit(x->bus, SG_EV_SYSCALL_BLOCKED,
                json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "syscall", "execve", "pid", (int)pid,
                          "program", pe->program, "reason", why, "name", name, "prevented", 1),
                "%s was to run under your answer for a program and what it runs, but %s%s%s%s: "
                "killed before it ran",
                a, why, name[0] ? " (" : "", name, name[0] ? ")" : "");
    return false;
}

/* 1: settled (drop it), 0: still waiting */
static int settle(struct sg_exec *x, struct pending *pe)
{
    pid_t ids[2] = {pe->tid, pe->tgid};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && pe->tgid == pe->tid)
            break;
        int st = 0;
        pid_t w = waitpid(ids[k], &st, WNOHANG | __WALL);
        if (w <= 0)
            continue;
        if (!WIFSTOPPED(st))
            return 1; /* it died (and is reaped: its parent may wait for it now) */
        if (pe->killed)
            continue; /* SIGKILL is on its way */
        if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
            char ran[PATH_MAX];
            if (!runs_approved(w, pe, ran, sizeof ran)) {
                swapped(x, w, pe, ran);
                return 0; /* reaped when it is dead */
            }
            if (!args_as_decided(w, pe)) {
                argv_swapped(x, w, pe);
                return 0;
            }
            if (!tree_at_exec(x, w, pe))
                return 0; /* killed: reaped when it is dead */
            ptrace(PTRACE_DETACH, w, 0, 0);
            return 1;
        }
        /* no exec happened (it failed): the old image goes on, with the
         * signal it was stopped for, if any */
        int sig = (st >> 16) == 0 ? WSTOPSIG(st) : 0; /* a signal-delivery stop */
        ptrace(PTRACE_DETACH, w, 0, (void *)(long)sig);
        return 1;
    }
    if (mono_ms() > pe->deadline_ms && !pe->killed) {
        kill(pe->tgid, SIGKILL);
        sg_bus_emit(x->bus, SG_EV_SYSCALL_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:b}", "syscall", "execve", "program", pe->program,
                              "reason", "exec did not finish", "prevented", 1),
                    "exec of %s neither ran nor failed in %d s: killed", pe->program,
                    PENDING_MS / 1000);
        return 1;
    }
    return 0;
}

void sg_exec_dispatch(struct sg_exec *x)
{
    for (size_t i = 0; i < x->npend;) {
        if (settle(x, &x->pend[i])) {
            free(x->pend[i].args);
            x->pend[i] = x->pend[--x->npend];
        }
        else
            i++;
    }
}

int sg_exec_timeout(const struct sg_exec *x)
{
    return x && x->npend ? 1 : -1;
}
