#include "exectree.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shellcmd.h"
#include "util.h"

/* The line from a process to its root is this long at most. */
#define MAX_DEPTH 128

bool sg_proc_parent(pid_t pid, pid_t *ppid, unsigned long long *start)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    cleanup_fd int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "pid (comm) state ppid ..."; comm may hold spaces and ')' */
    char *s = strrchr(buf, ')');
    if (!s || s[1] != ' ')
        return false;
    s += 2; /* field 3, the state */
    for (int field = 3; field < 22; field++) {
        if (field == 4)
            *ppid = (pid_t)strtol(s, NULL, 10);
        s = strchr(s, ' ');
        if (!s)
            return false;
        s++;
    }
    char *end;
    *start = strtoull(s, &end, 10);
    return end != s;
}

/* Whether pid has a child: every thread's children list (after an exec
 * the old threads' children are the leader's). Unknown is yes. */
static bool has_children(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
    DIR *d = opendir(p);
    if (!d)
        return true;
    bool any = false;
    struct dirent *e;
    while (!any && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char c[320], buf[16];
        snprintf(c, sizeof c, "/proc/%d/task/%s/children", (int)pid, e->d_name);
        int fd = open(c, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
        if (fd >= 0)
            close(fd);
        any = n != 0; /* a child listed, or no way to tell (no CONFIG_PROC_CHILDREN) */
    }
    closedir(d);
    return any;
}

/* Names a program or a library it loads takes code from, beyond the
 * shell's own (shellcmd.h): interpreters' start-up and module paths,
 * toolkits' plugin paths, OpenSSL's engines, LibreOffice's UNO bootstrap. */
static bool loads_code(const char *name)
{
    static const char *const prefixes[] = {
        "PYTHON", "PERL5", "PERLLIB", "PERL_", "RUBY", "NODE_OPTIONS", "NODE_PATH",
        "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "LUA_",
        "TCLLIBPATH", "GIT_", "GCONV_PATH", "GTK_MODULES", "GTK3_MODULES", "GTK_PATH",
        "QT_", "QML", "GIO_", "GST_", "GDK_", "GI_TYPELIB", "OPENSSL_", "SSL_", "URE_",
        "UNO_", "UserInstallation", "MALLOC_", "GLIBC_TUNABLES", "SASL_", "KRB5", "LIBGL_",
        "__EGL", "__GLX", "VK_", "LIBVA_", "OCL_", "TCL_", "GEM_", "PHP", "GUILE_",
        "DOTNET_", "CORECLR_", "COMPlus_", "JAVA_", "JDK_", "ERL_", "R_HOME", "R_LIBS",
        "OCAML", "GCONV", "NLSPATH", "LOCPATH", "HOSTALIASES", "RES_OPTIONS", "XDG_",
        "DBUS_", "GNUPG", "GPG_", "SSH_ASKPASS", "DISPLAY", "WAYLAND_", "XAUTHORITY",
        "LESS", "MANPAGER", "BROWSER", "TERMINFO", "INPUTRC", "ZDOTDIR", "NODE_",
        "DENO_", "BUN_"};
    /* Python's switches that load nothing */
    static const char *const plain[] = {
        "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE", "PYTHONIOENCODING",
        "PYTHONUTF8", "PYTHONHASHSEED", "PYTHONSAFEPATH", "PYTHONOPTIMIZE",
        "PYTHONFAULTHANDLER", "PYTHONCOERCECLOCALE", "PYTHONLEGACYWINDOWSSTDIO"};
    size_t n = strcspn(name, "=");
    for (size_t i = 0; i < SG_ARRAY_LEN(plain); i++)
        if (strlen(plain[i]) == n && !strncmp(name, plain[i], n))
            return false;
    if (sg_shell_name_loads_code(name))
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(prefixes); i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

#define ENVIRON_MAX (256 * 1024)

static bool launched_with(char *const *env, size_t nenv, const char *e)
{
    for (size_t i = 0; i < nenv; i++)
        if (!strcmp(env[i], e))
            return true;
    return false;
}

const char *sg_exectree_env_unsafe(pid_t pid, char *const *env, size_t nenv, char *name,
                                   size_t n)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/environ", (int)pid);
    cleanup_fd int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "its environment cannot be read";
    cleanup_free char *buf = sg_xmalloc(ENVIRON_MAX + 1);
    size_t len = 0;
    ssize_t r;
    while (len < ENVIRON_MAX && (r = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
        len += (size_t)r;
    if (len == ENVIRON_MAX) /* never cut to a prefix and judged */
        return "its environment is too large to read whole";
    buf[len] = '\0';
    for (const char *e = buf; e < buf + len; e += strlen(e) + 1) {
        if (!loads_code(e) || launched_with(env, nenv, e))
            continue; /* or the sandbox's own, as it was launched */
        snprintf(name, n, "%.*s", (int)strcspn(e, "="), e);
        return "its environment names code for it to load";
    }
    /* what the sandbox set to keep code out (PYTHONNOUSERSITE: no .pth from
     * the home the skill writes) must still be there */
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(env[i], "PYTHON", 6))
            continue;
        bool kept = false;
        for (const char *e = buf; e < buf + len && !kept; e += strlen(e) + 1)
            kept = !strcmp(e, env[i]);
        if (!kept) {
            snprintf(name, n, "%.*s", (int)strcspn(env[i], "="), env[i]);
            return "its environment drops what the sandbox set to keep code out";
        }
    }
    return NULL;
}

/* Drop the entries whose process is gone (its pid free, or another's). */
static void prune(struct sg_exectree *t)
{
    for (size_t i = 0; i < t->n;) {
        pid_t ppid;
        unsigned long long start;
        if (sg_proc_parent(t->roots[i].pid, &ppid, &start) && start == t->roots[i].start)
            i++;
        else
            t->roots[i] = t->roots[--t->n];
    }
}

static const char *add(struct sg_exectree *t, pid_t pid, const char *rule, bool barrier)
{
    pid_t ppid;
    unsigned long long start;
    if (!sg_proc_parent(pid, &ppid, &start))
        return "it cannot be named";
    for (size_t i = 0; i < t->n; i++)
        if (t->roots[i].pid == pid && t->roots[i].start == start) {
            /* a root or member that runs what no answer covers leaves */
            t->roots[i].barrier |= barrier;
            if (!barrier && !t->roots[i].barrier)
                snprintf(t->roots[i].rule, sizeof t->roots[i].rule, "%s", rule);
            return NULL;
        }
    if (t->n == SG_EXECTREE_MAX)
        prune(t);
    if (t->n == SG_EXECTREE_MAX)
        return "too many processes of programs allowed with what they run are alive";
    struct sg_exectree_root *r = &t->roots[t->n++];
    r->pid = pid, r->start = start, r->barrier = barrier;
    snprintf(r->rule, sizeof r->rule, "%s", rule);
    return NULL;
}

const char *sg_exectree_add(struct sg_exectree *t, pid_t pid, const char *rule,
                            char *const *env, size_t nenv)
{
    char name[128];
    if (has_children(pid))
        return "it had started other processes before it ran the program";
    const char *why = sg_exectree_env_unsafe(pid, env, nenv, name, sizeof name);
    return why ? why : add(t, pid, rule, false);
}

const char *sg_exectree_bar(struct sg_exectree *t, pid_t pid)
{
    return add(t, pid, "", true);
}

static const struct sg_exectree_root *root_named(const struct sg_exectree *t, pid_t pid,
                                                 unsigned long long start)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->roots[i].pid == pid && t->roots[i].start == start)
            return &t->roots[i];
    return NULL;
}

const struct sg_exectree_root *sg_exectree_of(const struct sg_exectree *t, pid_t pid)
{
    if (!t->n)
        return NULL;
    pid_t ppid = 0;
    unsigned long long start, child_start = ~0ULL;
    for (int depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
        if (!sg_proc_parent(pid, &ppid, &start) || start > child_start)
            return NULL; /* gone, or a pid reused since the child was born */
        const struct sg_exectree_root *r = root_named(t, pid, start);
        if (r)
            return r->barrier ? NULL : r;
        child_start = start;
        pid = ppid;
    }
    return NULL;
}
