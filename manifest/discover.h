/* Finding skills: the places Claude Code looks, plus the user's own. */
#ifndef SG_DISCOVER_H
#define SG_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "plugins.h"
#include "policy.h"

/* Precedence, highest first: when two skills share a name, the one from the
 * earlier source wins and the other is listed as shadowed. OpenClaw's own
 * places keep OpenClaw's order (openclaw.h: workspace, ~/.agents/skills,
 * managed), and a skill found in one is judged by OpenClaw's rules.
 * X(ID, "name", "description") */
#define SG_SOURCES(X)                                                         \
    X(CLI, "cli", "a directory given on the command line")                  \
    X(USER, "user", "~/.claude/skills (your personal skills)")              \
    X(CONFIG, "config", "skill_dirs in config.yaml")                        \
    X(PROJECT, "project", "./.claude/skills in the current directory")      \
    X(NESTED, "nested", ".claude/skills below the current directory")      \
    X(WORKSPACE, "workspace", "./skills and ./.agents/skills (OpenClaw's workspace)") \
    X(OPENCLAW, "openclaw", "~/.openclaw/workspace{,-*}/{skills,.agents/skills} (OpenClaw's)") \
    X(SHARED, "shared", "~/.agents/skills, ~/.openclaw/skills, ~/.clawdbot/skills") \
    X(PLUGIN, "plugin", "~/.claude/plugins (installed Claude Code plugins)")

enum sg_source {
#define X(id, name, desc) SG_SRC_##id,
    SG_SOURCES(X)
#undef X
};

const char *sg_source_name(enum sg_source s);
const char *sg_source_desc(enum sg_source s);

#define SG_DISCOVER_MAX_DEPTH 6       /* below a skills directory */
#define SG_DISCOVER_NESTED_DEPTH 8    /* looking for nested .claude/skills */
#define SG_DISCOVER_MAX_DIRS 200000   /* directories visited in one discovery */

struct sg_found {
    struct sg_skill *skill;
    enum sg_source source;
    size_t shadowed_by; /* index of the winner, or SIZE_MAX */
    /* what Claude Code calls it: the skill's name (its folder's without
     * one), "plugin:skill" for a plugin's; what `run NAME` takes */
    char *name;
    const struct sg_plugin *plugin; /* in plugins, or NULL */
};

struct sg_discovery {
    struct sg_found *v;
    size_t n, cap;
    struct sg_plugins plugins;
    struct sg_diags diags; /* problems with the places, not the skills */
    size_t dirs_visited;
};

struct sg_discover_opts {
    const char *const *dirs; /* command-line directories */
    size_t ndirs;
    bool defaults;           /* also the user, config, project and nested places */
    const char *home;        /* for ~/.claude/skills; NULL: the invoking user's */
    const char *cwd;         /* for ./.claude/skills; NULL: the current directory */
    const char *config_file; /* NULL: the default location */
    /* with defaults: only where the person keeps skills (user, config,
     * shared, plugins enabled in the person's settings), none from the
     * current folder (project, nested, workspace) or OpenClaw's default
     * workspace, which an agent writes */
    bool persons_only;
};

int sg_discover(const struct sg_discover_opts *o, struct sg_discovery *out);
void sg_discovery_free(struct sg_discovery *d);

/* The skill that wins under name (sg_found.name); else the first found
 * (highest precedence) that is kept in a folder of that name, as `clawhub
 * install` keeps a skill under its registry slug whatever its name says
 * (a plugin's skills are named "plugin:skill" only); or SIZE_MAX. */
size_t sg_discovery_find(const struct sg_discovery *d, const char *name);

/* Another skill answering the name the skill at i (a winner) answers,
 * when one of the two is the working folder's (project, nested) and the
 * other the person's own (user, shared): a folder an agent or a checkout
 * writes would stand in for the person's skill, or the other way; its
 * index, or SIZE_MAX. */
size_t sg_discovery_ambiguous(const struct sg_discovery *d, size_t i);
/* The first skill (highest precedence; one taken out of d, whose skill is
 * NULL, skipped) kept in a folder of that name, or SIZE_MAX. */
size_t sg_discovery_find_folder(const struct sg_discovery *d, const char *name);
/* The winning skill whose name a typo most likely meant (util.h's
 * sg_nearest; a plugin's "plugin:skill" also by its part after the colon),
 * or SIZE_MAX when none is near. */
size_t sg_discovery_nearest(const struct sg_discovery *d, const char *name);

#endif
