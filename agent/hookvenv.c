/* skillgate hook: a Python environment the agent runs a skill's script
 * with, vetted once by a person and pinned to its content (hook_int.h). */
#include "hook.h"
#include "hook_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "digest.h"
#include "util.h"

#define VENV_CFG_MAX (64 * 1024) /* pyvenv.cfg read at most */

/* The venv folder py names: a folder with a pyvenv.cfg, or a program in
 * such a folder's bin/ as written (no . or .. step: the program the shell
 * starts is then the bin/ entry the digest covers). Real path, or NULL. */
static char *venv_dir(const char *py)
{
    struct stat st;
    cleanup_free char *dir = sg_xstrdup(py);
    if (py[0] != '/' || strstr(py, "/./") || strstr(py, "/../") || strstr(py, "//"))
        return NULL;
    if (stat(py, &st) < 0)
        return NULL;
    if (!S_ISDIR(st.st_mode)) {
        char *sl = strrchr(dir, '/');
        *sl = '\0';
        if (!sg_str_has_suffix(dir, "/bin"))
            return NULL;
        dir[strlen(dir) - 4] = '\0';
    }
    cleanup_free char *cfg = sg_xasprintf("%s/pyvenv.cfg", dir);
    if (stat(cfg, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    return sg_path_real(dir);
}

/* Does pyvenv.cfg let the system's site-packages in (code outside the
 * folder the digest covers)? Unreadable or too long counts as yes. */
static bool system_site(const char *dir)
{
    cleanup_free char *cfg = sg_xasprintf("%s/pyvenv.cfg", dir), *text = NULL;
    size_t len = 0;
    if (sg_read_file_capped(cfg, VENV_CFG_MAX, &text, &len) < 0 || !text)
        return true;
    for (char *sv, *ln = strtok_r(text, "\n", &sv); ln; ln = strtok_r(NULL, "\n", &sv)) {
        ln += strspn(ln, " \t");
        if (strncasecmp(ln, "include-system-site-packages", 28)) /* site.py lowers it */
            continue;
        char *v = ln + 28 + strspn(ln + 28, " \t");
        if (*v != '=')
            continue;
        v += 1 + strspn(v + 1, " \t");
        if (strncasecmp(v, "false", 5))
            return true;
    }
    return false;
}

/* <state>/vetted-python/<hex of sha256(the folder's real path)> */
static char *store_path(const char *dir)
{
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text(dir, strlen(dir), d);
    cleanup_free char *state = sg_state_dir();
    return sg_xasprintf("%s/vetted-python/%s", state, d + strlen("sha256:"));
}

void sg_hook_venv_look(const char *py, struct sg_hook_venv *v)
{
    memset(v, 0, sizeof *v);
    v->dir = venv_dir(py);
    if (!v->dir)
        return;
    cleanup_free char *inbin = sg_xasprintf("%s/bin/pyvenv.cfg", v->dir);
    if (access(inbin, F_OK) == 0) { /* site.py reads that one first: two readings */
        v->why = sg_xstrdup("a pyvenv.cfg in its bin/ too, which Python reads first");
        return;
    }
    if (system_site(v->dir)) {
        v->why = sg_xstrdup("its pyvenv.cfg lets the system's packages in, which a digest of "
                            "the environment does not cover");
        return;
    }
    int e = sg_skill_digest(v->dir, v->digest, NULL);
    if (e < 0) {
        v->digest[0] = '\0';
        v->why = sg_xasprintf("its content digest cannot be taken (%s)",
                              e == -EFBIG ? "over 100,000 files or 1 GiB" : strerror(-e));
        return;
    }
    cleanup_free char *store = store_path(v->dir), *kept = NULL;
    size_t len = 0;
    if (sg_read_file_capped(store, PATH_MAX + 128, &kept, &len) == 0 && kept) {
        kept[strcspn(kept, "\n")] = '\0';
        v->vetted = !strcmp(kept, v->digest);
        v->changed = !v->vetted;
    }
}

int sg_hook_venv_vet(const struct sg_hook_venv *v)
{
    if (!v->dir || !v->digest[0])
        return -EINVAL;
    cleanup_free char *store = store_path(v->dir);
    int e = sg_mkdir_parent(store, 0700);
    if (e < 0)
        return e;
    cleanup_free char *text = sg_xasprintf("%s\n%s\n", v->digest, v->dir);
    return sg_write_file_atomic(store, text, 0600);
}

char *sg_hook_venv_shown(const struct sg_hook_venv *v)
{
    return sg_xasprintf("the agent's Python is the environment %s (sha256:%.12s…)", v->dir,
                        v->digest + strlen("sha256:"));
}

void sg_hook_venv_free(struct sg_hook_venv *v)
{
    free(v->dir), free(v->why);
    memset(v, 0, sizeof *v);
}
