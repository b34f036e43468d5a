/* AI agents' own folders and files (issue 35, item 3).
 *
 * An agent keeps its login, its history and what steers it in the home:
 * Claude Code's ~/.claude holds its OAuth token (.credentials.json), every
 * transcript, and settings.json, which holds the hooks (skillgate's among
 * them); ~/.claude.json its account and MCP servers with their env. A skill
 * that reads them takes the person's login; one that writes them turns the
 * hook off or steers the agent. So they are treated like the credential
 * paths and more strictly: declaring one (read or write, or a path inside
 * one) is a validate error with file, line and field, a declared write of a
 * folder that holds one is too, and every run masks them wherever a bind
 * would show them (a declared read of a folder holding one, a symlink to
 * one, a working folder inside one).
 *
 * Some agents keep skills in their folder (~/.claude/skills, the skills of
 * ~/.claude/plugins, ~/.openclaw/skills and its workspace's, ~/.codex/skills): a skill that
 * lives there is bound (its folder only) and may name paths in its own
 * folder; every other part of the agent's folder stays masked.
 *
 * The list is the agents whose layout is documented or plain to see, chosen
 * narrowly (a path here is never shown to any skill); each entry says what
 * is there. CLAUDE_CONFIG_DIR and CODEX_HOME, when set for skillgate, name
 * the same folders elsewhere and count too. Looked for in every home
 * (homes.h), the invoking user's always, another account's when it is
 * there. Costs one lstat per entry and home. */
#ifndef SG_AGENTDIRS_H
#define SG_AGENTDIRS_H

#include <stdbool.h>
#include <stddef.h>

/* X(path below a home, what it holds, its skill folders (space separated)) */
#define SG_AGENT_PATHS(X)                                                                   \
    X(".claude", "Claude Code's folder (its OAuth token, history, transcripts, settings.json " \
      "with its hooks)", "skills plugins")                                                  \
    X(".claude.json", "Claude Code's account file (login, MCP servers and their env)", "")   \
    X(".claude.json.backup", "Claude Code's account file (its backup)", "")                 \
    X(".config/claude", "Claude Code's folder (its XDG location)", "skills plugins")         \
    X(".codex", "OpenAI Codex CLI's folder (auth.json, config.toml, sessions)", "skills")    \
    X(".cursor", "Cursor's folder (mcp.json and its agent's config)", "skills")              \
    X(".config/Cursor", "Cursor's application data (its login)", "")                        \
    X(".gemini", "Gemini CLI's folder (oauth_creds.json, settings.json)", "")               \
    X(".openclaw", "OpenClaw's folder (credentials/, openclaw.json)",                         \
      "skills workspace/skills workspace/.agents/skills workspace-*/skills "                \
      "workspace-*/.agents/skills")                                                         \
    X(".clawdbot", "OpenClaw's folder under its former name", "skills")                      \
    X(".config/github-copilot", "GitHub Copilot's OAuth token", "")                         \
    X(".aider.conf.yml", "aider's configuration (API keys)", "")

/* CLAUDE_CONFIG_DIR and CODEX_HOME: X(variable, like which entry) */
#define SG_AGENT_ENV(X) X("CLAUDE_CONFIG_DIR", ".claude") X("CODEX_HOME", ".codex")

#define SG_AGENT_PATHS_MAX 4096

struct sg_agent_path {
    char *path;        /* absolute, as named */
    char *real;        /* its symlinks resolved (sg_path_real) */
    const char *what;  /* SG_AGENT_PATHS' text */
    const char *areas; /* its skill folders, relative, space separated */
    bool yours;        /* in the invoking user's home (or named by the env) */
};

struct sg_agent_paths {
    struct sg_agent_path *v;
    size_t n;
};

/* The invoking user's entries always (whether or not they exist: a
 * declaration is judged by its name), another home's when lstat finds
 * them, then the env's. At most SG_AGENT_PATHS_MAX. */
void sg_agent_paths_get(struct sg_agent_paths *ap);
void sg_agent_paths_free(struct sg_agent_paths *ap);

enum sg_agent_rel { SG_AGENT_NONE, SG_AGENT_INSIDE, SG_AGENT_HOLDS };

/* How the absolute path stands to the agents' paths, as written and with
 * symlinks resolved: it is one or inside one (SG_AGENT_INSIDE, which wins)
 * or holds one; *which is that entry. A path in a skill folder of the
 * agent's (areas) that is also inside own_root (the skill's folder; may be
 * NULL) is SG_AGENT_NONE: a skill kept there names its own files. */
enum sg_agent_rel sg_agent_paths_relation(const struct sg_agent_paths *ap, const char *path,
                                          const char *own_root,
                                          const struct sg_agent_path **which);

/* Is the absolute real path in one of a's skill folders? */
bool sg_agent_path_in_skills(const struct sg_agent_path *a, const char *real);

/* Is path dir/X or below it, for an X that rel matches as fnmatch does
 * with FNM_PATHNAME and FNM_PERIOD ("workspace-*" /skills: one folder's
 * name)? dir is taken literally. */
bool sg_path_within_pattern(const char *path, const char *dir, const char *rel);

#endif
