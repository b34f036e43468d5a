#include "runopts.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "config.h"
#include "homes.h"
#include "util.h"

static char opt_why[PATH_MAX + 512];

static const char *say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opt_why, sizeof opt_why, fmt, ap);
    va_end(ap);
    return opt_why;
}

/* Variables skillgate sets itself (sandbox/plan.c): never the host's. */
static const char *const set_by_skillgate[] = {
    "SKILL_ID", "SKILL_NAME", "SKILL_INPUT", "SKILL_ROOT", "TIMEOUT_MS", "PATH", "HOME",
    "TMPDIR", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV"};

static bool env_name_ok(const char *n)
{
    size_t len = strlen(n);
    bool ok = len > 0 && len <= 128 && (isalpha((unsigned char)n[0]) || n[0] == '_');
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)n[i]) || n[i] == '_';
    return ok;
}

/* A name that says it holds a secret: passed when the person names it
 * (that is the point), and said. */
bool sg_runopts_secret_name(const char *n)
{
    static const char *const words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS",
                                        "CREDENTIAL", "AUTH", "PRIVATE", "SESSION", "COOKIE",
                                        /* OTEL_EXPORTER_OTLP_HEADERS: a collector's API key */
                                        "HEADERS",
                                        /* a URL or DSN with the password in it */
                                        "DATABASE_URL", "DSN", "CONNECTION_STRING", "WEBHOOK",
                                        "_PWD", "_PAT", "JWT", "CREDS", "BEARER"};
    cleanup_free char *up = sg_xstrdup(n);
    for (char *c = up; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    for (size_t i = 0; i < SG_ARRAY_LEN(words); i++)
        for (const char *at = strstr(up, words[i]); at; at = strstr(at + 1, words[i]))
            if (strcmp(words[i], "_PAT") || at[4] != 'H') /* _PAT, not _PATH */
                return true;
    /* git's configuration from the environment: a key's value may be a
     * header with a token; both halves go together */
    return !strncmp(up, "GIT_CONFIG_", 11);
}

bool sg_runopts_code_name(const char *n)
{
    static const char *const names[] = {
        "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
        "PYTHONHOME", "BASH_ENV", "ENV", "PERL5OPT", "PERL5LIB", "NODE_OPTIONS",
        "RUBYOPT", "GCONV_PATH"};
    for (size_t i = 0; i < SG_ARRAY_LEN(names); i++)
        if (!strcmp(n, names[i]))
            return true;
    return false;
}

static const char *env_lookup(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* --env NAME: a name skillgate may pass, set where it runs. */
static int check_env(const char *name, char *const *env, const char **why)
{
    if (!env_name_ok(name))
        return *why = say("--env %.80s: not an environment variable name (give the name only: "
                          "its value never goes on the command line)", name),
               -EINVAL;
    for (size_t i = 0; i < SG_ARRAY_LEN(set_by_skillgate); i++)
        if (!strcmp(name, set_by_skillgate[i]))
            return *why = say("--env %s: skillgate sets %s itself; the host's value is never "
                              "passed", name, name),
                   -EPERM;
    const char *own = sg_env_own(name);
    if (own)
        return *why = say("--env %s: %s is skillgate's own setting (%s); it is never passed to "
                          "a skill", name, name, own),
               -EPERM;
    if (!env_lookup(env, name))
        return *why = say("--env %s: %s is not set in skillgate's environment (export it "
                          "first)", name, name),
               -ENOENT;
    return 0;
}

int sg_runopts_check_write(const char *opt, const char *dir, char **out, const char **why)
{
    cleanup_free char *real = realpath(dir, NULL);
    struct stat st;
    if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
        return *why = say("%s %s: not a folder (it must exist)", opt, dir), -ENOTDIR;
    const char *home = sg_invoking_home();
    cleanup_free char *rhome = home ? realpath(home, NULL) : NULL;
    if (!strcmp(real, "/") || (rhome && !strcmp(real, rhome)))
        return *why = say("%s %s: may not be %s: the skill could change everything in "
                          "it; name the folder the output goes to", opt, dir,
                          strcmp(real, "/") ? "your home" : "/"),
               -EPERM;
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    size_t which = 0;
    enum sg_own_rel rel = sg_own_dirs_relation(&own, real, &which);
    if (rel != SG_OWN_NONE)
        *why = say("%s %s: %s skillgate's own %s folder %s, which no skill may change", opt, dir,
                   rel == SG_OWN_INSIDE ? "is in" : "holds", own.v[which].what,
                   own.v[which].path);
    sg_own_dirs_free(&own);
    if (rel != SG_OWN_NONE)
        return -EPERM;
    struct sg_agent_paths ap;
    sg_agent_paths_get(&ap);
    const struct sg_agent_path *a = NULL;
    enum sg_agent_rel arel = sg_agent_paths_relation(&ap, real, NULL, &a);
    if (arel != SG_AGENT_NONE)
        *why = say("%s %s: %s %s, %s: a skill never changes an AI agent's own files", opt, dir,
                   arel == SG_AGENT_INSIDE ? "is in" : "holds", a->path, a->what);
    sg_agent_paths_free(&ap);
    if (arel != SG_AGENT_NONE)
        return -EPERM;
    *out = steal_pointer(&real);
    return 0;
}

/* `python -m M` as from the skill's folder: sys.path[0] is that folder
 * (python -c makes it "", the working folder), then runpy runs M as -m
 * does, with sys.argv[0] the module's file and the arguments after it. */
static const char module_code[] =
    "import runpy, sys; sys.path[0] = sys.argv.pop(1); m = sys.argv.pop(1); "
    "runpy._run_module_as_main(m) if hasattr(runpy, \"_run_module_as_main\") "
    "else runpy.run_module(m, run_name=\"__main__\", alter_sys=True)";

void sg_opt_view_free(struct sg_opt_view *v, size_t nwrite0, size_t nenv0)
{
    for (size_t i = nwrite0; v->write && i < v->sk.policy.nwrite; i++) {
        free(v->write[i].path), free(v->write[i].declared);
        free(v->write[i].origin.file), free(v->write[i].origin.field);
    }
    for (size_t i = nenv0; v->env && i < v->sk.policy.nenv; i++) {
        free(v->env[i].name);
        free(v->env[i].origin.file), free(v->env[i].origin.field);
    }
    free(v->write);
    free(v->env);
    free(v->entry.command);
    for (size_t i = 0; i < v->entry.nargs; i++)
        free(v->entry.args[i]);
    free(v->entry.args);
    for (size_t i = 0; i < v->nreals; i++)
        free(v->reals[i]);
    free(v->reals);
}

/* DIR beneath the folder work, made where missing, one name at a time,
 * never through a symbolic link (a name the person's folder holds that
 * leads elsewhere is refused): its path, or NULL with *why. */
static char *cwd_folder(const char *work, const struct sg_path *w, const char **why)
{
    int fd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return *why = say("%s: the working folder %s: %s", w->declared, work, strerror(errno)),
               NULL;
    for (const char *s = w->path; *s;) {
        size_t k = strcspn(s, "/");
        char name[NAME_MAX + 1];
        if (k > NAME_MAX) {
            close(fd);
            return *why = say("%s: a name is too long", w->declared), NULL;
        }
        memcpy(name, s, k), name[k] = '\0';
        if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
            *why = say("%s: cannot make %s in %s: %s", w->declared, name, work, strerror(errno));
            close(fd);
            return NULL;
        }
        int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        if (next < 0)
            return *why = say("%s: %s in %s is no folder (or a symbolic link): %s", w->declared,
                              name, work, strerror(errno)),
                   NULL;
        fd = next;
        s += k + (s[k] == '/');
    }
    close(fd);
    return w->path[0] ? sg_xasprintf("%s/%s", work, w->path) : sg_xstrdup(work);
}

/* A folder of the system's, where a working folder's output never goes:
 * a manifest's $CWD makes no system folder writable because a person ran
 * the skill from one. */
static bool system_place(const char *real)
{
    static const char *const sys[] = {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32",
                                      "/lib64", "/libx32", "/opt", "/proc", "/run", "/sbin",
                                      "/srv", "/sys", "/usr", "/var"};
    if (!strncmp(real, "/var/tmp/", 9) || !strcmp(real, "/var/tmp"))
        return false;
    for (size_t i = 0; i < SG_ARRAY_LEN(sys); i++) {
        size_t n = strlen(sys[i]);
        if (!strncmp(real, sys[i], n) && (real[n] == '/' || real[n] == '\0'))
            return true;
    }
    return false;
}

/* Why the folder work takes no $CWD write folder of the manifest, or
 * NULL: missing, /, a system folder, a shared temporary folder (sticky
 * and writable by all: other users' and tools' files), a home or a
 * folder above one, or the skill's own folder, in it or above it (the
 * skill would rewrite its manifest and code). */
static const char *work_refused(const struct sg_opt_view *v, const char *work)
{
    cleanup_free char *rwork = realpath(work, NULL);
    struct stat st;
    if (!rwork || stat(rwork, &st) < 0)
        return "not there";
    if (!strcmp(rwork, "/") || system_place(rwork))
        return "a system folder";
    if ((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH))
        return "a temporary folder every user shares";
    struct sg_homes hs;
    sg_homes_get(&hs);
    const struct sg_home *hit = NULL;
    enum sg_home_rel hr = sg_homes_relation(&hs, rwork, &hit);
    sg_homes_free(&hs);
    if (hr != SG_HOME_NONE)
        return "a home or a folder that holds one";
    cleanup_free char *root = v->sk.root ? realpath(v->sk.root, NULL) : NULL;
    if (!root)
        return NULL;
    size_t a = strlen(root), b = strlen(rwork);
    if ((!strncmp(rwork, root, a) && (rwork[a] == '/' || !rwork[a])) ||
        (!strncmp(root, rwork, b) && (root[b] == '/' || b == 1)))
        return "the skill's own folder, in it or above it (it would rewrite its manifest and "
               "code)";
    return NULL;
}

/* Whether $CWD/DIR is there already (the dry run makes nothing). */
static bool cwd_exists(const char *work, const struct sg_path *w)
{
    cleanup_free char *p = w->path[0] ? sg_xasprintf("%s/%s", work, w->path) : sg_xstrdup(work);
    struct stat st;
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The manifest's $CWD write folders, as --write folders of work. */
static int cwd_writes(struct sg_opt_view *v, const char *work, bool dry, const char **why)
{
    struct sg_policy *pol = &v->sk.policy;
    if (!pol->ncwd_write)
        return 0;
    const char *bad = work_refused(v, work);
    if (bad) /* before anything is made in it */
        return *why = say("%s (%s:%d): the working folder %s is %s; run the skill from a "
                          "project folder (--cwd DIR)", pol->cwd_write[0].declared,
                          pol->cwd_write[0].origin.file ? pol->cwd_write[0].origin.file
                                                        : "manifest",
                          pol->cwd_write[0].origin.line, work, bad),
               -EPERM;
    for (size_t i = 0; i < pol->ncwd_write; i++) {
        const struct sg_path *cw = &pol->cwd_write[i];
        if (dry && !cwd_exists(work, cw))
            continue; /* the dry run makes nothing: the plan lacks it, said by inspect */
        cleanup_free char *dir = cwd_folder(work, cw, why);
        char *real = NULL;
        int e;
        if (!dir)
            return -EINVAL;
        cleanup_free char *opt = sg_xasprintf("%s (%s:%d)", cw->declared,
                                              cw->origin.file ? cw->origin.file : "manifest",
                                              cw->origin.line);
        if ((e = sg_runopts_check_write(opt, dir, &real, why)) < 0)
            return e;
        v->reals[v->nreals++] = real;
        if (system_place(real))
            return *why = say("%s: %s is a system folder; run the skill from a project folder "
                              "(--cwd DIR)", opt, real),
                   -EPERM;
        bool dup = false;
        for (size_t k = 0; k < pol->nwrite; k++)
            dup |= !strcmp(pol->write[k].path, real);
        if (!dup)
            v->write[pol->nwrite++] = (struct sg_path){
                .path = sg_xstrdup(real), .declared = sg_xstrdup(cw->declared),
                .origin = {.file = sg_xstrdup(cw->origin.file ? cw->origin.file : "manifest"),
                           .line = cw->origin.line, .col = cw->origin.col,
                           .field = sg_xstrdup(cw->declared)}};
    }
    return 0;
}

int sg_opt_view_make(struct sg_opt_view *v, const struct sg_skill *sk, const char *work,
                     const struct sg_run_request *rq, char *const *env, const char **why)
{
    memset(v, 0, sizeof *v);
    v->sk = *sk;
    struct sg_policy *pol = &v->sk.policy;
    int e;
    if (rq->module && rq->script)
        return *why = "--module and --script both pick what runs: give one", -EINVAL;
    if (rq->module && !sg_python_module_ok(rq->module))
        return *why = say("--module %.80s: not a Python module name (dotted names: "
                          "scripts.package_skill)", rq->module),
               -EINVAL;
    if (rq->nwrite || pol->ncwd_write) {
        v->write = sg_xcalloc(pol->nwrite + rq->nwrite + pol->ncwd_write, sizeof *v->write);
        if (pol->nwrite)
            memcpy(v->write, pol->write, pol->nwrite * sizeof *v->write);
        pol->write = v->write;
        v->reals = sg_xcalloc(rq->nwrite + pol->ncwd_write, sizeof *v->reals);
    }
    if (pol->ncwd_write && !work)
        return *why = say("%s (%s:%d): $CWD is the folder a run works in: give --cwd DIR (or "
                          "run a --script or -m from that folder)", pol->cwd_write[0].declared,
                          pol->cwd_write[0].origin.file ? pol->cwd_write[0].origin.file
                                                        : "manifest",
                          pol->cwd_write[0].origin.line),
               -EINVAL;
    if ((e = cwd_writes(v, work, rq->dry_run, why)) < 0)
        return e;
    for (size_t i = 0; i < rq->nwrite; i++) {
        char *real = NULL;
        if ((e = sg_runopts_check_write("--write", rq->write[i], &real, why)) < 0)
            return e;
        v->reals[v->nreals++] = real;
        bool dup = false;
        for (size_t k = 0; k < pol->nwrite; k++)
            dup |= !strcmp(pol->write[k].path, real);
        if (dup)
            continue; /* declared already, or given twice */
        struct sg_path *w = &v->write[pol->nwrite++];
        *w = (struct sg_path){.path = sg_xstrdup(real), .declared = sg_xstrdup(rq->write[i]),
                              .origin = {.file = sg_xstrdup("--write"),
                                         .field = sg_xstrdup(rq->write[i])}};
    }
    if (rq->nenv) {
        v->env = sg_xcalloc(pol->nenv + rq->nenv, sizeof *v->env);
        if (pol->nenv)
            memcpy(v->env, pol->env, pol->nenv * sizeof *v->env);
        pol->env = v->env;
    }
    for (size_t i = 0; i < rq->nenv; i++) {
        if ((e = check_env(rq->env[i], env, why)) < 0)
            return e;
        bool dup = false;
        for (size_t k = 0; k < pol->nenv; k++)
            dup |= !strcmp(pol->env[k].name, rq->env[i]);
        if (!dup)
            v->env[pol->nenv++] = (struct sg_envname){
                .name = sg_xstrdup(rq->env[i]), .origin = {.file = sg_xstrdup("--env")}};
    }
    if (rq->nargs && !rq->module && !rq->script) {
        /* arguments for the entrypoint (SkillSandbox's run_skill args):
         * after the manifest's own, as its runner appends them */
        if (!pol->entry.command)
            return *why = "arguments need an entrypoint, a script or a module to go to: this "
                          "skill declares no entrypoint",
                   -EINVAL;
        v->entry.command = sg_xstrdup(pol->entry.command);
        v->entry.args = sg_xcalloc(pol->entry.nargs + rq->nargs + 1, sizeof *v->entry.args);
        for (size_t i = 0; i < pol->entry.nargs; i++)
            v->entry.args[v->entry.nargs++] = sg_xstrdup(pol->entry.args[i]);
        for (size_t i = 0; i < rq->nargs; i++)
            v->entry.args[v->entry.nargs++] = sg_xstrdup(rq->args[i]);
        v->entry.origin = pol->entry.origin;
        v->entry.detected = pol->entry.detected;
        pol->entry = v->entry;
    }
    if (rq->module) {
        v->entry.command = sg_xstrdup("python3");
        v->entry.args = sg_xcalloc(4 + rq->nargs, sizeof *v->entry.args);
        v->entry.args[v->entry.nargs++] = sg_xstrdup("-c");
        v->entry.args[v->entry.nargs++] = sg_xstrdup(module_code);
        v->entry.args[v->entry.nargs++] = sg_xstrdup(sk->root);
        v->entry.args[v->entry.nargs++] = sg_xstrdup(rq->module);
        for (size_t i = 0; i < rq->nargs; i++)
            v->entry.args[v->entry.nargs++] = sg_xstrdup(rq->args[i]);
        static char origin[] = "--module";
        v->entry.origin = (struct sg_origin){.file = origin};
        pol->entry = v->entry;
    }
    return 0;
}

int sg_runopts_publish_one(const char *arg, struct sg_publish *out)
{
    long long port, host = 0;
    const char *colon = strchr(arg, ':');
    char h[8];
    if (colon) {
        size_t n = (size_t)(colon - arg);
        if (n == 0 || n >= sizeof h)
            return -EINVAL;
        memcpy(h, arg, n);
        h[n] = '\0';
        if (sg_parse_ll(h, 1024, 65535, &host) < 0)
            return -EINVAL;
    }
    if (sg_parse_ll(colon ? colon + 1 : arg, 1024, 65535, &port) < 0)
        return -EINVAL;
    *out = (struct sg_publish){.port = (uint16_t)port, .host = (uint16_t)host};
    return 0;
}

int sg_runopts_publish(const struct sg_run_request *rq, struct sg_publish *out, size_t max,
                       size_t *n, const char **why)
{
    *n = 0;
    if (rq->npublish > max)
        return *why = say("--publish at most %zu times", max), -EINVAL;
    for (size_t i = 0; i < rq->npublish; i++) {
        struct sg_publish p;
        if (sg_runopts_publish_one(rq->publish[i], &p) < 0)
            return *why = say("--publish %.40s: [HOSTPORT:]PORT, each from 1024 to 65535 (on "
                              "this machine's 127.0.0.1 only)", rq->publish[i]),
                   -EINVAL;
        for (size_t k = 0; k < *n; k++) {
            if (out[k].port == p.port)
                return *why = say("--publish: the skill's port %u is given twice", p.port),
                       -EINVAL;
            if (p.host && out[k].host == p.host)
                return *why = say("--publish: this machine's port %u is given twice", p.host),
                       -EINVAL;
        }
        out[(*n)++] = p;
    }
    return 0;
}

void sg_runopts_prompt_ports(char *const *words, struct sg_own_ports *o)
{
    for (size_t i = 0; words && words[i]; i++)
        for (const char *c = words[i]; *c;) {
            if (*c < '0' || *c > '9') {
                c++;
                continue;
            }
            unsigned long v = 0;
            for (; *c >= '0' && *c <= '9'; c++)
                if (v <= 65535)
                    v = v * 10 + (unsigned long)(*c - '0');
            if (v >= 1 && v <= 65535)
                sg_own_ports_add(o, SG_OWN_PROMPT, (uint16_t)v);
        }
}
