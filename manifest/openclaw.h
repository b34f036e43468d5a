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
/* The three names OpenClaw reads it under. */
int sg_openclaw_key(const char *k);
/* Where a program it names is, on the sandbox's PATH (/usr/local/bin,
 * /usr/bin, /bin): a new string, or NULL when none there (a path with a
 * slash, as given, when it is an executable file). */
char *sg_openclaw_which(const char *bin);

#endif
