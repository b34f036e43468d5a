/* The third kind of permission callback (OpenSkills' custom callback):
 * a person's own program decides each request the rules and grants did
 * not settle (`--prompt exec:PROGRAM [ARGS]`, config.yaml's prompt_exec,
 * the hook's hook.prompt_exec).
 *
 * One process per request, not a co-process: a request is asked only when
 * no rule or grant settles it, a handful a run, so the start (measured: a
 * shell script 1.7 ms, the Python example 17 ms, medians of 30, against
 * a person's seconds) buys
 * what a long-lived one cannot: nothing of one skill's request is left in
 * the program for the next, a crash costs one answer, and a program that
 * hangs is killed with its request.
 *
 *   broker                                    program (outside the
 *   fork ───────────────────────────────────► sandbox, as the invoking
 *   stdin: one JSON object, a newline, EOF    user; stderr: /dev/null)
 *   stdout ◄── {"decision": "allow"|"deny"|"ask", "scope": "once"|"run"|
 *              "always", "reason": "..."} ──  exit 0
 *   the prompt's timeout: killed, a deny
 *
 * Nothing fails open: a program that cannot start, exits non-zero or by a
 * signal, prints no JSON object, more than SG_PPROG_OUT_MAX bytes, or an
 * answer it does not know is a deny, with why. "ask" goes to the next
 * callback (a person on the terminal or in the TUI), else it is a deny. */
#ifndef SG_EXECPROMPT_H
#define SG_EXECPROMPT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "rules.h"

#define SG_PPROG_OUT_MAX 65536
#define SG_PPROG_ARGS_MAX 32

struct sg_pprog_call;

/* The request as the program reads it (caller decrefs); NULL when a field
 * is not UTF-8 or was cut: what cannot be shown exactly is not asked of a
 * program (the next callback, a person, sees it as it is). */
json_t *sg_pprog_request_json(const struct sg_preq *q, const char *run_id, const char *skill,
                             const char *digest, const char *why);
/* Start argv (argv[0] a path, or a name on PATH) with req on its stdin.
 * NULL with *err set (-errno) when it cannot be started. */
struct sg_pprog_call *sg_pprog_start(char *const *argv, const json_t *req, int *err);
/* The fd to poll for POLLIN (its stdout). */
int sg_pprog_fd(const struct sg_pprog_call *c);
/* Read what is there; true once the program's answer is complete: its
 * stdout closed and the program gone (it is waited for, at most 1 s
 * after its stdout closed, then killed). */
bool sg_pprog_read(struct sg_pprog_call *c);
enum sg_pprog_answer { SG_PPROG_DENY, SG_PPROG_ALLOW, SG_PPROG_ASK };
/* The answer of a complete call: *scope (once/run/always as decisions)
 * and why (the program's reason, or what was wrong: a deny). */
enum sg_pprog_answer sg_pprog_answer(const struct sg_pprog_call *c, enum sg_decision *dec,
                                   char *why, size_t whylen);
/* Kill (if running), reap, free. */
void sg_pprog_free(struct sg_pprog_call *c);

#endif
