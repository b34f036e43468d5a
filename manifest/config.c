#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <sys/stat.h>

#include "homes.h"
#include "parse.h"
#include "skill.h"
#include "util.h"
#include "ynode.h"

/* One base folder of the XDG spec: $VAR when it is absolute (the spec says a
 * relative one is to be ignored), else HOME/fallback. The broker has always
 * put its files under /tmp when the invoking user has no home. */
static char *xdg_dir(const char *var, const char *fallback)
{
    const char *x = secure_getenv(var);
    if (x && x[0] == '/')
        return sg_xasprintf("%s/skillgate", x);
    const char *home = sg_invoking_home();
    return sg_xasprintf("%s/%s/skillgate", home ? home : "/tmp", fallback);
}

char *sg_config_dir(void)
{
    return xdg_dir("XDG_CONFIG_HOME", ".config");
}

char *sg_state_dir(void)
{
    return xdg_dir("XDG_STATE_HOME", ".local/state");
}

char *sg_config_default_path(void)
{
    cleanup_free char *dir = sg_config_dir();
    return sg_xasprintf("%s/config.yaml", dir);
}

bool sg_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (!strcmp(dir, "/"))
        return path[0] == '/';
    return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* realpath's answers while the homes are held (homes.h), per thread: a
 * plan resolves the same few folders (the skill's, the homes, /usr, /etc)
 * for each of some 150 paths it compares, and realpath reads every link
 * of the way each time (~1,000 readlink and stat calls a run). Only
 * absolute names are kept (a relative one depends on the working folder),
 * a failure as well as an answer, so each lookup gives what the first one
 * did: the same snapshot the held homes are. Bounded: past the cap a name
 * is resolved again, as it always was. */
#define REAL_MEMO_MAX 1024
struct real_memo {
    char *name, *real; /* real NULL: realpath failed */
};
static _Thread_local struct real_memo *real_memo;
static _Thread_local size_t real_memo_n, real_memo_cap;

void sg_path_real_forget(void)
{
    for (size_t i = 0; i < real_memo_n; i++) {
        free(real_memo[i].name);
        free(real_memo[i].real);
    }
    free(real_memo);
    real_memo = NULL;
    real_memo_n = real_memo_cap = 0;
}

static const struct real_memo *real_memo_find(const char *name)
{
    for (size_t i = 0; i < real_memo_n; i++)
        if (!strcmp(real_memo[i].name, name))
            return &real_memo[i];
    return NULL;
}

static void real_memo_add(const char *name, const char *real)
{
    if (real_memo_n >= REAL_MEMO_MAX)
        return;
    sg_grow(&real_memo, &real_memo_cap, real_memo_n + 1, sizeof *real_memo);
    real_memo[real_memo_n++] = (struct real_memo){.name = sg_xstrdup(name),
                                                  .real = real ? sg_xstrdup(real) : NULL};
}

static bool realpath_held(const char *name, char rp[PATH_MAX], unsigned depth);

/* name is parent/base: what realpath would find, from the parent's answer
 * P (remembered, or worked out the same way) and one readlink of P/base,
 * instead of a readlink of every folder of the way again. realpath itself
 * resolves name so: the parent, then base in it. A parent that cannot be
 * resolved has nothing below it. 1: resolved into rp; 0: realpath fails;
 * -1: base is a link, or "." or "..", or anything else: left to realpath. */
static int realpath_from_parent(const char *name, char rp[PATH_MAX], unsigned depth)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash + 1;
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || depth >= 64)
        return -1;
    cleanup_free char *up = sg_xmalloc(PATH_MAX);
    if (slash == name) {
        snprintf(up, PATH_MAX, "/");
    } else {
        cleanup_free char *parent = sg_xstrndup(name, (size_t)(slash - name));
        if (!realpath_held(parent, up, depth + 1))
            return 0;
    }
    if (snprintf(rp, PATH_MAX, "%s/%s", strcmp(up, "/") ? up : "", base) >= PATH_MAX)
        return -1;
    char c;
    if (readlink(rp, &c, 1) >= 0)
        return -1; /* a link: realpath follows it */
    return errno == EINVAL ? 1 : errno == ENOENT ? 0 : -1;
}

static bool realpath_held(const char *name, char rp[PATH_MAX], unsigned depth)
{
    if (!sg_homes_held() || name[0] != '/')
        return realpath(name, rp) != NULL;
    const struct real_memo *m = real_memo_find(name);
    if (m) {
        if (m->real)
            snprintf(rp, PATH_MAX, "%s", m->real);
        return m->real != NULL;
    }
    int known = realpath_from_parent(name, rp, depth);
    bool ok = known >= 0 ? known == 1 : realpath(name, rp) != NULL;
    real_memo_add(name, ok ? rp : NULL);
    return ok;
}

char *sg_path_real(const char *abs)
{
    cleanup_free char *cur = sg_xstrdup(abs);
    size_t len = strlen(cur);
    for (;;) {
        char rp[PATH_MAX];
        if (realpath_held(cur, rp, 0)) {
            const char *rest = abs + len;
            if (!strcmp(rp, "/") && *rest == '/')
                rest++;
            return sg_xasprintf("%s%s", rp, rest);
        }
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur)
            return sg_xstrdup(abs);
        *slash = '\0';
        len = (size_t)(slash - cur);
    }
}

static void own_add(struct sg_own_dirs *o, const char *what, char *path)
{
    if (o->n >= SG_OWN_DIRS_MAX) {
        free(path);
        return;
    }
    o->v[o->n].what = what;
    o->v[o->n].path = path;
    o->v[o->n].real = sg_path_real(path);
    o->n++;
}

void sg_own_dirs_get(struct sg_own_dirs *o)
{
    memset(o, 0, sizeof *o);
    own_add(o, "config", sg_config_dir());
    own_add(o, "state", sg_state_dir());
    /* where sandbox/launch.c keeps run directories and agent/attach.c
     * the attach socket */
    own_add(o, "runtime", sg_runtime_dir());
}

/* A folder only its owner (who is uid, or root) may write, and not a link. */
static bool private_dir(const char *path, uid_t uid)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_uid == uid || st.st_uid == 0) &&
           !(st.st_mode & 022);
}

char *sg_runtime_dir(void)
{
    const char *rt = secure_getenv("XDG_RUNTIME_DIR");
    if (rt && rt[0] == '/' && private_dir(rt, getuid()))
        return sg_xasprintf("%s/skillgate", rt);
    if (getuid() == 0 && private_dir("/run", 0))
        return sg_xstrdup("/run/skillgate");
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/run", state);
}

void sg_own_dirs_free(struct sg_own_dirs *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].path);
        free(o->v[i].real);
    }
    memset(o, 0, sizeof *o);
}

enum sg_own_rel sg_own_dirs_relation(const struct sg_own_dirs *o, const char *path,
                                     size_t *which)
{
    cleanup_free char *real = sg_path_real(path);
    for (size_t i = 0; i < o->n; i++) {
        if (sg_path_within(path, o->v[i].path) || sg_path_within(real, o->v[i].real)) {
            if (which)
                *which = i;
            return SG_OWN_INSIDE;
        }
    }
    for (size_t i = 0; i < o->n; i++) {
        if (sg_path_within(o->v[i].path, path) || sg_path_within(o->v[i].real, real)) {
            if (which)
                *which = i;
            return SG_OWN_CONTAINS;
        }
    }
    return SG_OWN_NONE;
}

/* Owned by us or by root, and writable by nobody else. */
static char *untrusted(const struct stat *st, const char *what, const char *path)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0)
        return sg_xasprintf("%s %s belongs to uid %u, not to uid %u who runs skillgate (or root)",
                            what, path, (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return sg_xasprintf("%s %s is writable by %s (mode %04o; chmod go-w fixes it)", what,
                            path, st->st_mode & S_IWOTH ? "others" : "its group",
                            (unsigned)(st->st_mode & 07777));
    return NULL;
}

int sg_read_private_file(const char *path, size_t max, char **buf, size_t *len, char **why)
{
    *buf = NULL;
    *len = 0;
    *why = NULL;
    const char *slash = strrchr(path, '/');
    cleanup_free char *dir = slash ? (slash == path ? sg_xstrdup("/")
                                                    : sg_xstrndup(path, (size_t)(slash - path)))
                                   : sg_xstrdup(".");
    const char *base = slash ? slash + 1 : path;
    /* the folder may be a link (dotfiles): what counts is the folder it is */
    cleanup_fd int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    struct stat st;
    if (fstat(dfd, &st) < 0)
        return -errno;
    if ((*why = untrusted(&st, "its folder", dir)))
        return -EPERM;
    cleanup_fd int fd = openat(dfd, base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                                              O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP) {
            *why = sg_xasprintf("%s is a symbolic link", path);
            return -EPERM;
        }
        return errno == ENOENT ? 0 : -errno;
    }
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    if ((*why = untrusted(&st, "the file", path)))
        return -EPERM;
    if ((size_t)st.st_size > max)
        return -EFBIG;
    char *b = sg_xmalloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

void sg_config_free(struct sg_config *cfg)
{
    free(cfg->path);
    for (size_t i = 0; i < cfg->nskill_dirs; i++)
        free(cfg->skill_dirs[i]);
    free(cfg->skill_dirs);
    for (size_t i = 0; i < cfg->nresolve; i++)
        free(cfg->resolve[i]);
    free(cfg->resolve);
    free(cfg->theme);
    free(cfg->hook_policy);
    for (size_t i = 0; i < cfg->nquiet_add; i++)
        free(cfg->quiet_add[i]);
    free(cfg->quiet_add);
    for (size_t i = 0; i < cfg->nquiet_remove; i++)
        free(cfg->quiet_remove[i]);
    free(cfg->quiet_remove);
    for (size_t i = 0; i < cfg->nkeys; i++) {
        free(cfg->keys[i].action);
        free(cfg->keys[i].keys);
    }
    free(cfg->keys);
    for (size_t i = 0; i < cfg->notel; i++) {
        free(cfg->otel_keys[i]);
        free(cfg->otel_vals[i]);
    }
    sg_strv_free(cfg->prompt_exec);
    sg_strv_free(cfg->hook_prompt_exec);
    memset(cfg, 0, sizeof *cfg);
}

/* skill_dirs: [DIR, ...]: ~ is the home, relative is to the config's folder. */
static void cfg_skill_dirs(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    if (v->type != SG_Y_SEQ) {
        pc_err(c, v, "skill_dirs", "must be a list of directories");
        return;
    }
    for (size_t j = 0; j < v->n; j++) {
        cleanup_free char *f = sg_xasprintf("skill_dirs[%zu]", j);
        const char *s = pc_string(c, v->kids[j], f);
        if (!s)
            continue;
        char *abs;
        const char *home = sg_invoking_home();
        if (s[0] == '~' && (s[1] == '/' || !s[1]) && home)
            abs = sg_xasprintf("%s%s", home, s + 1);
        else if (s[0] == '/')
            abs = sg_xstrdup(s);
        else {
            /* relative to the config file's folder */
            const char *slash = strrchr(c->file, '/');
            abs = slash ? sg_xasprintf("%.*s/%s", (int)(slash - c->file), c->file, s)
                        : sg_xstrdup(s);
        }
        cfg->skill_dirs = sg_xrealloc(cfg->skill_dirs, (cfg->nskill_dirs + 1) * sizeof(char *));
        cfg->skill_dirs[cfg->nskill_dirs++] = abs;
    }
}

/* theme: NAME (the TUI finds and checks it) */
static void cfg_theme(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    const char *s = pc_string(c, v, "theme");
    if (!s)
        return;
    free(cfg->theme);
    cfg->theme = sg_xstrdup(s);
    cfg->theme_line = v->line;
}

/* keys: {ACTION: "KEY KEY ..."} (the TUI checks the names) */
static void cfg_keys(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, "keys", "must be a mapping of actions to key names (quit: \"q F10\")");
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i], *val = v->kids[i + 1];
        cleanup_free char *f = sg_xasprintf("keys.%.64s", k->str);
        const char *s = pc_string(c, val, f);
        if (!s)
            continue;
        cfg->keys = sg_xrealloc(cfg->keys, (cfg->nkeys + 1) * sizeof *cfg->keys);
        cfg->keys[cfg->nkeys++] = (struct sg_config_key){
            .action = sg_xstrdup(k->str), .keys = sg_xstrdup(s), .line = val->line, .col = val->col,
            .key_line = k->line, .key_col = k->col};
    }
}

/* resolve: ["NAME:PORT:ADDR[:PORT2]", ...]: the runner reads each as it
 * reads --resolve (an entry it cannot read is a warning there). */
static void add_resolve(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    struct sg_config *cfg = arg;
    const char *s = n->str, *a = strchr(s, ':');
    if (!a || !strchr(a + 1, ':') || strlen(s) > 300) {
        pc_err(c, n, f, "\"%.80s\" is not NAME:PORT:ADDR[:PORT2]", s);
        return;
    }
    cfg->resolve = sg_xrealloc(cfg->resolve, (cfg->nresolve + 1) * sizeof *cfg->resolve);
    cfg->resolve[cfg->nresolve++] = sg_xstrdup(s);
}

/* prompt_exec: [PROGRAM, ARG...] (a string is the program alone): at
 * most 32 words, the program an absolute path or a name on PATH */
static char **cfg_prompt_exec(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const struct sg_ynode *first = v->type == SG_Y_SEQ && v->n ? v->kids[0] : v;
    if (first->type == SG_Y_SCALAR && strchr(first->str, '/') && first->str[0] != '/') {
        /* relative to whatever folder skillgate runs in: an agent's project */
        pc_err(c, first, field, "the program must be an absolute path or a name on PATH");
        return NULL;
    }
    if (v->type == SG_Y_SCALAR && v->len) {
        char **out = sg_xcalloc(2, sizeof *out);
        out[0] = sg_xstrdup(v->str);
        return out;
    }
    if (v->type != SG_Y_SEQ || !v->n || v->n > 32) {
        pc_err(c, v, field, "must be a list: the program, then its arguments (32 at most)");
        return NULL;
    }
    char **out = sg_xcalloc(v->n + 1, sizeof *out);
    for (size_t i = 0; i < v->n; i++) {
        const char *w = pc_string(c, v->kids[i], field);
        if (!w || (i == 0 && !*w)) {
            sg_strv_free(out);
            return NULL;
        }
        out[i] = sg_xstrdup(w);
    }
    return out;
}

/* hook: {policy: /abs/rules.yaml, rewrite_scripts: false, sandbox_bash: true} */
static void cfg_hook(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, "hook", "must be a mapping (policy, rewrite_scripts, sandbox_bash, "
                              "prompt_timeout, prompt_exec)");
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i], *x = v->kids[i + 1];
        if (!strcmp(k->str, "policy")) {
            const char *s = pc_string(c, x, "hook.policy");
            if (s && s[0] != '/')
                pc_err(c, x, "hook.policy", "must be an absolute path");
            else if (s) {
                free(cfg->hook_policy);
                cfg->hook_policy = sg_xstrdup(s);
            }
        } else if (!strcmp(k->str, "prompt_timeout")) {
            /* below what install gives Claude Code to wait for the hook */
            pc_int(c, x, "hook.prompt_timeout", 1, 100, &cfg->hook_prompt_s);
        } else if (!strcmp(k->str, "prompt_exec")) {
            sg_strv_free(cfg->hook_prompt_exec);
            cfg->hook_prompt_exec = cfg_prompt_exec(c, x, "hook.prompt_exec");
        } else if (!strcmp(k->str, "rewrite_scripts")) {
            bool b = true;
            if (pc_bool(c, x, "hook.rewrite_scripts", &b))
                cfg->hook_no_rewrite = !b;
        } else if (!strcmp(k->str, "sandbox_bash")) {
            pc_bool(c, x, "hook.sandbox_bash", &cfg->hook_sandbox_bash);
        } else {
            pc_warn(c, k, k->str, "unknown key, ignored");
        }
    }
}

bool sg_quiet_never(const char *name)
{
    static const char *const never[] = {
#define X(n) n,
        SG_NEVER_QUIET(X)
#undef X
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(never); i++) {
        size_t n = strlen(never[i]);
        if (strncmp(name, never[i], n))
            continue;
        const char *v = name + n; /* pip3, pip3.12: the name with a version */
        while ((*v >= '0' && *v <= '9') || (*v == '.' && v[1] >= '0' && v[1] <= '9'))
            v++;
        if (!*v)
            return true;
    }
    return false;
}

static const char *const quiet_defaults[] = {
#define X(n) n,
    SG_QUIET_PROGRAMS(X)
#undef X
};

bool sg_quiet_builtin(const char *name)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(quiet_defaults); i++)
        if (!strcmp(name, quiet_defaults[i]))
            return true;
    return false;
}

const char **sg_config_quiet_programs(const struct sg_config *cfg, size_t *n)
{
    const char *const *defaults = quiet_defaults;
    size_t nadd = cfg ? cfg->nquiet_add : 0;
    const char **v = sg_xcalloc(SG_ARRAY_LEN(quiet_defaults) + nadd + 1, sizeof *v);
    *n = 0;
    if (cfg && cfg->quiet_off)
        return v;
    for (size_t i = 0; i < SG_ARRAY_LEN(quiet_defaults) + nadd; i++) {
        const char *p = i < SG_ARRAY_LEN(quiet_defaults) ? defaults[i]
                                                   : cfg->quiet_add[i - SG_ARRAY_LEN(quiet_defaults)];
        bool drop = sg_quiet_never(p);
        for (size_t k = 0; cfg && k < cfg->nquiet_remove && !drop; k++)
            drop = !strcmp(cfg->quiet_remove[k], p);
        for (size_t k = 0; k < *n && !drop; k++)
            drop = !strcmp(v[k], p);
        if (!drop)
            v[(*n)++] = p;
    }
    return v;
}

/* One name of quiet_programs.add or .remove: a program's name as PATH
 * finds it (no folder), never one that reaches out (for add). */
struct quiet_list {
    struct sg_config *cfg;
    bool add;
};

static void add_quiet(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    struct quiet_list *l = arg;
    const char *s = n->str;
    if (!s[0] || strlen(s) > 64 || strchr(s, '/') || strcspn(s, " \t\n\r") != strlen(s)) {
        pc_err(c, n, f, "\"%.80s\" is not a program's name (as PATH finds it: jq, not "
                        "/usr/bin/jq)", s);
        return;
    }
    if (l->add && sg_quiet_never(s)) {
        pc_warn(c, n, f, "%s is never run without a question: it reaches beyond the "
                         "sandbox's files (network, packages, another user or mounts); "
                         "ignored", s);
        return;
    }
    char ***v = l->add ? &l->cfg->quiet_add : &l->cfg->quiet_remove;
    size_t *nv = l->add ? &l->cfg->nquiet_add : &l->cfg->nquiet_remove;
    *v = sg_xrealloc(*v, (*nv + 1) * sizeof **v);
    (*v)[(*nv)++] = sg_xstrdup(s);
}

/* quiet_programs: true | false | {add: [NAME, ...], remove: [NAME, ...]} */
static void cfg_quiet(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    if (v->type == SG_Y_SCALAR) {
        bool on = true;
        if (pc_bool(c, v, "quiet_programs", &on))
            cfg->quiet_off = !on;
        return;
    }
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, "quiet_programs", "must be true, false, or a mapping {add: [jq], "
                                       "remove: [find]}");
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i], *x = v->kids[i + 1];
        bool add = !strcmp(k->str, "add");
        if (!add && strcmp(k->str, "remove")) {
            pc_warn(c, k, k->str, "unknown key of quiet_programs (add, remove), ignored");
            continue;
        }
        struct quiet_list l = {cfg, add};
        pc_string_list(c, x, add ? "quiet_programs.add" : "quiet_programs.remove", add_quiet,
                       &l);
    }
}

/* A map's values as "k=v,k2=v2", each value percent-encoded past what
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS take as is. */
static char *otel_pairs(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, field, "must be a mapping of names to values");
        return NULL;
    }
    struct sg_buf b;
    sg_buf_init(&b, 64 * 1024);
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const char *val = pc_string(c, v->kids[i + 1], field);
        if (!val)
            continue;
        if (strpbrk(v->kids[i]->str, ",=%")) { /* the list's own separators */
            pc_err(c, v->kids[i], field, "a name may not hold ',', '=' or '%%'");
            continue;
        }
        sg_buf_printf(&b, "%s%s=", b.len ? "," : "", v->kids[i]->str);
        for (const unsigned char *p = (const unsigned char *)val; *p; p++)
            if (*p > 0x20 && *p < 0x7f && !strchr(",=%;\\\"", *p))
                sg_buf_printf(&b, "%c", *p);
            else
                sg_buf_printf(&b, "%%%02X", *p);
    }
    if (b.dropped) {
        pc_err(c, v, field, "longer than 64 KiB");
        sg_buf_free(&b);
        return NULL;
    }
    return b.data ? sg_buf_steal(&b) : sg_xstrdup("");
}

/* otel: the OpenTelemetry export's settings (records/otel.h) */
static void cfg_otel(struct sg_pctx *c, const struct sg_ynode *v, struct sg_config *cfg)
{
    static const char *const names[][2] = {
        {"endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"},
        {"traces_endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
        {"headers", "OTEL_EXPORTER_OTLP_HEADERS"},
        {"timeout", "OTEL_EXPORTER_OTLP_TIMEOUT"},
        {"protocol", "OTEL_EXPORTER_OTLP_PROTOCOL"},
        {"service_name", "OTEL_SERVICE_NAME"},
        {"resource_attributes", "OTEL_RESOURCE_ATTRIBUTES"},
        {"sdk_disabled", "OTEL_SDK_DISABLED"},
    };
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, "otel", "must be a mapping (endpoint, headers, service_name, ...)");
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i], *x = v->kids[i + 1];
        size_t j = 0;
        while (j < SG_ARRAY_LEN(names) && strcmp(k->str, names[j][0]))
            j++;
        if (j == SG_ARRAY_LEN(names)) {
            pc_warn(c, k, k->str, "unknown key of otel, ignored");
            continue;
        }
        cleanup_free char *field = sg_xasprintf("otel.%s", k->str);
        char *val = NULL;
        if (!strcmp(k->str, "headers") || !strcmp(k->str, "resource_attributes"))
            val = otel_pairs(c, x, field);
        else if (pc_string(c, x, field))
            val = sg_xstrdup(x->str);
        if (!val || cfg->notel >= SG_ARRAY_LEN(cfg->otel_keys)) {
            free(val);
            continue;
        }
        cfg->otel_keys[cfg->notel] = sg_xstrdup(names[j][1]);
        cfg->otel_vals[cfg->notel++] = val;
    }
}

static void cfg_apply(struct sg_pctx *c, const struct sg_ynode *root, struct sg_config *cfg)
{
    if (root->type != SG_Y_MAP) {
        pc_err(c, root, NULL, "must be a mapping");
        return;
    }
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        const struct sg_ynode *k = root->kids[i], *v = root->kids[i + 1];
        if (!strcmp(k->str, "skill_dirs"))
            cfg_skill_dirs(c, v, cfg);
        else if (!strcmp(k->str, "theme"))
            cfg_theme(c, v, cfg);
        else if (!strcmp(k->str, "keys"))
            cfg_keys(c, v, cfg);
        else if (!strcmp(k->str, "audit_rotate_kb"))
            pc_int(c, v, "audit_rotate_kb", 16, 1LL << 30, &cfg->audit_rotate_kb);
        else if (!strcmp(k->str, "trace_keep"))
            pc_int(c, v, "trace_keep", 1, 10000000, &cfg->trace_keep);
        else if (!strcmp(k->str, "resolve"))
            pc_string_list(c, v, "resolve", add_resolve, cfg);
        else if (!strcmp(k->str, "hook"))
            cfg_hook(c, v, cfg);
        else if (!strcmp(k->str, "quiet_programs"))
            cfg_quiet(c, v, cfg);
        else if (!strcmp(k->str, "otel"))
            cfg_otel(c, v, cfg);
        else if (!strcmp(k->str, "prompt_exec")) {
            sg_strv_free(cfg->prompt_exec);
            cfg->prompt_exec = cfg_prompt_exec(c, v, "prompt_exec");
        }
        else
            pc_warn(c, k, k->str, "unknown key, ignored");
    }
}

int sg_config_load(const char *path, struct sg_config *cfg, struct sg_diags *d)
{
    memset(cfg, 0, sizeof *cfg);
    if (!path)
        return 0;
    cleanup_free char *buf = NULL, *why = NULL;
    size_t len = 0;
    int r = sg_read_private_file(path, SG_MANIFEST_MAX, &buf, &len, &why);
    if (r == -EPERM) {
        /* key bindings, skill folders: a file someone else could have
         * written must not decide them (issue 14) */
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "ignored: %s", why);
        return 0;
    }
    if (r == -EFBIG || r == -EINVAL) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "not a regular file under %d bytes",
                    SG_MANIFEST_MAX);
        return -EINVAL;
    }
    if (r < 0) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s", strerror(-r));
        return -EINVAL;
    }
    if (!buf)
        return 0;
    cfg->path = sg_xstrdup(path);
    size_t before = sg_diags_count(d, SG_ERROR);
    struct sg_ynode *root = NULL;
    if (sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        return -EINVAL;
    if (root && !sg_y_is_null(root)) {
        struct sg_pctx c = {.file = path, .origin = "config.yaml", .d = d};
        cfg_apply(&c, root, cfg);
    }
    sg_ynode_free(root);
    return sg_diags_count(d, SG_ERROR) > before ? -EINVAL : 0;
}

void sg_config_records(long long *audit_rotate_bytes, long long *trace_keep)
{
    struct sg_config cfg;
    struct sg_diags d = {0};
    cleanup_free char *path = sg_config_default_path();
    if (sg_config_load(path, &cfg, &d) < 0)
        sg_config_free(&cfg); /* broken: the defaults (the CLI and TUI say why) */
    *audit_rotate_bytes = (cfg.audit_rotate_kb ? cfg.audit_rotate_kb : 65536) << 10;
    *trace_keep = cfg.trace_keep ? cfg.trace_keep : 1000;
    sg_config_free(&cfg);
    sg_diags_free(&d);
}

int sg_open_records_dir(const char *dir)
{
    if (dir[0] != '/')
        return -EINVAL;
    if (geteuid() != 0) {
        int r = sg_mkdir_p(dir, 0700, (uid_t)-1, (gid_t)-1);
        if (r < 0)
            return r;
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
    }
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return -errno;
    uid_t owner = 0; /* whose tree the walk is in: root until a folder of another user */
    for (const char *p = dir; *p;) {
        while (*p == '/')
            p++;
        size_t len = strcspn(p, "/");
        if (!len)
            break;
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            close(cur);
            return -ENAMETOOLONG;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        p += len;
        if (!strcmp(name, ".") || !strcmp(name, "..")) {
            close(cur);
            return -EINVAL;
        }
        struct stat st;
        /* a folder (not a link) there already, the usual case: opened as
         * it is and judged by what was opened (3 calls, not 4); anything
         * else, or a failure, takes the way below, which says what */
        int there = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (there >= 0) {
            close(cur);
            cur = there;
            int e = fstat(cur, &st) < 0 ? -errno : 0;
            if (!e && (!S_ISDIR(st.st_mode) || (owner && st.st_uid != owner && st.st_uid != 0)))
                e = -EPERM;
            if (e) {
                close(cur);
                return e;
            }
            if (st.st_uid != 0)
                owner = owner ? owner : st.st_uid;
            continue;
        }
        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            /* missing: made here, or (EEXIST) by a run beside this one
             * meanwhile, which the checks below then look at as any other */
            int e = errno == ENOENT ? 0 : -errno;
            bool made = !e && mkdirat(cur, name, 0700) == 0;
            if (!e && !made && errno != EEXIST)
                e = -errno;
            if (!e && made && owner &&
                fchownat(cur, name, owner, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0)
                e = -errno;
            if (!e && fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                e = -errno;
            if (e) {
                close(cur);
                return e;
            }
        }
        int next;
        if (S_ISLNK(st.st_mode)) {
            if (owner || st.st_uid != 0) { /* in a user's tree, or a user's link */
                close(cur);
                return -ELOOP;
            }
            next = openat(cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC); /* root's own link */
        } else {
            if (!S_ISDIR(st.st_mode) || (owner && st.st_uid != owner && st.st_uid != 0)) {
                close(cur);
                return -EPERM;
            }
            next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = -errno;
            close(cur);
            return e;
        }
        close(cur);
        cur = next;
        if (fstat(cur, &st) < 0) {
            close(cur);
            return -errno;
        }
        if (st.st_uid != 0)
            owner = owner ? owner : st.st_uid;
    }
    return cur;
}
