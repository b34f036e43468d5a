#include "plugins.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "util.h"

/* A JSON file that decides which folders count: NULL when it is missing,
 * unreadable, not ours or not JSON (the last three with a warning). */
static json_t *read_json(const char *path, struct sg_diags *d)
{
    cleanup_free char *buf = NULL, *why = NULL;
    size_t len = 0;
    int r = sg_read_private_file(path, SG_PLUGIN_FILE_MAX, &buf, &len, &why);
    if (r == -EPERM) {
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "ignored: %s", why);
        return NULL;
    }
    if (r == -EFBIG || r == -EINVAL) {
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "ignored: not a regular file under %d bytes",
                    SG_PLUGIN_FILE_MAX);
        return NULL;
    }
    if (r < 0) {
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "cannot be read: %s", strerror(-r));
        return NULL;
    }
    if (!buf)
        return NULL;
    json_error_t je;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        sg_diag_add(d, SG_WARNING, path, je.line, je.column, NULL, "not JSON: %s", je.text);
    return j;
}

/* A path a plugin declares, as written ("./skills/x"): relative, with no
 * ".." component; returned without its leading "./" parts, or NULL. */
static char *confined_path(const char *s)
{
    if (!*s || *s == '/' || strlen(s) >= PATH_MAX)
        return NULL;
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return NULL;
        p += n;
        p += *p == '/';
    }
    while (s[0] == '.' && s[1] == '/')
        for (s += 2; *s == '/'; s++)
            ;
    return sg_xstrdup(*s ? s : ".");
}

static void add_path(char ***paths, size_t *n, size_t *cap, const char *s, const char *file,
                     struct sg_diags *d)
{
    cleanup_free char *p = confined_path(s);
    if (!p) {
        sg_diag_add(d, SG_WARNING, file, 0, 0, "skills",
                    "ignored \"%s\": a plugin's skill paths stay inside the plugin (relative, no "
                    "\"..\")",
                    s);
        return;
    }
    if (*n >= SG_PLUGIN_PATHS_MAX) {
        if (*n == SG_PLUGIN_PATHS_MAX)
            sg_diag_add(d, SG_WARNING, file, 0, 0, "skills",
                        "more than %d skill paths: the rest are ignored", SG_PLUGIN_PATHS_MAX);
        return;
    }
    sg_grow(paths, cap, *n + 1, sizeof **paths);
    (*paths)[(*n)++] = steal_pointer(&p);
}

/* In a marketplace: the entry of the plugin called name. */
static json_t *marketplace_entry(json_t *root, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(root, "plugins"), i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && !strcmp(n, name))
            return e;
    }
    return NULL;
}

int sg_plugin_manifest_skills(const char *buf, size_t len, const char *name, const char *file,
                              char ***paths, size_t *npaths, char **plugin_name,
                              struct sg_diags *d)
{
    *paths = NULL;
    *npaths = 0;
    if (plugin_name)
        *plugin_name = NULL;
    if (len > SG_PLUGIN_FILE_MAX)
        return -EINVAL;
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        sg_diag_add(d, SG_WARNING, file, je.line, je.column, NULL, "not JSON: %s", je.text);
        return -EINVAL;
    }
    json_t *m = name ? marketplace_entry(root, name) : root;
    if (!json_is_object(m)) {
        json_decref(root);
        if (name)
            return 0;
        sg_diag_add(d, SG_WARNING, file, 0, 0, NULL, "not a plugin manifest (not a JSON object)");
        return -EINVAL;
    }
    const char *pn = json_string_value(json_object_get(m, "name"));
    if (plugin_name && pn && *pn)
        *plugin_name = sg_xstrdup(pn);
    json_t *sk = json_object_get(m, "skills");
    size_t cap = 0;
    int r = sk != NULL;
    if (json_is_string(sk)) {
        add_path(paths, npaths, &cap, json_string_value(sk), file, d);
    } else if (json_is_array(sk)) {
        size_t i;
        json_t *e;
        json_array_foreach(sk, i, e)
        {
            if (json_is_string(e))
                add_path(paths, npaths, &cap, json_string_value(e), file, d);
            else
                sg_diag_add(d, SG_WARNING, file, 0, 0, "skills",
                            "entry %zu is not a path string: ignored", i + 1);
        }
    } else if (sk) {
        sg_diag_add(d, SG_WARNING, file, 0, 0, "skills",
                    "not a path or a list of paths: ignored");
        r = 0;
    }
    json_decref(root);
    return r;
}

/* The skill paths, absolute and real, that one manifest file declares.
 * The plugin wrote the file, as it wrote its skills: what it says is
 * capped and confined, not trusted. */
static int declared(const char *file, const char *entry_name, struct sg_plugin *p,
                    struct sg_diags *d)
{
    cleanup_free char *buf = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(file, SG_PLUGIN_FILE_MAX, &buf, &len);
    if (r < 0)
        sg_diag_add(d, SG_WARNING, file, 0, 0, NULL, "ignored: %s",
                    r == -EFBIG   ? "over 1 MiB"
                    : r == -EINVAL ? "not a regular file"
                                   : strerror(-r));
    if (r < 0 || !buf)
        return 0;
    char **rel;
    size_t n;
    cleanup_free char *pname = NULL;
    r = sg_plugin_manifest_skills(buf, len, entry_name, file, &rel, &n, &pname, d);
    if (pname && !entry_name) {
        free(p->name);
        p->name = steal_pointer(&pname);
    }
    if (r <= 0)
        return 0;
    cleanup_free char *real_root = realpath(p->root, NULL);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *abs = sg_xasprintf("%s/%s", p->root, rel[i]);
        cleanup_free char *real = realpath(abs, NULL);
        if (!real)
            sg_diag_add(d, SG_WARNING, file, 0, 0, "skills", "\"%s\": %s", rel[i],
                        strerror(errno));
        else if (!real_root || !sg_path_within(real, real_root))
            sg_diag_add(d, SG_WARNING, file, 0, 0, "skills",
                        "ignored \"%s\": it leads out of the plugin's folder (to %s)", rel[i],
                        real);
        else {
            sg_grow(&p->skill_paths, &cap, p->nskill_paths + 1, sizeof *p->skill_paths);
            p->skill_paths[p->nskill_paths++] = steal_pointer(&real);
        }
        free(rel[i]);
    }
    free(rel);
    return 1;
}

/* Where a marketplace's clone lives: known_marketplaces.json, else the
 * folder Claude Code clones it to. */
static char *marketplace_dir(json_t *known, const char *home, const char *mkt)
{
    const char *loc =
        json_string_value(json_object_get(json_object_get(known, mkt), "installLocation"));
    if (loc && *loc == '/')
        return sg_xstrdup(loc);
    return sg_xasprintf("%s/.claude/plugins/marketplaces/%s", home, mkt);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void find_skills(struct sg_plugin *p, json_t *known, const char *home,
                        struct sg_diags *d)
{
    cleanup_free char *pj = sg_xasprintf("%s/.claude-plugin/plugin.json", p->root);
    if (declared(pj, NULL, p, d))
        return;
    const char *at = strrchr(p->id, '@');
    if (at && at[1] && !strchr(at + 1, '/') && strcmp(at + 1, "..") && strcmp(at + 1, ".")) {
        cleanup_free char *md = marketplace_dir(known, home, at + 1);
        cleanup_free char *mj = sg_xasprintf("%s/.claude-plugin/marketplace.json", md);
        cleanup_free char *entry = sg_xstrndup(p->id, (size_t)(at - p->id));
        if (declared(mj, entry, p, d))
            return;
    }
    char *dir = sg_xasprintf("%s/skills", p->root);
    if (!is_dir(dir)) {
        free(dir);
        dir = sg_xstrdup(p->root);
    }
    p->skill_paths = sg_xmalloc(sizeof *p->skill_paths);
    p->skill_paths[p->nskill_paths++] = dir;
}

/* enabledPlugins of one settings file, over what earlier files said. */
static void apply_enabled(struct sg_plugins *ps, const char *file, struct sg_diags *d)
{
    json_t *j = read_json(file, d);
    json_t *en = json_object_get(j, "enabledPlugins");
    for (size_t i = 0; en && i < ps->n; i++) {
        json_t *v = json_object_get(en, ps->v[i].id);
        if (json_is_boolean(v))
            ps->v[i].enabled = json_is_true(v);
    }
    json_decref(j);
}

static bool applies_here(json_t *entry, const char *cwd)
{
    const char *scope = json_string_value(json_object_get(entry, "scope"));
    if (!scope || !strcmp(scope, "user"))
        return true;
    const char *proj = json_string_value(json_object_get(entry, "projectPath"));
    return proj && cwd && *proj == '/' && sg_path_within(cwd, proj);
}

static void add_plugin(struct sg_plugins *ps, size_t *cap, const char *id, json_t *entry,
                       const char *file, struct sg_diags *d)
{
    const char *root = json_string_value(json_object_get(entry, "installPath"));
    if (!root || *root != '/') {
        sg_diag_add(d, SG_WARNING, file, 0, 0, "installPath",
                    "plugin \"%s\": no absolute installPath: ignored", id);
        return;
    }
    if (!is_dir(root)) {
        sg_diag_add(d, SG_WARNING, file, 0, 0, "installPath",
                    "plugin \"%s\": %s is not a folder: ignored", id, root);
        return;
    }
    if (ps->n >= SG_PLUGINS_MAX) {
        if (ps->n == SG_PLUGINS_MAX)
            sg_diag_add(d, SG_WARNING, file, 0, 0, NULL,
                        "more than %d plugins: the rest are ignored", SG_PLUGINS_MAX);
        return;
    }
    const char *at = strrchr(id, '@');
    const char *scope = json_string_value(json_object_get(entry, "scope"));
    sg_grow(&ps->v, cap, ps->n + 1, sizeof *ps->v);
    ps->v[ps->n++] = (struct sg_plugin){
        .id = sg_xstrdup(id),
        .name = at && at != id ? sg_xstrndup(id, (size_t)(at - id)) : sg_xstrdup(id),
        .scope = scope ? sg_xstrdup(scope) : NULL,
        .root = sg_xstrdup(root),
        .enabled = -1,
    };
}

void sg_plugins_load(const char *home, const char *cwd, struct sg_plugins *out,
                     struct sg_diags *d)
{
    memset(out, 0, sizeof *out);
    cleanup_free char *file = sg_xasprintf("%s/.claude/plugins/installed_plugins.json", home);
    json_t *j = read_json(file, d);
    json_t *plugins = json_object_get(j, "plugins");
    if (j && !json_is_object(plugins))
        sg_diag_add(d, SG_WARNING, file, 0, 0, "plugins", "not an object: no plugins read");
    size_t cap = 0;
    const char *id;
    json_t *v;
    json_object_foreach(plugins, id, v)
    {
        if (json_is_object(v)) { /* format 1: one install */
            add_plugin(out, &cap, id, v, file, d);
            continue;
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            if (applies_here(e, cwd))
                add_plugin(out, &cap, id, e, file, d);
        }
    }
    json_decref(j);
    if (!out->n)
        return;
    cleanup_free char *kf = sg_xasprintf("%s/.claude/plugins/known_marketplaces.json", home);
    json_t *known = read_json(kf, d);
    for (size_t i = 0; i < out->n; i++)
        find_skills(&out->v[i], known, home, d);
    json_decref(known);
    cleanup_free char *us = sg_xasprintf("%s/.claude/settings.json", home);
    apply_enabled(out, us, d);
    if (cwd) {
        cleanup_free char *ps = sg_xasprintf("%s/.claude/settings.json", cwd);
        cleanup_free char *pl = sg_xasprintf("%s/.claude/settings.local.json", cwd);
        apply_enabled(out, ps, d);
        apply_enabled(out, pl, d);
    }
}

void sg_plugins_free(struct sg_plugins *p)
{
    for (size_t i = 0; i < p->n; i++) {
        struct sg_plugin *x = &p->v[i];
        free(x->id);
        free(x->name);
        free(x->scope);
        free(x->root);
        for (size_t k = 0; k < x->nskill_paths; k++)
            free(x->skill_paths[k]);
        free(x->skill_paths);
    }
    free(p->v);
    memset(p, 0, sizeof *p);
}
