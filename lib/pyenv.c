/* Where Python takes its environment from (pyenv.h): site.py's reading,
 * venv() in Lib/site.py: exe_dir = dirname(sys.executable), the prefix its
 * parent, a pyvenv.cfg in exe_dir first, then in the prefix. */
#include "pyenv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define LINK_STEPS 40 /* the kernel's own limit on a chain of links */

static bool is_file(const char *dir, const char *name)
{
    cleanup_free char *p = sg_xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode); /* os.path.isfile: links followed */
}

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* p with its folder's links resolved (the last component kept as it is),
 * or NULL when the folder is not there. */
static char *folder_real(const char *p)
{
    const char *sl = strrchr(p, '/');
    cleanup_free char *given = sl ? sg_xstrndup(p, (size_t)(sl - p) + 1) : sg_xstrdup(".");
    cleanup_free char *dir = realpath(given, NULL);
    return dir ? sg_xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", sl ? sl + 1 : p) : NULL;
}

/* Does every step of the chain of links from prog stay in env, or land on
 * a file (or a link) root's alone? */
static bool chain_stays(const char *prog, const char *env)
{
    cleanup_free char *cur = sg_xstrdup(prog);
    for (int i = 0; i < LINK_STEPS; i++) {
        if (!within(cur, env) && !sg_path_roots_alone(cur))
            return false;
        char t[PATH_MAX];
        ssize_t n = readlink(cur, t, sizeof t - 1);
        if (n < 0)
            return errno == EINVAL; /* the interpreter itself */
        t[n] = '\0';
        cleanup_free char *dir = sg_xstrdup(cur);
        *strrchr(dir, '/') = '\0';
        cleanup_free char *abs = t[0] == '/' ? sg_xstrdup(t) : sg_xasprintf("%s/%s", dir, t);
        free(cur);
        cur = folder_real(abs);
        if (!cur)
            return false;
    }
    return false;
}

/* An environment's folder: its bin/python3, else bin/python. */
static char *in_folder(const char *dir)
{
    static const char *const names[] = {"bin/python3", "bin/python"};
    for (size_t i = 0; i < SG_ARRAY_LEN(names); i++) {
        char *p = sg_xasprintf("%s/%s", dir, names[i]);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

int sg_pyenv_read(const char *py, struct sg_pyenv *e)
{
    memset(e, 0, sizeof *e);
    struct stat st;
    if (py[0] != '/' || stat(py, &st) < 0)
        return -ENOENT;
    cleanup_free char *named = S_ISDIR(st.st_mode) ? in_folder(py) : sg_xstrdup(py);
    if (!named || !(e->prog = folder_real(named)))
        return -ENOENT;
    cleanup_free char *bin = sg_xstrdup(e->prog);
    *strrchr(bin, '/') = '\0';
    cleanup_free char *above = sg_xstrdup(bin[0] ? bin : "/");
    char *sl = strrchr(above, '/');
    sl == above ? (void)(sl[1] = '\0') : (void)(*sl = '\0');
    e->cfg_in_bin = is_file(bin[0] ? bin : "/", "pyvenv.cfg");
    if (!e->cfg_in_bin && !is_file(above, "pyvenv.cfg"))
        return 0;
    e->env = steal_pointer(&above);
    /* as named: NAMED/../bin is the real bin/ (no link on the way out) */
    cleanup_free char *named_env = sg_xstrdup(named);
    for (int up = 0; up < 2 && strrchr(named_env, '/'); up++)
        *strrchr(named_env, '/') = '\0';
    cleanup_free char *named_real = realpath(named_env[0] ? named_env : "/", NULL);
    e->link_out = !named_real || strcmp(named_real, e->env) || !chain_stays(e->prog, e->env);
    return 0;
}

void sg_pyenv_free(struct sg_pyenv *e)
{
    free(e->prog), free(e->env);
    memset(e, 0, sizeof *e);
}
