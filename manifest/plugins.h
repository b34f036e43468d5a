/* Claude Code plugins: where their skills are, what Claude Code calls them
 * and whether it has them switched on.
 *
 * ~/.claude/plugins/installed_plugins.json names each installed plugin
 * ("name@marketplace") and the folder it lives in (installPath; format 1 has
 * one entry per plugin, format 2 a list, one per scope). A plugin's skills
 * are the paths its manifest declares under "skills" (.claude-plugin/
 * plugin.json, or, for a plugin whose marketplace entry is its manifest,
 * the entry in the marketplace's .claude-plugin/marketplace.json); without
 * such paths, its skills/ folder; without that, a SKILL.md at its root.
 * Claude Code names the skills "plugin:skill". enabledPlugins in
 * ~/.claude/settings.json, then ./.claude/settings.json and
 * ./.claude/settings.local.json (the later wins) says which are on.
 *
 * Every file here is read capped (SG_PLUGIN_FILE_MAX) and only when it
 * belongs to the user running skillgate (sg_read_private_file); the paths a
 * plugin's manifest declares stay inside the plugin's folder. */
#ifndef SG_PLUGINS_H
#define SG_PLUGINS_H

#include <stddef.h>

#include "diag.h"

#define SG_PLUGIN_FILE_MAX (1024 * 1024)
#define SG_PLUGINS_MAX 1000     /* installed plugins read */
#define SG_PLUGIN_PATHS_MAX 200 /* skill paths one plugin may declare */

struct sg_plugin {
    char *id;    /* the key in installed_plugins.json: "name@marketplace" */
    char *name;  /* plugin.json's name, else the id before '@' */
    char *scope; /* "user", "project", "local" (format 2), or NULL */
    char *root;  /* installPath */
    char **skill_paths; /* absolute: each a skill or a folder of skills */
    size_t nskill_paths;
    int enabled; /* 1 or 0 as enabledPlugins says, -1 when it does not name it */
};

struct sg_plugins {
    struct sg_plugin *v;
    size_t n;
};

/* The plugins installed for home's user that apply in cwd (user scope, or
 * a project scope whose projectPath holds cwd). Problems with the files
 * become warnings in d; a missing installed_plugins.json is no problem. */
void sg_plugins_load(const char *home, const char *cwd, struct sg_plugins *out,
                     struct sg_diags *d);
void sg_plugins_free(struct sg_plugins *p);

/* The "skills" that a plugin manifest (plugin.json, or a marketplace's
 * entry for the plugin named `name` when `name` is set) declares: relative
 * paths, each checked to stay inside the plugin (no absolute path, no ".."
 * component). Returns 1 with *paths (maybe empty) when the manifest declares
 * skills, 0 when it does not, -EINVAL when the bytes are not such a
 * manifest; problems go to d against `file`. For fuzzing too. */
int sg_plugin_manifest_skills(const char *buf, size_t len, const char *name, const char *file,
                              char ***paths, size_t *npaths, char **plugin_name,
                              struct sg_diags *d);

#endif
