/* Protected targets (issue 50, item 1): what git, shells, editors, agents
 * and package managers run or trust without asking anyone.
 *
 * A person who lets a skill write a folder ("this folder, this run", a
 * glob rule, --write, a declared write path) means the files the skill
 * makes there, not `.git/config`, whose core.fsmonitor the person's next
 * `git status` runs, nor a `.git/hooks` folder renamed in, whose
 * post-checkout `git checkout` runs. So creating, writing, truncating,
 * changing the mode of, renaming onto or away, linking and removing any of
 * these is asked on its own, whatever grant covers the folder: only a rule
 * that names the exact file (or a person's answer about that file) allows
 * it. Ordinary work is not touched: git's objects, index, refs and logs
 * are no protected target, so `git commit` under a folder answer asks
 * nothing new.
 *
 * Matched on the path of the object the kernel reaches (its folder's real
 * path, symlinks resolved, and its own name: writes.c and declared.c find
 * it), never on how a skill spelled it. A pattern is a list of components
 * matched against any consecutive run of the path's components (anywhere:
 * a project's `.vscode`, a repository's `.git` at any depth), compared
 * without regard to ASCII case (a case-folding filesystem finds `.GIT`),
 * each component a glob (fnmatch: `*.git` is `.git` and a bare `x.git`);
 * `**` stands for any number of components (at most one, never first or
 * last: the matcher is linear in the path). A TREE pattern covers what it
 * names and all below; a SELF pattern only the object it names.
 *
 * Claude Code's and srt's lists (DANGEROUS_FILES, DANGEROUS_DIRECTORIES,
 * srt's mandatory deny paths) are the floor; this list goes further where
 * a program runs code from a file without asking (direnv, pre-commit,
 * husky, cargo, yarn, pnpm, bun, mise, dev containers, CI, Mercurial,
 * editors' own). Not a Python virtual environment's files: every file of
 * one is code its user runs (a replaced bin/python3 as much as an
 * activate script), so a grant of the folder that holds one covers it,
 * and protecting some of its names only broke making one. A hook's
 * `.sample` (git never runs it) is ordinary; renaming one to a hook's
 * name is asked. */
#ifndef SG_PROTECTED_H
#define SG_PROTECTED_H

#include <stdbool.h>
#include <stddef.h>

enum sg_protect_scope { SG_PROTECT_SELF, SG_PROTECT_TREE };

/* X(pattern, scope, who runs or trusts it) */
#define SG_PROTECTED_TARGETS(X)                                                                \
    X("*.git", SELF, "git finds its configuration and hooks through it (a .git file names "   \
      "another repository)")                                                                  \
    X("*.git/**/config", SELF, "git runs what it names (core.fsmonitor, core.hooksPath, "     \
      "aliases, filters)")                                                                    \
    X("*.git/**/config.worktree", SELF, "git runs what it names (core.fsmonitor, filters)")  \
    X("*.git/**/commondir", SELF, "it points git at another repository's configuration")     \
    X("*.git/**/hooks", TREE, "git runs its hooks at the next commit, checkout or merge")     \
    X(".gitmodules", SELF, "git clones and checks out the repositories it names")             \
    X(".gitconfig", SELF, "git runs what it names")                                            \
    X(".config/git", TREE, "git's own configuration: it runs what it names")                   \
    X(".hg/hgrc", SELF, "Mercurial runs the hooks it names")                                  \
    X(".bashrc", SELF, "every shell you open runs it")                                          \
    X(".bash_profile", SELF, "your login shell runs it")                                       \
    X(".bash_login", SELF, "your login shell runs it")                                         \
    X(".bash_logout", SELF, "bash runs it as you log out")                                     \
    X(".profile", SELF, "your login shell runs it")                                            \
    X(".zshrc", SELF, "every shell you open runs it")                                            \
    X(".zshenv", SELF, "every zsh runs it")                                                    \
    X(".zprofile", SELF, "your login shell runs it")                                           \
    X(".zlogin", SELF, "your login shell runs it")                                             \
    X(".zlogout", SELF, "zsh runs it as you log out")                                          \
    X(".config/fish", TREE, "fish runs it")                                                    \
    X(".envrc", SELF, "direnv runs it when you enter the folder")                             \
    X(".vscode", TREE, "VS Code runs its tasks, launch and settings")                         \
    X(".idea", TREE, "JetBrains IDEs run its run configurations and tools")                   \
    X(".devcontainer", TREE, "a dev container runs the commands it names")                    \
    X(".claude", TREE, "Claude Code's settings, hooks, commands and agents")                  \
    X(".claude.json", SELF, "Claude Code's account file: the MCP servers it starts")          \
    X(".mcp.json", SELF, "agents start the MCP servers it names")                             \
    X(".cursor", TREE, "Cursor's rules, hooks and MCP servers")                               \
    X(".gemini", TREE, "Gemini CLI's settings and the MCP servers it starts")                 \
    X(".codex", TREE, "Codex CLI's configuration and the MCP servers it starts")              \
    X(".husky", TREE, "husky's git hooks")                                                     \
    X(".pre-commit-config.yaml", SELF, "pre-commit runs the commands it names at each commit") \
    X(".npmrc", SELF, "npm runs and trusts it (scripts, registry, tokens)")                   \
    X(".yarnrc", SELF, "yarn trusts it (registry, tokens)")                                    \
    X(".yarnrc.yml", SELF, "yarn runs the yarnPath and plugins it names")                     \
    X(".pypirc", SELF, "your package index credentials")                                       \
    X(".cargo/config", SELF, "cargo runs the wrappers and runners it names")                  \
    X(".cargo/config.toml", SELF, "cargo runs the wrappers and runners it names")             \
    X(".github/workflows", TREE, "CI runs them, with the repository's secrets")               \
    X(".ripgreprc", SELF, "ripgrep (and agents' searches) read their options from it")        \
    X(".ssh", TREE, "it decides who logs in as you, and ssh runs what its config names")      \
    X(".gnupg", TREE, "your keys")                                                              \
    X(".aws", TREE, "your cloud credentials")                                                  \
    X(".kube", TREE, "your cluster credentials")                                               \
    X(".docker", TREE, "your registry credentials")                                            \
    X(".netrc", SELF, "your passwords for hosts")                                              \
    X(".git-credentials", SELF, "your git passwords")                                          \
    X(".config/autostart", TREE, "your desktop starts it at login")                           \
    X(".config/systemd", TREE, "systemd starts it for you")                                    \
    X(".local/share/systemd", TREE, "systemd starts it for you")                               \
    X(".githooks", TREE, "the usual core.hooksPath: git runs them")                           \
    X(".devcontainer.json", SELF, "a dev container runs the commands it names")               \
    X(".gitlab-ci.yml", SELF, "CI runs it, with the repository's secrets")                    \
    X(".pnpmfile.cjs", SELF, "pnpm runs it at every install")                                  \
    X("bunfig.toml", SELF, "bun runs the preload scripts it names")                            \
    X("mise.toml", SELF, "mise runs its tasks and hooks once trusted (by path)")               \
    X(".mise.toml", SELF, "mise runs its tasks and hooks once trusted (by path)")              \
    X(".yarn/releases", TREE, "yarn runs the release its yarnPath names")                      \
    X(".yarn/plugins", TREE, "yarn runs its plugins")                                          \
    X(".vimrc", SELF, "vim runs it")                                                           \
    X(".exrc", SELF, "vi and vim run it (exrc)")                                               \
    X(".nvimrc", SELF, "neovim runs it (exrc)")                                                \
    X(".nvim.lua", SELF, "neovim runs it (exrc)")                                              \
    X(".config/nvim", TREE, "neovim runs it")                                                  \
    X(".emacs", SELF, "emacs runs it")                                                         \
    X(".emacs.d", TREE, "emacs runs it")                                                       \
    X(".dir-locals.el", SELF, "emacs applies it to every file of the folder")

struct sg_protected_target {
    const char *pattern;
    enum sg_protect_scope scope;
    const char *why;
};
/* The list above, for the manual and `inspect`. */
const struct sg_protected_target *sg_protected_targets(size_t *n);

/* Is path (absolute, normalized: the object's real path) a protected
 * target? Its reason (static), or NULL. *pattern (may be NULL) gets the
 * pattern that matched. */
const char *sg_protected_path(const char *path, const char **pattern);
/* Moving (rename, hard link) what is at from onto to: protected when
 * either end is, or when a folder (or a symlink, which leads to one) lands
 * where a protected target would lie below it (a folder renamed to
 * `.git/modules/m`, holding `config`), or one that may hold targets below
 * it moves away (`.git/modules/m` renamed out). dir: the moved object is a
 * folder or a symlink. Its reason, or NULL. */
const char *sg_protected_move(const char *from, const char *to, bool dir);
/* A new folder-like name at path: a symlink made there (`.cargo ->
 * mine`, `.git/modules/m -> ../../evil`) leads whoever follows it to what
 * the skill chose. Protected when path is a target or where one would lie
 * below it. Its reason, or NULL. */
const char *sg_protected_place(const char *path);

/* The protected targets in a declared folder, for `inspect` and
 * `validate`: the folder itself when it is or lies in one, then what a
 * walk of at most max_entries entries, max_depth folders down (no link
 * followed, no other filesystem entered), finds. found(ctx, path, why) for
 * each; returns how many, or -1 when the walk stopped at its bound (what
 * lies past it was not looked at). */
long sg_protected_scan(const char *dir, size_t max_entries, int max_depth,
                       void (*found)(void *ctx, const char *path, const char *why), void *ctx);

/* For `inspect`, `validate` and the dry run: what a declared write folder
 * holds that its grant does not cover ("holds protected targets, each
 * asked on its own: DIR/.git (git finds ...), DIR/.envrc ..."), from a walk
 * of SG_PROTECTED_SCAN_ENTRIES entries SG_PROTECTED_SCAN_DEPTH folders
 * down; NULL when there is none. Caller frees. */
#define SG_PROTECTED_SCAN_ENTRIES 20000
#define SG_PROTECTED_SCAN_DEPTH 4
char *sg_protected_note(const char *dir);

#endif
