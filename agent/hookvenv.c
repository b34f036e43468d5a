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
#include "pyenv.h"
#include "util.h"

#define VENV_CFG_MAX (64 * 1024) /* pyvenv.cfg read at most */

/* Does pyvenv.cfg let the system's site-packages in (code outside the
 * folder the digest covers)? site.py's default when the key is absent, as
 * for any value but false here (site.py: only "true" does, the last line
 * wins: this errs toward yes). text: printable ASCII and '\n' only. */
static bool system_site(char *text)
{
    bool said = false, yes = false;
    for (char *sv, *ln = strtok_r(text, "\n", &sv); ln; ln = strtok_r(NULL, "\n", &sv)) {
        ln += strspn(ln, " ");
        if (strncasecmp(ln, "include-system-site-packages", 28)) /* site.py lowers it */
            continue;
        char *v = ln + 28 + strspn(ln + 28, " ");
        if (*v != '=')
            continue;
        v += 1 + strspn(v + 1, " ");
        said = true;
        yes |= strncasecmp(v, "false", 5) != 0;
    }
    return yes || !said;
}

/* Why the folder's pyvenv.cfg cannot be pinned as site.py reads it, or
 * NULL (caller frees): unreadable, a byte site.py may read otherwise than
 * this reader (str.strip, universal newlines: only printable ASCII and
 * '\n' read the same), or the system's packages let in. */
static char *cfg_refused(const char *dir)
{
    cleanup_free char *cfg = sg_xasprintf("%s/pyvenv.cfg", dir), *text = NULL;
    size_t len = 0;
    int e = sg_read_file_capped(cfg, VENV_CFG_MAX, &text, &len);
    if (e < 0 || !text)
        return sg_xasprintf("its pyvenv.cfg cannot be read whole (%s)",
                            e == -EFBIG ? "over 64 KiB" : e < 0 ? strerror(-e) : "gone");
    for (size_t i = 0, line = 1; i < len; line += text[i] == '\n', i++) {
        unsigned char c = (unsigned char)text[i];
        if (c != '\n' && (c < 0x20 || c > 0x7e))
            return sg_xasprintf("its pyvenv.cfg has the byte 0x%02x on line %zu: only printable "
                                "ASCII and line ends are read by Python as skillgate reads "
                                "them", c, line);
    }
    if (system_site(text))
        return sg_xstrdup("its pyvenv.cfg lets the system's packages in, which a digest of "
                          "the environment does not cover");
    return NULL;
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
    struct sg_pyenv pe; /* as skillgate run reads it (pyenv.h): the digest covers what runs */
    sg_pyenv_read(py, &pe);
    v->dir = steal_pointer(&pe.env);
    bool in_bin = pe.cfg_in_bin, out = pe.link_out;
    sg_pyenv_free(&pe);
    if (!v->dir)
        return;
    if (in_bin) { /* site.py reads that one first: two readings */
        v->why = sg_xstrdup("a pyvenv.cfg in its bin/ too, which Python reads first");
        return;
    }
    if (out) {
        v->why = sg_xstrdup("its bin/, or a link on the way to its interpreter, leads out of "
                            "its folder, which a digest of the folder does not cover");
        return;
    }
    if ((v->why = cfg_refused(v->dir)))
        return;
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
