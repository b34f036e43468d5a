/* Between the permission engine's files (perm.c the engine, rules.c,
 * grants.c, toolcheck.c): nothing outside them includes this. */
#ifndef SG_PERM_INT_H
#define SG_PERM_INT_H

#include <stdint.h>

#include "perm.h"
#include "shellcmd.h"

/* rules.c: a policy file's deny/ask/allow lists, appended to *rules */
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

/* grants.c: every grant in path (an empty list when there is none, or the
 * file is not private: *err -EPERM and *why, which the caller frees) */
json_t *sg_grants_read(const char *path, struct sg_diags *d, int *err, char **why);

/* perm.c: the audit record (counted) and event of a decision */
void sg_perm_audit(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                   const char *by, int64_t latency);

/* toolcheck.c: an agent's command line as it wrote it (check_tool_permission
 * puts the first word in subject, the rest in args), and q narrowed to one
 * simple command c of it */
char *sg_agent_line(const struct sg_preq *q);
void sg_agent_one_command(const struct sg_preq *q, const struct sg_shell_cmd *c,
                          struct sg_preq *out);

#endif
