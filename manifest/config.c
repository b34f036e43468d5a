#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "parse.h"
#include "skill.h"
#include "util.h"
#include "ynode.h"

char *sg_config_default_path(void)
{
    const char *xdg = secure_getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/')
        return sg_xasprintf("%s/skillgate/config.yaml", xdg);
    const char *home = sg_invoking_home();
    return home ? sg_xasprintf("%s/.config/skillgate/config.yaml", home) : NULL;
}

void sg_config_free(struct sg_config *cfg)
{
    free(cfg->path);
    for (size_t i = 0; i < cfg->nskill_dirs; i++)
        free(cfg->skill_dirs[i]);
    free(cfg->skill_dirs);
    memset(cfg, 0, sizeof *cfg);
}

int sg_config_load(const char *path, struct sg_config *cfg, struct sg_diags *d)
{
    memset(cfg, 0, sizeof *cfg);
    if (!path)
        return 0;
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s", strerror(errno));
        return -EINVAL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SG_MANIFEST_MAX) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "not a regular file under %d bytes",
                    SG_MANIFEST_MAX);
        return -EINVAL;
    }
    cleanup_free char *buf = sg_xmalloc((size_t)st.st_size + 1);
    size_t len = 0;
    while (len < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    cfg->path = sg_xstrdup(path);
    size_t before = sg_diags_count(d, SG_ERROR);
    struct sg_ynode *root = NULL;
    if (sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        return -EINVAL;
    if (root && !sg_y_is_null(root)) {
        struct sg_pctx c = {.file = path, .origin = "config.yaml", .d = d};
        if (root->type != SG_Y_MAP) {
            pc_err(&c, root, NULL, "must be a mapping");
        } else {
            for (size_t i = 0; i + 1 < root->n; i += 2) {
                const struct sg_ynode *k = root->kids[i], *v = root->kids[i + 1];
                if (strcmp(k->str, "skill_dirs") != 0) {
                    pc_warn(&c, k, k->str, "unknown key, ignored");
                    continue;
                }
                if (v->type != SG_Y_SEQ) {
                    pc_err(&c, v, "skill_dirs", "must be a list of directories");
                    continue;
                }
                for (size_t j = 0; j < v->n; j++) {
                    cleanup_free char *f = sg_xasprintf("skill_dirs[%zu]", j);
                    const char *s = pc_string(&c, v->kids[j], f);
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
                        const char *slash = strrchr(path, '/');
                        abs = slash ? sg_xasprintf("%.*s/%s", (int)(slash - path), path, s)
                                    : sg_xstrdup(s);
                    }
                    cfg->skill_dirs =
                        sg_xrealloc(cfg->skill_dirs, (cfg->nskill_dirs + 1) * sizeof(char *));
                    cfg->skill_dirs[cfg->nskill_dirs++] = abs;
                }
            }
        }
    }
    sg_ynode_free(root);
    return sg_diags_count(d, SG_ERROR) > before ? -EINVAL : 0;
}
