/* skillgate wrap: any command under the sandbox and broker a skill gets,
 * with the defaults of Claude Code's Bash sandbox (srt): the working
 * folder and its subfolders writable, the rest of the machine readable
 * except the credentials a skill run masks, every program run (each
 * execve still meets the person's deny and ask rules, on the resolved
 * file), hosts and writes elsewhere asked.
 *
 * The command becomes a skill without a folder of its own: its "root" is
 * the working folder, writable; the environment is the caller's minus
 * names that say they hold a secret; no digest is taken (grants for a
 * wrapped command hold for every wrapped command).
 *
 * Settings, each key with the meaning its owner documents, read from
 * --settings FILE (srt's format, or a Claude Code settings file's
 * `sandbox` object), else ~/.srt-settings.json, plus the `sandbox` object
 * of ~/.claude/settings.json. The project's own .claude/settings.json and
 * settings.local.json are the repository's: what they narrow is applied,
 * what they widen is said and not applied. What skillgate cannot model
 * exactly (a glob in a path, an allowRead inside a denyRead) is refused
 * or kept on the safe side, and said: never allowed on a reading. */
#ifndef SG_WRAP_H
#define SG_WRAP_H

#include <stddef.h>

#include <jansson.h>

#include "skill.h"

/* Every settings file is capped before it is parsed. */
#define SG_WRAP_SETTINGS_MAX (1 << 20)

struct sg_wrap {
    struct sg_skill *sk; /* the command as a skill */
    char *cwd;           /* the working folder, real */
    char **masks;        /* path, why, path, why... (sg_run_request.masks) */
    size_t nmasks;
    char **notes;        /* what the settings did not apply, NULL-terminated */
    size_t nnotes;
    char *env_note;      /* the variables kept out (said where a person reads it), or NULL */
    char **settings;     /* the settings files read, NULL-terminated */
    size_t nsettings;
    /* what the settings said, gathered: write, readonly (paths), hosts,
     * denied_hosts, denied_env (names) */
    json_t *acc;
};

/* The command argv[0..argc) run in cwd (NULL: the current folder) under
 * settings (NULL: the defaults above), env being the caller's. 0, or
 * -errno with *why (caller frees) naming the file, key and value, or the
 * folder, at fault. */
int sg_wrap_prepare(const char *cwd, char *const *argv, size_t argc, const char *settings,
                    char *const *env, struct sg_wrap *w, char **why);
void sg_wrap_free(struct sg_wrap *w);

/* One settings document (srt's, or a Claude Code settings file when it
 * has a `sandbox` object) read into w's lists; for tests and fuzzing.
 * name is shown in messages; base is where its relative paths start. */
int sg_wrap_settings_text(struct sg_wrap *w, const char *name, const char *text, size_t len,
                          const char *base, char **why);

#endif
