/* What a run refused, said once per request at its end (issue 36, item
 * 3): under --policy, in CI, through MCP nobody saw the prompt, and a
 * script's own message ("Is poppler installed?") hides that skillgate
 * refused pdfinfo. Read from a finished run's trace document: the denied
 * decisions (tool, subject, who decided) and the prevented events that
 * name a program, path or host (an exec allowed-tools refuses, a write
 * outside the writable paths, a lookup or connection not declared). The
 * same program reached by two paths (/bin/x, /usr/bin/x) is one request;
 * a request refused twice is one entry with a count. Each entry names what
 * was attempted (read, write, exec, connect, lookup: a decoy's read is a
 * read, never a write) and says the exact way to allow it: a rule for a
 * --policy file, the manifest line, a run option, or a person asked in
 * `skillgate tui --attach`; an attack's never does (issue 54, item 1): a
 * run whose maximum severity is high or critical, or a name smuggling
 * data, says it is not to be allowed. */
#ifndef SG_REFUSALS_H
#define SG_REFUSALS_H

#include <stdbool.h>

#include <jansson.h>

/* The reason of a write into the sandbox's own system folders (/var,
 * /run, /dev: empty, kept nowhere): the run's end folds those into one
 * line (cli/leftover.h). */
#define SG_REFUSAL_PRIVATE_SYSTEM "the sandbox's own system folder"

/* Entries kept; what is past them is counted in the last one's place. */
#define SG_REFUSALS_MAX 64

/* [{tool, attempt, subject, count, why, rule, allow, attack}] in the order
 * first refused (rule: the rule or manifest entry that would allow it, or
 * null when nothing may or it is an attack's; allow: the sentence saying
 * where it goes, or that it is not to be allowed). agent: the run
 * was an agent's (MCP): no --policy or --prompt of its own, so the way is a
 * person in `skillgate tui --attach`, or the person's own `skillgate run`.
 * A new reference; an empty array when nothing was refused. */
json_t *sg_refusals_of(json_t *trace_doc, bool agent);
/* The same for a person, a line each: "refused: exec /usr/bin/pdfinfo
 * (why) — allow with: ...\n", sanitized (subjects come from the skill).
 * home (may be NULL): the subject and why say it as ~ (sg_home_short); the
 * way to allow stays as typed. "" when none. Caller frees. */
char *sg_refusals_text(json_t *refusals, const char *home);

#endif
