/* OpenClaw's runtime metadata in SKILL.md, as ClawHub documents it:
 * metadata.openclaw (aliases metadata.clawdbot, metadata.clawdis), a map of
 * requires{env, bins, anyBins, config}, primaryEnv, envVars[{name,
 * required, description}], install[], os[], emoji, homepage, always,
 * skillKey, nix. Folded into the policy where it means something to a
 * sandbox: the variables it names are the ones the skill may receive (with
 * their origin); the programs it expects are shown by resolved path and
 * still asked as Bash; config paths and install steps are shown, never
 * read or run. */
#ifndef SG_OPENCLAW_H
#define SG_OPENCLAW_H

#include <stddef.h>

struct sg_strv {
    char **v;
    size_t n;
};

struct sg_openclaw {
    char *key;                    /* which alias held it: "openclaw", "clawdbot", "clawdis" */
    struct sg_strv env, bins, any_bins, config, os, install;
    char *primary_env, *emoji, *homepage, *skill_key;
    int always;                   /* -1 unset */
};

struct sg_pctx;
struct sg_ynode;
/* metadata.<key> (a mapping) into c->sk->openclaw; problems with their
 * place, as warnings where ClawHub would accept it. */
void sg_openclaw_parse(struct sg_pctx *c, const struct sg_ynode *v, const char *field,
                       const char *key);
void sg_openclaw_free(struct sg_openclaw *o);
/* The names OpenClaw and its ports read it under: openclaw, and the
 * project's former names clawdbot, clawdis and moltbot. */
int sg_openclaw_key(const char *k);

/* Where OpenClaw keeps skills below a home, highest precedence first, as
 * its loader reads them (docs/tools/skills.md, "Loading order";
 * src/agents/skills/workspace.ts): its default workspace's skills/ and
 * .agents/skills/, then the managed ~/.openclaw/skills (~/.clawdbot under
 * the project's former name); a '*' component (one at most) is each
 * folder's name it matches, as fnmatch does. ~/.agents/skills, which OpenClaw reads
 * between the two, is shared with other agents and not OpenClaw's alone.
 * X(path below the home, true for its workspace, which the agent writes) */
#define SG_OPENCLAW_PLACES(X)                        \
    X(".openclaw/workspace/skills", true)            \
    X(".openclaw/workspace/.agents/skills", true)    \
    X(".openclaw/workspace-*/skills", true)          \
    X(".openclaw/workspace-*/.agents/skills", true)  \
    X(".openclaw/skills", false)                     \
    X(".clawdbot/skills", false)
/* workspace-*: each agent's own workspace (~/.openclaw/workspace-<agentId>,
 * OpenClaw's default for an agent added with `openclaw agents add`), by
 * name; at most this many */
#define SG_OPENCLAW_AGENTS_MAX 256

/* OpenClaw's rules, as its loader applies them (src/agents/skills/
 * local-loader.ts, src/markdown/frontmatter.ts): a skill is keyed by its
 * name, or its folder's when it has none (the folder is ClawHub's slug, so
 * the two may differ); any name is taken as written; a description is the
 * one field required: a SKILL.md without frontmatter, or whose frontmatter
 * has no description, is skipped; any other field is kept; metadata is
 * read as JSON under openclaw (or a former name), primaryEnv when it is a
 * string. A skill found in one of OpenClaw's places (below the invoking
 * user's home, or for one whose real folder is below one of them) or whose
 * frontmatter carries OpenClaw's metadata is judged by them: a new string
 * saying which ("found in ~/.openclaw/skills"), or NULL. */
char *sg_openclaw_place(const char *home, const char *real_root);
struct sg_ynode;
char *sg_openclaw_carried(const struct sg_ynode *frontmatter);
/* Where a program it names is, on the sandbox's PATH (/usr/local/bin,
 * /usr/bin, /bin): a new string, or NULL when none there (a path with a
 * slash, as given, when it is an executable file). */
char *sg_openclaw_which(const char *bin);

#endif
