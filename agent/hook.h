/* `skillgate hook`: Claude Code's command hook (PreToolUse, and
 * PermissionRequest). Claude Code runs it before each tool call of the
 * agent, with the call as one JSON object on stdin; it answers with the
 * documented JSON on stdout. Decisions come from the permission engine the
 * skill runs use (rules in Claude Code's syntax, grants, a person in an
 * attached TUI), and each is an audit record.
 *
 * What it never does: allow what it could not read. Input that is
 * malformed, too big, of an unknown event or tool, gets "ask" (Claude
 * Code's own prompt decides) with the reason, also on stderr. Without an
 * attached TUI, what no rule or grant settles is "ask" too: never a silent
 * allow. */
#ifndef SG_HOOK_H
#define SG_HOOK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "digest.h"

#define SG_HOOK_INPUT_MB 4
#define SG_HOOK_INPUT_MAX ((size_t)SG_HOOK_INPUT_MB << 20) /* a bigger event is asked, unread */
#define SG_STR_(x) #x
#define SG_STR(x) SG_STR_(x)
#define SG_HOOK_PROMPT_S 60          /* a person's answer in the TUI, at most */
#define SG_HOOK_TIMEOUT_S 120        /* what install gives Claude Code to wait for us */

enum sg_hook_event { SG_HOOK_PRE_TOOL_USE, SG_HOOK_PERMISSION_REQUEST };

/* One tool call, as read from the event. */
struct sg_hook_call {
    enum sg_hook_event event;
    char *tool;       /* tool_name, as sent (sanitize before showing) */
    char *session;    /* session_id, "" when absent */
    char *cwd;        /* cwd, "" when absent or not absolute */
    char *tool_use_id;
    char *detail;     /* what the engine decides on: the command, the absolute path,
                       * host:port, a search's query; "" for tools that need none */
    char *summary;    /* one line for people and the audit record */
    bool known;       /* a tool skillgate knows (Claude Code's, or mcp__server__tool) */
    json_t *input;    /* tool_input */
    char input_digest[SG_DIGEST_STRLEN]; /* of tool_input as sent */
};

/* Read one event of len bytes. 0, or -EINVAL with *why (static text) when
 * it is not an event this hook can answer (then c holds what was read, for
 * the record). */
int sg_hook_parse(const char *buf, size_t len, struct sg_hook_call *c, const char **why);
void sg_hook_call_free(struct sg_hook_call *c);

/* The host and port the len bytes of a URL name as the WHATWG URL
 * standard (Node's URL, Claude Code's fetch) reads them ("host:port",
 * lower case; IPv6 in brackets), or NULL when it is no http(s) URL with a
 * host, or one whose reading could differ (urlhost.h): then it is asked. */
char *sg_hook_url_host(const char *url, size_t len);

/* The answer to print for an event: decision "allow", "deny" or "ask", a
 * reason, and (allow, and ask of PreToolUse: the dialog shows it) a
 * replacement tool_input. Consumes updated. */
json_t *sg_hook_answer(enum sg_hook_event ev, const char *decision, const char *reason,
                       json_t *updated);

/* Whether a person has vetted a skill: only then is its script's run
 * rewritten into an allow; otherwise it is asked, with why and the
 * manifest's risky parts in the prompt. */
struct sg_hook_vet {
    bool vetted; /* in the person's own skills folder, manifests as they last saw them */
    bool installed; /* in the person's own skills folder (~/.claude/skills, plugins) */
    char *why;   /* why it is, or is not */
    char *risky; /* what the manifest asks for: env, paths, hosts, any program */
};
void sg_hook_vet_free(struct sg_hook_vet *v);

/* A Python environment the agent names for a skill's script (its own
 * python3 a venv's, or a path to one): vetting the skill does not vet its
 * packages, which run as code with the skill's grants, so a person vets
 * it once, by answering "always" to the question that shows it; that is
 * kept (<state>/vetted-python/, 0600) with the environment's content
 * digest (sg_skill_digest over its folder: its packages, its bin/ and what
 * the links there lead to, the interpreter's file included), and holds
 * while the digest is the same. Not covered, and said in the manual: the
 * base installation's standard library (pyvenv.cfg's home), which a venv
 * reads from outside its folder. An environment that lets the system's
 * site-packages in (the key in any case, as site.py reads it), one with a
 * pyvenv.cfg in bin/ too (site.py reads that first), or one past the
 * digest's caps cannot be pinned. */
struct sg_hook_venv {
    char *dir;                        /* the venv's real folder, NULL: py is none */
    char digest[SG_DIGEST_STRLEN];    /* its content now, "" when not taken */
    bool vetted;                      /* a person vetted it with this content */
    bool changed;                     /* vetted once, with other content */
    char *why;                        /* it cannot be pinned: why */
};

/* When command runs one of a skill's scripts the way agents do
 * ([cd DIR &&] [nohup] INTERPRETER SCRIPT ARGS [&], the script's own
 * path, uv run [python] SCRIPT.py, or python -m MODULE in a skill's folder
 * whose MODULE is a file of that skill; INTERPRETER python, python3,
 * python3.N, bash, sh, node, perl, ruby; ~ and ~/ read as the home; a
 * relative script after the cd read from its folder), and skillgate run
 * starts it with the same program (a Python the agent names kept as
 * --python; sh's .sh run by bash, said in note): the same run under
 * `[cd DIR &&] [nohup] SELF run ROOT --prompt attached [--python PY]
 * --script REL|-m MODULE -- ARGS [&]` (a background run stays one, and
 * nohup's SIGHUP stays ignored: stopsig.h). */
struct sg_hook_rewrite {
    char *command;      /* the rewritten line, NULL when not rewritten */
    char *why_not;      /* then why not, in words for the reason */
    char *by_hand;      /* the script's skill known: `skillgate run ROOT --script REL` */
    char *note;         /* what the rewrite changes and says (sh read by bash) */
    char *root;         /* the skill's folder (when rewritten) */
    char *beyond;       /* what the run holds that vetting the skill does not cover (the
                         * agent's own Python, a cd out of the skill), NULL: nothing; then
                         * it is asked, never allowed outright */
    char *line;         /* the agent's line as read, ~ as the home (when rewritten): what
                         * deny and ask rules are matched on */
    struct sg_hook_vet vet; /* whether the skill is vetted (when rewritten) */
    struct sg_hook_venv venv; /* the agent's Python's environment, when it names one */
};
/* 0 with rw->command, or -EINVAL with rw->why_not; free rw either way. */
int sg_hook_rewrite(const char *command, const char *cwd, const char *self,
                    struct sg_hook_rewrite *rw);
void sg_hook_rewrite_free(struct sg_hook_rewrite *rw);

/* The agent's rules (Claude Code's syntax): the config's hook.policy, else
 * hook-policy.yaml beside config.yaml when there is one; NULL: none. The
 * hook decides with them, and the MCP server with them asks about a
 * run_skill cwd outside the agent's project (a Read). Caller frees. */
struct sg_config;
char *sg_hook_policy_path(const struct sg_config *cfg);

/* `skillgate hook` itself: read stdin, decide, answer on stdout. Always
 * exits 0: any other status would let Claude Code run the tool. */
int sg_hook_main(bool rewrite);

/* `skillgate hook install|uninstall`: the hook entries merged into (taken
 * out of) a settings.json, every other byte kept. */
struct sg_hook_install_opts {
    bool uninstall;
    bool project;   /* ./.claude/settings.json, else ~/.claude/settings.json */
    bool dry_run;   /* print the diff, change nothing */
    bool no_rewrite;
    const char *command; /* the command the entry runs (the caller's absolute skillgate) */
    const char *settings; /* a file to use instead (tests) */
};
int sg_hook_install(const struct sg_hook_install_opts *o);

/* The text edit behind install: text (len bytes, a JSON object, or empty)
 * with our entry added, or removed when uninstall; *changed says whether
 * anything was. NULL with *why when text is not a JSON object or its
 * "hooks" is not what Claude Code reads. */
char *sg_hook_settings_edit(const char *text, size_t len, const char *command, bool uninstall,
                            bool *changed, const char **why);

#endif
