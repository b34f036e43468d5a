/* The words the decision room speaks (rules.c): the tools a rule names,
 * a request's fields, a rule, its effect, a decision, and how risky a
 * request is. The permission engine (perm.h) decides with them; rules.c
 * parses and matches rules, and reads a policy file's lists. */
#ifndef SG_RULES_H
#define SG_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

/* X(ID, "Name") */
#define SG_PERM_TOOLS(X) X(BASH, "Bash") X(WRITE, "Write") X(FETCH, "Fetch") X(CONNECT, "Connect")
enum sg_ptool {
#define X(id, name) SG_PT_##id,
    SG_PERM_TOOLS(X)
#undef X
};
enum sg_effect { SG_EFF_DENY, SG_EFF_ASK, SG_EFF_ALLOW };
enum sg_decision { SG_DEC_DENY, SG_DEC_ALLOW_ONCE, SG_DEC_ALLOW_RUN, SG_DEC_ALLOW_ALWAYS,
                   SG_DEC_DENY_ALWAYS };

struct sg_prule {
    enum sg_ptool tool;
    char *pattern; /* program or command prefix; path glob; host (maybe *.) */
    bool prefix;   /* Bash(cmd:*) */
    int port;      /* Fetch: -1 any */
    enum sg_effect effect;
    char *text;    /* as written */
    char *source;  /* "policy.yaml:4", "grant", "this run" */
    bool any;      /* a bare Bash, Edit, WebFetch: every request of the tool */
    char *agent;   /* an agent's tool the rule names that is none of the three
                    * (WebSearch, mcp__server__tool, mcp__server, ...): only
                    * that agent tool's requests, all of them; with a path
                    * pattern (Read(~/.ssh/...), Grep(src/...)) those on it */
    char **words;  /* Bash: the pattern as the shell reads it (one simple command) */
    size_t nwords;
    bool tree;     /* a person's "this program and the system programs it runs" for
                    * this run (perm.h sg_perm_answer_program): the exec broker lets
                    * its descendants run root's files without a question */
};

/* A request. Every field that a decision reads is set with sg_preq_set:
 * what does not fit is never cut to a prefix and matched; the request is
 * marked cut, no rule matches it, and it is asked with no allow offered
 * (a person cannot approve what the prompt cannot show whole). */
#define SG_PREQ_ARGS_MAX 16384
struct sg_preq {
    enum sg_ptool tool;
    char subject[4096]; /* Bash: resolved program; Write: path; Fetch: name (or literal);
                         * Connect: the socket's path, symlinks resolved */
    char args[SG_PREQ_ARGS_MAX + 2]; /* Bash: the arguments as shell words, quoted
                         * where needed (sg_shell_join): they read back exactly */
    char cwd[4096];
    int port;           /* Fetch */
    char detail[256];   /* what the broker knows beside: "exists (file)", "DNS lookup" */
    char agent_tool[260];/* an agent's tool, as it named it (hook, check_tool_permission) */
    char name[4096];    /* Bash: the program as scopes name it: "ls" only when "ls" on the
                         * sandbox's PATH is this very file, else its whole path */
    char host[4096];    /* Write: the host file an approval writes ("" when unknown) */
    bool cut;           /* a field did not fit (see above) */
    bool run_option;    /* not an act of the skill: an agent's run option (run_skill's
                         * write: a whole folder for the run; env): a person decides */
    bool unsure;        /* a path two readings (lexical, the kernel's) take to different
                         * files, or that climbs out of what is not there yet: no rule
                         * matches it, it is asked (and may be approved: it is shown) */
    char argv0[256];     /* Bash, a skill's exec: argv[0] as given, when its last name is
                          * not the program's (git-init for git, zcat for gzip): the program
                          * may act on it, so the request is unsure (asked, matched by no
                          * rule) and the exec stop checks it; "" otherwise */
    bool system_program; /* Bash: a skill's exec of a file of the system's (root's, where
                          * the skill writes nothing, outside its folder, the home and the
                          * working folder), no interpreter, loader or multi-call program:
                          * the exec broker says so; "this program" is offered only then */
    bool answer_only;   /* asked of a person each time (a rewritten skill run the vetting
                         * does not cover, agent/hook.c): no kept answer (a grant, "this
                         * session") allows it, and an answer to it keeps none */
    const char *protect; /* Write: why this is a protected target (protected.h; static),
                          * found on the object by the write broker, or NULL. A Write of a
                          * protected path is one whatever this says (the engine checks
                          * subject and host too): only a rule naming that exact file
                          * allows it, never a glob, a folder answer or a tool's name */
};
/* Copy v into one of q's fields (dst of size n); false, and q->cut set,
 * when it does not fit. */
bool sg_preq_put(struct sg_preq *q, char *dst, size_t n, const char *v);
#define SG_PREQ_SET(q, field, v) sg_preq_put((q), (q)->field, sizeof (q)->field, (v))

int sg_prule_parse(const char *text, enum sg_effect eff, const char *source, struct sg_prule *r,
                   const char **why);
void sg_prule_free(struct sg_prule *r);
bool sg_prule_matches(const struct sg_prule *r, const struct sg_preq *q);
/* The rule class of an agent's tool named by its first len bytes (Edit is
 * Write, WebFetch is Fetch), or -1 for a tool of none (WebSearch, mcp__). */
int sg_ptool_of_agent_tool(const char *name, size_t len);
/* The rule "always" would save for q (caller frees). */
char *sg_preq_rule(const struct sg_preq *q);
/* Is q a Write of a protected target (protected.h: what git, shells,
 * editors and agents run or trust)? Why, or NULL. */
const char *sg_preq_protected(const struct sg_preq *q);
/* Does r name exactly one file (a Write rule with no glob), so that it may
 * allow a protected target? */
bool sg_prule_exact(const struct sg_prule *r);
/* How risky q is, weighed by what it reaches: a Write to a system folder or
 * to where code starts by itself (cron, autostart, shell rc files, SSH
 * keys, git hooks) is high, any other Write medium; Bash is high, and a
 * shell or interpreter runs any code; Fetch is medium. why gets the reason
 * in a few words ("" when there is nothing to add); home is the user's. */
enum sg_risk_level { SG_RL_LOW, SG_RL_MEDIUM, SG_RL_HIGH };
enum sg_risk_level sg_preq_risk(const struct sg_preq *q, const char *home, char *why, size_t n);
/* A shell, an interpreter or a launcher (env, xargs, sudo): a program that
 * runs whatever code it is given. */
bool sg_program_runs_any_code(const char *path);
const char *sg_ptool_name(enum sg_ptool t);
bool sg_decision_allows(enum sg_decision d);
const char *sg_decision_name(enum sg_decision d);

/* A policy file's deny/ask/allow lists, appended to *rules */
int sg_rules_load(const char *path, struct sg_prule **rules, size_t *n, struct sg_diags *d);
void sg_rules_add(struct sg_prule **rules, size_t *n, const struct sg_prule *r);
/* The first rule of effect eff (deny or ask) that names what q runs,
 * however it is reached: as written, by its base name, and through every
 * launcher (env, command, exec, nice, timeout, xargs, sudo, sh -c ...).
 * NULL when none does; then *unknown says that a launcher hid the program
 * from a Bash rule of that effect (the caller asks). */
const struct sg_prule *sg_rules_limit(const struct sg_prule *rules, size_t n,
                                      const struct sg_preq *q, enum sg_effect eff,
                                      bool *unknown);

#endif
