/* The hook's sandboxed Bash (config.yaml hook: {sandbox_bash: true}): an
 * agent's Bash call that no deny rule stops on its face is allowed as the
 * same line run under `skillgate wrap` (run/wrap.h), so that what bash
 * finally runs is decided at each execve, on the program file, however
 * the line reached it (jobs -x, BASH_CMDS, xargs env, a script it wrote),
 * and not on a reading of the line.
 *
 * Claude Code's own settings keep their documented meaning:
 * `dangerouslyDisableSandbox` in the call, or a line `excludedCommands`
 * names, runs outside any sandbox, so it is asked (a person, or Claude
 * Code's dialog), never allowed on a reading. When Claude Code's own
 * sandbox is on (sandbox.enabled), one sandbox runs the line, never both
 * nested (bubblewrap's network namespace has no route for skillgate's
 * proxy): skillgate's, with `dangerouslyDisableSandbox: true` in the
 * rewritten input, unless `allowUnsandboxedCommands: false` forbids that;
 * then Claude Code's runs it and the hook decides as without sandbox_bash. */
#ifndef SG_HOOKWRAP_H
#define SG_HOOKWRAP_H

#include <jansson.h>
#include <stdbool.h>

struct sg_hook_wrap {
    char *command;     /* the line under skillgate wrap, or NULL: not sandboxed */
    bool off_claude;   /* Claude Code's sandbox is on: the input turns it off for this call */
    char *ask;         /* not sandboxed and asked: why (NULL: decided as without the sandbox) */
    char *note;        /* said in the reason (which sandbox runs it) */
};

/* The call's line (input: tool_input) run under skillgate wrap at self,
 * in cwd, with the agent's rules (policy, NULL when there is no file). */
void sg_hook_wrap_line(const char *line, json_t *input, const char *cwd, const char *self,
                       const char *policy, struct sg_hook_wrap *w);
void sg_hook_wrap_free(struct sg_hook_wrap *w);

#endif
