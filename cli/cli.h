/* The command-line front end: one function per command, human output. */
#ifndef SG_CLI_H
#define SG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "diag.h"
#include "plantext.h"
#include "policy.h"

/* X(name, function, "usage", "one-line summary") — the dispatch table, the
 * usage text and `skillgate help` come from this one list. */
#define SG_COMMANDS(X)                                                                   \
    X(validate, cmd_validate, "validate SKILL...", "check skills' manifests; exit 1 on errors") \
    X(inspect, cmd_inspect, "inspect SKILL [--json]", "show the resolved policy of a skill") \
    X(list, cmd_list, "list [DIR...] [--json]", "discover skills and summarize them")      \
    X(run, cmd_run, "run SKILL [--input JSON] [--watch|--json] [--dry-run] [--env NAME] [--write DIR] [--script PATH | -m MODULE] [[--] ARG...]", \
      "run a skill under the sandbox; events live, a trace at the end")                    \
    X(wrap, cmd_wrap, "wrap [--settings FILE] [--cwd DIR] [run's options] -- CMD [ARG...]", "any command under the sandbox, with Claude Code's Bash sandbox defaults") \
    X(record, cmd_record, "record SKILL [-i JSON]...", "learn what a skill needs; its minimal manifest") \
    X(vet, cmd_vet, "vet PATH... [--out DIR] [--jobs N] [--shard I/N] [--rev REV] [--against OLD] | vet merge DIR... [--html F] [--sarif F] [--json F]", "vet many skills by what they say and do; one report") \
    X(traces, cmd_traces, "traces list|diff A [B]|report TRACE [--html|--md] [-o FILE]|export TRACE [-o FILE]", "past runs; what one did that another did not; a run's report, or export") \
    X(audit, cmd_audit, "audit verify|tail|show RUN", "the hash-chained audit log")         \
    X(grants, cmd_grants, "grants list|revoke N", "the \"always\" decisions, per skill digest") \
    X(tui, cmd_tui, "tui [DIR...] [--theme NAME] [--attach]", "the terminal UI: browse, run, approve, review") \
    X(demo, cmd_demo, "demo [--auto] [--pace S] [--theme NAME] [--keep DIR]", "a narrated walkthrough, safe offline") \
    X(serve, cmd_serve, "serve", "an MCP server on stdio: agents run skills through skillgate") \
    X(hook, cmd_hook, "hook [install|uninstall]", "Claude Code's permission hook: the agent's tool calls decided here")

#define X(name, fn, usage, summary) int fn(int argc, char **argv);
SG_COMMANDS(X)
#undef X

/* `skillgate run` and `skillgate wrap` (a command as a skill): one front
 * end of the run; its help for wrap. */
int sg_run_front(int argc, char **argv, bool wrap);
void sg_wrap_help(void);

/* Exit codes shared by every command. */
enum {
    SG_EXIT_OK = 0,
    SG_EXIT_INVALID = 1, /* a skill has errors */
    SG_EXIT_USAGE = 2,   /* bad command line, unreadable path */
};

/* Colour only on a terminal, and never with NO_COLOR set. */
bool sg_color(FILE *f);
const char *sg_risk_badge(FILE *f, enum sg_risk r);
/* Print one diagnostic line (sanitized) to f. */
void sg_print_diag(FILE *f, const struct sg_diag *g);
void sg_print_diags(FILE *f, const struct sg_diags *d);
/* getopt_long for a command; after getopt's own complaint about a long
 * option it does not know ("--jsno"), the command's long option a typo
 * most likely meant ("did you mean --json?"), none for an ambiguous
 * abbreviation (getopt names the candidates itself). */
int sg_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/* getopt_long's "--help" for a command. */
void sg_command_usage(FILE *f, const char *cmd);
/* A command's subcommand line that fits none of its forms: says which part
 * is wrong (none given, an unknown one, its arguments), then the usage.
 * verbs: NULL-terminated. Returns SG_EXIT_USAGE. */
int sg_subcommand_error(const char *cmd, const char *verb, const char *const *verbs);
/* Print JSON (indented, ASCII, keys in insertion order) and a newline. */
void sg_print_json(FILE *f, json_t *j);
/* Runs whose broker died before writing their records (journal.h): their
 * records written now, and said once on stderr. The TUI shows the same
 * line (sg_recovered_notice, NULL when there was none). */
void sg_recover_runs(void);
extern const char *sg_recovered_notice;

/* Print the error for a path that is not a skill; returns SG_EXIT_USAGE. */
int sg_load_error(const char *path, int err);
struct sg_skill;
/* The skill a command line names: a path (a folder, its SKILL.md or
 * skillsandbox.yaml), or, when no such path exists and the word has no '/',
 * the name discovery gives it ("pdf", "document-skills:pdf"), the project's
 * skills being those of cwd (NULL: the current folder). 0 with *out, or an
 * exit status after saying why (where it looked, names like it). */
int sg_load_skill_arg(const char *arg, const char *cwd, struct sg_skill **out);

#endif
