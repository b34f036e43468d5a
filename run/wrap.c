/* skillgate wrap: a command as a skill, and the sandbox settings it is
 * run under (wrap.h). */
#include "wrap.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "config.h"
#include "runopts.h"
#include "util.h"

static char *sayf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sayf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s ? s : sg_xstrdup("out of memory");
}

static void note(struct sg_wrap *w, char *line)
{
    w->notes = sg_xrealloc(w->notes, (w->nnotes + 2) * sizeof *w->notes);
    w->notes[w->nnotes++] = line;
    w->notes[w->nnotes] = NULL;
}

static json_t *acc(struct sg_wrap *w, const char *list)
{
    if (!w->acc)
        w->acc = json_object();
    json_t *a = json_object_get(w->acc, list);
    if (!a) {
        a = json_array();
        json_object_set_new(w->acc, list, a);
    }
    return a;
}

static void acc_add(struct sg_wrap *w, const char *list, const char *v)
{
    json_t *a = acc(w, list);
    size_t i;
    json_t *x;
    json_array_foreach (a, i, x)
        if (!strcmp(json_string_value(x), v))
            return;
    json_array_append_new(a, json_string(v));
}

static bool acc_has(struct sg_wrap *w, const char *list, const char *v)
{
    json_t *a = acc(w, list);
    size_t i;
    json_t *x;
    json_array_foreach (a, i, x)
        if (!strcmp(json_string_value(x), v))
            return true;
    return false;
}

/* ---- reading one settings document ---- */

struct doc {
    struct sg_wrap *w;
    const char *name; /* the file, as shown */
    const char *base; /* where a relative path starts */
    bool claude;      /* a Claude Code settings file: its path prefixes */
    bool narrow_only; /* the project's own: widening keys are said, not applied */
};

/* A path of the settings as an absolute, normalized one: Claude Code's
 * prefixes (// the root, ~/ the home, / and relative: the settings file's
 * folder) or srt's (~/ the home, relative: the working folder). NULL with
 * *why for a pattern: skillgate masks and binds paths, never globs. */
static char *settings_path(const struct doc *d, const char *key, const char *p, char **why)
{
    if (strpbrk(p, "*?[")) {
        *why = sayf("%s: %s \"%s\" is a pattern; skillgate wrap takes paths only (it cannot "
                    "tell every file a pattern names before the command runs): name the "
                    "folders or files", d->name, key, p);
        return NULL;
    }
    const char *home = sg_invoking_home();
    char *abs;
    if (!strcmp(p, "~") || !strncmp(p, "~/", 2))
        abs = sg_xasprintf("%s/%s", home ? home : "/", p[1] ? p + 2 : "");
    else if (d->claude && !strncmp(p, "//", 2))
        abs = sg_xstrdup(p + 1);
    else if (p[0] == '/' && !d->claude)
        abs = sg_xstrdup(p);
    else
        abs = sg_xasprintf("%s/%s", d->base, p[0] == '/' ? p + 1 : p);
    if (sg_path_normalize(abs) < 0) {
        free(abs);
        *why = sayf("%s: %s \"%s\" is too long a path", d->name, key, p);
        return NULL;
    }
    return abs;
}

/* Each string of an array (a key's value), or a message. */
static int each_string(const struct doc *d, json_t *arr, const char *key, char **why,
                       int (*fn)(const struct doc *, const char *, const char *, char **))
{
    if (!arr)
        return 0;
    if (!json_is_array(arr)) {
        *why = sayf("%s: %s must be a list of strings", d->name, key);
        return -EINVAL;
    }
    size_t i;
    json_t *x;
    json_array_foreach (arr, i, x) {
        if (!json_is_string(x)) {
            *why = sayf("%s: %s[%zu] must be a string", d->name, key, i);
            return -EINVAL;
        }
        int e = fn(d, key, json_string_value(x), why);
        if (e < 0)
            return e;
    }
    return 0;
}

static bool widening(const struct doc *d, const char *key, const char *v)
{
    if (d->narrow_only)
        note(d->w, sayf("%s: %s \"%s\" is the repository's own setting: it would widen the "
                        "sandbox, so skillgate does not apply it (put it in your own settings)",
                        d->name, key, v));
    return !d->narrow_only;
}

static int on_allow_write(const struct doc *d, const char *key, const char *v, char **why)
{
    if (!widening(d, key, v))
        return 0;
    cleanup_free char *abs = settings_path(d, key, v, why);
    if (!abs)
        return -EINVAL;
    struct stat st;
    if (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
        note(d->w, sayf("%s: %s \"%s\": %s is no folder here, so nothing is made writable for "
                        "it", d->name, key, v, abs));
        return 0;
    }
    cleanup_free char *opt = sayf("%s in %s", key, d->name);
    const char *cwhy = NULL;
    char *real = NULL;
    int e = sg_runopts_check_write(opt, abs, &real, &cwhy);
    if (e < 0) {
        *why = sg_xstrdup(cwhy);
        return e;
    }
    acc_add(d->w, "write", real);
    free(real);
    return 0;
}

/* A place the settings hide or make read-only, by the object its path
 * names now (its links resolved on the host): a bind in the sandbox goes
 * to that path, never to a link a repository planted on the way. */
static int deny_place(const struct doc *d, const char *key, const char *v, const char *list,
                      char **why)
{
    cleanup_free char *abs = settings_path(d, key, v, why);
    if (!abs)
        return -EINVAL;
    struct stat st;
    if (lstat(abs, &st) < 0)
        return 0; /* nothing there: nothing to hide */
    cleanup_free char *real = realpath(abs, NULL);
    if (!real) {
        *why = sayf("%s: %s \"%s\": %s cannot be resolved (%s)", d->name, key, v, abs,
                    strerror(errno));
        return -EINVAL;
    }
    acc_add(d->w, list, real);
    return 0;
}

static int on_deny_write(const struct doc *d, const char *key, const char *v, char **why)
{
    return deny_place(d, key, v, "readonly", why);
}

static int on_deny_read(const struct doc *d, const char *key, const char *v, char **why)
{
    return deny_place(d, key, v, "deny_read", why);
}

static int on_allow_read(const struct doc *d, const char *key, const char *v, char **why)
{
    cleanup_free char *abs = settings_path(d, key, v, why);
    if (!abs)
        return -EINVAL;
    acc_add(d->w, "allow_read", abs); /* weighed once every denyRead is known */
    return 0;
}

static bool domain_ok(const char *v)
{
    const char *s = !strncmp(v, "*.", 2) ? v + 2 : v;
    size_t n = strlen(s);
    if (!n || n > 253 || s[0] == '.' || s[n - 1] == '.')
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '.'))
            return false;
    return true;
}

static int on_host(const struct doc *d, const char *key, const char *v, char **why)
{
    if (!domain_ok(v)) {
        *why = sayf("%s: %s \"%s\" is not a host name (a name, or *. and a name)", d->name, key,
                    v);
        return -EINVAL;
    }
    cleanup_free char *low = sg_xstrdup(v);
    for (char *c = low; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    bool deny = strstr(key, "denied") != NULL;
    if (!deny && !widening(d, key, v))
        return 0;
    acc_add(d->w, deny ? "denied_hosts" : "hosts", low);
    return 0;
}

static int on_socket(const struct doc *d, const char *key, const char *v, char **why)
{
    (void)why;
    note(d->w, sayf("%s: %s \"%s\": a wrapped command is shown no host socket (the sandbox's "
                    "/run and /var are its own), so it stays out of reach",
                    d->name, key, v));
    return 0;
}

/* credentials.envVars: [{name, mode}]; "deny" keeps the variable out. */
static int on_credentials(const struct doc *d, json_t *cred, char **why)
{
    json_t *vars = json_object_get(cred, "envVars");
    if (!cred || !vars)
        return 0;
    if (!json_is_array(vars)) {
        *why = sayf("%s: sandbox.credentials.envVars must be a list", d->name);
        return -EINVAL;
    }
    size_t i;
    json_t *x;
    json_array_foreach (vars, i, x) {
        const char *n = json_string_value(json_object_get(x, "name"));
        const char *m = json_string_value(json_object_get(x, "mode"));
        if (!n) {
            *why = sayf("%s: sandbox.credentials.envVars[%zu].name must be a string", d->name,
                        i);
            return -EINVAL;
        }
        if (!m || !strcmp(m, "deny"))
            acc_add(d->w, "denied_env", n);
        else
            note(d->w, sayf("%s: sandbox.credentials.envVars[%zu] mode \"%s\": skillgate "
                            "keeps %s out unless it is passed with --env", d->name, i, m, n));
    }
    return 0;
}

static void unknown_keys(const struct doc *d, json_t *o, const char *where,
                         const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach (o, k, v) {
        bool ok = false;
        for (const char *const *q = known; *q && !ok; q++)
            ok = !strcmp(*q, k);
        if (!ok)
            note(d->w, sayf("%s: %s%s is not a key skillgate wrap knows: it does nothing here",
                            d->name, where, k));
    }
}

static int read_doc(const struct doc *d, json_t *root, char **why)
{
    json_t *sb = d->claude ? json_object_get(root, "sandbox") : root;
    if (!json_is_object(sb)) {
        *why = sayf("%s: %s must be an object", d->name, d->claude ? "sandbox" : "the settings");
        return -EINVAL;
    }
    const char *pre = d->claude ? "sandbox." : "";
    static const char *const top_claude[] = {
        "enabled", "autoAllowBashIfSandboxed", "excludedCommands", "allowUnsandboxedCommands",
        "network", "filesystem", "credentials", "failIfUnavailable",
        "enableWeakerNestedSandbox", "ignoreViolations", NULL};
    static const char *const top_srt[] = {"network", "filesystem", "ignoreViolations",
                                          "enableWeakerNestedSandbox", NULL};
    static const char *const net[] = {"allowedDomains", "deniedDomains", "allowUnixSockets",
                                      "allowAllUnixSockets", "allowLocalBinding",
                                      "allowManagedDomainsOnly", "httpProxyPort",
                                      "socksProxyPort", NULL};
    static const char *const fs[] = {"allowWrite", "denyWrite", "denyRead", "allowRead",
                                     "allowManagedReadPathsOnly", "disabled", NULL};
    unknown_keys(d, sb, pre, d->claude ? top_claude : top_srt);
    json_t *n = json_object_get(sb, "network"), *f = json_object_get(sb, "filesystem");
    if ((n && !json_is_object(n)) || (f && !json_is_object(f))) {
        *why = sayf("%s: %snetwork and %sfilesystem must be objects", d->name, pre, pre);
        return -EINVAL;
    }
    char k[64];
    int e = 0;
    if (n) {
        char where[32];
        snprintf(where, sizeof where, "%snetwork.", pre);
        unknown_keys(d, n, where, net);
#define KEY(obj, name, fn)                                                          \
    (snprintf(k, sizeof k, "%s%s.%s", pre, obj == n ? "network" : "filesystem", name), \
     each_string(d, json_object_get(obj, name), k, why, fn))
        if ((e = KEY(n, "allowedDomains", on_host)) < 0 ||
            (e = KEY(n, "deniedDomains", on_host)) < 0 ||
            (e = KEY(n, "allowUnixSockets", on_socket)) < 0)
            return e;
        if (json_is_true(json_object_get(n, "allowAllUnixSockets")))
            on_socket(d, "network.allowAllUnixSockets", "true", why);
    }
    if (f) {
        char where[32];
        snprintf(where, sizeof where, "%sfilesystem.", pre);
        unknown_keys(d, f, where, fs);
        if ((e = KEY(f, "allowWrite", on_allow_write)) < 0 ||
            (e = KEY(f, "denyWrite", on_deny_write)) < 0 ||
            (e = KEY(f, "denyRead", on_deny_read)) < 0 ||
            (e = KEY(f, "allowRead", on_allow_read)) < 0)
            return e;
#undef KEY
    }
    return d->claude ? on_credentials(d, json_object_get(sb, "credentials"), why) : 0;
}

int sg_wrap_settings_text(struct sg_wrap *w, const char *name, const char *text, size_t len,
                          const char *base, char **why)
{
    *why = NULL;
    if (len > SG_WRAP_SETTINGS_MAX) {
        *why = sayf("%s: over the %d-byte cap for a settings file", name, SG_WRAP_SETTINGS_MAX);
        return -EFBIG;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root || !json_is_object(root)) {
        *why = root ? sayf("%s: the settings must be a JSON object", name)
                    : sayf("%s:%d:%d: %s", name, je.line, je.column, je.text);
        json_decref(root);
        return -EINVAL;
    }
    /* a file with a `sandbox` object is Claude Code's; else srt's */
    struct doc d = {.w = w, .name = name, .base = base,
                    .claude = json_object_get(root, "sandbox") != NULL};
    int e = 0;
    if (d.claude || json_object_get(root, "network") || json_object_get(root, "filesystem"))
        e = read_doc(&d, root, why);
    json_decref(root);
    return e;
}

/* A settings file: read when it is there (a missing one is no error). */
static int settings_file(struct sg_wrap *w, const char *path, bool must, bool narrow_only,
                         char **why)
{
    char *buf = NULL;
    size_t len = 0;
    struct stat st;
    if (narrow_only && stat(path, &st) == 0 && st.st_uid != geteuid() && st.st_uid != 0) {
        /* a folder above the project another user may write (/tmp/.claude) */
        note(w, sayf("%s: not yours (uid %u): not read", path, (unsigned)st.st_uid));
        return 0;
    }
    /* links followed, as Claude Code and srt read their settings */
    int e = sg_read_file_follow_capped(path, SG_WRAP_SETTINGS_MAX, &buf, &len);
    if (e == 0 && !buf)
        e = -ENOENT;
    if (e < 0) {
        if (e == -ENOENT && !must)
            return 0;
        *why = e == -EFBIG ? sayf("%s: over the %d-byte cap for a settings file", path,
                                  SG_WRAP_SETTINGS_MAX)
                           : sayf("%s: %s", path, strerror(-e));
        return e;
    }
    cleanup_free char *dir = sg_xstrdup(path);
    char *sl = strrchr(dir, '/');
    if (sl)
        *(sl == dir ? sl + 1 : sl) = '\0';
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root || !json_is_object(root)) {
        *why = root ? sayf("%s: the settings must be a JSON object", path)
                    : sayf("%s:%d:%d: %s", path, je.line, je.column, je.text);
        json_decref(root);
        free(buf);
        return -EINVAL;
    }
    bool claude = json_object_get(root, "sandbox") != NULL;
    /* srt's relative paths start in the working folder; Claude Code's
     * in the settings file's folder */
    struct doc d = {.w = w, .name = path, .base = claude ? (sl ? dir : ".") : w->cwd,
                    .claude = claude, .narrow_only = narrow_only};
    e = 0;
    if (claude || json_object_get(root, "network") || json_object_get(root, "filesystem")) {
        e = read_doc(&d, root, why);
        w->settings = sg_xrealloc(w->settings, (w->nsettings + 2) * sizeof *w->settings);
        w->settings[w->nsettings++] = sg_xstrdup(path);
        w->settings[w->nsettings] = NULL;
    }
    json_decref(root);
    free(buf);
    return e;
}

/* ---- the command as a skill ---- */

/* argv[0] as execvp finds it in the caller's PATH, from cwd. */
static char *find_program(const char *name, const char *cwd, char *const *env)
{
    struct stat st;
    if (strchr(name, '/'))
        return name[0] == '/' ? sg_xstrdup(name) : sg_xasprintf("%s/%s", cwd, name);
    const char *path = NULL;
    for (char *const *e = env; e && *e && !path; e++)
        if (!strncmp(*e, "PATH=", 5))
            path = *e + 5;
    cleanup_free char *copy = sg_xstrdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *c = dir[0] == '/' ? sg_xasprintf("%s/%s", dir, name)
                                : sg_xasprintf("%s/%s/%s", cwd, dir, name);
        if (stat(c, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
            return c;
        free(c);
    }
    return NULL;
}

static const char *const reserved[] = {"PATH", "HOME", "TMPDIR", "PWD", "OLDPWD", "SHLVL", "_"};

/* A value with a password in it: a URL's user:password@ (a proxy's, a
 * database's), whatever the variable is called. */
static bool secret_value(const char *v)
{
    /* any user part: user:password@, or a token as the user (ghp_x@) */
    for (const char *s = strstr(v, "://"); s; s = strstr(s + 3, "://")) {
        const char *h = s + 3;
        if (h[strcspn(h, "/?#@")] == '@')
            return true;
    }
    return false;
}

/* The caller's variables a wrapped command gets: all but those whose name
 * says they hold a secret or whose value has a password in a URL, those
 * the settings deny, and skillgate's own. */
static void env_names(struct sg_wrap *w, char *const *env, json_t *allow)
{
    size_t secret = 0;
    cleanup_free char *first = NULL;
    for (char *const *e = env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e || eq - *e > 128)
            continue;
        cleanup_free char *n = sg_xstrndup(*e, (size_t)(eq - *e));
        bool skip = sg_env_own(n) != NULL || acc_has(w, "denied_env", n);
        for (size_t i = 0; i < SG_ARRAY_LEN(reserved) && !skip; i++)
            skip = !strcmp(n, reserved[i]);
        if (!skip && (sg_runopts_secret_name(n) || secret_value(eq + 1))) {
            if (!secret++)
                first = sg_xstrdup(n);
            skip = true;
        }
        if (!skip)
            json_array_append_new(allow, json_string(n));
    }
    if (secret)
        w->env_note = sayf("%zu variable%s whose name or value says it holds a secret (%s%s) "
                           "kept out; --env NAME passes one", secret, secret == 1 ? "" : "s",
                           first, secret > 1 ? ", ..." : "");
}

/* The settings' lists as the skill's paths and hosts, and the masks. */
static int fold_settings(struct sg_wrap *w, json_t *write, json_t *read, json_t *egress,
                         char **why)
{
    size_t i, j;
    json_t *x, *y;
    json_array_foreach (acc(w, "write"), i, x)
        if (strcmp(json_string_value(x), w->cwd))
            json_array_append(write, x);
    /* denyWrite inside a writable folder: shown read-only there */
    json_array_foreach (acc(w, "readonly"), i, x) {
        const char *p = json_string_value(x); /* a real path (deny_place) */
        bool inside = sg_path_within(p, w->cwd) && strcmp(p, w->cwd);
        json_array_foreach (write, j, y)
            inside |= sg_path_within(p, json_string_value(y));
        struct stat st;
        if (inside && stat(p, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            json_array_append(read, x);
    }
    json_array_foreach (acc(w, "deny_read"), i, x) {
        const char *p = json_string_value(x); /* a real path (deny_place) */
        if (!strcmp(p, "/") || sg_path_within(w->cwd, p)) {
            *why = sayf("denyRead \"%s\" holds the working folder %s: the command could not "
                        "run in it", p, w->cwd);
            return -EINVAL;
        }
        w->masks = sg_xrealloc(w->masks, (w->nmasks + 2) * sizeof *w->masks);
        w->masks[w->nmasks++] = sg_xstrdup(p);
        w->masks[w->nmasks++] = sg_xstrdup("denyRead in the sandbox settings, masked");
    }
    json_array_foreach (acc(w, "allow_read"), i, x)
        json_array_foreach (acc(w, "deny_read"), j, y)
            if (sg_path_within(json_string_value(x), json_string_value(y)))
                note(w, sayf("allowRead \"%s\" lies in denyRead \"%s\": skillgate keeps all "
                             "of \"%s\" masked (it masks whole places)", json_string_value(x),
                             json_string_value(y), json_string_value(y)));
    json_array_foreach (acc(w, "hosts"), i, x) {
        const char *h = json_string_value(x);
        if (acc_has(w, "denied_hosts", h))
            continue; /* denied wins */
        json_array_foreach (acc(w, "denied_hosts"), j, y) {
            const char *dn = json_string_value(y);
            size_t hl = strlen(h + 1), dl = strlen(dn);
            if (!strncmp(h, "*.", 2) && dl > hl && !strcmp(dn + dl - hl, h + 1)) {
                *why = sayf("deniedDomains \"%s\" lies inside allowedDomains \"%s\": skillgate "
                            "cannot allow a wildcard but one name in it; list the names", dn,
                            h);
                return -EINVAL;
            }
        }
        json_array_append_new(egress, json_pack("{s:s, s:[i,i]}", "domain", h, "ports", 443, 80));
    }
    if (json_array_size(acc(w, "denied_hosts")))
        note(w, sayf("deniedDomains: never allowed by the settings; like every other host "
                     "not allowed, they are asked for (refused when no one answers)"));
    return 0;
}

static int make_skill(struct sg_wrap *w, char *const *argv, size_t argc, char *const *env,
                      char **why)
{
    cleanup_free char *prog = find_program(argv[0], w->cwd, env);
    if (!prog) {
        *why = sayf("%s: command not found in PATH", argv[0]);
        return -ENOENT;
    }
    json_t *write = json_array(), *read = json_array();
    json_t *egress = json_array(), *allow = json_array();
    int e = fold_settings(w, write, read, egress, why);
    env_names(w, env, allow);
    /* the settings' paths, hosts and names (JSON strings: UTF-8) as a
     * skillsandbox.yaml, whose own checks see every value; the command and
     * the working folder go straight into the policy below, byte for byte */
    json_t *doc = json_pack(
        "{s:{s:s, s:s, s:s}, s:{s:s}, s:{s:{s:o, s:o}, s:{s:o}, s:{s:o}},"
        " s:{s:i, s:i, s:i, s:i, s:i}}",
        "skill", "name", "wrap", "version", "1", "description",
        "a command run by skillgate wrap", "entrypoint", "command", "true",
        "permissions", "filesystem", "read", read, "write", write, "network", "egress", egress,
        "env_vars", "allow", allow,
        "resources", "memory_mb", 8192, "max_runtime_seconds", 86400, "max_cpu_percent", 6400,
        "max_pids", 4096, "max_output_bytes", 16 << 20);
    char *text = e == 0 && doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (e == 0 && !text) {
        *why = sayf("the settings cannot be read into a policy");
        e = -EINVAL;
    }
    if (e < 0)
        return e;
    w->sk = sg_skill_from_buffers(w->cwd, NULL, 0, text, strlen(text));
    free(text);
    struct sg_entrypoint *ep = &w->sk->policy.entry;
    for (size_t i = 0; i < ep->nargs; i++)
        free(ep->args[i]);
    free(ep->args);
    free(ep->command);
    ep->command = sg_xstrdup(prog);
    ep->args = sg_xcalloc(argc, sizeof *ep->args);
    for (size_t i = 1; i < argc; i++)
        ep->args[i - 1] = sg_xstrdup(argv[i]);
    ep->nargs = argc - 1;
    free(w->sk->name);
    w->sk->name = sg_xstrdup("wrap");
    struct sg_policy *pol = &w->sk->policy;
    pol->tools = sg_xrealloc(pol->tools, (pol->ntools + 1) * sizeof *pol->tools);
    pol->tools[pol->ntools++] = (struct sg_tool){
        .id = SG_TOOL_BASH, .name = sg_xstrdup("Bash"), .written = sg_xstrdup("Bash"),
        .risk = sg_tool_risk(SG_TOOL_BASH), .caps = sg_tool_caps(SG_TOOL_BASH)};
    sg_origin_set(&pol->tools[pol->ntools - 1].origin, "skillgate wrap", 0, 0, "Bash");
    pol->caps |= sg_tool_caps(SG_TOOL_BASH);
    /* the working folder, writable: the "skill's folder" a manifest may
     * not declare is here the person's project, as Claude Code's sandbox
     * has it */
    pol->write = sg_xrealloc(pol->write, (pol->nwrite + 1) * sizeof *pol->write);
    pol->write[pol->nwrite++] = (struct sg_path){.path = sg_xstrdup(w->cwd),
                                                 .declared = sg_xstrdup(w->cwd)};
    sg_origin_set(&pol->write[pol->nwrite - 1].origin, "skillgate wrap", 0, 0,
                  "the working folder");
    if (sg_skill_has_errors(w->sk)) {
        size_t k = 0; /* the first that blocks (a folder name is no wrapped command's) */
        while (k + 1 < w->sk->diags.n &&
               (w->sk->diags.v[k].sev != SG_ERROR || w->sk->diags.v[k].spec_only))
            k++;
        cleanup_free char *m = sg_diag_format(&w->sk->diags.v[k]);
        *why = sayf("the command cannot be run as given: %s", m);
        return -EINVAL;
    }
    return 0;
}

/* The project's own .claude/settings.json and settings.local.json, which
 * only narrow: the working folder's and each folder above it up to the
 * home or / (the agent may work in a subfolder of its project; what any
 * of them narrows holds), and Claude Code's project (CLAUDE_PROJECT_DIR). */
static int project_settings(struct sg_wrap *w, const char *home, char **why)
{
    cleanup_free char *dir = sg_xstrdup(w->cwd);
    cleanup_free char *rhome = home ? realpath(home, NULL) : NULL;
    const char *cp = secure_getenv("CLAUDE_PROJECT_DIR");
    cleanup_free char *proj = cp && cp[0] == '/' ? realpath(cp, NULL) : NULL;
    int e = 0;
    for (int depth = 0; e == 0 && depth < 64; depth++) {
        if (rhome && !strcmp(dir, rhome))
            break; /* the home's .claude is your own settings, read above */
        static const char *const names[] = {"settings.json", "settings.local.json"};
        for (size_t i = 0; i < 2 && e == 0; i++) {
            cleanup_free char *f = sg_xasprintf("%s/.claude/%s", strcmp(dir, "/") ? dir : "",
                                                names[i]);
            e = settings_file(w, f, false, true, why);
        }
        char *sl = strrchr(dir, '/');
        if (!sl || !strcmp(dir, "/"))
            break;
        sl[sl == dir] = '\0'; /* "/a" -> "/" */
    }
    if (e == 0 && proj && !sg_path_within(w->cwd, proj))
        for (size_t i = 0; i < 2 && e == 0; i++) {
            cleanup_free char *f = sg_xasprintf("%s/.claude/settings%s.json", proj,
                                                i ? ".local" : "");
            e = settings_file(w, f, false, true, why);
        }
    return e;
}

int sg_wrap_prepare(const char *cwd, char *const *argv, size_t argc, const char *settings,
                    char *const *env, struct sg_wrap *w, char **why)
{
    memset(w, 0, sizeof *w);
    *why = NULL;
    if (!argc) {
        *why = sg_xstrdup("no command to run");
        return -EINVAL;
    }
    char here[PATH_MAX];
    if (!cwd && !(cwd = getcwd(here, sizeof here))) {
        *why = sayf("the current folder cannot be named (%s)", strerror(errno));
        return -errno;
    }
    const char *cwhy = NULL;
    int e = sg_runopts_check_write("the working folder", cwd, &w->cwd, &cwhy);
    if (e < 0) {
        *why = sayf("%s (skillgate wrap makes the working folder writable: cd into a project "
                    "folder or give --cwd DIR)", cwhy);
        return e;
    }
    const char *home = sg_invoking_home();
    cleanup_free char *srt = sg_xasprintf("%s/.srt-settings.json", home ? home : "/");
    cleanup_free char *user = sg_xasprintf("%s/.claude/settings.json", home ? home : "/");
    if (settings)
        e = settings_file(w, settings, true, false, why);
    else if ((e = settings_file(w, srt, false, false, why)) == 0)
        e = settings_file(w, user, false, false, why);
    if (e == 0)
        e = project_settings(w, home, why);
    if (e == 0)
        e = make_skill(w, argv, argc, env, why);
    if (e < 0)
        sg_wrap_free(w);
    return e;
}

void sg_wrap_free(struct sg_wrap *w)
{
    sg_skill_free(w->sk);
    free(w->cwd);
    for (size_t i = 0; i < w->nmasks; i++)
        free(w->masks[i]);
    free(w->masks);
    sg_strv_free(w->notes);
    sg_strv_free(w->settings);
    free(w->env_note);
    json_decref(w->acc);
    memset(w, 0, sizeof *w);
}
