/* What git runs or trusts because a repository's configuration names it
 * (protected.h's targets that no list can name): the folder core.hooksPath
 * names, the program core.fsmonitor names, the files include.path and
 * includeIf.*.path name (included files' own includes too), where a
 * .git/hooks that is a symlink leads, and a git folder reached through a
 * .git file or commondir whatever it is called (`.bare`, a
 * --separate-git-dir): its config, config.worktree, commondir and hooks.
 *
 * Repositories are learnt as they are met: the one that holds a path being
 * checked, and every one a bounded walk of a run's write folders and
 * working folder finds (sg_git_learn). What any known repository (or the
 * person's ~/.gitconfig, ~/.config/git/config) names is protected wherever
 * it lies, in its worktree or not. Each config is read again when its
 * size, times or inode change; read safely: regular files only, never
 * blocking (a FIFO or /dev/zero named by an include is no file), at most
 * SG_GIT_CONFIG_MAX bytes and SG_GIT_FILES files a repository. A
 * repository that names more than this can hold is protected whole (its
 * worktree): what does not fit is asked, never dropped.
 *
 * A folder that git itself would take for a git folder (HEAD beside
 * objects and refs, or a config: `git init --bare x`, a folder turned
 * into one) is one too: its config, HEAD, objects, refs and hooks, when
 * the last of what makes it one is made. Beyond core.hooksPath and
 * core.fsmonitor, every key whose value git runs as a command (a pager,
 * an editor, filter and diff drivers, credential helpers, ! aliases ...)
 * protects each word of it that is a path.
 *
 * Not covered: a repository nothing led to (neither the path checked nor
 * the walks) whose config names a folder elsewhere, and core.worktree
 * (a relative hooksPath is taken from the folder that holds .git). */
#ifndef SG_GITNAMED_H
#define SG_GITNAMED_H

#include <stdbool.h>
#include <stddef.h>

#define SG_GIT_CONFIG_MAX (1 << 20)
#define SG_GIT_FILES 64
#define SG_GIT_REPOS 1024

/* Why git runs or trusts the object at path (absolute, its real path), or
 * NULL. exact: only what a config names by that very name (a hook's
 * sample: what lies in a hooks folder is not named by it). */
const char *sg_git_named(const char *path, bool exact);
/* Does dir hold something a known repository's configuration names (a
 * folder moved or linked there moves it: `tools` above a hooksPath of
 * tools/hooks)? Why, or NULL. */
const char *sg_git_named_below(const char *dir);
/* Learn the repositories below dir: a walk of at most max_entries entries,
 * max_depth folders down, no link followed, no other filesystem entered. */
void sg_git_learn(const char *dir, size_t max_entries, int max_depth);

#endif
