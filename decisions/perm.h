/* The permission engine: rules, grants and decisions for the risky requests
 * a running skill makes that its manifest did not grant (Bash: run a
 * program; Fetch: reach a host; Write: comes with the file broker).
 *
 * Rules are written as users know them from Claude Code — Bash(git status:*),
 * Bash(/usr/bin/python3), Write(/tmp/out/ and below), Fetch(domain:api.example.com),
 * Fetch(*.example.com:443), Connect(/tmp/tmux-1000/default) — and evaluated deny, then ask, then allow, on the
 * request's structured fields (resolved program and argv; canonical path;
 * name and port), never on a raw command string. What no rule settles goes
 * by mode: deny-all, a person through a front end, or a policy file (rules
 * only). The engine is perm.c; rules.c the rules, grants.c the grants
 * file, toolcheck.c the agents' check_tool_permission. "Always" decisions are grants in grants.yaml, pinned to the
 * skill's name and content digest, so a changed skill asks again. */
#ifndef SG_PERM_H
#define SG_PERM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "diag.h"
#include "events.h"
#include "loop.h"
#include "policy.h"
#include "rules.h"

enum sg_perm_mode { SG_PERM_DENY_ALL, SG_PERM_PROMPT, SG_PERM_POLICY, SG_PERM_ALLOW_ALL };

typedef void (*sg_perm_cont)(void *ctx, enum sg_decision d);

struct sg_perm;

struct sg_perm_opts {
    enum sg_perm_mode mode;
    const char *policy_file;  /* SG_PERM_POLICY (also read with PROMPT) */
    const char *grants_file;  /* NULL: the default */
    const char *skill, *digest, *run_id;
    int timeout_s;            /* a prompt unanswered this long is a deny */
    const struct sg_tools *tools; /* the caller's, kept while the engine lives; NULL: none */
    struct sg_event_bus *bus;
    /* the agent hook's: */
    bool defer_without_frontend; /* no front end: "ask" (the agent's own prompt), not deny */
    bool session;             /* "for this run" answers are for the agent's session */
    json_t *audit_extra;      /* merged into every decision record (borrowed) */
    /* OpenSkills' custom callback (execprompt.h): this program decides
     * first what the rules and grants did not settle; "ask" goes on to the
     * front end (a person), else it is a deny. NULL-terminated, borrowed. */
    char *const *program;
};

/* Returns NULL with problems in d when the policy or grants file is bad. */
struct sg_perm *sg_perm_new(const struct sg_perm_opts *o, struct sg_diags *d);
/* Whoever still waits is denied, and every decision is on disk (the audit
 * log's writer is waited for). Returns 0, or the first -errno of those
 * appends. */
int sg_perm_free(struct sg_perm *p);
/* The tools the skill may ask for (nothing, for p NULL or without tools). */
const struct sg_tools *sg_perm_tools(const struct sg_perm *p);
/* Deny every request still waiting (the run is ending). */
void sg_perm_cancel_all(struct sg_perm *p);
/* The person stopped the run with request id on screen: when the run ends
 * (sg_perm_cancel_all, once its processes are dead) it is denied in the
 * person's name, the rest "the run ended". Nothing is answered now: a deny
 * now would wake the skill before the kill reached every process. */
void sg_perm_deny_at_end(struct sg_perm *p, uint64_t id);

/* Decide q. Returns 1 with *dec set when a rule, grant or the callback
 * settled it at once; 0 when it waits for a person (cont(ctx, decision)
 * comes later, from sg_perm_dispatch or sg_perm_free). */
int sg_perm_request(struct sg_perm *p, const struct sg_preq *q, sg_perm_cont cont, void *ctx,
                    enum sg_decision *dec);

/* The same for a broker whose caller can give up waiting (its process
 * killed, its thread gone, its connection closed): while q is shown,
 * gone(ctx) is asked every 200 ms (it must never block); when it says why
 * (non-NULL: "its process is gone"), q is decided as denied, by "the
 * skill stopped waiting (WHY)", the prompt closes and the next request is
 * shown. gone NULL: sg_perm_request. */
typedef const char *(*sg_perm_gone_fn)(void *ctx);
int sg_perm_request_watched(struct sg_perm *p, const struct sg_preq *q, sg_perm_cont cont,
                            void *ctx, sg_perm_gone_fn gone, enum sg_decision *dec);
#define SG_PERM_GONE_PROCESS "its process is gone"

/* Record q as left to the agent's own prompt ("ask"), by why, with no
 * rule, grant or person consulted: for what could not be read. */
void sg_perm_defer(struct sg_perm *p, const struct sg_preq *q, const char *why);
/* What the rules and grants alone say of q (deny, ask or allow), who said
 * it in by (empty when none did); nothing is recorded. */
enum sg_effect sg_perm_peek(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n);
/* The file a path names as the kernel finds it: absolute (relative ones
 * against cwd; left relative without one), walked a component at a time
 * as the kernel walks it (a link followed where it stands, so a ".."
 * after it climbs from its target; a final link to nothing followed to
 * what a write through it would make; at most 40 links), and read as
 * written from the first part that does not exist. Caller frees. */
char *sg_path_target(const char *path, const char *cwd);
/* The same; *unsure (may be NULL) is set when a ".." climbs out of a part
 * that does not exist yet, so what it reaches depends on what is made
 * first. */
char *sg_path_target_ex(const char *path, const char *cwd, bool *unsure);
/* What the deny and ask rules alone say of q: DENY or ASK (by says which
 * rule, or why it cannot be told: a launcher hiding the program, a line
 * that cannot be read exactly, a request too long), else ALLOW, meaning
 * only that none limits it. Every default allow comes after this. */
enum sg_effect sg_perm_limits(struct sg_perm *p, const struct sg_preq *q, char *by, size_t n);
/* The same, of the rules alone: an agent's line the reader does not read
 * whole is not asked for that. For a line that runs inside a sandbox
 * (the hook's rewrites), whose programs meet the rules at each execve. */
enum sg_effect sg_perm_rule_limits(struct sg_perm *p, const struct sg_preq *q, char *by,
                                   size_t n);
/* The programs the Bash deny and ask rules name (their first word, as
 * written: "touch", "/usr/bin/curl"), at most max, into out (the rules'
 * own strings). The exec broker looks for them under any name that
 * reaches their file. */
size_t sg_perm_limit_programs(const struct sg_perm *p, const char **out, size_t max);
/* The request an agent's Bash command line is (the program its first
 * word, the rest its arguments, cwd the agent's). */
void sg_agent_bash_preq(const char *line, const char *cwd, struct sg_preq *q);
/* Whether the last request was left to the agent's own prompt (opts'
 * defer_without_frontend): its record says "ask". */
bool sg_perm_deferred(const struct sg_perm *p);
/* Add a rule answered earlier in the agent's session (source "this
 * session"); -EINVAL for text that is no rule. */
int sg_perm_add_session_rule(struct sg_perm *p, const char *text);
/* The rules the last "for this session" answer kept (one per simple
 * command of an agent's line). */
size_t sg_perm_session_rules(const struct sg_perm *p, const char *const **rules);

/* The seed's check_tool_permission, for agents that run tools themselves
 * (instruction-only skills, the MCP server): a non-empty allowed-tools that
 * does not list tool denies it outright (PermissionDenied, no prompt); a
 * low-risk tool is allowed; Bash/Terminal, Write/Edit/MultiEdit/Delete and
 * Fetch/WebFetch/WebSearch go to the engine with detail as the program,
 * path or host; any other tool counts as high risk and is asked as Bash.
 * Same return convention as sg_perm_request; *denied_outright tells the two
 * denials apart. */
int sg_check_tool_permission(struct sg_perm *p, const struct sg_policy *pol, const char *tool,
                             const char *detail, const char *cwd, sg_perm_cont cont, void *ctx,
                             enum sg_decision *dec, bool *denied_outright);

/* A front end shows the prompts: the TUI, the line prompt on /dev/tty
 * (lineprompt.h), an attached TUI for the MCP server. show() is called
 * whenever the request at the head of the queue changes (or only the
 * number waiting), with NULL once none waits; the front end answers the
 * head with sg_perm_answer_id. The deadline stays the engine's
 * (sg_perm_dispatch). With no front end, PROMPT denies: nobody to ask. */
struct sg_perm_prompt {
    struct sg_perm *perm;     /* to answer with */
    const struct sg_preq *q;
    const char *skill;
    const char *why;          /* why it asks */
    const char *rule;         /* the rule "always" would save */
    size_t queued;            /* requests waiting, this one included */
    int64_t shown_ms, deadline_ms; /* CLOCK_MONOTONIC ms */
    uint64_t id;              /* this request's; an answer names it (sg_perm_answer_id) */
    bool session;             /* "for this run" is for the agent's session (the hook's) */
};
typedef void (*sg_perm_show_fn)(void *ctx, const struct sg_perm_prompt *pr);
void sg_perm_set_frontend(struct sg_perm *p, sg_perm_show_fn show, void *ctx);
/* Fds of the front end's own, polled in the run's loop while a prompt is
 * shown (through sg_perm_pollfds/sg_perm_dispatch); ctx is show's. */
void sg_perm_set_frontend_fds(struct sg_perm *p,
                              size_t (*pollfds)(void *ctx, struct pollfd *out, size_t max),
                              void (*dispatch)(void *ctx, const struct pollfd *pfds, size_t n));
/* Record a decision made without the engine (a manifest's scope, allowed-
 * tools refusing a tool): an audit record (counted like any other), and for
 * an allowance a permission_decided event (a refusal has its own). */
void sg_perm_record(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                    const char *by);
/* Who made the last decision ("person", "rule ...", "timeout ...", ...). */
const char *sg_perm_last_decided_by(const struct sg_perm *p);
/* Decide the request at the head of the queue (by a person). */
void sg_perm_answer(struct sg_perm *p, enum sg_decision d);
/* The same, only if the head is still request id (what the person saw);
 * -ESTALE, and nothing decided, when it is not. */
int sg_perm_answer_id(struct sg_perm *p, uint64_t id, enum sg_decision d);
/* A skill's Write of DIR/FILE: the rule for every path beneath DIR (the
 * "this folder" answer); NULL for any other request, or when DIR is /,
 * home (the person's) or above it, in one of home's dot folders, or the
 * request is high risk (a system folder, a persistence place). */
char *sg_preq_folder_rule(const struct sg_preq *q, const char *home);
/* Whether sg_preq_folder_rule offers a folder for q; when it does not for
 * a skill's Write, why not goes to why (what the person is told when
 * they press f: "its folder is your home or holds it", the risk's reason),
 * else why is "". */
bool sg_preq_folder_offered(const struct sg_preq *q, const char *home, char *why, size_t n);
/* A skill's exec of a program that is no shell or interpreter: the rule
 * for that program with any arguments (the "this program" answer), else
 * NULL. */
char *sg_preq_program_rule(const struct sg_preq *q);
/* Answer request id as a program of ours decides it, not a person (by:
 * who, in the event and the audit record; `skillgate vet`'s runs). A
 * request that was cut is denied. -ESTALE as sg_perm_answer_id. */
int sg_perm_answer_by(struct sg_perm *p, uint64_t id, enum sg_decision d, const char *by);
/* Answer request id "allow for this run": its program with any arguments,
 * and (the exec broker's part, exec.h) the programs of root's that it and
 * its children run. -ESTALE as sg_perm_answer_id; -EINVAL with *why when
 * the request is not such an exec. */
int sg_perm_answer_program(struct sg_perm *p, uint64_t id, const char **why);
/* The text of the "this program" answer kept for this run that allows q,
 * or NULL. */
const char *sg_perm_tree_rule(const struct sg_perm *p, const struct sg_preq *q);
/* The same with the rule to keep (for this run, or always) that the person
 * narrowed or widened: it must parse and cover the request (-EINVAL, *why
 * says what is wrong, nothing decided). */
int sg_perm_answer_rule(struct sg_perm *p, uint64_t id, enum sg_decision d, const char *rule,
                        const char **why);

/* The prompt in the session's poll loop: the front end's fds, the deadline. */
size_t sg_perm_pollfds(struct sg_perm *p, struct pollfd *out, size_t max);
void sg_perm_dispatch(struct sg_perm *p, const struct pollfd *pfds, size_t n);
int sg_perm_timeout(const struct sg_perm *p);
/* The three as one source of a loop (loop.h), for a loop of its own. */
struct sg_loop_source sg_perm_source(struct sg_perm *p);
/* Requests waiting for a person (shown or queued). */
size_t sg_perm_waiting(const struct sg_perm *p);
/* Seconds a prompt waits before it is a deny. */
int sg_perm_prompt_timeout(const struct sg_perm *p);

/* grants.yaml: $XDG_CONFIG_HOME/skillgate/grants.yaml (caller frees). */
char *sg_grants_path(void);
/* Every grant as JSON objects {skill, digest, rule, effect, created}. */
int sg_grants_list(const char *path, json_t **out, struct sg_diags *d);
int sg_grants_save(const char *path, json_t *list);

#endif
