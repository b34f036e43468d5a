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
    free(cfg->theme);
    for (size_t i = 0; i < cfg->nkeys; i++) {
        free(cfg->keys[i].action);
        free(cfg->keys[i].keys);
    }
    free(cfg->keys);
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
            .action = sg_xstrdup(k->str), .keys = sg_xstrdup(s), .line = val->line, .col = val->col};
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
        else
            pc_warn(c, k, k->str, "unknown key, ignored");
    }
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
        cfg_apply(&c, root, cfg);
    }
    sg_ynode_free(root);
    return sg_diags_count(d, SG_ERROR) > before ? -EINVAL : 0;
}
